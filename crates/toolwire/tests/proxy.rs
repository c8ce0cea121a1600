//! The reverse-proxy recipe of `docs/deploy.md`, run: its nginx block, taken from the
//! document itself (ports and TLS swapped for loopback), in front of two `serve`
//! instances with a token and `--public-origin`. Through it: the token is required, the
//! API answers under the public name, an event feed streams as things happen (no
//! buffering) while the call is posted through the proxy to either instance, and the
//! WebSocket upgrade passes.
//!
//! Needs `nginx` (Debian's package); in CI its absence fails the test, elsewhere it is
//! skipped, saying so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{Running, free_port, json, spawn_serve};

const NAME: &str = "toolwire.example.com";
const TOKEN: &str = "proxy-test-token-0123456789";

/// The nginx block of the recipe, made to run on loopback.
fn recipe_config(dir: &Path, proxy: u16, a: u16, b: u16) -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deploy.md"))
            .unwrap();
    let start = doc
        .find("```nginx\n")
        .expect("docs/deploy.md has an nginx block")
        + 9;
    let block = &doc[start..start + doc[start..].find("\n```").unwrap()];
    for line in [
        "server 127.0.0.1:7001;",
        "server 127.0.0.1:7002;",
        "listen 443 ssl;",
    ] {
        assert!(block.contains(line), "the recipe changed: {line} is gone");
    }
    let block = block
        .replace("server 127.0.0.1:7001;", &format!("server 127.0.0.1:{a};"))
        .replace("server 127.0.0.1:7002;", &format!("server 127.0.0.1:{b};"))
        .replace("listen 443 ssl;", &format!("listen 127.0.0.1:{proxy};"));
    let d = dir.display();
    format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{}}\nhttp {{\naccess_log off;\nclient_body_temp_path {d}/body;\n\
         proxy_temp_path {d}/proxy;\nfastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\n\
         scgi_temp_path {d}/scgi;\n{block}\n}}\n"
    )
}

/// One request through the proxy, as a browser at the public name sends it.
fn proxied(port: u16, method: &str, path: &str, body: Option<&str>, token: bool) -> (u16, String) {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.unwrap_or("");
    let auth = if token {
        format!("Authorization: Bearer {TOKEN}\r\n")
    } else {
        String::new()
    };
    write!(
        tcp,
        "{method} {path} HTTP/1.1\r\nHost: {NAME}\r\nOrigin: https://{NAME}\r\n{auth}\
         Connection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut bytes = Vec::new();
    tcp.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text[9..12].parse().unwrap();
    let (_, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, rest.to_owned())
}

#[test]
fn the_deploy_recipe_proxies_two_instances() {
    if Command::new("nginx").arg("-v").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install nginx to run the recipe of docs/deploy.md"
        );
        eprintln!("skipped: nginx is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (data, ws) = (dir.path().join("data"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "through the proxy\n").unwrap();
    let (a, b, proxy) = (free_port(), free_port(), free_port());
    let origin = format!("https://{NAME}");
    let serve = ["--token", TOKEN, "--public-origin", origin.as_str()];
    let _a = Running(spawn_serve(&data, &ws, a, &[], &serve));
    let _b = Running(spawn_serve(&data, &ws, b, &[], &serve));
    let conf = dir.path().join("nginx.conf");
    std::fs::write(&conf, recipe_config(dir.path(), proxy, a, b)).unwrap();
    let _nginx = Running(
        Command::new("nginx")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir.path())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", proxy)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "nginx did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The token is required through the proxy, and enough.
    let (status, _) = proxied(proxy, "GET", "/api/sessions", None, false);
    assert_eq!(status, 401);
    let (status, body) = proxied(
        proxy,
        "POST",
        "/api/sessions",
        Some(r#"{"title":"p"}"#),
        true,
    );
    assert_eq!(status, 201, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();

    // A feed opened through the proxy streams: a call posted through the proxy (to
    // either instance) shows on it at once, not when a buffer fills or the feed ends.
    let mut feed = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    feed.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    write!(
        feed,
        "GET /api/sessions/{id}/events HTTP/1.1\r\nHost: {NAME}\r\n\
         Authorization: Bearer {TOKEN}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut seen = String::new();
    let mut read_for = |seen: &mut String, want: &str| {
        let start = Instant::now();
        let mut buf = [0u8; 4096];
        while !seen.contains(want) && start.elapsed() < Duration::from_secs(10) {
            if let Ok(n) = feed.read(&mut buf) {
                seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }
        seen.contains(want)
    };
    assert!(read_for(&mut seen, "200 OK"), "the feed opens: {seen}");
    for n in 0..2 {
        let (status, body) = proxied(
            proxy,
            "POST",
            &format!("/api/sessions/{id}/calls"),
            Some(r#"{"tool":"read_file","input":{"path":"a.txt"}}"#),
            true,
        );
        assert_eq!(status, 202, "{body}");
        let call = json(&body)["callId"].as_str().unwrap().to_owned();
        assert!(
            read_for(&mut seen, &call) && read_for(&mut seen, "through the proxy"),
            "call {n}'s result streamed through the proxy: {seen}"
        );
    }

    // The WebSocket upgrade passes the proxy.
    let mut ws_conn = TcpStream::connect(("127.0.0.1", proxy)).unwrap();
    ws_conn
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        ws_conn,
        "GET /api/ws HTTP/1.1\r\nHost: {NAME}\r\nOrigin: https://{NAME}\r\n\
         Authorization: Bearer {TOKEN}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    .unwrap();
    let mut head = [0u8; 12];
    ws_conn.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 101", "{}", String::from_utf8_lossy(&head));
}
