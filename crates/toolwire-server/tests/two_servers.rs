//! Two `serve` processes' worth of hosts on one data directory, writing one session at
//! once: its events are numbered 1..n with no number twice or missing, and every call's
//! result is stored once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use support::{start_in, wait_for};

#[tokio::test]
async fn two_servers_on_one_data_dir_never_renumber_a_session() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f.txt"), "x").unwrap();
    let a = start_in(data.path(), ws.path(), None, None).await;
    let b = start_in(data.path(), ws.path(), None, None).await;
    let id = a.session().await;
    const CALLS: usize = 20;
    let mut sent = Vec::new();
    for i in 0..CALLS {
        let server = if i % 2 == 0 { &a } else { &b };
        sent.push(
            server
                .post(
                    &format!("/api/sessions/{id}/calls"),
                    json!({"tool": "read_file", "input": {"path": "f.txt"}}),
                )
                .send(),
        );
    }
    for r in futures::future::join_all(sent).await {
        assert_eq!(r.unwrap().status(), 202);
    }
    let events = wait_for(&a, &id, |e| {
        e.iter().filter(|e| e["type"] == "tool_result").count() == CALLS
    })
    .await;
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    // Both servers read the same session.
    let from_b = b.json(&format!("/api/sessions/{id}")).await;
    let results = from_b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["role"] == "tool_result" || m["type"] == "tool_result" || m.get("result").is_some()
        })
        .count();
    assert_eq!(results, CALLS, "{from_b}");
    a.stop().await;
    b.stop().await;
}
