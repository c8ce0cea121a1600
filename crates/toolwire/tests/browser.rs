//! The web app in a real browser: runs tests/web (node's test runner, playwright-core
//! driving Debian's chromium) against this build's `toolwire serve`. Needs node,
//! `npm ci --prefix tests/web`, chromium and ffmpeg (which .ci/run installs): with CI set
//! a missing one fails the test; without CI it skips, saying why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn missing(what: &str) -> bool {
    if std::env::var_os("CI").is_some() {
        panic!(
            "{what}, and CI is set: run .ci/run's setup (apt-get install chromium ffmpeg; npm ci --prefix tests/web)"
        );
    }
    eprintln!("skipping the browser tests: {what} (set CI to make this a failure)");
    true
}

fn runs(program: &str, version_flag: &str) -> bool {
    Command::new(program)
        .arg(version_flag)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_web_app_in_chromium() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let web_tests = root.join("tests/web");
    let chromium = std::env::var_os("TOOLWIRE_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !web_tests.join("node_modules/playwright-core").is_dir()
        && missing("tests/web/node_modules is not installed")
        || !chromium.exists() && missing("chromium is not installed")
        || !runs("ffmpeg", "-version") && missing("ffmpeg is not installed")
        || !runs("node", "--version") && missing("node is not installed")
    {
        return;
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let out = Command::new("node")
        .args(["--test", "--test-concurrency=1"])
        .current_dir(&web_tests)
        .env("TOOLWIRE_BIN", env!("CARGO_BIN_EXE_toolwire"))
        .env("TOOLWIRE_CHROMIUM", &chromium)
        .env("CARGO_TARGET_DIR", absolute(&target))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The figures and any failure are in the runner's TAP output.
    for line in stdout
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("not ok") || l.contains("first render"))
    {
        println!("{line}");
    }
    assert!(
        out.status.success(),
        "browser tests failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("# pass ") && !stdout.contains("# pass 0"),
        "no browser test ran:\n{stdout}"
    );
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_owned()
    } else {
        std::env::current_dir().unwrap().join(p)
    }
}
