//! The Postgres `HistoryStore`, `EventLog` and `SuspensionStore`, for several toolwire
//! processes on several machines sharing one history.
//!
//! Every write is its own transaction, and Postgres's row locks do what SQLite's single
//! writer does there: an append locks its session's row to take the next seq, an event
//! takes a per-session advisory lock to take the next event number. Each event also
//! sends `NOTIFY toolwire_events` (delivered at commit), so other instances wake their
//! subscribers at once instead of at their next poll.

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::Connection;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgListener, PgPool, PgPoolOptions};
use tokio::sync::{broadcast, oneshot};

use toolwire_core::{Event, EventKind, Message, PendingCall};

use super::rows::{self, STATE_RESOLVING, now_ms};
use super::{
    EventLog, EventWake, HistoryReader, HistoryStore, NewSession, Page, RawStoredMessage, Session,
    StoredMessage, StoredResult, SuspensionStore,
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
    ])
}

/// The history in Postgres: for several server instances sharing one store, with events announced by NOTIFY.
#[derive(Debug, Clone)]
pub struct PgHistory {
    pool: PgPool,
    wake: broadcast::Sender<EventWake>,
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
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(opts);
        let (wake, _) = broadcast::channel(WAKE_BUFFER);
        let mut listener = PgListener::connect_with(&pool).await?;
        listener.listen(EVENTS_CHANNEL).await?;
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(forward_wakeups(listener, wake.clone(), stopped));
        Ok(PgHistory {
            pool,
            wake,
            _stop: Arc::new(stop),
        })
    }
}

/// Turns notifications into wake-ups until every clone of the history is dropped (which
/// drops `stop`'s sender). `PgListener` reconnects by itself; what is sent while it is
/// away is lost, which subscribers cover by polling the log when idle.
async fn forward_wakeups(
    mut listener: PgListener,
    wake: broadcast::Sender<EventWake>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let received = tokio::select! {
            _ = &mut stop => return,
            received = listener.try_recv() => received,
        };
        match received {
            Ok(Some(note)) => {
                if let Some(w) = parse_wake(note.payload()) {
                    // No subscriber now is fine: a later one starts from the log.
                    let _ = wake.send(w);
                }
            }
            // The connection dropped; the next try_recv reconnects.
            Ok(None) => {}
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

fn parse_wake(payload: &str) -> Option<EventWake> {
    let (seq, session_id) = payload.split_once(' ')?;
    Some(EventWake {
        session_id: session_id.to_owned(),
        seq: seq.parse().ok()?,
    })
}

rows::statements!(PgConnection, PgPool);

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
        read_messages_raw(&self.pool, session_id).await
    }
    async fn find_result(&self, call_id: &str) -> Result<Option<StoredResult>> {
        read_result(&self.pool, call_id).await
    }
    async fn result_with_blob(&self, key: &BlobKey) -> Result<Option<StoredResult>> {
        read_result_with_blob(&self.pool, key).await
    }
    async fn referenced_blobs(&self) -> Result<BTreeSet<BlobKey>> {
        read_blob_refs(&self.pool).await
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
        let now = now_ms();
        let new = rows::new_rows(session_id, &contents, now)?;
        if new.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self.pool.begin().await?;
        let ids = append_rows(&mut tx, new).await?;
        tx.commit().await?;
        Ok(rows::stored_messages(session_id, contents, ids, now))
    }
    async fn delete_session(&self, id: &str) -> Result<bool> {
        validate_id("session id", id)?;
        let mut tx = self.pool.begin().await?;
        let found = delete_tree(&mut tx, id).await?;
        tx.commit().await?;
        Ok(found > 0)
    }
}

#[async_trait]
impl EventLog for PgHistory {
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event> {
        let (mut event, body) = rows::new_event(session_id, at, kind)?;
        let mut tx = self.pool.begin().await?;
        // Writers of one session queue here, so MAX(seq) + 1 never collides; the lock
        // ends with the transaction.
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(session_id)
            .execute(&mut *tx)
            .await?;
        let seq = insert_event(&mut tx, session_id, &body, now_ms()).await?;
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(EVENTS_CHANNEL)
            .bind(format!("{seq} {session_id}"))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        event.seq = u64::try_from(seq).unwrap_or_default();
        Ok(event)
    }

    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>> {
        read_events(&self.pool, session_id, after).await
    }

    async fn last_event_seq(&self, session_id: &str) -> Result<u64> {
        read_last_event(&self.pool, session_id).await
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
        let w = parse_wake("12 s_abc").unwrap();
        assert_eq!((w.seq, w.session_id.as_str()), (12, "s_abc"));
        assert!(parse_wake("x s_abc").is_none());
        assert!(parse_wake("12").is_none());
    }
}
