//! libFuzzer target: arbitrary requests (method, path and query, the headers a client
//! controls, body) through the server's whole router, in process, over a real Host in a
//! temp dir. No answer may be a 5xx, nothing may panic, and every answer comes within
//! seconds (event feeds answer at once and stream; their bodies are not read).
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
            let guard = toolwire_server::Guard::for_addr(ADDR.parse().expect("an address"), None);
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
    // Fields are separated by NUL: path?query, Range, Last-Event-ID, Content-Type, Origin, body.
    let mut fields = rest.splitn(6, |b| *b == 0);
    let mut field = || fields.next().unwrap_or_default();
    let path = String::from_utf8_lossy(field()).into_owned();
    let uri = format!("/{}", path.trim_start_matches('/'));
    let mut request = Request::builder()
        .method(METHODS[usize::from(first) % METHODS.len()].clone())
        .uri(uri.as_str())
        .header(header::HOST, ADDR);
    for name in [
        header::RANGE,
        header::HeaderName::from_static("last-event-id"),
        header::CONTENT_TYPE,
        header::ORIGIN,
    ] {
        let value = field();
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
    assert!(
        !response.status().is_server_error(),
        "{} for {uri}",
        response.status()
    );
});
