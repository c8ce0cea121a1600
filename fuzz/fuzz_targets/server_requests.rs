//! libFuzzer target: arbitrary requests (method, path and query, the headers a client
//! controls, cookies and credentials, body) through the server's whole router, in
//! process, over a real Host in a temp dir, behind a token. No answer may be a 5xx,
//! nothing may panic, every answer comes within seconds (event feeds answer at once and
//! stream; their bodies are not read), and no request without the token gets past the
//! guard to a non-public route.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, header};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct Fixture {
    rt: tokio::runtime::Runtime,
    router: Router,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

const ADDR: &str = "127.0.0.1:7777";

/// The server's token; the fuzzer sends it (or not) by the first byte's high bit.
const TOKEN: &str = "fuzz-token-0123456789";

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let data = tempfile::tempdir().expect("a temp dir");
        let ws = tempfile::tempdir().expect("a temp dir");
        std::fs::write(ws.path().join("a.txt"), "hello\n").expect("a file");
        let router = rt.block_on(async {
            let host = toolwire_agent::Host::builder()
                .data_dir(data.path())
                .workspace(ws.path())
                .build()
                .await
                .expect("a host");
            let guard = toolwire_server::Guard::for_addr(
                ADDR.parse().expect("an address"),
                Some(TOKEN.to_owned()),
            );
            toolwire_server::router(toolwire_server::AppState::new(host, None, guard))
        });
        Fixture {
            rt,
            router,
            _dirs: (data, ws),
        }
    })
}

const METHODS: [Method; 5] = [
    Method::GET,
    Method::POST,
    Method::DELETE,
    Method::PUT,
    Method::HEAD,
];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    // Fields are separated by NUL: path?query, Range, Last-Event-ID, Content-Type, Origin,
    // Cookie, Authorization, body.
    let mut fields = rest.splitn(8, |b| *b == 0);
    let mut field = || fields.next().unwrap_or_default();
    let path = String::from_utf8_lossy(field()).into_owned();
    let uri = format!("/{}", path.trim_start_matches('/'));
    let mut with_token = first & 0x80 != 0;
    let mut request = Request::builder()
        .method(METHODS[usize::from(first & 0x7f) % METHODS.len()].clone())
        .uri(uri.as_str())
        .header(header::HOST, ADDR);
    if with_token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    }
    for name in [
        header::RANGE,
        header::HeaderName::from_static("last-event-id"),
        header::CONTENT_TYPE,
        header::ORIGIN,
        header::COOKIE,
        header::AUTHORIZATION,
    ] {
        let value = field();
        // The fuzzer found the token itself: then it may pass, as it should.
        with_token |= value.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes());
        if !value.is_empty() {
            request = request.header(name, value);
        }
    }
    let Ok(request) = request.body(Body::from(field().to_vec())) else {
        return; // not a request a client could send (a bad URI or header)
    };
    let f = fixture();
    let answer = f.rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), f.router.clone().oneshot(request)).await
    });
    let response = match answer {
        Ok(Ok(response)) => response,
        Ok(Err(never)) => match never {},
        Err(_) => panic!("no answer in 10 s to {uri}"),
    };
    let status = response.status();
    assert!(!status.is_server_error(), "{status} for {uri}");
    // Without the token (a forged cookie or bearer cannot be the token), only the page,
    // its assets and the token exchange answer anything but 401/403/404/405.
    // The path is what comes before a query or a fragment (`/#api/sessions` is the page).
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let public = ["/", "/favicon.ico"].contains(&path)
        || uri.starts_with("/web/")
        || uri.starts_with("/sessions/")
        || uri.starts_with("/?");
    if !with_token && !public && !uri.contains(TOKEN) {
        assert!(
            matches!(status.as_u16(), 400 | 401 | 403 | 404 | 405 | 413 | 414 | 415),
            "{status} for {uri} without the token"
        );
    }
});
