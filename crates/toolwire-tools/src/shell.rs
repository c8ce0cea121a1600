//! `run`: a shell command (`sh -c`) in the workspace root, its interleaved stdout and
//! stderr returned as a `text` value marked as shell output.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value as Json, json};
use tokio::io::AsyncReadExt;
use toolwire_core::{CallRef, ToolResult, Value};

use crate::shell_output::Captured;
use crate::workspace::Workspace;
use toolwire_tool::ToolContext;
use toolwire_tool::{ApprovalPolicy, ToolAnnotations};
use toolwire_tool::{Output, Tool, ToolError, tool_fn};

/// `_meta` key naming what produced a value's text, for consumers that treat some
/// outputs specially. Set to [`SHELL_OUTPUT`] on `run`'s output: model views truncate
/// such text keeping more of its tail than its head, since a command's end (the error,
/// the test summary, the exit) matters more than its start.
pub const TOOLWIRE_OUTPUT_META: &str = "toolwire/output";
/// The [`TOOLWIRE_OUTPUT_META`] value for a shell command's combined stdout and stderr.
pub const SHELL_OUTPUT: &str = "shell";

pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 120;
pub(crate) const MAX_TIMEOUT_SECS: u64 = 600;
/// After the shell exits, how long to keep reading output that its background processes
/// may still hold the pipe open for.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunArgs {
    /// The command line, run by `sh -c` in the workspace root.
    pub command: String,
    /// Seconds before the command is killed. Default 120, at most 600.
    #[schemars(range(min = 1, max = 600))]
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// The `run` tool in `workspace`'s root. Asks for approval by default: a command can do
/// anything the host user can.
pub fn run(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "run",
        "Runs a shell command with `sh -c` in the workspace root, without a terminal or \
         standard input. Returns its stdout and stderr interleaved, with the exit code in \
         the summary; a non-zero exit is an error that still carries the output. The \
         command is killed after `timeout_secs` (default 120, at most 600).",
        move |args: RunArgs, ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move { run_command(workspace.root(), args, ctx).await }
        },
    )
    .with_schema(|s| {
        s.approval = ApprovalPolicy::Always;
        // Above the tool's own limit, so the command is killed and its output kept
        // rather than the executor giving up on the call first.
        s.timeout = Some(Duration::from_secs(MAX_TIMEOUT_SECS + 10));
        s.annotations = Some(ToolAnnotations {
            destructive_hint: Some(true),
            open_world_hint: Some(true),
            ..Default::default()
        });
    })
}

/// Kills the command's whole process group when the call ends, however it ends: dropping
/// the future (the executor gave up on the call) must not leave the command running, and
/// neither may anything it started in the background (`server &`), which would outlive
/// the call the person approved.
struct GroupKill {
    pgid: Option<Pid>,
}

impl GroupKill {
    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // ESRCH (already gone) is the goal reached.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

enum Ended {
    Exited(ExitStatus),
    TimedOut,
}

async fn run_command(root: &Path, args: RunArgs, ctx: ToolContext) -> Result<Output, ToolError> {
    let timeout_secs = args
        .timeout_secs
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS);
    let spawn_err = |e: std::io::Error| {
        ToolError::with_code("spawn_failed", format!("could not start `sh`: {e}"))
    };
    // One pipe for both streams keeps their lines in the order the command wrote them.
    let (read_end, write_end) = std::io::pipe().map_err(spawn_err)?;
    let stderr_end = write_end.try_clone().map_err(spawn_err)?;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&args.command)
        .current_dir(root)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(write_end)
        .stderr(stderr_end)
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(spawn_err)?;
    // The command holds our copies of the write end; EOF comes only once they are closed.
    drop(cmd);
    let mut group = GroupKill {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    };
    let mut reader = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(read_end))
        .map_err(spawn_err)?;

    let mut out = Captured::default();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut eof = false;
    let deadline = tokio::time::sleep(Duration::from_secs(timeout_secs));
    tokio::pin!(deadline);
    let ended = loop {
        tokio::select! {
            _ = ctx.cancel.cancelled() => {
                group.kill();
                return Err(ToolError::Cancelled);
            }
            _ = &mut deadline => {
                group.kill();
                break Ended::TimedOut;
            }
            n = reader.read(&mut chunk), if !eof => match n {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => out.push(&chunk[..n]),
            },
            status = child.wait() => match status {
                Ok(status) => break Ended::Exited(status),
                Err(e) => return Err(ToolError::with_code("io", format!("waiting for the command failed: {e}"))),
            },
        }
    };
    // Whatever the command wrote before it ended is still in the pipe. (A background child
    // still holding the pipe is cut off after the grace period and killed below.)
    let _ = tokio::time::timeout(DRAIN_GRACE, async {
        while !eof {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => out.push(&chunk[..n]),
            }
        }
    })
    .await;
    if matches!(ended, Ended::TimedOut) {
        // Reap it; SIGKILL makes this quick, and kill_on_drop covers the rest.
        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    }

    // The call is over: nothing it started keeps running. A child that left the group
    // with `setsid` escapes this; only a cgroup would hold it.
    group.kill();
    let text = out.into_text();
    let call = CallRef::new(&*ctx.call_id, "run");
    let (summary, failure) = match ended {
        Ended::TimedOut => (
            format!("timed out after {timeout_secs}s"),
            Some((
                "timeout",
                format!("the command timed out after {timeout_secs}s and was killed"),
                json!({"timeoutSecs": timeout_secs}),
            )),
        ),
        Ended::Exited(status) => match (status.code(), status.signal()) {
            (Some(0), _) => ("exit 0".to_owned(), None),
            (Some(code), _) => (
                format!("exit {code}"),
                Some((
                    "exit_status",
                    format!("the command exited with status {code}"),
                    json!({"exitCode": code}),
                )),
            ),
            (None, Some(sig)) => (
                format!("killed by signal {sig}"),
                Some((
                    "signal",
                    format!("the command was killed by signal {sig}"),
                    json!({"signal": sig}),
                )),
            ),
            (None, None) => (
                "ended".to_owned(),
                Some((
                    "exit_status",
                    "the command ended without an exit status".to_owned(),
                    Json::Null,
                )),
            ),
        },
    };
    let value = shell_text(text, summary);
    Ok(match failure {
        None => Output::Values(vec![value]),
        Some((code, message, details)) => {
            let mut result = ToolResult::error_with_code(call, code, message).with_output(value);
            if let Some(info) = result.error.as_mut()
                && !details.is_null()
            {
                info.details = Some(details);
            }
            Output::Result(Box::new(result))
        }
    })
}

/// A shell output value: text with its `_meta` marker.
fn shell_text(text: String, summary: String) -> Value {
    let mut value = Value::text(text).summary(summary);
    let mut meta = Map::new();
    meta.insert(TOOLWIRE_OUTPUT_META.into(), Json::from(SHELL_OUTPUT));
    value.meta = Some(meta);
    value
}
