//! Requests and calls the tests make again and again: the browser tool's `Act` as the agent
//! sends it, the backend's session, and a token on a gRPC call.

use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::{ActReply, ActRequest, NavigateAction, OpenRequest, Session};
use tonic::transport::Channel;

/// The browser tool's client, as the agent holds it.
pub type Tool = BrowserToolClient<Channel>;

/// An `Act` request: `action` on `thread`, in the default workspace, on the backend the
/// controller picks. Other fields by struct update:
/// `ActRequest { backend: "device".into(), ..act("t1", action) }`.
pub fn act(thread: &str, action: Action) -> ActRequest {
    ActRequest {
        thread: thread.into(),
        action: Some(action),
        ..Default::default()
    }
}

/// [`act`] in `workspace`.
pub fn act_in(thread: &str, workspace: &str, action: Action) -> ActRequest {
    ActRequest {
        workspace: workspace.into(),
        ..act(thread, action)
    }
}

/// [`act`] on `backend` ("playwright" for a worker, "device" for a phone).
pub fn act_on(thread: &str, backend: &str, action: Action) -> ActRequest {
    ActRequest {
        backend: backend.into(),
        ..act(thread, action)
    }
}

/// The navigate action to `url`.
pub fn navigate(url: impl Into<String>) -> Action {
    Action::Navigate(NavigateAction { url: url.into() })
}

/// Sends `request` and returns its reply; panics, naming the action and the status, when the
/// call fails.
pub async fn acted(tool: &mut Tool, request: ActRequest) -> ActReply {
    let what = format!("{:?}", request.action);
    tool.act(request)
        .await
        .unwrap_or_else(|status| panic!("{what}: {:?} {}", status.code(), status.message()))
        .into_inner()
}

/// `message` as a gRPC request with `authorization: Bearer <token>`, or with no token.
pub fn bearer<T>(message: T, token: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

/// The number of the element labelled `label` in an action's reply.
pub fn element(reply: &ActReply, label: &str) -> i64 {
    reply
        .elements
        .iter()
        .find(|e| e.label == label)
        .unwrap_or_else(|| panic!("no element {label:?} in {}", reply.text))
        .n
        .into()
}

/// The backend's session of page `page` in tenant A's workspace `work`.
pub fn session(page: &str) -> Option<Session> {
    Some(Session::new("tenant-a", "work", page))
}

/// The backend's open of page `page`, as a phone-sized page when `mobile`.
pub fn open_request(page: &str, mobile: bool) -> OpenRequest {
    OpenRequest {
        session: session(page),
        mobile,
        ..Default::default()
    }
}
