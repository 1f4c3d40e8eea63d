//! The MCP path next to gRPC: the same steps as `tools/call` over Streamable HTTP (`/mcp` on
//! the same controller, through the SDK's client), each until its result — the reply's text
//! and the frame as an image, so the gRPC figure to set it against is until the frame.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use crate::steps::Step;
use crate::{Runs, Stats, measure, stats};

/// The steps the MCP path is timed on.
pub const STEPS: &[&str] = &["navigate_small", "click"];

/// Times `step` as MCP tool calls on the controller at `address`, on a thread of its own.
pub async fn act(
    address: std::net::SocketAddr,
    name: &str,
    site: &str,
    step: Step,
    runs: Runs,
) -> Stats {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{address}/mcp"));
    let client = ().serve(transport).await.expect("an MCP session");
    let thread = format!("bench-mcp-{name}");
    let call = |tool: &'static str, mut arguments: Value| {
        arguments["thread"] = json!(thread);
        arguments["workspace"] = json!("bench");
        let Value::Object(arguments) = arguments else {
            unreachable!("an object")
        };
        CallToolRequestParams::new(tool).with_arguments(arguments)
    };
    let (tool, arguments) = match step {
        Step::Navigate(path) => ("browser_navigate", json!({"url": format!("{site}{path}")})),
        Step::Click => {
            let page = client
                .call_tool(call(
                    "browser_navigate",
                    json!({"url": format!("{site}/page")}),
                ))
                .await
                .unwrap();
            let listing = match &page.content[0] {
                ContentBlock::Text(text) => text.text.clone(),
                other => panic!("the listing first, not {other:?}"),
            };
            ("browser_click", json!({"n": number_of(&listing, "Press")}))
        }
        _ => unreachable!("the MCP path is timed on navigate and click"),
    };
    let samples = measure(runs, || {
        let request = call(tool, arguments.clone());
        let client = &client;
        async move {
            let result = client.call_tool(request).await.unwrap();
            assert_ne!(result.is_error, Some(true), "{:?}", result.content);
            assert!(
                result
                    .content
                    .iter()
                    .any(|block| matches!(block, ContentBlock::Image(_))),
                "the frame comes with the result"
            );
        }
    })
    .await;
    client.cancel().await.unwrap();
    stats(samples)
}

/// The n of `[n] … "label"` in a listing.
fn number_of(listing: &str, label: &str) -> i64 {
    listing
        .lines()
        .filter(|line| line.contains(&format!("\"{label}\"")))
        .find_map(|line| {
            line.trim()
                .strip_prefix('[')?
                .split(']')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {label:?} in {listing}"))
}
