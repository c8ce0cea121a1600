//! A 2026-07-28 server on the official Python SDK (`mcp` 2.x from PyPI, installed into
//! tests/mcp/venv by `.ci/run`): its tools answer `input_required`; each call suspends,
//! and the answer resumes it, over one round and over two.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use toolwire_core::{Resolution, ToolCall};
use toolwire_core::{Status, SuspensionReason};
use toolwire_mcp::Limits;
use toolwire_runtime::Scope;

#[tokio::test]
async fn input_required_suspends_and_the_answer_resumes_the_call() {
    let Some((python, args)) = support::peers::python_mrtr() else {
        return;
    };
    let connected = toolwire_mcp::connect_all(
        vec![support::stdio("py", &python, &args)],
        Limits::default(),
    )
    .await;
    assert_eq!(
        connected.servers[0].1, "2026-07-28",
        "the newest revision is negotiated"
    );
    let (ex, _) = support::executor_of(connected);
    let scope = Scope::new("s");

    let r = ex
        .execute(
            &scope,
            ToolCall::new("c1", "py__book_table", json!({"restaurant": "Chez Rust"})),
        )
        .await
        .into_result();
    assert_eq!(r.status, Status::Suspended, "{r:?}");
    let s = r.suspension.unwrap();
    assert_eq!(s.reason, SuspensionReason::Input);
    assert_eq!(s.prompt, "Who is the table at Chez Rust for?");
    assert_eq!(
        s.input_schema.as_ref().unwrap()["required"],
        json!(["name", "guests"])
    );
    let done = ex
        .resolve(
            &s.id,
            Resolution::Answer {
                value: json!({"name": "Ada", "guests": 2}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.status, Status::Success, "{done:?}");
    assert_eq!(
        done.output[0].as_text().unwrap().content,
        "Booked Chez Rust for Ada, 2 guests"
    );

    let r = ex
        .execute(&scope, ToolCall::new("c2", "py__two_rounds", json!({})))
        .await
        .into_result();
    let s1 = r.suspension.unwrap();
    assert_eq!(s1.prompt, "First course?");
    let round2 = ex
        .resolve(
            &s1.id,
            Resolution::Answer {
                value: json!({"dish": "soup"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    let s2 = round2.suspension.expect("a second round");
    assert_eq!(s2.prompt, "Second course?");
    let done = ex
        .resolve(
            &s2.id,
            Resolution::Answer {
                value: json!({"dish": "pie"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.output[0].as_text().unwrap().content, "soup then pie");
}

/// A decline or a cancel ends an `input_required` call (sent back, a server that only
/// asks again would loop), and a server that asks again whatever the answer is stopped
/// after the configured number of rounds.
#[tokio::test]
async fn a_decline_ends_the_call_and_endless_questions_are_capped() {
    let Some((python, args)) = support::peers::python_mrtr() else {
        return;
    };
    let limits = Limits {
        max_input_rounds: 3,
        ..Limits::default()
    };
    let connected =
        toolwire_mcp::connect_all(vec![support::stdio("py", &python, &args)], limits).await;
    let (ex, _) = support::executor_of(connected);
    let scope = Scope::new("s");
    for (call, resolution, code) in [
        ("d", Resolution::Deny { reason: None }, "denied"),
        ("c", Resolution::Cancel { reason: None }, "cancelled"),
    ] {
        let r = ex
            .execute(&scope, ToolCall::new(call, "py__ask_forever", json!({})))
            .await
            .into_result();
        let s = r.suspension.unwrap();
        let done = ex.resolve(&s.id, resolution).await.unwrap().into_result();
        assert_eq!(done.status, Status::Error, "{done:?}");
        assert_eq!(done.error.as_ref().unwrap().code.as_deref(), Some(code));
    }
    let mut r = ex
        .execute(&scope, ToolCall::new("e", "py__ask_forever", json!({})))
        .await
        .into_result();
    let mut rounds = 0;
    while let Some(s) = r.suspension.clone() {
        rounds += 1;
        assert!(rounds <= 4, "not capped");
        r = ex
            .resolve(
                &s.id,
                Resolution::Answer {
                    value: json!({"ok": true}),
                },
            )
            .await
            .unwrap()
            .into_result();
    }
    assert_eq!(r.status, Status::Error, "{r:?}");
    let error = r.error.unwrap();
    assert_eq!(error.code.as_deref(), Some("too_many_rounds"));
    assert!(
        error
            .message
            .contains("3 answers were given and it asked again"),
        "{}",
        error.message
    );
}

/// A 2026-07-28 server that takes 12 s to start (markitdown-mcp takes about 9 s, some
/// more) is waited for, within its start-up limit: one process, on 2026-07-28. rmcp's
/// own probe gives up on `server/discover` after 10 s and falls back to `initialize`,
/// whose answer the late discover answer then breaks: the server was started twice,
/// and spoke 2025-11-25 with nobody told.
#[tokio::test]
async fn a_server_slow_to_start_is_waited_for_and_speaks_the_newest_revision() {
    let Some((python, mut args)) = support::peers::python_mrtr() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    args.extend(["--slow-start".into(), "12".into()]);
    args.push(starts.display().to_string());
    let connected = toolwire_mcp::connect_all(
        vec![support::stdio("slow", &python, &args)],
        Limits::default(),
    )
    .await;
    assert!(connected.failed.is_empty(), "{:?}", connected.failed);
    assert_eq!(connected.servers[0].1, "2026-07-28", "never downgraded");
    let status = toolwire_tool::ToolSource::status(connected.servers[0].0.as_ref());
    assert_eq!(status.protocol.as_deref(), Some("2026-07-28"));
    assert_eq!(status.warning, None, "nothing to warn of: {status:?}");
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 1, "started once, not restarted");
    assert!(
        connected
            .tools
            .iter()
            .any(|t| toolwire_tool::Tool::schema(t.as_ref()).name == "slow__book_table"),
        "its tools are listed"
    );
}
