//! The guards of a local server (OWASP's and the MCP spec's advice): a Host allowlist
//! against DNS rebinding, an Origin check on every state-changing request and WebSocket
//! upgrade, and the token, by header or by the login cookie a one-time URL sets.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::ApiError;

/// The start of the login cookie's name; the rest is this server's own (see
/// [`Guard::cookie_name`]).
pub(crate) const COOKIE_PREFIX: &str = "toolwire_login_";

/// Who may talk to the server.
#[derive(Debug, Clone)]
pub struct Guard {
    /// `Host` header values accepted (`127.0.0.1:7777`, `localhost:7777`, ...).
    pub hosts: Vec<String>,
    /// `Origin` values accepted on state-changing requests.
    pub origins: Vec<String>,
    /// The API token; when set, every API request must carry it (header or login cookie).
    pub token: Option<String>,
    /// The login cookie is `Secure`: set when the server is served under an https origin.
    pub secure_cookies: bool,
}

impl Guard {
    /// The names a server bound to `addr` is reached by: its own address, and the
    /// loopback names when it is on loopback. On an unspecified address (`0.0.0.0`, `[::]`)
    /// it is reached by every name of this machine: the loopback names, the host name
    /// (and `NAME.local`, its mDNS name) and the addresses of its interfaces, as far as
    /// the system tells them without asking DNS (see `machine_names`). Any other name (a
    /// DNS name, a reverse proxy's) is the public origin's to add.
    pub fn for_addr(addr: std::net::SocketAddr, token: Option<String>) -> Self {
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() || addr.ip().is_unspecified() {
            for name in ["127.0.0.1", "localhost", "[::1]"] {
                hosts.push(format!("{name}:{port}"));
            }
        }
        if addr.ip().is_unspecified() {
            // `0.0.0.0` takes IPv4 only; `[::]` takes both on the usual dual-stack socket.
            let names = machine_names(
                read("/proc/sys/kernel/hostname").or_else(|| read("/etc/hostname")),
                read("/proc/net/fib_trie").as_deref(),
                read("/proc/net/if_inet6")
                    .as_deref()
                    .filter(|_| addr.is_ipv6()),
            );
            hosts.extend(names.into_iter().map(|name| format!("{name}:{port}")));
        }
        let mut seen = std::collections::HashSet::new();
        hosts.retain(|h| seen.insert(h.to_ascii_lowercase()));
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Guard {
            hosts,
            origins,
            token,
            secure_cookies: false,
        }
    }

    /// Also answers to `origin` (`https://tw.example.com[:port]`), the name a reverse
    /// proxy serves this instance under. `None` when it is not such an origin.
    pub fn allow_origin(&mut self, origin: &str) -> Option<()> {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        let (scheme, authority) = origin.split_once("://")?;
        let valid = matches!(scheme, "http" | "https")
            && !authority.is_empty()
            && authority
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c));
        if !valid {
            return None;
        }
        self.secure_cookies |= scheme == "https";
        // Browsers leave the default port out of both Host and Origin.
        self.hosts.push(authority.to_owned());
        self.origins.push(origin.clone());
        Some(())
    }

    /// Whether `headers` carry the token, or a login cookie made from it (always, when
    /// there is no token). Every cookie of the login name is tried: a page elsewhere on
    /// this host can set a junk one beside ours, and must not lock the person out.
    pub fn accepts(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        if toolwire_http::bearer_matches(headers, token) {
            return true;
        }
        let name = cookie_name(token);
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .filter(|(k, _)| *k == name)
            .any(|(_, v)| login_is_valid(token, v))
    }

    /// The login cookie's name for this server: named after its token, so servers on one
    /// host (cookies ignore ports) never share or overwrite each other's, and instances
    /// behind one proxy, which share a token, share it. `None` without a token.
    pub fn cookie_name(&self) -> Option<String> {
        self.token.as_deref().map(cookie_name)
    }

    /// A new login cookie's value: a random nonce and its MAC under a key derived from
    /// the token. It never holds the token (a cookie is sent to every port of the host),
    /// and any instance with the same token can check it without shared state.
    pub fn new_login(&self) -> Option<String> {
        let token = self.token.as_deref()?;
        let nonce: [u8; 16] = rand::random();
        let nonce = hex(&nonce);
        let mac = login_mac(token, &nonce);
        Some(format!("{nonce}.{mac}"))
    }
}

/// A small system file's text, or `None` where there is no such file.
fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// This machine's names, as `Host` writes them (without the port): the host name and its
/// mDNS form `NAME.local`, the IPv4 addresses of its interfaces (`/proc/net/fib_trie`'s
/// local host routes) and, given `if_inet6`, its IPv6 ones but link-local (a browser
/// cannot use those without a zone, which never reaches `Host`). Read from files, since
/// asking the system (`gethostname`, `getifaddrs`) takes `unsafe` code; where the files
/// do not exist (not Linux), only the loopback names are left.
pub(crate) fn machine_names(
    hostname: Option<String>,
    fib_trie: Option<&str>,
    if_inet6: Option<&str>,
) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(name) = hostname
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| is_host_name(h))
    {
        if !name.contains('.') {
            names.push(format!("{name}.local"));
        }
        names.insert(0, name);
    }
    // `|-- ADDR` then, for an address of this machine, `/32 host LOCAL`.
    let mut last: Option<std::net::Ipv4Addr> = None;
    for line in fib_trie.unwrap_or_default().lines() {
        let line = line.trim();
        if let Some(addr) = line.strip_prefix("|-- ") {
            last = addr.parse().ok();
        } else if line == "/32 host LOCAL"
            && let Some(addr) = last.take()
            && !addr.is_loopback()
        {
            names.push(addr.to_string());
        }
    }
    // `ADDR(32 hex) IFINDEX PREFIX SCOPE FLAGS NAME`; scope 0x20 is link-local.
    for line in if_inet6.unwrap_or_default().lines() {
        let mut fields = line.split_whitespace();
        let (Some(hex), Some(scope)) = (fields.next(), fields.nth(2)) else {
            continue;
        };
        let Ok(bits) = u128::from_str_radix(hex, 16) else {
            continue;
        };
        let addr = std::net::Ipv6Addr::from(bits);
        if hex.len() == 32 && scope != "20" && !addr.is_loopback() {
            names.push(format!("[{addr}]"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// A name a `Host` header can carry: letters, digits, `-` and `.` (the file may hold
/// anything; `(none)` is what an unset one reads as).
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

fn cookie_name(token: &str) -> String {
    let id = blake3::derive_key("toolwire 2026 login cookie name", token.as_bytes());
    format!("{COOKIE_PREFIX}{}", &hex(&id)[..12])
}

fn login_mac(token: &str, nonce: &str) -> String {
    let key = blake3::derive_key("toolwire 2026 login cookie mac", token.as_bytes());
    blake3::keyed_hash(&key, nonce.as_bytes())
        .to_hex()
        .to_string()
}

fn login_is_valid(token: &str, value: &str) -> bool {
    let Some((nonce, mac)) = value.split_once('.') else {
        return false;
    };
    nonce.len() == 32
        && toolwire_http::constant_time_eq(login_mac(token, nonce).as_bytes(), mac.as_bytes())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs before every route.
pub(crate) async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let guard = &state.guard;
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !guard.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return ApiError::forbidden(
            "forbidden_host",
            "this server answers only to its own address (Host header refused)",
        )
        .into_response();
    }
    let is_upgrade = headers
        .get(header::UPGRADE)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
    let changes_state = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if changes_state || is_upgrade {
        // Browsers send Origin on cross-site requests; tools without one (curl, SDKs)
        // are not a browser being abused, and still need the token when one is set.
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            if !guard.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
                return ApiError::forbidden(
                    "forbidden_origin",
                    "cross-origin requests are refused",
                )
                .into_response();
            }
        }
    }
    let path = request.uri().path();
    // The app's pages and assets carry no data; `/?token=` is how a browser gets its
    // cookie, and the script it loads then calls the API with it.
    let public = path == "/"
        || path == "/favicon.ico"
        || path.starts_with("/web/")
        || path.starts_with("/sessions/");
    if !public && !guard.accepts(headers) {
        return ApiError::new(
            axum::http::StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a token is required: send Authorization: Bearer <token>, or open the URL \
             the server printed",
        )
        .into_response();
    }
    next.run(request).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard() -> Guard {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 7777));
        Guard::for_addr(addr, Some("a-token-of-enough-length".into()))
    }

    fn with_cookie(cookie: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
        h
    }

    const FIB_TRIE: &str = "Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
        +-- 192.0.2.0/30 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
        |-- 192.0.2.255
           /32 link BROADCAST
Local:
  +-- 0.0.0.0/0 3 0 5
           |-- 192.0.2.2
              /32 host LOCAL
";

    const IF_INET6: &str = "fe8000000000000000fc00fffe000001 04 40 20 80     eth0
fd000000000000000000000000000002 04 40 00 82     eth0
00000000000000000000000000000001 01 80 10 80       lo
";

    #[test]
    fn the_machine_names_come_from_the_host_name_and_the_interfaces() {
        let names = machine_names(Some("VM\n".into()), Some(FIB_TRIE), Some(IF_INET6));
        assert_eq!(names, ["vm", "vm.local", "192.0.2.2", "[fd00::2]"]);
        // A dotted name has no mDNS form; junk and `(none)` are no name.
        let dotted = machine_names(Some("box.example.org".into()), None, None);
        assert_eq!(dotted, ["box.example.org"]);
        assert!(machine_names(Some("(none)".into()), None, None).is_empty());
        assert!(machine_names(Some("a b".into()), None, None).is_empty());
        assert!(machine_names(None, Some("garbage\n|-- x\n/32 host LOCAL"), Some("zz")).is_empty());
    }

    #[test]
    fn a_loopback_or_specific_address_answers_to_the_same_names_as_before() {
        let g = Guard::for_addr("127.0.0.1:7777".parse().unwrap(), None);
        assert_eq!(g.hosts, ["127.0.0.1:7777", "localhost:7777", "[::1]:7777"]);
        let g = Guard::for_addr("192.0.2.2:7777".parse().unwrap(), None);
        assert_eq!(g.hosts, ["192.0.2.2:7777"]);
    }

    #[test]
    fn the_login_cookie_never_holds_the_token_and_is_checked_by_mac() {
        let g = guard();
        let name = g.cookie_name().unwrap();
        let login = g.new_login().unwrap();
        assert!(!login.contains("a-token-of-enough-length"));
        assert!(g.accepts(&with_cookie(&format!("{name}={login}"))));
        // The token itself in the cookie is not a login.
        assert!(!g.accepts(&with_cookie(&format!("{name}=a-token-of-enough-length"))));
        // A junk cookie of the same name beside the right one does not lock anyone out.
        let both = format!("{name}=junk; other=1; {name}={login}");
        assert!(g.accepts(&with_cookie(&both)));
        for bad in ["", "x", "00.00", &format!("{login}0"), "..", "a.b"] {
            assert!(!g.accepts(&with_cookie(&format!("{name}={bad}"))), "{bad}");
        }
        // Another server's token makes another name, and its logins do not pass here.
        let other = Guard::for_addr(
            std::net::SocketAddr::from(([127, 0, 0, 1], 8888)),
            Some("another-token-of-enough-length".into()),
        );
        assert_ne!(other.cookie_name(), g.cookie_name());
        let foreign = other.new_login().unwrap();
        assert!(!g.accepts(&with_cookie(&format!("{name}={foreign}"))));
    }
}
