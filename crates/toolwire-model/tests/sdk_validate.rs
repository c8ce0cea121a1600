//! Every scenario's request body, for every provider, validated by the providers' official
//! SDK type definitions (PyPI `anthropic`, `openai`, `google-genai`) through pydantic.
//! Needs python3 with those packages: missing ones fail under CI and skip otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use toolwire_model::{Provider, encode_request};

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn skip_or_fail(reason: &str) {
    assert!(!ci(), "SDK validation cannot run under CI: {reason}");
    println!("skipping SDK validation (CI is unset): {reason}");
}

#[tokio::test]
async fn encoded_requests_validate_against_official_sdk_types() {
    let dir = std::env::temp_dir().join(format!("toolwire-sdk-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let blobs = support::blobs();
    let mut files: Vec<PathBuf> = Vec::new();
    for (name, conv) in support::scenarios() {
        for provider in Provider::ALL {
            let (body, _) = encode_request(provider, &conv, &support::options(), &blobs)
                .await
                .unwrap();
            let path = dir.join(format!("{name}.{provider}.json"));
            std::fs::write(&path, serde_json::json!({ "request": body }).to_string()).unwrap();
            files.push(path);
        }
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk_validate.py");
    let output = match Command::new("python3").arg(&script).args(&files).output() {
        Ok(output) => output,
        Err(e) => return skip_or_fail(&format!("python3 not runnable: {e}")),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    std::fs::remove_dir_all(&dir).ok();
    if output.status.code() == Some(3) {
        return skip_or_fail(&format!(
            "{} (pip install anthropic openai google-genai)",
            stderr.trim()
        ));
    }
    assert!(
        output.status.success(),
        "SDK validation failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(&format!("{} passed, 0 failed", files.len())),
        "unexpected validator output:\n{stdout}"
    );
}
