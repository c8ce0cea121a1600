//! The loop's edges: streamed replies become `assistant_delta` events in order; media a
//! tool returns is persisted to the blob store and read back from it into the next
//! request; a cancel while a call waits for approval denies it and leaves nothing pending.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;

use base64::Engine;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolwire_agent::{ApprovalRequest, Approver, StopReason};
use toolwire_core::Resolution;
use toolwire_core::{Source, Value};
use toolwire_model::Provider;
use toolwire_tool::{ToolContext, ToolError, tool_fn};

use support::*;

async fn streamed(provider: Provider) {
    let script = vec![
        calls(
            "Let me check.",
            &[("s1", "echo", json!({"text": "checked"}))],
        ),
        text("All good here."),
    ];
    let opts = Options {
        stream: true,
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let out = h
        .agent
        .run_turn(&session, "Check.", CancellationToken::new())
        .await
        .unwrap();
    let bodies = h.bodies().await;
    assert_eq!(
        (out.stop, out.text.as_str()),
        (StopReason::Done, "All good here.")
    );
    assert!(bodies.iter().all(|b| b["stream"] == json!(true)));
    let expected = results_tail(provider, &[("s1", "echo", false, "checked")], None);
    assert_eq!(tail(provider, &bodies[1], expected.len()), expected);
    let deltas: Vec<String> = h
        .stores
        .events()
        .events_since(&session, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|e| serde_json::to_value(&e).unwrap())
        .filter(|e| e["type"] == "assistant_delta")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    // Deltas that arrive together are coalesced into one event (one durable write per
    // batch, not per token), so only their order and their text are fixed: the server
    // sent "Let me" + " check." then "All goo" + "d here.".
    assert!(deltas.iter().all(|d| !d.is_empty()));
    assert!((2..=4).contains(&deltas.len()), "{deltas:?}");
    assert_eq!(deltas.concat(), "Let me check.All good here.");
    assert_eq!(
        h.transcript(&session).await,
        [
            "user:Check.",
            r#"assistant:Let me check.["s1"]"#,
            "result:s1:success",
            "assistant:All good here.[]",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_anthropic() {
    streamed(Provider::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_openai_chat() {
    streamed(Provider::OpenaiChat).await;
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

/// 4 KiB of image bytes (over the 1 KiB inline threshold, so they go to a blob).
fn image_bytes() -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..4096u32).map(|i| (i % 251) as u8));
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_goes_to_blobs_and_back_into_the_request() {
    let provider = Provider::Anthropic;
    let b64 = base64::engine::general_purpose::STANDARD.encode(image_bytes());
    let snapshot = tool_fn(
        "snapshot",
        "Takes a picture.",
        move |_a: NoArgs, _ctx: ToolContext| {
            let b64 = b64.clone();
            async move { Ok::<_, ToolError>(Value::image(Source::base64(b64), "image/png")) }
        },
    );
    let script = vec![
        calls("", &[("m1", "snapshot", json!({}))]),
        text("A picture."),
    ];
    let opts = Options {
        extra_tools: vec![Arc::new(snapshot)],
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    h.agent
        .run_turn(&session, "Look.", CancellationToken::new())
        .await
        .unwrap();
    // Stored with a blob source, not inline base64.
    let stored = h
        .stores
        .history()
        .find_result(&session, "m1")
        .await
        .unwrap()
        .unwrap();
    let source = &stored.result.output[0].data["source"];
    let key = source["blob"].as_str().unwrap();
    assert!(key.starts_with("blake3:"), "{source}");
    assert_eq!(source.get("base64"), None);
    assert_eq!(h.stores.blob(key).await.unwrap().to_vec(), image_bytes());
    // The next request has the original bytes, read back from the blob store.
    let bodies = h.bodies().await;
    let results = &tail(provider, &bodies[1], 1)[0]["content"][0];
    assert_eq!(results["tool_use_id"], "m1");
    let image = results["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap();
    assert_eq!(
        image["source"],
        json!({"type": "base64", "media_type": "image/png",
               "data": base64::engine::general_purpose::STANDARD.encode(image_bytes())})
    );
}

/// Never answers; the turn must stop waiting when cancelled.
struct NeverAnswers(Arc<tokio::sync::Notify>);

impl Approver for NeverAnswers {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        self.0.notify_one();
        Box::pin(futures::future::pending())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_waiting_for_approval_denies_the_call() {
    let provider = Provider::OpenaiResponses;
    let asked = Arc::new(tokio::sync::Notify::new());
    let script = vec![
        calls(
            "",
            &[("w1", "write_file", json!({"path": "x.txt", "content": "x"}))],
        ),
        text("Fine."),
    ];
    let opts = Options {
        approver: Arc::new(NeverAnswers(Arc::clone(&asked))),
        ..Options::default()
    };
    let h = Harness::new(provider, script, opts).await;
    let session = h.session().await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        asked.notified().await;
        trigger.cancel();
    });
    let out = h.agent.run_turn(&session, "Write.", cancel).await.unwrap();
    assert_eq!(out.stop, StopReason::Cancelled);
    assert!(!h.workspace.path().join("x.txt").exists());
    assert!(
        h.stores
            .suspensions()
            .suspensions(&session)
            .await
            .unwrap()
            .is_empty()
    );
    h.agent
        .run_turn(&session, "Ok.", CancellationToken::new())
        .await
        .unwrap();
    let bodies = h.bodies().await;
    let expected = results_tail(
        provider,
        &[(
            "w1",
            "write_file",
            true,
            "The user denied this call to write_file: the turn was cancelled before the user answered.",
        )],
        Some("Ok."),
    );
    assert_eq!(tail(provider, &bodies[1], expected.len()), expected);
}
