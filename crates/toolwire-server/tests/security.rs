//! The guards of a local server: a non-loopback address needs a token, a wrong Host is
//! refused (DNS rebinding), cross-origin writes and WebSocket upgrades are refused, the
//! token is checked on every API request (header, or the cookie a one-time URL sets), and
//! a huge body is refused from its Content-Length alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::json;
use support::{error_code, host_in, start, start_in};
use toolwire_server::{ServeConfig, ServeError, Server};

const TOKEN: &str = "0123456789abcdef-test-token";

#[tokio::test]
async fn a_non_loopback_address_without_a_token_is_refused_at_start() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let host = host_in(data.path(), ws.path()).await;
    let err = Server::bind(host.clone(), ServeConfig::new("0.0.0.0:0".parse().unwrap()))
        .await
        .unwrap_err();
    assert!(matches!(err, ServeError::TokenRequired(_)), "{err}");
    assert!(err.to_string().contains("token"));
    let mut weak = ServeConfig::new("127.0.0.1:0".parse().unwrap());
    weak.token = Some("short".into());
    assert!(matches!(
        Server::bind(host, weak).await.unwrap_err(),
        ServeError::WeakToken
    ));
}

#[tokio::test]
async fn a_wrong_host_is_refused() {
    let f = start().await;
    let s = &f.server;
    for host in ["evil.example", "evil.example:80", "127.0.0.1.evil.example"] {
        let r = s
            .get("/api/sessions")
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_code(r).await,
            (403, "forbidden_host".into()),
            "{host}"
        );
    }
    let ok = s
        .get("/api/sessions")
        .header("host", format!("localhost:{}", s.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn cross_origin_writes_and_websocket_upgrades_are_refused() {
    let f = start().await;
    let s = &f.server;
    let r = s
        .post("/api/sessions", json!({}))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden_origin".into()));
    let same = s
        .post("/api/sessions", json!({}))
        .header("origin", format!("http://127.0.0.1:{}", s.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(same.status(), 201);
    // A cross-origin read is allowed by the guard (the browser keeps its answer from the
    // other site); a cross-origin WebSocket is not, since the browser would let it read.
    let upgrade = s
        .get("/api/ws")
        .header("origin", "https://evil.example")
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    assert_eq!(upgrade.status(), 403);
}

#[tokio::test]
async fn the_token_is_required_by_header_or_cookie() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let s = start_in(data.path(), ws.path(), Some(TOKEN), None).await;
    let bare = s.client.get(s.url("/api/sessions")).send().await.unwrap();
    assert_eq!(error_code(bare).await, (401, "unauthorized".into()));
    let wrong = s
        .client
        .get(s.url("/api/sessions"))
        .bearer_auth("x".repeat(TOKEN.len()))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(s.get("/api/sessions").send().await.unwrap().status(), 200);
    for path in [
        "/api/tools",
        "/api/openapi.json",
        "/api/sessions/s_x/events",
        "/api/resources/blake3:00/content",
    ] {
        let r = s.client.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }

    // The one-time URL: a cookie, and a redirect that takes the token out of the address.
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = no_redirect
        .get(s.url(&format!("/?token={TOKEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    // The cookie holds a login made from the token, never the token (cookies ignore
    // ports: every service on this host would receive it), under a name of its own.
    assert!(!cookie.contains(TOKEN), "{cookie}");
    assert!(cookie.starts_with("toolwire_login_"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_owned();
    let with_cookie = s
        .client
        .get(s.url("/api/sessions"))
        .header("cookie", pair.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status(), 200);
    // A junk cookie of the same name set by another page on this host does not lock
    // the person out.
    let (name, _) = pair.split_once('=').unwrap();
    let r = s
        .client
        .get(s.url("/api/sessions"))
        .header("cookie", format!("{name}=junk; {pair}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = s
        .client
        .get(s.url("/api/sessions"))
        .header("cookie", format!("{name}={TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the token itself is not a login cookie");
    let r = no_redirect
        .get(s.url("/?token=wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    s.stop().await;
}

#[tokio::test]
async fn a_huge_body_is_refused_before_it_is_read() {
    let f = start().await;
    let addr = f.server.addr;
    // Only the headers are sent: the answer must come from Content-Length alone.
    let answer = tokio::task::spawn_blocking(move || {
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            tcp,
            "POST /api/sessions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{{"
        )
        .unwrap();
        let mut buf = [0u8; 512];
        let n = tcp.read(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[tokio::test]
async fn pages_and_resources_carry_their_policies() {
    let f = start().await;
    let s = &f.server;
    let page = s.get("/").send().await.unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("default-src 'self'"), "{csp}");
    let html = page.text().await.unwrap();
    for tag in html.split("<script").skip(1) {
        let open = tag.split('>').next().unwrap_or_default();
        assert!(open.contains("src="), "an inline script: <script{open}>");
    }
    // A session's page is the same document, under the same policy.
    let session_page = s.get("/sessions/s_anything").send().await.unwrap();
    assert!(
        session_page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'")
    );
    // It asks the browser to fetch the session beside the page (a preload the page's own
    // fetch then takes); an id the store would refuse gets no such hint.
    assert_eq!(
        session_page.headers()["link"],
        "</api/sessions/s_anything>; rel=preload; as=fetch; crossorigin"
    );
    assert_eq!(session_page.text().await.unwrap(), html);
    let odd = s.get("/sessions/a%20b").send().await.unwrap();
    assert!(odd.headers().get("link").is_none());
    // Assets come from the embedded table, typed, and nothing else is reachable.
    let js = s.get("/web/app.js").send().await.unwrap();
    assert_eq!(js.status(), 200);
    let js_body = s
        .get("/web/app.js")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        js.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    assert_eq!(js.headers()["x-content-type-options"], "nosniff");
    assert_eq!(js.headers()["cache-control"], "no-cache");
    // The page asks for its assets under this build's version, which browsers may keep for
    // good; an older build's version is served too, but revalidated.
    let version = html
        .split("src=\"/web/")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default()
        .to_owned();
    assert!(version.starts_with("v-") && version.len() == 18, "{html}");
    let kept = s
        .get(&format!("/web/{version}/app.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), 200);
    assert_eq!(
        kept.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(kept.text().await.unwrap(), js_body);
    let older = s
        .get("/web/v-0123456789abcdef/app.js")
        .send()
        .await
        .unwrap();
    assert_eq!(older.status(), 200);
    assert_eq!(older.headers()["cache-control"], "no-cache");
    for bad in [
        "/web/nothere.js",
        "/web/../Cargo.toml",
        "/web/%2e%2e/%2e%2e/Cargo.toml",
        "/web//etc/passwd",
    ] {
        let r = s.get(bad).send().await.unwrap();
        assert!(
            matches!(r.status().as_u16(), 400 | 404),
            "{bad}: {}",
            r.status()
        );
    }
    let r = s.get("/api/no/such/route").send().await.unwrap();
    assert_eq!(error_code(r).await, (404, "no_route".into()));
}

/// The MCP Apps sandbox proxy lives on another origin, serves only its two files, takes
/// only this server's app origins as its host, and turns declared domains into a policy
/// without letting one inject a directive.
#[tokio::test]
async fn the_app_sandbox_is_another_origin_with_a_policy_from_declared_domains() {
    let f = start().await;
    let s = &f.server;
    let info = s.json("/api/info").await;
    let sandbox = info["sandboxOrigin"].as_str().unwrap().to_owned();
    assert_ne!(format!("{sandbox}/"), s.base, "another origin");
    let page_csp = s.get("/").send().await.unwrap().headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        page_csp.ends_with(&format!("frame-src {sandbox}")),
        "{page_csp}"
    );

    let host = s.base.trim_end_matches('/').to_owned();
    let client = reqwest::Client::new();
    let get = |q: String| client.get(format!("{sandbox}/sandbox?{q}")).send();
    let enc = |v: &str| v.bytes().map(|b| format!("%{b:02X}")).collect::<String>();
    let ok = get(format!("host={}", enc(&host))).await.unwrap();
    assert_eq!(ok.status(), 200);
    let csp = ok.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.starts_with("default-src 'none';"), "{csp}");
    assert!(csp.contains("connect-src 'none'"), "{csp}");
    assert!(csp.contains(&format!("frame-ancestors {host}")), "{csp}");
    let declared = r#"{"connectDomains":["https://api.example.com"]}"#;
    let widened = get(format!("host={}&csp={}", enc(&host), enc(declared)))
        .await
        .unwrap();
    assert!(
        widened.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("connect-src https://api.example.com;")
    );
    for bad in [
        format!("host={}", enc("http://evil.example")),
        format!(
            "host={}&csp={}",
            enc(&host),
            enc(r#"{"connectDomains":["https://a.com; script-src *"]}"#)
        ),
        format!("host={}&csp={}", enc(&host), enc("not json")),
        String::new(),
    ] {
        let r = get(bad.clone()).await.unwrap();
        assert_eq!(r.status(), 400, "{bad}");
    }
    for path in ["/api/sessions", "/", "/web/app.js"] {
        let r = client.get(format!("{sandbox}{path}")).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path} on the sandbox");
    }
    assert_eq!(
        client
            .get(format!("{sandbox}/sandbox.js"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

/// Behind a reverse proxy: `public_origins` lets the proxy's name through the Host and
/// Origin checks (and only it), needs a token, and refuses what is not an origin.
#[tokio::test]
async fn a_public_origin_passes_the_guards_and_needs_a_token() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let host = host_in(data.path(), ws.path()).await;
    let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap());
    config.public_origins = vec!["https://tw.example.com".into()];
    let err = Server::bind(host.clone(), config.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServeError::TokenRequiredForPublicOrigin),
        "{err}"
    );
    config.token = Some(TOKEN.into());
    for bad in [
        "tw.example.com",
        "https://tw.example.com/app",
        "ftp://x",
        "https://",
    ] {
        config.public_origins = vec![bad.into()];
        let err = Server::bind(host.clone(), config.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ServeError::BadPublicOrigin(_)),
            "{bad}: {err}"
        );
    }
    config.public_origins = vec!["https://TW.example.com/".into()];
    let server = Server::bind(host, config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let task = tokio::spawn(server.run(std::future::pending()));
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/api/sessions");
    let post = |host: &'static str, origin: &'static str| {
        client
            .post(&url)
            .header("host", host)
            .header("origin", origin)
            .bearer_auth(TOKEN)
            .json(&json!({"title": "via the proxy"}))
            .send()
    };
    assert_eq!(
        post("tw.example.com", "https://tw.example.com")
            .await
            .unwrap()
            .status(),
        201
    );
    // Another name, or the right name from another site, is still refused.
    let r = post("evil.example", "https://tw.example.com")
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden_host".into()));
    let r = post("tw.example.com", "https://evil.example")
        .await
        .unwrap();
    assert_eq!(error_code(r).await, (403, "forbidden_origin".into()));
    task.abort();
}
