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
pub(crate) const PAGE_POLICY: &str = "default-src 'self'; img-src 'self' blob:; media-src 'self' blob:; \
                               object-src 'none'; base-uri 'none'; form-action 'self'; \
                               frame-ancestors 'none'";

/// An embedded file's bytes.
pub(crate) fn asset(path: &str) -> Option<&'static [u8]> {
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

/// Modules the page's two scripts load by `import`, not named in index.html itself: the
/// sandbox's classic script (another origin's page) is not one.
fn is_imported_module(path: &str) -> bool {
    (path.ends_with(".js") || path.ends_with(".mjs"))
        && !matches!(path, "app.js" | "boot.js" | "sandbox.js")
}

/// The app's document with its asset URLs under this build's version (`/web/v-…/app.js`):
/// the scripts' imports are relative, so the whole module graph comes from there, and is
/// kept by the browser for good (a first render fetches no script again). Every module
/// the scripts import is named up front (`rel=modulepreload`): the browser fetches and
/// compiles the graph at once instead of one import level after another (app.js, then the
/// renderer, then its parts, then the vendored libraries: four rounds before any script
/// ran, ~25 ms of a first render).
fn page_html() -> Option<&'static str> {
    static HTML: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HTML.get_or_init(|| {
        let html = std::str::from_utf8(asset("index.html")?).ok()?;
        let mut preload = String::new();
        for (path, _) in files::FILES.iter().filter(|(p, _)| is_imported_module(p)) {
            preload.push_str("<link rel=\"modulepreload\" href=\"/web/");
            preload.push_str(path);
            preload.push_str("\">\n");
        }
        // Before the scripts, so the browser starts on the graph as it parses the head.
        let html = html.replacen("<script ", &format!("{preload}<script "), 1);
        Some(html.replace("\"/web/", &format!("\"/web/{}/", files::VERSION)))
    })
    .as_deref()
}

/// Whether `segment` names a build's version (this build's or an older page's).
fn is_version(segment: &str) -> bool {
    segment.len() == 18
        && segment.starts_with("v-")
        && segment[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// The app's HTML document.
pub(crate) fn page(sandbox_origin: Option<&str>) -> Response {
    match page_html() {
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

/// `GET /web/{*path}`: an embedded asset, by its name or under a version
/// (`/web/v-…/app.js`). Under this build's version it may be kept for good: the version
/// changes with any file. Under another (a page from an older build still open) it is
/// served as it is now, and revalidated like a bare name.
pub(crate) async fn serve_asset(Path(path): Path<String>) -> Response {
    let (name, immutable) = match path.split_once('/') {
        Some((v, rest)) if is_version(v) => (rest, v == files::VERSION),
        _ => (path.as_str(), false),
    };
    match asset(name) {
        Some(bytes) => {
            let mut response = with_policy(
                ([(header::CONTENT_TYPE, content_type(name))], bytes).into_response(),
                None,
            );
            if immutable {
                response.headers_mut().insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=31536000, immutable"),
                );
            }
            response
        }
        None => ApiError::not_found("no such file in the web app").into_response(),
    }
}

/// `GET /sessions/{id}`: the same document; the script shows the session. The answer
/// tells the browser to fetch the session at once (`Link: …; rel=preload`), while the
/// page and its scripts are still on their way: its first render waits for the slower
/// of the two, not for one after the other. (The page's `boot.js` asks for the same URL
/// the same way, and gets the preloaded answer.)
pub(crate) async fn session_page(
    axum::extract::State(state): axum::extract::State<crate::AppState>,
    Path(id): Path<String>,
) -> Response {
    let mut response = page(state.sandbox_origin.as_deref());
    if response.status().is_success() && toolwire_core::check_id(&id).is_none() {
        let link = format!("</api/sessions/{id}>; rel=preload; as=fetch; crossorigin");
        if let Ok(v) = HeaderValue::from_str(&link) {
            response.headers_mut().insert(header::LINK, v);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Every module the scripts import is preloaded, under this build's version, before
    /// the scripts; the sandbox's classic script (another origin's) is not.
    #[test]
    fn the_page_preloads_every_imported_module() {
        let html = page_html().unwrap();
        let first_script = html.find("<script ").unwrap();
        for module in [
            "app/session.js",
            "toolwire-render.js",
            "vendor/purify.es.mjs",
        ] {
            let link = format!(
                "<link rel=\"modulepreload\" href=\"/web/{}/{module}\">",
                files::VERSION
            );
            let at = html.find(&link).unwrap_or_else(|| panic!("no {link}"));
            assert!(at < first_script, "{module} is preloaded after the scripts");
        }
        let preloaded: Vec<&str> = html
            .lines()
            .filter(|l| l.contains("modulepreload"))
            .collect();
        assert!(preloaded.len() > 20, "{preloaded:?}");
        for named in ["/boot.js\"", "/app.js\"", "sandbox.js"] {
            assert!(
                !preloaded.iter().any(|l| l.contains(named)),
                "{named} is preloaded"
            );
        }
    }
}
