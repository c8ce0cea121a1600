//! Acceptance: 8 tasks × 10,000 appends to one SQLite store all land, none sees "locked";
//! on Postgres 8 × 1,000 (each append is a network round trip and a commit, so the full
//! count would only make the suite slow without testing more).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::HashSet;

use toolwire_core::Message;
use toolwire_core::{CallRef, EventKind, Source, ToolResult, Value};
use toolwire_store::NewSession;

const TASKS: usize = 8;

on_every_backend! {
    async fn eight_tasks_append_ten_thousand_each(backend) {
        let per_task = if backend.is_sqlite() { 10_000 } else { 1_000 };
        let stores = backend.open().await;
        let shared = stores

            .create_session(NewSession::default())
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for t in 0..TASKS {
            let history = stores.clone();
            let session = shared.id.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..per_task {
                    let result = ToolResult::success(
                        CallRef::new(format!("t{t}-{i}"), "n"),
                        Value::text(format!("{t}/{i}")),
                    );
                    // Any error, "database is locked" included, fails the test here.
                    history
                        .append(&session, Message::ToolResult(result))
                        .await
                        .unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let loaded = stores.history().load(&shared.id).await.unwrap();
        assert_eq!(loaded.len(), TASKS * per_task);
        let seqs: Vec<i64> = loaded.iter().map(|m| m.seq).collect();
        assert_eq!(seqs, (1..=(TASKS * per_task) as i64).collect::<Vec<_>>());
        let ids: HashSet<&str> = loaded
            .iter()
            .map(|m| m.content.as_tool_result().unwrap().call_id.as_str())
            .collect();
        assert_eq!(ids.len(), TASKS * per_task);
        assert!(ids.contains(format!("t7-{}", per_task - 1).as_str()) && ids.contains("t0-0"));
    }
}

on_every_backend! {
    async fn append_many_is_ordered_and_all_or_nothing(backend) {
        let stores = backend.open().await;
        let session = stores

            .create_session(NewSession::default())
            .await
            .unwrap();
        let batch = |n: usize| -> Vec<Message> {
            (0..n)
                .map(|i| {
                    Message::ToolResult(ToolResult::success(
                        CallRef::new(format!("b{i}"), "n"),
                        Value::text("x"),
                    ))
                })
                .collect()
        };
        let stored = stores

            .append_many(&session.id, batch(1000))
            .await
            .unwrap();
        assert_eq!(stored.last().unwrap().seq, 1000);
        assert!(
            stores
                .append_many("missing", batch(10))
                .await
                .is_err()
        );
        let mut bad = batch(5);
        bad.push(Message::ToolResult(ToolResult::success(
            CallRef::new("../x", "n"),
            Value::text("x"),
        )));
        assert!(stores.append_many(&session.id, bad).await.is_err());
        let loaded = stores.history().load(&session.id).await.unwrap();
        assert_eq!(loaded.len(), 1000);
        assert_eq!(
            loaded.iter().map(|m| m.seq).collect::<Vec<_>>(),
            (1..=1000).collect::<Vec<_>>()
        );
    }
}

on_every_backend! {
    /// Many callers at once, over two sessions, with appends to a missing session mixed
    /// in: under load the SQLite writer stores such a batch as grouped statements, and a
    /// bad append must still fail alone while each good one gets its own row back.
    async fn concurrent_appends_over_sessions_fail_alone_and_return_their_rows(backend) {
        let stores = backend.open().await;
        let a = stores.create_session(NewSession::default()).await.unwrap().id;
        let b = stores.create_session(NewSession::default()).await.unwrap().id;
        let mut tasks = Vec::new();
        for t in 0..96usize {
            let (stores, target) = (stores.clone(), match t % 3 {
                0 => a.clone(),
                1 => b.clone(),
                _ => "no_such_session".to_owned(),
            });
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::new();
                for i in 0..20 {
                    let call = format!("c{t}-{i}");
                    let result = ToolResult::success(CallRef::new(call.clone(), "n"), Value::text(call.clone()));
                    got.push((call, stores.append(&target, Message::ToolResult(result)).await));
                }
                (target, got)
            }));
        }
        let mut stored = Vec::new();
        for task in tasks {
            let (target, got) = task.await.unwrap();
            for (call, outcome) in got {
                if target == "no_such_session" {
                    assert!(outcome.is_err(), "{call} was stored in a missing session");
                } else {
                    stored.push((target.clone(), call, outcome.unwrap()));
                }
            }
        }
        let loaded = [
            (a.clone(), stores.history().load(&a).await.unwrap()),
            (b.clone(), stores.history().load(&b).await.unwrap()),
        ];
        for (target, call, message) in &stored {
            // The row handed back is the row stored under that seq.
            let rows = &loaded.iter().find(|(id, _)| id == target).unwrap().1;
            let at = &rows[usize::try_from(message.seq - 1).unwrap()];
            assert_eq!((at.id, at.seq), (message.id, message.seq));
            assert_eq!(&at.content.as_tool_result().unwrap().call_id, call);
        }
        let stored = stored.len();
        assert_eq!(stored, 64 * 20);
        for id in [&a, &b] {
            let seqs: Vec<i64> = stores.history().load(id).await.unwrap().iter().map(|m| m.seq).collect();
            assert_eq!(seqs, (1..=(32 * 20)).collect::<Vec<i64>>());
        }
    }
}

on_every_backend! {
    /// One append of several results, some holding blobs (one holds two): every row keeps
    /// its own blob references, which GC spares. On Postgres the append is one statement
    /// that takes the rows and their references from arrays.
    async fn an_append_of_many_rows_keeps_each_rows_blob_references(backend) {
        let stores = backend.open().await;
        let session = stores.create_session(NewSession::default()).await.unwrap();
        let (mut messages, mut keys) = (Vec::new(), HashSet::new());
        for i in 0..6u64 {
            let mut values = vec![Value::text(format!("result {i}"))];
            let images = [0, 1, 0, 2, 0, 1][usize::try_from(i).unwrap()];
            for j in 0..images {
                let bytes = support::media_bytes(100 + i * 10 + j, 2_000);
                values.push(Value::image(Source::base64(support::b64(&bytes)), "image/png"));
            }
            let result = ToolResult::success(CallRef::new(format!("m{i}"), "t"), values);
            let stored = stores.persist(result, None).await.unwrap();
            for value in &stored.output {
                if let Some(key) = value.data["source"]["blob"].as_str() {
                    keys.insert(key.to_owned());
                }
            }
            messages.push(Message::ToolResult(stored));
        }
        assert_eq!(keys.len(), 4);
        let appended = stores.append_many(&session.id, messages).await.unwrap();
        assert_eq!(appended.iter().map(|m| m.seq).collect::<Vec<_>>(), (1..=6).collect::<Vec<_>>());
        let referenced: HashSet<String> = stores
            .history()
            .referenced_blobs()
            .await
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(referenced, keys);
        let loaded = stores.history().load(&session.id).await.unwrap();
        for (stored, back) in appended.iter().zip(&loaded) {
            assert_eq!((stored.id, stored.seq), (back.id, back.seq));
            assert_eq!(stored.content, back.content);
        }
        let counted = stores.history().session(&session.id).await.unwrap().unwrap();
        assert_eq!((counted.message_count, counted.call_count), (6, 6));
    }
}

on_every_backend! {
    /// Many writers of one session's events at once: every event gets its own number,
    /// with no gap and none twice (on Postgres two writers that take the same number
    /// collide on the key and the loser tries again, then waits its turn under a lock).
    async fn events_of_many_writers_at_once_are_numbered_without_gaps(backend) {
        let stores = backend.open().await;
        let session = stores.create_session(NewSession::default()).await.unwrap().id;
        let (writers, each) = (16u32, 15u32);
        let mut tasks = Vec::new();
        for w in 0..writers {
            let (events, session) = (stores.events().clone(), session.clone());
            tasks.push(tokio::spawn(async move {
                let mut seqs = Vec::new();
                for i in 0..each {
                    let kind = EventKind::TurnStarted { turn: w * 1000 + i };
                    let at = "2026-01-01T00:00:00.000Z".to_owned();
                    seqs.push(events.append_event(&session, at, kind).await.unwrap().seq);
                }
                seqs
            }));
        }
        let mut seqs = Vec::new();
        for task in tasks {
            seqs.extend(task.await.unwrap());
        }
        seqs.sort_unstable();
        let all: Vec<u64> = (1..=u64::from(writers * each)).collect();
        assert_eq!(seqs, all);
        let logged = stores.events().events_since(&session, 0).await.unwrap();
        assert_eq!(logged.iter().map(|e| e.seq).collect::<Vec<_>>(), all);
    }
}

on_every_backend! {
    /// Appends (some to a missing session) and events of two sessions, many callers at
    /// once: the SQLite writer stores such a run as grouped statements. Each event's
    /// number is the one it is replayed under, each session's events are numbered with no
    /// gap, and the bad appends fail alone.
    async fn appends_and_events_mixed_at_once_keep_their_numbers(backend) {
        let stores = backend.open().await;
        let a = stores.create_session(NewSession::default()).await.unwrap().id;
        let b = stores.create_session(NewSession::default()).await.unwrap().id;
        let mut tasks = Vec::new();
        for t in 0..48u32 {
            let stores = stores.clone();
            let session = if t % 2 == 0 { a.clone() } else { b.clone() };
            tasks.push(tokio::spawn(async move {
                let (mut events, mut appended) = (Vec::new(), 0usize);
                for i in 0..10u32 {
                    let turn = t * 1000 + i;
                    let at = "2026-01-01T00:00:00.000Z".to_owned();
                    let kind = EventKind::TurnStarted { turn };
                    // Half announced without waiting (queue_event), half waited on.
                    let seq = if i % 2 == 0 {
                        let queued = stores.events().queue_event(&session, at, kind).await.unwrap();
                        queued.await.unwrap().seq
                    } else {
                        stores.events().append_event(&session, at, kind).await.unwrap().seq
                    };
                    events.push((turn, seq));
                    let result = ToolResult::success(CallRef::new(format!("c{turn}"), "n"), Value::text("x"));
                    let target = if t % 3 == 0 { "no_such_session" } else { session.as_str() };
                    let outcome = stores.append(target, Message::ToolResult(result)).await;
                    assert_eq!(outcome.is_ok(), t % 3 != 0, "append of c{turn} to {target}");
                    appended += usize::from(outcome.is_ok());
                }
                (session, events, appended)
            }));
        }
        let mut numbered: Vec<(String, u32, u64)> = Vec::new();
        let mut appended = [0usize; 2];
        for task in tasks {
            let (session, events, count) = task.await.unwrap();
            appended[usize::from(session == b)] += count;
            numbered.extend(events.into_iter().map(|(turn, seq)| (session.clone(), turn, seq)));
        }
        for (i, id) in [&a, &b].into_iter().enumerate() {
            let logged = stores.events().events_since(id, 0).await.unwrap();
            let seqs: Vec<u64> = logged.iter().map(|e| e.seq).collect();
            assert_eq!(seqs, (1..=24 * 10).collect::<Vec<u64>>());
            for (session, turn, seq) in numbered.iter().filter(|(s, _, _)| s == id) {
                let event = &logged[usize::try_from(*seq - 1).unwrap()];
                assert!(
                    matches!(event.kind, EventKind::TurnStarted { turn: t } if t == *turn),
                    "{session}: event {seq} is {:?}, not turn {turn}",
                    event.kind
                );
            }
            let rows = stores.history().load(id).await.unwrap();
            assert_eq!(rows.len(), appended[i]);
            let seqs: Vec<i64> = rows.iter().map(|m| m.seq).collect();
            assert_eq!(seqs, (1..=i64::try_from(appended[i]).unwrap()).collect::<Vec<i64>>());
        }
    }
}
