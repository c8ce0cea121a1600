//! `migrate` copies a SQLite + files store into every backend (another SQLite, Postgres +
//! S3): sessions parents first, messages byte for byte, blobs by hash, events with their
//! numbers, pending calls; a second run copies only what is new; a disagreeing target
//! and a damaged source blob stop it with a clear error; a result's event stays a
//! reference to its message, the target's row of it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use toolwire_core::{CallRef, EventKind, Message, Source, ToolCall, ToolResult, Value};
use toolwire_store::{NewSession, StoreError, Stores, migrate};

/// A parent session with text, a call, an image result (a blob), events and two pending
/// calls (one being answered), and a subagent's session under it.
async fn fill(src: &Stores) -> (String, String) {
    let parent = src
        .create_session(NewSession {
            title: Some("the parent".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let child = src
        .create_session(NewSession::child_of(&parent.id))
        .await
        .unwrap();
    src.append(
        &parent.id,
        Message::User {
            text: "look".into(),
        },
    )
    .await
    .unwrap();
    src.append(
        &parent.id,
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall::new("c1", "view_image", json!({"path": "a.png"}))],
        },
    )
    .await
    .unwrap();
    let image = support::media_bytes(9, 50_000);
    let result = ToolResult::success(
        CallRef::new("c1", "view_image"),
        Value::image(Source::base64(support::b64(&image)), "image/png"),
    );
    src.record_result(&parent.id, result, None).await.unwrap();
    src.append(&child.id, Message::User { text: "sub".into() })
        .await
        .unwrap();
    for turn in 1..=3 {
        src.events()
            .append_event(
                &parent.id,
                format!("2026-11-23T10:00:0{turn}Z"),
                EventKind::TurnStarted { turn },
            )
            .await
            .unwrap();
    }
    src.suspensions()
        .put_suspension(&support::pending("p_wait", &parent.id))
        .await
        .unwrap();
    src.suspensions()
        .put_suspension(&support::pending("p_busy", &parent.id))
        .await
        .unwrap();
    src.suspensions().claim_suspension("p_busy").await.unwrap();
    (parent.id, child.id)
}

async fn assert_same(src: &Stores, dst: &Stores, sessions: &[&str]) {
    for id in sessions {
        let a = src.history().load(id).await.unwrap();
        let b = dst.history().load(id).await.unwrap();
        assert_eq!(a.len(), b.len(), "{id}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.seq, y.seq);
            assert_eq!(
                serde_json::to_string(&x.content).unwrap(),
                serde_json::to_string(&y.content).unwrap()
            );
            for key in toolwire_store::message_blob_refs(&y.content) {
                assert_eq!(src.blob(&key).await.unwrap(), dst.blob(&key).await.unwrap());
            }
        }
        let (ea, eb) = (
            src.events().events_since(id, 0).await.unwrap(),
            dst.events().events_since(id, 0).await.unwrap(),
        );
        assert_eq!(ea, eb);
        let sa = src.history().session(id).await.unwrap().unwrap();
        let sb = dst.history().session(id).await.unwrap().unwrap();
        assert_eq!((sa.parent_id, sa.title), (sb.parent_id, sb.title));
    }
}

on_every_backend! {
    async fn a_store_migrates_whole_and_a_second_run_copies_only_what_is_new(backend) {
        let source = support::backends::sqlite();
        let src = source.open().await;
        let (parent, child) = fill(&src).await;
        let dst = backend.open().await;

        let first = migrate(&src, &dst).await.unwrap();
        assert_eq!(first.sessions_created, 2, "{first:?}");
        assert_eq!(first.messages_copied, 4, "{first:?}");
        assert_eq!((first.blobs_copied, first.blob_bytes_copied), (1, 50_000));
        assert_eq!(first.events_copied, 3);
        assert_eq!((first.suspensions_copied, first.suspensions_skipped), (1, 1));
        assert_same(&src, &dst, &[&parent, &child]).await;
        let waiting = dst.suspensions().suspensions(&parent).await.unwrap();
        assert_eq!(waiting, [support::pending("p_wait", &parent)]);

        // Nothing new: everything is verified, nothing copied.
        let again = migrate(&src, &dst).await.unwrap();
        assert_eq!(
            (again.messages_copied, again.events_copied, again.blobs_copied, again.sessions_created),
            (0, 0, 0, 0)
        );
        assert_eq!(again.messages_verified, 4);

        // The source goes on (or the first run was interrupted): only the rest is copied.
        src.append(&parent, Message::User { text: "more".into() }).await.unwrap();
        src.events()
            .append_event(&parent, "2026-11-23T10:00:09Z".into(), EventKind::SessionEnded)
            .await
            .unwrap();
        let rest = migrate(&src, &dst).await.unwrap();
        assert_eq!((rest.messages_copied, rest.events_copied), (1, 1), "{rest:?}");
        assert_same(&src, &dst, &[&parent, &child]).await;

        // A target that disagrees stops the copy with a clear error.
        dst
            .append(&child, Message::User { text: "only on the target".into() })
            .await
            .unwrap();
        src.append(&child, Message::User { text: "only on the source".into() })
            .await
            .unwrap();
        let err = migrate(&src, &dst).await.unwrap_err();
        assert!(matches!(err, StoreError::MigrateConflict { .. }), "{err}");
        assert!(err.to_string().contains("differs between source and target"), "{err}");
    }
}

#[tokio::test]
async fn a_damaged_source_blob_is_not_copied_and_its_message_stays_behind() {
    let source = support::backends::sqlite();
    let src = source.open().await;
    let (parent, _) = fill(&src).await;
    // Flip the bytes of the one blob on disk.
    let blobs = source.blob_url.strip_prefix("file://").unwrap();
    let blob = walk(std::path::Path::new(blobs));
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();
    let target = support::backends::sqlite();
    let dst = target.open().await;
    let err = migrate(&src, &dst).await.unwrap_err();
    assert!(matches!(err, StoreError::BlobHashMismatch { .. }), "{err}");
    // The messages before the damaged one's chunk were not copied either: nothing in the
    // target points at a missing blob.
    for m in dst.history().load(&parent).await.unwrap() {
        for key in toolwire_store::message_blob_refs(&m.content) {
            assert!(dst.blob(&key).await.is_ok());
        }
    }
}

/// The one blob file under a local store.
fn walk(dir: &std::path::Path) -> std::path::PathBuf {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir()
            && name.len() == 2
            && let Some(file) = std::fs::read_dir(&path).unwrap().flatten().next()
        {
            return file.path();
        }
    }
    panic!("no blob under {}", dir.display());
}

on_every_backend! {
    async fn a_raw_payload_kept_in_its_results_row_migrates_with_it(backend) {
        let source = support::backends::sqlite();
        let src = source.open().await;
        let session = src.create_session(NewSession::default()).await.unwrap();
        src.append(
            &session.id,
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall::new("c1", "echo", json!({"message": "hi"}))],
            },
        )
        .await
        .unwrap();
        // What an MCP server sent, small enough to be kept by the result's own row.
        let raw = br#"{"content":[{"type":"text","text":"Echo: hi"}]}"#;
        let mut result = ToolResult::success(CallRef::new("c1", "echo"), Value::text("Echo: hi"));
        let inline = src.keep_raw(&mut result, raw).await.unwrap();
        assert!(inline.is_some(), "SQLite keeps a small payload in its row");
        let key = result.metadata.raw_ref.clone().unwrap();
        src.record_result_or_failure(&session.id, result, None, inline.into_iter().collect())
            .await
            .unwrap();

        let dst = backend.open().await;
        let report = migrate(&src, &dst).await.unwrap();
        assert_eq!((report.messages_copied, report.blobs_copied), (2, 1), "{report:?}");
        assert_eq!(&dst.blob(&key).await.unwrap()[..], raw);
        assert_same(&src, &dst, &[&session.id]).await;
        let again = migrate(&src, &dst).await.unwrap();
        assert_eq!((again.messages_copied, again.blobs_copied), (0, 0), "{again:?}");
    }
}

on_every_backend! {
    async fn a_results_event_migrates_as_a_reference_to_the_targets_row(backend) {
        use toolwire_core::StoredAt;
        let source = support::backends::sqlite();
        let src = source.open().await;
        let session = src.create_session(NewSession::default()).await.unwrap();
        let text = "a line of a log\n".repeat(4_000);
        let result = ToolResult::success(CallRef::new("call_1", "read"), Value::text(text));
        let row = src.append(&session.id, Message::ToolResult(result.clone())).await.unwrap();
        let landed = EventKind::ToolResult {
            result: std::sync::Arc::new(result.clone()),
            raw: None,
            stored: StoredAt(Some(row.id)),
        };
        src.events().append_event(&session.id, "2026-11-30T10:00:00Z".into(), landed).await.unwrap();
        src.events()
            .append_event(&session.id, "2026-11-30T10:00:01Z".into(), EventKind::SessionEnded)
            .await
            .unwrap();
        // The target's rows are numbered apart from the source's: another session first.
        let dst = backend.open().await;
        let other = dst.create_session(NewSession::default()).await.unwrap();
        for _ in 0..3 {
            dst.append(&other.id, Message::User { text: "x".into() }).await.unwrap();
        }

        let report = migrate(&src, &dst).await.unwrap();
        assert_eq!((report.messages_copied, report.events_copied), (1, 2), "{report:?}");
        let lengths = backend.logged_lengths(&session.id).await;
        assert!(lengths[0] < 200, "the result was logged again whole in the target: {lengths:?}");
        let events = dst.events().events_since(&session.id, 0).await.unwrap();
        assert_eq!(events[0].kind, EventKind::tool_result(result, None));
        assert_eq!(events[1].kind, EventKind::SessionEnded);
    }
}
