//! Golden request bodies: every scenario encoded for every provider, compared with the
//! reviewed files in tests/golden/. `UPDATE_GOLDEN=1` rewrites them (then read the diff).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;

use toolwire_model::{Provider, encode_request};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

#[tokio::test]
async fn request_bodies_match_golden_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let blobs = support::blobs();
    let mut mismatches = Vec::new();
    for (name, conv) in support::scenarios() {
        for provider in Provider::ALL {
            let (body, diags) = encode_request(provider, &conv, &support::options(), &blobs)
                .await
                .unwrap();
            let doc = serde_json::json!({ "request": body, "diagnostics": diags });
            let text = serde_json::to_string_pretty(&doc).unwrap() + "\n";
            let path = golden_dir().join(format!("{name}.{provider}.json"));
            if update {
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run with UPDATE_GOLDEN=1 and review)",
                    path.display()
                )
            });
            if expected != text {
                mismatches.push(path.display().to_string());
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "golden mismatch (UPDATE_GOLDEN=1 to rewrite, then review): {mismatches:#?}"
    );
}
