//! The Postgres `HistoryStore`, `EventLog` and `SuspensionStore`, for several toolwire
//! processes on several machines sharing one history.
//!
//! Every write is its own transaction, and Postgres's row locks do what SQLite's single
//! writer does there: an append locks its session's row to take the next seq, an event
//! takes the number after the session's last, and two events that take the same one
//! collide on the key, the loser trying again (under a per-session advisory lock after a
//! few tries). Once an event is stored, `NOTIFY toolwire_events` (on its own, not waiting
//! for the disk) wakes other instances' subscribers at once instead of at their next
//! poll. Appends and events go through one writer task per process, which, like the SQLite
//! writer, takes everything queued while its last batch ran: all the appends as one
//! statement, all the events as another (beside it, on a second connection), and one
//! `NOTIFY` statement for them all, so a busy instance's round trips per stored result
//! fall with its load (docs/scale.md).

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::Connection;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgListener, PgPool, PgPoolOptions};
use tokio::sync::{broadcast, mpsc, oneshot};

use toolwire_core::{Event, EventKind, Message, PendingCall, ToolResult};

use super::rows::{self, STATE_RESOLVING, now_ms};
use super::{
    EventLog, EventWake, HistoryReader, HistoryStore, InlineBlob, MessagePage, NewSession, Page,
    QueuedEvent, RawStoredMessage, Session, StoredMessage, StoredResult, SuspensionStore,
};
use crate::error::{Result, StoreError};
use crate::failed::redact;
use crate::ids::{BlobKey, validate_id};

/// The channel every instance listens on; the payload is `<seq> <session id>`.
pub const EVENTS_CHANNEL: &str = "toolwire_events";
const MAX_CONNECTIONS: u32 = 16;
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// Wake-ups buffered for slow subscribers; one that lags re-reads the log anyway.
const WAKE_BUFFER: usize = 1024;
/// Writes the writer takes at once, and how many may wait for it.
const MAX_BATCH: usize = 256;
const QUEUE_DEPTH: usize = 4096;
/// A pooled connection used this recently is known good: it is handed out without sqlx's
/// ping (one round trip more per statement). One idle longer is pinged first, so a
/// connection Postgres dropped meanwhile (a restart) is replaced rather than failing a
/// statement. (sqlx also pings every pooled connection as it is given back, which is why
/// the writer keeps connections of its own, [`Held`].)
const KNOWN_GOOD: Duration = Duration::from_secs(1);

fn migrator() -> Migrator {
    rows::migrator(&[
        (
            1,
            "init",
            include_str!("../../migrations/postgres/0001_init.sql"),
        ),
        (
            2,
            "session_counts",
            include_str!("../../migrations/postgres/0002_session_counts.sql"),
        ),
        (
            3,
            "inline_blobs",
            include_str!("../../migrations/postgres/0003_inline_blobs.sql"),
        ),
    ])
}

/// The history in Postgres: for several server instances sharing one store, with events announced by NOTIFY.
#[derive(Debug, Clone)]
pub struct PgHistory {
    pool: PgPool,
    wake: broadcast::Sender<EventWake>,
    /// The writer task's queue (see [`run_writer`]); it ends with the last clone.
    writes: mpsc::Sender<PgWrite>,
    /// Dropped with the last clone, which ends the listener task.
    _stop: Arc<oneshot::Sender<()>>,
}

impl PgHistory {
    /// Connects to `postgres://…` (or `postgresql://…`), migrates the schema (under
    /// Postgres's migration lock, so instances starting together do it once), and starts
    /// listening for other instances' events.
    pub async fn open_url(url: &str) -> Result<Self> {
        let opts = PgConnectOptions::from_str(url).map_err(|e| StoreError::UnsupportedUrl {
            url: redact(url),
            reason: e.to_string(),
        })?;
        Self::open_with(opts).await.map_err(|e| match e {
            StoreError::Database(e) => StoreError::Unreachable {
                url: redact(url),
                message: e.to_string(),
            },
            other => other,
        })
    }

    /// Connects with ready-made options, migrates and starts listening; see [`PgHistory::open_url`].
    pub async fn open_with(opts: PgConnectOptions) -> Result<Self> {
        // One connection first: a wrong address or password fails at once, where a pool
        // would retry until its acquire timeout.
        let mut first = PgConnection::connect_with(&opts).await?;
        migrator().run(&mut first).await?;
        first.close().await?;
        let pool = pool_options(MAX_CONNECTIONS).connect_lazy_with(opts.clone());
        let (wake, _) = broadcast::channel(WAKE_BUFFER);
        let mut listener = PgListener::connect_with(&pool).await?;
        listener.listen(EVENTS_CHANNEL).await?;
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(forward_wakeups(listener, wake.clone(), stopped));
        let (writes, queue) = mpsc::channel(QUEUE_DEPTH);
        tokio::spawn(run_writer(pool.clone(), opts, queue));
        Ok(PgHistory {
            pool,
            wake,
            writes,
            _stop: Arc::new(stop),
        })
    }

    /// Hands `op` to the writer task.
    async fn submit(&self, op: PgWrite) -> Result<()> {
        self.writes
            .send(op)
            .await
            .map_err(|_| StoreError::WriterGone)
    }

    /// Queues an event's insert; its number comes on the returned receiver.
    async fn send_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<(Event, oneshot::Receiver<Result<i64>>)> {
        let (event, body) = rows::new_event(session_id, at, kind)?;
        let (reply, answer) = oneshot::channel();
        self.submit(PgWrite::Event {
            session_id: session_id.to_owned(),
            body,
            now: now_ms(),
            reply,
        })
        .await?;
        Ok((event, answer))
    }
}

/// Pool options: the ping before each acquire only for a connection idle past
/// [`KNOWN_GOOD`].
fn pool_options(max: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > KNOWN_GOOD {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

/// `event` numbered once the writer answers its insert.
async fn numbered(mut event: Event, answer: oneshot::Receiver<Result<i64>>) -> Result<Event> {
    let seq = answer.await.map_err(|_| StoreError::WriterGone)??;
    event.seq = u64::try_from(seq).unwrap_or_default();
    Ok(event)
}

/// How often the wake-ups also say [`EventWake::Resync`], so that followers compare
/// their sessions with the log: a `NOTIFY` that failed after its event was stored (the
/// `NOTIFY` pool unreachable a moment) is never sent, and only this finds its event. One
/// statement per process each time ([`EventLog::last_event_seqs`]), not one per feed.
const RESYNC: Duration = Duration::from_secs(5);

/// Turns notifications into wake-ups until every clone of the history is dropped (which
/// drops `stop`'s sender). `PgListener` reconnects by itself; what is sent while it is
/// away is lost, so a reconnection says [`EventWake::Changed`].
async fn forward_wakeups(
    mut listener: PgListener,
    wake: broadcast::Sender<EventWake>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut resync = tokio::time::interval_at(tokio::time::Instant::now() + RESYNC, RESYNC);
    resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let received = tokio::select! {
            _ = &mut stop => return,
            _ = resync.tick() => {
                // Nobody follows anything here (no subscriber): nothing to send.
                if wake.receiver_count() > 0 {
                    let _ = wake.send(EventWake::Resync);
                }
                continue;
            }
            received = listener.try_recv() => received,
        };
        match received {
            Ok(Some(note)) => {
                if let Some(w) = parse_wake(note.payload()) {
                    // No subscriber now is fine: a later one starts from the log.
                    let _ = wake.send(w);
                }
            }
            // The connection dropped; the next try_recv reconnects. What was said
            // meanwhile is lost: followers look in the log.
            Ok(None) => {
                let _ = wake.send(EventWake::Changed);
            }
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

/// The `NOTIFY` payload of a deleted session ([`PgHistory::delete_session`]), where an
/// event's payload has its number.
const DELETED_NOTE: &str = "deleted";

fn parse_wake(payload: &str) -> Option<EventWake> {
    let (seq, session_id) = payload.split_once(' ')?;
    if seq == DELETED_NOTE {
        return Some(EventWake::Deleted {
            session_id: session_id.to_owned(),
        });
    }
    Some(EventWake::Logged {
        session_id: session_id.to_owned(),
        seq: seq.parse().ok()?,
    })
}

rows::statements!(PgConnection, PgPool);

/// One append of a session's rows as one statement, so one round trip and one implicit
/// transaction where `BEGIN`, a bump and an insert per row, a blob insert per blob and
/// `COMMIT` took one each: the session row's bump (under its lock) hands out the seqs, the
/// rows and their blob references go in from arrays. `$2` rows, `$3` the time.
const APPEND_AT_ONCE: &str = "WITH bump AS (\
     UPDATE sessions SET last_seq = last_seq + $2, updated_at = $3, \
     result_count = result_count + $4, error_count = error_count + $5 \
     WHERE id = $1 RETURNING last_seq - $2 AS base), \
     ins AS (\
     INSERT INTO messages (session_id, seq, role, call_id, body, created_at) \
     SELECT $1, bump.base + r.n, r.role, r.call_id, r.body, $3 FROM bump, \
     unnest($6::text[], $7::text[], $8::text[]) WITH ORDINALITY AS r(role, call_id, body, n) \
     RETURNING id, seq), \
     blobs AS (\
     INSERT INTO message_blobs (message_id, blob, bytes) \
     SELECT ins.id, b.blob, b.bytes FROM bump, ins, \
     unnest($9::bigint[], $10::text[], $11::bytea[]) AS b(n, blob, bytes) \
     WHERE ins.seq = bump.base + b.n ON CONFLICT DO NOTHING) \
     SELECT id, seq FROM ins";

/// An event in one statement (one round trip, its own transaction), numbered after the
/// session's last. Two writers of one session that take the same number collide on the
/// primary key; the loser tries again.
const EVENT_AT_ONCE: &str = "INSERT INTO events (session_id, seq, body, created_at) \
     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3 FROM events WHERE session_id = $1 \
     RETURNING seq";

/// Tries of [`EVENT_AT_ONCE`] before an event waits its turn under the session's lock
/// instead (many writers of one session at once: each try lost is a round trip).
const EVENT_TRIES_AT_ONCE: u32 = 3;
/// Collisions an event may meet in all before its append fails: each one is another
/// event of the session stored meanwhile, so only a session flooded from many writers
/// comes near.
const EVENT_TRIES: u32 = 1000;

/// `rows` (all of `session_id`, taking the same time) appended by [`APPEND_AT_ONCE`];
/// their `(id, seq)`s in order.
async fn append_at_once<'c>(
    db: impl sqlx::PgExecutor<'c>,
    session_id: &str,
    rows: Vec<rows::NewRow>,
) -> Result<Vec<(i64, i64)>> {
    let count = i64::try_from(rows.len()).unwrap_or(i64::MAX);
    let now = rows.iter().map(|r| r.now).max().unwrap_or_default();
    let (results, errors) = (
        rows.iter().map(|r| r.results).sum::<i64>(),
        rows.iter().map(|r| r.errors).sum::<i64>(),
    );
    let (mut blob_rows, mut blobs, mut blob_bytes) = (Vec::new(), Vec::new(), Vec::new());
    let (mut roles, mut call_ids, mut bodies) = (Vec::new(), Vec::new(), Vec::new());
    for (n, mut row) in (1_i64..).zip(rows) {
        for blob in row.blobs {
            blob_rows.push(n);
            blob_bytes.push(row.inline.remove(&blob));
            blobs.push(blob);
        }
        roles.push(row.role);
        call_ids.push(row.call_id);
        bodies.push(row.body);
    }
    let mut stored: Vec<(i64, i64)> = sqlx::query_as(APPEND_AT_ONCE)
        .bind(session_id)
        .bind(count)
        .bind(now)
        .bind(results)
        .bind(errors)
        .bind(roles)
        .bind(call_ids)
        .bind(bodies)
        .bind(blob_rows)
        .bind(blobs)
        .bind(blob_bytes)
        .fetch_all(db)
        .await?;
    if stored.is_empty() {
        // No session row to bump: nothing was written.
        return Err(StoreError::SessionNotFound {
            id: session_id.to_owned(),
        });
    }
    if stored.len() as i64 != count {
        return Err(StoreError::CommitFailed {
            message: format!("{} of {count} rows inserted", stored.len()),
        });
    }
    // RETURNING's order is not promised.
    stored.sort_unstable_by_key(|&(_, seq)| seq);
    Ok(stored)
}

/// A write for the writer task.
#[derive(Debug)]
enum PgWrite {
    Append {
        session_id: String,
        rows: Vec<rows::NewRow>,
        reply: oneshot::Sender<Result<Vec<(i64, i64)>>>,
    },
    Event {
        session_id: String,
        body: String,
        now: i64,
        reply: oneshot::Sender<Result<i64>>,
    },
    /// A result's rows and the event that announces them (`HistoryStore::
    /// append_announced`): the rows go with the round's appends, the event, naming the
    /// last row, with its events right after (the round then runs the two one after the
    /// other, not side by side).
    Announced { append: AppendOp, event: EventOp },
}

/// A connection the writer keeps for itself, so that its statements pay no ping (a pooled
/// one is pinged as it is given back): opened on first use, and again after a statement
/// failed other than by the database's own refusal (a connection that broke).
struct Held {
    opts: PgConnectOptions,
    conn: Option<PgConnection>,
}

impl Held {
    fn new(opts: PgConnectOptions) -> Self {
        Held { opts, conn: None }
    }

    async fn get(&mut self) -> Result<&mut PgConnection> {
        if self.conn.is_none() {
            self.conn = Some(PgConnection::connect_with(&self.opts).await?);
        }
        self.conn.as_mut().ok_or(StoreError::WriterGone)
    }

    /// After `error`: the connection is dropped unless the database refused the
    /// statement (a collision, a constraint), which leaves it as good as before.
    fn failed(&mut self, error: &StoreError) {
        if !matches!(error, StoreError::Database(sqlx::Error::Database(_))) {
            self.conn = None;
        }
    }
}

/// Runs the writes of this process: each round takes everything queued (while the last
/// round ran, under load), appends all the rows in one statement and logs all the events
/// in another, the two side by side on the writer's own connections, then hands one
/// `NOTIFY` statement for all the events to [`run_notifier`]. A round that fails as a
/// whole (a collision with another instance, a bad row) is done again op by op on the
/// pool, so only a bad op fails.
async fn run_writer(pool: PgPool, opts: PgConnectOptions, mut queue: mpsc::Receiver<PgWrite>) {
    let (mut rows_conn, mut events_conn) = (Held::new(opts.clone()), Held::new(opts.clone()));
    // The `NOTIFY`s go apart from the events' own transactions, and without waiting for
    // their commit's flush (`synchronous_commit = off`): Postgres serializes every
    // notifying transaction of the whole cluster, from before its commit until after it,
    // so a `NOTIFY` in the event's durable transaction would make every event of every
    // instance wait for the disk one after another (docs/scale.md).
    let (notes_tx, notes_rx) = mpsc::channel(QUEUE_DEPTH);
    let notify = Held::new(opts.options([("synchronous_commit", "off")]));
    tokio::spawn(run_notifier(notify, notes_rx));
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (mut appends, mut events, mut named) = (Vec::new(), Vec::new(), false);
        for op in batch.drain(..) {
            match op {
                PgWrite::Append {
                    session_id,
                    rows,
                    reply,
                } => appends.push((session_id, rows, reply)),
                PgWrite::Event {
                    session_id,
                    body,
                    now,
                    reply,
                } => events.push(Logged::Ready((session_id, body, now, reply))),
                PgWrite::Announced { append, event } => {
                    // The rows' answer comes here first: the event names the last row.
                    let (session_id, rows, reply) = append;
                    let (rows_reply, ids) = oneshot::channel();
                    appends.push((session_id, rows, rows_reply));
                    events.push(Logged::Named(event, ids, reply));
                    named = true;
                }
            }
        }
        let notes = if !named {
            let events = events.into_iter().filter_map(Logged::ready).collect();
            let ((), notes) = tokio::join!(
                write_appends(&mut rows_conn, &pool, appends),
                write_events(&mut events_conn, &pool, events)
            );
            notes
        } else {
            // Every append is answered once this returns; the events, in the order
            // queued (a call's start before its result), follow.
            write_appends(&mut rows_conn, &pool, appends).await;
            let events = events.into_iter().filter_map(Logged::ready).collect();
            write_events(&mut events_conn, &pool, events).await
        };
        // The events are stored: word of them lost (the notifier far behind) only
        // delays other instances' feeds until their next look in the log (`RESYNC`).
        if !notes.is_empty() {
            let _ = notes_tx.try_send(notes);
        }
    }
}

/// An event of a writer round: ready to log, or announcing rows of the same round, its
/// body to name the last of them once they are stored.
enum Logged {
    Ready(EventOp),
    Named(
        EventOp,
        oneshot::Receiver<Result<Vec<(i64, i64)>>>,
        oneshot::Sender<Result<Vec<(i64, i64)>>>,
    ),
}

impl Logged {
    /// The event to log, its body naming its row; `None` for one whose rows were not
    /// stored (it is told so, as its append is told why). Called once the round's
    /// appends are answered.
    fn ready(self) -> Option<EventOp> {
        let (op, mut ids, rows_reply) = match self {
            Logged::Ready(op) => return Some(op),
            Logged::Named(op, ids, rows_reply) => (op, ids, rows_reply),
        };
        let (session_id, body, now, reply) = op;
        let stored = ids.try_recv().unwrap_or(Err(StoreError::WriterGone));
        let named = match &stored {
            Ok(ids) => ids
                .last()
                .ok_or(StoreError::WriterGone)
                .and_then(|&(id, _)| rows::naming_row(&body, id)),
            Err(_) => Err(StoreError::CommitFailed {
                message: "the result this event announces was not stored".into(),
            }),
        };
        let _ = rows_reply.send(stored);
        match named {
            Ok(body) => Some((session_id, body, now, reply)),
            Err(e) => {
                let _ = reply.send(Err(e));
                None
            }
        }
    }
}

/// Sends the word of stored events, everything queued meanwhile in one statement.
async fn run_notifier(mut held: Held, mut queue: mpsc::Receiver<Vec<String>>) {
    let mut batch = Vec::new();
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let notes: Vec<String> = batch.drain(..).flatten().collect();
        let sent = match held.get().await {
            Ok(conn) => sqlx::query("SELECT pg_notify($1, note) FROM unnest($2::text[]) AS note")
                .bind(EVENTS_CHANNEL)
                .bind(notes)
                .execute(conn)
                .await
                .map(drop)
                .map_err(StoreError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = &sent {
            held.failed(e);
        }
    }
}

type AppendOp = (
    String,
    Vec<rows::NewRow>,
    oneshot::Sender<Result<Vec<(i64, i64)>>>,
);
type EventOp = (String, String, i64, oneshot::Sender<Result<i64>>);

/// All the rows of many appends (any sessions) in one statement: per session, its row's
/// bump hands out the seqs of all its rows in the round, in the order queued. `$1`..`$8`
/// the rows (session, position in its session's rows of the round, role, call id, body,
/// time, result and error counts), `$9`..`$12` their blob references.
const APPEND_ROUND: &str = "WITH r AS (\
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], \
     $6::bigint[], $7::bigint[], $8::bigint[]) \
     AS r(session_id, n, role, call_id, body, created_at, results, errors)), \
     per AS (\
     SELECT session_id, COUNT(*) AS c, MAX(created_at) AS at, \
     SUM(results)::bigint AS results, SUM(errors)::bigint AS errors FROM r GROUP BY session_id), \
     bump AS (\
     UPDATE sessions s SET last_seq = s.last_seq + per.c, updated_at = per.at, \
     result_count = s.result_count + per.results, error_count = s.error_count + per.errors \
     FROM per WHERE s.id = per.session_id RETURNING s.id, s.last_seq - per.c AS base), \
     ins AS (\
     INSERT INTO messages (session_id, seq, role, call_id, body, created_at) \
     SELECT r.session_id, bump.base + r.n, r.role, r.call_id, r.body, r.created_at \
     FROM r JOIN bump ON bump.id = r.session_id RETURNING id, session_id, seq), \
     blobs AS (\
     INSERT INTO message_blobs (message_id, blob, bytes) \
     SELECT ins.id, b.blob, b.bytes \
     FROM unnest($9::text[], $10::bigint[], $11::text[], $12::bytea[]) AS b(session_id, n, blob, bytes) \
     JOIN bump ON bump.id = b.session_id \
     JOIN ins ON ins.session_id = b.session_id AND ins.seq = bump.base + b.n \
     ON CONFLICT DO NOTHING) \
     SELECT id, session_id, seq FROM ins";

/// All the events of a round (any sessions) in one statement, each session's numbered
/// after its last, in the order queued. Another instance's event taking a number first
/// makes the whole statement collide; the round then goes event by event.
const EVENT_ROUND: &str = "WITH i AS (\
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) \
     AS i(session_id, body, created_at, n)), \
     base AS (\
     SELECT s.session_id, \
     COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.session_id = s.session_id), 0) AS base \
     FROM (SELECT DISTINCT session_id FROM i) s) \
     INSERT INTO events (session_id, seq, body, created_at) \
     SELECT i.session_id, base.base + i.n, i.body, i.created_at FROM i JOIN base USING (session_id) \
     RETURNING session_id, seq";

/// Each op's 1-based position among its session's items of the round, in the round's order.
fn positions<'a>(sessions: impl Iterator<Item = &'a str>) -> Vec<i64> {
    let mut next: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    sessions
        .map(|session| {
            let n = next.entry(session).or_insert(0);
            *n += 1;
            *n
        })
        .collect()
}

/// What a round's statement returned, by session, in seq order.
fn by_session<T>(
    returned: Vec<(String, T)>,
    seq: impl Fn(&T) -> i64,
) -> std::collections::HashMap<String, std::collections::VecDeque<T>> {
    let mut found: std::collections::HashMap<String, Vec<T>> = std::collections::HashMap::new();
    for (session, item) in returned {
        found.entry(session).or_default().push(item);
    }
    found
        .into_iter()
        .map(|(session, mut items)| {
            items.sort_unstable_by_key(&seq);
            (session, items.into())
        })
        .collect()
}

async fn write_appends(held: &mut Held, pool: &PgPool, ops: Vec<AppendOp>) {
    if ops.len() < 2 {
        for (session_id, rows, reply) in ops {
            let stored = match held.get().await {
                Ok(conn) => append_at_once(conn, &session_id, rows).await,
                Err(e) => Err(e),
            };
            if let Err(e) = &stored {
                held.failed(e);
            }
            let _ = reply.send(stored);
        }
        return;
    }
    let mut cols = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let mut blob_cols = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let sessions = ops
        .iter()
        .flat_map(|(session, rows, _)| rows.iter().map(move |_| session.as_str()));
    let mut n = positions(sessions).into_iter();
    for (session_id, rows, _) in &ops {
        for row in rows {
            let at = n.next().unwrap_or_default();
            for blob in &row.blobs {
                blob_cols.0.push(session_id.clone());
                blob_cols.1.push(at);
                blob_cols.2.push(blob.clone());
                blob_cols.3.push(row.inline.get(blob).cloned());
            }
            cols.0.push(session_id.clone());
            cols.1.push(at);
            cols.2.push(row.role);
            cols.3.push(row.call_id.clone());
            cols.4.push(row.body.clone());
            cols.5.push(row.now);
            cols.6.push(row.results);
            cols.7.push(row.errors);
        }
    }
    let returned: Result<Vec<(i64, String, i64)>> = match held.get().await {
        Ok(conn) => sqlx::query_as(APPEND_ROUND)
            .bind(cols.0)
            .bind(cols.1)
            .bind(cols.2)
            .bind(cols.3)
            .bind(cols.4)
            .bind(cols.5)
            .bind(cols.6)
            .bind(cols.7)
            .bind(blob_cols.0)
            .bind(blob_cols.1)
            .bind(blob_cols.2)
            .bind(blob_cols.3)
            .fetch_all(conn)
            .await
            .map_err(StoreError::from),
        Err(e) => Err(e),
    };
    if let Err(e) = &returned {
        held.failed(e);
    }
    let mut found = match returned {
        Ok(returned) => by_session(
            returned
                .into_iter()
                .map(|(id, session, seq)| (session, (id, seq)))
                .collect(),
            |&(_, seq)| seq,
        ),
        // Nothing was written: each append on its own, so only a bad one fails.
        Err(_) => Default::default(),
    };
    let mut alone = Vec::new();
    for (session_id, rows, reply) in ops {
        let stored = found.get_mut(&session_id).and_then(|ids| {
            (ids.len() >= rows.len()).then(|| ids.drain(..rows.len()).collect::<Vec<_>>())
        });
        match stored {
            Some(ids) => drop(reply.send(Ok(ids))),
            // Not stored (its session is missing, or the statement failed): alone, it
            // stores or says why not.
            None => alone.push((session_id, rows, reply)),
        }
    }
    let alone = alone
        .into_iter()
        .map(|(session_id, rows, reply)| async move {
            let _ = reply.send(append_at_once(pool, &session_id, rows).await);
        });
    futures::future::join_all(alone).await;
}

/// Logs the round's events; returns the `NOTIFY` payloads of those stored.
async fn write_events(held: &mut Held, pool: &PgPool, ops: Vec<EventOp>) -> Vec<String> {
    let mut notes = Vec::with_capacity(ops.len());
    let mut alone = ops;
    if alone.len() == 1
        && let Some((session_id, body, now, reply)) = alone.pop()
    {
        // One event: the plain insert, on the writer's connection.
        let logged = match held.get().await {
            Ok(conn) => event_at_once(conn, &session_id, &body, now).await,
            Err(e) => Err(e),
        };
        match logged {
            Err(e) => {
                held.failed(&e);
                // A collision (or a broken connection): on its own, with its tries.
                alone.push((session_id, body, now, reply));
            }
            Ok(seq) => {
                notes.push(format!("{seq} {session_id}"));
                let _ = reply.send(Ok(seq));
            }
        }
    } else if alone.len() >= 2 {
        let n = positions(alone.iter().map(|(session, ..)| session.as_str()));
        let sessions: Vec<String> = alone.iter().map(|op| op.0.clone()).collect();
        let bodies: Vec<String> = alone.iter().map(|op| op.1.clone()).collect();
        let times: Vec<i64> = alone.iter().map(|op| op.2).collect();
        let mut tries = 0;
        let returned = loop {
            let tried: Result<Vec<(String, i64)>> = match held.get().await {
                Ok(conn) => sqlx::query_as(EVENT_ROUND)
                    .bind(&sessions)
                    .bind(&bodies)
                    .bind(&times)
                    .bind(&n)
                    .fetch_all(conn)
                    .await
                    .map_err(StoreError::from),
                Err(e) => Err(e),
            };
            match tried {
                // Another writer took a number first: the next try numbers after it.
                Err(StoreError::Database(sqlx::Error::Database(db)))
                    if db.is_unique_violation() && tries + 1 < EVENT_TRIES_AT_ONCE =>
                {
                    tries += 1;
                }
                Err(e) => {
                    held.failed(&e);
                    break None;
                }
                Ok(returned) => break Some(returned),
            }
        };
        if let Some(returned) = returned {
            let mut found = by_session(returned, |q| *q);
            let mut rest = Vec::new();
            for (session_id, body, now, reply) in alone {
                match found.get_mut(&session_id).and_then(|seqs| seqs.pop_front()) {
                    Some(seq) => {
                        notes.push(format!("{seq} {session_id}"));
                        let _ = reply.send(Ok(seq));
                    }
                    None => rest.push((session_id, body, now, reply)),
                }
            }
            alone = rest;
        }
    }
    let alone = alone
        .into_iter()
        .map(|(session_id, body, now, reply)| async move {
            let logged = event_alone(pool, &session_id, &body, now).await;
            let note = logged
                .as_ref()
                .ok()
                .map(|seq| format!("{seq} {session_id}"));
            let _ = reply.send(logged);
            note
        });
    notes.extend(futures::future::join_all(alone).await.into_iter().flatten());
    notes
}

/// One event on its own: [`EVENT_AT_ONCE`], then, after a few collisions, under the
/// session's advisory lock.
async fn event_alone(pool: &PgPool, session_id: &str, body: &str, now: i64) -> Result<i64> {
    let mut tries = 0;
    loop {
        let tried = if tries < EVENT_TRIES_AT_ONCE {
            event_at_once(pool, session_id, body, now).await
        } else {
            event_locked(pool, session_id, body, now).await
        };
        match tried {
            // Another writer took this number first (and has committed it): the next
            // try sees it. Every lost try is another event stored, so this ends.
            Err(StoreError::Database(sqlx::Error::Database(db)))
                if db.is_unique_violation() && tries < EVENT_TRIES =>
            {
                tries += 1;
            }
            other => return other,
        }
    }
}

/// An event appended in its own transaction under the session's advisory lock, so
/// writers of one session queue instead of colliding (they may still meet one that
/// tries [`EVENT_AT_ONCE`]).
async fn event_locked(pool: &PgPool, session_id: &str, body: &str, now: i64) -> Result<i64> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
    let seq = insert_event(&mut tx, session_id, body, now).await?;
    tx.commit().await?;
    Ok(seq)
}

/// [`EVENT_AT_ONCE`]: the event's number.
async fn event_at_once<'c>(
    db: impl sqlx::PgExecutor<'c>,
    session_id: &str,
    body: &str,
    now: i64,
) -> Result<i64> {
    let (seq,): (i64,) = sqlx::query_as(EVENT_AT_ONCE)
        .bind(session_id)
        .bind(body)
        .bind(now)
        .fetch_one(db)
        .await?;
    Ok(seq)
}

#[async_trait]
impl HistoryReader for PgHistory {
    async fn session(&self, id: &str) -> Result<Option<Session>> {
        read_session(&self.pool, id).await
    }
    async fn list_sessions(&self, page: Page) -> Result<Vec<Session>> {
        read_sessions(&self.pool, page).await
    }
    async fn child_sessions(&self, parent_id: &str) -> Result<Vec<Session>> {
        read_children(&self.pool, parent_id).await
    }
    async fn load(&self, session_id: &str) -> Result<Vec<StoredMessage>> {
        read_messages(&self.pool, session_id).await
    }
    async fn load_raw(&self, session_id: &str) -> Result<Vec<RawStoredMessage>> {
        read_messages_raw(&self.pool, session_id, None).await
    }
    async fn load_raw_page(
        &self,
        session_id: &str,
        page: MessagePage,
    ) -> Result<Vec<RawStoredMessage>> {
        read_messages_raw(&self.pool, session_id, Some(page)).await
    }
    async fn find_result(&self, session_id: &str, call_id: &str) -> Result<Option<StoredResult>> {
        read_result(&self.pool, session_id, call_id).await
    }
    async fn result_with_blob(
        &self,
        session_id: &str,
        key: &BlobKey,
    ) -> Result<Option<StoredResult>> {
        read_result_with_blob(&self.pool, session_id, key).await
    }
    async fn referenced_blobs(&self) -> Result<BTreeSet<BlobKey>> {
        read_blob_refs(&self.pool).await
    }
    async fn inline_blob(&self, key: &BlobKey) -> Result<Option<bytes::Bytes>> {
        read_inline_blob(&self.pool, key).await
    }
}

#[async_trait]
impl HistoryStore for PgHistory {
    async fn create_session(&self, new: NewSession) -> Result<Session> {
        let session = rows::new_session(new)?;
        let mut tx = self.pool.begin().await?;
        create(&mut tx, &session).await?;
        tx.commit().await?;
        Ok(session)
    }
    async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<Message>,
    ) -> Result<Vec<StoredMessage>> {
        self.append_many_inline(session_id, contents, Vec::new())
            .await
    }
    fn keeps_inline_blobs(&self) -> bool {
        true
    }
    async fn append_many_inline(
        &self,
        session_id: &str,
        contents: Vec<Message>,
        inline: Vec<InlineBlob>,
    ) -> Result<Vec<StoredMessage>> {
        let now = now_ms();
        let mut new = rows::new_rows(session_id, &contents, now)?;
        rows::keep_inline(&mut new, &inline);
        if new.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = oneshot::channel();
        self.submit(PgWrite::Append {
            session_id: session_id.to_owned(),
            rows: new,
            reply,
        })
        .await?;
        let ids = answer.await.map_err(|_| StoreError::WriterGone)??;
        Ok(rows::stored_messages(session_id, contents, ids, now))
    }
    fn announces_appends(&self) -> bool {
        true
    }
    async fn append_announced(
        &self,
        session_id: &str,
        result: ToolResult,
        inline: Vec<InlineBlob>,
        at: String,
    ) -> Result<(StoredMessage, Option<u64>)> {
        let (rows, body, announced) = rows::Announced::new(session_id, result, &inline, &at)?;
        let (rows_reply, ids) = oneshot::channel();
        let (event_reply, seq) = oneshot::channel();
        let append = (session_id.to_owned(), rows, rows_reply);
        let event = (session_id.to_owned(), body, announced.now, event_reply);
        self.submit(PgWrite::Announced { append, event }).await?;
        let ids = ids.await.map_err(|_| StoreError::WriterGone)??;
        // The result is stored whatever became of its event (advisory, as every event).
        let seq = seq.await.ok().and_then(Result::ok);
        announced.stored(ids, seq)
    }
    async fn delete_session(&self, id: &str) -> Result<bool> {
        validate_id("session id", id)?;
        let mut tx = self.pool.begin().await?;
        let found = delete_tree(&mut tx, id).await?;
        if found > 0 {
            // Word to the other instances, sent by Postgres at the commit (not before, not
            // at a rollback): their feeds of the session end without polling for it.
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(EVENTS_CHANNEL)
                .bind(format!("{DELETED_NOTE} {id}"))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(found > 0)
    }
}

#[async_trait]
impl EventLog for PgHistory {
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event> {
        let (event, answer) = self.send_event(session_id, at, kind).await?;
        numbered(event, answer).await
    }

    async fn queue_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<QueuedEvent> {
        let (event, answer) = self.send_event(session_id, at, kind).await?;
        Ok(Box::pin(numbered(event, answer)))
    }

    async fn append_events(
        &self,
        session_id: &str,
        events: Vec<(String, EventKind)>,
    ) -> Result<Vec<Event>> {
        // All queued before any is waited for: the writer logs them in one round.
        let mut sent = Vec::with_capacity(events.len());
        for (at, kind) in events {
            sent.push(self.send_event(session_id, at, kind).await?);
        }
        let mut logged = Vec::with_capacity(sent.len());
        for (event, answer) in sent {
            logged.push(numbered(event, answer).await?);
        }
        Ok(logged)
    }

    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>> {
        read_events(&self.pool, session_id, after).await
    }

    async fn last_event_seq(&self, session_id: &str) -> Result<u64> {
        read_last_event(&self.pool, session_id).await
    }

    async fn last_event_seqs(&self, session_ids: &[String]) -> Result<Vec<u64>> {
        let found: Vec<(String, i64)> = sqlx::query_as(
            "SELECT session_id, MAX(seq) FROM events WHERE session_id = ANY($1) \
             GROUP BY session_id",
        )
        .bind(session_ids)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows::in_order(session_ids, found))
    }

    fn wakeups(&self) -> Option<broadcast::Receiver<EventWake>> {
        Some(self.wake.subscribe())
    }
}

#[async_trait]
impl SuspensionStore for PgHistory {
    async fn put_suspension(&self, pending: &PendingCall) -> Result<()> {
        let row = rows::suspension_row(pending)?;
        let mut conn = self.pool.acquire().await?;
        put_suspension_row(&mut conn, row, now_ms()).await
    }

    async fn claim_suspension(&self, id: &str) -> Result<Option<PendingCall>> {
        validate_id("suspension id", id)?;
        let mut conn = self.pool.acquire().await?;
        match claim_suspension_row(&mut conn, id).await? {
            Some(body) => rows::pending_from_row(id, &body, STATE_RESOLVING).map(Some),
            None => Ok(None),
        }
    }

    async fn finish_suspension(&self, id: &str) -> Result<()> {
        validate_id("suspension id", id)?;
        let mut conn = self.pool.acquire().await?;
        finish_suspension_row(&mut conn, id).await
    }

    async fn suspensions(&self, session_id: &str) -> Result<Vec<PendingCall>> {
        read_suspensions(&self.pool, session_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_payloads_parse_and_strangers_are_ignored() {
        assert_eq!(
            parse_wake("12 s_abc"),
            Some(EventWake::Logged {
                session_id: "s_abc".into(),
                seq: 12
            })
        );
        assert!(parse_wake("x s_abc").is_none());
        assert!(parse_wake("12").is_none());
    }
}
