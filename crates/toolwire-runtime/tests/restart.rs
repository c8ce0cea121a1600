//! A suspended call survives a restart: one OS process suspends it into the history
//! database and exits; another process opens the database and approves it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolwire_core::{EventKind, Resolution, ToolCall};
use toolwire_core::{Status, Value};
use toolwire_runtime::{EventBus, Executor, Registry, Scope};
use toolwire_store::SqliteHistory;
use toolwire_tool::{ApprovalPolicy, ToolContext, ToolError, tool_fn};

mod support;
use support::{announcing, land};

const CHILD_ENV: &str = "TOOLWIRE_TEST_SUSPEND_CHILD_DB";

#[derive(Deserialize, JsonSchema)]
struct Target {
    branch: String,
}

async fn executor(db: &Path) -> Executor {
    // One SQLite file holds the history, the event log and the suspensions.
    let history = Arc::new(SqliteHistory::open(db).await.unwrap());
    let mut registry = Registry::new();
    registry
        .register(
            tool_fn(
                "delete_branch",
                "Deletes a branch.",
                |t: Target, _ctx: ToolContext| async move {
                    Ok::<_, ToolError>(Value::text(format!("deleted {}", t.branch)))
                },
            )
            .with_schema(|s| s.approval = ApprovalPolicy::Always),
        )
        .unwrap();
    // Results are announced when they land, as a host's are.
    announcing(
        Executor::builder(registry)
            .events(EventBus::new(Arc::clone(&history) as _))
            .suspensions(history)
            .build(),
    )
}

#[tokio::test]
async fn a_suspension_survives_a_restart_and_resumes_in_another_process() {
    if let Ok(db) = std::env::var(CHILD_ENV) {
        // The first process: suspend, report the id, exit.
        let ex = executor(Path::new(&db)).await;
        let r = ex
            .execute(
                &Scope::new("s1"),
                ToolCall::new("call_9", "delete_branch", json!({"branch": "old"})),
            )
            .await
            .into_result();
        assert_eq!(r.status, Status::Suspended);
        println!("SUSPENSION_ID={}", r.suspension.unwrap().id);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "a_suspension_survives_a_restart_and_resumes_in_another_process",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_ENV, &db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SUSPENSION_ID="))
        .expect("child printed no id")
        .to_owned();

    // The second process: a fresh executor over the same file.
    let ex = executor(&db).await;
    let done = land(&ex, ex.resolve(&id, Resolution::Approve).await.unwrap()).await;
    assert_eq!(
        (done.call_id.as_str(), done.status),
        ("call_9", Status::Success)
    );
    assert_eq!(done.output[0].as_text().unwrap().content, "deleted old");
    assert!(
        ex.resolve(&id, Resolution::Approve).await.is_err(),
        "resolved twice"
    );

    // The event stream continues the child's numbering, and replays from disk.
    let mut sub = ex.events().subscribe("s1", 0).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..5 {
        let e = sub.next().await.unwrap().unwrap();
        seen.push((e.seq, matches!(e.kind, EventKind::Resolved { .. })));
    }
    assert_eq!(
        seen.iter().map(|s| s.0).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert!(seen[3].1, "the 4th event is the resolution: {seen:?}");
}

/// Resolving claims the pending call rather than deleting it: until the host has stored
/// the result and called `settled`, the call stays listed (as resolving), so a crash in
/// between leaves it findable, and nobody can resolve it a second time.
#[tokio::test]
async fn a_resolved_call_stays_listed_until_its_result_is_settled() {
    let dir = tempfile::tempdir().unwrap();
    let ex = executor(&dir.path().join("history.db")).await;
    let r = ex
        .execute(
            &Scope::new("s1"),
            ToolCall::new("call_1", "delete_branch", json!({"branch": "old"})),
        )
        .await
        .into_result();
    let id = r.suspension.unwrap().id;
    let listed = ex.pending("s1").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].resolving);

    let done = ex
        .resolve(&id, Resolution::Approve)
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.status, Status::Success);
    let listed = ex.pending("s1").await.unwrap();
    assert_eq!(listed.len(), 1, "the claim must not delete the call");
    assert!(listed[0].resolving);
    assert!(ex.resolve(&id, Resolution::Approve).await.is_err());

    ex.settled(&id).await.unwrap();
    assert!(ex.pending("s1").await.unwrap().is_empty());
    // Settling again (or one another process settled) is not an error.
    ex.settled(&id).await.unwrap();
}
