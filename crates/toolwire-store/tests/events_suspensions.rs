//! Runtime events and pending suspensions in SQLite: numbering assigned by the store,
//! ordered replay, claim-once, a claimed call still listed until it is finished, and all
//! of it surviving a reopen of the database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use toolwire_core::{EventKind, PendingCall, Suspension, SuspensionReason, ToolCall};
use toolwire_store::{EventLog, SqliteHistory, SuspensionStore};

fn at() -> String {
    "2026-11-22T10:00:00Z".to_owned()
}

#[tokio::test]
async fn events_are_numbered_by_the_store_replay_in_order_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    {
        let h = SqliteHistory::open(&db).await.unwrap();
        for turn in 1..=3 {
            let e = h
                .append_event("s1", at(), EventKind::TurnStarted { turn })
                .await
                .unwrap();
            assert_eq!(e.seq, u64::from(turn));
        }
        assert_eq!(
            h.append_event("s2", at(), EventKind::SessionEnded)
                .await
                .unwrap()
                .seq,
            1
        );
        // Two writers at once on one session: both numbered, neither renumbered.
        let (a, b) = tokio::join!(
            h.append_event("s1", at(), EventKind::TurnStarted { turn: 4 }),
            h.append_event("s1", at(), EventKind::TurnStarted { turn: 5 })
        );
        let mut seqs = [a.unwrap().seq, b.unwrap().seq];
        seqs.sort_unstable();
        assert_eq!(seqs, [4, 5]);
    }
    let h = SqliteHistory::open(&db).await.unwrap();
    assert_eq!(h.last_event_seq("s1").await.unwrap(), 5);
    assert_eq!(h.last_event_seq("nobody").await.unwrap(), 0);
    let since: Vec<u64> = h
        .events_since("s1", 2)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(since, [3, 4, 5]);
    let third = &h.events_since("s1", 2).await.unwrap()[0];
    assert_eq!(third.kind, EventKind::TurnStarted { turn: 3 });
    assert_eq!(third.session_id, "s1");
    assert!(
        h.append_event("../x", at(), EventKind::SessionEnded)
            .await
            .is_err()
    );
}

fn pending(id: &str) -> PendingCall {
    PendingCall {
        suspension: Suspension {
            id: id.to_owned(),
            reason: SuspensionReason::Approval,
            prompt: format!("Allow {id}?"),
            input_schema: None,
        },
        call: ToolCall::new(
            format!("call_{id}"),
            "delete_branch",
            json!({"branch": "old"}),
        ),
        session_id: "s1".to_owned(),
        trace_id: "t1".to_owned(),
        user_id: None,
        tool_state: None,
        resolving: false,
    }
}

#[tokio::test]
async fn a_suspension_is_claimed_once_listed_until_finished_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    {
        let h = SqliteHistory::open(&db).await.unwrap();
        h.put_suspension(&pending("susp_a")).await.unwrap();
        h.put_suspension(&pending("susp_b")).await.unwrap();
    }
    // A second process (here: a second handle after reopening) lists and claims them.
    let h = SqliteHistory::open(&db).await.unwrap();
    let listed = h.suspensions("s1").await.unwrap();
    assert_eq!(listed, [pending("susp_a"), pending("susp_b")]);
    let (a, b) = tokio::join!(h.claim_suspension("susp_a"), h.claim_suspension("susp_a"));
    let got: Vec<_> = [a.unwrap(), b.unwrap()].into_iter().flatten().collect();
    assert_eq!(got.len(), 1, "claimed twice: {got:?}");
    assert_eq!(got[0].call.id, "call_susp_a");
    assert_eq!(h.claim_suspension("susp_a").await.unwrap(), None);
    // Claimed but not finished: still listed, marked, so a crash here is visible.
    let listed = h.suspensions("s1").await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed[0].resolving && !listed[1].resolving);
    h.finish_suspension("susp_a").await.unwrap();
    assert_eq!(h.suspensions("s1").await.unwrap(), [pending("susp_b")]);
    assert!(h.claim_suspension("a/b").await.is_err());
}

#[tokio::test]
async fn deleting_a_session_removes_it_its_subagents_and_their_records() {
    use toolwire_core::Message;
    use toolwire_store::{HistoryStore, NewSession};
    let dir = tempfile::tempdir().unwrap();
    let db = SqliteHistory::open(&dir.path().join("history.db"))
        .await
        .unwrap();
    let parent = db.create_session(NewSession::default()).await.unwrap();
    let child = db
        .create_session(NewSession::child_of(parent.id.clone()))
        .await
        .unwrap();
    let other = db.create_session(NewSession::default()).await.unwrap();
    for s in [&parent.id, &child.id, &other.id] {
        db.append(s, Message::User { text: "hi".into() })
            .await
            .unwrap();
        db.append_event(s, at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
    }
    db.put_suspension(&PendingCall {
        session_id: child.id.clone(),
        ..pending("p1")
    })
    .await
    .unwrap();

    assert!(db.delete_session(&parent.id).await.unwrap());
    for gone in [&parent.id, &child.id] {
        assert!(db.session(gone).await.unwrap().is_none());
        assert!(matches!(
            db.load(gone).await,
            Err(toolwire_store::StoreError::SessionNotFound { .. })
        ));
        assert!(db.events_since(gone, 0).await.unwrap().is_empty());
    }
    assert!(db.suspensions(&child.id).await.unwrap().is_empty());
    // Another session is untouched, and deleting twice says there was nothing.
    assert_eq!(db.load(&other.id).await.unwrap().len(), 1);
    assert!(!db.delete_session(&parent.id).await.unwrap());
    assert!(db.delete_session("../etc").await.is_err());
}
