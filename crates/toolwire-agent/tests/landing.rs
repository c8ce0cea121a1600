//! Where a finished call lands: a `tool_result` event is announced only once its result
//! is stored, and it carries the result as stored (media as blob references, saved once),
//! so a client that reloads the session on the event always finds what it announced.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolwire_agent::{AutoApprove, CallOptions, Host};
use toolwire_core::{EventKind, ToolCall};
use toolwire_core::{Source, Status, Value};
use toolwire_tool::ApprovalPolicy;
use toolwire_tool::{ToolContext, ToolError, tool_fn};

#[derive(Deserialize, JsonSchema)]
struct Empty {}

/// A picture of 4 KB inline as base64: above the size kept inline, so it goes to the
/// blob store.
fn picture_base64() -> String {
    use base64::Engine as _;
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..4096u32).map(|i| (i % 251) as u8));
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

async fn host(dir: &std::path::Path) -> Host {
    let picture = tool_fn(
        "picture",
        "Returns a picture and a caption; asks first.",
        |_: Empty, _ctx: ToolContext| async move {
            Ok::<_, ToolError>(Value::image(Source::base64(picture_base64()), "image/png"))
        },
    )
    .with_schema(|s| s.approval = ApprovalPolicy::Always);
    let plain = tool_fn(
        "plain",
        "Says hello.",
        |_: Empty, _ctx: ToolContext| async move { Ok::<_, ToolError>(Value::text("hello")) },
    );
    Host::builder()
        .data_dir(dir)
        .without_builtins()
        .tools([
            Arc::new(picture) as Arc<dyn toolwire_tool::Tool>,
            Arc::new(plain) as Arc<dyn toolwire_tool::Tool>,
        ])
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_result_is_announced_only_once_stored_and_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let session = host.session(None, "landing").await.unwrap();
    let mut feed = host.events().subscribe(&session.id, 0).await.unwrap();
    for tool in ["plain", "picture"] {
        let running = host
            .run_call(
                &session.id,
                person_call(tool),
                CallOptions::new(Arc::new(AutoApprove)),
            )
            .await
            .unwrap();
        let call_id = running.call_id().unwrap().to_owned();
        let returned = running.finish().await.unwrap();
        assert_eq!(returned.status, Status::Success, "{returned:?}");
        assert_eq!(returned.call_id, call_id);
        // The feed's result for this call, read after the call ended.
        let announced = loop {
            let event = feed.next().await.unwrap().unwrap();
            if let EventKind::ToolResult { result, .. } = event.kind
                && result.call_id == returned.call_id
                && result.status != Status::Suspended
            {
                break std::sync::Arc::unwrap_or_clone(result);
            }
        };
        let stored = host
            .stores()
            .history()
            .find_result(&session.id, &returned.call_id)
            .await
            .unwrap()
            .expect("announced but not stored");
        assert_eq!(
            announced, stored.result,
            "{tool}: announced is not what was stored"
        );
        assert_eq!(
            returned, stored.result,
            "{tool}: returned is not what was stored"
        );
    }
    // The picture went to the blob store: announced by reference, never as base64.
    let stored = host.stores().history().load(&session.id).await.unwrap();
    let text = serde_json::to_string(&stored).unwrap();
    assert!(
        !text.contains(&picture_base64()[..64]),
        "base64 left in the history"
    );
    assert!(text.contains("blake3:"), "{text}");
}

/// Every `tool_result` event of a finished call is announced after its row exists: a
/// second subscriber checks the store the moment each event arrives.
#[tokio::test]
async fn no_event_runs_ahead_of_its_stored_result() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let session = host.session(None, "race").await.unwrap();
    let mut feed = host.events().subscribe(&session.id, 0).await.unwrap();
    let watcher = {
        let host = host.clone();
        let session_id = session.id.clone();
        tokio::spawn(async move {
            let mut checked = 0;
            while checked < 20 {
                let event = feed.next().await.unwrap().unwrap();
                if let EventKind::ToolResult { result, .. } = event.kind
                    && result.status != Status::Suspended
                {
                    let found = host
                        .stores()
                        .history()
                        .find_result(&session_id, &result.call_id)
                        .await
                        .unwrap();
                    assert!(
                        found.is_some(),
                        "{} announced before stored",
                        result.call_id
                    );
                    checked += 1;
                }
            }
        })
    };
    for i in 0..20 {
        let tool = if i % 2 == 0 { "plain" } else { "picture" };
        let running = host
            .run_call(
                &session.id,
                person_call(tool),
                CallOptions::new(Arc::new(AutoApprove)),
            )
            .await
            .unwrap();
        running.finish().await.unwrap();
    }
    watcher.await.unwrap();
}

/// A call's result event is logged in its result's commit (SQLite) and broadcast by the
/// landing: a live subscriber still gets every event once, in the log's order, each
/// call's start before its result, and the result event names its stored row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_events_match_the_log_when_a_result_is_logged_with_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let session = host.session(None, "one commit").await.unwrap();
    let mut feed = host.events().subscribe(&session.id, 0).await.unwrap();
    let calls = 30;
    for _ in 0..calls {
        let running = host
            .run_call(
                &session.id,
                person_call("plain"),
                CallOptions::new(Arc::new(AutoApprove)),
            )
            .await
            .unwrap();
        running.finish().await.unwrap();
    }
    let log = host
        .stores()
        .events()
        .events_since(&session.id, 0)
        .await
        .unwrap();
    let results = log
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ToolResult { .. }))
        .count();
    assert_eq!(results, calls, "{log:?}");
    let mut live = Vec::new();
    while live.len() < log.len() {
        live.push(feed.next().await.unwrap().unwrap());
    }
    assert_eq!(
        live.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=log.len() as u64).collect::<Vec<_>>()
    );
    for (live, logged) in live.iter().zip(&log) {
        assert_eq!(live.kind, logged.kind, "event {}", live.seq);
        if let EventKind::ToolResult { result, stored, .. } = &live.kind {
            let row = host
                .stores()
                .history()
                .find_result(&session.id, &result.call_id)
                .await
                .unwrap()
                .expect("announced but not stored");
            assert_eq!(stored.0, Some(row.message_id), "event {}", live.seq);
        }
    }
}

/// A tool's raw payload (what an MCP server sent) is stored beside its result by
/// default, as JSON text a person can download; one above the executor's `raw_limit` is
/// not, and the result lands all the same.
#[tokio::test]
async fn a_raw_payload_within_the_limit_is_kept_beside_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let mcp_like = |name: &'static str, text: &'static str| {
        Arc::new(tool_fn(
            name,
            "Returns a raw MCP result.",
            move |_: Empty, _ctx: ToolContext| async move {
                Ok::<_, ToolError>(
                    json!({"content": [{"type": "text", "text": text}], "_meta": {"trace": 7}}),
                )
            },
        )) as Arc<dyn toolwire_tool::Tool>
    };
    let big: &'static str = Box::leak("x".repeat(300).into_boxed_str());
    let host = Host::builder()
        .data_dir(dir.path())
        .without_builtins()
        .tools([mcp_like("small", "hi"), mcp_like("big", big)])
        .executor_config(toolwire_runtime::ExecutorConfig {
            raw_limit: 200,
            ..toolwire_runtime::ExecutorConfig::default()
        })
        .build()
        .await
        .unwrap();
    let session = host.session(None, "raw").await.unwrap();
    let mut kept = Vec::new();
    for tool in ["small", "big"] {
        let running = host
            .run_call(
                &session.id,
                person_call(tool),
                CallOptions::new(Arc::new(AutoApprove)),
            )
            .await
            .unwrap();
        let returned = running.finish().await.unwrap();
        assert_eq!(returned.status, Status::Success, "{returned:?}");
        let stored = host
            .stores()
            .history()
            .find_result(&session.id, &returned.call_id)
            .await
            .unwrap()
            .unwrap();
        kept.push(stored.result.metadata.raw_ref.clone());
    }
    let key = kept[0].clone().expect("the small payload is kept");
    let bytes = host.stores().blob(&key).await.unwrap();
    let raw: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(raw["_meta"]["trace"], json!(7));
    assert_eq!(raw["content"][0]["text"], json!("hi"));
    assert_eq!(kept[1], None, "above raw_limit: not kept");
}

/// A call a person makes, as the CLI and the web app make them.
fn person_call(tool: &str) -> ToolCall {
    ToolCall::new(toolwire_core::new_id("call"), tool, json!({})).by_person("test")
}
