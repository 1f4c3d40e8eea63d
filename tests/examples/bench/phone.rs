//! The phone path: the same actions through controller → device gateway → reference device (a
//! phone played by headless Chromium, over the phone's WebSocket protocol), next to them on a
//! worker behind the same controller.

use std::path::Path;

use nanomuse_device_gateway::GatewayConfig;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_reference_device::{self as reference, ReferenceConfig};
use tokio_util::sync::CancellationToken;

use crate::{Runs, Stats, measure, stats};
use nanomuse_tests::{act_on, controller_with_worker};

const TOKEN: &str = "bench-device-token-0001";

pub struct PhoneRow {
    pub name: &'static str,
    pub worker: Stats,
    pub phone: Stats,
}

/// Reply times of `state` (one op), `extract` (one evaluate) and `navigate` (navigate, settle,
/// listing) on a worker thread and on a phone thread of one controller.
pub async fn measure_both(dir: &Path, site: &str, runs: Runs) -> Vec<PhoneRow> {
    let mut config = GatewayConfig::default();
    config.device_tokens.insert(TOKEN.into(), "local".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway_address = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let gateway = tokio::spawn(nanomuse_device_gateway::run(config, listener, stop.clone()));
    let (controller, worker) = controller_with_worker(dir, |config| {
        config.controller.gateways = vec![format!("http://{gateway_address}")];
    })
    .await;
    let device = reference::start(
        ReferenceConfig {
            gateway: format!("ws://{gateway_address}/device"),
            device_id: "bench-phone".into(),
            token: TOKEN.into(),
            profiles_root: dir.join("phone"),
            ..Default::default()
        },
        CancellationToken::new(),
    );
    device.connected().wait_for(|up| *up).await.unwrap();
    let mut tool = controller.tool().await;

    let page = format!("{site}/page");
    let steps: [(&'static str, Action); 3] = [
        ("state", Action::State(StateAction {})),
        ("extract", Action::Extract(ExtractAction {})),
        (
            "navigate_small",
            Action::Navigate(NavigateAction { url: page.clone() }),
        ),
    ];
    let mut rows = Vec::new();
    for (name, action) in steps {
        let mut times = Vec::new();
        for backend in ["playwright", "device"] {
            let request = act_on(&format!("phone-bench-{backend}"), backend, action.clone());
            let opened = ActRequest {
                action: Some(Action::Navigate(NavigateAction { url: page.clone() })),
                ..request.clone()
            };
            // Until the controller has seen the phone, a device thread is refused: retry the
            // first action until it is not.
            while tool.act(opened.clone()).await.is_err() {
                tokio::task::yield_now().await;
            }
            let samples = measure(runs, || {
                let mut tool = tool.clone();
                let request = request.clone();
                async move {
                    let reply = tool.act(request).await.unwrap().into_inner();
                    assert!(
                        reply.backend.starts_with(if backend == "device" {
                            "device:"
                        } else {
                            "worker:"
                        }),
                        "{}",
                        reply.backend
                    );
                }
            })
            .await;
            times.push(stats(samples));
        }
        rows.push(PhoneRow {
            name,
            worker: times[0],
            phone: times[1],
        });
    }
    device.stop().await;
    controller.stop().await;
    worker.stop().await;
    stop.cancel();
    gateway.await.unwrap().unwrap();
    rows
}
