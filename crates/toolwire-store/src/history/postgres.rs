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
//! writer, takes everything queued while its last batch ran and writes it in one
//! statement (so one transaction: a result and the event that announces it are stored
//! together or not at all), then one `NOTIFY` statement for all its events, so a busy
//! instance's round trips per stored result fall with its load (docs/scale.md).

use std::collections::{BTreeSet, HashMap, VecDeque};
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
        // would retry until its acquire timeout (and one that never answers fails after
        // that timeout).
        let mut first = connect_within(&opts).await?;
        migrator().run(&mut first).await?;
        first.close().await?;
        let pool = pool_options(MAX_CONNECTIONS).connect_lazy_with(opts.clone());
        let (wake, _) = broadcast::channel(WAKE_BUFFER);
        let mut listener = PgListener::connect_with(&pool).await?;
        listener.listen(EVENTS_CHANNEL).await?;
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(forward_wakeups(listener, wake.clone(), stopped));
        let (writes, queue) = mpsc::channel(QUEUE_DEPTH);
        tokio::spawn(run_writer(opts, queue));
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

/// A connection of its own (not pooled), given up on after [`ACQUIRE_TIMEOUT`] as the
/// pool's are: an address that never answers fails in seconds, not at the system's TCP
/// timeout (minutes).
async fn connect_within(opts: &PgConnectOptions) -> std::result::Result<PgConnection, sqlx::Error> {
    tokio::time::timeout(ACQUIRE_TIMEOUT, PgConnection::connect_with(opts))
        .await
        .unwrap_or_else(|_| {
            Err(sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {ACQUIRE_TIMEOUT:?}"),
            )))
        })
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

/// Tries of a round's statement before its ops go one by one, and of one op's before it
/// waits its turn under its session's advisory lock instead (many writers of one session
/// at once: each try lost is a round trip).
const TRIES_AT_ONCE: u32 = 3;
/// Collisions one op may meet in all before it fails: each one is another event of its
/// session stored meanwhile, so only a session flooded from many writers comes near.
const EVENT_TRIES: u32 = 1000;

/// A write for the writer task.
#[derive(Debug)]
enum PgWrite {
    /// A session's rows, answered with their `(id, seq)`s.
    Append {
        session_id: String,
        rows: Vec<rows::NewRow>,
        reply: oneshot::Sender<Result<Vec<(i64, i64)>>>,
    },
    /// An event's body, answered with its number.
    Event {
        session_id: String,
        body: String,
        now: i64,
        reply: oneshot::Sender<Result<i64>>,
    },
    /// A result's rows and the event that announces them (`HistoryStore::
    /// append_announced`): one statement writes both, the event naming the last row, so
    /// neither is ever stored without the other.
    Announced {
        session_id: String,
        rows: Vec<rows::NewRow>,
        rows_reply: oneshot::Sender<Result<Vec<(i64, i64)>>>,
        body: String,
        now: i64,
        reply: oneshot::Sender<Result<i64>>,
    },
}

impl PgWrite {
    fn session_id(&self) -> &str {
        match self {
            PgWrite::Append { session_id, .. }
            | PgWrite::Event { session_id, .. }
            | PgWrite::Announced { session_id, .. } => session_id,
        }
    }

    fn rows(&self) -> &[rows::NewRow] {
        match self {
            PgWrite::Append { rows, .. } | PgWrite::Announced { rows, .. } => rows,
            PgWrite::Event { .. } => &[],
        }
    }

    /// Its event's body and time, and whether the event names the op's last row.
    fn event(&self) -> Option<(&str, i64, bool)> {
        match self {
            PgWrite::Append { .. } => None,
            PgWrite::Event { body, now, .. } => Some((body, *now, false)),
            PgWrite::Announced { body, now, .. } => Some((body, *now, true)),
        }
    }

    /// Tells everyone waiting on this op that it failed, `why`.
    fn fail(self, why: StoreError) {
        match self {
            PgWrite::Append { reply, .. } => drop(reply.send(Err(why))),
            PgWrite::Event { reply, .. } => drop(reply.send(Err(why))),
            PgWrite::Announced {
                rows_reply, reply, ..
            } => {
                let _ = reply.send(Err(StoreError::CommitFailed {
                    message: format!("the result this event announces was not stored: {why}"),
                }));
                let _ = rows_reply.send(Err(why));
            }
        }
    }
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

    /// The connection, opened if need be ([`connect_within`]).
    async fn get(&mut self) -> Result<&mut PgConnection> {
        if self.conn.is_none() {
            let conn = connect_within(&self.opts)
                .await
                .map_err(|e| self.unreachable(e.to_string()))?;
            self.conn = Some(conn);
        }
        self.conn.as_mut().ok_or(StoreError::WriterGone)
    }

    fn unreachable(&self, message: String) -> StoreError {
        StoreError::Unreachable {
            url: format!(
                "postgres://{}:{}/{}",
                self.opts.get_host(),
                self.opts.get_port(),
                self.opts.get_database().unwrap_or_default()
            ),
            message,
        }
    }

    /// After `error`: the connection is dropped unless the database refused the
    /// statement (a collision, a constraint), which leaves it as good as before.
    fn failed(&mut self, error: &StoreError) {
        if !refused(error) {
            self.conn = None;
        }
    }
}

/// Whether `error` is the database refusing a statement, on a connection still good.
fn refused(error: &StoreError) -> bool {
    matches!(error, StoreError::Database(sqlx::Error::Database(_)))
}

/// Runs the writes of this process on a connection of its own: each round takes
/// everything queued (while the last round ran, under load) and writes it all, rows and
/// events of any sessions, in one statement ([`ROUND`]), then hands one `NOTIFY`
/// statement for all the events to [`run_notifier`]. A round that fails as a whole (a
/// collision with another instance, a bad op) is done again op by op, so only a bad op
/// fails.
async fn run_writer(opts: PgConnectOptions, mut queue: mpsc::Receiver<PgWrite>) {
    let mut held = Held::new(opts.clone());
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
        let notes = write_round(&mut held, std::mem::take(&mut batch)).await;
        // The events are stored: word of them lost (the notifier far behind) only
        // delays other instances' feeds until their next look in the log (`RESYNC`).
        if !notes.is_empty() {
            let _ = notes_tx.try_send(notes);
        }
    }
}

/// Writes a round's ops and answers each; returns the `NOTIFY` payloads of the events
/// stored. One statement for them all; if it fails, each op on its own, in the order
/// queued (a call's start before its result).
async fn write_round(held: &mut Held, ops: Vec<PgWrite>) -> Vec<String> {
    let mut notes = Vec::new();
    let alone = if ops.len() > 1 {
        let tried = {
            let columns = Columns::of(&ops);
            with_tries(held, &columns, None).await
        };
        match tried {
            Ok(returned) => answer(returned, ops, &mut notes),
            // Nothing was written, and Postgres cannot be reached (again): every op fails
            // now, rather than each waiting for a connection in turn.
            Err(e)
                if matches!(e, StoreError::Unreachable { .. })
                    || (!refused(&e) && held.get().await.is_err()) =>
            {
                for op in ops {
                    op.fail(StoreError::CommitFailed {
                        message: format!("the history's Postgres cannot be reached: {e}"),
                    });
                }
                Vec::new()
            }
            // Nothing was written: each op alone, so only a bad one fails.
            Err(_) => ops,
        }
    } else {
        ops
    };
    for op in alone {
        write_alone(held, op, &mut notes).await;
    }
    notes
}

/// One op on its own: its statement, tried again after collisions (under its session's
/// lock after a few). A result whose event cannot be logged at all is still stored, alone
/// (events are advisory), and its event's caller told why.
async fn write_alone(held: &mut Held, op: PgWrite, notes: &mut Vec<String>) {
    let tried = {
        let columns = Columns::of(std::slice::from_ref(&op));
        with_tries(held, &columns, Some(op.session_id())).await
    };
    let why = match tried {
        Ok(returned) => return answer_alone(returned, op, notes),
        Err(why) => why,
    };
    // Only an event the database refused leaves its result to be stored alone (one that
    // could not be sent, Postgres unreachable, could not store the result either).
    let (session_id, rows, rows_reply, reply) = match op {
        PgWrite::Announced {
            session_id,
            rows,
            rows_reply,
            reply,
            ..
        } if refused(&why) => (session_id, rows, rows_reply, reply),
        other => return other.fail(why),
    };
    let _ = reply.send(Err(why));
    let rows = PgWrite::Append {
        session_id,
        rows,
        reply: rows_reply,
    };
    let tried = {
        let columns = Columns::of(std::slice::from_ref(&rows));
        with_tries(held, &columns, None).await
    };
    match tried {
        Ok(returned) => answer_alone(returned, rows, notes),
        Err(why) => rows.fail(why),
    }
}

/// [`answer`] for one op: not stored by a statement that succeeded, its session is
/// missing.
fn answer_alone(returned: Returned, op: PgWrite, notes: &mut Vec<String>) {
    for op in answer(returned, vec![op], notes) {
        let id = op.session_id().to_owned();
        op.fail(StoreError::SessionNotFound { id });
    }
}

/// What [`ROUND`] returned: a stored row's `(Some(id), session, seq)`, a logged event's
/// `(None, session, seq)`.
type Returned = Vec<(Option<i64>, String, i64)>;

/// [`ROUND`] on the writer's connection, again while it collides with another writer's
/// event: [`TRIES_AT_ONCE`] times for a round (`lock` `None`); for one op (`lock` its
/// session), then under the session's advisory lock, up to [`EVENT_TRIES`].
async fn with_tries(
    held: &mut Held,
    columns: &Columns<'_>,
    lock: Option<&str>,
) -> Result<Returned> {
    let limit = lock.map_or(TRIES_AT_ONCE - 1, |_| EVENT_TRIES);
    let mut tries = 0;
    loop {
        let locked = lock.filter(|_| tries >= TRIES_AT_ONCE);
        let tried = match held.get().await {
            Ok(conn) => match locked {
                None => round(conn, columns).await,
                Some(session_id) => round_locked(conn, columns, session_id).await,
            },
            Err(e) => Err(e),
        };
        match tried {
            // Another writer took a number first (and has committed it): the next try
            // sees it. Every lost try is another event stored, so this ends.
            Err(StoreError::Database(sqlx::Error::Database(db)))
                if db.is_unique_violation() && tries < limit =>
            {
                tries += 1;
            }
            Err(e) => {
                held.failed(&e);
                return Err(e);
            }
            Ok(returned) => return Ok(returned),
        }
    }
}

/// [`ROUND`] in a transaction holding `session_id`'s advisory lock, so writers of one
/// session queue instead of colliding (they may still meet one that tries without it).
async fn round_locked(
    conn: &mut PgConnection,
    columns: &Columns<'_>,
    session_id: &str,
) -> Result<Returned> {
    let mut tx = conn.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
    let returned = round(&mut *tx, columns).await?;
    tx.commit().await?;
    Ok(returned)
}

/// Answers `ops` from what their [`ROUND`] returned; gives back those it did not store
/// (rows of a session that does not exist, with the event announcing them), adding the
/// `NOTIFY` payload of each event stored to `notes`.
fn answer(returned: Returned, ops: Vec<PgWrite>, notes: &mut Vec<String>) -> Vec<PgWrite> {
    let (mut rows, mut events) = (
        HashMap::<String, VecDeque<(i64, i64)>>::new(),
        HashMap::<String, VecDeque<i64>>::new(),
    );
    for (id, session_id, seq) in returned {
        match id {
            Some(id) => rows.entry(session_id).or_default().push_back((id, seq)),
            None => events.entry(session_id).or_default().push_back(seq),
        }
    }
    // RETURNING's order is not promised.
    rows.values_mut()
        .for_each(|r| r.make_contiguous().sort_unstable_by_key(|&(_, seq)| seq));
    events
        .values_mut()
        .for_each(|e| e.make_contiguous().sort_unstable());
    let mut take_rows = |session_id: &str, count: usize| {
        if count == 0 {
            return Some(Vec::new());
        }
        rows.get_mut(session_id)
            .filter(|ids| ids.len() >= count)
            .map(|ids| ids.drain(..count).collect::<Vec<_>>())
    };
    let mut logged = |session_id: &str, notes: &mut Vec<String>| {
        let seq = events.get_mut(session_id).and_then(VecDeque::pop_front);
        if let Some(seq) = seq {
            notes.push(format!("{seq} {session_id}"));
        }
        seq.ok_or_else(|| StoreError::CommitFailed {
            message: "the event was not logged".into(),
        })
    };
    let mut alone = Vec::new();
    for op in ops {
        // The op's rows, taken from what was stored (`None`: not stored); an event alone
        // has none to take.
        let Some(ids) = take_rows(op.session_id(), op.rows().len()) else {
            alone.push(op);
            continue;
        };
        match op {
            PgWrite::Append { reply, .. } => drop(reply.send(Ok(ids))),
            PgWrite::Event {
                session_id, reply, ..
            } => drop(reply.send(logged(&session_id, notes))),
            PgWrite::Announced {
                session_id,
                rows_reply,
                reply,
                ..
            } => {
                let _ = reply.send(logged(&session_id, notes));
                let _ = rows_reply.send(Ok(ids));
            }
        }
    }
    alone
}

/// Everything of a writer round in one statement, so one round trip and one transaction:
/// per session, its row's bump (under its lock) hands out the seqs of all its rows in the
/// round, in the order queued; its events are numbered after its last, in the order
/// queued, an event that announces a result naming that result's row (its body, an
/// unnamed reference ending in `}}`, completed as `rows::naming_row` does). Rows of a
/// session that does not exist are not written, nor the events that announce them.
/// Another instance's event taking a number first makes the whole statement collide.
/// `$1`..`$8` the rows (session, position in its session's rows of the round, role, call
/// id, body, time, result and error counts), `$9`..`$12` their blob references,
/// `$13`..`$16` the events (session, body, time, position of the row it names).
const ROUND: &str = "WITH r AS (\
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
     ON CONFLICT DO NOTHING), \
     i AS (\
     SELECT * FROM unnest($13::text[], $14::text[], $15::bigint[], $16::bigint[]) \
     WITH ORDINALITY AS i(session_id, body, created_at, row_n, ord)), \
     kept AS (\
     SELECT i.session_id, i.ord, i.created_at, CASE WHEN i.row_n IS NULL THEN i.body \
     ELSE left(i.body, -2) || ',\"messageId\":' || ins.id || '}}' END AS body \
     FROM i LEFT JOIN bump ON bump.id = i.session_id \
     LEFT JOIN ins ON ins.session_id = i.session_id AND ins.seq = bump.base + i.row_n \
     WHERE i.row_n IS NULL OR ins.id IS NOT NULL), \
     base AS (\
     SELECT s.session_id, \
     COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.session_id = s.session_id), 0) AS base \
     FROM (SELECT DISTINCT session_id FROM kept) s), \
     ev AS (\
     INSERT INTO events (session_id, seq, body, created_at) \
     SELECT kept.session_id, \
     base.base + row_number() OVER (PARTITION BY kept.session_id ORDER BY kept.ord), \
     kept.body, kept.created_at FROM kept JOIN base USING (session_id) \
     RETURNING session_id, seq) \
     SELECT id, session_id, seq FROM ins UNION ALL SELECT NULL, session_id, seq FROM ev";

/// The arrays [`ROUND`] is bound to, borrowed from a round's ops in the order queued.
#[derive(Default)]
struct Columns<'a> {
    row_sessions: Vec<&'a str>,
    row_n: Vec<i64>,
    roles: Vec<&'static str>,
    call_ids: Vec<Option<&'a str>>,
    bodies: Vec<&'a str>,
    row_times: Vec<i64>,
    results: Vec<i64>,
    errors: Vec<i64>,
    blob_sessions: Vec<&'a str>,
    blob_n: Vec<i64>,
    blobs: Vec<&'a str>,
    blob_bytes: Vec<Option<&'a [u8]>>,
    event_sessions: Vec<&'a str>,
    event_bodies: Vec<&'a str>,
    event_times: Vec<i64>,
    named_rows: Vec<Option<i64>>,
}

impl<'a> Columns<'a> {
    fn of(ops: &'a [PgWrite]) -> Self {
        let mut c = Columns::default();
        // Each row's 1-based position among its session's rows of the round.
        let mut rows_of: HashMap<&str, i64> = HashMap::new();
        for op in ops {
            let session_id = op.session_id();
            let mut last = None;
            for row in op.rows() {
                let n = rows_of.entry(session_id).or_insert(0);
                *n += 1;
                last = Some(*n);
                for blob in &row.blobs {
                    c.blob_sessions.push(session_id);
                    c.blob_n.push(*n);
                    c.blobs.push(blob);
                    c.blob_bytes.push(row.inline.get(blob).map(Vec::as_slice));
                }
                c.row_sessions.push(session_id);
                c.row_n.push(*n);
                c.roles.push(row.role);
                c.call_ids.push(row.call_id.as_deref());
                c.bodies.push(&row.body);
                c.row_times.push(row.now);
                c.results.push(row.results);
                c.errors.push(row.errors);
            }
            if let Some((body, now, names)) = op.event() {
                c.event_sessions.push(session_id);
                c.event_bodies.push(body);
                c.event_times.push(now);
                c.named_rows.push(last.filter(|_| names));
            }
        }
        c
    }
}

/// [`ROUND`] for `c`.
async fn round<'c>(db: impl sqlx::PgExecutor<'c>, c: &Columns<'_>) -> Result<Returned> {
    Ok(sqlx::query_as(ROUND)
        .bind(&c.row_sessions)
        .bind(&c.row_n)
        .bind(&c.roles)
        .bind(&c.call_ids)
        .bind(&c.bodies)
        .bind(&c.row_times)
        .bind(&c.results)
        .bind(&c.errors)
        .bind(&c.blob_sessions)
        .bind(&c.blob_n)
        .bind(&c.blobs)
        .bind(&c.blob_bytes)
        .bind(&c.event_sessions)
        .bind(&c.event_bodies)
        .bind(&c.event_times)
        .bind(&c.named_rows)
        .fetch_all(db)
        .await?)
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
        let (reply, seq) = oneshot::channel();
        self.submit(PgWrite::Announced {
            session_id: session_id.to_owned(),
            rows,
            rows_reply,
            body,
            now: announced.now,
            reply,
        })
        .await?;
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
