//! `git_status` through the real executor on a real `git init` repository.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;

use serde_json::json;
use support::{Fixture, require_program};
use toolwire_core::View;
use toolwire_tools::GIT_STATUS_KIND;

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_SYSTEM", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn repo(f: &Fixture) {
    git(f.root(), &["init", "-q", "-b", "main"]);
    git(f.root(), &["config", "user.email", "t@example.com"]);
    git(f.root(), &["config", "user.name", "T"]);
    git(f.root(), &["config", "commit.gpgsign", "false"]);
}

#[tokio::test]
async fn a_clean_repo_is_collapsed() {
    if !require_program("git") {
        return;
    }
    let f = Fixture::new();
    repo(&f);
    f.write("README.md", "hi\n");
    git(f.root(), &["add", "."]);
    git(f.root(), &["commit", "-q", "-m", "init"]);
    let v = f.ok("git_status", json!({})).await;
    assert_eq!(v.kind.as_str(), GIT_STATUS_KIND);
    assert_eq!(
        v.data,
        json!({"branch": "main", "ahead": 0, "behind": 0, "staged": [], "modified": [],
               "untracked": [], "conflicted": []})
    );
    assert_eq!(v.summary.as_deref(), Some("0 staged, 0 modified"));
    let display = v.display.unwrap();
    assert_eq!(display.preferred_view, Some(View::Tree));
    assert_eq!(display.collapsed, Some(true));
}

#[tokio::test]
async fn staged_modified_and_untracked_paths_are_reported() {
    if !require_program("git") {
        return;
    }
    let f = Fixture::new();
    repo(&f);
    f.write("a.txt", "a\n");
    f.write("b.txt", "b\n");
    git(f.root(), &["add", "."]);
    git(f.root(), &["commit", "-q", "-m", "init"]);
    f.write("a.txt", "a changed\n");
    f.write("new dir/staged file.rs", "fn x() {}\n");
    git(f.root(), &["add", "new dir/staged file.rs"]);
    git(f.root(), &["mv", "b.txt", "c.txt"]);
    f.write("scratch.log", "x");

    let v = f.ok("git_status", json!({})).await;
    assert_eq!(v.data["branch"], "main");
    assert_eq!(v.data["modified"], json!(["a.txt"]));
    assert_eq!(
        v.data["staged"],
        json!(["b.txt -> c.txt", "new dir/staged file.rs"])
    );
    assert_eq!(v.data["untracked"], json!(["scratch.log"]));
    assert_eq!(v.summary.as_deref(), Some("2 staged, 1 modified"));
    assert_eq!(v.display.unwrap().collapsed, Some(false));
}

#[tokio::test]
async fn outside_a_repo_is_a_clear_error() {
    if !require_program("git") {
        return;
    }
    let f = Fixture::new();
    let (code, msg) = f.err("git_status", json!({})).await;
    assert_eq!(code, "not_a_git_repo");
    assert!(msg.contains("not inside a git repository"), "{msg}");
    let (code, _) = f.err("git_status", json!({"extra": 1})).await;
    assert_eq!(code, "invalid_input");
}

/// A repository's config cannot make `git_status` run a program: each way git would run
/// one during a status (fsmonitor hook, clean and process filters, hooks, one reached
/// through `include.path`) is switched off, and the status still comes back.
#[tokio::test]
async fn a_hostile_repository_config_runs_nothing() {
    if !require_program("git") {
        return;
    }
    let f = Fixture::new();
    repo(&f);
    f.write("a.txt", "hi\n");
    f.write(".gitattributes", "* filter=evil\n");
    git(f.root(), &["add", "."]);
    git(f.root(), &["commit", "-q", "-m", "init"]);
    let marker = |name: &str| f.root().join(format!("PWNED_{name}"));
    let touch = |name: &str| format!("touch '{}'; cat", marker(name).display());
    git(f.root(), &["config", "core.fsmonitor", &touch("fsmonitor")]);
    git(f.root(), &["config", "filter.evil.clean", &touch("clean")]);
    git(
        f.root(),
        &["config", "filter.evil.process", &touch("process")],
    );
    f.write(
        ".git/hooks-evil/post-index-change",
        format!("#!/bin/sh\n{}\n", touch("hook")),
    );
    std::fs::set_permissions(
        f.path(".git/hooks-evil/post-index-change"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    git(f.root(), &["config", "core.hooksPath", ".git/hooks-evil"]);
    f.write(
        ".git/extra.config",
        format!("[filter \"evil2\"]\n\tclean = {}\n", touch("included")),
    );
    git(f.root(), &["config", "include.path", "extra.config"]);
    f.write(".gitattributes", "* filter=evil\n*.md filter=evil2\n");
    f.write("b.md", "x\n");
    // Same size, new mtime: status must hash the file, which is when filters run.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    f.write("a.txt", "ho\n");
    let v = f.ok("git_status", json!({})).await;
    assert_eq!(v.kind.as_str(), GIT_STATUS_KIND);
    for name in ["fsmonitor", "clean", "process", "hook", "included"] {
        assert!(!marker(name).exists(), "git ran the {name} command");
    }
    assert!(
        v.data["modified"].to_string().contains("a.txt"),
        "{}",
        v.data
    );
}
