//! Fault: SQLite busy. Two processes append to one session in one SQLite file at full
//! speed (results with media, and events) while a third holds the write lock for a while
//! and readers load the session. Nobody sees "database is locked", every result lands
//! exactly once, the session's message and event numbers have no gap and no duplicate,
//! and every blob a row names is stored.
//!
//! The test re-runs its own binary as each writer (selected by an env var), as crash.rs
//! does: two processes, not two tasks, since tasks of one process share one writer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use sqlx::{Connection, SqliteConnection};
use toolwire_core::{CallRef, EventKind, Message, Source, ToolResult, Value};
use toolwire_store::{BlobKey, NewSession, StoreConfig, Stores};

const CHILD_ENV: &str = "TOOLWIRE_STORE_BUSY_CHILD";
const SESSION: &str = "busy-session";
const PER_WRITER: u64 = 400;
const TEST: &str = "two_processes_and_a_lock_holder_contend_and_nothing_is_lost";

fn result_for(writer: &str, i: u64) -> ToolResult {
    // Every fourth result carries media over the inline threshold, so blob writes and
    // their rows race too.
    let mut output = vec![Value::text(format!("{writer} {i}"))];
    if i.is_multiple_of(4) {
        let bytes = support::media_bytes(i * 7 + writer.len() as u64, 3_000);
        output.push(Value::file(
            Source::base64(support::b64(&bytes)),
            "video/mp4",
            None,
        ));
    }
    ToolResult::success(CallRef::new(format!("{writer}-{i}"), "busy"), output)
}

async fn writer(dir: &Path, name: &str) {
    let stores = Stores::open(dir, StoreConfig::default()).await.unwrap();
    for i in 0..PER_WRITER {
        stores
            .record_result(SESSION, result_for(name, i), None)
            .await
            .unwrap_or_else(|e| panic!("{name} append {i}: {e}"));
        stores
            .events()
            .append_event(
                SESSION,
                format!("2026-11-23T00:00:00.{i:03}Z"),
                EventKind::Progress {
                    call_id: format!("{name}-{i}"),
                    done: i,
                    total: Some(PER_WRITER),
                    message: None,
                },
            )
            .await
            .unwrap_or_else(|e| panic!("{name} event {i}: {e}"));
    }
}

#[test]
fn two_processes_and_a_lock_holder_contend_and_nothing_is_lost() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        let (name, dir) = spec.split_once(':').unwrap();
        rt.block_on(writer(Path::new(dir), name));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    rt.block_on(async {
        let stores = Stores::open(dir.path(), StoreConfig::default())
            .await
            .unwrap();
        stores
            .create_session(NewSession {
                id: Some(SESSION.into()),
                ..NewSession::default()
            })
            .await
            .unwrap();
    });
    let spawn = |name: &str| {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, format!("{name}:{}", dir.path().display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn("a"), spawn("b")];

    rt.block_on(async {
        // A third party takes the write lock and keeps it for two seconds, twice, while
        // the writers run: they must wait for it (busy_timeout), not fail.
        let url = format!("sqlite://{}", dir.path().join("history.db").display());
        let mut holder = SqliteConnection::connect(&url).await.unwrap();
        let stores = Stores::open(dir.path(), StoreConfig::default())
            .await
            .unwrap();
        for _ in 0..2 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut holder)
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_secs(2)).await;
            sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
            // Readers are never blocked (WAL): a load works between and during writes.
            stores.history().load(SESSION).await.unwrap();
        }
    });
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    rt.block_on(async {
        let stores = Stores::open(dir.path(), StoreConfig::default())
            .await
            .unwrap();
        let messages = stores.history().load(SESSION).await.unwrap();
        let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
        let expected: Vec<i64> = (1..=2 * PER_WRITER as i64).collect();
        assert_eq!(seqs, expected, "message numbers have no gap or duplicate");
        let mut calls = BTreeSet::new();
        for m in &messages {
            let Message::ToolResult(r) = &m.content else {
                panic!("only results were appended");
            };
            assert!(calls.insert(r.call_id.clone()), "{} twice", r.call_id);
            for res in &r.resources {
                let key = BlobKey::parse(&res.uri).unwrap();
                assert!(
                    stores.blobs().size(&key).await.unwrap().is_some(),
                    "{} names a missing blob",
                    r.call_id
                );
            }
        }
        for w in ["a", "b"] {
            for i in 0..PER_WRITER {
                assert!(calls.contains(&format!("{w}-{i}")), "{w}-{i} lost");
            }
        }
        let events = stores.events().events_since(SESSION, 0).await.unwrap();
        let event_seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        let expected: Vec<u64> = (1..=2 * PER_WRITER).collect();
        assert_eq!(
            event_seqs, expected,
            "event numbers have no gap or duplicate"
        );
    });
}
