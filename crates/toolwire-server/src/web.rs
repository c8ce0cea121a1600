//! The embedded web app: its page (one HTML document for every app route; the script
//! routes by path) and its assets under `/web/`, looked up by exact name in a table built
//! at compile time, so no path is ever made from a request.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

mod files {
    include!(concat!(env!("OUT_DIR"), "/web_files.rs"));
}

/// The app page's policy: scripts and styles from this origin only, nothing inline, no
/// plugins, and the page itself never framed. Images and media may also be `blob:` URLs,
/// which the renderer makes from a result's inline base64 (typed by the result, never
/// sniffed; an SVG in an `<img>` runs no script).
pub const PAGE_POLICY: &str = "default-src 'self'; img-src 'self' blob:; media-src 'self' blob:; \
                               object-src 'none'; base-uri 'none'; form-action 'self'; \
                               frame-ancestors 'none'";

/// An embedded file's bytes.
pub fn asset(path: &str) -> Option<&'static [u8]> {
    files::FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, bytes)| *bytes)
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match ext {
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "html" => "text/html; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff2" => "font/woff2",
        // Licences, READMEs and the TypeScript declarations are read as text.
        _ => "text/plain; charset=utf-8",
    }
}

fn with_policy(mut response: Response, sandbox_origin: Option<&str>) -> Response {
    let h = response.headers_mut();
    // The one frame the page may hold is the MCP Apps sandbox proxy, on its own origin.
    let policy = match sandbox_origin {
        Some(origin) => format!("{PAGE_POLICY}; frame-src {origin}"),
        None => format!("{PAGE_POLICY}; frame-src 'none'"),
    };
    if let Ok(v) = HeaderValue::from_str(&policy) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    } else {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PAGE_POLICY),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Assets change with the binary; revalidating is cheap on loopback.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The app's HTML document.
pub fn page(sandbox_origin: Option<&str>) -> Response {
    match asset("index.html") {
        Some(html) => with_policy(
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response(),
            sandbox_origin,
        ),
        None => ApiError::new(
            StatusCode::NOT_FOUND,
            "no_app",
            "this build has no web app (web/index.html was missing at compile time)",
        )
        .into_response(),
    }
}

/// `GET /web/{*path}`: an embedded asset.
pub async fn serve_asset(Path(path): Path<String>) -> Response {
    match asset(&path) {
        Some(bytes) => with_policy(
            ([(header::CONTENT_TYPE, content_type(&path))], bytes).into_response(),
            None,
        ),
        None => ApiError::not_found("no such file in the web app").into_response(),
    }
}

/// `GET /sessions/{id}`: the same document; the script shows the session.
pub async fn session_page(
    axum::extract::State(state): axum::extract::State<crate::AppState>,
    Path(_id): Path<String>,
) -> Response {
    page(state.sandbox_origin.as_deref())
}
