//! Servers that misbehave give a clear error within the timeout and leave the rest
//! usable: a command that does not exist, garbage on stdout, an exit mid-call, a 100 MB
//! result, a server that asks after every answer. (A server that never answers is in
//! in_process.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use toolwire_core::{ErrorCode, Status};
use toolwire_core::{Resolution, ToolCall};
use toolwire_mcp::{Limits, ServerConfig, Transport};
use toolwire_runtime::{Executor, Scope};
use toolwire_tool::Tool;

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

/// A call's timeout far above the time a large answer takes to read, even on a loaded
/// machine: a call that ends well before it was not waiting for it.
const LONG_TIMEOUT: Duration = Duration::from_secs(60);

/// An executor whose calls wait [`LONG_TIMEOUT`].
async fn patient_executor(config: ServerConfig) -> Executor {
    let limits = Limits {
        call_timeout: LONG_TIMEOUT,
        ..limits()
    };
    support::executor(vec![config], limits).await.0
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

/// A server that never answers `server/discover` is asked the 2025-11-25 way once its
/// start-up time is up, and works; that it speaks the older revision is said, with why.
#[tokio::test]
async fn a_server_deaf_to_discover_speaks_2025_11_25_and_that_is_said() {
    let connected = toolwire_mcp::connect_all(vec![bad("deaf")], limits()).await;
    assert!(connected.failed.is_empty(), "{:?}", connected.failed);
    assert_eq!(connected.servers[0].1, "2025-11-25");
    let status = toolwire_tool::ToolSource::status(connected.servers[0].0.as_ref());
    let warning = status.warning.unwrap_or_default();
    assert!(
        warning.contains("speaks 2025-11-25")
            && warning.contains("did not answer server/discover within 3 s"),
        "{warning}"
    );
}

#[tokio::test]
async fn an_exit_mid_call_is_an_error_result_and_the_server_is_restarted() {
    let ex = executor(bad("exit")).await;
    let scope = Scope::new("s");
    let r = ex
        .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
        .await
        .into_result();
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
        .await
        .into_result();
    assert_eq!(ok.status, Status::Success, "{ok:?}");
}

/// A plain answer over stdio is read from its text and kept as the server wrote it
/// (Python's `json.dumps` puts a space after each `:` and `,`, which a JSON tree written
/// again would not): what a store keeps as the payload received is the server's own
/// bytes, and the result is what normalizing the parsed answer makes. (The servers here
/// misbehave only when their `work` tool is called; `fine` answers.)
#[tokio::test]
async fn a_plain_answer_is_kept_as_the_server_wrote_it() {
    let connected = toolwire_mcp::connect_all(vec![bad("exit")], limits()).await;
    let fine = connected
        .tools
        .iter()
        .find(|t| t.schema().name == "bad__fine")
        .expect("the bad server's fine tool");
    let ctx = toolwire_tool::ToolContext::detached("c1").keeping_received();
    let out = fine.execute(json!({}), ctx.clone()).await.unwrap();
    let toolwire_tool::Output::Result(result) = out else {
        panic!("not a typed result: {out:?}")
    };
    let text = r#"{"content": [{"type": "text", "text": "fine"}]}"#;
    assert_eq!(
        ctx.take_received(),
        Some(toolwire_tool::Received::Text(text.to_owned()))
    );
    let expected = toolwire_normalize::normalize_value(
        serde_json::from_str(text).unwrap(),
        &toolwire_core::CallRef::new("c1", "bad__fine"),
    )
    .result;
    assert_eq!(*result, expected);
}

/// A result over the 16 MiB limit of one message is dropped unread, and its call hears
/// so at once (not at its timeout, as if the server had not answered): 100 MB, and
/// 17 MiB with its id after the result (the key order of the TypeScript SDK). The
/// connection goes on.
#[tokio::test]
async fn a_result_over_16_mib_is_refused_at_once_saying_its_size() {
    for (mode, size) in [("huge", "100.0 MiB"), ("oversized", "17.0 MiB")] {
        let ex = patient_executor(bad(mode)).await;
        let scope = Scope::new("s");
        let started = Instant::now();
        let r = ex
            .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
            .await
            .into_result();
        let elapsed = started.elapsed();
        assert_eq!(r.status, Status::Error, "{mode}: {:?}", r.status);
        assert_eq!(
            r.error_code(),
            Some(ErrorCode::Other("result_too_large".into()))
        );
        let message = &r.error.as_ref().unwrap().message;
        assert_eq!(
            *message,
            format!(
                "MCP server \"bad\"'s result was {size}, over the 16 MiB limit of one message, \
                 so toolwire dropped it unread; ask the tool for less (a smaller page, a \
                 narrower query)"
            ),
        );
        assert!(elapsed < LONG_TIMEOUT / 2, "{mode}: {elapsed:?}");
        let ok = ex
            .execute(&scope, ToolCall::new("c2", "bad__fine", json!({})))
            .await
            .into_result();
        assert_eq!(ok.output[0].as_text().unwrap().content, "fine", "{mode}");
    }
}

/// Over streamable HTTP too, a result over 16 MiB ends its call at once (not at its
/// timeout): as the POST's JSON body, saying so; as one event of its SSE stream, rmcp
/// ends the connection, and the call says the connection closed, not that a server
/// exited (tests/mcp/bad_http_server.py).
#[tokio::test]
async fn a_result_over_16_mib_over_http_is_refused_at_once() {
    for mode in ["json", "sse"] {
        let port = support::peers::free_port();
        let script = support::peers::peers_dir().join("bad_http_server.py");
        let server = support::peers::Child(
            std::process::Command::new("python3")
                .arg(&script)
                .arg(port.to_string())
                .arg(mode)
                .spawn()
                .unwrap(),
        );
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let config = support::trusted(ServerConfig::new(
            "bad",
            Transport::Http {
                url: format!("http://127.0.0.1:{port}/mcp"),
                headers: Default::default(),
            },
        ));
        let ex = patient_executor(config).await;
        let scope = Scope::new("s");
        let started = Instant::now();
        let r = ex
            .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
            .await
            .into_result();
        let elapsed = started.elapsed();
        assert_eq!(r.status, Status::Error, "{mode}: {r:?}");
        let message = &r.error.as_ref().unwrap().message;
        if mode == "json" {
            // rmcp stops reading the body at its limit: the size is not known.
            assert_eq!(
                r.error_code(),
                Some(ErrorCode::Other("result_too_large".into()))
            );
            assert_eq!(
                *message,
                "MCP server \"bad\"'s result was over the 16 MiB limit of one message, so \
                 toolwire dropped it unread; ask the tool for less (a smaller page, a narrower \
                 query)"
            );
        } else {
            // rmcp ends the connection on an SSE event over its limit, and tells the call
            // only that it closed; no process exited.
            assert_eq!(r.error_code(), Some(ErrorCode::Unavailable), "{message}");
            assert!(
                message.ends_with(
                    "the connection to the server closed before its answer to the call was read"
                ),
                "{message}"
            );
        }
        assert!(elapsed < LONG_TIMEOUT / 2, "{mode}: {elapsed:?}");
        let ok = ex
            .execute(&scope, ToolCall::new("c2", "bad__fine", json!({})))
            .await
            .into_result();
        assert_eq!(
            ok.output[0].as_text().unwrap().content,
            "fine",
            "{mode}: {ok:?}"
        );
        drop(server);
    }
}

/// A 2025-11-25 server that asks again after every answer (here declines) reaches the
/// person at most `max_input_rounds` times in one call: the next question is declined
/// without asking anyone and the call stopped, saying so; the server hears the cancel.
#[tokio::test]
async fn a_server_that_asks_after_every_decline_is_stopped_at_the_limit() {
    let ex = executor(bad("elicit")).await;
    let scope = Scope::new("s");
    let mut r = ex
        .execute(&scope, ToolCall::new("c1", "bad__work", json!({})))
        .await
        .into_result();
    let mut asked = 0u32;
    while let Some(s) = r.suspension.clone() {
        asked += 1;
        assert_eq!(s.prompt, format!("Question {asked}?"));
        assert!(asked <= 40, "not capped");
        r = ex
            .resolve(&s.id, Resolution::Deny { reason: None })
            .await
            .unwrap()
            .into_result();
    }
    assert_eq!(asked, Limits::default().max_input_rounds, "{r:?}");
    assert_eq!(r.status, Status::Error, "{r:?}");
    let error = r.error.unwrap();
    assert_eq!(error.code.as_deref(), Some("too_many_rounds"));
    assert_eq!(
        error.message,
        "the MCP server kept asking for input: 16 questions were put to the person in this \
         call and it asked again, so toolwire declined that one without asking anyone and \
         stopped the call (TOOLWIRE_MCP_MAX_INPUT_ROUNDS raises the limit)"
    );
    // The connection is fine, and the next call asks from the start again.
    let ok = ex
        .execute(&scope, ToolCall::new("c2", "bad__fine", json!({})))
        .await
        .into_result();
    assert_eq!(ok.status, Status::Success, "{ok:?}");
    assert_eq!(ok.output[0].as_text().unwrap().content, "fine");
    let again = ex
        .execute(&scope, ToolCall::new("c3", "bad__work", json!({})))
        .await
        .into_result();
    assert_eq!(
        again.suspension.map(|s| s.prompt).as_deref(),
        Some("Question 1?")
    );
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
        .await
        .into_result();
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
