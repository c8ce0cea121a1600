//! libFuzzer target: arbitrary requests (method, path, the headers a client controls,
//! credentials, a JSON-RPC body) through `toolwire gateway --http`'s whole router, in
//! process, over a real Host in a temp dir. Nothing may panic, every answer comes within
//! seconds (event streams answer at once and stream; their bodies are not read), no
//! answer is a 5xx, and a request without the token never gets past the token check:
//! it is answered 401 whatever else it says.
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
    _data: tempfile::TempDir,
}

/// The gateway's token; the fuzzer sends it (or not) by the first byte's high bit.
const TOKEN: &str = "fuzz-gateway-token-0123456789abcdef";

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let data = tempfile::tempdir().expect("a temp dir");
        let router = rt.block_on(async {
            let host = toolwire_agent::Host::builder()
                .data_dir(data.path())
                .build()
                .await
                .expect("a host");
            let profile = toolwire_gateway::HostProfile::named("generic").expect("a profile");
            let gateway = toolwire_gateway::Gateway::new(host, profile);
            toolwire_gateway::http_router(gateway, TOKEN).expect("a router")
        });
        Fixture {
            rt,
            router,
            _data: data,
        }
    })
}

const METHODS: [Method; 5] = [
    Method::POST,
    Method::GET,
    Method::DELETE,
    Method::PUT,
    Method::OPTIONS,
];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    // Fields are separated by NUL: path?query, Host, Origin, Content-Type, Accept,
    // Mcp-Session-Id, Mcp-Protocol-Version, Authorization, body.
    let mut fields = rest.splitn(9, |b| *b == 0);
    let mut field = || fields.next().unwrap_or_default();
    let path = String::from_utf8_lossy(field()).into_owned();
    let uri = format!("/{}", path.trim_start_matches('/'));
    let mut with_token = first & 0x80 != 0;
    let mut request = Request::builder()
        .method(METHODS[usize::from(first & 0x7f) % METHODS.len()].clone())
        .uri(uri.as_str());
    if with_token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    }
    let host = field();
    request = if host.is_empty() {
        request.header(header::HOST, "127.0.0.1:8931")
    } else {
        request.header(header::HOST, host)
    };
    for name in [
        header::ORIGIN,
        header::CONTENT_TYPE,
        header::ACCEPT,
        header::HeaderName::from_static("mcp-session-id"),
        header::HeaderName::from_static("mcp-protocol-version"),
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
    if !with_token {
        assert_eq!(status.as_u16(), 401, "{status} for {uri} without the token");
    }
});
