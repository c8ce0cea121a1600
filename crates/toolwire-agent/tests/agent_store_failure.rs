//! A result the store refuses (invalid base64 over the inline threshold) does not drop the
//! other results of the same reply: it is replaced by a `store_failed` error result, and
//! the turn goes on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;

use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;
use toolwire_core::Message;
use toolwire_core::{Source, Status, Value};
use toolwire_model::Provider;
use toolwire_tool::{Tool, ToolContext, ToolError, tool_fn};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[tokio::test]
async fn a_result_the_store_refuses_does_not_drop_its_siblings() {
    let bad: Arc<dyn Tool> = Arc::new(tool_fn(
        "badimg",
        "Returns an image whose blob the store does not hold.",
        |_a: NoArgs, _ctx: ToolContext| async move {
            // A well-formed reference (so the executor's validation passes) to a blob
            // that was never stored: the store refuses it. (Invalid base64 no longer
            // gets this far: validation refuses it as `invalid_output`.)
            let missing = Source::blob(format!("blake3:{}", "0".repeat(64)), 4000);
            Ok::<_, ToolError>(Value::image(missing, "image/png"))
        },
    ));
    let script = vec![
        calls(
            "",
            &[
                ("c1", "echo", json!({"text": "one"})),
                ("c2", "badimg", json!({})),
                ("c3", "echo", json!({"text": "three"})),
            ],
        ),
        text("done"),
    ];
    let h = Harness::new(
        Provider::Anthropic,
        script,
        Options {
            extra_tools: vec![bad],
            ..Options::default()
        },
    )
    .await;
    let session = h.session().await;
    h.agent
        .run_turn(&session, "go", CancellationToken::new())
        .await
        .unwrap();
    let stored: Vec<_> = h
        .stores
        .history()
        .load(&session)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m.content {
            Message::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect();
    // Each lands as its call finishes, so the order is the finishing order.
    let mut stored = stored;
    stored.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    let ids: Vec<_> = stored.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"], "every call has one stored result");
    assert_eq!(stored[1].status, Status::Error);
    assert_eq!(
        stored[1].error.as_ref().unwrap().code.as_deref(),
        Some("store_failed")
    );
    assert_eq!(stored[2].status, Status::Success);
    // The turn finished: the model's closing text was stored after the results.
    let t = h.transcript(&session).await;
    assert!(t.last().unwrap().contains("done"), "{t:?}");
}
