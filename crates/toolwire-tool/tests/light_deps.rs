//! The tool-author crate stays light: what `cargo tree` shows for it (normal dependencies,
//! with features) holds no SQL, no HTTP client, no object store, no CSV and no tokio
//! process support. A tool author compiles this crate and core, nothing of the host.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

/// Crates that belong to the host side (storage, HTTP, files, processes), never here.
const FORBIDDEN: [&str; 9] = [
    "sqlx",
    "libsqlite3-sys",
    "reqwest",
    "hyper",
    "object_store",
    "csv",
    "nix",
    "toolwire-store",
    "toolwire-runtime",
];

#[test]
fn the_tool_author_crate_pulls_in_nothing_heavy() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--manifest-path",
            manifest,
            "-p",
            "toolwire-tool",
            "-e",
            "normal,features",
            "--prefix",
            "none",
        ])
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tree.contains("toolwire-core"), "unexpected tree:\n{tree}");
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for bad in FORBIDDEN {
        assert!(
            !names.contains(&bad),
            "toolwire-tool depends on {bad}:\n{tree}"
        );
    }
    assert!(
        !tree.contains("tokio feature \"process\""),
        "toolwire-tool enables tokio's process feature:\n{tree}"
    );
}
