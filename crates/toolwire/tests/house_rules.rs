//! House rules of the workspace's sources that the compiler does not keep (issue 42):
//! one import path per public item (no crate re-exports another crate's items), and no
//! import circle between the files of one crate (`scripts/import-cycles`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `pub use` of another crate's items gives them a second public path; callers import
/// from the crate that owns the item. The tool contract's `CancellationToken` (tokio-util's)
/// is the one kept: it is part of `ToolContext`, and tool authors need no tokio-util.
#[test]
fn no_crate_re_exports_another_crates_items() {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let mut statement: Option<String> = None;
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default().trim();
            let current = match statement.take() {
                Some(open) => open + " " + code,
                None if code.starts_with("pub use ") => code.to_owned(),
                None => continue,
            };
            if !current.ends_with(';') {
                statement = Some(current);
                continue;
            }
            let path = current.trim_start_matches("pub use ");
            let foreign = ["toolwire_", "tokio_util::"]
                .iter()
                .any(|prefix| path.starts_with(prefix));
            let kept = file.ends_with("toolwire-tool/src/lib.rs")
                && path == "tokio_util::sync::CancellationToken;";
            if foreign && !kept {
                found.push(format!("{}: {current}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "re-exports of another crate's items:\n{}",
        found.join("\n")
    );
}

/// Files of one crate that use each other (directly or round a circle) are one module in
/// two places; each circle was broken by moving a function to the file it belongs with
/// (toolwire-model's last: the view and the media routing take a `MediaRoute`, made from a
/// `Provider`, instead of asking the provider's format themselves).
#[test]
fn no_import_circles_between_the_files_of_a_crate() {
    let root = workspace();
    let mut crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .map(|name| format!("crates/{name}"))
        .collect();
    crates.sort();
    let run = std::process::Command::new("python3")
        .arg(root.join("scripts/import-cycles"))
        .args(&crates)
        .current_dir(&root)
        .output();
    let out = match run {
        Ok(out) => out,
        Err(e) => {
            let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
            assert!(!ci, "python3 is needed for scripts/import-cycles: {e}");
            eprintln!("skipped: no python3 ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "import circles:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
