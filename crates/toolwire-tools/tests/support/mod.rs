//! Shared fixture for the built-in tool tests: a temp workspace, every built-in registered,
//! and calls driven through the real executor (approvals granted on request).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;
use tempfile::TempDir;
use toolwire_core::{Resolution, ToolCall};
use toolwire_core::{Status, SuspensionReason, ToolResult, Value};
use toolwire_runtime::{Executor, Registry, Scope};
use toolwire_tools::{Workspace, builtin_tools};

pub(crate) struct Fixture {
    /// The workspace root.
    pub dir: TempDir,
    pub exec: Executor,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Arc::new(Workspace::new(dir.path()).unwrap());
        let mut registry = Registry::new();
        for tool in builtin_tools(workspace) {
            registry.register_arc(tool).unwrap();
        }
        Fixture {
            dir,
            exec: Executor::new(registry),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub(crate) fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
    }

    /// One call, as the executor returns it (approval tools come back suspended).
    pub(crate) async fn call_raw(&self, name: &str, input: Json) -> ToolResult {
        self.exec
            .execute(&Scope::new("s"), ToolCall::new("call_1", name, input))
            .await
            .into_result()
    }

    /// One call to its final result: an approval suspension is approved, as a person
    /// would. The result is checked against the contract.
    pub(crate) async fn call(&self, name: &str, input: Json) -> ToolResult {
        let first = self.call_raw(name, input).await;
        let result = match (&first.status, &first.suspension) {
            (Status::Suspended, Some(s)) if s.reason == SuspensionReason::Approval => self
                .exec
                .resolve(&s.id, Resolution::Approve)
                .await
                .unwrap()
                .into_result(),
            _ => first,
        };
        assert_valid(&result);
        assert_eq!(result.call_id, "call_1");
        assert_eq!(result.tool_name, name);
        result
    }

    /// A call that must succeed with one value; returns it.
    pub(crate) async fn ok(&self, name: &str, input: Json) -> Value {
        let r = self.call(name, input).await;
        assert_eq!(r.status, Status::Success, "{name} failed: {:?}", r.error);
        assert_eq!(r.output.len(), 1, "{:?}", r.output);
        r.output.into_iter().next().unwrap()
    }

    /// A call that must fail; returns (code, message).
    pub(crate) async fn err(&self, name: &str, input: Json) -> (String, String) {
        let r = self.call(name, input).await;
        assert_eq!(r.status, Status::Error, "{name} succeeded: {:?}", r.output);
        let e = r.error.unwrap();
        (e.code.unwrap_or_default(), e.message)
    }
}

pub(crate) fn assert_valid(r: &ToolResult) {
    if let Err(v) = r.validate() {
        panic!("invalid result: {v:?}\n{r:#?}");
    }
    for value in &r.output {
        value.validate().unwrap();
    }
}

/// Whether `program` runs. Missing, it fails the test under CI and skips it elsewhere.
pub(crate) fn require_program(program: &str) -> bool {
    // Looked up on PATH rather than run: `sh` (dash) has no `--version` to probe with.
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()));
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("`{program}` is required by this test and is not installed");
        }
        eprintln!("skipping: `{program}` is not installed (set CI to make this a failure)");
    }
    found
}

/// A valid 1×1 PNG, for the tools that must recognise images by their bytes.
pub(crate) const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];
