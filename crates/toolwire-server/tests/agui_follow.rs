//! The AG-UI follower on its own, fed events as an agent would send them: the paths the
//! real agents of crates/toolwire/tests/agui_follow.rs do not take (a `MESSAGES_SNAPSHOT`
//! that carries calls and results, `RUN_ERROR`, a result before its call's end, ids that
//! are not toolwire ids, a front end's answer in the next run) and what the store then
//! holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value as Json, json};
use toolwire_agent::Host;
use toolwire_core::{Message, Status};
use toolwire_server::agui_follow::{FollowLimits, Follower, RunEnd};

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
