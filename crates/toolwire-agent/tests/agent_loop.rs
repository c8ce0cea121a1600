//! The agent loop end to end against a local server speaking each provider's wire format:
//! a text turn, parallel calls (results in call order, errors flagged), approval and
//! denial, cancel mid-call, the iteration limit, and a model error. The request bodies of
//! the second and later turns are asserted as concrete JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolwire_agent::{AgentError, StopReason};
use toolwire_core::Resolution;
use toolwire_model::Provider;

use support::*;

async fn text_turn(provider: Provider) {
    let h = Harness::new(provider, vec![text("Hello there.")], Options::default()).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Hi!", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Done);
    assert_eq!(out.text, "Hello there.");
    assert_eq!(out.iterations, 1);
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 1);
    assert_eq!(system_of(provider, &bodies[0]), "Test instructions.");
    assert_eq!(
        tool_names(provider, &bodies[0]),
        ["read_file", "write_file", "echo", "hang"]
    );
    let user = match provider {
        Provider::Anthropic => {
            json!({"role": "user", "content": [{"type": "text", "text": "Hi!"}]})
        }
        Provider::OpenaiChat => json!({"role": "user", "content": "Hi!"}),
        Provider::OpenaiResponses => json!({"type": "message", "role": "user", "content": "Hi!"}),
        Provider::Gemini => json!({"role": "user", "parts": [{"text": "Hi!"}]}),
    };
    assert_eq!(tail(provider, &bodies[0], 1), vec![user]);
    assert_eq!(
        h.transcript(&session).await,
        ["user:Hi!", "assistant:Hello there.[]"]
    );
    assert_eq!(
        h.event_tags(&session).await,
        ["session_started", "turn_started:1", "turn_ended:1"]
    );
}
per_provider!(text_turn);

/// Three calls in one reply; the first finishes last, the third fails. The next request
/// carries all three results in one turn, in call order, the failure flagged.
async fn parallel_calls(provider: Provider) {
    let script = vec![
        calls(
            "Reading.",
            &[
                ("c1", "echo", json!({"text": "slow first", "delay_ms": 300})),
                ("c2", "read_file", json!({"path": "notes.txt"})),
                ("c3", "read_file", json!({"path": "missing.txt"})),
            ],
        ),
        text("Done."),
    ];
    let h = Harness::new(provider, script, Options::default()).await;
    std::fs::write(h.workspace.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Read my notes.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (out.stop, out.text.as_str(), out.iterations),
        (StopReason::Done, "Done.", 2)
    );
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 2);
    let expected = results_tail(
        provider,
        &[
            ("c1", "echo", false, "slow first"),
            ("c2", "read_file", false, "File: notes.txt\nalpha\nbeta\n"),
            ("c3", "read_file", true, "`missing.txt` does not exist"),
        ],
        None,
    );
    assert_eq!(tail(provider, &bodies[1], expected.len()), expected);
    // The assistant turn before them echoes the calls in order.
    let all = turns(provider, &bodies[1]);
    match provider {
        Provider::Anthropic => assert_eq!(
            all[1],
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "c1", "name": "echo", "input": {"text": "slow first", "delay_ms": 300}},
                {"type": "tool_use", "id": "c2", "name": "read_file", "input": {"path": "notes.txt"}},
                {"type": "tool_use", "id": "c3", "name": "read_file", "input": {"path": "missing.txt"}},
            ]})
        ),
        Provider::OpenaiChat => {
            let ids: Vec<&str> = all[2]["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap())
                .collect();
            assert_eq!(ids, ["c1", "c2", "c3"]);
            assert_eq!(all[2]["content"], "Reading.");
        }
        Provider::OpenaiResponses => assert_eq!(
            all[2..5].to_vec(),
            vec![
                json!({"type": "function_call", "call_id": "c1", "name": "echo", "arguments": "{\"text\":\"slow first\",\"delay_ms\":300}"}),
                json!({"type": "function_call", "call_id": "c2", "name": "read_file", "arguments": "{\"path\":\"notes.txt\"}"}),
                json!({"type": "function_call", "call_id": "c3", "name": "read_file", "arguments": "{\"path\":\"missing.txt\"}"}),
            ]
        ),
        Provider::Gemini => assert_eq!(
            all[1],
            json!({"role": "model", "parts": [
                {"text": "Reading."},
                {"functionCall": {"id": "c1", "name": "echo", "args": {"text": "slow first", "delay_ms": 300}}},
                {"functionCall": {"id": "c2", "name": "read_file", "args": {"path": "notes.txt"}}},
                {"functionCall": {"id": "c3", "name": "read_file", "args": {"path": "missing.txt"}}},
            ]})
        ),
    }
    // Each result is stored as its call finishes (then announced), so the history holds
    // them in completion order: the slow first call last. The model still got them in
    // call order (the request bodies above).
    let transcript = h.transcript(&session).await;
    assert_eq!(
        transcript[..2],
        [
            "user:Read my notes.",
            r#"assistant:Reading.["c1", "c2", "c3"]"#
        ]
    );
    let mut results = transcript[2..5].to_vec();
    assert_eq!(results[2], "result:c1:success", "{transcript:?}");
    results.sort();
    assert_eq!(
        results,
        ["result:c1:success", "result:c2:success", "result:c3:error"]
    );
    assert_eq!(transcript[5..], ["assistant:Done.[]"]);
    let tags = h.event_tags(&session).await;
    assert_eq!(tags[..2], ["session_started", "turn_started:1"]);
    assert_eq!(
        tags[tags.len() - 3..],
        ["turn_ended:1", "turn_started:2", "turn_ended:2"]
    );
    // The slow first call finished last: the events show completion order.
    let finished: Vec<&String> = tags
        .iter()
        .filter(|t| t.starts_with("tool_result"))
        .collect();
    assert_eq!(finished.last().unwrap().as_str(), "tool_result:c1");
    // Announced in the order stored: a client that reloads on an event finds its result.
    let stored_order: Vec<String> = transcript[2..5]
        .iter()
        .map(|r| format!("tool_result:{}", &r["result:".len()..r.rfind(':').unwrap()]))
        .collect();
    assert_eq!(finished, stored_order.iter().collect::<Vec<_>>());
}
per_provider!(parallel_calls);

/// Two writes that need approval: the person approves the first and denies the second.
async fn approval_and_denial(provider: Provider) {
    let script = vec![
        calls(
            "",
            &[
                (
                    "w1",
                    "write_file",
                    json!({"path": "yes.txt", "content": "approved"}),
                ),
                (
                    "w2",
                    "write_file",
                    json!({"path": "no.txt", "content": "denied"}),
                ),
            ],
        ),
        text("One written, one refused."),
    ];
    let approver = ScriptedApprover::new(vec![
        Resolution::Approve,
        Resolution::Deny {
            reason: Some("not that file".into()),
        },
    ]);
    let opts = Options {
        approver: approver.clone(),
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Write both.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Done);
    let asked: Vec<String> = approver
        .asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| format!("{}:{}", r.call.id, r.suspension.prompt))
        .collect();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[0].starts_with("w1:Allow write_file to run with"),
        "{asked:?}"
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join("yes.txt")).unwrap(),
        "approved"
    );
    assert!(!h.workspace.path().join("no.txt").exists());
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 2);
    let written = tail(provider, &bodies[1], 2);
    let denial = "The user denied this call to write_file: not that file.";
    match provider {
        Provider::Anthropic => {
            let blocks = written[1]["content"].as_array().unwrap();
            assert_eq!(blocks.len(), 2);
            assert_eq!(blocks[0]["tool_use_id"], "w1");
            assert_eq!(blocks[0].get("is_error"), None);
            assert_eq!(
                blocks[1],
                json!({"type": "tool_result", "tool_use_id": "w2", "is_error": true,
                       "content": [{"type": "text", "text": denial}]})
            );
        }
        Provider::OpenaiChat => {
            assert_eq!(written[0]["tool_call_id"], "w1");
            assert!(!written[0]["content"].as_str().unwrap().starts_with("Error"));
            assert_eq!(
                written[1],
                json!({"role": "tool", "tool_call_id": "w2", "content": format!("Error: {denial}")})
            );
        }
        Provider::OpenaiResponses => {
            assert_eq!(written[0]["call_id"], "w1");
            assert_eq!(
                written[1],
                json!({"type": "function_call_output", "call_id": "w2", "output": format!("Error: {denial}")})
            );
        }
        Provider::Gemini => {
            let parts = written[1]["parts"].as_array().unwrap();
            assert_eq!(parts[0]["functionResponse"]["id"], "w1");
            assert!(
                parts[0]["functionResponse"]["response"]
                    .get("output")
                    .is_some()
            );
            assert_eq!(
                parts[1],
                json!({"functionResponse": {"id": "w2", "name": "write_file", "response": {"error": denial}}})
            );
        }
    }
    assert_eq!(
        h.transcript(&session).await[2..4],
        ["result:w1:success", "result:w2:error"]
    );
    // Nothing is left pending.
    assert!(
        h.stores
            .suspensions()
            .suspensions(&session)
            .await
            .unwrap()
            .is_empty()
    );
}
per_provider!(approval_and_denial);

/// A cancel while a call runs: the running call gets a `cancelled` error, the finished
/// one keeps its result, both are stored, no further request is made; the next message
/// continues from a valid history.
async fn cancel_mid_call(provider: Provider) {
    let script = vec![
        calls(
            "Working.",
            &[
                ("k1", "echo", json!({"text": "quick"})),
                ("k2", "hang", json!({})),
            ],
        ),
        text("Stopped as asked."),
    ];
    let h = Harness::new(provider, script, Options::default()).await;
    let session = h.session().await;
    let cancel = CancellationToken::new();
    let started = h.hang_started.clone();
    let trigger = cancel.clone();
    let mut events = h.events.subscribe(&session, 0).await.unwrap();
    // Cancel once the quick call has its result and the hanging one is running.
    tokio::spawn(async move {
        started.notified().await;
        while let Some(Ok(e)) = events.next().await {
            if let toolwire_core::EventKind::ToolResult { result, .. } = e.kind
                && result.call_id == "k1"
            {
                break;
            }
        }
        trigger.cancel();
    });
    let out = h.agent.run_turn(&session, "Go.", cancel).await.unwrap();
    assert_eq!(out.stop, StopReason::Cancelled);
    assert_eq!(out.iterations, 1);
    assert_eq!(h.bodies().await.len(), 1);
    assert_eq!(
        h.transcript(&session).await,
        [
            "user:Go.",
            r#"assistant:Working.["k1", "k2"]"#,
            "result:k1:success",
            "result:k2:error",
        ]
    );
    let out = h
        .agent
        .run_turn(&session, "Never mind.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (out.stop, out.text.as_str()),
        (StopReason::Done, "Stopped as asked.")
    );
    let bodies = h.bodies().await;
    let expected = results_tail(
        provider,
        &[
            ("k1", "echo", false, "quick"),
            (
                "k2",
                "hang",
                true,
                "cancelled: interrupted before completion",
            ),
        ],
        Some("Never mind."),
    );
    assert_eq!(tail(provider, &bodies[1], expected.len()), expected);
}
per_provider!(cancel_mid_call);

/// The model keeps calling tools: the turn stops after `max_iterations` requests, and
/// the history ends with the last results (valid for the next message).
async fn iteration_limit(provider: Provider) {
    let script = vec![
        calls("", &[("i1", "echo", json!({"text": "one"}))]),
        calls("", &[("i2", "echo", json!({"text": "two"}))]),
        calls("", &[("i3", "echo", json!({"text": "three"}))]),
    ];
    let opts = Options {
        max_iterations: 2,
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Loop.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((out.stop, out.iterations), (StopReason::MaxIterations, 2));
    let bodies = h.bodies().await;
    assert_eq!(bodies.len(), 2);
    let expected = results_tail(provider, &[("i1", "echo", false, "one")], None);
    assert_eq!(tail(provider, &bodies[1], expected.len()), expected);
    assert_eq!(
        h.transcript(&session).await.last().unwrap(),
        "result:i2:success"
    );
}
per_provider!(iteration_limit);

/// The provider refuses the request: the turn fails with the provider's message and the
/// stored history is the user message alone.
#[tokio::test]
async fn provider_error_fails_the_turn_with_its_message() {
    let h = Harness::new(Provider::Anthropic, vec![], Options::default()).await;
    let session = h.session().await;
    let err = h
        .agent
        .run_turn(&session, "Hi", CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Model(_)));
    assert_eq!(
        err.to_string(),
        "anthropic returned HTTP 400: the test script has no more replies"
    );
    assert_eq!(h.transcript(&session).await, ["user:Hi"]);
    let tags = h.event_tags(&session).await;
    assert_eq!(tags, ["session_started", "turn_started:1", "turn_ended:1"]);
}

/// Gemini may send calls without ids; each gets an id of its own (the decoder once
/// numbered them per reply, and only the loop's de-duplication kept them apart within a
/// session), so each result pairs with its own call.
#[tokio::test]
async fn gemini_calls_without_ids_stay_distinct_across_turns() {
    let server = wiremock::MockServer::start().await;
    let reply = |text: &str| {
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "echo", "args": {"text": text}}}]}}]})
    };
    for (i, body) in [
        reply("a"),
        reply("b"),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]}),
    ]
    .into_iter()
    .enumerate()
    {
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(body))
            .up_to_n_times(1)
            .with_priority(u8::try_from(i + 1).unwrap())
            .mount(&server)
            .await;
    }
    let h = Harness::with_server(Provider::Gemini, server, Options::default()).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Twice.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Done);
    let transcript = h.transcript(&session).await;
    // Each id-less call got an id of its own, distinct across turns (and sessions), and
    // its result pairs with it.
    let ids: Vec<String> = h
        .stores
        .history()
        .load(&session)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m.content {
            toolwire_core::Message::Assistant { tool_calls, .. } => {
                tool_calls.first().map(|c| c.id.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2, "{transcript:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(
        ids.iter().all(|id| id.starts_with("gemini_call_")),
        "{ids:?}"
    );
    assert_eq!(
        transcript,
        [
            "user:Twice.".to_owned(),
            format!(r#"assistant:["{}"]"#, ids[0]),
            format!("result:{}:success", ids[0]),
            format!(r#"assistant:["{}"]"#, ids[1]),
            format!("result:{}:success", ids[1]),
            "assistant:ok[]".to_owned(),
        ]
    );
    let bodies = h.bodies().await;
    assert_eq!(
        tail(Provider::Gemini, &bodies[2], 2),
        vec![
            json!({"role": "model", "parts": [{"functionCall": {"id": ids[1], "name": "echo", "args": {"text": "b"}}}]}),
            json!({"role": "user", "parts": [{"functionResponse": {"id": ids[1], "name": "echo", "response": {"output": "b"}}}]}),
        ]
    );
}

/// Call ids the store would refuse (an escape sequence, 300 bytes) do not abort the turn:
/// each call gets a safe id, is answered and stored, and the next request pairs the
/// results with the calls under those ids.
async fn hostile_call_ids(provider: Provider) {
    let long = "x".repeat(300);
    let script = vec![
        calls(
            "Echoing.",
            &[
                ("bad\u{1b}[2Jid", "echo", json!({"text": "one"})),
                (long.as_str(), "echo", json!({"text": "two"})),
            ],
        ),
        text("Done."),
    ];
    let h = Harness::new(provider, script, Options::default()).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Go.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Done);
    assert_eq!(
        h.transcript(&session).await,
        [
            "user:Go.",
            r#"assistant:Echoing.["call_1", "call_1_t1_1"]"#,
            "result:call_1:success",
            "result:call_1_t1_1:success",
            "assistant:Done.[]",
        ]
    );
    let second = h.bodies().await[1].to_string();
    assert!(!second.contains("bad\\u001b") && !second.contains(&long));
    assert!(second.contains("call_1_t1_1"));
}
per_provider!(hostile_call_ids);

/// Counts `load` calls on the history the agent uses.
static LOADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Debug)]
struct CountingLoads(std::sync::Arc<dyn toolwire_store::HistoryStore>);

#[async_trait::async_trait]
impl toolwire_store::HistoryReader for CountingLoads {
    async fn session(&self, id: &str) -> toolwire_store::Result<Option<toolwire_store::Session>> {
        self.0.session(id).await
    }
    async fn list_sessions(
        &self,
        page: toolwire_store::Page,
    ) -> toolwire_store::Result<Vec<toolwire_store::Session>> {
        self.0.list_sessions(page).await
    }
    async fn child_sessions(
        &self,
        parent_id: &str,
    ) -> toolwire_store::Result<Vec<toolwire_store::Session>> {
        self.0.child_sessions(parent_id).await
    }
    async fn load(
        &self,
        session_id: &str,
    ) -> toolwire_store::Result<Vec<toolwire_store::StoredMessage>> {
        LOADS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.load(session_id).await
    }
    async fn find_result(
        &self,
        session_id: &str,
        call_id: &str,
    ) -> toolwire_store::Result<Option<toolwire_store::StoredResult>> {
        self.0.find_result(session_id, call_id).await
    }
    async fn referenced_blobs(
        &self,
    ) -> toolwire_store::Result<std::collections::BTreeSet<toolwire_store::BlobKey>> {
        self.0.referenced_blobs().await
    }
    async fn result_with_blob(
        &self,
        session_id: &str,
        blob: &toolwire_store::BlobKey,
    ) -> toolwire_store::Result<Option<toolwire_store::StoredResult>> {
        self.0.result_with_blob(session_id, blob).await
    }
}

#[async_trait::async_trait]
impl toolwire_store::HistoryStore for CountingLoads {
    async fn create_session(
        &self,
        new: toolwire_store::NewSession,
    ) -> toolwire_store::Result<toolwire_store::Session> {
        self.0.create_session(new).await
    }
    async fn append(
        &self,
        session_id: &str,
        content: toolwire_core::Message,
    ) -> toolwire_store::Result<toolwire_store::StoredMessage> {
        self.0.append(session_id, content).await
    }
    async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<toolwire_core::Message>,
    ) -> toolwire_store::Result<Vec<toolwire_store::StoredMessage>> {
        self.0.append_many(session_id, contents).await
    }
    async fn delete_session(&self, id: &str) -> toolwire_store::Result<bool> {
        self.0.delete_session(id).await
    }
}

/// A turn of several model requests loads the session once, then keeps its copy in step
/// with what it stores: reloading and re-encoding per request made long turns quadratic.
#[tokio::test]
async fn a_turn_loads_the_session_once_however_many_requests_it_makes() {
    let script = vec![
        calls("One.", &[("e1", "echo", json!({"text": "a"}))]),
        calls("Two.", &[("e2", "echo", json!({"text": "b"}))]),
        calls("Three.", &[("e3", "echo", json!({"text": "c"}))]),
        text("Done."),
    ];
    let opts = Options {
        wrap_history: Some(|inner| std::sync::Arc::new(CountingLoads(inner))),
        ..Options::default()
    };
    let h = Harness::new(Provider::Anthropic, script, opts).await;
    let session = h.session().await;
    let before = LOADS.load(std::sync::atomic::Ordering::SeqCst);
    let out = h
        .agent
        .run_turn(&session, "Go.", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.iterations, 4);
    assert_eq!(LOADS.load(std::sync::atomic::Ordering::SeqCst) - before, 1);
    // What the last request carried is what a reload gives: the copy stayed in step.
    let bodies = h.bodies().await;
    let last = &bodies[3]["messages"];
    let stored = h.transcript(&session).await;
    assert_eq!(stored.len(), 8, "{stored:?}");
    assert_eq!(last.as_array().unwrap().len(), 7, "{last}");
}
