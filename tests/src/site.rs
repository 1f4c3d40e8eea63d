//! The test site: pages, forms, cookies, downloads and the React/Vue fixtures, served on
//! 127.0.0.1 by the test itself.

use std::net::SocketAddr;
use std::path::Path;

use axum::Router;
use axum::extract::{Path as UrlPath, Query};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{AppendHeaders, Html, IntoResponse, Redirect, Response};
use axum::routing::get;

/// The test site: pages, forms, cookies, downloads and the React/Vue fixtures.
pub async fn serve_site() -> SocketAddr {
    let app = Router::new()
        .route("/page", get(|| async { Html(PAGE) }))
        .route("/second", get(|| async { Html(SECOND) }))
        .route("/submitted", get(submitted))
        .route("/set-cookies", get(set_cookies))
        .route("/echo-cookies", get(echo_cookies))
        .route("/echo-ua", get(echo_user_agent))
        .route("/login", get(|| async { Html(LOGIN) }).post(login))
        .route("/takeover", get(|| async { Html(TAKEOVER) }))
        .route("/account", get(account))
        .route("/api/whoami", get(whoami))
        .route("/redirect-set", get(redirect_set))
        .route("/popups", get(|| async { Html(POPUPS) }))
        .route("/download", get(download))
        .route("/no-content", get(|| async { StatusCode::NO_CONTENT }))
        .route("/empty-404", get(|| async { StatusCode::NOT_FOUND }))
        .route(
            "/redirect-loop",
            get(|| async { Redirect::temporary("/redirect-loop") }),
        )
        .route(
            "/basic-auth",
            get(|| async {
                (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Basic realm=\"Admin\"")],
                    "sign in",
                )
            }),
        )
        .route("/never", get(never))
        .route("/big", get(|| async { "x".repeat(300_000) }))
        .route("/listing", get(|| async { Html(LISTING) }))
        .route("/listing-nested", get(|| async { Html(LISTING_NESTED) }))
        .route("/listing-many", get(listing_many))
        .route("/listing-odd", get(|| async { Html(LISTING_ODD) }))
        .route("/typing-patched", get(|| async { Html(TYPING_PATCHED) }))
        .route("/fixtures/{*path}", get(fixture));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

const PAGE: &str = r#"<!doctype html><html><head><title>Test page</title>
<meta name="viewport" content="width=device-width"></head>
<body style="margin:0">
<button id="press" style="position:absolute;left:10px;top:10px;width:200px;height:50px"
  onclick="document.getElementById('out').textContent='clicked'">Press</button>
<p id="out" style="position:absolute;left:10px;top:70px;margin:0">idle</p>
<form action="/submitted" method="get" style="position:absolute;left:10px;top:120px;margin:0">
  <input id="q" name="q" style="width:200px;height:30px;box-sizing:border-box"></form>
<a id="next" href="/second" style="position:absolute;left:10px;top:200px;display:block;width:100px;height:30px">Next</a>
<div style="height:5000px"></div>
<script>
  window.seen = [];
  for (const type of ['touchstart', 'touchend', 'mousedown', 'mouseup', 'click'])
    document.addEventListener(type, (e) => window.seen.push(e.type), true);
</script>
</body></html>"#;

const SECOND: &str = "<!doctype html><title>Second</title><p>second page</p>";

const LOGIN: &str = r#"<!doctype html><title>Sign in</title>
<form method="post" action="/login">
  <input id="user" name="user" style="display:block;width:200px;height:30px">
  <input id="password" name="password" type="password" style="display:block;width:200px;height:30px">
  <button id="go" style="display:block;width:200px;height:30px">Sign in</button>
</form>"#;

/// A page for the take-over: a button that counts its presses and a field whose value is
/// echoed as text, both at known places on a 1280×900 viewport, so the state the user's input
/// made shows in the page's text.
const TAKEOVER: &str = r#"<!doctype html><html><head><title>Take-over</title></head>
<body style="margin:0">
<button id="press" style="position:absolute;left:10px;top:10px;width:200px;height:50px"
  onclick="window.presses = (window.presses || 0) + 1;
           document.getElementById('count').textContent = 'pressed ' + window.presses">Press</button>
<p id="count" style="position:absolute;left:260px;top:10px;margin:0">pressed 0</p>
<input id="field" style="position:absolute;left:10px;top:120px;width:200px;height:30px"
  oninput="document.getElementById('echo').textContent = 'typed: ' + this.value">
<p id="echo" style="position:absolute;left:260px;top:120px;margin:0">typed:</p>
</body></html>"#;

const POPUPS: &str = r#"<!doctype html><title>Popups</title><body style="margin:0">
<a id="blank" href="/second" target="_blank"
   style="position:absolute;left:10px;top:10px;display:block;width:150px;height:30px">Blank link</a>
<button id="open" onclick="window.open('/second?via=open', '_blank')"
   style="position:absolute;left:10px;top:60px;width:150px;height:30px">Open</button>
</body>"#;

/// Every kind of element the listing knows, each at a known place on a 1280×900 viewport (an
/// icon link named by its icon's tooltip among them), plus the ones it must leave out: hidden
/// three ways, below the fold, a span inside a button, and two that no scroll brings into view
/// (a skip link above the page's top, text for screen readers beside the view).
const LISTING: &str = r##"<!doctype html><html><head><title>Listing</title>
<style>.at { position: absolute; margin: 0; box-sizing: border-box; }</style></head>
<body style="margin:0;height:4000px">
<a class="at" href="/second" style="left:10px;top:10px;width:100px;height:20px">Docs</a>
<button class="at" id="save" style="left:200px;top:10px;width:100px;height:30px">Save
  <span onclick="document.title = 'span clicked'">now</span></button>
<input class="at" id="search" placeholder="Search" style="left:10px;top:62px;width:200px;height:30px">
<input class="at" type="email" aria-label="Email" style="left:300px;top:60px;width:200px;height:30px">
<label class="at" for="password" style="left:10px;top:110px">Password</label>
<input class="at" id="password" type="password" style="left:100px;top:110px;width:150px;height:30px">
<label class="at" style="left:300px;top:110px;display:block;height:30px"><input type="checkbox"
  checked style="margin:0;vertical-align:top"> Remember me</label>
<label class="at" for="country" style="left:10px;top:160px">Country</label>
<select class="at" id="country" style="left:100px;top:160px;height:30px">
  <option>France</option><option selected>Germany</option></select>
<textarea class="at" name="notes" style="left:300px;top:160px;width:200px;height:60px">Dear "team"</textarea>
<div class="at" role="button" style="left:10px;top:260px;width:100px;height:30px"><span
  aria-hidden="true">menu_open</span> Menu</div>
<div class="at" onclick="this.textContent = 'Expanded'" style="left:200px;top:260px;width:100px;height:30px">Expand</div>
<button class="at" disabled style="left:400px;top:260px;width:100px;height:30px"><span
  aria-hidden="true">Send</span></button>
<button class="at" style="left:10px;top:320px;display:none">Hidden</button>
<a class="at" href="/second" style="left:200px;top:320px;visibility:hidden">Invisible</a>
<button class="at" style="left:400px;top:320px;opacity:0">Ghost</button>
<a class="at" href="#date" style="left:10px;top:370px;width:20px;height:20px"><span title="Choose a Date"
  style="display:inline-block;width:16px;height:16px"></span></a>
<a class="at" href="#content" style="left:10px;top:-999px">Skip to content</a>
<a class="at" href="/second" style="left:-9999px;top:3500px">Help for screen readers</a>
<button class="at" id="far" style="left:10px;top:3000px;width:120px;height:30px">Far away</button>
</body></html>"##;

/// Elements the listing reaches beyond the plain document: in an open shadow root, in a
/// same-origin frame (with a 5 px border), a styled checkbox drawn by its label, and a design
/// system's button (JupyterLab's toolbar): a toolbar item with a handler, holding a custom
/// element with a handler of its own, whose shadow root draws the native <button>.
const LISTING_NESTED: &str = r#"<!doctype html><html><head><title>Nested</title></head>
<body style="margin:0">
<div id="host" style="position:absolute;left:10px;top:10px"></div>
<iframe srcdoc="<body style='margin:0'><button style='position:absolute;left:20px;top:30px;width:100px;height:40px'>Inside frame</button></body>"
  style="position:absolute;left:100px;top:100px;width:400px;height:200px;border:5px solid black"></iframe>
<label style="position:absolute;left:10px;top:400px;display:block;width:150px;height:30px"><input
  id="subscribe" type="checkbox" style="position:absolute;opacity:0"> Subscribe</label>
<div class="toolbar-item" onclick="void 0" style="position:absolute;left:10px;top:480px"><ds-button
  aria-label="New Folder" title="New Folder" tabindex="-1" style="cursor:pointer"></ds-button></div>
<script>
  document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
    '<button style="width:120px;height:30px">In shadow</button>';
  customElements.define('ds-button', class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: 'open' }).innerHTML =
        '<button aria-label="New Folder" style="width:30px;height:30px"><slot></slot></button>';
      this.onclick = () => {};
    }
  });
</script>
</body></html>"#;

/// What real apps do to a listing: a framework's handler on the box that holds the app, one
/// over the whole page, todos whose checkboxes only their row names (one drawn transparent
/// over its box, as dijit's), an icon button drawn by CSS, a focusable <div> drawn as
/// pressable, and a page that breaks what a listing would use (`document.querySelectorAll` and
/// `Array.from` replaced, an element whose geometry throws).
const LISTING_ODD: &str = r#"<!doctype html><html><head><title>Odd</title>
<style>
  .at { position: absolute; margin: 0; box-sizing: border-box; }
  ul { list-style: none; padding: 0; margin: 0; }
  li > div { display: flex; align-items: flex-start; height: 30px; }
  input[type=checkbox] { margin: 0; width: 16px; height: 16px; }
  .destroy { width: 20px; height: 20px; padding: 0; }
  .destroy::after { content: '×'; }
  .box { position: relative; display: inline-block; width: 16px; height: 16px; border: 1px solid; }
  .box input { position: absolute; left: 0; top: 0; opacity: 0; }
</style></head>
<body style="margin:0">
<div id="app" class="at" style="left:0;top:0;width:600px;height:300px">
  <section>
    <input id="toggle-all" type="checkbox" class="at" style="left:10px;top:10px">
    <ul class="at" style="left:10px;top:50px;width:400px">
      <li><div><input type="checkbox"><label>buy milk</label><button class="destroy"></button></div></li>
      <li><div><span>bread</span><span class="box"><input type="checkbox"></span></div></li>
    </ul>
  </section>
</div>
<div id="overlay" class="at" style="left:0;top:0;width:100%;height:100%;z-index:-1"></div>
<div class="at" tabindex="0" style="left:700px;top:10px;width:100px;height:30px;cursor:pointer">Tile</div>
<div id="broken" class="at" style="left:700px;top:200px;width:100px;height:30px">Broken</div>
<button class="at" style="left:700px;top:250px;width:100px;height:30px">After broken</button>
<label class="at" for="qty" style="left:700px;top:300px">Quantity</label>
<input class="at" id="qty" style="left:800px;top:300px;width:60px;height:30px">
<label class="at" for="find" style="left:700px;top:350px"><img alt="Search" width="16" height="16"
  src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></label>
<input class="at" id="find" name="q" style="left:800px;top:350px;width:60px;height:30px">
<button class="at" style="left:700px;top:400px;width:100px;height:30px"><svg aria-hidden="true"
  width="12" height="12"><circle cx="6" cy="6" r="5"/></svg> Save</button>
<button class="at" style="left:700px;top:450px;width:30px;height:30px"><span
  style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)">Toggle theme</span><svg
  aria-hidden="true" width="12" height="12"><circle cx="6" cy="6" r="5"/></svg></button>
<button class="at" style="left:700px;top:500px;width:100px;height:30px;text-transform:uppercase">Add
  item</button>
<div role="listbox" class="at" style="left:900px;top:500px;width:100px">
  <label role="option" aria-selected="true" style="display:block;height:24px"><input type="radio"
    checked readonly> Berlin</label>
  <label role="option" aria-selected="false" style="display:block;height:24px"><input
    type="radio" readonly> Oslo</label>
</div>
<label class="at" for="shop" style="left:700px;top:600px;width:150px;height:30px"><span>Shop</span>
  <span>Grocer</span><input id="shop" readonly role="combobox" aria-label="Shop" value="Grocer"
  style="position:absolute;left:0;top:0;width:1px;height:1px;opacity:0;border:0;padding:0"></label>
<button class="at" aria-pressed="true" style="left:700px;top:650px;width:60px;height:30px">Bold</button>
<a class="at" href="/listing-odd" aria-current="page" style="left:700px;top:700px">Home</a>
<div class="at" style="left:700px;top:750px;display:inline-flex">
  <input type="radio" name="colour" id="red" checked
    style="position:absolute;clip:rect(0,0,0,0);pointer-events:none">
  <label for="red" style="display:inline-block;width:60px;height:30px">Red</label>
  <input type="radio" name="colour" id="blue"
    style="position:absolute;clip:rect(0,0,0,0);pointer-events:none">
  <label for="blue" style="display:inline-block;width:60px;height:30px">Blue</label>
</div>
<label class="at" style="left:700px;top:800px"><input type="checkbox" role="switch"
  aria-checked="true"> Express</label>
<script>
  document.getElementById('app').onclick = () => {};
  document.getElementById('overlay').onclick = () => {};
  const broken = document.getElementById('broken');
  broken.onclick = () => {};
  Object.defineProperty(broken, 'getBoundingClientRect', { value() { throw new TypeError('broken'); } });
  document.querySelectorAll = () => 42;
  // MooTools' Array.from: no mapping function.
  Array.from = (item) => [item];
</script>
</body></html>"#;

/// A field on a page that breaks the setter path of typing as troopjs's and MooTools' shims do:
/// property descriptors read through a getter that throws, `Event` replaced. The field echoes
/// what reaches it, and whether the browser sent it.
const TYPING_PATCHED: &str = r#"<!doctype html><html><head><title>Patched</title></head>
<body style="margin:0">
<input id="field" value="old" style="position:absolute;left:10px;top:10px;width:200px;height:30px"
  oninput="document.getElementById('echo').textContent = this.value + (event.isTrusted ? ' (trusted)' : '')">
<p id="echo" style="position:absolute;left:10px;top:60px;margin:0"></p>
<script>
  const illegal = () => { throw new TypeError('Illegal invocation'); };
  Object.getOwnPropertyDescriptor = illegal;
  Reflect.getOwnPropertyDescriptor = illegal;
  window.Event = function (event) { this.type = event.type.indexOf('x'); };
</script>
</body></html>"#;

/// 2,000 buttons, five to a 30 px row, so the listing's speed and counts show on a big page.
async fn listing_many() -> Html<String> {
    let mut page = String::from(
        "<!doctype html><html><head><title>Many</title></head><body style=\"margin:0;height:12000px\">",
    );
    for i in 0..2000 {
        let (row, column) = (i / 5, i % 5);
        page.push_str(&format!(
            "<div><button style=\"position:absolute;left:{}px;top:{}px;width:140px;height:24px\">b{i}</button></div>",
            column * 150,
            row * 30
        ));
    }
    page.push_str("</body></html>");
    Html(page)
}

async fn submitted(Query(query): Query<std::collections::HashMap<String, String>>) -> Html<String> {
    let q = query.get("q").cloned().unwrap_or_default();
    Html(format!(
        "<!doctype html><title>Submitted</title><p id=\"q\">{q}</p>"
    ))
}

async fn set_cookies() -> Response {
    (
        // A plain array would insert, keeping only the last Set-Cookie.
        AppendHeaders([
            (header::SET_COOKIE, "persistent=kept; Max-Age=86400; Path=/"),
            (header::SET_COOKIE, "session=gone; Path=/"),
        ]),
        Html("<!doctype html><title>Cookies set</title><p>set</p>"),
    )
        .into_response()
}

fn cookie_header(headers: &HeaderMap) -> String {
    headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

async fn echo_cookies(headers: HeaderMap) -> String {
    cookie_header(&headers)
}

async fn echo_user_agent(headers: HeaderMap) -> String {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

async fn login(body: String) -> Response {
    if body.contains("user=ada") && body.contains("password=s3cret") {
        (
            [(header::SET_COOKIE, "sid=ada-session; Path=/; HttpOnly")],
            Redirect::to("/account"),
        )
            .into_response()
    } else {
        (StatusCode::UNAUTHORIZED, Html("<title>Denied</title>")).into_response()
    }
}

async fn account(headers: HeaderMap) -> Html<String> {
    let who = if cookie_header(&headers).contains("sid=ada-session") {
        "ada"
    } else {
        "nobody"
    };
    Html(format!(
        "<!doctype html><title>Account</title><p id=\"who\">{who}</p>"
    ))
}

async fn whoami(headers: HeaderMap) -> Response {
    let cookies = cookie_header(&headers);
    let user = if cookies.contains("sid=ada-session") {
        "ada"
    } else {
        "nobody"
    };
    (
        [
            (header::SET_COOKIE, "seen=yes; Path=/; Max-Age=600"),
            (header::CONTENT_TYPE, "application/json"),
        ],
        format!("{{\"user\":\"{user}\"}}"),
    )
        .into_response()
}

async fn redirect_set() -> Response {
    (
        [(header::SET_COOKIE, "hop=one; Path=/")],
        Redirect::to("/echo-cookies"),
    )
        .into_response()
}

async fn download() -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"report.txt\"",
            ),
        ],
        "quarterly numbers\n",
    )
        .into_response()
}

async fn never() -> Response {
    std::future::pending::<()>().await;
    StatusCode::OK.into_response()
}

async fn fixture(UrlPath(path): UrlPath<String>) -> Response {
    if path.contains("..") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(&path);
    match tokio::fs::read(&file).await {
        Ok(bytes) => {
            let kind = if path.ends_with(".js") {
                "text/javascript"
            } else if path.ends_with(".css") {
                "text/css"
            } else {
                "text/html; charset=utf-8"
            };
            ([(header::CONTENT_TYPE, kind)], bytes).into_response()
        }
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}
