//! The AG-UI follower on its own, fed events as an agent would send them: the paths the
//! real agents of crates/toolwire/tests/agui_follow.rs do not take (a `MESSAGES_SNAPSHOT`
//! that carries calls and results, `RUN_ERROR`, a result before its call's end, ids that
//! are not toolwire ids, a front end's answer in the next run) and what the store then
//! holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value as Json, json};
use toolwire_agent::Host;
use toolwire_agui::{FollowLimits, Follower, RunEnd};
use toolwire_core::{Message, Status};

async fn host(dir: &std::path::Path) -> Host {
    Host::builder()
        .data_dir(dir)
        .without_builtins()
        .build()
        .await
        .unwrap()
}

async fn feed(follower: &mut Follower, events: &[Json]) {
    for event in events {
        follower.event(&event.to_string()).await;
    }
}

async fn stored(host: &Host, session: &str) -> Vec<Message> {
    host.stores()
        .history()
        .load(session)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect()
}

fn result_of<'a>(messages: &'a [Message], call: &str) -> &'a toolwire_core::ToolResult {
    messages
        .iter()
        .find_map(|m| match m {
            Message::ToolResult(r) if r.call_id == call => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result of {call}: {messages:?}"))
}

#[tokio::test]
async fn a_snapshot_fills_in_calls_and_results_the_stream_did_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let mut f = Follower::open(
        host.clone(),
        "thread/with odd id",
        "t",
        FollowLimits::default(),
    )
    .await
    .unwrap();
    let session = f.session_id().to_owned();
    assert!(session.starts_with("agui-thread-"), "{session}");
    f.input(&[json!({"id": "u", "role": "user", "content": [{"type": "text", "text": "hi"}]})])
        .await;
    feed(
        &mut f,
        &[
            json!({"type": "RUN_STARTED", "threadId": "x", "runId": "r"}),
            json!({"type": "MESSAGES_SNAPSHOT", "messages": [
                {"id": "u", "role": "user", "content": "hi"},
                {"id": "a", "role": "assistant", "toolCalls": [
                    {"id": "call 1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}},
                    {"id": "c2", "type": "function", "function": {"name": "later", "arguments": ""}},
                ]},
                {"id": "t", "role": "tool", "toolCallId": "call 1", "content": "[1, 2]"},
            ]}),
            // The same snapshot again changes nothing.
            json!({"type": "MESSAGES_SNAPSHOT", "messages": [
                {"id": "t", "role": "tool", "toolCallId": "call 1", "content": "[3]"},
            ]}),
            json!({"type": "RUN_FINISHED", "threadId": "x", "runId": "r"}),
        ],
    )
    .await;
    assert_eq!(f.end(), Some(&RunEnd::Finished));
    assert!(f.diagnostics().is_empty(), "{:?}", f.diagnostics());
    let messages = stored(&host, &session).await;
    assert!(matches!(&messages[0], Message::User { text } if text == "hi"));
    let Message::Assistant { tool_calls, .. } = &messages[1] else {
        panic!("{messages:?}")
    };
    assert_eq!(tool_calls.len(), 2);
    assert!(tool_calls[0].id.starts_with("agui-call-"));
    assert_eq!(tool_calls[0].input, json!({"q": 1}));
    let first = result_of(&messages, &tool_calls[0].id);
    assert_eq!(first.output[0].kind.as_str(), "structured");
    assert_eq!(first.output[0].data, json!([1, 2]));
    // `later` waits for the front end; its answer comes in the next run's input.
    assert_eq!(messages.len(), 3, "{messages:?}");
    let mut next = Follower::open(
        host.clone(),
        "thread/with odd id",
        "t",
        FollowLimits::default(),
    )
    .await
    .unwrap();
    next.input(&[
        json!({"id": "t2", "role": "tool", "toolCallId": "c2", "content": "from the front end"}),
        // An answer to a call that has one already is not stored twice.
        json!({"id": "t3", "role": "tool", "toolCallId": "call 1", "content": "again"}),
    ])
    .await;
    let messages = stored(&host, &session).await;
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(result_of(&messages, "c2").status, Status::Success);
}

#[tokio::test]
async fn a_run_error_closes_the_open_calls_and_bad_events_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let mut f = Follower::open(host.clone(), "t-err", "t", FollowLimits::default())
        .await
        .unwrap();
    feed(
        &mut f,
        &[
            json!({"type": "RUN_STARTED", "threadId": "t-err", "runId": "r"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "working"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "fast"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": "not json"}),
            // A result before its call's end ends the call.
            json!({"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "a", "content": "ok"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "again"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "b", "toolCallName": "slow"}),
            json!({"type": "TOOL_CALL_END", "toolCallId": "b"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c"}),
            json!({"type": "TOOL_CALL_RESULT", "toolCallId": "b", "content": 5}),
            json!({"type": "RUN_ERROR", "message": "model overloaded"}),
            // After the end, nothing more is recorded.
            json!({"type": "TOOL_CALL_START", "toolCallId": "z", "toolCallName": "late"}),
        ],
    )
    .await;
    f.stream_ended("closed").await;
    assert_eq!(
        f.end(),
        Some(&RunEnd::Failed("model overloaded".to_owned()))
    );
    let notes = f.diagnostics().join("\n");
    assert!(notes.contains("call \"a\" was started already"), "{notes}");
    assert!(
        notes.contains("TOOL_CALL_START: no string `toolCallName`"),
        "{notes}"
    );
    assert!(
        notes.contains("neither text nor a list of parts"),
        "{notes}"
    );
    let messages = stored(&host, "t-err").await;
    let Message::Assistant { text, tool_calls } = &messages[0] else {
        panic!("{messages:?}")
    };
    assert_eq!(text, "working");
    assert_eq!(tool_calls[0].input, json!("not json"));
    assert_eq!(result_of(&messages, "a").status, Status::Success);
    let b = result_of(&messages, "b");
    assert_eq!(b.status, Status::Error);
    assert_eq!(
        b.error.as_ref().unwrap().code.as_deref(),
        Some("interrupted")
    );
    assert!(
        b.error
            .as_ref()
            .unwrap()
            .message
            .contains("model overloaded")
    );
    // Every stored call has exactly one result.
    let results = messages
        .iter()
        .filter(|m| matches!(m, Message::ToolResult(_)))
        .count();
    assert_eq!(results, 2, "{messages:?}");
}

/// What ag-ui-langgraph 0.0.47 sends for a LangGraph run whose model does not stream
/// (`RAW`, `STATE_SNAPSHOT` and step events left out, long values cut): one assistant
/// message (id `lc_run--a`) calls three tools; each call's START, ARGS, END and RESULT
/// come together, naming that message as parent; a `ToolException` comes in the stream as
/// a plain result; a `ValueError` caught by `ToolNode` has no result event at all; only the
/// final `MESSAGES_SNAPSHOT` flags failures (`"error": "error"`) and carries the answer.
fn langgraph_quiet_run(answer_in_stream: Option<&str>) -> Vec<Json> {
    let mut events = vec![json!({"type": "RUN_STARTED", "threadId": "lg", "runId": "r1"})];
    for (id, name, args, result) in [
        (
            "call_weather",
            "weather",
            "{\"city\": \"Paris\"}",
            Some("sunny in Paris"),
        ),
        (
            "call_station",
            "station",
            "{\"city\": \"Paris\"}",
            Some("the station in Paris is offline"),
        ),
        ("call_ratio", "ratio", "{\"a\": 1, \"b\": 0}", None),
    ] {
        if result.is_none() {
            continue;
        }
        events.push(json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name, "parentMessageId": "lc_run--a"}));
        events.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": args}));
        events.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
        events.push(json!({"type": "TOOL_CALL_RESULT", "messageId": id, "toolCallId": id, "content": result, "role": "tool"}));
    }
    if let Some(answer) = answer_in_stream {
        events.push(
            json!({"type": "TEXT_MESSAGE_START", "messageId": "lc_run--b", "role": "assistant"}),
        );
        events.push(
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "lc_run--b", "delta": answer}),
        );
        events.push(json!({"type": "TEXT_MESSAGE_END", "messageId": "lc_run--b"}));
    }
    events.push(json!({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "u1", "role": "user", "content": "weather?"},
        {"id": "lc_run--a", "role": "assistant", "content": "", "toolCalls": [
            {"id": "call_weather", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "call_station", "type": "function", "function": {"name": "station", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "call_ratio", "type": "function", "function": {"name": "ratio", "arguments": "{\"a\": 1, \"b\": 0}"}},
        ]},
        {"id": "t1", "role": "tool", "content": "sunny in Paris", "toolCallId": "call_weather"},
        {"id": "t2", "role": "tool", "content": "the station in Paris is offline", "toolCallId": "call_station", "error": "error"},
        {"id": "t3", "role": "tool", "content": "Error: ValueError('division by zero in ratio')\n Please fix your mistakes.", "toolCallId": "call_ratio", "error": "error"},
        {"id": "lc_run--b", "role": "assistant", "content": "It is sunny in Paris."},
    ]}));
    events.push(json!({"type": "RUN_FINISHED", "threadId": "lg", "runId": "r1"}));
    events
}

async fn follow_langgraph(
    answer_in_stream: Option<&str>,
) -> (Host, Vec<Message>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let mut f = Follower::open(host.clone(), "lg", "t", FollowLimits::default())
        .await
        .unwrap();
    f.input(&[json!({"id": "u1", "role": "user", "content": "weather?"})])
        .await;
    feed(&mut f, &langgraph_quiet_run(answer_in_stream)).await;
    assert_eq!(f.end(), Some(&RunEnd::Finished));
    assert!(f.diagnostics().is_empty(), "{:?}", f.diagnostics());
    let messages = stored(&host, "lg").await;
    (host, messages, dir)
}

fn assistant_texts(messages: &[Message]) -> Vec<(String, usize)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { text, tool_calls } => Some((text.clone(), tool_calls.len())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_answer_only_in_the_snapshot_is_recorded_once() {
    // Item 1: a model that does not stream sends its answer only in MESSAGES_SNAPSHOT.
    let (_host, messages, _dir) = follow_langgraph(None).await;
    assert_eq!(
        assistant_texts(&messages),
        [(String::new(), 3), ("It is sunny in Paris.".to_owned(), 0)],
        "{messages:?}"
    );
    assert!(matches!(messages.last(), Some(Message::Assistant { .. })));
    // Streamed, the same answer is not recorded a second time from the snapshot.
    let (_host, messages, _dir) = follow_langgraph(Some("It is sunny in Paris.")).await;
    assert_eq!(
        assistant_texts(&messages),
        [(String::new(), 3), ("It is sunny in Paris.".to_owned(), 0)],
        "{messages:?}"
    );
}

#[tokio::test]
async fn the_snapshot_corrects_a_failed_call_and_keeps_its_message() {
    // Items 2 and 3: the stream shows the ToolException as a success; the snapshot's
    // `error` is the word "error" and the message is in `content`.
    let (_host, messages, _dir) = follow_langgraph(Some("It is sunny in Paris.")).await;
    assert_eq!(result_of(&messages, "call_weather").status, Status::Success);
    let station = result_of(&messages, "call_station");
    assert_eq!(station.status, Status::Error, "{station:?}");
    assert_eq!(
        station.error.as_ref().unwrap().message,
        "the station in Paris is offline"
    );
    let ratio = result_of(&messages, "call_ratio");
    assert_eq!(ratio.status, Status::Error, "{ratio:?}");
    assert!(
        ratio
            .error
            .as_ref()
            .unwrap()
            .message
            .contains("ValueError('division by zero in ratio')"),
        "{ratio:?}"
    );
    // One result per call, each after the one message that made the calls.
    let results: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::ToolResult(_)))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(results, [2, 3, 4], "{messages:?}");
}

#[tokio::test]
async fn interleaved_calls_of_one_parent_are_one_assistant_message() {
    // Item 4: START/ARGS/END/RESULT per call, all naming the same parentMessageId.
    let (_host, messages, _dir) = follow_langgraph(None).await;
    let Message::Assistant { tool_calls, .. } = &messages[1] else {
        panic!("{messages:?}")
    };
    let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_weather", "call_station", "call_ratio"]);
    assert_eq!(tool_calls[2].input, json!({"a": 1, "b": 0}));
}

#[tokio::test]
async fn what_is_held_for_the_snapshot_is_bounded() {
    // An agent that makes call after call with results and never ends its run: what is
    // held for a snapshot's correction is stored once it passes the bound, in order.
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let mut f = Follower::open(host.clone(), "many", "t", FollowLimits::default())
        .await
        .unwrap();
    let mut events = vec![json!({"type": "RUN_STARTED", "threadId": "many", "runId": "r"})];
    for n in 0..600 {
        let id = format!("c{n}");
        events.push(json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": "t", "parentMessageId": "a"}));
        events.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
        events.push(json!({"type": "TOOL_CALL_RESULT", "toolCallId": id, "content": "ok"}));
    }
    feed(&mut f, &events).await;
    assert!(f.diagnostics().is_empty(), "{:?}", f.diagnostics());
    let messages = stored(&host, "many").await;
    let results = messages
        .iter()
        .filter(|m| matches!(m, Message::ToolResult(_)))
        .count();
    assert!(results >= 256, "{results} stored while the run is open");
    // Each stored result follows its call.
    let mut calls = std::collections::HashSet::new();
    for m in &messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                calls.extend(tool_calls.iter().map(|c| c.id.clone()))
            }
            Message::ToolResult(r) => {
                assert!(calls.contains(&r.call_id), "{} before its call", r.call_id)
            }
            _ => {}
        }
    }
    feed(&mut f, &[json!({"type": "RUN_FINISHED"})]).await;
    let all = stored(&host, "many").await;
    assert_eq!(
        all.iter()
            .filter(|m| matches!(m, Message::ToolResult(_)))
            .count(),
        600
    );
}
