//! Where the real MCP peers live (tests/mcp, installed by `.ci/run` with `npm ci`), and
//! how a test starts one. Missing peers fail under CI and are skipped, said aloud, in a
//! plain `cargo test`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::Duration;

/// tests/mcp at the repository root.
pub(crate) fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// A file under tests/mcp, or `None` (after saying why) when it is not installed here.
pub(crate) fn peer(relative: &str) -> Option<PathBuf> {
    let path = peers_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} is missing: run `npm ci --prefix tests/mcp` (.ci/run does)",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// server-everything's entry point.
pub(crate) fn everything() -> Option<PathBuf> {
    peer("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// server-filesystem's entry point.
pub(crate) fn filesystem() -> Option<PathBuf> {
    peer("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

/// A loopback port free now, never one this test process was given before, and below the
/// system's ephemeral range. A test binary's tests run at once, and the system hands out
/// ports of that range to anyone who binds port 0 or connects out: one CI run's `serve`
/// never bound the port it was given (another test's wiremock, bound to port 0 in the
/// moment between, had it), the test talked to that mock and failed when its test ended.
/// Below the range, only a caller naming the port can take it, and in this process that
/// caller is here.
pub(crate) fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    // Ports 10000..low; a machine whose range starts lower falls back to the range itself.
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let span = low.saturating_sub(10_000);
    if span < 1000 {
        return loop {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            if GIVEN.lock().unwrap().insert(port) {
                break port;
            }
        };
    }
    // A start of this process's own (test binaries run one after another, but a server the
    // last one left behind may still hold its ports: the bind below skips them).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let start = (std::process::id().wrapping_mul(2_654_435_761) ^ nanos) % u32::from(span);
    let mut given = GIVEN.lock().unwrap();
    for step in 0..u32::from(span) {
        let port = 10_000 + u16::try_from((start + step) % u32::from(span)).unwrap();
        if !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free loopback port below {low}");
}

/// A child killed when dropped.
pub(crate) struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// server-everything over streamable HTTP on `port`, once it accepts connections.
pub(crate) async fn spawn_http(script: &std::path::Path, port: u16) -> Child {
    let child = std::process::Command::new("node")
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node runs");
    let child = Child(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("server-everything did not listen on port {port}");
}

/// The Python SDK's 2026-07-28 server (tests/mcp/mrtr_server.py) in its venv, as a
/// command and its arguments.
pub(crate) fn python_mrtr() -> Option<(String, Vec<String>)> {
    let python = peer("venv/bin/python")?;
    let script = peers_dir().join("mrtr_server.py");
    Some((
        python.display().to_string(),
        vec![script.display().to_string()],
    ))
}
