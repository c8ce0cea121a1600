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
