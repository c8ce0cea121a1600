//! `toolwire mcp login` against a protected MCP server toolwire did not write (the Python
//! SDK's MCPServer with its OAuth routes, `tests/mcp/oauth_server.py`), with this test in
//! the browser's place: it reads the page the command prints, approves on the server's
//! own consent form, and follows the redirect to the command's loopback listener, after
//! a forged redirect that the listener must turn away. Then `tools` sees the server ready,
//! and after `mcp logout` waiting for a login again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::mcp::{stderr_of, stdout_of, toolwire};

fn python() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/venv/bin/python");
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} is missing: run `python3 -m venv tests/mcp/venv && tests/mcp/venv/bin/pip install \
         -r tests/mcp/requirements.txt` (.ci/run does)",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIPPED: {why}");
    None
}

/// Kills the child when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 request on loopback: the status and the `Location`, if any.
/// The status of an MCP `initialize` sent with `token` as its Bearer token.
fn status_with_token(url: &str, token: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn http(method: &str, url: &str, form: Option<&str>) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = form.unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    if form.is_some() {
        request.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let location = answer
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or(l.strip_prefix("Location: "))
        })
        .map(str::to_owned);
    (status, location, answer)
}

#[test]
fn login_on_loopback_then_tools_then_logout() {
    let Some(python) = python() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/oauth_server.py");
    let _server = Killed(
        Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"guarded": {{"url": "{base}/mcp"}}}}}}"#),
    )
    .unwrap();
    let config = config.to_str().unwrap();

    let before = toolwire(&data, &["tools", "--mcp-config", config]);
    assert!(
        stdout_of(&before)
            .contains("needs_login: it requires a login (OAuth): run `toolwire mcp login guarded`"),
        "{}",
        stdout_of(&before)
    );

    let mut login = Killed(
        Command::new(env!("CARGO_BIN_EXE_toolwire"))
            .arg("--data-dir")
            .arg(&data)
            .args([
                "mcp",
                "login",
                "guarded",
                "--no-browser",
                "--mcp-config",
                config,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(login.0.stderr.take().unwrap()).lines();
    let page = lines
        .by_ref()
        .map(Result::unwrap)
        .find_map(|l| {
            l.trim()
                .strip_prefix(&format!("{base}/authorize?"))
                .map(|q| q.to_owned())
        })
        .expect("the command printed no page to open");
    let page = format!("{base}/authorize?{page}");
    let (status, consent, _) = http("GET", &page, None);
    assert_eq!(status, 302);
    let consent = consent.unwrap();
    let ticket = consent.split("ticket=").nth(1).unwrap();
    let (status, redirect, _) = http(
        "POST",
        &format!("{base}/consent"),
        Some(&format!("ticket={ticket}")),
    );
    assert_eq!(status, 302);
    let redirect = redirect.unwrap();
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
    // Something else on this machine guesses at the listener: turned away, login waits.
    let listener = &redirect[..redirect.find("/callback").unwrap()];
    let (status, _, _) = http(
        "GET",
        &format!("{listener}/callback?code=forged&state=forged"),
        None,
    );
    assert_eq!(status, 404);
    let (status, _, page) = http("GET", &redirect, None);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("logged in to guarded"), "{page}");
    let ended = login.0.wait().unwrap();
    let said: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(ended.success(), "{said:?}");
    assert!(said.iter().any(|l| l == "logged in to guarded"), "{said:?}");

    let after = toolwire(&data, &["tools", "--mcp-config", config]);
    let listed = stdout_of(&after);
    assert!(
        listed.contains("guarded__whoami"),
        "{listed}\n{}",
        stderr_of(&after)
    );
    assert!(listed.contains("guarded  ready"), "{listed}");

    // The stored access token works until logout revokes it at the server (RFC 7009).
    let stored = std::fs::read_dir(data.join("mcp-auth"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(stored).unwrap()).unwrap();
    let access = stored["credentials"]["token_response"]["access_token"]
        .as_str()
        .expect("no access token stored")
        .to_owned();
    assert_eq!(status_with_token(&format!("{base}/mcp"), &access), 200);
    let out = toolwire(&data, &["mcp", "logout", "guarded", "--mcp-config", config]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("removed and revoked at its authorization server"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(status_with_token(&format!("{base}/mcp"), &access), 401);
    let gone = toolwire(&data, &["tools", "--mcp-config", config]);
    assert!(
        stdout_of(&gone).contains("guarded  needs_login"),
        "{}",
        stdout_of(&gone)
    );
    let unknown = toolwire(&data, &["mcp", "login", "nobody", "--mcp-config", config]);
    assert!(!unknown.status.success());
    assert!(
        stderr_of(&unknown).contains("no MCP server is named \"nobody\" (configured: guarded)"),
        "{}",
        stderr_of(&unknown)
    );
}
