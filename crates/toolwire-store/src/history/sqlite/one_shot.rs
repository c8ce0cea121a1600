//! A batch of one session's appends (their blob links among them) and event inserts
//! written as one statement list: one round trip to sqlx's SQLite worker thread instead of
//! about a dozen (BEGIN, a savepoint, the session's counter, the rows, their blob links,
//! the events' last number, the events, the savepoint's release, COMMIT), each of which
//! wakes two threads. On a busy server the writer task waits its turn behind other tasks
//! at every one of them: a `POST .../calls` with 1,000 event feeds open stores its call and
//! result through sixteen such turns; the gateway's recorder lands a few calls at a time,
//! each with its call, its result and the result's raw copy (a blob link), their events
//! in the same commit.
//!
//! Numbers the general path reads first and binds are computed in SQL: each message's
//! `seq` from the session's `last_seq` as bumped by the statement before, a blob link's
//! message id from that seq, the events' from their session's largest. Anything else
//! (more rows, other sessions, other statements), and any failure, goes to the general
//! path, which answers each op alone; a failure here is rolled back first, so nothing is
//! written twice.

use futures::TryStreamExt;
use sqlx::sqlite::SqliteConnection;
use sqlx::{Either, Executor, Row};

use super::{Answer, WriteOp, answered, event};

/// Message rows, blob links and event inserts a batch may have, each, to be written here.
/// Each is padded to a power of two (unused places bound NULL and left out by the
/// statements), and each combination of those sizes is a statement text of its own, made
/// once ([`text`]), parsed once and then kept in the writer's statement cache
/// (`WRITER_STATEMENTS` in the parent module). Unpadded, every count was a text: the
/// gateway's batches (twice as many rows as calls, a link and an event a call, the calls'
/// start events joining in) came in a new shape every ten calls or so over a thousand,
/// each parsed by SQLite at ~100,000 instructions, ~10,000 a call in all. A batch past
/// these is large enough that the general path's dozen round trips are a small share of it.
const MAX_ROWS: usize = 32;

/// What each statement of the list returns, in order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// BEGIN, the blob links, COMMIT: nothing.
    Bare,
    /// The session's bumped `last_seq`.
    Bump,
    /// Each message's `(id, seq)`.
    Messages,
    /// Each event's `seq`.
    Events,
}

/// Writes `ops` in one round trip when they are a batch this path takes; they are then
/// answered (after the commit). Otherwise, or when the list failed before its commit
/// (rolled back), they come back untouched for the general path.
pub(super) async fn write(
    conn: &mut SqliteConnection,
    ops: Vec<WriteOp>,
) -> Result<(), Vec<WriteOp>> {
    let Some(batch) = Batch::of(&ops) else {
        return Err(ops);
    };
    match batch.run(conn, &ops).await {
        Ran::Committed(Some(answers)) => {
            let committed = Ok(());
            for (op, answer) in ops.into_iter().zip(answers) {
                answered(op, answer).send(&committed);
            }
            Ok(())
        }
        Ran::Committed(None) => {
            // Not reached: the rows are stored, but what the list returned does not say
            // where. Each op is told so, rather than stored a second time.
            let failed = Err(
                "stored, but the store's answer did not account for every row \
                              (see the history)"
                    .to_owned(),
            );
            for op in ops {
                answered(op, Answer::Ids(Vec::new())).send(&failed);
            }
            Ok(())
        }
        Ran::NotCommitted => {
            // Whatever ran is undone (an error inside the list leaves its transaction
            // open; with none open this fails harmlessly).
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            Err(ops)
        }
    }
}

/// A VALUES list of `count` tuples: with `keyed`, each begins with its place (1, 2, ...:
/// numbering a row in SQL), then `width` parameters numbered on from `next`.
fn values(sql: &mut String, count: usize, keyed: bool, width: usize, next: &mut usize) {
    use std::fmt::Write as _;
    for i in 0..count {
        sql.push_str(if i > 0 { ", (" } else { "(" });
        // Writing to a String cannot fail.
        if keyed {
            let _ = write!(sql, "{}, ", i + 1);
        }
        for w in 0..width {
            let _ = write!(sql, "{}${next}", if w > 0 { ", " } else { "" });
            *next += 1;
        }
        sql.push(')');
    }
}

/// How many places a list of `n` is given: the next power of two (0 stays 0).
fn padded(n: usize) -> usize {
    if n == 0 { 0 } else { n.next_power_of_two() }
}

/// The statement list for `(rows, links, events)` places (each padded) and what each
/// statement returns, made once per shape and kept: at most 7 × 7 × 7 shapes, each a few
/// kilobytes.
fn text(shape: (usize, usize, usize)) -> (String, Vec<Step>) {
    type Texts = std::collections::HashMap<(usize, usize, usize), (String, Vec<Step>)>;
    static TEXTS: std::sync::OnceLock<std::sync::Mutex<Texts>> = std::sync::OnceLock::new();
    let texts = TEXTS.get_or_init(Default::default);
    // A poisoned lock (a panic elsewhere while holding it) only costs the cache.
    if let Some(made) = texts.lock().ok().and_then(|t| t.get(&shape).cloned()) {
        return made;
    }
    let made = make_text(shape);
    if let Ok(mut t) = texts.lock() {
        t.insert(shape, made.clone());
    }
    made
}

/// [`text`], made. What the list answers (the session's new last number, each message's
/// id and number, each event's number) is read by plain selects after the writes, not by
/// `RETURNING`: SQLite gathers a `RETURNING` statement's rows in a temporary table (a
/// b-tree opened, a page zeroed), as it does a materialized CTE; the list made seven of
/// them a batch, now one (the events' insert reads the table it writes). The selects find
/// exactly this batch's rows: the transaction holds SQLite's write lock from its start.
fn make_text((rows, links, events): (usize, usize, usize)) -> (String, Vec<Step>) {
    // $1 the session; $2-$5 the counter's bump; then each row's four values, each link's
    // three, each event's three; last, how many events are real. An unused place's values
    // are NULL: its body (or blob) is, where a real one never is, and each statement
    // leaves those out.
    let mut sql = String::from("BEGIN IMMEDIATE;\n");
    let mut steps = vec![Step::Bare];
    let mut next = 6;
    if rows > 0 {
        sql.push_str(
            "UPDATE sessions SET last_seq = last_seq + $2, updated_at = $3, \
             result_count = result_count + $4, error_count = error_count + $5 \
             WHERE id = $1;\n\
             INSERT INTO messages (session_id, seq, role, call_id, body, created_at) \
             SELECT $1, (SELECT last_seq FROM sessions WHERE id = $1) - $2 + v.column1, \
             v.column2, v.column3, v.column4, v.column5 FROM (VALUES ",
        );
        // The seq's subquery, one for the statement (not one a row, which would make a
        // large batch's text slow to prepare), is NULL when the session does not exist,
        // and the insert then fails.
        values(&mut sql, rows, true, 4, &mut next);
        sql.push_str(") AS v WHERE v.column4 IS NOT NULL;\n");
        steps.extend([Step::Bare, Step::Bare]);
    }
    if links > 0 {
        // A row's id by its seq (unique in its session), its place among the rows bound
        // first; NULL, and the insert fails, should it be missing.
        sql.push_str(
            "INSERT INTO message_blobs (message_id, blob, bytes) \
             SELECT (SELECT id FROM messages WHERE session_id = $1 AND seq = \
             (SELECT last_seq FROM sessions WHERE id = $1) - $2 + v.column1), \
             v.column2, v.column3 FROM (VALUES ",
        );
        values(&mut sql, links, false, 3, &mut next);
        sql.push_str(") AS v WHERE v.column2 IS NOT NULL ON CONFLICT DO NOTHING;\n");
        steps.push(Step::Bare);
    }
    if events > 0 {
        // The base is read once, before any event is inserted: the select reads the
        // table it inserts into, so SQLite runs it whole first.
        // An event that names the row it announces (`names_row`) has that row's place
        // bound: the row's id, found by its seq as a blob link's is, goes into the body
        // (a reference to a stored result, whose `messageId` is all it lacks).
        sql.push_str(
            "INSERT INTO events (session_id, seq, body, created_at) \
             SELECT $1, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = $1) \
             + v.column1, CASE WHEN v.column4 IS NULL THEN v.column2 ELSE \
             json_set(v.column2, '$.storedResult.messageId', \
             (SELECT id FROM messages WHERE session_id = $1 AND seq = \
             (SELECT last_seq FROM sessions WHERE id = $1) - $2 + v.column4)) END, \
             v.column3 FROM (VALUES ",
        );
        values(&mut sql, events, true, 3, &mut next);
        sql.push_str(") AS v WHERE v.column2 IS NOT NULL;\n");
        steps.push(Step::Bare);
    }
    if rows > 0 {
        sql.push_str(
            "SELECT last_seq FROM sessions WHERE id = $1;\n\
             SELECT id, seq FROM messages WHERE session_id = $1 \
             AND seq > (SELECT last_seq FROM sessions WHERE id = $1) - $2;\n",
        );
        steps.extend([Step::Bump, Step::Messages]);
    }
    if events > 0 {
        use std::fmt::Write as _;
        // Writing to a String cannot fail. The count is cast: a bare bound LIMIT is a
        // constant of SQLite's plan, and every batch with another count of events had its
        // statement prepared again (rows.rs, `LIST_SESSIONS`).
        let _ = writeln!(
            sql,
            "SELECT seq FROM events WHERE session_id = $1 ORDER BY seq DESC \
             LIMIT CAST(${next} AS INTEGER);"
        );
        steps.push(Step::Events);
    }
    sql.push_str("COMMIT;");
    steps.push(Step::Bare);
    (sql, steps)
}

/// How a statement list ended.
enum Ran {
    /// Its COMMIT ran; each op's answer, if what came back adds up.
    Committed(Option<Vec<Answer>>),
    /// It stopped before its COMMIT (an error): nothing of it is kept once rolled back.
    NotCommitted,
}

/// A batch this path takes: one session's message rows, their blob links and events, few
/// of each.
struct Batch<'a> {
    session_id: &'a str,
    /// Message rows, as (op, row) positions, in order.
    rows: Vec<(usize, usize)>,
    /// The rows' blob links: the row's place among `rows` (from 1), the blob's key, and
    /// its bytes when the row keeps them (a small raw payload).
    links: Vec<(usize, &'a str, Option<&'a Vec<u8>>)>,
    /// Event inserts, by op position, in order; with the place (from 1) among `rows` of
    /// the row an event names (see `names_row`).
    events: Vec<(usize, Option<usize>)>,
}

impl<'a> Batch<'a> {
    fn of(ops: &'a [WriteOp]) -> Option<Batch<'a>> {
        let mut session_id: Option<&str> = None;
        let mut same = |id: &'a str| *session_id.get_or_insert(id) == id;
        let mut batch = Batch {
            session_id: "",
            rows: Vec::new(),
            links: Vec::new(),
            events: Vec::new(),
        };
        for (o, op) in ops.iter().enumerate() {
            match op {
                WriteOp::Append { rows, .. } => {
                    for (r, row) in rows.iter().enumerate() {
                        if !same(&row.session_id) {
                            return None;
                        }
                        batch.rows.push((o, r));
                        let k = batch.rows.len();
                        for blob in &row.blobs {
                            batch.links.push((k, blob, row.inline.get(blob)));
                        }
                    }
                }
                _ => {
                    let e = event(op)?;
                    if !same(e.session_id) {
                        return None;
                    }
                    // The row it names is the last the op before it appended.
                    let names = match (e.names_row, o.checked_sub(1).map(|b| &ops[b])) {
                        (false, _) => None,
                        (true, Some(WriteOp::Append { rows, .. })) if !rows.is_empty() => {
                            Some(batch.rows.len())
                        }
                        (true, _) => return None,
                    };
                    batch.events.push((o, names));
                }
            }
        }
        batch.session_id = session_id?;
        let small = batch.rows.len() <= MAX_ROWS
            && batch.links.len() <= MAX_ROWS
            && batch.events.len() <= MAX_ROWS
            && super::bound_bytes(ops) <= super::COPIED_MAX;
        small.then_some(batch)
    }

    /// The statement list and what each statement returns.
    fn sql(&self) -> (String, Vec<Step>) {
        text((
            padded(self.rows.len()),
            padded(self.links.len()),
            padded(self.events.len()),
        ))
    }

    /// Runs the list to its end. The stream is always read to its end: sqlx's worker runs
    /// ahead of the reader, so stopping early could leave a COMMIT run unseen.
    async fn run(&self, conn: &mut SqliteConnection, ops: &[WriteOp]) -> Ran {
        let row = |&(o, r): &(usize, usize)| match &ops[o] {
            WriteOp::Append { rows, .. } => rows.get(r),
            _ => None,
        };
        let events: Option<Vec<_>> = self
            .events
            .iter()
            .map(|&(o, names)| event(&ops[o]).map(|e| (e, names)))
            .collect();
        let (Some(rows), Some(events), Ok(count)) = (
            self.rows.iter().map(row).collect::<Option<Vec<_>>>(),
            events,
            i64::try_from(self.rows.len()),
        ) else {
            return Ran::NotCommitted;
        };
        let (sql, steps) = self.sql();
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(self.session_id)
            .bind(count)
            .bind(rows.iter().map(|r| r.now).max().unwrap_or_default())
            .bind(rows.iter().map(|r| r.results).sum::<i64>())
            .bind(rows.iter().map(|r| r.errors).sum::<i64>());
        const NONE: Option<&str> = None;
        for r in &rows {
            query = query
                .bind(r.role)
                .bind(&r.call_id)
                .bind(&r.body)
                .bind(r.now);
        }
        for _ in rows.len()..padded(rows.len()) {
            query = query.bind(NONE).bind(NONE).bind(NONE).bind(NONE);
        }
        for &(k, blob, bytes) in &self.links {
            query = query
                .bind(i64::try_from(k).unwrap_or(i64::MAX))
                .bind(blob)
                .bind(bytes);
        }
        for _ in self.links.len()..padded(self.links.len()) {
            query = query.bind(NONE).bind(NONE).bind(NONE);
        }
        for (e, names) in &events {
            let place = names.map(|k| i64::try_from(k).unwrap_or(i64::MAX));
            query = query.bind(e.body).bind(e.now).bind(place);
        }
        for _ in events.len()..padded(events.len()) {
            query = query.bind(NONE).bind(NONE).bind(NONE);
        }
        if !events.is_empty() {
            query = query.bind(i64::try_from(events.len()).unwrap_or(i64::MAX));
        }
        let mut done = 0;
        let mut readable = true;
        let mut last_seq = None;
        let mut stored: Vec<(i64, i64)> = Vec::with_capacity(rows.len());
        let mut seqs: Vec<i64> = Vec::with_capacity(self.events.len());
        let mut stream = (&mut *conn).fetch_many(query);
        loop {
            let step = match stream.try_next().await {
                Ok(Some(step)) => step,
                Ok(None) => break,
                // The worker stops at a failed statement: the COMMIT after it never ran.
                Err(_) => return Ran::NotCommitted,
            };
            let row = match step {
                Either::Left(_) => {
                    done += 1;
                    continue;
                }
                Either::Right(row) => row,
            };
            let kept = match steps.get(done) {
                Some(Step::Bump) => row.try_get(0).map(|seq| last_seq = Some(seq)),
                Some(Step::Messages) => row
                    .try_get(0)
                    .and_then(|id| row.try_get(1).map(|seq| (id, seq)))
                    .map(|pair| stored.push(pair)),
                Some(Step::Events) => row.try_get(0).map(|seq| seqs.push(seq)),
                Some(Step::Bare) | None => Err(sqlx::Error::RowNotFound),
            };
            readable &= kept.is_ok();
        }
        drop(stream);
        if done != steps.len() {
            return Ran::NotCommitted;
        }
        let adds_up = readable && stored.len() == rows.len() && seqs.len() == self.events.len();
        Ran::Committed(
            adds_up
                .then(|| self.answers(ops, last_seq, stored, seqs))
                .flatten(),
        )
    }

    /// Each op's answer from what the list returned, rows matched by their numbers (the
    /// events come newest first).
    fn answers(
        &self,
        ops: &[WriteOp],
        last_seq: Option<i64>,
        stored: Vec<(i64, i64)>,
        mut seqs: Vec<i64>,
    ) -> Option<Vec<Answer>> {
        let mut ids: Vec<Vec<(i64, i64)>> = ops
            .iter()
            .map(|op| match op {
                WriteOp::Append { rows, .. } => vec![(0, 0); rows.len()],
                _ => Vec::new(),
            })
            .collect();
        if !self.rows.is_empty() {
            let base = last_seq? - i64::try_from(self.rows.len()).ok()?;
            for (id, seq) in stored {
                let k = usize::try_from(seq - base - 1).ok()?;
                let &(o, r) = self.rows.get(k)?;
                *ids.get_mut(o)?.get_mut(r)? = (id, seq);
            }
        }
        seqs.sort_unstable();
        let mut event_seq = vec![None; ops.len()];
        for (&(o, _), seq) in self.events.iter().zip(seqs) {
            event_seq[o] = Some(seq);
        }
        ops.iter()
            .zip(ids.into_iter().zip(event_seq))
            .map(|(op, (ids, seq))| match op {
                WriteOp::Append { .. } => Some(Answer::Ids(ids)),
                _ => seq.map(Answer::Seq),
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use sqlx::Connection;
    use sqlx::sqlite::SqliteConnectOptions;
    use tokio::sync::oneshot;

    use super::super::{Returned, Stmt, migrator};
    use super::*;
    use crate::history::rows::NewRow;

    async fn database(dir: &std::path::Path) -> SqliteConnection {
        let opts = SqliteConnectOptions::new()
            .filename(dir.join("history.db"))
            .create_if_missing(true)
            .foreign_keys(true);
        let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
        migrator().run(&mut conn).await.unwrap();
        // A session three messages and five events in.
        sqlx::query(
            "INSERT INTO sessions (id, created_at, updated_at, last_seq) VALUES ('s', 1, 1, 3)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        for seq in 1..=5 {
            sqlx::query(
                "INSERT INTO events (session_id, seq, body, created_at) VALUES ('s', $1, '{}', 1)",
            )
            .bind(seq)
            .execute(&mut conn)
            .await
            .unwrap();
        }
        conn
    }

    /// The messages and events the database holds.
    async fn counts(conn: &mut SqliteConnection) -> (i64, i64) {
        sqlx::query_as("SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM events)")
            .fetch_one(conn)
            .await
            .unwrap()
    }

    fn row(session: &str, body: &str, results: i64, errors: i64) -> NewRow {
        NewRow {
            session_id: session.to_owned(),
            role: "tool_result",
            call_id: Some(format!("call-{body}")),
            body: body.to_owned(),
            blobs: BTreeSet::new(),
            inline: BTreeMap::new(),
            now: 7,
            results,
            errors,
        }
    }

    /// Where an append's `(id, seq)`s come.
    type Ids = oneshot::Receiver<crate::Result<Vec<(i64, i64)>>>;

    fn append(rows: Vec<NewRow>) -> (WriteOp, Ids) {
        let (reply, answer) = oneshot::channel();
        (WriteOp::Append { rows, reply }, answer)
    }

    fn event(session: &str, body: &str) -> (WriteOp, oneshot::Receiver<crate::Result<Returned>>) {
        let (reply, answer) = oneshot::channel();
        let stmt = Stmt::AppendEvent {
            session_id: session.to_owned(),
            body: body.to_owned(),
            now: 8,
            names_row: false,
        };
        (WriteOp::Announce { stmt, reply }, answer)
    }

    /// A call and its result and their events: written in one round trip, numbered on
    /// from what the session holds, each op told its numbers, the session's counts bumped.
    #[tokio::test]
    async fn a_small_batch_is_numbered_on_and_answered_after_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = database(dir.path()).await;
        let (started, started_seq) = event("s", r#"{"e":"started"}"#);
        let (appended, ids) = append(vec![row("s", "ok", 1, 0), row("s", "bad", 1, 1)]);
        let (finished, finished_seq) = event("s", r#"{"e":"finished"}"#);
        assert!(
            write(&mut conn, vec![started, appended, finished])
                .await
                .is_ok()
        );

        let ids = ids.await.unwrap().unwrap();
        assert_eq!(ids.iter().map(|(_, seq)| *seq).collect::<Vec<_>>(), [4, 5]);
        let seq_of = |answer: crate::Result<Returned>| match answer.unwrap() {
            Returned::Seq(seq) => seq,
            other => panic!("{other:?}"),
        };
        assert_eq!(seq_of(started_seq.await.unwrap()), 6);
        assert_eq!(seq_of(finished_seq.await.unwrap()), 7);
        let stored: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT id, seq, body FROM messages WHERE session_id = 's' ORDER BY seq",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
        assert_eq!(
            stored,
            [
                (ids[0].0, 4, "ok".to_owned()),
                (ids[1].0, 5, "bad".to_owned())
            ]
        );
        let events: Vec<(i64, String)> =
            sqlx::query_as("SELECT seq, body FROM events WHERE seq > 5 ORDER BY seq")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(
            events,
            [
                (6, r#"{"e":"started"}"#.to_owned()),
                (7, r#"{"e":"finished"}"#.to_owned())
            ]
        );
        let counts: (i64, i64, i64, i64) = sqlx::query_as(
            "SELECT last_seq, result_count, error_count, updated_at FROM sessions WHERE id = 's'",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(counts, (5, 2, 1, 7));
    }

    /// An append to a session that does not exist fails inside the list: it is rolled
    /// back whole (the event before it too) and handed back for the general path, which
    /// tells the op why; the connection is left outside any transaction.
    #[tokio::test]
    async fn a_failed_list_is_rolled_back_and_handed_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = database(dir.path()).await;
        let (started, _started_seq) = event("gone", "{}");
        let (appended, _ids) = append(vec![row("gone", "x", 1, 0)]);
        let back = write(&mut conn, vec![started, appended]).await.unwrap_err();
        assert_eq!(back.len(), 2);
        assert_eq!(counts(&mut conn).await, (0, 5));
        // A transaction left open would make this fail ("within a transaction").
        sqlx::query("BEGIN IMMEDIATE; COMMIT;")
            .execute(&mut conn)
            .await
            .unwrap();
    }

    /// Rows with blobs: each link is written with its row's id, the bytes a row keeps
    /// beside it, in the same round trip.
    #[tokio::test]
    async fn blob_links_are_written_with_their_rows_ids() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = database(dir.path()).await;
        let mut call = row("s", "call", 0, 0);
        call.role = "assistant";
        let mut result = row("s", "result", 1, 0);
        result.blobs.insert("sha256-aa".to_owned());
        result.blobs.insert("sha256-bb".to_owned());
        result
            .inline
            .insert("sha256-bb".to_owned(), b"raw".to_vec());
        let mut other = row("s", "other", 1, 0);
        other.blobs.insert("sha256-cc".to_owned());
        let (appended, ids) = append(vec![call, result, other]);
        let (announced, _seq) = event("s", "{}");
        assert!(write(&mut conn, vec![appended, announced]).await.is_ok());

        let ids = ids.await.unwrap().unwrap();
        let links: Vec<(i64, String, Option<Vec<u8>>)> =
            sqlx::query_as("SELECT message_id, blob, bytes FROM message_blobs ORDER BY blob")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(
            links,
            [
                (ids[1].0, "sha256-aa".to_owned(), None),
                (ids[1].0, "sha256-bb".to_owned(), Some(b"raw".to_vec())),
                (ids[2].0, "sha256-cc".to_owned(), None),
            ]
        );
    }

    /// Counts between powers of two (5 rows, 3 events) share a padded shape's text: only
    /// the real ones are written, numbered on, and a second batch of other counts in the
    /// same shape (6 rows, 4 events) reads on from them.
    #[tokio::test]
    async fn padded_places_are_left_out_and_a_shape_serves_other_counts() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = database(dir.path()).await;
        assert_eq!([0, 1, 2, 3, 5, 8, 9].map(padded), [0, 1, 2, 4, 8, 8, 16]);
        for (rows, events, first_seq, first_event) in [(5, 3, 4, 6), (6, 4, 9, 9)] {
            let (appended, ids) = append(
                (0..rows)
                    .map(|i| row("s", &format!("r{i}"), 1, 0))
                    .collect(),
            );
            let mut ops = vec![appended];
            let mut seqs = Vec::new();
            for _ in 0..events {
                let (op, seq) = event("s", "{}");
                ops.push(op);
                seqs.push(seq);
            }
            assert_eq!(Batch::of(&ops).map(|b| b.sql().0), Some(text((8, 0, 4)).0));
            assert!(write(&mut conn, ops).await.is_ok());
            let ids = ids.await.unwrap().unwrap();
            let want: Vec<i64> = (first_seq..first_seq + rows).collect();
            assert_eq!(ids.iter().map(|(_, seq)| *seq).collect::<Vec<_>>(), want);
            for (i, seq) in seqs.into_iter().enumerate() {
                match seq.await.unwrap().unwrap() {
                    Returned::Seq(seq) => assert_eq!(seq, first_event + i as i64),
                    other => panic!("{other:?}"),
                }
            }
        }
        // 5 + 6 rows, 5 + 3 + 4 events: nothing for the unused places.
        assert_eq!(counts(&mut conn).await, (11, 12));
    }

    /// What this path does not take comes back untouched: two sessions, too many rows,
    /// too many events, a row too large to copy.
    #[tokio::test]
    async fn other_batches_are_left_to_the_general_path() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = database(dir.path()).await;
        let two_sessions = vec![event("s", "{}").0, event("t", "{}").0];
        let many = vec![
            append(
                (0..=MAX_ROWS)
                    .map(|i| row("s", &i.to_string(), 1, 0))
                    .collect(),
            )
            .0,
        ];
        let many_events = (0..=MAX_ROWS).map(|_| event("s", "{}").0).collect();
        let large = vec![
            append(vec![row(
                "s",
                &"x".repeat(super::super::COPIED_MAX + 1),
                1,
                0,
            )])
            .0,
        ];
        for ops in [two_sessions, many, many_events, large] {
            let n = ops.len();
            assert_eq!(write(&mut conn, ops).await.unwrap_err().len(), n);
        }
        assert_eq!(counts(&mut conn).await, (0, 5));
    }
}
