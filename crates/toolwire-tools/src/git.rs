//! `git_status`: the workspace's git status as a custom, namespaced `git.status` value
//! (docs/contracts.md, "Result kinds and display hints"), parsed from
//! `git status --porcelain=v2 --branch -z`.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolwire_core::{Value, View};

use crate::workspace::Workspace;
use toolwire_tool::ToolAnnotations;
use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

/// The kind of `git_status`'s value. Renderers that do not know it show a tree.
pub const GIT_STATUS_KIND: &str = "git.status";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GitStatusArgs {}

/// `git.status` data. Paths are as git prints them; a rename is `old -> new`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitStatus {
    /// The current branch, or `(detached)`.
    pub branch: String,
    /// Commits ahead of and behind the upstream; 0 without one.
    pub ahead: u64,
    /// Commits behind the upstream; 0 without one.
    pub behind: u64,
    /// Changes in the index.
    pub staged: Vec<String>,
    /// Changes in the work tree not yet staged.
    pub modified: Vec<String>,
    /// Files git does not track (and does not ignore).
    pub untracked: Vec<String>,
    /// Unmerged paths (a merge or rebase stopped on them).
    pub conflicted: Vec<String>,
}

impl GitStatus {
    /// Whether nothing is staged, modified, untracked or conflicted.
    pub fn is_clean(&self) -> bool {
        self.staged.is_empty()
            && self.modified.is_empty()
            && self.untracked.is_empty()
            && self.conflicted.is_empty()
    }
}

/// The `git_status` tool in `workspace`'s root.
pub fn git_status(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "git_status",
        "Shows the git status of the workspace: branch, commits ahead/behind its upstream, \
         and the staged, modified, untracked and conflicted paths.",
        move |_args: GitStatusArgs, ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move {
                let status = tokio::select! {
                    s = status_of(workspace.root()) => s?,
                    _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                };
                Ok(status_value(&status))
            }
        },
    )
    .with_schema(|s| {
        s.annotations = Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
    })
}

/// The value for `status`: a tree, collapsed when there is nothing to show.
pub(crate) fn status_value(status: &GitStatus) -> Value {
    let summary = format!(
        "{} staged, {} modified",
        status.staged.len(),
        status.modified.len()
    );
    let data = serde_json::to_value(status).unwrap_or_default();
    Value::new(GIT_STATUS_KIND, data)
        .summary(summary)
        .view(View::Tree)
        .collapsed(status.is_clean())
}

/// Settings that would make `git status` run a program, switched off. The repository is
/// untrusted (the model may have written its `.git/config`, or the person unpacked it), and
/// git obeys its config: an fsmonitor hook, hooks, a pager or an external diff would each
/// run any command without the person's approval.
const NEUTRALIZE: [&str; 6] = [
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
    "core.sshCommand=",
    "credential.helper=",
];

/// A git command with a bare environment: no system or global config, no variables of
/// ours that redirect it (`GIT_DIR`, `GIT_CONFIG_*`), no prompt, no pager, no locks.
fn git(root: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("git");
    cmd.current_dir(root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LC_ALL", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        // A status must not take locks a concurrent git command of the person's needs.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for setting in NEUTRALIZE {
        cmd.args(["-c", setting]);
    }
    cmd
}

/// `-c` overrides that empty every filter driver the repository's config defines (with its
/// includes): a `clean` or `process` filter runs whenever status hashes a file. Reading
/// config runs nothing.
async fn filter_overrides(root: &Path) -> Vec<String> {
    let Ok(out) = git(root)
        .args(["config", "--list", "--includes", "--name-only", "-z"])
        .output()
        .await
    else {
        return Vec::new();
    };
    let mut drivers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|key| key.strip_prefix("filter."))
        .filter_map(|rest| rest.rsplit_once('.').map(|(name, _)| name.to_owned()))
        .collect();
    drivers.sort_unstable();
    drivers.dedup();
    drivers
        .iter()
        .flat_map(|name| {
            ["clean=", "smudge=", "process=", "required=false"]
                .map(|key| format!("filter.{name}.{key}"))
        })
        .collect()
}

async fn status_of(root: &Path) -> Result<GitStatus, ToolError> {
    let mut cmd = git(root);
    for setting in filter_overrides(root).await {
        cmd.args(["-c", &setting]);
    }
    let output = cmd
        .args([
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            // A submodule's own config is not neutralized above: leave submodules alone.
            "--ignore-submodules=all",
        ])
        .output()
        .await
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ToolError::with_code("git_missing", "git is not installed (not found on PATH)")
            } else {
                ToolError::with_code("spawn_failed", format!("could not run git: {e}"))
            }
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(if stderr.contains("not a git repository") {
            ToolError::with_code(
                "not_a_git_repo",
                format!("the workspace is not inside a git repository (git said: {stderr})"),
            )
        } else {
            ToolError::with_code("git_failed", format!("git status failed: {stderr}"))
        });
    }
    Ok(parse_porcelain_v2(&String::from_utf8_lossy(&output.stdout)))
}

/// Parses `--porcelain=v2 --branch -z` output. Unknown lines are skipped: newer gits may
/// add headers, and a status is still useful without them.
pub fn parse_porcelain_v2(out: &str) -> GitStatus {
    let mut status = GitStatus::default();
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    while let Some(record) = fields.next() {
        if let Some(header) = record.strip_prefix("# ") {
            parse_header(header, &mut status);
            continue;
        }
        let (Some(tag), Some(rest)) = (record.get(..2), record.get(2..)) else {
            continue;
        };
        match tag {
            "1 " => {
                if let Some((xy, path)) = split_entry(rest, 6) {
                    push_xy(&mut status, xy, path.to_owned());
                }
            }
            "2 " => {
                // Renames and copies: the original path is the next NUL-separated field.
                let orig = fields.next().unwrap_or_default();
                if let Some((xy, path)) = split_entry(rest, 7) {
                    push_xy(&mut status, xy, format!("{orig} -> {path}"));
                }
            }
            "u " => {
                if let Some((_, path)) = split_entry(rest, 8) {
                    status.conflicted.push(path.to_owned());
                }
            }
            "? " => status.untracked.push(rest.to_owned()),
            _ => {}
        }
    }
    status
}

fn parse_header(header: &str, status: &mut GitStatus) {
    if let Some(head) = header.strip_prefix("branch.head ") {
        head.clone_into(&mut status.branch);
    } else if let Some(ab) = header.strip_prefix("branch.ab ") {
        for part in ab.split_whitespace() {
            if let Some(n) = part.strip_prefix('+') {
                status.ahead = n.parse().unwrap_or(0);
            } else if let Some(n) = part.strip_prefix('-') {
                status.behind = n.parse().unwrap_or(0);
            }
        }
    }
}

/// Splits `XY f1 .. fn path` (n space-separated fields after XY) into XY and the path,
/// which may itself contain spaces.
fn split_entry(rest: &str, n: usize) -> Option<(&str, &str)> {
    let mut parts = rest.splitn(n + 2, ' ');
    let xy = parts.next()?;
    let path = parts.nth(n)?;
    Some((xy, path))
}

fn push_xy(status: &mut GitStatus, xy: &str, path: String) {
    let mut chars = xy.chars();
    let (x, y) = (chars.next().unwrap_or('.'), chars.next().unwrap_or('.'));
    if y != '.' {
        status.modified.push(path.clone());
    }
    if x != '.' {
        status.staged.push(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_record_type() {
        let out = [
            "# branch.oid 0123",
            "# branch.head main",
            "# branch.upstream origin/main",
            "# branch.ab +2 -1",
            "1 M. N... 100644 100644 100644 aaa bbb src/a b.rs",
            "1 .M N... 100644 100644 100644 aaa bbb README.md",
            "1 MM N... 100644 100644 100644 aaa bbb both.rs",
            "2 R. N... 100644 100644 100644 aaa bbb R100 new.rs",
            "old.rs",
            "u UU N... 100644 100644 100644 100644 a b c clash.rs",
            "? notes.txt",
            "! target",
        ]
        .join("\0");
        let s = parse_porcelain_v2(&out);
        assert_eq!(s.branch, "main");
        assert_eq!((s.ahead, s.behind), (2, 1));
        assert_eq!(s.staged, ["src/a b.rs", "both.rs", "old.rs -> new.rs"]);
        assert_eq!(s.modified, ["README.md", "both.rs"]);
        assert_eq!(s.untracked, ["notes.txt"]);
        assert_eq!(s.conflicted, ["clash.rs"]);
        assert!(!s.is_clean());
    }
}
