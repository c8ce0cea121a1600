//! The guards of a local server (OWASP's and the MCP spec's advice): a Host allowlist
//! against DNS rebinding, an Origin check on every state-changing request and WebSocket
//! upgrade, and the token, by header or by the cookie a one-time URL sets.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::ApiError;

/// The cookie a browser keeps the token in, set by `/?token=...`.
pub const TOKEN_COOKIE: &str = "toolwire_token";

/// Who may talk to the server.
#[derive(Debug, Clone)]
pub struct Guard {
    /// `Host` header values accepted (`127.0.0.1:7777`, `localhost:7777`, ...).
    pub hosts: Vec<String>,
    /// `Origin` values accepted on state-changing requests.
    pub origins: Vec<String>,
    pub token: Option<String>,
}

impl Guard {
    /// The names a server bound to `addr` is reached by: its own address, and the
    /// loopback names when it is on loopback.
    pub fn for_addr(addr: std::net::SocketAddr, token: Option<String>) -> Self {
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() {
            for name in ["127.0.0.1", "localhost", "[::1]"] {
                hosts.push(format!("{name}:{port}"));
            }
        }
        hosts.dedup();
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Guard {
            hosts,
            origins,
            token,
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
        // Browsers leave the default port out of both Host and Origin.
        self.hosts.push(authority.to_owned());
        self.origins.push(origin.clone());
        Some(())
    }

    /// Whether `headers` carry the token (always, when there is none).
    pub fn accepts(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == TOKEN_COOKIE)
            .map(|(_, v)| v);
        [bearer, cookie]
            .into_iter()
            .flatten()
            .any(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Runs before every route.
pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
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
