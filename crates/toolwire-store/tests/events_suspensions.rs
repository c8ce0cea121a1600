//! Runtime events and pending suspensions: ordered replay, unique numbers, take-once, and
//! both surviving a reopen of the database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use toolwire_store::{HistoryStore, SqliteHistory, StoreError};

#[tokio::test]
async fn events_replay_in_order_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    {
        let h = SqliteHistory::open(&db).await.unwrap();
        for seq in 1..=5 {
            h.append_event("s1", seq, format!(r#"{{"n":{seq}}}"#))
                .await
                .unwrap();
        }
        h.append_event("s2", 1, "{}".into()).await.unwrap();
        let dup = h.append_event("s1", 3, "{}".into()).await.unwrap_err();
        assert!(
            matches!(dup, StoreError::EventExists { seq: 3, .. }),
            "{dup}"
        );
    }
    let h = SqliteHistory::open(&db).await.unwrap();
    assert_eq!(h.last_event_seq("s1").await.unwrap(), 5);
    assert_eq!(h.last_event_seq("nobody").await.unwrap(), 0);
    let since: Vec<i64> = h
        .events_since("s1", 2)
        .await
        .unwrap()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(since, [3, 4, 5]);
    assert_eq!(h.events_since("s1", 4).await.unwrap()[0].1, r#"{"n":5}"#);
    assert!(h.append_event("../x", 1, "{}".into()).await.is_err());
}

#[tokio::test]
async fn a_suspension_is_taken_exactly_once_even_by_concurrent_takers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    {
        let h = SqliteHistory::open(&db).await.unwrap();
        h.put_suspension("susp_a", "s1", r#"{"id":"susp_a"}"#.into())
            .await
            .unwrap();
        h.put_suspension("susp_b", "s1", r#"{"id":"susp_b"}"#.into())
            .await
            .unwrap();
    }
    // A second process (here: a second handle after reopening) sees and resolves them.
    let h = SqliteHistory::open(&db).await.unwrap();
    assert_eq!(h.suspensions("s1").await.unwrap().len(), 2);
    let (a, b) = tokio::join!(h.take_suspension("susp_a"), h.take_suspension("susp_a"));
    let got: Vec<_> = [a.unwrap(), b.unwrap()].into_iter().flatten().collect();
    assert_eq!(got, [r#"{"id":"susp_a"}"#.to_owned()]);
    assert_eq!(h.take_suspension("susp_a").await.unwrap(), None);
    assert_eq!(
        h.suspensions("s1").await.unwrap(),
        [r#"{"id":"susp_b"}"#.to_owned()]
    );
    assert!(h.take_suspension("a/b").await.is_err());
}
