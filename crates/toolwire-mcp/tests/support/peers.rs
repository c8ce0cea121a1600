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

/// A loopback port free now, and never one this test process was given before: a test
/// binary's tests run at once, and the system may hand a port just released to a second
/// one, whose server then races the first's for it. One CI run lost that race: a test's
/// second `serve` never bound its port, the test talked to another test's server on it,
/// and failed when that test stopped its server.
pub(crate) fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if GIVEN.lock().unwrap().insert(port) {
            return port;
        }
    }
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
