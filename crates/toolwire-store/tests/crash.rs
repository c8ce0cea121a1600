//! Acceptance: a writer killed with SIGKILL mid-stream loses no append that had returned,
//! leaves no partial blob under a final name and no row pointing at a missing blob.
//!
//! The test re-runs its own binary as the child writer (selected by an env var); the child
//! prints `ACK <i>` after each append returns, the parent kills it and checks the store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_store::{BlobKey, NewSession, StoreConfig, Stores};

const CHILD_ENV: &str = "TOOLWIRE_STORE_CRASH_CHILD_DIR";
const SESSION: &str = "crash-session";
const ACKS_BEFORE_KILL: usize = 120;

/// The i-th result: text, plus media of a size that varies so writes of every size are
/// in flight when the kill lands.
fn result_for(i: u64) -> (ToolResult, Vec<u8>) {
    let len = [2_000, 40_000, 700_000][(i % 3) as usize];
    let bytes = support::media_bytes(i, len);
    let result = ToolResult::success(
        CallRef::new(format!("call-{i}"), "snap"),
        vec![
            Value::text(format!("result {i}")),
            Value::file(Source::base64(support::b64(&bytes)), "video/mp4", None),
        ],
    );
    (result, bytes)
}

async fn child(dir: &Path) {
    let stores = Stores::open(dir, StoreConfig::default()).await.unwrap();
    let new = NewSession {
        id: Some(SESSION.into()),
        ..NewSession::default()
    };
    stores.create_session(new).await.unwrap();
    // A second stream of large blob writes, so the kill also lands inside one.
    let blobs = stores.blobs().clone();
    tokio::spawn(async move {
        for n in 0u64.. {
            let big = support::media_bytes(1_000_000 + n, 6 << 20);
            let mut w = blobs.writer(None).await.unwrap();
            for chunk in big.chunks(64 << 10) {
                w.write(chunk).await.unwrap();
            }
            w.finish().await.unwrap();
        }
    });
    let stdout = std::io::stdout();
    for i in 0u64.. {
        let (result, _) = result_for(i);
        stores.record_result(SESSION, result, None).await.unwrap();
        let mut out = stdout.lock();
        writeln!(out, "ACK {i}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn sigkill_mid_stream_keeps_every_returned_append() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(child(Path::new(&dir)));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sigkill_mid_stream_keeps_every_returned_append",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut acked = Vec::new();
    let started = Instant::now();
    let lines = BufReader::new(proc.stdout.take().unwrap()).lines();
    for line in lines {
        let line = line.unwrap();
        // libtest's "test name ... " has no newline, so the first ACK shares its line.
        if let Some((_, i)) = line.split_once("ACK ") {
            acked.push(i.parse::<u64>().unwrap());
        }
        if acked.len() >= ACKS_BEFORE_KILL || started.elapsed() > Duration::from_secs(120) {
            break;
        }
    }
    proc.kill().unwrap(); // SIGKILL on Unix
    proc.wait().unwrap();
    assert!(
        acked.len() >= ACKS_BEFORE_KILL,
        "child acknowledged only {} appends",
        acked.len()
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let stores = Stores::open(dir.path(), StoreConfig::default())
            .await
            .unwrap();
        let messages = stores.history().load(SESSION).await.unwrap();
        // Every acknowledged append is there, in order, with its media intact.
        assert!(
            messages.len() >= acked.len(),
            "{} stored < {} acked",
            messages.len(),
            acked.len()
        );
        for (m, i) in messages.iter().zip(&acked) {
            let result = m.content.as_tool_result().unwrap();
            let (expected, bytes) = result_for(*i);
            assert_eq!(result.call_id, expected.call_id);
            assert_eq!(result.output[0], expected.output[0]);
            let key = result.output[1].data["source"]["blob"].as_str().unwrap();
            assert_eq!(stores.blob(key).await.unwrap().as_ref(), bytes.as_slice());
        }
        // No blob under a final name is partial: each hashes to its own name.
        let listed = stores.blobs().list().await.unwrap();
        assert!(!listed.is_empty());
        for info in &listed {
            let bytes = stores.blobs().get(&info.key).await.unwrap();
            assert_eq!(
                format!("blake3:{}", blake3::hash(&bytes).to_hex()),
                info.key.as_str()
            );
        }
        // No row references a missing blob.
        for key in stores.history().referenced_blobs().await.unwrap() {
            assert!(listed.iter().any(|b| b.key == key), "missing {key}");
            BlobKey::parse(key.as_str()).unwrap();
        }
        // Leftovers of the killed writes are unfinished temps, and cleaning them leaves none.
        stores
            .blobs()
            .remove_stale_temps(Duration::ZERO)
            .await
            .unwrap();
        let leftovers = unfinished_files(&dir.path().join("blobs"));
        assert!(leftovers.is_empty(), "{leftovers:?}");
        // The store keeps working after the crash.
        let (next, _) = result_for(1_000_000);
        let m = stores.record_result(SESSION, next, None).await.unwrap();
        assert_eq!(m.seq, messages.len() as i64 + 1);
    });
}

fn unfinished_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for dir in std::fs::read_dir(root).unwrap().flatten() {
        if !dir.path().is_dir() {
            continue;
        }
        let in_tmp = dir.file_name() == "tmp";
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if in_tmp || f.file_name().to_string_lossy().contains('#') {
                found.push(f.path());
            }
        }
    }
    found
}
