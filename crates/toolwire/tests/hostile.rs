//! The hostile corpus (`tests/hostile/`) through every command that reads a payload:
//! `render`, `validate`, `normalize` and `normalize --store`. Each ends (exit 0 or 1) in
//! bounded time, with no panic, no raw escape sequence or invisible character on the
//! terminal, and a store that still lists and shows what it holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the corpus is missing: {}", dir.display());
    files
}

fn run(args: &[&str]) -> Output {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("TOOLWIRE_MAX_INPUT_BYTES", "4000000")
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}",
        started.elapsed()
    );
    out
}

/// Exit 0 or 1, no panic, nothing on either stream that the terminal would act on or
/// hide: only our own SGR colour codes may start with ESC.
fn assert_safe(args: &[&str], out: &Output) {
    let code = out.status.code();
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
            "{args:?} {name}: {text}"
        );
        for bad in [
            '\u{7}', '\u{9b}', '\u{202e}', '\u{200b}', '\u{feff}', '\u{2028}',
        ] {
            assert!(!text.contains(bad), "{args:?} {name} has {bad:?}: {text:?}");
        }
        let mut rest = text.as_ref();
        while let Some(i) = rest.find('\u{1b}') {
            rest = &rest[i + 1..];
            let sgr = rest.strip_prefix('[').is_some_and(|r| {
                let end = r.find(|c: char| !(c.is_ascii_digit() || c == ';'));
                end.is_some_and(|e| r[e..].starts_with('m'))
            });
            assert!(sgr, "{args:?} {name}: a non-SGR escape: {text:?}");
        }
    }
    assert!(
        matches!(code, Some(0) | Some(1)),
        "{args:?}: exit {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_hostile_payload_is_handled_safely_by_every_command() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_str().unwrap();
    for file in corpus() {
        let f = file.to_str().unwrap();
        for args in [
            vec!["render", f],
            vec!["render", "--expand", f],
            vec!["validate", f],
            vec!["normalize", f],
            vec!["--data-dir", dir, "normalize", "--store", f],
        ] {
            assert_safe(&args, &run(&args));
        }
    }
    // Whatever was stored can be listed and shown, and is still safe to print.
    let sessions = run(&["--data-dir", dir, "sessions", "--json"]);
    assert_safe(&["sessions"], &sessions);
    let list: serde_json::Value = serde_json::from_slice(&sessions.stdout).unwrap();
    for s in list.as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        let args = ["--data-dir", dir, "show", id];
        assert_safe(&args, &run(&args));
    }
    let args = ["--data-dir", dir, "sessions"];
    assert_safe(&args, &run(&args));
}

/// Specific outcomes: deep JSON and traversal are refused with a clear line; a blob
/// reference whose size lies is not trusted.
#[test]
fn specific_hostile_payloads_get_clear_answers() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hostile");
    let deep = corpus.join("deep_json.json");
    let out = run(&["validate", deep.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("recursion limit"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let traversal = corpus.join("traversal.json");
    let out = run(&["validate", traversal.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid blob key"));
    // Bytes that are not base64 are refused by validate as by normalize.
    let bad = corpus.join("bad_base64.json");
    let out = run(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("output[0].data.source.base64: not valid base64"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A data URI that lies about its type is corrected with a note, not silently.
    let lying = corpus.join("lying_data_uri.json");
    let out = run(&["normalize", lying.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("declared image/png but the bytes are"),
        "{stderr}"
    );
}

/// A failing MCP server's stderr is quoted in the gateway's report of it: the quote is
/// sanitized as any printed text, so the server cannot clear the operator's screen or
/// write their clipboard (OSC 52) through it. stdout stays the protocol's.
#[test]
fn a_failing_servers_stderr_reaches_the_gateways_terminal_sanitized() {
    let data = tempfile::tempdir().unwrap();
    let server = "bad=sh -c \"printf '\\033[2Jwiped\\033]52;c;aGVsbG8=\\007 \\342\\200\\256 gone\\n' >&2; exit 3\"";
    let args = [
        "--data-dir",
        data.path().to_str().unwrap(),
        "gateway",
        "--mcp",
        server,
    ];
    let out = run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("toolwire gateway: "), "{stderr:?}");
    assert!(
        stderr.contains("wiped") && stderr.contains("gone"),
        "{stderr:?}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert_safe(&args, &out);
}
