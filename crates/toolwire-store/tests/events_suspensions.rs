//! Runtime events and pending suspensions, on every backend: numbering assigned by the
//! store (also with two handles writing at once, as two processes or instances would),
//! ordered replay, claim-once, a claimed call still listed until it is finished, and all
//! of it surviving a reopen of the database. On Postgres, another instance's events
//! arrive as wake-ups.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use toolwire_core::{EventKind, PendingCall};

fn at() -> String {
    "2026-11-22T10:00:00Z".to_owned()
}

on_every_backend! {
    async fn queued_and_batched_events_keep_the_order_they_were_given_in(backend) {
        let stores = backend.open().await;
        let h = &stores.events();
        // Queued without waiting: numbered in the order queued, before what follows.
        let first = h
            .queue_event("q1", at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
        let second = h
            .queue_event("q1", at(), EventKind::TurnStarted { turn: 2 })
            .await
            .unwrap();
        let batch: Vec<(String, EventKind)> = (3..=6)
            .map(|turn| (at(), EventKind::TurnStarted { turn }))
            .collect();
        let logged = h.append_events("q1", batch).await.unwrap();
        assert_eq!(first.await.unwrap().seq, 1);
        assert_eq!(second.await.unwrap().seq, 2);
        let seqs: Vec<u64> = logged.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [3, 4, 5, 6]);
        let turns: Vec<EventKind> = h
            .events_since("q1", 0)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect();
        let want: Vec<EventKind> = (1..=6).map(|turn| EventKind::TurnStarted { turn }).collect();
        assert_eq!(turns, want);
    }
}

on_every_backend! {
    async fn an_announcement_alone_is_logged_soon_and_one_beside_a_write_keeps_its_place(backend) {
        let stores = backend.open().await;
        let h = &stores.events();
        // SQLite holds announcements alone a moment for a write to share their commit:
        // never longer than that.
        let alone = h
            .queue_event("a1", at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
        let alone = tokio::time::timeout(std::time::Duration::from_secs(5), alone)
            .await
            .expect("an announcement alone is not held back")
            .unwrap();
        assert_eq!(alone.seq, 1);
        // Around a write that is waited on: numbered in the order given, no gap.
        let before = h
            .queue_event("a1", at(), EventKind::TurnStarted { turn: 2 })
            .await
            .unwrap();
        let waited = h
            .append_event("a1", at(), EventKind::TurnStarted { turn: 3 })
            .await
            .unwrap();
        let after = h
            .queue_event("a1", at(), EventKind::TurnStarted { turn: 4 })
            .await
            .unwrap();
        assert_eq!(waited.seq, 3);
        assert_eq!(before.await.unwrap().seq, 2);
        assert_eq!(after.await.unwrap().seq, 4);
        let turns: Vec<EventKind> = h
            .events_since("a1", 0)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect();
        let want: Vec<EventKind> = (1..=4).map(|turn| EventKind::TurnStarted { turn }).collect();
        assert_eq!(turns, want);
    }
}

on_every_backend! {
    async fn events_are_numbered_by_the_store_replay_in_order_and_survive_a_reopen(backend) {
        {
            let stores = backend.open().await;
            let h = &stores.events();
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
            // Two writers at once on one session, through two handles (two processes or
            // two instances): both numbered, neither renumbered.
            let other = backend.open().await;
            let (a, b) = tokio::join!(
                h.append_event("s1", at(), EventKind::TurnStarted { turn: 4 }),
                other.events().append_event("s1", at(), EventKind::TurnStarted { turn: 5 })
            );
            let mut seqs = [a.unwrap().seq, b.unwrap().seq];
            seqs.sort_unstable();
            assert_eq!(seqs, [4, 5]);
        }
        let stores = backend.open().await;
        let h = &stores.events();
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
}

fn pending(id: &str) -> PendingCall {
    support::pending(id, "s1")
}

on_every_backend! {
    async fn a_suspension_is_claimed_once_listed_until_finished_and_survives_a_reopen(backend) {
        {
            let stores = backend.open().await;
            stores.suspensions().put_suspension(&pending("susp_a")).await.unwrap();
            stores.suspensions().put_suspension(&pending("susp_b")).await.unwrap();
        }
        // A second process (here: a second handle after reopening) lists and claims them;
        // a third claims at the same moment.
        let stores = backend.open().await;
        let rival = backend.open().await;
        let h = &stores.suspensions();
        let listed = h.suspensions("s1").await.unwrap();
        assert_eq!(listed, [pending("susp_a"), pending("susp_b")]);
        let (a, b) = tokio::join!(
            h.claim_suspension("susp_a"),
            rival.suspensions().claim_suspension("susp_a")
        );
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
}

on_every_backend! {
async fn deleting_a_session_removes_it_its_subagents_and_their_records(backend) {
    use toolwire_core::Message;
    use toolwire_store::NewSession;
    let stores = backend.open().await;
    let (db, events, pending_calls) = (&stores, &stores.events(), &stores.suspensions());
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
        events.append_event(s, at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
    }
    pending_calls.put_suspension(&PendingCall {
        session_id: child.id.clone(),
        ..pending("p1")
    })
    .await
    .unwrap();

    assert!(db.delete_session(&parent.id).await.unwrap());
    for gone in [&parent.id, &child.id] {
        assert!(db.history().session(gone).await.unwrap().is_none());
        assert!(matches!(
            db.history().load(gone).await,
            Err(toolwire_store::StoreError::SessionNotFound { .. })
        ));
        assert!(events.events_since(gone, 0).await.unwrap().is_empty());
    }
    assert!(pending_calls.suspensions(&child.id).await.unwrap().is_empty());
    // Another session is untouched, and deleting twice says there was nothing.
    assert_eq!(db.history().load(&other.id).await.unwrap().len(), 1);
    assert!(!db.delete_session(&parent.id).await.unwrap());
    assert!(db.delete_session("../etc").await.is_err());
}
}

/// Two instances on one Postgres: events one logs wake the other's subscribers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_another_instances_events_arrive_as_wakeups() {
    let Some(backend) = support::backends::postgres_s3().await else {
        return;
    };
    let a = backend.open().await;
    let b = backend.open().await;
    let mut wakeups = a.events().wakeups().expect("Postgres has wake-ups");
    for turn in 1..=3 {
        b.events()
            .append_event("s_shared", at(), EventKind::TurnStarted { turn })
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let w = tokio::time::timeout(std::time::Duration::from_secs(5), wakeups.recv())
            .await
            .expect("a wake-up within 5 s")
            .unwrap();
        if let toolwire_store::EventWake::Logged { session_id, seq } = w
            && session_id == "s_shared"
        {
            seen.push(seq);
        }
    }
    assert_eq!(seen, [1, 2, 3]);
    assert_eq!(
        a.events()
            .last_event_seqs(&["s_shared".into(), "s_none".into()])
            .await
            .unwrap(),
        [3, 0]
    );
}

/// Two instances on one Postgres: a session deleted by one is word to the other (so its
/// feeds of that session end), and the periodic look for lost word is not (so idle feeds
/// never read their sessions: on 4 instances with 10,000 idle feeds, it had them read
/// 2,000 sessions a second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_deletion_is_word_and_the_periodic_look_is_not_a_change() {
    use toolwire_store::{EventWake, NewSession};
    let Some(backend) = support::backends::postgres_s3().await else {
        return;
    };
    let a = backend.open().await;
    let b = backend.open().await;
    let session = b.create_session(NewSession::default()).await.unwrap();
    let mut wakeups = a.events().wakeups().expect("Postgres has wake-ups");
    // Other tests on the same database log and delete too: only word of this session, and
    // the periodic look (every 5 s, which says Resync, never Changed), counts here.
    let mut next = async || loop {
        let w = tokio::time::timeout(std::time::Duration::from_secs(8), wakeups.recv())
            .await
            .map_err(|_| "no word within 8 s")
            .unwrap()
            .unwrap();
        match &w {
            EventWake::Changed => panic!("the periodic look said Changed"),
            EventWake::Deleted { session_id } | EventWake::Logged { session_id, .. }
                if *session_id != session.id => {}
            _ => break w,
        }
    };
    assert_eq!(next().await, EventWake::Resync);
    assert!(b.delete_session(&session.id).await.unwrap());
    let word = loop {
        let w = next().await;
        if w != EventWake::Resync {
            break w;
        }
    };
    assert_eq!(
        word,
        EventWake::Deleted {
            session_id: session.id.clone()
        }
    );
    // Deleting what is not there says nothing (the next word of it is the periodic look).
    assert!(!b.delete_session(&session.id).await.unwrap());
    assert_eq!(next().await, EventWake::Resync);
}

/// Two processes' stores on one SQLite file: a commit by the other one is word on this
/// one's wake-ups (SQLite says only that another connection wrote, not what), and this
/// one's own writes are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_another_writers_commit_is_word_and_ones_own_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let a = toolwire_store::Stores::open(dir.path(), Default::default())
        .await
        .unwrap();
    let b = toolwire_store::Stores::open(dir.path(), Default::default())
        .await
        .unwrap();
    let mut wakeups = a
        .events()
        .wakeups()
        .expect("SQLite says when another writes");
    a.events()
        .append_event("s1", at(), EventKind::TurnStarted { turn: 1 })
        .await
        .unwrap();
    let quiet = tokio::time::timeout(std::time::Duration::from_millis(800), wakeups.recv()).await;
    assert!(quiet.is_err(), "its own write was word: {quiet:?}");
    b.events()
        .append_event("s1", at(), EventKind::TurnStarted { turn: 2 })
        .await
        .unwrap();
    let word = tokio::time::timeout(std::time::Duration::from_secs(5), wakeups.recv())
        .await
        .expect("word of the other's commit within 5 s")
        .unwrap();
    assert_eq!(word, toolwire_store::EventWake::Changed);
    assert_eq!(
        a.events()
            .last_event_seqs(&["s1".into(), "none".into()])
            .await
            .unwrap(),
        [2, 0]
    );
}

on_every_backend! {
    async fn a_large_result_is_logged_by_reference_and_read_back_whole(backend) {
        use toolwire_core::{CallRef, Message, ToolResult, Value};
        let stores = backend.open().await;
        let session = stores.create_session(toolwire_store::NewSession::default()).await.unwrap();
        let h = &stores.events();
        // Past the 1 MiB a logged event holds whole: logged as a reference to the stored
        // result, read back whole, without the payload as received.
        let big = ToolResult::success(CallRef::new("call_big", "dump"), Value::text("x".repeat(3 << 20)));
        stores.append(&session.id, Message::ToolResult(big.clone())).await.unwrap();
        let raw = Some(serde_json::json!({"content": "as received"}));
        let logged = h
            .append_event(&session.id, at(), EventKind::tool_result(big.clone(), raw.clone()))
            .await
            .unwrap();
        // Below it: logged whole, raw and all.
        let small = ToolResult::success(CallRef::new("call_small", "echo"), Value::text("hi"));
        stores.append(&session.id, Message::ToolResult(small.clone())).await.unwrap();
        h.append_event(&session.id, at(), EventKind::tool_result(small.clone(), raw.clone()))
            .await
            .unwrap();
        let events = h.events_since(&session.id, 0).await.unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!((events[0].seq, events[0].at.as_str()), (logged.seq, at().as_str()));
        assert_eq!(events[0].kind, EventKind::tool_result(big, None));
        assert_eq!(events[1].kind, EventKind::tool_result(small, raw));

        // A reference whose result the history does not hold (never stored): the read says
        // so, naming the event; no panic, no made-up result.
        let never = ToolResult::success(CallRef::new("call_never", "dump"), Value::text("y".repeat(3 << 20)));
        h.append_event(&session.id, at(), EventKind::tool_result(never, None))
            .await
            .unwrap();
        let err = h.events_since(&session.id, 2).await.unwrap_err().to_string();
        assert!(err.contains("not in the history"), "{err}");
    }
}

on_every_backend! {
    async fn a_stored_result_is_logged_once_as_its_message_and_read_back_whole(backend) {
        use toolwire_core::{CallRef, Message, StoredAt, ToolResult, Value};
        let stores = backend.open().await;
        let session = stores.create_session(toolwire_store::NewSession::default()).await.unwrap();
        let other = stores.create_session(toolwire_store::NewSession::default()).await.unwrap();
        let h = &stores.events();
        let stored_event = |stored: &toolwire_store::StoredMessage, raw| {
            let Message::ToolResult(result) = &stored.content else { panic!("not a result") };
            EventKind::ToolResult { result: std::sync::Arc::new(result.clone()), raw, stored: StoredAt(Some(stored.id)) }
        };
        // Two results of the same call id (a model may repeat one): each event is its own.
        let text = "a line of a log\n".repeat(4_000);
        let first = ToolResult::success(CallRef::new("call_1", "read"), Value::text(format!("first\n{text}")));
        let second = ToolResult::success(CallRef::new("call_1", "read"), Value::text(format!("second\n{text}")));
        let first_row = stores.append(&session.id, Message::ToolResult(first.clone())).await.unwrap();
        let second_row = stores.append(&session.id, Message::ToolResult(second.clone())).await.unwrap();
        h.append_event(&session.id, at(), stored_event(&first_row, None)).await.unwrap();
        h.append_event(&session.id, at(), stored_event(&second_row, None)).await.unwrap();
        // With the payload as received, which only the log would keep: logged whole.
        let raw = Some(serde_json::json!({"content": [{"type": "text", "text": "as received"}]}));
        h.append_event(&session.id, at(), stored_event(&second_row, raw.clone())).await.unwrap();

        let lengths = backend.logged_lengths(&session.id).await;
        assert_eq!(lengths.len(), 3);
        assert!(lengths[0] < 200 && lengths[1] < 200, "not logged as references: {lengths:?}");
        assert!(lengths[2] > 64_000, "the event with its raw payload was not logged whole: {lengths:?}");
        let events = h.events_since(&session.id, 0).await.unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].kind, EventKind::tool_result(first, None));
        assert_eq!(events[1].kind, EventKind::tool_result(second.clone(), None));
        assert_eq!(events[2].kind, EventKind::tool_result(second, raw));
        assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);

        // More references than one read takes, some naming the same message: all in order.
        let mut rows = Vec::new();
        for i in 0..150 {
            let result = ToolResult::success(CallRef::new(format!("call_m{i}"), "echo"), Value::text(format!("echo {i}")));
            rows.push(stores.append(&other.id, Message::ToolResult(result)).await.unwrap());
        }
        let batch: Vec<(String, EventKind)> = rows
            .iter()
            .chain(rows.iter().take(3))
            .map(|row| (at(), stored_event(row, None)))
            .collect();
        h.append_events(&other.id, batch).await.unwrap();
        let events = h.events_since(&other.id, 0).await.unwrap();
        assert_eq!(events.len(), 153);
        for (event, row) in events.iter().zip(rows.iter().chain(rows.iter().take(3))) {
            let Message::ToolResult(result) = &row.content else { panic!("not a result") };
            assert_eq!(event.kind, EventKind::tool_result(result.clone(), None));
        }
        // Read from the middle: only what follows, still whole.
        assert_eq!(h.events_since(&other.id, 149).await.unwrap().len(), 4);

        // A reference to another session's message does not read it: the read says the
        // result is not in this session's history, naming the event.
        h.append_event(&session.id, at(), stored_event(&rows[0], None)).await.unwrap();
        let err = h.events_since(&session.id, 3).await.unwrap_err().to_string();
        assert!(err.contains("not in the history"), "{err}");
    }
}

on_every_backend! {
    async fn a_result_and_its_event_are_written_together_naming_its_row(backend) {
        use toolwire_core::{CallRef, Message, ToolResult, Value};
        use toolwire_store::{NewSession, StoredResult};
        let stores = backend.open().await;
        let h = stores.events();
        let mut sessions = Vec::new();
        for _ in 0..5 {
            sessions.push(stores.create_session(NewSession::default()).await.unwrap().id);
        }
        let result = |call: &str, text: String| {
            ToolResult::success(CallRef::new(call, "echo"), Value::text(text))
        };
        // What the log reads back for a session must be each landed result, as stored,
        // under the number the landing was given (two results of one call id each keep
        // their own: the event names its row, not the call).
        async fn check(
            h: &std::sync::Arc<dyn toolwire_store::EventLog>,
            session: &str,
            skip: usize,
            landed: &[(StoredResult, Option<u64>)],
            logged: bool,
        ) {
            let events = h.events_since(session, 0).await.unwrap();
            if !logged {
                assert_eq!(events.len(), skip, "a store that cannot logged an event anyway");
                assert!(landed.iter().all(|(_, seq)| seq.is_none()));
                return;
            }
            assert_eq!(events.len(), skip + landed.len(), "{events:?}");
            for (event, (stored, seq)) in events[skip..].iter().zip(landed) {
                assert_eq!(Some(event.seq), *seq);
                let EventKind::ToolResult { result, raw, stored: at } = &event.kind else {
                    panic!("not a result event: {event:?}");
                };
                assert_eq!((**result).clone(), stored.result);
                assert!(raw.is_none());
                assert_eq!(at.0, Some(stored.message_id), "the event names another row");
            }
        }
        // Both backends write the event with its result (SQLite in one commit, Postgres
        // in one round of its writer); a store that cannot gives no number.
        let can = true;

        // A call's start queued, then its result: one small batch of one session (SQLite's
        // one-statement-list path), numbered in the order given.
        let started = h
            .queue_event(&sessions[0], at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
        let one = stores
            .record_result_announced(&sessions[0], result("call_a", "a".into()), Vec::new(), at())
            .await
            .unwrap();
        assert_eq!(started.await.unwrap().seq, 1);
        if can {
            assert_eq!(one.1, Some(2));
        }
        check(h, &sessions[0], 1, &[one], can).await;

        // Several sessions' results at once (SQLite's grouped path), two of one call id
        // in each.
        let jobs: Vec<(String, ToolResult)> = sessions[1..4]
            .iter()
            .flat_map(|s| {
                [
                    (s.clone(), result("call_same", format!("first of {s}"))),
                    (s.clone(), result("call_same", format!("second of {s}"))),
                ]
            })
            .collect();
        let landed = futures::future::join_all(jobs.iter().map(|(s, r)| {
            stores.record_result_announced(s, r.clone(), Vec::new(), at())
        }))
        .await;
        let landed: Vec<_> = landed.into_iter().map(Result::unwrap).collect();
        for (k, session) in sessions[1..4].iter().enumerate() {
            check(h, session, 0, &landed[2 * k..2 * k + 2], can).await;
        }

        // With a session that does not exist and a result too large to be written grouped
        // in the same batch (SQLite then writes op by op): the missing session's result
        // fails alone, and logs nothing; the others land with their events.
        let big = result("call_big", "x".repeat(300 << 10));
        let small = result("call_small", "small".into());
        let (missing, big_landed, small_landed) = tokio::join!(
            stores.record_result_announced("no_such_session", small.clone(), Vec::new(), at()),
            stores.record_result_announced(&sessions[4], big, Vec::new(), at()),
            stores.record_result_announced(&sessions[4], small, Vec::new(), at()),
        );
        assert!(missing.is_err(), "a result of no session was stored: {missing:?}");
        assert!(h.events_since("no_such_session", 0).await.unwrap().is_empty());
        check(h, &sessions[4], 0, &[big_landed.unwrap(), small_landed.unwrap()], can).await;
        // The history holds each result once: the event was no second copy of it.
        let messages = stores.history().load(&sessions[4]).await.unwrap();
        assert_eq!(messages.len(), 2);
        assert!(matches!(&messages[0].content, Message::ToolResult(r) if r.call_id == "call_big"));
    }
}

on_every_backend! {
    async fn a_refused_event_leaves_its_result_stored_and_the_rest_of_its_round_whole(backend) {
        use toolwire_core::{CallRef, Message, ToolResult, Value};
        use toolwire_store::NewSession;
        let stores = backend.open().await;
        let h = stores.events();
        let refused = stores.create_session(NewSession::default()).await.unwrap().id;
        let mut others = Vec::new();
        for _ in 0..4 {
            others.push(stores.create_session(NewSession::default()).await.unwrap().id);
        }
        // The log refuses every event of one session (a stand-in for a database that
        // refuses a write: a constraint, a full disk).
        backend
            .execute(if backend.is_sqlite() {
                format!(
                    "CREATE TRIGGER refuse BEFORE INSERT ON events \
                     WHEN NEW.session_id = '{refused}' \
                     BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
                )
            } else {
                format!(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                     IF NEW.session_id = '{refused}' THEN \
                     RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$; \
                     CREATE TRIGGER refuse BEFORE INSERT ON events \
                     FOR EACH ROW EXECUTE FUNCTION refuse()"
                )
            })
            .await;
        let result = |s: &str| {
            ToolResult::success(CallRef::new(format!("call_{s}"), "echo"), Value::text(s))
        };
        // Every session's start and result queued at once, so that they share writer
        // rounds with the refused session's (each landing's outcome is the same whether
        // its round is written whole or op by op).
        let sessions: Vec<&String> = std::iter::once(&refused).chain(&others).collect();
        let starts = futures::future::join_all(
            sessions
                .iter()
                .map(|s| h.append_event(s, at(), EventKind::TurnStarted { turn: 1 })),
        );
        let landings = futures::future::join_all(
            sessions
                .iter()
                .map(|s| stores.record_result_announced(s, result(s), Vec::new(), at())),
        );
        let (starts, landings) = tokio::join!(starts, landings);
        let err = starts[0].as_ref().unwrap_err().to_string();
        assert!(err.contains("refused by the test"), "{err}");
        // The refused session's result is stored all the same, its event unnumbered.
        let (stored, seq) = landings[0].as_ref().unwrap();
        assert_eq!(*seq, None);
        assert_eq!(stored.result, result(&refused));
        let messages = stores.history().load(&refused).await.unwrap();
        assert_eq!(messages.len(), 1);
        assert!(matches!(&messages[0].content, Message::ToolResult(r) if r.call_id == stored.result.call_id));
        assert!(h.events_since(&refused, 0).await.unwrap().is_empty());
        // The others: each result stored once, announced by an event that names its row,
        // after the session's start.
        for (k, session) in others.iter().enumerate() {
            let start = starts[k + 1].as_ref().unwrap();
            let (stored, seq) = landings[k + 1].as_ref().unwrap();
            let events = h.events_since(session, 0).await.unwrap();
            assert_eq!(events.len(), 2, "{session}: {events:?}");
            assert_eq!(events[0].seq, start.seq);
            assert_eq!(Some(events[1].seq), *seq);
            let EventKind::ToolResult { result: logged, stored: at, .. } = &events[1].kind else {
                panic!("not a result event: {:?}", events[1]);
            };
            assert_eq!(**logged, stored.result);
            assert_eq!(at.0, Some(stored.message_id));
            assert_eq!(stores.history().load(session).await.unwrap().len(), 1);
        }
    }
}
