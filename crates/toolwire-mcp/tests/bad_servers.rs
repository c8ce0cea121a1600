//! Servers that misbehave give a clear error within the timeout and leave the rest
//! usable: a command that does not exist, garbage on stdout, an exit mid-call, a 100 MB
//! result. (A server that never answers is in in_process.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use toolwire_core::{ErrorCode, Status};
use toolwire_mcp::{Limits, ServerConfig, Transport};
use toolwire_runtime::{Executor, Scope, ToolCall};

fn bad(mode: &str) -> ServerConfig {
    let script = support::peers::peers_dir().join("bad_server.py");
    support::stdio(
        "bad",
        "python3",
        &[script.display().to_string(), mode.into()],
    )
}

fn limits() -> Limits {
    Limits {
        connect_timeout: Duration::from_secs(3),
        call_timeout: Duration::from_secs(5),
        first_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        ..Limits::default()
    }
}

async fn executor(config: ServerConfig) -> Executor {
    support::executor(vec![config], limits()).await.0
}

#[tokio::test]
async fn a_command_that_does_not_exist_is_named() {
    let config = ServerConfig::new(
        "nope",
        Transport::Stdio {
            command: "toolwire-no-such-mcp-server".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
            inherit: Default::default(),
        },
    );
    let connected = toolwire_mcp::connect_all(vec![config], limits()).await;
    assert!(connected.tools.is_empty());
    let message = connected.failed[0].to_string();
    assert!(
        message.contains("toolwire-no-such-mcp-server") && message.contains("not found"),
        "{message}"
    );
}

#[tokio::test]
async fn garbage_on_stdout_fails_the_handshake_in_time() {
    let started = Instant::now();
    let connected = toolwire_mcp::connect_all(vec![bad("garbage")], limits()).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let message = connected.failed[0].to_string();
    assert!(message.contains("handshake"), "{message}");
}

#[tokio::test]
async fn an_exit_mid_call_is_an_error_result_and_the_server_is_restarted() {
    let ex = executor(bad("exit")).await;
    let scope = Scope::new("s");
    let r = ex
        .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
        .await;
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.error_code(), Some(ErrorCode::Unavailable), "{r:?}");
    let message = r.error.unwrap().message;
    assert!(
        message.contains("exited") && message.contains("crashing on purpose"),
        "{message}"
    );
    // The next call starts the server again.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ok = ex
        .execute(&scope, ToolCall::new("c2", "bad__fine", json!({})))
        .await;
    assert_eq!(ok.status, Status::Success, "{ok:?}");
}

#[tokio::test]
async fn a_100_mb_result_is_refused_within_the_timeout() {
    let ex = executor(bad("huge")).await;
    let scope = Scope::new("s");
    let started = Instant::now();
    let r = ex
        .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
        .await;
    assert_eq!(r.status, Status::Error, "{:?}", r.status);
    assert_eq!(r.error_code(), Some(ErrorCode::Timeout));
    // The timeout names the server and what did not answer.
    let message = &r.error.as_ref().unwrap().message;
    assert!(
        message.contains("MCP server \"bad\" did not answer the call within 5 s"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let ok = ex
        .execute(&scope, ToolCall::new("c2", "bad__fine", json!({})))
        .await;
    assert_eq!(ok.output[0].as_text().unwrap().content, "fine");
}

/// An HTTP endpoint that refuses (403) reads as the refusal, not as rmcp's type names.
#[tokio::test]
async fn an_http_refusal_reads_without_rust_type_names() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut tcp, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = tcp.read(&mut buf).await;
            let body = "not for you";
            let answer = format!(
                "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tcp.write_all(answer.as_bytes()).await;
        }
    });
    let config = ServerConfig::new(
        "remote",
        Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Default::default(),
        },
    );
    let connected = toolwire_mcp::connect_all(vec![config], limits()).await;
    let why = connected.failed[0].to_string();
    assert!(why.contains("MCP server `remote`"), "{why}");
    assert!(why.contains("403 Forbidden"), "{why}");
    assert!(!why.contains("::"), "{why}");
}

/// One second of 4 KB progress notifications (tens of thousands) becomes a bounded number
/// of stored events, each message cut, and the call still answers.
#[tokio::test]
async fn a_progress_flood_is_coalesced() {
    let (ex, events) = support::executor_and_events(vec![bad("flood")], limits()).await;
    let scope = Scope::new("s");
    let started = Instant::now();
    let r = ex
        .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
        .await;
    let took = started.elapsed();
    assert_eq!(r.status, Status::Success, "{r:?}");
    let text = format!("{:?}", r.output[0].data);
    let sent: u64 = text
        .split("sent ")
        .nth(1)
        .and_then(|t| t.trim_matches(|c: char| !c.is_ascii_digit()).parse().ok())
        .unwrap();
    assert!(sent > 1000, "the server flooded: {sent}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stored = events.last_seq("s").await.unwrap();
    // 10 a second at most while the call ran, plus one held back, and the call's own
    // start and result events.
    let bound = (took.as_secs_f64() * 10.0).ceil() as u64 + 4;
    assert!(
        stored <= bound,
        "{stored} events stored for {sent} notifications in {took:?}"
    );
}
