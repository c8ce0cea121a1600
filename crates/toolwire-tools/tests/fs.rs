//! `read_file`, `list_dir`, `write_file` and `edit_file` through the real executor: the
//! values they produce, their approvals, and their errors on bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::os::unix::fs::symlink;
use std::time::Duration;

use serde_json::{Value as Json, json};
use support::{Fixture, PNG_1X1};
use toolwire_core::Resolution;
use toolwire_core::{Status, SuspensionReason, WellKnown};
use toolwire_tool::ApprovalPolicy;

// ---- read_file ----

#[tokio::test]
async fn read_file_returns_content_size_and_language() {
    let f = Fixture::new();
    let src = "fn main() {\n    println!(\"hé\");\n}\n";
    f.write("src/main.rs", src);
    let v = f.ok("read_file", json!({"path": "src/main.rs"})).await;
    assert!(v.is_kind(WellKnown::FileContent));
    assert_eq!(v.data["path"], "src/main.rs");
    assert_eq!(v.data["content"], src);
    assert_eq!(v.data["size"], src.len());
    assert_eq!(v.display.unwrap().language.as_deref(), Some("rust"));
    let expected = format!("3 lines, {} bytes", src.len());
    assert_eq!(v.summary.as_deref(), Some(expected.as_str()));
    let v = f
        .ok("read_file", json!({"path": "src/../src/main.rs"}))
        .await;
    assert_eq!(v.data["path"], "src/main.rs");
}

#[tokio::test]
async fn read_file_offset_and_limit_select_lines() {
    let f = Fixture::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("notes.txt", &text);
    let v = f
        .ok(
            "read_file",
            json!({"path": "notes.txt", "offset": 3, "limit": 2}),
        )
        .await;
    assert_eq!(v.data["content"], "line 3\nline 4\n");
    // The file's size, not the excerpt's.
    assert_eq!(v.data["size"], text.len());
    assert_eq!(
        v.summary.as_deref(),
        Some("lines 3-4 of 10; read on with offset 5")
    );
    assert!(v.display.is_none(), "no language for .txt");
    let v = f
        .ok("read_file", json!({"path": "notes.txt", "offset": 9}))
        .await;
    assert_eq!(v.data["content"], "line 9\nline 10\n");
    let (code, msg) = f
        .err("read_file", json!({"path": "notes.txt", "offset": 11}))
        .await;
    assert_eq!(code, "offset_out_of_range");
    assert!(msg.contains("10 lines"), "{msg}");
}

#[tokio::test]
async fn read_file_bad_input() {
    let f = Fixture::new();
    let (code, msg) = f.err("read_file", json!({"path": "nope.txt"})).await;
    assert_eq!(code, "not_found");
    assert!(msg.contains("nope.txt"), "{msg}");

    f.write("latin1.txt", b"caf\xe9 au lait\n");
    let (code, msg) = f.err("read_file", json!({"path": "latin1.txt"})).await;
    assert_eq!(code, "binary_file");
    assert!(msg.contains("not valid UTF-8"), "{msg}");

    f.write("blob.bin", b"\x00\x01\x02binary");
    let (code, msg) = f.err("read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(code, "binary_file");
    assert!(msg.contains("binary"), "{msg}");

    f.write("shot.png", PNG_1X1);
    let (code, msg) = f.err("read_file", json!({"path": "shot.png"})).await;
    assert_eq!(code, "binary_file");
    assert!(msg.contains("view_image"), "{msg}");
    assert!(msg.contains("image/png"), "{msg}");

    std::fs::create_dir(f.path("dir")).unwrap();
    let (code, msg) = f.err("read_file", json!({"path": "dir"})).await;
    assert_eq!(code, "is_directory");
    assert!(msg.contains("list_dir"), "{msg}");

    let (code, _) = f.err("read_file", json!({})).await;
    assert_eq!(code, "invalid_input");
    let (code, _) = f.err("read_file", json!({"path": "a", "offset": 0})).await;
    assert_eq!(code, "invalid_input");
}

#[tokio::test]
async fn tools_refuse_a_fifo_instead_of_blocking_on_it() {
    let f = Fixture::new();
    let status = std::process::Command::new("mkfifo")
        .arg(f.path("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    for (tool, input) in [
        ("read_file", json!({"path": "pipe"})),
        ("view_image", json!({"path": "pipe"})),
        ("query_csv", json!({"path": "pipe"})),
        (
            "edit_file",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
        ("write_file", json!({"path": "pipe", "content": "x"})),
    ] {
        let (code, msg) = tokio::time::timeout(Duration::from_secs(10), f.err(tool, input))
            .await
            .unwrap_or_else(|_| panic!("{tool} blocked on a FIFO"));
        assert_eq!(code, "not_a_file", "{tool}: {msg}");
    }
}

// ---- list_dir ----

#[tokio::test]
async fn list_dir_lists_types_sizes_and_times_to_a_depth() {
    let f = Fixture::new();
    f.write("b.txt", "12345");
    f.write("a/inner.rs", "x");
    f.write("a/deep/z.txt", "");
    f.write(".git/HEAD", "ref");
    symlink(f.path("b.txt"), f.path("link")).unwrap();

    let v = f.ok("list_dir", json!({})).await;
    assert!(v.is_kind(WellKnown::FileList));
    assert_eq!(v.data["path"], ".");
    assert_eq!(v.summary.as_deref(), Some("4 entries"));
    assert!(v.data.get("truncated").is_none());
    let entries = v.data["entries"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [".git", "a", "b.txt", "link"]);
    let by = |name: &str| entries.iter().find(|e| e["name"] == name).unwrap().clone();
    assert_eq!(by("a")["type"], "directory");
    assert!(by("a").get("size").is_none());
    assert_eq!(by("b.txt")["type"], "file");
    assert_eq!(by("b.txt")["size"], 5);
    assert_eq!(by("link")["type"], "symlink");
    for e in entries {
        let t = e["modified"].as_str().unwrap();
        humantime::parse_rfc3339(t).unwrap_or_else(|err| panic!("{t}: {err}"));
    }

    let v = f.ok("list_dir", json!({"depth": 3})).await;
    let names: Vec<&str> = v.data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // Depth-first, a directory's entries right after it; `.git` is not descended into.
    assert_eq!(
        names,
        [
            ".git",
            "a",
            "a/deep",
            "a/deep/z.txt",
            "a/inner.rs",
            "b.txt",
            "link"
        ]
    );
    let v = f.ok("list_dir", json!({"path": "a", "depth": 1})).await;
    assert_eq!(v.data["path"], "a");
    assert_eq!(v.summary.as_deref(), Some("2 entries"));
}

#[tokio::test]
async fn list_dir_stops_at_the_cap_and_says_so() {
    let f = Fixture::new();
    for i in 0..1005 {
        f.write(&format!("many/f{i:04}"), "");
    }
    let v = f.ok("list_dir", json!({"path": "many"})).await;
    assert_eq!(v.data["entries"].as_array().unwrap().len(), 1000);
    assert_eq!(v.data["truncated"], true);
    assert_eq!(
        v.summary.as_deref(),
        Some("1000 entries (truncated at 1000)")
    );
    // Exactly at the cap is not truncated.
    let f = Fixture::new();
    for i in 0..1000 {
        f.write(&format!("f{i:04}"), "");
    }
    let v = f.ok("list_dir", json!({})).await;
    assert!(v.data.get("truncated").is_none());
}

#[tokio::test]
async fn list_dir_bad_input() {
    let f = Fixture::new();
    f.write("file.txt", "x");
    let (code, msg) = f.err("list_dir", json!({"path": "file.txt"})).await;
    assert_eq!(code, "not_a_directory");
    assert!(msg.contains("read_file"), "{msg}");
    let (code, _) = f.err("list_dir", json!({"path": "missing"})).await;
    assert_eq!(code, "not_found");
    let (code, _) = f.err("list_dir", json!({"depth": 0})).await;
    assert_eq!(code, "invalid_input");
    let (code, _) = f.err("list_dir", json!({"depth": 11})).await;
    assert_eq!(code, "invalid_input");
}

// ---- write_file ----

#[tokio::test]
async fn write_file_needs_approval_and_a_denial_writes_nothing() {
    let f = Fixture::new();
    let r = f
        .call_raw("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(r.status, Status::Suspended);
    let s = r.suspension.unwrap();
    assert_eq!(s.reason, SuspensionReason::Approval);
    assert!(!f.path("a.txt").exists());
    let denied = f
        .exec
        .resolve(&s.id, Resolution::Deny { reason: None })
        .await
        .unwrap()
        .into_result();
    assert_eq!(denied.status, Status::Error);
    assert!(!f.path("a.txt").exists());
}

#[tokio::test]
async fn write_file_creates_then_overwrites_with_a_diff() {
    let f = Fixture::new();
    let v = f
        .ok(
            "write_file",
            json!({"path": "new/dir/a.txt", "content": "one\ntwo\n"}),
        )
        .await;
    assert!(v.is_kind(WellKnown::Diff));
    assert_eq!(v.data["path"], "new/dir/a.txt");
    assert_eq!(v.data["isNew"], true);
    assert!(v.data.get("original").is_none());
    assert_eq!(v.data["modified"], "one\ntwo\n");
    assert_eq!(v.summary.as_deref(), Some("created new/dir/a.txt, 2 lines"));
    assert_eq!(
        std::fs::read_to_string(f.path("new/dir/a.txt")).unwrap(),
        "one\ntwo\n"
    );

    let v = f
        .ok(
            "write_file",
            json!({"path": "new/dir/a.txt", "content": "one\n2\nthree\n"}),
        )
        .await;
    assert_eq!(v.data["isNew"], false);
    assert_eq!(v.data["original"], "one\ntwo\n");
    assert_eq!(v.data["modified"], "one\n2\nthree\n");
    assert_eq!(
        v.summary.as_deref(),
        Some("updated new/dir/a.txt: +2 -1 lines")
    );
    assert_eq!(
        std::fs::read_to_string(f.path("new/dir/a.txt")).unwrap(),
        "one\n2\nthree\n"
    );
}

#[tokio::test]
async fn write_file_bad_input() {
    let f = Fixture::new();
    std::fs::create_dir(f.path("d")).unwrap();
    let (code, _) = f
        .err("write_file", json!({"path": "d", "content": "x"}))
        .await;
    assert_eq!(code, "is_directory");
    f.write("file", "x");
    let (code, _) = f
        .err("write_file", json!({"path": "file/below", "content": "x"}))
        .await;
    assert!(!code.is_empty());
    // Invalid input is refused before approval is asked.
    let r = f.call_raw("write_file", json!({"path": "a.txt"})).await;
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.error.unwrap().code.as_deref(), Some("invalid_input"));
}

// ---- edit_file ----

#[tokio::test]
async fn edit_file_replaces_a_unique_string() {
    let f = Fixture::new();
    f.write("lib.rs", "fn a() {}\nfn b() {}\n");
    let v = f
        .ok(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn b() {}", "new_string": "fn b() -> u8 { 1 }"}),
        )
        .await;
    assert!(v.is_kind(WellKnown::Diff));
    assert_eq!(v.data["original"], "fn a() {}\nfn b() {}\n");
    assert_eq!(v.data["modified"], "fn a() {}\nfn b() -> u8 { 1 }\n");
    assert_eq!(v.data["isNew"], false);
    assert_eq!(
        v.summary.as_deref(),
        Some("edited lib.rs: +1 -1 lines (1 occurrence replaced)")
    );
    assert_eq!(
        std::fs::read_to_string(f.path("lib.rs")).unwrap(),
        "fn a() {}\nfn b() -> u8 { 1 }\n"
    );
}

#[tokio::test]
async fn edit_file_says_when_the_string_is_absent_or_not_unique() {
    let f = Fixture::new();
    f.write("t.txt", "x = 1\nx = 1\nx = 1\n");
    let (code, msg) = f
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_string": "y = 1", "new_string": "y = 2"}),
        )
        .await;
    assert_eq!(code, "no_match");
    assert!(msg.contains("not found"), "{msg}");
    let (code, msg) = f
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_string": "x = 1", "new_string": "x = 2"}),
        )
        .await;
    assert_eq!(code, "ambiguous_match");
    assert!(msg.contains("3 times"), "{msg}");
    assert!(msg.contains("replace_all"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(f.path("t.txt")).unwrap(),
        "x = 1\nx = 1\nx = 1\n"
    );
    let v = f
        .ok(
            "edit_file",
            json!({"path": "t.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}),
        )
        .await;
    assert!(
        v.summary
            .as_deref()
            .unwrap()
            .ends_with("(3 occurrences replaced)"),
        "{:?}",
        v.summary
    );
    assert_eq!(
        std::fs::read_to_string(f.path("t.txt")).unwrap(),
        "x = 2\nx = 2\nx = 2\n"
    );
}

#[tokio::test]
async fn edit_file_bad_input() {
    let f = Fixture::new();
    let edit = |path: &str, old: &str, new: &str| -> Json {
        json!({"path": path, "old_string": old, "new_string": new})
    };
    let (code, _) = f.err("edit_file", edit("missing.rs", "a", "b")).await;
    assert_eq!(code, "not_found");
    f.write("bin.dat", b"\xff\xfe\x00");
    let (code, msg) = f.err("edit_file", edit("bin.dat", "a", "b")).await;
    assert_eq!(code, "binary_file");
    assert!(msg.contains("UTF-8"), "{msg}");
    f.write("ok.txt", "abc");
    let (code, msg) = f.err("edit_file", edit("ok.txt", "", "b")).await;
    assert_eq!(code, "invalid_input");
    assert!(msg.contains("write_file"), "{msg}");
    let (code, _) = f.err("edit_file", edit("ok.txt", "abc", "abc")).await;
    assert_eq!(code, "invalid_input");
    assert_eq!(std::fs::read_to_string(f.path("ok.txt")).unwrap(), "abc");
}

// ---- the set ----

#[tokio::test]
async fn every_builtin_is_registered_with_its_approval_default() {
    let f = Fixture::new();
    let registry = f.exec.registry();
    let names: Vec<&str> = registry.names().iter().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "list_dir",
            "write_file",
            "edit_file",
            "run",
            "git_status",
            "query_csv",
            "view_image",
            "ask_user"
        ]
    );
    for schema in registry.schemas() {
        let expected = if ["write_file", "edit_file", "run"].contains(&schema.name.as_str()) {
            ApprovalPolicy::Always
        } else {
            ApprovalPolicy::Never
        };
        assert_eq!(schema.approval, expected, "{}", schema.name);
        assert!(schema.description.len() > 40, "{}", schema.name);
        assert_eq!(schema.input_schema["type"], "object", "{}", schema.name);
    }
}
