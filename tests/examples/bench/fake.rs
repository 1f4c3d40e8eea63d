//! A backend that answers every op at once with answers recorded once from the real small page
//! (its listing, its text, its JPEG), so that the controller run over it shows its own cost:
//! threads, listings and frames in sled, scheduling and the gRPC hop, with no browser work.

use nanomuse_controller::listing::{LIST_JS, RESOLVE_JS};
use nanomuse_proto::*;
use serde_json::{Value, json};

pub struct FakeBackend {
    /// What `LIST_JS` returned on the page.
    listing: String,
    /// What any other script answers: the page's url, title and text (for `extract`).
    text: String,
    shot: ScreenshotReply,
    url: String,
    title: String,
}

impl FakeBackend {
    /// Records the answers of a new page `session` of `backend` showing `url`.
    pub async fn recorded(backend: &dyn Backend, session: Option<Session>, url: String) -> Self {
        backend
            .open(OpenRequest {
                session: session.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        backend
            .navigate(NavigateRequest {
                session: session.clone(),
                url,
                timeout_ms: 0,
            })
            .await
            .unwrap();
        let evaluate = |js: &str, arg: Value| {
            backend.evaluate(EvaluateRequest {
                session: session.clone(),
                js: js.into(),
                arg_json: arg.to_string(),
            })
        };
        let listing = evaluate(LIST_JS, json!({"listing_id": "fake", "max": 80}))
            .await
            .unwrap()
            .value_json;
        let text = evaluate(
            "() => ({url: location.href, title: document.title, text: document.body.innerText})",
            Value::Null,
        )
        .await
        .unwrap()
        .value_json;
        let shot = backend
            .screenshot(ScreenshotRequest {
                session: session.clone(),
                quality: 70,
            })
            .await
            .unwrap();
        let page: Value = serde_json::from_str(&text).unwrap();
        Self {
            listing,
            text,
            shot,
            url: page["url"].as_str().unwrap().into(),
            title: page["title"].as_str().unwrap().into(),
        }
    }

    /// The size of the recorded picture, every frame's size here.
    pub fn jpeg_len(&self) -> usize {
        self.shot.jpeg.len()
    }

    fn page(&self) -> Option<PageInfo> {
        Some(PageInfo {
            url: self.url.clone(),
            title: self.title.clone(),
            width: self.shot.width,
            height: self.shot.height,
            loading: false,
        })
    }
}

#[tonic::async_trait]
impl Backend for FakeBackend {
    async fn open(&self, _: OpenRequest) -> Result<OpenReply, BackendError> {
        Ok(OpenReply { page: self.page() })
    }

    async fn navigate(&self, _: NavigateRequest) -> Result<NavigateReply, BackendError> {
        Ok(NavigateReply {
            page: self.page(),
            status: 200,
            download: String::new(),
            refused: Vec::new(),
        })
    }

    async fn evaluate(&self, request: EvaluateRequest) -> Result<EvaluateReply, BackendError> {
        let value_json = if request.js == LIST_JS {
            self.listing.clone()
        } else if request.js == RESOLVE_JS {
            // Every element is found, in view, at the small page's button.
            json!({"x": 110.0, "y": 35.0, "label": "Press", "kind": "button", "url": self.url})
                .to_string()
        } else {
            self.text.clone()
        };
        Ok(EvaluateReply { value_json })
    }

    async fn tap(&self, _: TapRequest) -> Result<TapReply, BackendError> {
        Ok(TapReply {})
    }

    async fn r#type(&self, _: TypeRequest) -> Result<TypeReply, BackendError> {
        Ok(TypeReply {})
    }

    async fn key(&self, _: KeyRequest) -> Result<KeyReply, BackendError> {
        Ok(KeyReply::default())
    }

    async fn scroll(&self, _: ScrollRequest) -> Result<ScrollReply, BackendError> {
        Ok(ScrollReply {})
    }

    async fn back(&self, _: BackRequest) -> Result<BackReply, BackendError> {
        Ok(BackReply {
            page: self.page(),
            refused: Vec::new(),
        })
    }

    async fn settle(&self, _: SettleRequest) -> Result<SettleReply, BackendError> {
        // A page quiet at once, as the small page is.
        Ok(SettleReply {
            settled: true,
            at_once: true,
            ..Default::default()
        })
    }

    async fn screenshot(&self, _: ScreenshotRequest) -> Result<ScreenshotReply, BackendError> {
        Ok(self.shot.clone())
    }

    async fn state(&self, _: StateRequest) -> Result<StateReply, BackendError> {
        Ok(StateReply {
            url: self.url.clone(),
            title: self.title.clone(),
            width: self.shot.width,
            height: self.shot.height,
            host: "fake".into(),
            ..Default::default()
        })
    }

    async fn fetch(&self, request: FetchRequest) -> Result<FetchReply, BackendError> {
        Ok(FetchReply {
            status: 200,
            headers: vec![Header {
                name: "content-type".into(),
                value: "application/json".into(),
            }],
            body: br#"{"user":"nobody"}"#.to_vec(),
            url: request.url,
        })
    }

    async fn profile(&self, _: ProfileRequest) -> Result<ProfileReply, BackendError> {
        Ok(ProfileReply {})
    }

    async fn close(&self, _: CloseRequest) -> Result<CloseReply, BackendError> {
        Ok(CloseReply {})
    }
    async fn upload(&self, _: UploadRequest) -> Result<UploadReply, BackendError> {
        Ok(UploadReply::default())
    }
}
