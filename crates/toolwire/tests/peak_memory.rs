//! A large text result is stored and shown in a bounded multiple of its size: the input,
//! its parsed form, the row SQLite writes, the printed lines, never five copies more
//! (a 200 MB string once took 1.2 GB to store and 1.5 GB to show).
//!
//! Its own test binary, so the peak the kernel reports for waited-for children is theirs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};

use nix::sys::resource::{UsageWho, getrusage};

/// The largest resident set of any child waited for so far, in bytes.
fn children_peak() -> u64 {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    u64::try_from(usage.max_rss()).unwrap_or(0) * 1024
}

fn toolwire(data: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["--data-dir", data.to_str().unwrap()])
        .args(args)
        .env("TOOLWIRE_MAX_INPUT_BYTES", "1000000000")
        .env_remove("TOOLWIRE_DATABASE_URL")
        .env_remove("TOOLWIRE_BLOB_URL")
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn a_large_text_result_is_stored_and_shown_in_bounded_memory() {
    const SIZE: usize = 48 * 1024 * 1024;
    // What a process of ours holds with no result at all (code, runtime, SQLite cache).
    const BASE: u64 = 48 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let payload = dir.path().join("big.json");
    let text = "0123456789abcdef ".repeat(SIZE / 17);
    std::fs::write(
        &payload,
        serde_json::to_vec(&serde_json::json!({"content": [{"type": "text", "text": text}]}))
            .unwrap(),
    )
    .unwrap();
    let data = dir.path().join("data");
    let printed = toolwire(
        &data,
        &[
            "normalize",
            "--store",
            "--compact",
            payload.to_str().unwrap(),
        ],
    );
    assert!(printed.len() > SIZE, "the whole result is printed");
    let store_peak = children_peak();
    let bound = 5 * SIZE as u64 + BASE;
    assert!(
        store_peak < bound,
        "storing {SIZE} bytes peaked at {store_peak} bytes (bound {bound})"
    );

    let sessions: serde_json::Value =
        serde_json::from_slice(&toolwire(&data, &["sessions", "--json"])).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_owned();
    let shown = toolwire(&data, &["show", &id]);
    // The text is wrapped at the width: joined again, every piece is there.
    let joined: Vec<u8> = shown.into_iter().filter(|b| *b != b'\n').collect();
    assert_eq!(
        joined
            .windows(17)
            .filter(|w| w == b"0123456789abcdef ")
            .count(),
        SIZE / 17,
        "every piece of the text is shown"
    );
    let show_peak = children_peak();
    assert!(
        show_peak < bound,
        "showing {SIZE} bytes peaked at {show_peak} bytes (bound {bound})"
    );
    eprintln!(
        "peak RSS for a {SIZE}-byte text: store {store_peak} bytes, store and show {show_peak}"
    );
}
