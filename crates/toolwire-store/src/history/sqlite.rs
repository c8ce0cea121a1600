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
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection, SqlSafeStr};
use tokio::sync::{mpsc, oneshot};

use toolwire_core::{Event, EventKind, Message, PendingCall};

use super::model::{ROLE_TOOL_RESULT, body_json, corrupt_row, from_row, role, validate_ids};
use super::{
    EventLog, HistoryStore, NewSession, Page, Session, StoredMessage, StoredResult, SuspensionStore,
};
use crate::error::{Result, StoreError};
use crate::ids::{BlobKey, validate_id};
use crate::refs::message_blob_refs;

/// Most operations committed in one transaction.
const MAX_BATCH: usize = 512;
const QUEUE_DEPTH: usize = 4096;
const READERS: u32 = 4;
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

fn migrator() -> Migrator {
    let migration = |version, name: &str, sql: &'static str| {
        Migration::new(
            version,
            name.to_owned().into(),
            MigrationType::Simple,
            sql.into_sql_str(),
            false,
        )
    };
    Migrator::with_migrations(vec![
        migration(
            1,
            "init",
            include_str!("../../migrations/sqlite/0001_init.sql"),
        ),
        migration(
            2,
            "events_suspensions",
            include_str!("../../migrations/sqlite/0002_events_suspensions.sql"),
        ),
        migration(
            3,
            "suspension_state",
            include_str!("../../migrations/sqlite/0003_suspension_state.sql"),
        ),
    ])
}

#[derive(Debug, Clone)]
pub struct SqliteHistory {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    writes: mpsc::Sender<WriteOp>,
    read: SqlitePool,
}

type Reply<T> = oneshot::Sender<Result<T>>;

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
}

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
    },
    PutSuspension {
        id: String,
        session_id: String,
        body: String,
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

/// An append, serialized on the caller's task so the writer only writes.
#[derive(Debug)]
struct NewRow {
    session_id: String,
    role: &'static str,
    call_id: Option<String>,
    body: String,
    blobs: BTreeSet<String>,
    now: i64,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
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
            .foreign_keys(true);
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
        let mut conn = SqliteConnection::connect_with(&opts)
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
        tokio::spawn(run_writer(conn, queue));
        Ok(SqliteHistory {
            inner: Arc::new(Inner { writes, read }),
        })
    }

    async fn submit<T>(&self, make: impl FnOnce(Reply<T>) -> WriteOp) -> Result<T> {
        let (reply, answer) = oneshot::channel();
        self.inner
            .writes
            .send(make(reply))
            .await
            .map_err(|_| StoreError::WriterGone)?;
        answer.await.map_err(|_| StoreError::WriterGone)?
    }
}

fn generated_session_id() -> String {
    toolwire_core::ids::new_id("s")
}

type SessionRow = (String, Option<String>, Option<String>, i64, i64, i64);

fn session_from_row(row: SessionRow) -> Session {
    let (id, parent_id, title, created_at_ms, updated_at_ms, message_count) = row;
    Session {
        id,
        parent_id,
        title,
        created_at_ms,
        updated_at_ms,
        message_count,
    }
}

#[async_trait]
impl HistoryStore for SqliteHistory {
    async fn create_session(&self, new: NewSession) -> Result<Session> {
        let id = match new.id {
            Some(id) => {
                validate_id("session id", &id)?;
                id
            }
            None => generated_session_id(),
        };
        if let Some(parent) = &new.parent_id {
            validate_id("parent session id", parent)?;
        }
        let now = now_ms();
        let session = Session {
            id,
            parent_id: new.parent_id,
            title: new.title,
            created_at_ms: now,
            updated_at_ms: now,
            message_count: 0,
        };
        let copy = session.clone();
        self.submit(|reply| WriteOp::Create {
            session: copy,
            reply,
        })
        .await?;
        Ok(session)
    }

    async fn session(&self, id: &str) -> Result<Option<Session>> {
        validate_id("session id", id)?;
        let sql = "SELECT id, parent_id, title, created_at, updated_at, last_seq FROM sessions WHERE id = $1";
        let row: Option<SessionRow> = sqlx::query_as(sql)
            .bind(id)
            .fetch_optional(&self.inner.read)
            .await?;
        Ok(row.map(session_from_row))
    }

    async fn list_sessions(&self, page: Page) -> Result<Vec<Session>> {
        let sql = "SELECT id, parent_id, title, created_at, updated_at, last_seq FROM sessions \
                   ORDER BY updated_at DESC, id DESC LIMIT $1 OFFSET $2";
        let rows: Vec<SessionRow> = sqlx::query_as(sql)
            .bind(i64::from(page.limit))
            .bind(i64::from(page.offset))
            .fetch_all(&self.inner.read)
            .await?;
        Ok(rows.into_iter().map(session_from_row).collect())
    }

    async fn child_sessions(&self, parent_id: &str) -> Result<Vec<Session>> {
        validate_id("session id", parent_id)?;
        let sql = "SELECT id, parent_id, title, created_at, updated_at, last_seq FROM sessions \
                   WHERE parent_id = $1 ORDER BY created_at, id";
        let rows: Vec<SessionRow> = sqlx::query_as(sql)
            .bind(parent_id)
            .fetch_all(&self.inner.read)
            .await?;
        Ok(rows.into_iter().map(session_from_row).collect())
    }

    async fn append(&self, session_id: &str, content: Message) -> Result<StoredMessage> {
        let mut appended = self.append_many(session_id, vec![content]).await?;
        appended.pop().ok_or(StoreError::WriterGone)
    }

    async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<Message>,
    ) -> Result<Vec<StoredMessage>> {
        validate_id("session id", session_id)?;
        let now = now_ms();
        let mut rows = Vec::with_capacity(contents.len());
        for content in &contents {
            validate_ids(content)?;
            rows.push(NewRow {
                session_id: session_id.to_owned(),
                role: role(content),
                call_id: content.call_id().map(str::to_owned),
                body: body_json(content)?,
                blobs: message_blob_refs(content),
                now,
            });
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.submit(|reply| WriteOp::Append { rows, reply }).await?;
        Ok(contents
            .into_iter()
            .zip(ids)
            .map(|(content, (id, seq))| StoredMessage {
                id,
                session_id: session_id.to_owned(),
                seq,
                created_at_ms: now,
                content,
            })
            .collect())
    }

    async fn delete_session(&self, id: &str) -> Result<bool> {
        validate_id("session id", id)?;
        let stmt = Stmt::DeleteSession { id: id.to_owned() };
        match self.submit(|reply| WriteOp::Exec { stmt, reply }).await? {
            Returned::Seq(deleted) => Ok(deleted > 0),
            _ => Ok(false),
        }
    }

    async fn load(&self, session_id: &str) -> Result<Vec<StoredMessage>> {
        validate_id("session id", session_id)?;
        let sql = "SELECT id, seq, role, body, created_at FROM messages WHERE session_id = $1 ORDER BY seq";
        let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(sql)
            .bind(session_id)
            .fetch_all(&self.inner.read)
            .await?;
        if rows.is_empty() && self.session(session_id).await?.is_none() {
            return Err(StoreError::SessionNotFound {
                id: session_id.to_owned(),
            });
        }
        rows.into_iter()
            .map(|(id, seq, role, body, created_at_ms)| {
                let content =
                    from_row(&role, &body).map_err(|m| corrupt_row(session_id, seq, m))?;
                Ok(StoredMessage {
                    id,
                    session_id: session_id.to_owned(),
                    seq,
                    created_at_ms,
                    content,
                })
            })
            .collect()
    }

    async fn find_result(&self, call_id: &str) -> Result<Option<StoredResult>> {
        validate_id("call id", call_id)?;
        let sql = "SELECT id, session_id, seq, body FROM messages \
                   WHERE call_id = $1 AND role = $2 ORDER BY id DESC LIMIT 1";
        let row: Option<(i64, String, i64, String)> = sqlx::query_as(sql)
            .bind(call_id)
            .bind(ROLE_TOOL_RESULT)
            .fetch_optional(&self.inner.read)
            .await?;
        let Some((message_id, session_id, seq, body)) = row else {
            return Ok(None);
        };
        let result = serde_json::from_str(&body)
            .map_err(|e| corrupt_row(&session_id, seq, e.to_string()))?;
        Ok(Some(StoredResult {
            message_id,
            session_id,
            seq,
            result,
        }))
    }

    async fn referenced_blobs(&self) -> Result<BTreeSet<BlobKey>> {
        let rows: Vec<(String,)> = sqlx::query_as("SELECT DISTINCT blob FROM message_blobs")
            .fetch_all(&self.inner.read)
            .await?;
        // A key that fails to parse was never written by us; skipping it cannot lose data
        // because gc only deletes blobs it lists from the store itself.
        Ok(rows
            .into_iter()
            .filter_map(|(k,)| BlobKey::parse(&k).ok())
            .collect())
    }
}

#[async_trait]
impl EventLog for SqliteHistory {
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event> {
        validate_id("session id", session_id)?;
        let mut event = Event {
            session_id: session_id.to_owned(),
            seq: 0,
            at,
            kind,
        };
        let stmt = Stmt::AppendEvent {
            session_id: session_id.to_owned(),
            body: serde_json::to_string(&event)?,
            now: now_ms(),
        };
        match self.submit(|reply| WriteOp::Exec { stmt, reply }).await? {
            Returned::Seq(seq) => event.seq = u64::try_from(seq).unwrap_or_default(),
            _ => return Err(StoreError::WriterGone),
        }
        Ok(event)
    }

    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>> {
        validate_id("session id", session_id)?;
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, body FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(session_id)
        .bind(i64::try_from(after).unwrap_or(i64::MAX))
        .fetch_all(&self.inner.read)
        .await?;
        rows.into_iter()
            .map(|(seq, body)| {
                let mut event: Event =
                    serde_json::from_str(&body).map_err(|e| StoreError::CorruptEvent {
                        session_id: session_id.to_owned(),
                        seq,
                        message: e.to_string(),
                    })?;
                // The row's number is the truth; the body's is the placeholder it was
                // written with.
                event.seq = u64::try_from(seq).unwrap_or_default();
                Ok(event)
            })
            .collect()
    }

    async fn last_event_seq(&self, session_id: &str) -> Result<u64> {
        validate_id("session id", session_id)?;
        let row: (Option<i64>,) =
            sqlx::query_as("SELECT MAX(seq) FROM events WHERE session_id = $1")
                .bind(session_id)
                .fetch_one(&self.inner.read)
                .await?;
        Ok(row.0.and_then(|s| u64::try_from(s).ok()).unwrap_or(0))
    }
}

fn pending_from_row(id: &str, body: &str, state: &str) -> Result<PendingCall> {
    let mut pending: PendingCall =
        serde_json::from_str(body).map_err(|e| StoreError::CorruptSuspension {
            id: id.to_owned(),
            message: e.to_string(),
        })?;
    pending.resolving = state == STATE_RESOLVING;
    Ok(pending)
}

const STATE_RESOLVING: &str = "resolving";

#[async_trait]
impl SuspensionStore for SqliteHistory {
    async fn put_suspension(&self, pending: &PendingCall) -> Result<()> {
        validate_id("suspension id", &pending.suspension.id)?;
        validate_id("session id", &pending.session_id)?;
        let stmt = Stmt::PutSuspension {
            id: pending.suspension.id.clone(),
            session_id: pending.session_id.clone(),
            body: serde_json::to_string(pending)?,
            now: now_ms(),
        };
        self.submit(|reply| WriteOp::Exec { stmt, reply })
            .await
            .map(drop)
    }

    async fn claim_suspension(&self, id: &str) -> Result<Option<PendingCall>> {
        validate_id("suspension id", id)?;
        let stmt = Stmt::ClaimSuspension { id: id.to_owned() };
        match self.submit(|reply| WriteOp::Exec { stmt, reply }).await? {
            Returned::Body(Some(body)) => pending_from_row(id, &body, STATE_RESOLVING).map(Some),
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
        validate_id("session id", session_id)?;
        let rows: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT id, body, state FROM suspensions WHERE session_id = $1 ORDER BY created_at, id",
        )
        .bind(session_id)
        .fetch_all(&self.inner.read)
        .await?;
        rows.iter()
            .map(|(id, body, state)| pending_from_row(id, body, state))
            .collect()
    }
}

async fn run_writer(mut conn: SqliteConnection, mut queue: mpsc::Receiver<WriteOp>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        write_batch(&mut conn, std::mem::take(&mut batch)).await;
    }
    let _ = conn.close().await;
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

/// Runs each op in its own savepoint so one bad op (an unknown session) fails alone,
/// commits once, and only then answers: an `Ok` is never sent for an uncommitted row.
async fn write_batch(conn: &mut SqliteConnection, ops: Vec<WriteOp>) {
    let mut outcomes = Vec::with_capacity(ops.len());
    let commit = async {
        // IMMEDIATE takes the write lock up front: a deferred transaction that read first
        // could not upgrade once another process committed (SQLITE_BUSY_SNAPSHOT, which
        // busy_timeout does not retry).
        let mut tx = conn
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| e.to_string())?;
        for op in ops {
            let mut sp = Connection::begin(&mut *tx)
                .await
                .map_err(|e| e.to_string())?;
            let (outcome, ok) = match op {
                WriteOp::Create { session, reply } => {
                    let r = create(&mut sp, &session).await;
                    let ok = r.is_ok();
                    (Outcome::Created(reply, r), ok)
                }
                WriteOp::Append { rows, reply } => {
                    let r = append_rows(&mut sp, &rows).await;
                    let ok = r.is_ok();
                    (Outcome::Appended(reply, r), ok)
                }
                WriteOp::Exec { stmt, reply } => {
                    let r = exec(&mut sp, stmt).await;
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
        tx.commit().await.map_err(|e| e.to_string())
    }
    .await;
    for outcome in outcomes {
        outcome.send(&commit);
    }
}

async fn create(conn: &mut SqliteConnection, s: &Session) -> Result<()> {
    if let Some(parent) = &s.parent_id {
        let found: Option<(i64,)> = sqlx::query_as("SELECT 1 FROM sessions WHERE id = $1")
            .bind(parent)
            .fetch_optional(&mut *conn)
            .await?;
        if found.is_none() {
            return Err(StoreError::ParentNotFound { id: parent.clone() });
        }
    }
    let sql = "INSERT INTO sessions (id, parent_id, title, created_at, updated_at, last_seq) \
               VALUES ($1, $2, $3, $4, $5, 0)";
    let inserted = sqlx::query(sql)
        .bind(&s.id)
        .bind(&s.parent_id)
        .bind(&s.title)
        .bind(s.created_at_ms)
        .bind(s.updated_at_ms)
        .execute(&mut *conn)
        .await;
    match inserted {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
            Err(StoreError::SessionExists { id: s.id.clone() })
        }
        Err(e) => Err(e.into()),
    }
}

async fn exec(conn: &mut SqliteConnection, stmt: Stmt) -> Result<Returned> {
    match stmt {
        // The number is the session's last plus one, computed by the insert itself, so
        // writers in several processes never collide or leave a gap.
        Stmt::AppendEvent {
            session_id,
            body,
            now,
        } => {
            let (seq,): (i64,) = sqlx::query_as(
                "INSERT INTO events (session_id, seq, body, created_at) \
                 SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3 FROM events WHERE session_id = $1 \
                 RETURNING seq",
            )
            .bind(&session_id)
            .bind(body)
            .bind(now)
            .fetch_one(&mut *conn)
            .await?;
            Ok(Returned::Seq(seq))
        }
        Stmt::PutSuspension {
            id,
            session_id,
            body,
            now,
        } => {
            sqlx::query(
                "INSERT INTO suspensions (id, session_id, body, created_at, state) \
                 VALUES ($1, $2, $3, $4, 'pending') \
                 ON CONFLICT (id) DO UPDATE SET body = excluded.body",
            )
            .bind(id)
            .bind(session_id)
            .bind(body)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            Ok(Returned::Nothing)
        }
        // One statement, so two processes answering at once cannot both claim it.
        Stmt::ClaimSuspension { id } => {
            let row: Option<(String,)> = sqlx::query_as(
                "UPDATE suspensions SET state = 'resolving' \
                 WHERE id = $1 AND state = 'pending' RETURNING body",
            )
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
            Ok(Returned::Body(row.map(|(body,)| body)))
        }
        // One savepoint, so a delete is all or nothing; blobs stay for `gc`.
        Stmt::DeleteSession { id } => {
            // The session and its descendants (subagent sessions), as a static statement.
            macro_rules! in_tree {
                ($stmt:literal) => {
                    concat!(
                        "WITH RECURSIVE tree(id) AS (SELECT $1 UNION ALL ",
                        "SELECT s.id FROM sessions s JOIN tree ON s.parent_id = tree.id) ",
                        $stmt
                    )
                };
            }
            let mut found = 0;
            for stmt in [
                in_tree!(
                    "DELETE FROM message_blobs WHERE message_id IN \
                     (SELECT id FROM messages WHERE session_id IN (SELECT id FROM tree))"
                ),
                in_tree!("DELETE FROM messages WHERE session_id IN (SELECT id FROM tree)"),
                in_tree!("DELETE FROM events WHERE session_id IN (SELECT id FROM tree)"),
                in_tree!("DELETE FROM suspensions WHERE session_id IN (SELECT id FROM tree)"),
                in_tree!("DELETE FROM sessions WHERE id IN (SELECT id FROM tree)"),
            ] {
                let done = sqlx::query(stmt).bind(&id).execute(&mut *conn).await?;
                found = done.rows_affected();
            }
            Ok(Returned::Seq(i64::try_from(found).unwrap_or(i64::MAX)))
        }
        Stmt::FinishSuspension { id } => {
            sqlx::query("DELETE FROM suspensions WHERE id = $1")
                .bind(id)
                .execute(&mut *conn)
                .await?;
            Ok(Returned::Nothing)
        }
    }
}

async fn append_rows(conn: &mut SqliteConnection, rows: &[NewRow]) -> Result<Vec<(i64, i64)>> {
    let mut ids = Vec::with_capacity(rows.len());
    for row in rows {
        ids.push(append(conn, row).await?);
    }
    Ok(ids)
}

async fn append(conn: &mut SqliteConnection, row: &NewRow) -> Result<(i64, i64)> {
    let seq: Option<(i64,)> =
        sqlx::query_as("UPDATE sessions SET last_seq = last_seq + 1, updated_at = $2 WHERE id = $1 RETURNING last_seq")
            .bind(&row.session_id)
            .bind(row.now)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((seq,)) = seq else {
        return Err(StoreError::SessionNotFound {
            id: row.session_id.clone(),
        });
    };
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO messages (session_id, seq, role, call_id, body, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(&row.session_id)
    .bind(seq)
    .bind(row.role)
    .bind(&row.call_id)
    .bind(&row.body)
    .bind(row.now)
    .fetch_one(&mut *conn)
    .await?;
    for blob in &row.blobs {
        sqlx::query(
            "INSERT INTO message_blobs (message_id, blob) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(blob)
        .execute(&mut *conn)
        .await?;
    }
    Ok((id, seq))
}
