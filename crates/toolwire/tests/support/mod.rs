//! What the binary's integration tests share: free ports, one-shot HTTP, and `toolwire
//! serve` processes started and reaped.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub(crate) mod mcp;
/// The real MCP peers (tests/mcp), shared with toolwire-mcp's tests.
#[path = "../../../toolwire-mcp/tests/support/peers.rs"]
pub(crate) mod peers;
pub(crate) mod provider;

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// See [`peers::free_port`]: never the same port twice in one test process.
pub(crate) fn free_port() -> u16 {
    peers::free_port()
}

/// One HTTP/1.1 exchange over a fresh connection: the status and the body.
pub(crate) fn http(port: u16, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    try_http(port, method, path, body, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("{method} {path}: no HTTP answer"))
}

/// The same exchange, `None` when the connection broke or the answer was not HTTP (a
/// server under a fault may answer badly); `timeout` bounds each read.
pub(crate) fn try_http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&str>,
    timeout: Duration,
) -> Option<(u16, String)> {
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    tcp.set_read_timeout(Some(timeout)).ok()?;
    let body = body.unwrap_or("");
    write!(
        tcp,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut bytes = Vec::new();
    tcp.read_to_end(&mut bytes).ok()?;
    // Media bodies are not text; they are only checked by status and length here.
    let answer = String::from_utf8_lossy(&bytes).into_owned();
    let status = answer.get(9..12)?.parse().ok()?;
    // Chunked bodies (axum's JSON is not chunked, but be safe) are left as they came.
    let (_, rest) = answer.split_once("\r\n\r\n")?;
    Some((status, rest.to_owned()))
}

pub(crate) fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

pub(crate) fn start_serve(
    data: &std::path::Path,
    ws: &std::path::Path,
    port: u16,
) -> std::process::Child {
    start_serve_with(data, ws, port, &[])
}

/// `serve` with more global options first (e.g. `--database-url`).
pub(crate) fn start_serve_with(
    data: &std::path::Path,
    ws: &std::path::Path,
    port: u16,
    global: &[&str],
) -> std::process::Child {
    spawn_serve(data, ws, port, global, &[])
}

/// `serve` with global options before it and its own options (e.g. `--provider`) after.
/// Its MCP servers connect in the background; this returns once each one is ready or
/// failed, so that a test can call their tools at once.
pub(crate) fn spawn_serve(
    data: &std::path::Path,
    ws: &std::path::Path,
    port: u16,
    global: &[&str],
    serve: &[&str],
) -> std::process::Child {
    let child = spawn_serve_listening(data, ws, port, global, serve);
    if serve.iter().any(|a| a.starts_with("--mcp")) {
        for _ in 0..1200 {
            let settled = try_http(port, "GET", "/api/servers", None, Duration::from_secs(5))
                .and_then(|(_, body)| serde_json::from_str::<serde_json::Value>(&body).ok())
                .and_then(|v| {
                    v["servers"].as_array().map(|list| {
                        list.iter()
                            .all(|s| s["state"] == "ready" || s["state"] == "failed")
                    })
                });
            if settled == Some(true) {
                return child;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the MCP servers of serve never got ready or failed");
    }
    child
}

/// [`spawn_serve`] returning as soon as the port answers as a serve, MCP servers or not.
pub(crate) fn spawn_serve_listening(
    data: &std::path::Path,
    ws: &std::path::Path,
    port: u16,
    global: &[&str],
    serve: &[&str],
) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(global)
        .args(["--data-dir", data.to_str().unwrap(), "serve", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--workspace", ws.to_str().unwrap()])
        .args(serve)
        .env_remove("TOOLWIRE_TOKEN")
        .env_remove("TOOLWIRE_PROVIDER")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = drain_log(&mut child);
    // 30 s, not 5: on Postgres + S3 serve migrates and checks its bucket before it
    // listens, and a CI rehearsal beside other builds took longer than 5 s once.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if answers_as_serve(port) {
            return child;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "serve exited before it listened: {status}; its log ends:\n{}",
                log_end(&log)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!(
        "serve did not listen within 30 s; its log ends:\n{}",
        log_end(&log)
    );
}

/// Whether `port` is served by a `toolwire serve`: its `/api/info`, or its guard's
/// refusal (401 when a test set a token, 403 for a Host it does not answer to). An open
/// port alone is not enough: another test's listener (a mock provider bound to port 0)
/// may hold it while this serve failed to bind, and the test's first request would then
/// meet a stranger.
fn answers_as_serve(port: u16) -> bool {
    match try_http(port, "GET", "/api/info", None, Duration::from_secs(2)) {
        Some((200, body)) => body.contains("\"version\""),
        Some((status, body)) => {
            (status == 401 && body.contains("\"unauthorized\""))
                || (status == 403 && body.contains("\"forbidden_host\""))
        }
        None => false,
    }
}

/// The end of a child's log: its last 4 KB or more, kept as its stderr is read (and
/// read on until it closes, so a chatty child never blocks on a full pipe).
type LogEnd = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

/// Reads `child`'s stderr on a thread of its own, keeping its end: CI keeps nothing else
/// of serve's log when it does not come up.
fn drain_log(child: &mut std::process::Child) -> LogEnd {
    let log = LogEnd::default();
    if let Some(mut stderr) = child.stderr.take() {
        let kept = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                let Ok(mut kept) = kept.lock() else { return };
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 8192 {
                    let cut = kept.len() - 4096;
                    kept.drain(..cut);
                }
            }
        });
    }
    log
}

/// What `log` holds so far, as text.
fn log_end(log: &LogEnd) -> String {
    // The child has exited or been killed: a moment for the thread to read its last words.
    std::thread::sleep(Duration::from_millis(100));
    log.lock()
        .map(|kept| String::from_utf8_lossy(&kept).into_owned())
        .unwrap_or_default()
}

/// A server process that is killed when the test ends, passed or failed (a live child
/// would keep the test's output pipe open).
pub(crate) struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Approves a waiting call through the API.
pub(crate) fn approve(port: u16, session: &str, suspension: &str) {
    let (status, body) = http(
        port,
        "POST",
        &format!("/api/sessions/{session}/suspensions/{suspension}"),
        Some(r#"{"type":"approve"}"#),
    );
    assert!(status < 300, "{status} {body}");
}

/// Runs `cmd` with `stdin` as its input (stdout and stderr captured) to its end.
pub(crate) fn with_stdin(cmd: &mut Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The Postgres and S3 the scale-out tests share, from `tests/services/start`; in CI their
/// absence fails the test, elsewhere it is skipped, saying so.
pub(crate) fn scale_out_services() -> Option<(String, String)> {
    let get = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
    match (
        get("TOOLWIRE_TEST_POSTGRES_URL"),
        get("TOOLWIRE_TEST_S3_URL"),
    ) {
        (Some(pg), Some(s3)) => Some((pg, s3)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the scale-out tests: eval \"$(tests/services/start)\""
            );
            eprintln!(
                "SKIPPED: TOOLWIRE_TEST_POSTGRES_URL / TOOLWIRE_TEST_S3_URL are not set \
                 (eval \"$(tests/services/start)\" to run the two-instance test)"
            );
            None
        }
    }
}

/// `--database-url` and `--blob-url` on the scale-out services, the blobs under a prefix
/// of their own (`name` plus the time).
pub(crate) fn scale_out_args(pg: &str, s3: &str, name: &str) -> Vec<String> {
    let (base, query) = s3.split_once('?').unwrap_or((s3, ""));
    let prefix = format!(
        "{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    vec![
        "--database-url".into(),
        pg.into(),
        "--blob-url".into(),
        format!("{}/{prefix}?{query}", base.trim_end_matches('/')),
    ]
}

/// A file the image tool takes for a PNG (it sniffs the signature), of `len` bytes.
pub(crate) fn png(len: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let mut x = 0x9e37_79b9_u32;
    while bytes.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push(x.to_le_bytes()[0]);
    }
    bytes
}
