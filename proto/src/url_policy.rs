//! The URL policy, the spec's "Sentinel": which URLs a browser may be sent to and which
//! addresses it may connect to, decided in this one module for every binary. The controller
//! checks `navigate` and `fetch` before any backend is called; the worker checks every request
//! its Chromium makes (its per-browser proxy) and every hop of its `fetch`.
//!
//! The policy itself is the contract's [`UrlPolicy`] message, so the configuration, the wire and
//! the checks share one type:
//!
//! - Only absolute `http` and `https` URLs, always. `javascript:`, `data:`, `file:`, relative and
//!   malformed URLs are bad input ([`Rule::NotWebUrl`]).
//! - `deny_hosts`: never these hosts. `allow_hosts`, when not empty: only these hosts. An entry
//!   `example.com` is that host exactly; `.example.com` is it and every subdomain. IP addresses
//!   may be listed in any spelling a URL accepts. The lists match the URL's host, not where it
//!   resolves to; an allow list narrows what is reachable and never lets an address through that
//!   hosted mode refuses.
//! - `hosted`: the browser belongs to a deployment with a network of its own, which it must not
//!   become a way into. Refused: names that only exist inside a network (`localhost`,
//!   `*.localhost`, `*.internal` with `metadata.google.internal`, `*.local`, `*.home.arpa`, names
//!   without a dot, which only the deployment's search domains resolve) and every address that is
//!   not public ([`UrlPolicy::check_ip`]: loopback, unspecified, RFC 1918, CGNAT, link-local
//!   with the cloud metadata address, IETF, documentation, benchmarking, multicast, broadcast,
//!   reserved; for IPv6 also ULA, site-local, Teredo, and the IPv4 address inside IPv4-mapped,
//!   -compatible, -translated, NAT64 and 6to4 addresses). A name is decided on every address it
//!   resolves to ([`UrlPolicy::resolve_checked`]), and the caller connects to exactly those
//!   addresses: no second lookup, so no DNS rebinding.
//! - `allow_addresses`: ranges (CIDR) hosted mode lets through all the same — the operator's
//!   escape hatch for a known internal service (a corporate proxy, a test server).
//!
//! IPv4 spellings (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`) need nothing here: the `url`
//! crate parses http(s) hosts as WHATWG does, as Chromium does, to `127.0.0.1`; the tests hold
//! it to that.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::time::Duration;

use url::{Host, Url};

pub use crate::v1::UrlPolicy;

/// How long a name may take to resolve before it counts as unresolvable.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What a refusal adds for every address or name hosted mode refuses.
const OWN_NETWORK: &str = "hosted browsers may not reach the deployment's own network";

/// The rule a [`Refusal`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Not an absolute http(s) URL: relative, malformed, or another scheme. Bad input, in any
    /// mode.
    NotWebUrl,
    /// The host is on `deny_hosts`.
    DeniedHost,
    /// `allow_hosts` is set and the host is not on it.
    NotAllowedHost,
    /// Hosted mode: a name that only exists inside a network.
    InternalName,
    /// Hosted mode: an address that is not public, given or resolved.
    InternalAddress,
    /// The name did not resolve, so where it leads cannot be checked (nor reached).
    Unresolved,
}

/// Why a URL, host or address was refused: a sentence for the model, naming the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub rule: Rule,
    reason: String,
}

impl Refusal {
    /// A URL that is not a web address is bad input; a name that leads nowhere cannot be
    /// opened now; anything else the policy refused is a destination this tenant may not
    /// reach.
    pub fn code(&self) -> crate::ErrorCode {
        match self.rule {
            Rule::NotWebUrl => crate::ErrorCode::InvalidArgument,
            Rule::Unresolved => crate::ErrorCode::FailedPrecondition,
            _ => crate::ErrorCode::PermissionDenied,
        }
    }

    fn new(rule: Rule, reason: impl Into<String>) -> Self {
        Self {
            rule,
            reason: reason.into(),
        }
    }

    /// Bad input rather than a refused destination: the URL is not a web address at all.
    pub fn is_bad_url(&self) -> bool {
        self.rule == Rule::NotWebUrl
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rule {
            // Not the policy's verdict: the name leads nowhere.
            Rule::Unresolved => f.write_str(&self.reason),
            _ => write!(f, "Refused by the URL policy: {}", self.reason),
        }
    }
}

impl std::error::Error for Refusal {}

/// A name lookup, so tests can stand in for DNS ([`SystemResolver`] is the real one).
pub trait Resolve: Send + Sync {
    /// The addresses `host` (a domain name) resolves to.
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>>;
}

/// The system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host, 0))
                .await?
                .map(|address| address.ip())
                .collect())
        })
    }
}

/// An address range in CIDR notation (`10.0.0.0/8`, `fd00::/8`; a bare address is itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressRange {
    network: IpAddr,
    prefix: u8,
}

impl AddressRange {
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address = address.trim_start_matches('[').trim_end_matches(']');
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("{text:?} is not an address range like 10.1.2.0/24"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {bits}"))?,
        };
        Ok(Self { network, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => in_v4(net, self.prefix, ip),
            (IpAddr::V6(net), IpAddr::V6(ip)) => in_v6(net, self.prefix, ip),
            _ => false,
        }
    }

    /// Whether every address of `other` is in this range.
    fn covers(&self, other: &AddressRange) -> bool {
        self.prefix <= other.prefix && self.contains(other.network)
    }
}

fn in_v4(network: Ipv4Addr, prefix: u8, ip: Ipv4Addr) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    u32::from(network) & mask == u32::from(ip) & mask
}

fn in_v6(network: Ipv6Addr, prefix: u8, ip: Ipv6Addr) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    u128::from(network) & mask == u128::from(ip) & mask
}

/// IPv4 addresses that are not public, first match wins (so the named metadata addresses come
/// before the ranges they sit in).
const V4_INTERNAL: &[([u8; 4], u8, &str)] = &[
    (
        [169, 254, 169, 254],
        32,
        "the cloud metadata address (AWS, GCP, Azure)",
    ),
    (
        [100, 100, 100, 200],
        32,
        "the cloud metadata address (Alibaba Cloud)",
    ),
    ([127, 0, 0, 0], 8, "a loopback address"),
    (
        [0, 0, 0, 0],
        8,
        "an unspecified (\"this host\") address, which reaches the machine itself",
    ),
    ([10, 0, 0, 0], 8, "a private address (RFC 1918)"),
    ([172, 16, 0, 0], 12, "a private address (RFC 1918)"),
    ([192, 168, 0, 0], 16, "a private address (RFC 1918)"),
    (
        [100, 64, 0, 0],
        10,
        "a shared address (carrier-grade NAT, RFC 6598)",
    ),
    ([169, 254, 0, 0], 16, "a link-local address"),
    (
        [192, 0, 0, 0],
        24,
        "an IETF protocol address (192.0.0.0/24, where Oracle Cloud's metadata lives)",
    ),
    ([192, 0, 2, 0], 24, "a documentation address (TEST-NET-1)"),
    (
        [198, 51, 100, 0],
        24,
        "a documentation address (TEST-NET-2)",
    ),
    ([203, 0, 113, 0], 24, "a documentation address (TEST-NET-3)"),
    (
        [198, 18, 0, 0],
        15,
        "a benchmarking address (198.18.0.0/15)",
    ),
    (
        [192, 88, 99, 0],
        24,
        "a 6to4 relay address (192.88.99.0/24)",
    ),
    ([255, 255, 255, 255], 32, "the broadcast address"),
    ([224, 0, 0, 0], 4, "a multicast address"),
    ([240, 0, 0, 0], 4, "a reserved address (240.0.0.0/4)"),
];

/// IPv6 addresses that are not public, after the ones that carry an IPv4 address
/// ([`embedded_v4`]) have been decided on that address.
const V6_INTERNAL: &[([u16; 8], u8, &str)] = &[
    ([0, 0, 0, 0, 0, 0, 0, 0], 128, "the unspecified address"),
    ([0, 0, 0, 0, 0, 0, 0, 1], 128, "the loopback address"),
    (
        [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
        128,
        "the cloud metadata address (AWS)",
    ),
    (
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "a local-use NAT64 address (64:ff9b:1::/48)",
    ),
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "a discard-only address"),
    (
        [0x2001, 0x2, 0, 0, 0, 0, 0, 0],
        48,
        "a benchmarking address (2001:2::/48)",
    ),
    (
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "a documentation address (2001:db8::/32)",
    ),
    (
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        32,
        "a Teredo tunnel address (2001::/32)",
    ),
    (
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "a unique local address (IPv6 ULA, fc00::/7)",
    ),
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "a link-local address"),
    (
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        "a site-local address (fec0::/10)",
    ),
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "a multicast address"),
];

/// The IPv4 address an IPv6 address carries, and how: a connection to it reaches that IPv4
/// address (dual-stack sockets, NAT64 gateways, 6to4 relays), so it is decided on that one.
fn embedded_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    let s = ip.segments();
    let [a, b, c, d] = ip.octets()[12..] else {
        unreachable!("16 octets")
    };
    let tail = Ipv4Addr::new(a, b, c, d);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some((tail, "an IPv4-mapped address")),
        [0, 0, 0, 0, 0xffff, 0, _, _] => Some((tail, "an IPv4-translated address")),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some((tail, "a NAT64 address")),
        // :: and ::1 are IPv6's own; the rest of ::/96 is the old IPv4-compatible form.
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => None,
        [0, 0, 0, 0, 0, 0, _, _] => Some((tail, "an IPv4-compatible address")),
        [0x2002, high, low, ..] => {
            let [a, b] = high.to_be_bytes();
            let [c, d] = low.to_be_bytes();
            Some((Ipv4Addr::new(a, b, c, d), "a 6to4 address"))
        }
        _ => None,
    }
}

/// Hosted mode's names that only exist inside a network, and why.
fn internal_name(name: &str) -> Option<&'static str> {
    let under = |suffix: &str| name == suffix || name.ends_with(&format!(".{suffix}"));
    if name == "metadata.google.internal" || name == "metadata" {
        Some("the cloud metadata service's name")
    } else if under("localhost") {
        Some("a name of the machine itself (localhost)")
    } else if under("internal") {
        Some("an internal name (.internal is reserved for private networks)")
    } else if under("local") {
        Some("a local-network name (.local)")
    } else if under("home.arpa") {
        Some("a home-network name (.home.arpa)")
    } else if !name.contains('.') {
        Some("a name without a dot, which only the deployment's own search domains resolve")
    } else {
        None
    }
}

/// A host as the lists compare it: lowercase, no trailing dot, IPv6 without brackets.
fn host_key(host: &Host<&str>) -> String {
    match host {
        Host::Domain(name) => name.trim_end_matches('.').to_ascii_lowercase(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => ip.to_string(),
    }
}

/// A host list entry: whether it covers subdomains (a leading `.`), and its host as
/// [`host_key`] writes it — parsed as a URL's host is, so `0x7f.1` is `127.0.0.1`.
fn parse_entry(entry: &str) -> Result<(bool, String), String> {
    let trimmed = entry.trim();
    let (subdomains, rest) = match trimmed.strip_prefix('.') {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    let bad = || {
        format!(
            "{entry:?} is not a host: write example.com, .example.com (with its subdomains) \
             or an IP address, without scheme, port or path"
        )
    };
    if rest.is_empty() || rest.contains(['/', '@', '*', ' ', '?', '#']) {
        return Err(bad());
    }
    let unbracketed = rest.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = unbracketed.parse::<IpAddr>() {
        return Ok((subdomains, ip.to_string()));
    }
    match Host::parse(rest) {
        Ok(host) => Ok((subdomains, host_key(&borrowed(&host)))),
        Err(_) => Err(bad()),
    }
}

fn borrowed(host: &Host<String>) -> Host<&str> {
    match host {
        Host::Domain(name) => Host::Domain(name.as_str()),
        Host::Ipv4(ip) => Host::Ipv4(*ip),
        Host::Ipv6(ip) => Host::Ipv6(*ip),
    }
}

fn listed(entries: &[String], host: &str) -> bool {
    entries.iter().any(|entry| match parse_entry(entry) {
        Ok((true, name)) => host == name || host.ends_with(&format!(".{name}")),
        Ok((false, name)) => host == name,
        // Refused when the configuration is read; a bad entry from elsewhere matches nothing.
        Err(_) => false,
    })
}

impl UrlPolicy {
    /// Hosted mode with nothing else set: what a deployment serving many users runs.
    pub fn hosted() -> Self {
        Self {
            hosted: true,
            ..Self::default()
        }
    }

    /// Checks the lists and ranges, naming the first bad entry.
    pub fn validate(&self) -> Result<(), String> {
        for (name, entries) in [
            ("allow_hosts", &self.allow_hosts),
            ("deny_hosts", &self.deny_hosts),
        ] {
            for entry in entries {
                parse_entry(entry).map_err(|e| format!("{name}: {e}"))?;
            }
        }
        for range in &self.allow_addresses {
            AddressRange::parse(range).map_err(|e| format!("allow_addresses: {e}"))?;
        }
        Ok(())
    }

    /// The URL, parsed, when the browser may be sent to it. In hosted mode an address given
    /// as the host is checked here; a name is checked where it resolves
    /// ([`UrlPolicy::resolve_checked`]).
    pub fn check_url(&self, raw: &str) -> Result<Url, Refusal> {
        let trimmed = raw.trim();
        if trimmed.len() > nanomuse_common::limits::URL_MAX_BYTES {
            return Err(Refusal::new(
                Rule::NotWebUrl,
                format!(
                    "the URL is {} bytes long; a URL may have at most {} bytes (2 MiB, the \
                     browser's own limit).",
                    trimmed.len(),
                    nanomuse_common::limits::URL_MAX_BYTES
                ),
            ));
        }
        let quoted = nanomuse_common::limits::excerpt(trimmed);
        let meant = with_scheme(trimmed);
        let url = Url::parse(trimmed).map_err(|e| {
            let like = meant.as_deref().unwrap_or("https://example.com/");
            Refusal::new(
                Rule::NotWebUrl,
                format!("{quoted:?} is not an absolute URL ({e}); give one like {like}."),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            // `localhost:3000/x` parses as a URL of the scheme `localhost`.
            let why = match meant {
                Some(like) => {
                    format!("{quoted:?} is a host without a scheme; give one like {like}.")
                }
                None => format!(
                    "{}: URLs are not allowed; only http and https.",
                    url.scheme()
                ),
            };
            return Err(Refusal::new(Rule::NotWebUrl, why));
        }
        let host = url
            .host()
            .ok_or_else(|| Refusal::new(Rule::NotWebUrl, format!("{quoted:?} names no host.")))?;
        self.check_host(&host)?;
        Ok(url)
    }

    /// The host lists, and in hosted mode the internal names and a literal address.
    pub fn check_host(&self, host: &Host<&str>) -> Result<(), Refusal> {
        let key = host_key(host);
        if listed(&self.deny_hosts, &key) {
            return Err(Refusal::new(
                Rule::DeniedHost,
                format!("{key} is on the deny list (deny_hosts)."),
            ));
        }
        if !self.allow_hosts.is_empty() && !listed(&self.allow_hosts, &key) {
            return Err(Refusal::new(
                Rule::NotAllowedHost,
                format!(
                    "{key} is not on the allow list (allow_hosts); only these hosts may be \
                     opened: {}.",
                    self.allow_hosts.join(", ")
                ),
            ));
        }
        if !self.hosted {
            return Ok(());
        }
        match host {
            Host::Domain(_) => match internal_name(&key) {
                Some(why) => Err(Refusal::new(
                    Rule::InternalName,
                    format!("{key} is {why}; {OWN_NETWORK}."),
                )),
                None => Ok(()),
            },
            Host::Ipv4(ip) => self.check_ip(IpAddr::V4(*ip)),
            Host::Ipv6(ip) => self.check_ip(IpAddr::V6(*ip)),
        }
    }

    /// In hosted mode, refuses an address that is not public (unless `allow_addresses` has it).
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refusal> {
        match self.internal_kind(ip) {
            Some(kind) => Err(Refusal::new(
                Rule::InternalAddress,
                format!("{ip} is {kind}; {OWN_NETWORK}."),
            )),
            None => Ok(()),
        }
    }

    fn allows_address(&self, ip: IpAddr) -> bool {
        self.allow_addresses
            .iter()
            .filter_map(|range| AddressRange::parse(range).ok())
            .any(|range| range.contains(ip))
    }

    /// What kind of non-public address `ip` is, when hosted mode refuses it.
    fn internal_kind(&self, ip: IpAddr) -> Option<String> {
        if !self.hosted || self.allows_address(ip) {
            return None;
        }
        match ip {
            IpAddr::V4(v4) => V4_INTERNAL
                .iter()
                .find(|(net, prefix, _)| in_v4(Ipv4Addr::from(*net), *prefix, v4))
                .map(|(_, _, kind)| kind.to_string()),
            IpAddr::V6(v6) => match embedded_v4(v6) {
                Some((v4, form)) => self
                    .internal_kind(IpAddr::V4(v4))
                    .map(|kind| format!("{form} of {v4}, {kind}")),
                None => V6_INTERNAL
                    .iter()
                    .find(|(net, prefix, _)| in_v6(Ipv6Addr::from(*net), *prefix, v6))
                    .map(|(_, _, kind)| kind.to_string()),
            },
        }
    }

    /// The addresses to connect to for `host` (a name, an address, or a bracketed IPv6
    /// address) and `port`, when the policy lets the browser reach it: the host is checked,
    /// then — a name — resolved once, and refused when ANY address it resolves to is refused.
    /// Connect to exactly these: a second lookup could answer differently (DNS rebinding).
    pub async fn resolve_checked(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
        self.resolve_checked_with(&SystemResolver, host, port).await
    }

    /// [`UrlPolicy::resolve_checked`] with a given resolver.
    pub async fn resolve_checked_with(
        &self,
        resolver: &dyn Resolve,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, Refusal> {
        let parsed = parse_host(host)?;
        self.check_host(&borrowed(&parsed))?;
        let name = match parsed {
            Host::Ipv4(ip) => return Ok(vec![SocketAddr::new(IpAddr::V4(ip), port)]),
            Host::Ipv6(ip) => return Ok(vec![SocketAddr::new(IpAddr::V6(ip), port)]),
            Host::Domain(name) => name,
        };
        let unresolved = |why: String| {
            Refusal::new(
                Rule::Unresolved,
                format!("{name} could not be resolved ({why})."),
            )
        };
        let addresses = tokio::time::timeout(LOOKUP_TIMEOUT, resolver.lookup(&name))
            .await
            .map_err(|_| unresolved(format!("no answer within {} s", LOOKUP_TIMEOUT.as_secs())))?
            .map_err(|e| unresolved(e.to_string()))?;
        if addresses.is_empty() {
            return Err(unresolved("no addresses".into()));
        }
        let mut unique = BTreeSet::new();
        for ip in addresses {
            if let Some(kind) = self.internal_kind(ip) {
                return Err(Refusal::new(
                    Rule::InternalAddress,
                    format!("{name} resolves to {ip}, {kind}; {OWN_NETWORK}."),
                ));
            }
            unique.insert(ip);
        }
        Ok(unique
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }

    /// This policy (a request's) made no looser than `floor` (a backend's own): hosted when
    /// either is, every deny list, and — under a hosted floor — only the escape hatches the
    /// floor has too. The floor has no allow list (that belongs to the controller's tenants).
    pub fn under_floor(&self, floor: &UrlPolicy) -> UrlPolicy {
        let mut deny_hosts = self.deny_hosts.clone();
        deny_hosts.extend(floor.deny_hosts.iter().cloned());
        let allow_addresses = if !floor.hosted {
            self.allow_addresses.clone()
        } else if !self.hosted {
            floor.allow_addresses.clone()
        } else {
            let floor_ranges: Vec<AddressRange> = floor
                .allow_addresses
                .iter()
                .filter_map(|r| AddressRange::parse(r).ok())
                .collect();
            self.allow_addresses
                .iter()
                .filter(|r| {
                    AddressRange::parse(r)
                        .is_ok_and(|range| floor_ranges.iter().any(|f| f.covers(&range)))
                })
                .cloned()
                .collect()
        };
        UrlPolicy {
            hosted: self.hosted || floor.hosted,
            allow_hosts: self.allow_hosts.clone(),
            deny_hosts,
            allow_addresses,
        }
    }
}

/// A host as a proxy request or a config names it: a name, an address, a bracketed IPv6
/// address; parsed as a URL's host is.
fn parse_host(host: &str) -> Result<Host<String>, Refusal> {
    let unbracketed = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(IpAddr::V6(ip)) = unbracketed.parse::<IpAddr>() {
        return Ok(Host::Ipv6(ip));
    }
    Host::parse(host).map_err(|e| {
        Refusal::new(
            Rule::NotWebUrl,
            format!("{host:?} is not a host name ({e})."),
        )
    })
}

/// What `typed` would be with the scheme an address bar gives a host typed without one
/// (`example.com/docs`: https; `localhost:3000`, `127.0.0.1:8080/x`: http), for a refusal to
/// suggest; `None` when it is not a host without a scheme.
fn with_scheme(typed: &str) -> Option<String> {
    if typed.contains("://") {
        return None;
    }
    let authority = typed.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        Some(_) => return None,
        None => authority,
    };
    let local = host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().is_ok();
    let named = host.contains('.')
        && !host.starts_with('.')
        && !host.ends_with('.')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || !b.is_ascii());
    match (local, named) {
        (true, _) => Some(format!("http://{typed}")),
        (false, true) => Some(format!("https://{typed}")),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn hosted() -> UrlPolicy {
        UrlPolicy::hosted()
    }

    fn refused(policy: &UrlPolicy, url: &str) -> Refusal {
        policy
            .check_url(url)
            .expect_err(&format!("{url} should be refused"))
    }

    #[test]
    fn only_absolute_http_and_https_urls_in_any_mode() {
        for policy in [UrlPolicy::default(), hosted()] {
            for url in [
                "javascript:alert(1)",
                "data:text/html,x",
                "file:///etc/passwd",
                "ftp://x/",
                "ws://example.com/",
                "about:blank",
                "chrome://settings",
                "view-source:https://example.com/",
                "blob:https://example.com/1",
                "/relative",
                "example.com",
                "",
                "http://",
                "http://exa mple.com/",
                "https://[::1/",
            ] {
                let refusal = refused(&policy, url);
                assert_eq!(refusal.rule, Rule::NotWebUrl, "{url}: {refusal}");
                assert!(refusal.is_bad_url());
                assert!(
                    refusal
                        .to_string()
                        .starts_with("Refused by the URL policy: "),
                    "{refusal}"
                );
            }
            assert!(
                refused(&policy, "javascript:alert(1)")
                    .to_string()
                    .contains("javascript: URLs are not allowed; only http and https")
            );
            assert!(
                refused(&policy, "/relative")
                    .to_string()
                    .contains("not an absolute URL")
            );
            // A host typed without a scheme: the refusal says the URL that was meant.
            for (typed, says) in [
                (
                    "example.com/page",
                    "\"example.com/page\" is not an absolute URL (relative URL without a \
                     base); give one like https://example.com/page.",
                ),
                (
                    "localhost:8111/admin",
                    "\"localhost:8111/admin\" is a host without a scheme; give one like \
                     http://localhost:8111/admin.",
                ),
                (
                    "127.0.0.1:8111/admin",
                    "give one like http://127.0.0.1:8111/admin.",
                ),
                ("not a url", "give one like https://example.com/."),
                ("mailto:a@example.com", "mailto: URLs are not allowed"),
            ] {
                let refusal = refused(&policy, typed).to_string();
                assert!(refusal.contains(says), "{typed}: {refusal}");
            }
            assert_eq!(
                policy
                    .check_url("  HTTPS://Example.COM/a?b#c ")
                    .unwrap()
                    .as_str(),
                "https://example.com/a?b#c"
            );
        }
    }

    #[test]
    fn without_hosted_mode_internal_addresses_are_allowed() {
        let policy = UrlPolicy::default();
        for url in [
            "http://127.0.0.1:8000/",
            "http://localhost/",
            "http://10.0.0.1/",
            "http://169.254.169.254/",
            "http://[::1]/",
            "http://metadata.google.internal/",
        ] {
            policy.check_url(url).unwrap();
        }
        assert!(policy.check_ip("10.0.0.1".parse().unwrap()).is_ok());
    }

    /// Every spelling of loopback a URL parser accepts reaches the check as 127.0.0.1 (the
    /// `url` crate parses hosts as WHATWG and Chromium do).
    #[test]
    fn ipv4_spellings_are_normalised_before_the_check() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://0x7f.1/",
            "http://0x7f000001/",
            "http://017700000001/",
            "http://127.1/",
            "http://127.0.1/",
            "http://127.0.0.1./",
            "http://127.0.0.1%2e/",
            "http://%31%32%37.0.0.1/",
            "http://\u{ff11}\u{ff12}\u{ff17}.0.0.1/",
            "http://\u{2460}\u{2461}\u{2466}.0.0.1/",
            "http://user:pass@127.0.0.1:8080/",
            "http:/\\127.0.0.1/",
            "http:127.0.0.1/",
            "HTTP://127.0.0.1/",
            "https://127.0.0.1:443/",
        ] {
            let url_host = Url::parse(url).unwrap().host_str().unwrap().to_string();
            assert_eq!(url_host, "127.0.0.1", "{url}");
            let refusal = refused(&hosted(), url);
            assert_eq!(refusal.rule, Rule::InternalAddress, "{url}");
            assert_eq!(
                refusal.to_string(),
                "Refused by the URL policy: 127.0.0.1 is a loopback address; hosted browsers \
                 may not reach the deployment's own network.",
                "{url}"
            );
        }
    }

    #[test]
    fn hosted_mode_refuses_every_non_public_ipv4_address_naming_the_rule() {
        let cases = [
            ("127.255.255.254", "a loopback address"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("10.0.0.5", "a private address (RFC 1918)"),
            ("10.255.255.255", "RFC 1918"),
            ("172.16.0.1", "RFC 1918"),
            ("172.31.255.255", "RFC 1918"),
            ("192.168.1.1", "RFC 1918"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("100.127.255.255", "carrier-grade NAT"),
            ("169.254.169.254", "the cloud metadata address"),
            (
                "100.100.100.200",
                "the cloud metadata address (Alibaba Cloud)",
            ),
            ("169.254.0.1", "a link-local address"),
            ("192.0.0.192", "IETF protocol"),
            ("192.0.2.2", "documentation"),
            ("198.51.100.1", "documentation"),
            ("203.0.113.9", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("192.88.99.1", "6to4 relay"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "the broadcast address"),
        ];
        for (ip, kind) in cases {
            let refusal = hosted().check_ip(ip.parse().unwrap()).unwrap_err();
            assert_eq!(refusal.rule, Rule::InternalAddress);
            let text = refusal.to_string();
            assert!(text.contains(ip) && text.contains(kind), "{ip}: {text}");
            assert!(text.ends_with("hosted browsers may not reach the deployment's own network."));
            let via_url = refused(&hosted(), &format!("http://{ip}:8080/x"));
            assert_eq!(via_url, refusal);
        }
        assert_eq!(
            refused(&hosted(), "http://10.0.0.5/").to_string(),
            "Refused by the URL policy: 10.0.0.5 is a private address (RFC 1918); hosted \
             browsers may not reach the deployment's own network."
        );
    }

    #[test]
    fn hosted_mode_lets_public_addresses_through_including_the_edges_of_the_ranges() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "128.0.0.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            hosted()
                .check_ip(ip.parse().unwrap())
                .unwrap_or_else(|e| panic!("{ip}: {e}"));
        }
        hosted().check_url("https://93.184.215.14/").unwrap();
        hosted().check_url("https://[2606:4700::1]/").unwrap();
        hosted().check_url("https://example.com/").unwrap();
    }

    #[test]
    fn hosted_mode_refuses_every_non_public_ipv6_address() {
        let cases = [
            ("::1", "the loopback address"),
            ("::", "the unspecified address"),
            ("fd00::1", "a unique local address (IPv6 ULA"),
            ("fc00::1", "ULA"),
            ("fd00:ec2::254", "the cloud metadata address (AWS)"),
            ("fe80::1", "a link-local address"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("2001::1", "Teredo"),
            ("2001:2::1", "benchmarking"),
            ("100::1", "discard-only"),
            ("64:ff9b:1::a00:1", "local-use NAT64"),
        ];
        for (ip, kind) in cases {
            let text = hosted()
                .check_ip(ip.parse().unwrap())
                .unwrap_err()
                .to_string();
            assert!(text.contains(kind), "{ip}: {text}");
            let via_url = refused(&hosted(), &format!("http://[{ip}]:81/"));
            assert_eq!(via_url.rule, Rule::InternalAddress, "{ip}");
        }
    }

    /// An IPv6 address that carries an IPv4 address reaches that address, so it is decided on
    /// it, and the refusal says so.
    #[test]
    fn ipv6_forms_of_ipv4_addresses_are_decided_on_the_ipv4_address() {
        let cases = [
            (
                "http://[::ffff:127.0.0.1]/",
                "IPv4-mapped",
                "127.0.0.1, a loopback",
            ),
            (
                "http://[::ffff:7f00:1]/",
                "IPv4-mapped",
                "127.0.0.1, a loopback",
            ),
            (
                "http://[0:0:0:0:0:ffff:127.0.0.1]/",
                "IPv4-mapped",
                "127.0.0.1",
            ),
            (
                "http://[::ffff:a9fe:a9fe]/",
                "IPv4-mapped",
                "169.254.169.254, the cloud metadata",
            ),
            ("http://[::127.0.0.1]/", "IPv4-compatible", "127.0.0.1"),
            (
                "http://[::a00:1]/",
                "IPv4-compatible",
                "10.0.0.1, a private",
            ),
            ("http://[::ffff:0:a00:1]/", "IPv4-translated", "10.0.0.1"),
            ("http://[64:ff9b::127.0.0.1]/", "NAT64", "127.0.0.1"),
            ("http://[64:ff9b::a9fe:a9fe]/", "NAT64", "169.254.169.254"),
            ("http://[2002:7f00:1::]/", "6to4", "127.0.0.1"),
            ("http://[2002:c0a8:101::1]/", "6to4", "192.168.1.1"),
        ];
        for (url, form, inner) in cases {
            let text = refused(&hosted(), url).to_string();
            assert!(text.contains(form) && text.contains(inner), "{url}: {text}");
        }
    }

    #[test]
    fn hosted_mode_refuses_internal_names() {
        for (host, why) in [
            ("localhost", "localhost"),
            ("LOCALHOST.", "localhost"),
            ("app.localhost", "localhost"),
            (
                "metadata.google.internal",
                "the cloud metadata service's name",
            ),
            ("metadata", "the cloud metadata service's name"),
            ("db.prod.internal", ".internal is reserved"),
            ("printer.local", ".local"),
            ("nas.home.arpa", ".home.arpa"),
            ("intranet", "without a dot"),
        ] {
            let refusal = refused(&hosted(), &format!("http://{host}/"));
            assert_eq!(refusal.rule, Rule::InternalName, "{host}");
            assert!(refusal.to_string().contains(why), "{host}: {refusal}");
        }
        assert_eq!(
            refused(
                &hosted(),
                "http://metadata.google.internal/computeMetadata/v1/"
            )
            .to_string(),
            "Refused by the URL policy: metadata.google.internal is the cloud metadata \
             service's name; hosted browsers may not reach the deployment's own network."
        );
        // Names that merely look alike are public.
        for host in [
            "localhost.example.com",
            "internal.example.com",
            "mylocal.dev",
        ] {
            hosted().check_url(&format!("https://{host}/")).unwrap();
        }
    }

    #[test]
    fn host_lists_match_exactly_or_with_subdomains_after_a_dot() {
        let policy = UrlPolicy {
            allow_hosts: vec!["example.com".into(), ".docs.rs".into(), "10.1.2.3".into()],
            deny_hosts: vec!["evil.docs.rs".into(), "0x7f.1".into()],
            ..UrlPolicy::default()
        };
        policy.validate().unwrap();
        for url in [
            "https://example.com/",
            "https://EXAMPLE.com./x",
            "https://docs.rs/",
            "https://a.b.docs.rs/",
            "http://10.1.2.3/",
            "http://0x0a010203/",
        ] {
            policy
                .check_url(url)
                .unwrap_or_else(|e| panic!("{url}: {e}"));
        }
        for (url, rule) in [
            ("https://www.example.com/", Rule::NotAllowedHost),
            ("https://notexample.com/", Rule::NotAllowedHost),
            ("https://xdocs.rs/", Rule::NotAllowedHost),
            ("https://evil.docs.rs/", Rule::DeniedHost),
            ("http://127.0.0.1/", Rule::DeniedHost),
        ] {
            assert_eq!(refused(&policy, url).rule, rule, "{url}");
        }
        assert_eq!(
            refused(&policy, "https://www.example.com/").to_string(),
            "Refused by the URL policy: www.example.com is not on the allow list \
             (allow_hosts); only these hosts may be opened: example.com, .docs.rs, 10.1.2.3."
        );
        assert_eq!(
            refused(&policy, "https://evil.docs.rs/").to_string(),
            "Refused by the URL policy: evil.docs.rs is on the deny list (deny_hosts)."
        );
        let v6 = UrlPolicy {
            deny_hosts: vec!["::1".into(), "[fd00::7]".into()],
            ..UrlPolicy::default()
        };
        assert_eq!(refused(&v6, "http://[0::1]/").rule, Rule::DeniedHost);
        assert_eq!(refused(&v6, "http://[fd00:0::7]/").rule, Rule::DeniedHost);
    }

    /// An allow list narrows; it never lets through what hosted mode refuses.
    #[test]
    fn an_allow_list_does_not_open_internal_addresses() {
        let policy = UrlPolicy {
            hosted: true,
            allow_hosts: vec!["127.0.0.1".into(), "localhost".into()],
            ..UrlPolicy::default()
        };
        assert_eq!(
            refused(&policy, "http://127.0.0.1/").rule,
            Rule::InternalAddress
        );
        assert_eq!(
            refused(&policy, "http://localhost/").rule,
            Rule::InternalName
        );
    }

    #[test]
    fn allow_addresses_is_an_escape_hatch_for_exactly_its_ranges() {
        let policy = UrlPolicy {
            hosted: true,
            allow_addresses: vec!["127.0.0.2/32".into(), "10.9.0.0/16".into()],
            ..UrlPolicy::default()
        };
        policy.validate().unwrap();
        for url in [
            "http://127.0.0.2:8080/",
            "http://10.9.255.1/",
            "http://[::ffff:127.0.0.2]/",
        ] {
            policy
                .check_url(url)
                .unwrap_or_else(|e| panic!("{url}: {e}"));
        }
        for url in [
            "http://127.0.0.1/",
            "http://127.0.0.3/",
            "http://10.10.0.1/",
        ] {
            assert_eq!(refused(&policy, url).rule, Rule::InternalAddress, "{url}");
        }
        // Not for names: they are refused by name, not by address.
        assert_eq!(
            refused(&policy, "http://localhost/").rule,
            Rule::InternalName
        );
    }

    #[test]
    fn bad_configuration_entries_are_named() {
        for (policy, needle) in [
            (
                UrlPolicy {
                    allow_hosts: vec!["https://example.com".into()],
                    ..UrlPolicy::default()
                },
                "allow_hosts: \"https://example.com\" is not a host",
            ),
            (
                UrlPolicy {
                    deny_hosts: vec!["*.example.com".into()],
                    ..UrlPolicy::default()
                },
                "deny_hosts",
            ),
            (
                UrlPolicy {
                    deny_hosts: vec!["".into()],
                    ..UrlPolicy::default()
                },
                "deny_hosts",
            ),
            (
                UrlPolicy {
                    allow_addresses: vec!["10.0.0.0/33".into()],
                    ..UrlPolicy::default()
                },
                "allow_addresses: \"10.0.0.0/33\": the prefix length must be 0 to 32",
            ),
            (
                UrlPolicy {
                    allow_addresses: vec!["intranet".into()],
                    ..UrlPolicy::default()
                },
                "allow_addresses: \"intranet\" is not an address range",
            ),
        ] {
            let error = policy.validate().unwrap_err();
            assert!(error.contains(needle), "{error}");
        }
    }

    #[test]
    fn address_ranges_parse_and_contain() {
        let range = AddressRange::parse("10.1.2.3/8").unwrap();
        assert!(range.contains("10.200.0.1".parse().unwrap()));
        assert!(!range.contains("11.0.0.1".parse().unwrap()));
        assert!(!range.contains("::ffff:10.0.0.1".parse().unwrap()));
        let all = AddressRange::parse("0.0.0.0/0").unwrap();
        assert!(all.contains("255.1.2.3".parse().unwrap()));
        let one = AddressRange::parse("[fd00::1]").unwrap();
        assert!(one.contains("fd00::1".parse().unwrap()));
        assert!(!one.contains("fd00::2".parse().unwrap()));
        assert!(AddressRange::parse("fd00::/8").unwrap().covers(&one));
        assert!(!one.covers(&AddressRange::parse("fd00::/8").unwrap()));
    }

    /// A resolver that answers from a script and counts its lookups.
    struct Scripted {
        answers: Mutex<Vec<Vec<IpAddr>>>,
        lookups: Mutex<Vec<String>>,
    }

    impl Scripted {
        fn new(answers: &[&[&str]]) -> Self {
            Self {
                answers: Mutex::new(
                    answers
                        .iter()
                        .rev()
                        .map(|ips| ips.iter().map(|ip| ip.parse().unwrap()).collect())
                        .collect(),
                ),
                lookups: Mutex::default(),
            }
        }
    }

    impl Resolve for Scripted {
        fn lookup<'a>(
            &'a self,
            host: &'a str,
        ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
            self.lookups.lock().unwrap().push(host.to_string());
            let answer = self.answers.lock().unwrap().pop();
            Box::pin(async move {
                answer.ok_or_else(|| std::io::Error::other("no such host (scripted)"))
            })
        }
    }

    #[tokio::test]
    async fn a_name_is_refused_when_any_address_it_resolves_to_is_refused() {
        let resolver = Scripted::new(&[
            &["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
            &["93.184.215.14", "10.0.0.7"],
            &["::ffff:169.254.169.254"],
        ]);
        let addresses = hosted()
            .resolve_checked_with(&resolver, "example.com", 443)
            .await
            .unwrap();
        assert_eq!(
            addresses,
            vec![
                "93.184.215.14:443".parse().unwrap(),
                "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443"
                    .parse()
                    .unwrap()
            ]
        );
        let refusal = hosted()
            .resolve_checked_with(&resolver, "rebind.example.com", 80)
            .await
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "Refused by the URL policy: rebind.example.com resolves to 10.0.0.7, a private \
             address (RFC 1918); hosted browsers may not reach the deployment's own network."
        );
        let refusal = hosted()
            .resolve_checked_with(&resolver, "127.0.0.1.nip.io", 80)
            .await
            .unwrap_err();
        assert!(refusal.to_string().contains("cloud metadata"), "{refusal}");
        let unresolved = hosted()
            .resolve_checked_with(&resolver, "gone.example.com", 80)
            .await
            .unwrap_err();
        assert_eq!(unresolved.rule, Rule::Unresolved);
        assert!(
            unresolved
                .to_string()
                .starts_with("gone.example.com could not be resolved"),
            "{unresolved}"
        );
        assert_eq!(resolver.lookups.lock().unwrap().len(), 4);
    }

    #[tokio::test]
    async fn addresses_and_refused_names_are_not_looked_up() {
        let resolver = Scripted::new(&[]);
        let policy = UrlPolicy {
            hosted: true,
            allow_addresses: vec!["127.0.0.2/32".into()],
            ..UrlPolicy::default()
        };
        assert_eq!(
            policy
                .resolve_checked_with(&resolver, "127.0.0.2", 8080)
                .await
                .unwrap(),
            vec!["127.0.0.2:8080".parse().unwrap()]
        );
        assert_eq!(
            policy
                .resolve_checked_with(&resolver, "[::1]", 80)
                .await
                .unwrap_err()
                .rule,
            Rule::InternalAddress
        );
        assert_eq!(
            policy
                .resolve_checked_with(&resolver, "metadata.google.internal", 80)
                .await
                .unwrap_err()
                .rule,
            Rule::InternalName
        );
        assert!(resolver.lookups.lock().unwrap().is_empty());
        // Without hosted mode a name still resolves (the caller connects to the answer) but
        // its addresses are not judged.
        let resolver = Scripted::new(&[&["127.0.0.1"]]);
        let addresses = UrlPolicy::default()
            .resolve_checked_with(&resolver, "localhost", 80)
            .await
            .unwrap();
        assert_eq!(addresses, vec!["127.0.0.1:80".parse().unwrap()]);
    }

    #[test]
    fn a_request_cannot_loosen_the_floor() {
        let floor = UrlPolicy {
            hosted: true,
            deny_hosts: vec!["blocked.example".into()],
            allow_addresses: vec!["10.9.0.0/16".into()],
            ..UrlPolicy::default()
        };
        // A request that is not hosted is hosted under a hosted floor, with the floor's hatches.
        let loose = UrlPolicy {
            allow_hosts: vec![".example".into()],
            ..UrlPolicy::default()
        };
        let effective = loose.under_floor(&floor);
        assert!(effective.hosted);
        assert_eq!(effective.allow_hosts, vec![".example".to_string()]);
        assert_eq!(effective.allow_addresses, vec!["10.9.0.0/16".to_string()]);
        assert_eq!(
            refused(&effective, "http://blocked.example/").rule,
            Rule::DeniedHost
        );
        // A hosted request keeps only the hatches the floor also has.
        let widening = UrlPolicy {
            hosted: true,
            allow_addresses: vec!["0.0.0.0/0".into(), "10.9.1.0/24".into()],
            ..UrlPolicy::default()
        };
        let effective = widening.under_floor(&floor);
        assert_eq!(effective.allow_addresses, vec!["10.9.1.0/24".to_string()]);
        assert_eq!(
            refused(&effective, "http://10.0.0.1/").rule,
            Rule::InternalAddress
        );
        effective.check_url("http://10.9.1.5/").unwrap();
        // A floor that is not hosted leaves the request as it is, deny lists added.
        let open_floor = UrlPolicy {
            deny_hosts: vec!["x.example".into()],
            ..UrlPolicy::default()
        };
        let effective = widening.under_floor(&open_floor);
        assert!(effective.hosted);
        assert_eq!(effective.allow_addresses, widening.allow_addresses);
        assert_eq!(effective.deny_hosts, vec!["x.example".to_string()]);
    }

    #[test]
    fn the_policy_reads_from_toml() {
        let policy: UrlPolicy = toml::from_str(
            "hosted = true\ndeny_hosts = [\"a.example\"]\nallow_addresses = [\"10.0.0.0/8\"]\n",
        )
        .unwrap();
        assert!(policy.hosted);
        assert_eq!(policy.deny_hosts, vec!["a.example".to_string()]);
        assert!(toml::from_str::<UrlPolicy>("hostd = true\n").is_err());
    }
}
