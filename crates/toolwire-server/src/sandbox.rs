//! The MCP Apps sandbox proxy: a second listener on another port, so another origin than
//! the app's, serving only the proxy page and its script. The page's Content Security
//! Policy is built from the app's declared `_meta.ui.csp` domains (never more) and is
//! inherited by the app's `srcdoc` frame inside it; only the app page that asked for it
//! may frame it.

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::error::ApiError;
use crate::guard::Guard;
use crate::web;

/// What the sandbox listener knows: the names it answers to, and the app origins whose
/// pages may ask for a proxy (each may frame only the one it asked for).
#[derive(Debug, Clone)]
pub(crate) struct SandboxState {
    pub guard: Guard,
    pub app_origins: Vec<String>,
}

/// The domains an app declared, in the MCP Apps `McpUiResourceCsp` shape.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeclaredCsp {
    #[serde(default)]
    pub connect_domains: Vec<String>,
    #[serde(default)]
    pub resource_domains: Vec<String>,
    #[serde(default)]
    pub frame_domains: Vec<String>,
    #[serde(default)]
    pub base_uri_domains: Vec<String>,
}

/// An origin an app may name: a scheme, a host (a leading `*.` allowed) and a port;
/// nothing that could end a directive or add a keyword.
fn valid_domain(d: &str) -> bool {
    let Some((scheme, rest)) = d.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https" | "ws" | "wss") || rest.is_empty() || rest.len() > 253 {
        return false;
    }
    let host = rest.strip_prefix("*.").unwrap_or(rest);
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (host, None),
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && port
            .is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()))
}

fn sources(list: &[String], empty: &str) -> Result<String, ApiError> {
    if let Some(bad) = list.iter().find(|d| !valid_domain(d)) {
        let shown: String = bad.chars().take(80).collect();
        return Err(ApiError::bad_request(format!(
            "csp: {shown:?} is not an origin (scheme://host[:port])"
        )));
    }
    Ok(if list.is_empty() {
        empty.to_owned()
    } else {
        list.join(" ")
    })
}

/// The policy for an app that declared `csp`: the spec's restrictive default widened only
/// by declared domains, with plugins, forms and foreign framing off.
///
/// Scripts and workers the app makes itself (`blob:` and `data:` URLs, as pdf.js makes
/// its worker: a `blob:` module that imports a `data:` one) are its own code, which
/// `'unsafe-inline'` already lets it run; without them server-pdf's viewer never drew a
/// page. They widen nothing it can reach: a worker inherits this policy, so its
/// `connect-src` and every other fetch stay as declared. `default-src 'none'` would
/// otherwise refuse every worker (`worker-src` falls back to it through `script-src`).
pub(crate) fn app_policy(
    csp: &DeclaredCsp,
    frame_ancestors: &[String],
) -> Result<String, ApiError> {
    let resources = sources(&csp.resource_domains, "")?;
    let with = |base: &str| format!("{base} {resources}").trim_end().to_owned();
    Ok(format!(
        "default-src 'none'; script-src {}; worker-src {}; style-src {}; img-src {}; \
         font-src {}; media-src {}; connect-src {}; frame-src {}; base-uri {}; \
         object-src 'none'; form-action 'none'; frame-ancestors {}",
        with("'self' 'unsafe-inline' blob: data:"),
        with("'self' blob: data:"),
        with("'self' 'unsafe-inline'"),
        with("'self' data:"),
        with("'self'"),
        with("'self' data:"),
        sources(&csp.connect_domains, "'none'")?,
        sources(&csp.frame_domains, "'none'")?,
        sources(&csp.base_uri_domains, "'self'")?,
        if frame_ancestors.is_empty() {
            "'none'".to_owned()
        } else {
            frame_ancestors.join(" ")
        },
    ))
}

/// Who may frame the proxy asked for by the app page at `host` (already checked to be one
/// of the app's origins): that page's origin only, not every name the app answers to.
/// Those names include `http://[::1]:P` on any loopback server, and Chromium takes no IPv6
/// literal in a source expression (with or without a port, in any spelling): it logs an
/// error for every app and ignores the source. So an IPv6 origin is listed only when the
/// page itself is on one, which it can be only when the server is bound on IPv6 (there
/// Chromium still refuses it: open the app at `http://localhost:P` in Chromium).
pub(crate) fn frame_ancestors(host: &str) -> Vec<String> {
    vec![host.to_owned()]
}

#[derive(Debug, Deserialize)]
pub(crate) struct ProxyQuery {
    /// The app page's origin, which the proxy talks to; one of the server's own.
    host: String,
    /// The app's declared `McpUiResourceCsp`, as JSON.
    csp: Option<String>,
}

async fn proxy_page(
    State(state): State<SandboxState>,
    Query(q): Query<ProxyQuery>,
) -> Result<Response, ApiError> {
    if !state.app_origins.iter().any(|o| o == &q.host) {
        return Err(ApiError::bad_request(
            "host: not an origin of this server's app",
        ));
    }
    let csp: DeclaredCsp = match q.csp.as_deref() {
        None | Some("") => DeclaredCsp::default(),
        Some(text) => {
            serde_json::from_str(text).map_err(|e| ApiError::bad_request(format!("csp: {e}")))?
        }
    };
    let policy = app_policy(&csp, &frame_ancestors(&q.host))?;
    let html = web::asset("sandbox.html").ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_app",
            "this build has no sandbox page",
        )
    })?;
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let h = response.headers_mut();
    let policy = HeaderValue::from_str(&policy)
        .map_err(|_| ApiError::bad_request("csp: not a valid header value"))?;
    h.insert(header::CONTENT_SECURITY_POLICY, policy);
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

async fn proxy_script() -> Response {
    match web::asset("sandbox.js") {
        Some(js) => (
            [
                (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            js,
        )
            .into_response(),
        None => ApiError::not_found("this build has no sandbox script").into_response(),
    }
}

/// Only the sandbox's own names (against DNS rebinding, as on the main listener).
async fn check_host(State(state): State<SandboxState>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !state
        .guard
        .hosts
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
    {
        return ApiError::forbidden("forbidden_host", "Host header refused").into_response();
    }
    next.run(request).await
}

async fn nothing_else() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no_route", "no such route")
}

/// The sandbox listener's routes: `/sandbox` and `/sandbox.js`, nothing else.
pub(crate) fn router(state: SandboxState) -> Router {
    Router::new()
        .route("/sandbox", get(proxy_page))
        .route("/sandbox.js", get(proxy_script))
        .fallback(nothing_else)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            check_host,
        ))
        .with_state(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_specs_restrictive_policy() {
        let p = app_policy(&DeclaredCsp::default(), &["http://127.0.0.1:7777".into()])
            .unwrap_or_default();
        assert!(p.starts_with(
            "default-src 'none'; script-src 'self' 'unsafe-inline' blob: data:; \
             worker-src 'self' blob: data:;"
        ));
        assert!(p.contains("connect-src 'none'"));
        assert!(p.contains("frame-src 'none'"));
        assert!(p.contains("base-uri 'self'"));
        assert!(p.contains("frame-ancestors http://127.0.0.1:7777"));
    }

    #[test]
    fn only_the_asking_page_may_frame_the_proxy_and_no_ipv6_for_an_ipv4_page() {
        // A server on 127.0.0.1 answers to [::1] too; a page on 127.0.0.1 or localhost
        // gets a policy with its own origin only, never the IPv6 form Chromium rejects.
        for host in ["http://127.0.0.1:7777", "http://localhost:7777"] {
            let p = app_policy(&DeclaredCsp::default(), &frame_ancestors(host)).unwrap_or_default();
            assert!(p.ends_with(&format!("frame-ancestors {host}")), "{p}");
            assert!(!p.contains('['), "{p}");
        }
        // A page on [::1] exists only when the server is bound there: it is listed.
        let p = app_policy(
            &DeclaredCsp::default(),
            &frame_ancestors("http://[::1]:7777"),
        )
        .unwrap_or_default();
        assert!(p.ends_with("frame-ancestors http://[::1]:7777"), "{p}");
    }

    #[test]
    fn declared_domains_widen_only_their_directives() {
        let csp = DeclaredCsp {
            connect_domains: vec!["https://api.example.com".into()],
            resource_domains: vec!["https://*.cdn.example.com".into()],
            ..DeclaredCsp::default()
        };
        let p = app_policy(&csp, &[]).unwrap_or_default();
        assert!(p.contains("connect-src https://api.example.com;"));
        assert!(p.contains("img-src 'self' data: https://*.cdn.example.com;"));
        // Workers from its own code or its declared origins.
        assert!(p.contains("worker-src 'self' blob: data: https://*.cdn.example.com;"));
        assert!(p.contains("frame-src 'none'"));
        assert!(p.contains("frame-ancestors 'none'"));
    }

    #[test]
    fn a_declared_domain_cannot_inject_a_directive() {
        for bad in [
            "https://a.com; script-src *",
            "'unsafe-eval'",
            "*",
            "https://a.com 'unsafe-eval'",
            "javascript://x",
            "https://",
            "https://a.com:99999999",
        ] {
            let csp = DeclaredCsp {
                connect_domains: vec![bad.into()],
                ..DeclaredCsp::default()
            };
            assert!(app_policy(&csp, &[]).is_err(), "{bad}");
        }
    }
}
