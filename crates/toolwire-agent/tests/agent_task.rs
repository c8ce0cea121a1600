//! Subagents through the `task` tool against a local server speaking each provider's
//! format: a fresh context, no `task` in the child's tools, the child session linked to
//! the parent, only the final report returned (capped), and the delegation guidance in
//! the parent's system prompt only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value as Json, json};
use tokio_util::sync::CancellationToken;
use toolwire_agent::{MAX_TASK_RESULT_CHARS, StopReason, TASK_TOOL_GUIDANCE};
use toolwire_model::Provider;

use support::*;

async fn subagent(provider: Provider) {
    let script = vec![
        // parent, request 1: delegate
        calls(
            "Delegating.",
            &[(
                "t1",
                "task",
                json!({"description": "Find the answer", "prompt": "Echo 42 and report it.",
                       "subagent_type": "explore"}),
            )],
        ),
        // child, request 1: use a tool
        calls("", &[("e1", "echo", json!({"text": "42"}))]),
        // child, request 2: report
        text("The answer is 42."),
        // parent, request 2: answer
        text("The subagent says 42."),
    ];
    let opts = Options {
        with_task: true,
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "What is the answer?", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (out.stop, out.text.as_str()),
        (StopReason::Done, "The subagent says 42.")
    );
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 4);

    // The parent is told when to delegate; the child is not, and cannot delegate.
    let parent_system = system_of(provider, &bodies[0]);
    assert!(parent_system.starts_with("Test instructions.\n\n## Task Tool Usage (Subagents)"));
    assert!(parent_system.ends_with(TASK_TOOL_GUIDANCE.trim()));
    assert!(tool_names(provider, &bodies[0]).contains(&"task".to_owned()));
    let child_system = system_of(provider, &bodies[1]);
    assert!(child_system.starts_with("You are a subagent"));
    assert!(child_system.ends_with("Your role: explore. Search the workspace, find files and explain how things work. Do not change anything."));
    assert!(!child_system.contains("Task Tool Usage"));
    assert_eq!(
        tool_names(provider, &bodies[1]),
        ["read_file", "write_file", "echo", "hang"]
    );

    // Fresh context: the child's first request holds only its prompt.
    let child_first = turns(provider, &bodies[1]);
    let expected_first = match provider {
        Provider::Anthropic => vec![
            json!({"role": "user", "content": [{"type": "text", "text": "Echo 42 and report it."}]}),
        ],
        Provider::OpenaiChat => vec![
            json!({"role": "system", "content": child_system}),
            json!({"role": "user", "content": "Echo 42 and report it."}),
        ],
        Provider::OpenaiResponses => {
            vec![json!({"type": "message", "role": "user", "content": "Echo 42 and report it."})]
        }
        Provider::Gemini => {
            vec![json!({"role": "user", "parts": [{"text": "Echo 42 and report it."}]})]
        }
    };
    assert_eq!(child_first, expected_first);
    // The child's second request carries its own tool result.
    let expected = results_tail(provider, &[("e1", "echo", false, "42")], None);
    assert_eq!(tail(provider, &bodies[2], expected.len()), expected);
    // The parent's second request carries the child's final report as the task result.
    let expected = results_tail(
        provider,
        &[("t1", "task", false, "The answer is 42.")],
        None,
    );
    assert_eq!(tail(provider, &bodies[3], expected.len()), expected);

    // The child session is stored, linked to the parent, and named in the result.
    let children = h.stores.history().child_sessions(&session).await.unwrap();
    assert_eq!(children.len(), 1);
    let child = &children[0];
    assert_eq!(child.parent_id.as_deref(), Some(session.as_str()));
    assert_eq!(child.title.as_deref(), Some("Find the answer"));
    let stored = h
        .stores
        .history()
        .find_result(&session, "t1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.result.metadata.extra.get("childSessionId"),
        Some(&Json::String(child.id.clone()))
    );
    assert_eq!(
        h.transcript(&child.id).await,
        [
            "user:Echo 42 and report it.",
            r#"assistant:["e1"]"#,
            "result:e1:success",
            "assistant:The answer is 42.[]",
        ]
    );
    assert_eq!(
        h.transcript(&session).await,
        [
            "user:What is the answer?",
            r#"assistant:Delegating.["t1"]"#,
            "result:t1:success",
            "assistant:The subagent says 42.[]",
        ]
    );
    let child_events = h.stores.events().events_since(&child.id, 0).await.unwrap();
    let first: Json = serde_json::to_value(&child_events[0]).unwrap();
    assert_eq!(first["type"], "session_started");
    assert_eq!(first["parentCallId"], "t1");
    let last: Json = serde_json::to_value(child_events.last().unwrap()).unwrap();
    assert_eq!(last["type"], "session_ended");
}
per_provider!(subagent);

/// A child that calls `task` anyway gets an unknown-tool error: subagents do not nest.
#[tokio::test]
async fn subagents_cannot_nest() {
    let provider = Provider::Anthropic;
    let script = vec![
        calls(
            "",
            &[(
                "t1",
                "task",
                json!({"description": "outer", "prompt": "Go deeper."}),
            )],
        ),
        calls(
            "",
            &[(
                "t2",
                "task",
                json!({"description": "inner", "prompt": "Deeper still."}),
            )],
        ),
        text("Could not delegate."),
        text("Done."),
    ];
    let opts = Options {
        with_task: true,
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Nest.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Done);
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 4);
    let refused = tail(provider, &bodies[2], 1);
    assert_eq!(
        refused,
        vec![
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": true,
            "content": [{"type": "text", "text": "unknown tool `task`; available tools: read_file, write_file, echo, hang"}]}]})
        ]
    );
    assert_eq!(
        h.stores
            .history()
            .child_sessions(&session)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A long report is cut to 10,000 characters with a marker naming the child session.
#[tokio::test]
async fn long_reports_are_capped_with_a_marker() {
    let provider = Provider::OpenaiChat;
    let report = "x".repeat(MAX_TASK_RESULT_CHARS + 2_345);
    let script = vec![
        calls(
            "",
            &[(
                "t1",
                "task",
                json!({"description": "verbose", "prompt": "Say a lot."}),
            )],
        ),
        text(&report),
        text("Summarized."),
    ];
    let opts = Options {
        with_task: true,
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    h.agent
        .run_turn(&session, "Go.", CancellationToken::new())
        .await
        .unwrap();
    let child = h
        .stores
        .history()
        .child_sessions(&session)
        .await
        .unwrap()
        .remove(0);
    let bodies = h.bodies().await;
    let expected = format!(
        "{}...\n\n[Result truncated - 12345 chars total; the subagent's full transcript is session {}]",
        "x".repeat(MAX_TASK_RESULT_CHARS),
        child.id
    );
    assert_eq!(
        tail(provider, &bodies[2], 1),
        vec![json!({"role": "tool", "tool_call_id": "t1", "content": expected})]
    );
    // The child's own history keeps the whole report.
    assert_eq!(
        h.transcript(&child.id).await.last().unwrap().len(),
        "assistant:".len() + report.len() + "[]".len()
    );
}

/// A cancel while the subagent works ends both: the subagent stores its own cancelled
/// result before the parent's turn returns, and the task call's `cancelled` error still
/// names the child session.
#[tokio::test]
async fn cancel_reaches_the_subagent() {
    let provider = Provider::Gemini;
    let script = vec![
        calls(
            "",
            &[(
                "t1",
                "task",
                json!({"description": "hang", "prompt": "Hang."}),
            )],
        ),
        calls("", &[("h1", "hang", json!({}))]),
        text("Cancelled, as you wished."),
    ];
    let opts = Options {
        with_task: true,
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let cancel = CancellationToken::new();
    let (started, trigger) = (h.hang_started.clone(), cancel.clone());
    tokio::spawn(async move {
        started.notified().await;
        trigger.cancel();
    });
    let out = h.agent.run_turn(&session, "Go.", cancel).await.unwrap();
    assert_eq!(out.stop, StopReason::Cancelled);
    let child = h
        .stores
        .history()
        .child_sessions(&session)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        h.transcript(&child.id).await,
        ["user:Hang.", r#"assistant:["h1"]"#, "result:h1:error"]
    );
    let stored = h
        .stores
        .history()
        .find_result(&session, "t1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.result.error.as_ref().unwrap().code.as_deref(),
        Some("cancelled")
    );
    assert_eq!(
        stored.result.metadata.extra.get("childSessionId"),
        Some(&Json::String(child.id.clone()))
    );
    // The next message continues from valid history.
    h.agent
        .run_turn(&session, "OK.", CancellationToken::new())
        .await
        .unwrap();
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 3);
    assert_eq!(
        tail(provider, &bodies[2], 2),
        vec![
            json!({"role": "user", "parts": [{"functionResponse": {"id": "t1", "name": "task",
                "response": {"error": "cancelled: interrupted before completion"}}}]}),
            json!({"role": "user", "parts": [{"text": "OK."}]}),
        ]
    );
}
