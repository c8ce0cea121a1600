//! `run` through the real executor with a real `sh`: output and exit codes, the shell
//! marker, timeouts and cancels that kill the command, bounded output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use support::{Fixture, assert_valid, require_program};
use toolwire_core::ToolCall;
use toolwire_core::{Status, ToolResult, WellKnown};
use toolwire_runtime::{Executor, Registry, Scope};
use toolwire_tool::reconfigure;
use toolwire_tool::{ApprovalPolicy, Tool, ToolContext};
use toolwire_tools::{SHELL_OUTPUT, TOOLWIRE_OUTPUT_META, Workspace, run};

fn text(r: &ToolResult) -> &str {
    assert_eq!(r.output.len(), 1, "{r:#?}");
    let v = &r.output[0];
    assert!(v.is_kind(WellKnown::Text));
    assert_eq!(
        v.meta.as_ref().unwrap()[TOOLWIRE_OUTPUT_META],
        Json::from(SHELL_OUTPUT)
    );
    v.data["content"].as_str().unwrap()
}

fn summary(r: &ToolResult) -> &str {
    r.output[0].summary.as_deref().unwrap()
}

#[tokio::test]
async fn a_command_returns_interleaved_output_and_exit_0() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let r = f
        .call(
            "run",
            json!({"command": "echo out1; echo err1 >&2; echo out2"}),
        )
        .await;
    assert_eq!(r.status, Status::Success, "{:?}", r.error);
    assert_eq!(text(&r), "out1\nerr1\nout2\n");
    assert_eq!(summary(&r), "exit 0");
}

#[tokio::test]
async fn it_runs_in_the_workspace_root_and_needs_approval() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let first = f.call_raw("run", json!({"command": "touch ran"})).await;
    assert_eq!(first.status, Status::Suspended);
    assert!(!f.path("ran").exists(), "ran before approval");
    let r = f.call("run", json!({"command": "pwd"})).await;
    let root = f.root().canonicalize().unwrap();
    assert_eq!(text(&r).trim_end(), root.to_str().unwrap());
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_that_keeps_the_output() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let r = f
        .call(
            "run",
            json!({"command": "echo compiling; echo 'boom' >&2; exit 3"}),
        )
        .await;
    assert_eq!(r.status, Status::Error);
    let e = r.error.as_ref().unwrap();
    assert_eq!(e.code.as_deref(), Some("exit_status"));
    assert!(e.message.contains("status 3"), "{}", e.message);
    assert_eq!(e.details.as_ref().unwrap()["exitCode"], 3);
    assert_eq!(text(&r), "compiling\nboom\n");
    assert_eq!(summary(&r), "exit 3");
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_keeps_what_it_printed() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let started = Instant::now();
    let r = f
        .call(
            "run",
            json!({"command": "echo started; sleep 30 & echo $! > bg.pid; sleep 30", "timeout_secs": 1}),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.error.as_ref().unwrap().code.as_deref(), Some("timeout"));
    assert_eq!(text(&r), "started\n");
    assert_eq!(summary(&r), "timed out after 1s");
    // The whole process group went, background jobs included.
    assert_dead(&f.path("bg.pid")).await;
}

#[tokio::test]
async fn a_cancel_kills_the_command() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    // `run` without approval, so the call runs under a scope this test can cancel.
    let ws = Arc::new(Workspace::new(f.root()).unwrap());
    let mut registry = Registry::new();
    registry
        .register_arc(reconfigure(Arc::new(run(ws)), |s| {
            s.approval = ApprovalPolicy::Never;
        }))
        .unwrap();
    let exec = Executor::new(registry);
    let scope = Scope::new("s");
    let started = Instant::now();
    let call = ToolCall::new(
        "c",
        "run",
        json!({"command": "sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; wait"}),
    );
    let canceller = async {
        wait_for(&f.path("sh.pid")).await;
        scope.cancel.cancel();
    };
    let (r, ()) = tokio::join!(exec.execute(&scope, call), canceller);
    assert!(started.elapsed() < Duration::from_secs(10));
    let r = r.into_result();
    assert_valid(&r);
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.error.unwrap().code.as_deref(), Some("cancelled"));
    assert_dead(&f.path("sh.pid")).await;
    assert_dead(&f.path("bg.pid")).await;
}

#[tokio::test]
async fn the_executor_giving_up_kills_the_command() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let tool = run(Arc::new(Workspace::new(f.root()).unwrap()));
    let ctx = ToolContext::detached("call_4");
    let fut = tool.execute(
        json!({"command": "sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; wait"}),
        ctx,
    );
    let pid = f.path("sh.pid");
    // Dropping the future, as the executor does on its own timeout, must not leak it.
    let _ = tokio::time::timeout(Duration::from_millis(300), async {
        let (r, ()) = tokio::join!(fut, wait_for(&pid));
        r
    })
    .await;
    assert_dead(&f.path("sh.pid")).await;
    assert_dead(&f.path("bg.pid")).await;
}

#[tokio::test]
async fn a_background_process_does_not_hold_the_call_open() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let started = Instant::now();
    let r = f
        .call("run", json!({"command": "sleep 5 & echo done"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.status, Status::Success);
    assert_eq!(text(&r), "done\n");
}

/// Something a command starts in the background ends with the call: it must not keep
/// running (a server, a miner) after the call the person approved is over.
#[tokio::test]
async fn a_background_process_ends_with_the_call() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let r = f
        .call(
            "run",
            json!({"command": "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo started"}),
        )
        .await;
    assert_eq!(r.status, Status::Success);
    assert_eq!(text(&r), "started\n");
    assert_dead(&f.path("bg.pid")).await;
}

#[tokio::test]
async fn huge_and_non_utf8_output_is_bounded_and_lossless_in_shape() {
    if !require_program("sh") {
        return;
    }
    let f = Fixture::new();
    let r = f
        .call(
            "run",
            json!({"command": "i=0; while [ $i -lt 40000 ]; do echo \"line $i of a long build log....\"; i=$((i+1)); done; echo FINAL"}),
        )
        .await;
    assert_eq!(r.status, Status::Success);
    let out = text(&r);
    assert!(out.starts_with("line 0 of"), "{}", &out[..40]);
    assert!(out.ends_with("FINAL\n"));
    assert!(out.contains("bytes of output omitted"));
    assert!(out.len() < 1_100_000, "{}", out.len());

    let r = f
        .call("run", json!({"command": "printf 'ok \\377\\376\\n'"}))
        .await;
    assert_eq!(r.status, Status::Success);
    assert!(text(&r).starts_with("ok "));
    assert_valid(&r);
}

#[tokio::test]
async fn bad_input_is_refused_before_approval() {
    let f = Fixture::new();
    for input in [
        json!({}),
        json!({"command": 3}),
        json!({"command": "ls", "timeout_secs": 0}),
        json!({"command": "ls", "timeout_secs": 601}),
    ] {
        let r = f.call_raw("run", input.clone()).await;
        assert_eq!(r.status, Status::Error, "{input}");
        assert_eq!(r.error.unwrap().code.as_deref(), Some("invalid_input"));
    }
}

async fn wait_for(path: &std::path::Path) {
    for _ in 0..200 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.trim().parse::<i32>().is_ok()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} never appeared", path.display());
}

/// The process whose pid is in `pid_file` is gone (or a zombie awaiting its reaper).
async fn assert_dead(pid_file: &std::path::Path) {
    let pid = std::fs::read_to_string(pid_file).unwrap().trim().to_owned();
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    panic!("process {pid} is still running");
}
