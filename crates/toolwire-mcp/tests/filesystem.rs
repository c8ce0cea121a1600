//! The real `@modelcontextprotocol/server-filesystem` (npm) on a temporary directory:
//! its tools list, read and write through toolwire, and it refuses paths outside.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use toolwire_core::Status;
use toolwire_core::ToolCall;
use toolwire_mcp::Limits;
use toolwire_runtime::Scope;

fn text_of(r: &toolwire_core::ToolResult) -> String {
    r.output
        .iter()
        .filter_map(|v| v.as_text().ok().map(|t| t.content.to_owned()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn server_filesystem_reads_and_writes_a_temp_dir() {
    let Some(script) = support::peers::filesystem() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("hello.txt"), "hello from disk").unwrap();
    let args = [script.display().to_string(), root.display().to_string()];
    let config = support::stdio("fs", "node", &args);
    let (ex, names) = support::executor(vec![config], Limits::default()).await;
    assert!(
        names.contains(&"fs__read_text_file".to_owned()),
        "{names:?}"
    );
    let scope = Scope::new("s");
    let path = root.join("hello.txt").display().to_string();
    let read = ex
        .execute(
            &scope,
            ToolCall::new("c1", "fs__read_text_file", json!({"path": path})),
        )
        .await
        .into_result();
    assert_eq!(read.status, Status::Success, "{read:?}");
    assert!(text_of(&read).contains("hello from disk"));

    let new = root.join("new.txt").display().to_string();
    let wrote = ex
        .execute(
            &scope,
            ToolCall::new(
                "c2",
                "fs__write_file",
                json!({"path": new, "content": "written"}),
            ),
        )
        .await
        .into_result();
    assert_eq!(wrote.status, Status::Success, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "written"
    );

    let outside = ex
        .execute(
            &scope,
            ToolCall::new("c3", "fs__read_text_file", json!({"path": "/etc/passwd"})),
        )
        .await
        .into_result();
    assert_eq!(outside.status, Status::Error, "{outside:?}");
}
