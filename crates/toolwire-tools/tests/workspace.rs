//! The workspace confinement of the built-in file tools: every way out (`..`, absolute
//! paths, symlinked files and directories, dangling links) is refused with a clear error,
//! and nothing is read or written outside.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::os::unix::fs::symlink;

use serde_json::json;
use support::Fixture;
use toolwire_tools::{Workspace, WorkspaceError};

#[test]
fn a_missing_root_is_refused() {
    let err = Workspace::new("/definitely/not/here").unwrap_err();
    assert!(matches!(err, WorkspaceError::Root { .. }));
    assert!(err.to_string().contains("/definitely/not/here"), "{err}");
    let file = tempfile::NamedTempFile::new().unwrap();
    assert!(matches!(
        Workspace::new(file.path()).unwrap_err(),
        WorkspaceError::RootNotDir(_)
    ));
}

#[test]
fn paths_inside_resolve_relative_to_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    let r = ws.resolve("sub/../a.txt").unwrap();
    assert_eq!(r.path, canonical.join("a.txt"));
    assert_eq!(r.display, "a.txt");
    assert_eq!(ws.resolve(".").unwrap().display, ".");
    assert_eq!(ws.resolve("").unwrap().path, canonical);
    // Absolute paths under the root, as given or canonical, are accepted.
    let abs = dir.path().join("sub/new.txt");
    assert_eq!(
        ws.resolve(abs.to_str().unwrap()).unwrap().display,
        "sub/new.txt"
    );
    let abs = canonical.join("sub");
    assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap().display, "sub");
}

#[test]
fn dot_dot_and_absolute_escapes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    for escape in ["..", "../x.txt", "a/../../x", "./../../../../etc/passwd"] {
        let err = ws.resolve(escape).unwrap_err();
        assert!(
            matches!(err, WorkspaceError::DotDotEscape { .. }),
            "{escape}: {err:?}"
        );
        assert_eq!(err.code(), "outside_workspace");
        assert!(err.to_string().contains("escapes the workspace"), "{err}");
    }
    for outside in ["/etc/passwd", "/", "/tmp"] {
        let err = ws.resolve(outside).unwrap_err();
        assert!(
            matches!(err, WorkspaceError::OutsideRoot { .. }),
            "{outside}: {err:?}"
        );
        assert!(
            err.to_string().contains("outside the workspace root"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn tools_refuse_dot_dot_and_absolute_paths() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.txt"), "top secret").unwrap();
    let f = Fixture::new();
    let secret = outer.path().join("secret.txt");
    let rel_secret = format!(
        "../{}/secret.txt",
        outer.path().file_name().unwrap().to_str().unwrap()
    );
    for path in [secret.to_str().unwrap(), "../../etc/passwd", &rel_secret] {
        for tool in ["read_file", "view_image", "query_csv"] {
            let (code, msg) = f.err(tool, json!({"path": path})).await;
            assert_eq!(code, "outside_workspace", "{tool} {path}: {msg}");
            assert!(!msg.contains("top secret"));
        }
    }
    let (code, _) = f.err("list_dir", json!({"path": ".."})).await;
    assert_eq!(code, "outside_workspace");
    let target = outer.path().join("written.txt");
    let (code, _) = f
        .err(
            "write_file",
            json!({"path": target.to_str().unwrap(), "content": "x"}),
        )
        .await;
    assert_eq!(code, "outside_workspace");
    assert!(!target.exists());
    let (code, _) = f
        .err(
            "edit_file",
            json!({"path": secret.to_str().unwrap(), "old_string": "top", "new_string": "no"}),
        )
        .await;
    assert_eq!(code, "outside_workspace");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "top secret");
}

#[tokio::test]
async fn a_symlink_to_a_file_outside_is_refused() {
    let outer = tempfile::tempdir().unwrap();
    let secret = outer.path().join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    let f = Fixture::new();
    symlink(&secret, f.path("innocent.txt")).unwrap();
    let (code, msg) = f.err("read_file", json!({"path": "innocent.txt"})).await;
    assert_eq!(code, "outside_workspace");
    assert!(msg.contains("symlink"), "{msg}");
    assert!(!msg.contains("top secret"));
    // Writing through it would overwrite the outside file.
    let (code, _) = f
        .err(
            "write_file",
            json!({"path": "innocent.txt", "content": "pwned"}),
        )
        .await;
    assert_eq!(code, "outside_workspace");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "top secret");
}

/// A hard link inside the workspace to a file outside is not written through: writes
/// replace the directory entry (temp file, then rename), so the outside file keeps its
/// content. The permissions of the file written are kept.
#[tokio::test]
async fn writes_do_not_go_through_a_hard_link_to_a_file_outside() {
    use std::os::unix::fs::PermissionsExt;
    let outer = tempfile::tempdir().unwrap();
    let secret = outer.path().join("secret.sh");
    std::fs::write(&secret, "echo original\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o750)).unwrap();
    let f = Fixture::new();
    if std::fs::hard_link(&secret, f.path("linked.sh")).is_err() {
        panic!("the temp dirs must share a filesystem for this test");
    }
    f.ok(
        "write_file",
        json!({"path": "linked.sh", "content": "echo replaced\n"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "echo original\n");
    assert_eq!(
        std::fs::read_to_string(f.path("linked.sh")).unwrap(),
        "echo replaced\n"
    );
    let mode = std::fs::metadata(f.path("linked.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);

    std::fs::remove_file(f.path("linked.sh")).unwrap();
    std::fs::hard_link(&secret, f.path("linked.sh")).unwrap();
    f.ok(
        "edit_file",
        json!({"path": "linked.sh", "old_string": "original", "new_string": "edited"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "echo original\n");
    assert_eq!(
        std::fs::read_to_string(f.path("linked.sh")).unwrap(),
        "echo edited\n"
    );
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(f.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["linked.sh"]);
}

#[tokio::test]
async fn writing_a_new_file_through_a_symlinked_directory_is_refused() {
    let outer = tempfile::tempdir().unwrap();
    let f = Fixture::new();
    std::fs::create_dir(f.path("src")).unwrap();
    symlink(outer.path(), f.path("src/out")).unwrap();
    for path in ["src/out/new.txt", "src/out/deeper/new.txt"] {
        let (code, msg) = f
            .err("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert_eq!(code, "outside_workspace", "{path}: {msg}");
        assert!(msg.contains("symlink"), "{msg}");
    }
    assert_eq!(std::fs::read_dir(outer.path()).unwrap().count(), 0);
    let (code, _) = f.err("list_dir", json!({"path": "src/out"})).await;
    assert_eq!(code, "outside_workspace");
}

#[tokio::test]
async fn a_dangling_symlink_is_refused_rather_than_created_through() {
    let outer = tempfile::tempdir().unwrap();
    let target = outer.path().join("created-outside.txt");
    let f = Fixture::new();
    symlink(&target, f.path("dangling")).unwrap();
    let (code, msg) = f
        .err("write_file", json!({"path": "dangling", "content": "x"}))
        .await;
    assert_eq!(code, "broken_symlink", "{msg}");
    assert!(!target.exists());
}

#[tokio::test]
async fn symlinks_that_stay_inside_are_followed() {
    let f = Fixture::new();
    f.write("real/data.txt", "inside");
    symlink(f.path("real"), f.path("alias")).unwrap();
    let v = f.ok("read_file", json!({"path": "alias/data.txt"})).await;
    assert_eq!(v.data["content"], "inside");
    // Values name the resolved file, so the person sees what was really read.
    assert_eq!(v.data["path"], "real/data.txt");
    f.ok(
        "write_file",
        json!({"path": "alias/new.txt", "content": "via link"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(f.path("real/new.txt")).unwrap(),
        "via link"
    );
}
