//! Where a browser's traffic leaves the worker: every Chromium gets a small forward proxy of its
//! own (`--proxy-server`, loopback included), so every request it makes — navigations, every hop
//! of an HTTP or JavaScript redirect, link clicks, subresources, `fetch()` from the page,
//! WebSockets — passes the URL policy ([`nanomuse_proto::url_policy`]) before a connection is
//! opened. The proxy takes plain HTTP requests (absolute-form) and `CONNECT` tunnels (https,
//! ws, wss), checks the host, resolves it once, refuses it when any address is refused, and
//! connects to exactly the addresses it checked: no second lookup, so no DNS rebinding.
//!
//! The `fetch` op uses the same gate: its HTTP client resolves names through the policy
//! ([`Egress::http`]), and the op checks every hop's URL (an address in a URL needs no lookup).
//!
//! A refused request gets a 403 page naming the rule, and the refusal is kept for a minute so
//! the op that caused it can report it ([`Egress::claim_refusals`]). The policy is the one the
//! latest op's session carried, under the worker's own floor ([`UrlPolicy::under_floor`]).

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use nanomuse_proto::url_policy::{Resolve, SystemResolver};
use nanomuse_proto::{Refusal, Rule, UrlPolicy};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use url::{Host, Url};

/// How long a connection to a checked address may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How many refusals are kept for their ops to report, and for how long.
const REFUSALS_KEPT: usize = 64;
const REFUSAL_TTL: Duration = Duration::from_secs(60);

/// Headers that belong to one hop (RFC 9110 §7.6.1), not forwarded either way.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "upgrade",
];

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// A refusal the proxy made, waiting for the op of the page that asked to report it.
struct Recorded {
    at: Instant,
    origin: String,
    refusal: Refusal,
}

/// What the proxy's tasks share with the browser entry.
struct Gate {
    floor: UrlPolicy,
    resolver: Arc<dyn Resolve>,
    fetch_timeout: Duration,
    current: RwLock<Current>,
    refusals: Mutex<VecDeque<Recorded>>,
}

/// The effective policy and the `fetch` client built for it (rebuilt when the policy changes,
/// so no pooled connection outlives the policy it was checked under).
struct Current {
    policy: Arc<UrlPolicy>,
    http: reqwest::Client,
}

/// One browser's proxy and policy; the proxy stops when this is stopped or dropped.
pub struct Egress {
    gate: Arc<Gate>,
    address: SocketAddr,
    stop: CancellationToken,
}

impl Egress {
    /// Starts a proxy on 127.0.0.1 (any port) with the system's resolver, enforcing `request`
    /// (a session's policy; none: the floor alone) under `floor`.
    pub async fn start(
        floor: UrlPolicy,
        request: Option<&UrlPolicy>,
        fetch_timeout: Duration,
    ) -> std::io::Result<Self> {
        Self::start_with(Arc::new(SystemResolver), floor, request, fetch_timeout).await
    }

    /// [`Egress::start`] with a given resolver (tests stand in for DNS with it).
    pub async fn start_with(
        resolver: Arc<dyn Resolve>,
        floor: UrlPolicy,
        request: Option<&UrlPolicy>,
        fetch_timeout: Duration,
    ) -> std::io::Result<Self> {
        let policy = Arc::new(effective(&floor, request));
        let gate = Arc::new(Gate {
            current: RwLock::new(Current {
                http: fetch_client(policy.clone(), resolver.clone(), fetch_timeout),
                policy,
            }),
            floor,
            resolver,
            fetch_timeout,
            refusals: Mutex::default(),
        });
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let stop = CancellationToken::new();
        tokio::spawn(accept(listener, gate.clone(), stop.clone()));
        Ok(Self {
            gate,
            address,
            stop,
        })
    }

    /// The `--proxy-server` of the browser.
    pub fn proxy_address(&self) -> SocketAddr {
        self.address
    }

    /// Enforces `request` (the latest op's session policy) under the floor from now on.
    pub fn set_policy(&self, request: Option<&UrlPolicy>) {
        let policy = effective(&self.gate.floor, request);
        if *self.gate.current.read().unwrap().policy == policy {
            return;
        }
        let policy = Arc::new(policy);
        let http = fetch_client(
            policy.clone(),
            self.gate.resolver.clone(),
            self.gate.fetch_timeout,
        );
        *self.gate.current.write().unwrap() = Current { policy, http };
    }

    /// The policy in force.
    pub fn policy(&self) -> Arc<UrlPolicy> {
        self.gate.policy()
    }

    /// The HTTP client of `fetch`: it resolves names through the policy and connects to the
    /// addresses it checked. It does not see URLs: check each hop with [`UrlPolicy::check_url`].
    pub fn http(&self) -> reqwest::Client {
        self.gate.current.read().unwrap().http.clone()
    }

    /// The refusals made for requests to `origins` (`host:port`, see [`origin_of_url`]) that
    /// no op has reported yet; they are reported once.
    pub fn claim_refusals(&self, origins: &HashSet<String>) -> Vec<Refusal> {
        let mut refusals = self.gate.refusals.lock().unwrap();
        let mut claimed: Vec<Refusal> = Vec::new();
        refusals.retain(|recorded| {
            if !origins.contains(&recorded.origin) {
                return true;
            }
            if !claimed.contains(&recorded.refusal) {
                claimed.push(recorded.refusal.clone());
            }
            false
        });
        claimed
    }

    /// Stops the proxy and every connection and tunnel it carries.
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn effective(floor: &UrlPolicy, request: Option<&UrlPolicy>) -> UrlPolicy {
    request.cloned().unwrap_or_default().under_floor(floor)
}

/// `host:port` of a URL, as the proxy records refusals: lowercase host, IPv6 in brackets,
/// the scheme's port when none is written.
pub fn origin_of_url(url: &Url) -> Option<String> {
    Some(origin(&url.host()?, url.port_or_known_default()?))
}

fn origin(host: &Host<&str>, port: u16) -> String {
    match host {
        Host::Domain(name) => format!("{}:{port}", name.trim_end_matches('.').to_lowercase()),
        Host::Ipv4(ip) => format!("{ip}:{port}"),
        Host::Ipv6(ip) => format!("[{ip}]:{port}"),
    }
}

/// `host:port` of a host as a request names it.
fn origin_of_host(host: &str, port: u16) -> String {
    match Host::parse(host) {
        Ok(Host::Domain(name)) => origin(&Host::Domain(name.as_str()), port),
        Ok(Host::Ipv4(ip)) => origin(&Host::Ipv4(ip), port),
        Ok(Host::Ipv6(ip)) => origin(&Host::Ipv6(ip), port),
        Err(_) => format!("{}:{port}", host.to_lowercase()),
    }
}

impl Gate {
    fn policy(&self) -> Arc<UrlPolicy> {
        self.current.read().unwrap().policy.clone()
    }

    fn record(&self, origin: String, refusal: Refusal) {
        let mut refusals = self.refusals.lock().unwrap();
        while refusals
            .front()
            .is_some_and(|r| r.at.elapsed() > REFUSAL_TTL)
            || refusals.len() >= REFUSALS_KEPT
        {
            refusals.pop_front();
        }
        refusals.push_back(Recorded {
            at: Instant::now(),
            origin,
            refusal,
        });
    }

    /// A connection to `host:port` when the policy lets the browser reach it, opened to the
    /// very addresses that were checked; otherwise the response to give the browser.
    async fn connect(&self, host: &str, port: u16) -> Result<TcpStream, Response<ProxyBody>> {
        let policy = self.policy();
        let addresses = match policy
            .resolve_checked_with(self.resolver.as_ref(), host, port)
            .await
        {
            Ok(addresses) => addresses,
            Err(refusal) if refusal.rule == Rule::Unresolved => {
                let title = format!("{host} could not be resolved");
                return Err(proxy_error(
                    StatusCode::BAD_GATEWAY,
                    &title,
                    refusal.to_string(),
                ));
            }
            Err(refusal) => {
                tracing::info!(host, port, %refusal, "request refused by the URL policy");
                let page = refused_page(&refusal);
                self.record(origin_of_host(host, port), refusal);
                return Err(page);
            }
        };
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&addresses[..])).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                Ok(stream)
            }
            Ok(Err(error)) => Err(proxy_error(
                StatusCode::BAD_GATEWAY,
                &format!("{host}:{port} could not be reached"),
                format!("could not connect to {host}:{port}: {error}"),
            )),
            Err(_) => Err(proxy_error(
                StatusCode::GATEWAY_TIMEOUT,
                &format!("{host}:{port} could not be reached"),
                format!("{host}:{port} did not accept a connection in time"),
            )),
        }
    }

    async fn handle(
        &self,
        request: Request<Incoming>,
        stop: CancellationToken,
    ) -> Response<ProxyBody> {
        if request.method() == Method::CONNECT {
            self.tunnel(request, stop).await
        } else {
            self.forward(request, stop).await
        }
    }

    /// `CONNECT host:port`: checked, connected, then bytes both ways until either side ends.
    async fn tunnel(
        &self,
        request: Request<Incoming>,
        stop: CancellationToken,
    ) -> Response<ProxyBody> {
        let Some(authority) = request.uri().authority().cloned() else {
            return proxy_error(
                StatusCode::BAD_REQUEST,
                "Bad request",
                "CONNECT needs host:port".into(),
            );
        };
        let port = authority.port_u16().unwrap_or(443);
        let mut target = match self.connect(authority.host(), port).await {
            Ok(target) => target,
            Err(response) => return response,
        };
        tokio::spawn(async move {
            match hyper::upgrade::on(request).await {
                Ok(upgraded) => {
                    let mut upgraded = TokioIo::new(upgraded);
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut upgraded, &mut target) => {}
                    }
                }
                Err(error) => tracing::debug!(%error, "CONNECT upgrade failed"),
            }
        });
        Response::new(empty())
    }

    /// A plain HTTP request in absolute form: checked, sent on a connection of its own to the
    /// checked address, the response streamed back.
    async fn forward(
        &self,
        request: Request<Incoming>,
        stop: CancellationToken,
    ) -> Response<ProxyBody> {
        let uri = request.uri().clone();
        let (Some("http"), Some(host)) = (uri.scheme_str(), uri.host()) else {
            return proxy_error(
                StatusCode::BAD_REQUEST,
                "Bad request",
                "this proxy takes absolute http:// requests and CONNECT".into(),
            );
        };
        let port = uri.port_u16().unwrap_or(80);
        let target = match self.connect(host, port).await {
            Ok(target) => target,
            Err(response) => return response,
        };
        let (mut sender, connection) = match hyper::client::conn::http1::handshake::<_, Incoming>(
            TokioIo::new(target),
        )
        .await
        {
            Ok(pair) => pair,
            Err(error) => {
                return proxy_error(
                    StatusCode::BAD_GATEWAY,
                    &format!("{host}:{port} could not be reached"),
                    format!("{host}:{port}: {error}"),
                );
            }
        };
        tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = connection => {}
            }
        });
        let (mut parts, body) = request.into_parts();
        parts.uri = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .expect("a path and query is a URI");
        strip_hop_by_hop(&mut parts.headers);
        match sender.send_request(Request::from_parts(parts, body)).await {
            Ok(response) => {
                let (mut parts, body) = response.into_parts();
                strip_hop_by_hop(&mut parts.headers);
                Response::from_parts(parts, body.boxed())
            }
            Err(error) if error.is_incomplete_message() => proxy_error(
                StatusCode::BAD_GATEWAY,
                &format!("{host}:{port} did not answer"),
                format!("{host}:{port} closed the connection without an answer"),
            ),
            Err(error) => proxy_error(
                StatusCode::BAD_GATEWAY,
                &format!("{host}:{port} did not answer"),
                format!("{host}:{port} did not answer: {error}"),
            ),
        }
    }
}

async fn accept(listener: TcpListener, gate: Arc<Gate>, stop: CancellationToken) {
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!(%error, "the URL-policy proxy could not accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let gate = gate.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(|request| {
                let gate = gate.clone();
                let stop = stop.clone();
                async move { Ok::<_, Infallible>(gate.handle(request, stop).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = connection => {}
            }
        });
    }
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect();
    for name in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
}

fn empty() -> ProxyBody {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

/// A page of the proxy's own (a name that does not resolve, a host that does not answer): for a
/// plain HTTP request the browser shows it as the page, so it says what happened in its title.
/// The header of the proxy's own page for a site it could not reach (unresolved, refused,
/// silent), saying why: a navigation to it fails as one to an unreachable site fails in a
/// browser without the proxy, rather than answering with the proxy's page.
pub const UNREACHABLE_HEADER: &str = "x-nanomuse-unreachable";

fn proxy_error(status: StatusCode, title: &str, message: String) -> Response<ProxyBody> {
    let mut response = page(status, title, &message);
    if status != StatusCode::BAD_REQUEST {
        let why: String = message
            .chars()
            .map(|c| if c.is_ascii_graphic() { c } else { ' ' })
            .collect();
        if let Ok(value) = HeaderValue::from_str(&why) {
            response.headers_mut().insert(UNREACHABLE_HEADER, value);
        }
    }
    response
}

/// The page a refused request shows in the browser: 403, the rule in the title and the text.
fn refused_page(refusal: &Refusal) -> Response<ProxyBody> {
    page(
        StatusCode::FORBIDDEN,
        "Refused by the URL policy",
        &refusal.to_string(),
    )
}

fn page(status: StatusCode, title: &str, message: &str) -> Response<ProxyBody> {
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{message}</p></body></html>",
        title = escape(title),
        message = escape(message),
    );
    let mut response = Response::new(
        Full::new(Bytes::from(html))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The `fetch` op's client: redirects followed by the op (each hop checked), no proxy from the
/// environment, names resolved through the policy.
fn fetch_client(
    policy: Arc<UrlPolicy>,
    resolver: Arc<dyn Resolve>,
    timeout: Duration,
) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(timeout)
        .dns_resolver(Arc::new(PolicyResolver { policy, resolver }))
        .build()
        .expect("the HTTP client's settings are valid")
}

/// Resolves for reqwest through [`UrlPolicy::resolve_checked_with`]: reqwest connects to what
/// this returns, so what was checked is what is reached.
struct PolicyResolver {
    policy: Arc<UrlPolicy>,
    resolver: Arc<dyn Resolve>,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let resolver = self.resolver.clone();
        Box::pin(async move {
            // Port 0: the client puts the URL's port on every address.
            let addresses = policy
                .resolve_checked_with(resolver.as_ref(), name.as_str(), 0)
                .await
                .map_err(|refusal| Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The policy's refusal behind a failed `fetch` request, if that is why it failed.
pub fn refusal_in(error: &reqwest::Error) -> Option<Refusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<Refusal>() {
            return Some(refusal.clone());
        }
        source = cause.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A resolver that answers from a script, in order, and counts its lookups: a DNS server
    /// that rebinds between two lookups of the same name.
    struct Rebinding {
        answers: Mutex<VecDeque<IpAddr>>,
        lookups: AtomicUsize,
    }

    impl Rebinding {
        fn new(answers: &[&str]) -> Arc<Self> {
            Arc::new(Self {
                answers: Mutex::new(answers.iter().map(|a| a.parse().unwrap()).collect()),
                lookups: AtomicUsize::new(0),
            })
        }
    }

    impl Resolve for Rebinding {
        fn lookup<'a>(
            &'a self,
            _host: &'a str,
        ) -> Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>>
        {
            self.lookups.fetch_add(1, Ordering::SeqCst);
            let answer = self.answers.lock().unwrap().pop_front();
            Box::pin(async move {
                answer
                    .map(|ip| vec![ip])
                    .ok_or_else(|| std::io::Error::other("no answer"))
            })
        }
    }

    /// An HTTP server on `ip:port` that answers every request with `body` and counts them.
    async fn server(ip: &str, port: u16, body: &'static str) -> (u16, Arc<AtomicUsize>) {
        let listener = TcpListener::bind((ip, port)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let hits = counted.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    hits.fetch_add(1, Ordering::SeqCst);
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                });
            }
        });
        (port, hits)
    }

    /// Sends `request` to the proxy and reads until the connection closes or `until` appears.
    async fn exchange(stream: &mut TcpStream, request: &str, until: &str) -> String {
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains(until) {
            match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
                Ok(Ok(n)) => seen.extend_from_slice(&buffer[..n]),
            }
        }
        String::from_utf8_lossy(&seen).into_owned()
    }

    /// A policy that reaches 127.0.0.2 (the "public" test server) and nothing else internal.
    fn policy() -> UrlPolicy {
        UrlPolicy {
            hosted: true,
            allow_addresses: vec!["127.0.0.2/32".into()],
            ..UrlPolicy::default()
        }
    }

    /// DNS rebinding: the name is looked up once per connection, and the connection goes to
    /// the address that was checked, never to what a second lookup would say.
    #[tokio::test]
    async fn the_proxy_connects_to_the_address_it_checked_with_one_lookup_per_connection() {
        let (port, public_hits) = server("127.0.0.2", 0, "public").await;
        let (_, victim_hits) = server("127.0.0.1", port, "victim").await;
        let resolver = Rebinding::new(&["127.0.0.2", "127.0.0.1", "127.0.0.2", "127.0.0.1"]);
        let egress = Egress::start_with(
            resolver.clone(),
            UrlPolicy::default(),
            Some(&policy()),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        let proxy = egress.proxy_address();

        // CONNECT: checked (127.0.0.2), connected there; the request inside reaches it.
        let mut stream = TcpStream::connect(proxy).await.unwrap();
        let target = format!("rebind.example:{port}");
        let reply = exchange(
            &mut stream,
            &format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"),
            "\r\n\r\n",
        )
        .await;
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        let reply = exchange(&mut stream, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "public").await;
        assert!(reply.ends_with("public"), "{reply}");
        assert_eq!(resolver.lookups.load(Ordering::SeqCst), 1);

        // The next connection looks up again; the name now says 127.0.0.1: refused, 403.
        let mut stream = TcpStream::connect(proxy).await.unwrap();
        let reply = exchange(
            &mut stream,
            &format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"),
            "</html>",
        )
        .await;
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
        assert!(
            reply.contains("rebind.example resolves to 127.0.0.1, a loopback address"),
            "{reply}"
        );
        assert_eq!(resolver.lookups.load(Ordering::SeqCst), 2);

        // Plain HTTP the same way: one lookup, the checked address, then a refusal.
        let mut stream = TcpStream::connect(proxy).await.unwrap();
        let get = format!("GET http://{target}/ HTTP/1.1\r\nHost: {target}\r\n\r\n");
        let reply = exchange(&mut stream, &get, "public").await;
        assert!(
            reply.starts_with("HTTP/1.1 200") && reply.ends_with("public"),
            "{reply}"
        );
        let mut stream = TcpStream::connect(proxy).await.unwrap();
        let reply = exchange(&mut stream, &get, "</html>").await;
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
        assert_eq!(resolver.lookups.load(Ordering::SeqCst), 4);

        assert_eq!(public_hits.load(Ordering::SeqCst), 2);
        assert_eq!(
            victim_hits.load(Ordering::SeqCst),
            0,
            "the rebound address was reached"
        );

        // The refusals wait for the page that asked for that host, once.
        let origins = HashSet::from([format!("rebind.example:{port}")]);
        let claimed = egress.claim_refusals(&origins);
        assert_eq!(claimed.len(), 1, "{claimed:?}");
        assert_eq!(claimed[0].rule, Rule::InternalAddress);
        assert!(egress.claim_refusals(&origins).is_empty());
    }

    #[tokio::test]
    async fn the_proxy_refuses_literal_addresses_and_internal_names_without_a_lookup() {
        let (port, victim_hits) = server("127.0.0.1", 0, "victim").await;
        let resolver = Rebinding::new(&[]);
        let egress = Egress::start_with(
            resolver.clone(),
            UrlPolicy::default(),
            Some(&policy()),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        for target in [
            format!("127.0.0.1:{port}"),
            format!("[::ffff:127.0.0.1]:{port}"),
            format!("[::1]:{port}"),
            format!("localhost:{port}"),
            "169.254.169.254:80".to_string(),
            "metadata.google.internal:80".to_string(),
        ] {
            for request in [
                format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"),
                format!("GET http://{target}/latest HTTP/1.1\r\nHost: {target}\r\n\r\n"),
            ] {
                let mut stream = TcpStream::connect(egress.proxy_address()).await.unwrap();
                let reply = exchange(&mut stream, &request, "</html>").await;
                assert!(reply.starts_with("HTTP/1.1 403"), "{request}: {reply}");
                assert!(reply.contains("Refused by the URL policy"), "{reply}");
            }
        }
        assert_eq!(resolver.lookups.load(Ordering::SeqCst), 0);
        assert_eq!(victim_hits.load(Ordering::SeqCst), 0);
    }

    /// The request's policy is held to the worker's floor: hosted, and only the floor's
    /// escape hatches.
    #[tokio::test]
    async fn a_request_cannot_lower_the_floor() {
        let (port, hits) = server("127.0.0.2", 0, "public").await;
        let floor = UrlPolicy::hosted();
        let egress = Egress::start_with(
            Rebinding::new(&[]),
            floor,
            Some(&UrlPolicy::default()),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        let get = format!("GET http://127.0.0.2:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut stream = TcpStream::connect(egress.proxy_address()).await.unwrap();
        assert!(
            exchange(&mut stream, &get, "</html>")
                .await
                .starts_with("HTTP/1.1 403")
        );
        // A request naming its own escape hatch gets none under a hosted floor without it.
        egress.set_policy(Some(&policy()));
        let mut stream = TcpStream::connect(egress.proxy_address()).await.unwrap();
        assert!(
            exchange(&mut stream, &get, "</html>")
                .await
                .starts_with("HTTP/1.1 403")
        );
        assert!(egress.policy().hosted);
        assert_eq!(hits.load(Ordering::SeqCst), 0);
    }

    /// `fetch`'s client resolves through the policy and connects where it checked.
    #[tokio::test]
    async fn the_fetch_client_resolves_through_the_policy() {
        let (port, public_hits) = server("127.0.0.2", 0, "public").await;
        let (_, victim_hits) = server("127.0.0.1", port, "victim").await;
        let resolver = Rebinding::new(&["127.0.0.2", "127.0.0.1"]);
        let egress = Egress::start_with(
            resolver.clone(),
            UrlPolicy::default(),
            Some(&policy()),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        let url = format!("http://rebind.example:{port}/");
        let body = egress
            .http()
            .get(&url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(body, "public");
        // A new client (policy changed), so no pooled connection: the name is looked up again.
        egress.set_policy(Some(&UrlPolicy {
            deny_hosts: vec!["other.example".into()],
            ..policy()
        }));
        let error = egress.http().get(&url).send().await.unwrap_err();
        let refusal = refusal_in(&error).expect("the policy's refusal");
        assert_eq!(refusal.rule, Rule::InternalAddress);
        assert!(
            refusal.to_string().contains("resolves to 127.0.0.1"),
            "{refusal}"
        );
        assert_eq!(resolver.lookups.load(Ordering::SeqCst), 2);
        assert_eq!(public_hits.load(Ordering::SeqCst), 1);
        assert_eq!(victim_hits.load(Ordering::SeqCst), 0);
    }
}
