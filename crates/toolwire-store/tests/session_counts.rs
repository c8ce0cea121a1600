//! The session list's counts, on every backend: calls (stored results and calls waiting
//! for a person), waiting calls and failed calls, kept by appends, suspensions and their
//! settling, read back by `session`, `list_sessions` and `child_sessions`, after a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use toolwire_core::{CallRef, Message, ToolResult, Value};
use toolwire_store::{NewSession, Page, Session};

fn ok(id: &str) -> Message {
    Message::ToolResult(ToolResult::success(
        CallRef::new(id, "echo"),
        Value::text("ok"),
    ))
}

fn failed(id: &str) -> Message {
    Message::ToolResult(ToolResult::error(CallRef::new(id, "echo"), "no"))
}

/// (calls, waiting, failed)
fn counts(s: &Session) -> (i64, i64, i64) {
    (s.call_count, s.pending_count, s.error_count)
}

on_every_backend! {
    async fn counts_follow_results_suspensions_and_settling(backend) {
        let stores = backend.open().await;
        let h = &stores;
        let new = |id: &str| NewSession { id: Some(id.to_owned()), ..NewSession::default() };
        h.create_session(new("counted")).await.unwrap();
        h.create_session(new("quiet")).await.unwrap();
        h.create_session(NewSession { id: Some("child".into()), ..NewSession::child_of("counted") })
            .await
            .unwrap();
        // Messages that are not results change no count.
        h.append("counted", Message::User { text: "hi".into() }).await.unwrap();
        h.append_many("counted", vec![ok("c1"), failed("c2"), ok("c3")]).await.unwrap();
        h.append("child", failed("c4")).await.unwrap();
        h.append("quiet", Message::User { text: "only talk".into() }).await.unwrap();
        let s = h.history().session("counted").await.unwrap().unwrap();
        assert_eq!(counts(&s), (3, 0, 1));
        assert_eq!(s.message_count, 4);

        // A call waiting for a person is a call, and a waiting one, until it settles: then
        // its stored result counts it instead.
        stores.suspensions().put_suspension(&support::pending("susp_1", "counted")).await.unwrap();
        assert_eq!(counts(&h.history().session("counted").await.unwrap().unwrap()), (4, 1, 1));
        // Answered: it runs on, no longer waiting (and not counted until its result is
        // stored, like any running call). A second question of the same call would be a
        // new pending suspension beside this resolving one: the call counts once.
        stores.suspensions().claim_suspension("susp_1").await.unwrap().unwrap();
        assert_eq!(counts(&h.history().session("counted").await.unwrap().unwrap()), (3, 0, 1));
        h.append("counted", failed("call_susp_1")).await.unwrap();
        stores.suspensions().finish_suspension("susp_1").await.unwrap();
        assert_eq!(counts(&h.history().session("counted").await.unwrap().unwrap()), (4, 0, 2));

        // A refused append (no such session) counts nothing anywhere.
        assert!(h.append("nobody", ok("c9")).await.is_err());
        drop(stores);

        let stores = backend.open().await;
        let h = &stores;
        let listed = h.history().list_sessions(Page::default()).await.unwrap();
        let by_id = |id: &str| listed.iter().find(|s| s.id == id).map(counts);
        assert_eq!(by_id("counted"), Some((4, 0, 2)));
        assert_eq!(by_id("quiet"), Some((0, 0, 0)));
        assert_eq!(by_id("child"), Some((1, 0, 1)));
        let children = h.history().child_sessions("counted").await.unwrap();
        assert_eq!(children.iter().map(counts).collect::<Vec<_>>(), [(1, 0, 1)]);
    }
}

on_every_backend! {
    async fn a_cancelled_call_is_a_call_and_no_failure(backend) {
        let stores = backend.open().await;
        let h = &stores;
        let s = h.create_session(NewSession::default()).await.unwrap();
        // Stopped or dismissed by a person: stored as an error whose code is `cancelled`.
        let cancelled = Message::ToolResult(ToolResult::error_with_code(
            CallRef::new("c1", "echo"),
            toolwire_core::ErrorCode::Cancelled,
            "cancelled: interrupted before completion",
        ));
        h.append_many(&s.id, vec![cancelled, failed("c2")]).await.unwrap();
        assert_eq!(counts(&h.history().session(&s.id).await.unwrap().unwrap()), (2, 0, 1));
    }
}

on_every_backend! {
    async fn a_sessions_messages_read_a_page_at_a_time_are_the_whole_in_order(backend) {
        use toolwire_store::MessagePage;
        let stores = backend.open().await;
        let s = stores.create_session(NewSession::default()).await.unwrap();
        for i in 0..7 {
            stores.append(&s.id, ok(&format!("c{i}"))).await.unwrap();
        }
        let whole = stores.history().load_raw(&s.id).await.unwrap();
        assert_eq!(whole.len(), 7);
        // Pages of 3 after the last seq read: 3, 3, 1, then none; the same rows, in order.
        let mut paged = Vec::new();
        let mut sizes = Vec::new();
        loop {
            let after_seq = paged.last().map_or(0, |m: &toolwire_store::RawStoredMessage| m.seq);
            let page = stores
                .history()
                .load_raw_page(&s.id, MessagePage { after_seq, limit: 3 })
                .await
                .unwrap();
            sizes.push(page.len());
            if page.is_empty() {
                break;
            }
            paged.extend(page);
        }
        assert_eq!(sizes, [3, 3, 1, 0]);
        let key = |m: &toolwire_store::RawStoredMessage| (m.id, m.seq, m.body.clone());
        assert_eq!(
            paged.iter().map(key).collect::<Vec<_>>(),
            whole.iter().map(key).collect::<Vec<_>>()
        );
        // A page of a session that does not exist is an error, as the whole is.
        let missing = stores
            .history()
            .load_raw_page("s_missing", MessagePage { after_seq: 0, limit: 3 })
            .await;
        assert!(matches!(missing, Err(toolwire_store::StoreError::SessionNotFound { .. })));
    }
}
