//! `ExecutorConfig::default()` does not read the process environment (a library must not
//! change behaviour on a variable its embedder never heard of); `from_env` does. Run in a
//! child process, since a test cannot set variables safely in its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use toolwire_runtime::{DEBUG_RAW_ENV, ExecutorConfig};

const CHILD_ENV: &str = "TOOLWIRE_TEST_CONFIG_ENV_CHILD";

#[test]
fn the_default_config_ignores_the_environment_and_from_env_reads_it() {
    if std::env::var_os(CHILD_ENV).is_some() {
        assert_eq!(std::env::var(DEBUG_RAW_ENV).as_deref(), Ok("1"));
        assert!(!ExecutorConfig::default().debug_raw);
        assert!(ExecutorConfig::from_env().debug_raw);
        println!("CHILD_CHECKED");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "the_default_config_ignores_the_environment_and_from_env_reads_it",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .env(DEBUG_RAW_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("CHILD_CHECKED"),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
