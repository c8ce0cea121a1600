//! The light crates stay light: what `cargo tree` shows for each (normal dependencies,
//! with features) holds no SQL, no HTTP client, no object store, no CSV and no tokio
//! process support. A tool author compiles toolwire-tool and core, nothing of the host;
//! an embedder of the contract engine (toolwire-runtime) gets the storage traits, not the
//! database and S3 clients behind them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

/// Crates that belong to the host side (storage backends, HTTP, files, processes).
const HEAVY: [&str; 7] = [
    "sqlx",
    "libsqlite3-sys",
    "reqwest",
    "hyper",
    "object_store",
    "csv",
    "nix",
];

/// The names in `cargo tree -p package` (normal dependencies, with features), and the
/// tree's text.
fn tree_of(package: &str) -> (Vec<String>, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--manifest-path",
            manifest,
            "-p",
            package,
            "-e",
            "normal,features",
            "--prefix",
            "none",
        ])
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cargo tree -p {package} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    (names, tree)
}

/// `package` pulls in none of `HEAVY` nor `also`, nor tokio's process support.
fn assert_light(package: &str, also: &[&str]) -> Vec<String> {
    let (names, tree) = tree_of(package);
    assert!(
        names.iter().any(|n| n == package),
        "unexpected tree:\n{tree}"
    );
    for bad in HEAVY.iter().chain(also) {
        assert!(
            !names.iter().any(|n| n == bad),
            "{package} depends on {bad}:\n{tree}"
        );
    }
    assert!(
        !tree.contains("tokio feature \"process\""),
        "{package} enables tokio's process feature:\n{tree}"
    );
    names
}

#[test]
fn the_tool_author_crate_pulls_in_nothing_heavy() {
    let names = assert_light("toolwire-tool", &["toolwire-store", "toolwire-runtime"]);
    assert!(names.iter().any(|n| n == "toolwire-core"));
}

#[test]
fn the_data_model_pulls_in_nothing_heavy() {
    assert_light(
        "toolwire-core",
        &["toolwire-store", "toolwire-runtime", "tokio"],
    );
}

/// The runtime takes the store's traits (`default-features = false`), not its backends.
#[test]
fn the_contract_engine_pulls_in_no_storage_backend() {
    let names = assert_light("toolwire-runtime", &[]);
    assert!(names.iter().any(|n| n == "toolwire-store"));
}
