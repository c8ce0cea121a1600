//! The SQLite `HistoryStore`: WAL, one writer task that group-commits, a pool of readers.
//!
//! Callers never see "database is locked": all writes of this process go through one
//! connection, so they never contend with each other, and busy_timeout covers another
//! process (e.g. `toolwire gc`) holding the lock briefly. Group commit — every append
//! queued while a transaction runs joins the next one — keeps `synchronous=FULL` (an
//! fsync per commit, so an append is durable when it returns) fast under load.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::Connection;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use tokio::sync::{broadcast, mpsc, oneshot};

use toolwire_core::{Event, EventKind, Message, PendingCall, ToolResult};

use super::rows::{self, NewRow, STATE_RESOLVING, now_ms};
use super::{
    EventLog, EventWake, HistoryReader, HistoryStore, InlineBlob, MessagePage, NewSession, Page,
    QueuedEvent, RawStoredMessage, Session, StoredMessage, StoredResult, SuspensionStore,
};
use crate::error::{Result, StoreError};
use crate::ids::{BlobKey, validate_id};

mod one_shot;

/// Most operations committed in one transaction.
const MAX_BATCH: usize = 512;
const QUEUE_DEPTH: usize = 4096;
const READERS: u32 = 4;
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Prepared statements the writer's connection keeps (sqlx's default is 100): the one-shot
/// lists come in a shape per batch size (`one_shot::MAX_ROWS`), and one evicted is parsed
/// again by SQLite on its next use.
const WRITER_STATEMENTS: usize = 512;

/// How often the writer asks SQLite whether another connection (another process: a CLI
/// `call` beside a server, a second server, the gateway) committed. `PRAGMA data_version`
/// on the writer's own connection answers that alone, from shared memory, without
/// reading the database: this process's commits all go through that connection, so
/// they never change it. One look per process, however many feeds are open.
const FOREIGN_LOOK: Duration = Duration::from_millis(250);
/// Word of other writers' commits, buffered for a slow follower (one that lags compares
/// every session with the log anyway).
const WAKE_BUFFER: usize = 16;

/// The schema's steps, in order (the test below opens a database made by a prefix).
const STEPS: [(i64, &str, &str); 5] = [
    (
        1,
        "init",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "events_suspensions",
        include_str!("../../migrations/sqlite/0002_events_suspensions.sql"),
    ),
    (
        3,
        "suspension_state",
        include_str!("../../migrations/sqlite/0003_suspension_state.sql"),
    ),
    (
        4,
        "session_counts",
        include_str!("../../migrations/sqlite/0004_session_counts.sql"),
    ),
    (
        5,
        "inline_blobs",
        include_str!("../../migrations/sqlite/0005_inline_blobs.sql"),
    ),
];

fn migrator() -> Migrator {
    rows::migrator(&STEPS)
}

/// The history in one SQLite file: the default store, for one machine.
#[derive(Debug, Clone)]
pub struct SqliteHistory {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    writes: mpsc::Sender<Queued>,
    read: SqlitePool,
    /// [`EventWake::Changed`] when another connection committed (see [`FOREIGN_LOOK`]).
    wake: broadcast::Sender<EventWake>,
}

type Reply<T> = oneshot::Sender<Result<T>>;

/// What the writer's queue carries: an op, or a result's append and the event that
/// announces it ([`HistoryStore::append_announced`]), sent as one so that they always
/// land in the same batch, side by side, and so in one commit.
#[derive(Debug)]
enum Queued {
    One(WriteOp),
    Announced { append: WriteOp, event: WriteOp },
}

impl Queued {
    /// Its ops, in order, at the end of `batch`.
    fn into_batch(self, batch: &mut Vec<WriteOp>) {
        match self {
            Queued::One(op) => batch.push(op),
            Queued::Announced { append, event } => batch.extend([append, event]),
        }
    }
}

#[derive(Debug)]
enum WriteOp {
    Create {
        session: Session,
        reply: Reply<()>,
    },
    Append {
        rows: Vec<NewRow>,
        reply: Reply<Vec<(i64, i64)>>,
    },
    /// A single statement of the event or suspension tables; answers with what the
    /// statement returns (an event's number, a claimed suspension's body).
    Exec {
        stmt: Stmt,
        reply: Reply<Returned>,
    },
    /// An event nobody waits on ([`EventLog::queue_event`]: a call started), run as
    /// `Exec`; the writer may hold it for [`LINGER`] to commit it with the next write.
    Announce {
        stmt: Stmt,
        reply: Reply<Returned>,
    },
}

/// How long a batch of announcements alone waits for another write to share its commit
/// (and its fsync). A call's start is announced as it begins, and its result is stored
/// a moment later (the MCP gateway stores it right behind its answer): waiting lets one
/// commit take both instead of one each. Short enough that a live view shows a long
/// call as started at once, to the eye.
const LINGER: Duration = Duration::from_millis(10);

/// What a single statement returns.
#[derive(Debug)]
enum Returned {
    Nothing,
    Seq(i64),
    Body(Option<String>),
}

#[derive(Debug)]
enum Stmt {
    /// The body's own `seq` is a placeholder: the row's number is assigned by the insert.
    AppendEvent {
        session_id: String,
        body: String,
        now: i64,
        /// The body is a reference to a stored result that does not name its row yet:
        /// the row the op just before this one appends, whose id the writer fills in as
        /// it writes both ([`Queued::Announced`]).
        names_row: bool,
    },
    PutSuspension {
        /// Id, session id and body.
        row: (String, String, String),
        now: i64,
    },
    /// A session, its subagents' sessions, and everything recorded in them.
    DeleteSession {
        id: String,
    },
    ClaimSuspension {
        id: String,
    },
    FinishSuspension {
        id: String,
    },
}

/// SQLite reports a damaged or foreign file by these primary result codes.
fn is_corruption(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => {
            let code = db.code();
            matches!(code.as_deref(), Some("26" | "11"))
                || db.message().contains("file is not a database")
                || db.message().contains("malformed")
        }
        _ => false,
    }
}

fn open_error(path: &Path, e: StoreError) -> StoreError {
    let corrupt = match &e {
        StoreError::Database(db) => is_corruption(db),
        StoreError::Migrate(m) => {
            m.to_string().contains("not a database") || m.to_string().contains("malformed")
        }
        _ => false,
    };
    if corrupt {
        StoreError::CorruptDatabase {
            path: path.to_owned(),
            message: e.to_string(),
        }
    } else {
        e
    }
}

impl SqliteHistory {
    /// Opens (creating if missing) the history database at `path` and migrates it.
    pub async fn open(path: &Path) -> Result<Self> {
        let opts = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true)
            // Every batch's savepoints journal the pages they change (~16 for a one-call
            // batch: the tables' and indexes' leaves); past 64 KiB SQLite moves that journal
            // to a temporary file, so each batch made, wrote and unlinked a file in /var/tmp
            // (strace of the gateway: ten syscalls a call). In memory it is freed at the
            // savepoint's end, and holds only pages that existed before the batch (new
            // pages, a large result's overflow, are not journaled).
            .pragma("temp_store", "memory");
        Self::open_with(path, opts).await
    }

    /// `sqlite://path/to/history.db` or `sqlite:///abs/history.db`.
    pub async fn open_url(url: &str) -> Result<Self> {
        let Some(rest) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        else {
            return Err(StoreError::UnsupportedUrl {
                url: url.to_owned(),
                reason: "expected sqlite://PATH".into(),
            });
        };
        let path = PathBuf::from(rest.split('?').next().unwrap_or(rest));
        Self::open(&path).await
    }

    async fn open_with(path: &Path, opts: SqliteConnectOptions) -> Result<Self> {
        let writer = opts.clone().statement_cache_capacity(WRITER_STATEMENTS);
        let mut conn = SqliteConnection::connect_with(&writer)
            .await
            .map_err(|e| open_error(path, e.into()))?;
        migrator()
            .run(&mut conn)
            .await
            .map_err(|e| open_error(path, e.into()))?;
        let read = SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_with(opts)
            .await
            .map_err(|e| open_error(path, e.into()))?;
        let (writes, queue) = mpsc::channel(QUEUE_DEPTH);
        let (wake, _) = broadcast::channel(WAKE_BUFFER);
        tokio::spawn(run_writer(conn, queue, wake.clone()));
        Ok(SqliteHistory {
            inner: Arc::new(Inner { writes, read, wake }),
        })
    }

    /// Queues an event's insert (after every write queued before it) without waiting
    /// for it: the event, unnumbered, and where its number will come.
    async fn send_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
        waited_on: bool,
    ) -> Result<(Event, oneshot::Receiver<Result<Returned>>)> {
        let (event, body) = rows::new_event(session_id, at, kind)?;
        let stmt = Stmt::AppendEvent {
            session_id: session_id.to_owned(),
            body,
            now: now_ms(),
            names_row: false,
        };
        let (reply, answer) = oneshot::channel();
        let op = if waited_on {
            WriteOp::Exec { stmt, reply }
        } else {
            WriteOp::Announce { stmt, reply }
        };
        self.inner
            .writes
            .send(Queued::One(op))
            .await
            .map_err(|_| StoreError::WriterGone)?;
        Ok((event, answer))
    }

    async fn submit<T>(&self, make: impl FnOnce(Reply<T>) -> WriteOp) -> Result<T> {
        let (reply, answer) = oneshot::channel();
        self.inner
            .writes
            .send(Queued::One(make(reply)))
            .await
            .map_err(|_| StoreError::WriterGone)?;
        answer.await.map_err(|_| StoreError::WriterGone)?
    }
}

rows::statements!(SqliteConnection, SqlitePool);

#[async_trait]
impl HistoryReader for SqliteHistory {
    async fn session(&self, id: &str) -> Result<Option<Session>> {
        read_session(&self.inner.read, id).await
    }
    async fn list_sessions(&self, page: Page) -> Result<Vec<Session>> {
        read_sessions(&self.inner.read, page).await
    }
    async fn child_sessions(&self, parent_id: &str) -> Result<Vec<Session>> {
        read_children(&self.inner.read, parent_id).await
    }
    async fn load(&self, session_id: &str) -> Result<Vec<StoredMessage>> {
        read_messages(&self.inner.read, session_id).await
    }
    async fn load_raw(&self, session_id: &str) -> Result<Vec<RawStoredMessage>> {
        read_messages_raw(&self.inner.read, session_id, None).await
    }
    async fn load_raw_page(
        &self,
        session_id: &str,
        page: MessagePage,
    ) -> Result<Vec<RawStoredMessage>> {
        read_messages_raw(&self.inner.read, session_id, Some(page)).await
    }
    async fn find_result(&self, session_id: &str, call_id: &str) -> Result<Option<StoredResult>> {
        read_result(&self.inner.read, session_id, call_id).await
    }
    async fn result_with_blob(
        &self,
        session_id: &str,
        key: &BlobKey,
    ) -> Result<Option<StoredResult>> {
        read_result_with_blob(&self.inner.read, session_id, key).await
    }
    async fn referenced_blobs(&self) -> Result<BTreeSet<BlobKey>> {
        read_blob_refs(&self.inner.read).await
    }
    async fn inline_blob(&self, key: &BlobKey) -> Result<Option<bytes::Bytes>> {
        read_inline_blob(&self.inner.read, key).await
    }
}

#[async_trait]
impl HistoryStore for SqliteHistory {
    async fn create_session(&self, new: NewSession) -> Result<Session> {
        let session = rows::new_session(new)?;
        let copy = session.clone();
        self.submit(|reply| WriteOp::Create {
            session: copy,
            reply,
        })
        .await?;
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
        let ids = self
            .submit(|reply| WriteOp::Append { rows: new, reply })
            .await?;
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
        let stmt = Stmt::AppendEvent {
            session_id: session_id.to_owned(),
            body,
            now: announced.now,
            names_row: true,
        };
        self.inner
            .writes
            .send(Queued::Announced {
                append: WriteOp::Append {
                    rows,
                    reply: rows_reply,
                },
                event: WriteOp::Exec {
                    stmt,
                    reply: event_reply,
                },
            })
            .await
            .map_err(|_| StoreError::WriterGone)?;
        // Both are answered after the one commit. The result is stored whatever became
        // of its event (advisory, as every event: a stored result is never failed for
        // it).
        let ids = ids.await.map_err(|_| StoreError::WriterGone)??;
        let seq = match seq.await {
            Ok(Ok(Returned::Seq(seq))) => Some(seq),
            _ => None,
        };
        announced.stored(ids, seq)
    }
    async fn delete_session(&self, id: &str) -> Result<bool> {
        validate_id("session id", id)?;
        let stmt = Stmt::DeleteSession { id: id.to_owned() };
        match self.submit(|reply| WriteOp::Exec { stmt, reply }).await? {
            Returned::Seq(deleted) => Ok(deleted > 0),
            _ => Ok(false),
        }
    }
}

#[async_trait]
impl EventLog for SqliteHistory {
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event> {
        let (event, answer) = self.send_event(session_id, at, kind, true).await?;
        numbered(event, answer).await
    }

    async fn queue_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<QueuedEvent> {
        let (event, answer) = self.send_event(session_id, at, kind, false).await?;
        Ok(Box::pin(numbered(event, answer)))
    }

    async fn append_events(
        &self,
        session_id: &str,
        events: Vec<(String, EventKind)>,
    ) -> Result<Vec<Event>> {
        // All queued before any is waited for: the writer commits them together.
        let mut sent = Vec::with_capacity(events.len());
        for (at, kind) in events {
            sent.push(self.send_event(session_id, at, kind, true).await?);
        }
        let mut logged = Vec::with_capacity(sent.len());
        for (event, answer) in sent {
            logged.push(numbered(event, answer).await?);
        }
        Ok(logged)
    }

    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>> {
        read_events(&self.inner.read, session_id, after).await
    }

    async fn last_event_seq(&self, session_id: &str) -> Result<u64> {
        read_last_event(&self.inner.read, session_id).await
    }

    async fn last_event_seqs(&self, session_ids: &[String]) -> Result<Vec<u64>> {
        // The ids as one JSON array, so one statement serves any number of them.
        let ids = serde_json::to_string(session_ids).map_err(|e| StoreError::CommitFailed {
            message: e.to_string(),
        })?;
        let found: Vec<(String, i64)> = sqlx::query_as(
            "SELECT session_id, MAX(seq) FROM events \
             WHERE session_id IN (SELECT value FROM json_each(?1)) GROUP BY session_id",
        )
        .bind(ids)
        .fetch_all(&self.inner.read)
        .await?;
        Ok(rows::in_order(session_ids, found))
    }

    fn wakeups(&self) -> Option<broadcast::Receiver<EventWake>> {
        Some(self.inner.wake.subscribe())
    }
}

#[async_trait]
impl SuspensionStore for SqliteHistory {
    async fn put_suspension(&self, pending: &PendingCall) -> Result<()> {
        let row = rows::suspension_row(pending)?;
        let stmt = Stmt::PutSuspension { row, now: now_ms() };
        self.submit(|reply| WriteOp::Exec { stmt, reply })
            .await
            .map(drop)
    }

    async fn claim_suspension(&self, id: &str) -> Result<Option<PendingCall>> {
        validate_id("suspension id", id)?;
        let stmt = Stmt::ClaimSuspension { id: id.to_owned() };
        match self.submit(|reply| WriteOp::Exec { stmt, reply }).await? {
            Returned::Body(Some(body)) => {
                rows::pending_from_row(id, &body, STATE_RESOLVING).map(Some)
            }
            _ => Ok(None),
        }
    }

    async fn finish_suspension(&self, id: &str) -> Result<()> {
        validate_id("suspension id", id)?;
        let stmt = Stmt::FinishSuspension { id: id.to_owned() };
        self.submit(|reply| WriteOp::Exec { stmt, reply })
            .await
            .map(drop)
    }

    async fn suspensions(&self, session_id: &str) -> Result<Vec<PendingCall>> {
        read_suspensions(&self.inner.read, session_id).await
    }
}

/// `event` numbered once the writer answers its insert.
async fn numbered(mut event: Event, answer: oneshot::Receiver<Result<Returned>>) -> Result<Event> {
    match answer.await.map_err(|_| StoreError::WriterGone)?? {
        Returned::Seq(seq) => event.seq = u64::try_from(seq).unwrap_or_default(),
        _ => return Err(StoreError::WriterGone),
    }
    Ok(event)
}

async fn run_writer(
    mut conn: SqliteConnection,
    mut queue: mpsc::Receiver<Queued>,
    wake: broadcast::Sender<EventWake>,
) {
    let mut batch: Vec<Queued> = Vec::with_capacity(MAX_BATCH);
    let mut seen = data_version(&mut conn).await;
    let mut look = tokio::time::interval(FOREIGN_LOOK);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let received = tokio::select! {
            received = queue.recv_many(&mut batch, MAX_BATCH) => received,
            _ = look.tick() => {
                // Only while someone follows the log (a server's open feeds): a one-off
                // command or the gateway asks nothing.
                if wake.receiver_count() > 0 {
                    let now = data_version(&mut conn).await;
                    if now != seen {
                        seen = now;
                        let _ = wake.send(EventWake::Changed);
                    }
                }
                continue;
            }
        };
        if received == 0 {
            break;
        }
        // Announcements alone wait a moment for a write to share their commit; anything
        // else commits at once (with the announcements queued before it, in order).
        let deadline = tokio::time::Instant::now() + LINGER;
        while batch.len() < MAX_BATCH
            && batch
                .iter()
                .all(|op| matches!(op, Queued::One(WriteOp::Announce { .. })))
        {
            let room = MAX_BATCH - batch.len();
            match tokio::time::timeout_at(deadline, queue.recv_many(&mut batch, room)).await {
                Ok(received) if received > 0 => {}
                // The deadline, or the queue closed: commit what there is.
                _ => break,
            }
        }
        let mut ops = Vec::with_capacity(batch.len() + 1);
        for queued in batch.drain(..) {
            queued.into_batch(&mut ops);
        }
        write_batch(&mut conn, ops).await;
    }
    let _ = conn.close().await;
}

/// `PRAGMA data_version` of `conn`: changes when another connection commits. `None` when
/// it cannot be read, which then counts as a change once it can again.
async fn data_version(conn: &mut SqliteConnection) -> Option<i64> {
    sqlx::query_scalar("PRAGMA data_version")
        .fetch_one(conn)
        .await
        .ok()
}

enum Outcome {
    Created(Reply<()>, Result<()>),
    Appended(Reply<Vec<(i64, i64)>>, Result<Vec<(i64, i64)>>),
    Executed(Reply<Returned>, Result<Returned>),
}

impl Outcome {
    fn send(self, commit: &Result<(), String>) {
        let failed = |m: &String| StoreError::CommitFailed { message: m.clone() };
        match (self, commit) {
            (Outcome::Created(r, v), Ok(())) => drop(r.send(v)),
            (Outcome::Appended(r, v), Ok(())) => drop(r.send(v)),
            (Outcome::Executed(r, v), Ok(())) => drop(r.send(v)),
            (Outcome::Created(r, _), Err(m)) => drop(r.send(Err(failed(m)))),
            (Outcome::Appended(r, _), Err(m)) => drop(r.send(Err(failed(m)))),
            (Outcome::Executed(r, _), Err(m)) => drop(r.send(Err(failed(m)))),
        }
    }
}

/// Commits `ops` in one transaction, and only then answers: an `Ok` is never sent for
/// an uncommitted row. Each run of appends and event inserts (what a busy gateway's batch
/// is made of: calls' starts, their calls and results, their results' events) is written
/// as a few grouped statements in one savepoint, instead of a savepoint and a statement
/// or more per op: on SQLite each statement is a round trip to sqlx's worker thread, two
/// thread wake-ups. If a group fails, it is undone and its ops run one by one, each in
/// its own savepoint, so a bad op (an unknown session) fails alone; any other op runs
/// alone too.
async fn write_batch(conn: &mut SqliteConnection, ops: Vec<WriteOp>) {
    // A few rows and events of one session (a call, its result, their events): one
    // round trip instead of the general path's eight or so.
    let Err(ops) = one_shot::write(conn, ops).await else {
        return;
    };
    let mut outcomes = Vec::with_capacity(ops.len());
    let commit = async {
        // IMMEDIATE takes the write lock up front: a deferred transaction that read first
        // could not upgrade once another process committed (SQLITE_BUSY_SNAPSHOT, which
        // busy_timeout does not retry).
        let mut tx = conn
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| e.to_string())?;
        let mut ops = ops.into_iter().peekable();
        while let Some(op) = ops.next() {
            let mut run = vec![op];
            if groupable(&run[0]) {
                while let Some(next) = ops.next_if(groupable) {
                    run.push(next);
                }
            }
            // One append of many rows (a recorder's batch of calls and results) is a group
            // too: row by row it would be two or three statements a row. A large row goes
            // op by op, where its body moves into its statement (see `COPIED_MAX`).
            let many_rows = matches!(&run[0], WriteOp::Append { rows, .. } if rows.len() > 1);
            if (run.len() > 1 || many_rows) && bound_bytes(&run) <= COPIED_MAX {
                let mut sp = Connection::begin(&mut *tx)
                    .await
                    .map_err(|e| e.to_string())?;
                match write_grouped(&mut sp, &run).await {
                    Ok(answers) => {
                        sp.commit().await.map_err(|e| e.to_string())?;
                        for (op, answer) in run.into_iter().zip(answers) {
                            outcomes.push(answered(op, answer));
                        }
                        continue;
                    }
                    Err(_) => sp.rollback().await.map_err(|e| e.to_string())?,
                }
            }
            // The last row the op before appended, for an event that names it: none
            // when that op was no append or failed (the event then fails too).
            let mut row_before: Option<i64> = None;
            for op in run {
                let mut sp = Connection::begin(&mut *tx)
                    .await
                    .map_err(|e| e.to_string())?;
                let (outcome, ok) = match op {
                    WriteOp::Create { session, reply } => {
                        row_before = None;
                        let r = create(&mut sp, &session).await;
                        let ok = r.is_ok();
                        (Outcome::Created(reply, r), ok)
                    }
                    WriteOp::Append { rows, reply } => {
                        let r = append_rows(&mut sp, rows).await;
                        row_before = r
                            .as_ref()
                            .ok()
                            .and_then(|ids| ids.last())
                            .map(|&(id, _)| id);
                        let ok = r.is_ok();
                        (Outcome::Appended(reply, r), ok)
                    }
                    WriteOp::Exec { stmt, reply } | WriteOp::Announce { stmt, reply } => {
                        let r = match name_row(stmt, row_before.take()) {
                            Ok(stmt) => exec(&mut sp, stmt).await,
                            Err(e) => Err(e),
                        };
                        let ok = r.is_ok();
                        (Outcome::Executed(reply, r), ok)
                    }
                };
                outcomes.push(outcome);
                let end = if ok {
                    sp.commit().await
                } else {
                    sp.rollback().await
                };
                end.map_err(|e| e.to_string())?;
            }
        }
        tx.commit().await.map_err(|e| e.to_string())
    }
    .await;
    for outcome in outcomes {
        outcome.send(&commit);
    }
}

/// The bytes of rows (their bodies and the blobs they keep) and event bodies a grouped
/// write or a one-shot list binds by reference: sqlx copies each into its arguments.
/// Written op by op, a row's body moves into its statement instead, so a result of tens
/// of megabytes is held once, not twice (tests/peak_memory.rs).
const COPIED_MAX: usize = 256 << 10;

/// What [`COPIED_MAX`] bounds, for `ops`.
fn bound_bytes(ops: &[WriteOp]) -> usize {
    ops.iter()
        .map(|op| match op {
            WriteOp::Append { rows, .. } => rows
                .iter()
                .map(|row| row.body.len() + row.inline.values().map(Vec::len).sum::<usize>())
                .sum(),
            _ => event(op).map_or(0, |e| e.body.len()),
        })
        .sum()
}

/// Whether `op` may be written grouped with its neighbours: an append of messages, or an
/// event's insert (the two touch different tables, so a run of them keeps each table's
/// order whatever their interleaving).
fn groupable(op: &WriteOp) -> bool {
    matches!(op, WriteOp::Append { .. }) || event(op).is_some()
}

/// What a grouped write gives each op of its run.
enum Answer {
    Ids(Vec<(i64, i64)>),
    Seq(i64),
}

/// `op`'s outcome from its share of a grouped write.
fn answered(op: WriteOp, answer: Answer) -> Outcome {
    match (op, answer) {
        (WriteOp::Append { reply, .. }, Answer::Ids(ids)) => Outcome::Appended(reply, Ok(ids)),
        (WriteOp::Exec { reply, .. } | WriteOp::Announce { reply, .. }, Answer::Seq(seq)) => {
            Outcome::Executed(reply, Ok(Returned::Seq(seq)))
        }
        // Not reached: `write_grouped` answers each op in kind. Said so rather than lost.
        (WriteOp::Append { reply, .. }, Answer::Seq(_)) => Outcome::Appended(
            reply,
            Err(StoreError::CommitFailed {
                message: "a grouped append was answered as an event".into(),
            }),
        ),
        (WriteOp::Exec { reply, .. } | WriteOp::Announce { reply, .. }, Answer::Ids(_)) => {
            Outcome::Executed(
                reply,
                Err(StoreError::CommitFailed {
                    message: "a grouped event was answered as an append".into(),
                }),
            )
        }
        (WriteOp::Create { reply, .. }, _) => Outcome::Created(
            reply,
            Err(StoreError::CommitFailed {
                message: "a session was made in a group".into(),
            }),
        ),
    }
}

/// A run of groupable ops (see [`groupable`]): the appends as [`append_grouped`] writes
/// them, the events as [`events_grouped`] does; each op's answer, in order.
async fn write_grouped(conn: &mut SqliteConnection, run: &[WriteOp]) -> Result<Vec<Answer>> {
    // Both give one entry per op of the run, at its position.
    let ids = append_grouped(conn, run).await?;
    let seqs = events_grouped(conn, run, &ids).await?;
    run.iter()
        .zip(ids.into_iter().zip(seqs))
        .map(|(op, (ids, seq))| match op {
            WriteOp::Append { .. } => Some(Answer::Ids(ids)),
            _ => seq.map(Answer::Seq),
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| StoreError::CommitFailed {
            message: "a grouped write answered fewer ops than it was given".into(),
        })
}

/// An event insert, as an op holds it.
#[derive(Clone, Copy)]
struct EventInsert<'a> {
    session_id: &'a str,
    body: &'a str,
    now: i64,
    /// See [`Stmt::AppendEvent`]: the body names the row the op before appends.
    names_row: bool,
}

/// An event insert's session, body and time; `None` for any other op.
fn event(op: &WriteOp) -> Option<EventInsert<'_>> {
    match op {
        WriteOp::Exec {
            stmt:
                Stmt::AppendEvent {
                    session_id,
                    body,
                    now,
                    names_row,
                },
            ..
        }
        | WriteOp::Announce {
            stmt:
                Stmt::AppendEvent {
                    session_id,
                    body,
                    now,
                    names_row,
                },
            ..
        } => Some(EventInsert {
            session_id,
            body,
            now: *now,
            names_row: *names_row,
        }),
        _ => None,
    }
}

/// The id of the last row `op` appended, as `ids` answers it: what an event just after
/// it that names its row names ([`Stmt::AppendEvent`]'s `names_row`).
fn last_row(op: Option<&WriteOp>, ids: Option<&Vec<(i64, i64)>>) -> Result<i64> {
    match (op, ids.and_then(|ids| ids.last())) {
        (Some(WriteOp::Append { .. }), Some(&(id, _))) => Ok(id),
        _ => Err(StoreError::CommitFailed {
            message: "an event names the row of an append that did not come before it".into(),
        }),
    }
}

/// Rows a grouped event insert writes per statement: 4 parameters each.
const EVENTS_PER_INSERT: usize = 128;

/// The event inserts among `run`, in order: per session its last number read once, then
/// multi-row inserts numbered on from it (under SQLite's write lock, which the
/// transaction holds from its start, so no other writer numbers in between). Returns
/// each op's number (`None` for an op that is not an event insert). `ids` are the
/// appends' rows as written (by op), for the events that name them.
async fn events_grouped(
    conn: &mut SqliteConnection,
    run: &[WriteOp],
    ids: &[Vec<(i64, i64)>],
) -> Result<Vec<Option<i64>>> {
    let mut seqs = vec![None; run.len()];
    // Each session's events, by their positions in `run`.
    let sessions = by_session(
        run.iter()
            .enumerate()
            .filter_map(|(at, op)| event(op).map(|e| (e.session_id, at))),
    );
    // The bodies that name their rows, made whole now that the rows have ids.
    let mut named: Vec<Option<String>> = vec![None; run.len()];
    for (at, op) in run.iter().enumerate() {
        if let Some(e) = event(op).filter(|e| e.names_row) {
            let before = at.checked_sub(1);
            let id = last_row(
                before.and_then(|b| run.get(b)),
                before.and_then(|b| ids.get(b)),
            )?;
            named[at] = Some(rows::naming_row(e.body, id)?);
        }
    }
    for (session_id, list) in &sessions {
        let (last,): (Option<i64>,) = sqlx::query_as(rows::LAST_EVENT_SEQ)
            .bind(*session_id)
            .fetch_one(&mut *conn)
            .await?;
        let mut next = last.unwrap_or(0) + 1;
        for chunk in shaped_chunks(list, EVENTS_PER_INSERT) {
            let sql = values(
                "INSERT INTO events (session_id, seq, body, created_at) VALUES ",
                chunk.len(),
                4,
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for &at in chunk {
                if let Some(e) = event(&run[at]) {
                    let body = named[at].as_deref().unwrap_or(e.body);
                    query = query.bind(e.session_id).bind(next).bind(body).bind(e.now);
                    seqs[at] = Some(next);
                    next += 1;
                }
            }
            query.execute(&mut *conn).await?;
        }
    }
    Ok(seqs)
}

/// One op's rows, when a batch runs op by op (the Postgres store appends in one
/// statement instead). Each row takes the session's next seq under the session row's
/// lock. Takes the rows by value: each body moves into its statement uncopied.
async fn append_rows(
    conn: &mut SqliteConnection,
    rows: Vec<sql::NewRow>,
) -> Result<Vec<(i64, i64)>> {
    let mut ids = Vec::with_capacity(rows.len());
    for row in rows {
        let seq: Option<(i64,)> = sqlx::query_as(sql::BUMP_SESSION)
            .bind(&row.session_id)
            .bind(row.now)
            .bind(row.results)
            .bind(row.errors)
            .bind(1_i64)
            .fetch_optional(&mut *conn)
            .await?;
        let Some((seq,)) = seq else {
            return Err(StoreError::SessionNotFound {
                id: row.session_id.clone(),
            });
        };
        let (id,): (i64,) = sqlx::query_as(sql::INSERT_MESSAGE)
            .bind(&row.session_id)
            .bind(seq)
            .bind(row.role)
            .bind(&row.call_id)
            .bind(row.body)
            .bind(row.now)
            .fetch_one(&mut *conn)
            .await?;
        for blob in &row.blobs {
            sqlx::query(sql::INSERT_MESSAGE_BLOB)
                .bind(id)
                .bind(blob)
                .bind(row.inline.get(blob))
                .execute(&mut *conn)
                .await?;
        }
        ids.push((id, seq));
    }
    Ok(ids)
}

/// Rows a grouped insert writes per statement: 6 parameters each, well under SQLite's
/// limit of 32,766.
const ROWS_PER_INSERT: usize = 128;

/// The appends of several callers, in order: per session one counter bump by the number
/// of its rows, then multi-row inserts. Returns each op's `(id, seq)`s. Errs on anything
/// (an unknown session, a constraint), and the caller then runs the ops one by one.
async fn append_grouped(
    conn: &mut SqliteConnection,
    ops: &[WriteOp],
) -> Result<Vec<Vec<(i64, i64)>>> {
    let rows: Vec<&[NewRow]> = ops
        .iter()
        .map(|op| match op {
            WriteOp::Append { rows, .. } => rows.as_slice(),
            _ => &[],
        })
        .collect();
    // Each session's rows, as (op, row).
    let sessions = by_session(rows.iter().enumerate().flat_map(|(o, op_rows)| {
        op_rows
            .iter()
            .enumerate()
            .map(move |(r, row)| (row.session_id.as_str(), (o, r)))
    }));
    let mut out: Vec<Vec<(i64, i64)>> = rows.iter().map(|r| vec![(0, 0); r.len()]).collect();
    let mut links: Vec<(i64, &String, Option<&Vec<u8>>)> = Vec::new();
    for (session_id, list) in &sessions {
        let row = |&(o, r): &(usize, usize)| &rows[o][r];
        let count = i64::try_from(list.len()).unwrap_or(i64::MAX);
        let results: i64 = list.iter().map(|at| row(at).results).sum();
        let errors: i64 = list.iter().map(|at| row(at).errors).sum();
        let now = list.iter().map(|at| row(at).now).max().unwrap_or_default();
        let last: Option<(i64,)> = sqlx::query_as(rows::BUMP_SESSION)
            .bind(*session_id)
            .bind(now)
            .bind(results)
            .bind(errors)
            .bind(count)
            .fetch_optional(&mut *conn)
            .await?;
        let Some((last,)) = last else {
            return Err(StoreError::SessionNotFound {
                id: (*session_id).to_owned(),
            });
        };
        let mut base = last - count + 1;
        for chunk in shaped_chunks(list, ROWS_PER_INSERT) {
            let mut sql = values(
                "INSERT INTO messages (session_id, seq, role, call_id, body, created_at) VALUES ",
                chunk.len(),
                6,
            );
            sql.push_str(" RETURNING id, seq");
            let mut query = sqlx::query_as::<_, (i64, i64)>(sqlx::AssertSqlSafe(sql));
            for (i, at) in chunk.iter().enumerate() {
                let r = row(at);
                query = query
                    .bind(&r.session_id)
                    .bind(base + i64::try_from(i).unwrap_or(i64::MAX))
                    .bind(r.role)
                    .bind(&r.call_id)
                    .bind(&r.body)
                    .bind(r.now);
            }
            // RETURNING's order is not promised: match rows by their seq.
            let stored = query.fetch_all(&mut *conn).await?;
            if stored.len() != chunk.len() {
                return Err(StoreError::CommitFailed {
                    message: format!("{} of {} rows inserted", stored.len(), chunk.len()),
                });
            }
            for (id, seq) in stored {
                let i = usize::try_from(seq - base)
                    .ok()
                    .filter(|i| *i < chunk.len());
                let Some(i) = i else {
                    return Err(StoreError::CommitFailed {
                        message: format!("an insert returned seq {seq}"),
                    });
                };
                let (o, r) = chunk[i];
                out[o][r] = (id, seq);
                for blob in &rows[o][r].blobs {
                    links.push((id, blob, rows[o][r].inline.get(blob)));
                }
            }
            base += i64::try_from(chunk.len()).unwrap_or(i64::MAX);
        }
    }
    // The rows' blobs (a raw payload kept in its row among them), grouped likewise.
    for chunk in shaped_chunks(&links, LINKS_PER_INSERT) {
        let mut sql = values(
            "INSERT INTO message_blobs (message_id, blob, bytes) VALUES ",
            chunk.len(),
            3,
        );
        sql.push_str(" ON CONFLICT DO NOTHING");
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (id, blob, bytes) in chunk {
            query = query.bind(*id).bind(*blob).bind(*bytes);
        }
        query.execute(&mut *conn).await?;
    }
    Ok(out)
}

/// Blob links a grouped insert writes per statement: 3 parameters each.
const LINKS_PER_INSERT: usize = 128;

/// `list` in chunks whose lengths are powers of two, largest first, at most `max` (a
/// power of two): 13 rows go as 8, 4 and 1. A multi-row insert's SQL depends on its row
/// count, and SQLite parses every text sqlx's statement cache does not hold: with any
/// length from 1 to 128 a busy writer's batches kept missing it (callgrind of the
/// gateway: SQL parsing was a tenth of its instructions); these give 8 texts per table.
fn shaped_chunks<T>(list: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = list;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let fits = rest.len().min(max);
        // The largest power of two not above `fits` (which is at least 1).
        let size = 1 << (usize::BITS - 1 - fits.leading_zeros());
        let (chunk, after) = rest.split_at(size);
        rest = after;
        Some(chunk)
    })
}

/// `head` followed by `rows` tuples of `cols` numbered parameters each
/// (`($1,$2),($3,$4)`): the multi-row inserts' SQL.
fn values(head: &str, rows: usize, cols: usize) -> String {
    use std::fmt::Write as _;
    let mut sql = String::from(head);
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push('(');
        for c in 1..=cols {
            if c > 1 {
                sql.push(',');
            }
            // Writing to a String cannot fail.
            let _ = write!(sql, "${}", i * cols + c);
        }
        sql.push(')');
    }
    sql
}

/// An event appended under the writer's lock ([`rows::INSERT_EVENT`]): its number.
async fn insert_event(
    conn: &mut SqliteConnection,
    session_id: &str,
    body: &str,
    now: i64,
) -> Result<i64> {
    let (seq,): (i64,) = sqlx::query_as(rows::INSERT_EVENT)
        .bind(session_id)
        .bind(body)
        .bind(now)
        .fetch_one(&mut *conn)
        .await?;
    Ok(seq)
}

/// `items` gathered by session, sessions in first-seen order and each one's items in
/// order (a batch rarely spans more than a few sessions: a scan beats a map).
fn by_session<'a, T>(items: impl Iterator<Item = (&'a str, T)>) -> Vec<(&'a str, Vec<T>)> {
    let mut sessions: Vec<(&str, Vec<T>)> = Vec::new();
    for (session_id, item) in items {
        match sessions.iter_mut().find(|(id, _)| *id == session_id) {
            Some((_, list)) => list.push(item),
            None => sessions.push((session_id, vec![item])),
        }
    }
    sessions
}

/// `stmt` with the row `row` named in its body when it is an event that names the row
/// before it; an error when it does and there is none (its append failed).
fn name_row(stmt: Stmt, row: Option<i64>) -> Result<Stmt> {
    match stmt {
        Stmt::AppendEvent {
            session_id,
            body,
            now,
            names_row: true,
        } => {
            let id = row.ok_or_else(|| StoreError::CommitFailed {
                message: "the result this event announces was not stored".into(),
            })?;
            Ok(Stmt::AppendEvent {
                session_id,
                body: rows::naming_row(&body, id)?,
                now,
                names_row: false,
            })
        }
        other => Ok(other),
    }
}

async fn exec(conn: &mut SqliteConnection, stmt: Stmt) -> Result<Returned> {
    Ok(match stmt {
        // The number is computed by the insert under SQLite's write lock, so writers in
        // several processes never collide or leave a gap.
        // An event that still names no row is made whole by `name_row` before it runs.
        Stmt::AppendEvent {
            session_id,
            body,
            now,
            ..
        } => Returned::Seq(insert_event(conn, &session_id, &body, now).await?),
        Stmt::PutSuspension { row, now } => {
            put_suspension_row(conn, row, now).await?;
            Returned::Nothing
        }
        Stmt::ClaimSuspension { id } => Returned::Body(claim_suspension_row(conn, &id).await?),
        // Inside this op's savepoint, so a delete is all or nothing.
        Stmt::DeleteSession { id } => {
            let found = delete_tree(conn, &id).await?;
            Returned::Seq(i64::try_from(found).unwrap_or(i64::MAX))
        }
        Stmt::FinishSuspension { id } => {
            finish_suspension_row(conn, &id).await?;
            Returned::Nothing
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_core::{CallRef, ToolResult, Value};

    /// A database written before the counts were kept gets them from its messages when
    /// it is opened (migration 4's backfill), by each result's status, not its text.
    #[tokio::test]
    async fn an_older_database_gets_its_counts_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let opts = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
        rows::migrator(&STEPS[..3]).run(&mut conn).await.unwrap();
        let ok = ToolResult::success(CallRef::new("c1", "t"), Value::text(r#""status":"error""#));
        let failed = ToolResult::error(CallRef::new("c2", "t"), "no");
        sqlx::query(
            "INSERT INTO sessions (id, created_at, updated_at, last_seq) VALUES ('old', 1, 1, 3)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        let bodies = [
            ("user", r#"{"text":"hi"}"#.to_owned()),
            ("tool_result", serde_json::to_string(&ok).unwrap()),
            ("tool_result", serde_json::to_string(&failed).unwrap()),
        ];
        for (seq, (role, body)) in bodies.into_iter().enumerate() {
            sqlx::query(
                "INSERT INTO messages (session_id, seq, role, body, created_at) VALUES ('old', $1, $2, $3, 1)",
            )
            .bind(i64::try_from(seq).unwrap() + 1)
            .bind(role)
            .bind(body)
            .execute(&mut conn)
            .await
            .unwrap();
        }
        conn.close().await.unwrap();

        let history = SqliteHistory::open(&path).await.unwrap();
        let s = history.session("old").await.unwrap().unwrap();
        assert_eq!((s.call_count, s.pending_count, s.error_count), (2, 0, 1));
    }

    #[test]
    fn grouped_inserts_number_their_parameters_row_by_row() {
        assert_eq!(values("V ", 2, 3), "V ($1,$2,$3),($4,$5,$6)");
        assert_eq!(values("V ", 1, 1), "V ($1)");
        let lengths = |n: usize, max: usize| {
            let list: Vec<usize> = (0..n).collect();
            let chunks: Vec<&[usize]> = shaped_chunks(&list, max).collect();
            // Every item once, in order.
            assert_eq!(chunks.concat(), list);
            chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
        };
        assert_eq!(lengths(13, 128), [8, 4, 1]);
        assert_eq!(lengths(300, 128), [128, 128, 32, 8, 4]);
        assert_eq!(lengths(1, 128), [1]);
        assert!(lengths(0, 128).is_empty());
    }

    #[test]
    fn items_gather_by_session_in_first_seen_order() {
        let got = by_session([("b", 1), ("a", 2), ("b", 3)].into_iter());
        assert_eq!(got, [("b", vec![1, 3]), ("a", vec![2])]);
    }
}
