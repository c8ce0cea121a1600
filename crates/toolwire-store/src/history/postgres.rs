//! The Postgres `HistoryStore`, `EventLog` and `SuspensionStore`, for several toolwire
//! processes on several machines sharing one history.
//!
//! Every write is its own transaction, and Postgres's row locks do what SQLite's single
//! writer does there: an append locks its session's row to take the next seq, an event
//! takes the number after the session's last, and two events that take the same one
//! collide on the key, the loser trying again (under a per-session advisory lock after a
//! few tries). Once an event is stored, `NOTIFY toolwire_events` (on its own, not waiting
//! for the disk) wakes other instances' subscribers at once instead of at their next
//! poll. An append is one statement, an event two (docs/scale.md).

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
    EventLog, EventWake, HistoryReader, HistoryStore, InlineBlob, MessagePage, NewSession, Page,
    RawStoredMessage, Session, StoredMessage, StoredResult, SuspensionStore,
};
use crate::error::{Result, StoreError};
use crate::failed::redact;
use crate::ids::{BlobKey, validate_id};

/// The channel every instance listens on; the payload is `<seq> <session id>`.
pub const EVENTS_CHANNEL: &str = "toolwire_events";
const MAX_CONNECTIONS: u32 = 16;
/// A `NOTIFY` commits at once (no flush to wait for): a few connections keep up.
const NOTIFY_CONNECTIONS: u32 = 4;
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
    /// Sends the `NOTIFY`s, apart from the events' own transactions, without waiting for
    /// its commit's flush (`synchronous_commit = off`): Postgres serializes every
    /// notifying transaction of the whole cluster, from before its commit until after
    /// it, so a `NOTIFY` in the event's durable transaction would make every event of
    /// every instance wait for the disk one after another (docs/scale.md).
    notify: PgPool,
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
        let notify = PgPoolOptions::new()
            .max_connections(NOTIFY_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(opts.clone().options([("synchronous_commit", "off")]));
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
            notify,
            wake,
            _stop: Arc::new(stop),
        })
    }
}

/// How often the wake-ups also say [`EventWake::Changed`], so that followers compare
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
                    let _ = wake.send(EventWake::Changed);
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

fn parse_wake(payload: &str) -> Option<EventWake> {
    let (seq, session_id) = payload.split_once(' ')?;
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
async fn append_at_once(
    pool: &PgPool,
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
        .fetch_all(pool)
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

/// [`EVENT_AT_ONCE`]: the event's number.
async fn event_at_once(pool: &PgPool, session_id: &str, body: &str, now: i64) -> Result<i64> {
    let (seq,): (i64,) = sqlx::query_as(EVENT_AT_ONCE)
        .bind(session_id)
        .bind(body)
        .bind(now)
        .fetch_one(pool)
        .await?;
    Ok(seq)
}

impl PgHistory {
    /// An event appended in its own transaction under the session's advisory lock, so
    /// writers of one session queue instead of colliding (they may still meet one that
    /// tries [`EVENT_AT_ONCE`]).
    async fn event_locked(&self, session_id: &str, body: &str, now: i64) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(session_id)
            .execute(&mut *tx)
            .await?;
        let seq = insert_event(&mut tx, session_id, body, now).await?;
        tx.commit().await?;
        Ok(seq)
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
        let ids = append_at_once(&self.pool, session_id, new).await?;
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
        let now = now_ms();
        let mut tries = 0;
        let seq = loop {
            let tried = if tries < EVENT_TRIES_AT_ONCE {
                event_at_once(&self.pool, session_id, &body, now).await
            } else {
                self.event_locked(session_id, &body, now).await
            };
            match tried {
                // Another writer took this number first (and has committed it): the next
                // try sees it. Every lost try is another event stored, so this ends.
                Err(StoreError::Database(sqlx::Error::Database(db)))
                    if db.is_unique_violation() && tries < EVENT_TRIES =>
                {
                    tries += 1;
                }
                other => break other?,
            }
        };
        // The event is stored: a failed word only delays other instances' subscribers
        // until their next look in the log (`RESYNC`), so it does not fail the append.
        let _ = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(EVENTS_CHANNEL)
            .bind(format!("{seq} {session_id}"))
            .execute(&self.notify)
            .await;
        event.seq = u64::try_from(seq).unwrap_or_default();
        Ok(event)
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
