//! `toolwire serve` as a person runs it: it prints its URL, answers, refuses a public
//! address without a token in one line, and stops cleanly on SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn serve_prints_its_url_answers_and_stops_on_sigterm() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args([
            "--data-dir",
            data.path().to_str().unwrap(),
            "serve",
            "--addr",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .env_remove("TOOLWIRE_TOKEN")
        .env_remove("TOOLWIRE_PROVIDER")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        format!("toolwire is serving at http://127.0.0.1:{port}/")
    );

    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        tcp,
        "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("stopped"), "{rest}");
}

#[test]
fn a_public_address_without_a_token_is_one_line_error() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args([
            "--data-dir",
            data.path().to_str().unwrap(),
            "serve",
            "--addr",
            "0.0.0.0:0",
        ])
        .env_remove("TOOLWIRE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("token"), "{stderr}");
}

/// One HTTP/1.1 exchange over a fresh connection: the status and the body.
fn http(port: u16, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = body.unwrap_or("");
    write!(
        tcp,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap();
    // Chunked bodies (axum's JSON is not chunked, but be safe) are left as they came.
    let _ = head;
    (status, rest.to_owned())
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn start_serve(data: &std::path::Path, ws: &std::path::Path, port: u16) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["--data-dir", data.to_str().unwrap(), "serve", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--workspace", ws.to_str().unwrap()])
        .env_remove("TOOLWIRE_TOKEN")
        .env_remove("TOOLWIRE_PROVIDER")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("serve did not start");
}

/// Fault: the server is SIGKILLed while an approved call runs. After a restart nothing
/// is lost or renumbered: the call is still in the history, the model view answers it
/// (as interrupted), its event numbers go on from where they were, and new calls work.
#[test]
fn a_server_killed_mid_call_loses_nothing_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "still here\n").unwrap();
    let port = free_port();
    let mut server = start_serve(data.path(), ws.path(), port);
    let (status, body) = http(port, "POST", "/api/sessions", Some(r#"{"title":"fault"}"#));
    assert_eq!(status, 201, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let (status, body) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/calls"),
        Some(r#"{"tool":"run","input":{"command":"sleep 3; echo finished"}}"#),
    );
    assert_eq!(status, 202, "{body}");
    let call_id = json(&body)["callId"].as_str().unwrap().to_owned();
    let mut pending = serde_json::Value::Null;
    for _ in 0..100 {
        let (_, body) = http(
            port,
            "GET",
            &format!("/api/sessions/{id}/suspensions"),
            None,
        );
        pending = json(&body);
        if pending.as_array().is_some_and(|p| !p.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let suspension = pending[0]["suspension"]["id"].as_str().unwrap().to_owned();
    let (status, body) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/suspensions/{suspension}"),
        Some(r#"{"type":"approve"}"#),
    );
    assert!(status < 300, "{status} {body}");
    std::thread::sleep(Duration::from_millis(500));
    let (_, before) = http(port, "GET", &format!("/api/sessions/{id}"), None);
    let last_seq = json(&before)["lastEventSeq"].as_u64().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();

    let port = free_port();
    let mut server = start_serve(data.path(), ws.path(), port);
    let (status, body) = http(port, "GET", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 200, "{body}");
    let session = json(&body);
    assert!(
        session["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"]["toolCalls"][0]["id"] == call_id.as_str()),
        "the call is in the history: {body}"
    );
    assert_eq!(session["lastEventSeq"].as_u64().unwrap(), last_seq);
    // The model view pairs the interrupted call with an answer.
    let (status, body) = http(
        port,
        "GET",
        &format!("/api/sessions/{id}/export?provider=anthropic"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let export = json(&body);
    let answered = export["messages"].as_array().unwrap().iter().any(|m| {
        m["content"].as_array().is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b["type"] == "tool_result" && b["tool_use_id"] == call_id.as_str())
        })
    });
    assert!(answered, "the call is answered in the model view: {body}");
    // Work goes on, numbered after what was there.
    let (status, _) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/calls"),
        Some(r#"{"tool":"read_file","input":{"path":"a.txt"}}"#),
    );
    assert_eq!(status, 202);
    let mut after = 0;
    for _ in 0..100 {
        let (_, body) = http(port, "GET", &format!("/api/sessions/{id}"), None);
        after = json(&body)["lastEventSeq"].as_u64().unwrap();
        if after > last_seq + 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        after > last_seq + 1,
        "events go on after {last_seq}: {after}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
}
