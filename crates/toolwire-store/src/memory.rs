//! In-process [`EventLog`] and [`SuspensionStore`], for tests and for embedding the
//! executor without a database. They keep the same guarantees as the durable ones within
//! one process: gap-free numbering, and a pending call claimed exactly once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use toolwire_core::{Event, EventKind, PendingCall};

use crate::error::{Result, StoreError};
use crate::history::{EventLog, SuspensionStore};

fn poisoned<T>(_: T) -> StoreError {
    StoreError::CommitFailed {
        message: "an in-memory store's lock was poisoned by a panic".into(),
    }
}

/// An [`EventLog`](crate::EventLog) in memory, for tests and one-off runs: gone with the process.
/// It keeps the newest events of all sessions together, within [`MEMORY_EVENTS_KEPT`]
/// events and [`MEMORY_EVENT_BYTES_KEPT`] bytes (as estimated by [`weight`]), the oldest
/// dropped first whatever its session: an executor embedded without a database for a
/// long run would otherwise grow by two events a call, and by a map entry a session,
/// forever, and a tool's large results would be held as long. Numbering stays gap-free
/// within a session; a reader asking from further back gets what is kept.
#[derive(Debug, Default)]
pub struct MemoryEventLog {
    kept: Mutex<Kept>,
}

/// Events kept by [`MemoryEventLog`] at most, all sessions together.
pub const MEMORY_EVENTS_KEPT: usize = 10_000;

/// Bytes of events kept by [`MemoryEventLog`] at most, all sessions together (estimated:
/// the text they carry). The newest event is kept even when it alone is larger.
pub const MEMORY_EVENT_BYTES_KEPT: usize = 64 << 20;

/// Sessions whose events were all dropped whose numbers [`MemoryEventLog`] still
/// remembers (so their next event follows on), the ones emptied longest ago forgotten
/// first: such a session numbers again from 1.
pub const MEMORY_SESSIONS_REMEMBERED: usize = 100_000;

/// What a [`MemoryEventLog`] holds.
#[derive(Debug, Default)]
struct Kept {
    /// Each session's kept events and last number. The key is shared with `order`, so
    /// an event costs no copy of its session's id there.
    sessions: HashMap<Arc<str>, Session>,
    /// Every kept event's session and weight, oldest first: what is dropped next.
    order: VecDeque<(Arc<str>, usize)>,
    /// The weights in `order`, summed.
    bytes: usize,
    /// Sessions left without events, emptied longest ago first (one may have had events
    /// again since: it is forgotten only while it has none).
    emptied: VecDeque<Arc<str>>,
}

/// One session in a [`MemoryEventLog`].
#[derive(Debug)]
struct Session {
    /// Its id, as `sessions` keys it (found with the session in one lookup).
    key: Arc<str>,
    events: VecDeque<Event>,
    /// The number of its newest event, kept or not.
    last: u64,
}

#[async_trait]
impl EventLog for MemoryEventLog {
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event> {
        let mut kept = self.kept.lock().map_err(poisoned)?;
        Ok(kept.keep(session_id, at, kind))
    }

    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>> {
        let kept = self.kept.lock().map_err(poisoned)?;
        Ok(kept
            .sessions
            .get(session_id)
            .map(|s| s.events.iter().filter(|e| e.seq > after).cloned().collect())
            .unwrap_or_default())
    }

    async fn last_event_seq(&self, session_id: &str) -> Result<u64> {
        let kept = self.kept.lock().map_err(poisoned)?;
        Ok(kept.sessions.get(session_id).map_or(0, |s| s.last))
    }
}

impl Kept {
    /// Numbers the next event of `session_id`, keeps it (dropping the oldest of any
    /// session past the log's bounds) and returns it.
    fn keep(&mut self, session_id: &str, at: String, kind: EventKind) -> Event {
        let weight = weight(&kind);
        // Looked up before an entry is made: the session's id is copied once per
        // session, not once per event (two a call); each event shares it.
        let session = match self.sessions.get_mut(session_id) {
            Some(session) => session,
            None => {
                let key: Arc<str> = Arc::from(session_id);
                self.sessions.entry(Arc::clone(&key)).or_insert(Session {
                    key,
                    events: VecDeque::new(),
                    last: 0,
                })
            }
        };
        let key = Arc::clone(&session.key);
        session.last += 1;
        let event = Event {
            session_id: session_id.to_owned(),
            seq: session.last,
            at,
            kind,
        };
        session.events.push_back(event.clone());
        self.order.push_back((key, weight));
        self.bytes += weight;
        while self.order.len() > MEMORY_EVENTS_KEPT
            || (self.bytes > MEMORY_EVENT_BYTES_KEPT && self.order.len() > 1)
        {
            self.drop_oldest();
        }
        event
    }

    /// Drops the oldest kept event; its session, left without events, is remembered
    /// among the emptied (and the longest emptied forgotten past the bound).
    fn drop_oldest(&mut self) {
        let Some((key, weight)) = self.order.pop_front() else {
            return;
        };
        self.bytes -= weight;
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        // The whole log's oldest is its session's oldest: both are in arrival order.
        session.events.pop_front();
        if !session.events.is_empty() {
            return;
        }
        self.emptied.push_back(key);
        while self.emptied.len() > MEMORY_SESSIONS_REMEMBERED {
            let Some(old) = self.emptied.pop_front() else {
                break;
            };
            if self.sessions.get(&old).is_some_and(|s| s.events.is_empty()) {
                self.sessions.remove(&old);
            }
        }
    }
}

/// An event's size for [`MEMORY_EVENT_BYTES_KEPT`], estimated without writing it out: the
/// text it carries (a result's values, a call's input, a widget's data, ...) and a fixed
/// part for the rest. Results are what grow, so they are what it must see.
fn weight(kind: &EventKind) -> usize {
    const FIXED: usize = 256;
    FIXED
        + match kind {
            EventKind::AssistantDelta { text } => text.len(),
            EventKind::ToolCallStarted { input, .. } => json_weight(input),
            EventKind::ToolResult { result, raw, .. } => {
                let values: usize = result
                    .output
                    .iter()
                    .map(|v| json_weight(&v.data) + v.summary.as_ref().map_or(0, String::len))
                    .sum();
                let widgets: usize = result
                    .widgets
                    .iter()
                    .map(|w| json_weight(&w.data) + w.fallback.len())
                    .sum();
                // A failed call's message and details are the tool's text too.
                let error = result.error.as_ref().map_or(0, |e| {
                    e.message.len() + e.details.as_ref().map_or(0, json_weight)
                });
                values + widgets + error + raw.as_ref().map_or(0, json_weight)
            }
            EventKind::Widget { widget, .. } => json_weight(&widget.data) + widget.fallback.len(),
            EventKind::Suspended { suspension, .. } => {
                suspension.prompt.len() + suspension.input_schema.as_ref().map_or(0, json_weight)
            }
            _ => 0,
        }
}

/// A JSON value's size, estimated: its strings' and keys' bytes, and 8 for anything else.
fn json_weight(value: &serde_json::Value) -> usize {
    use serde_json::Value as Json;
    match value {
        Json::String(text) => text.len(),
        Json::Array(items) => items.iter().map(json_weight).sum::<usize>() + 8,
        Json::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + json_weight(v))
                .sum::<usize>()
                + 8
        }
        _ => 8,
    }
}

/// Pending calls, in the order they were put.
#[derive(Debug, Default)]
pub struct MemorySuspensions {
    pending: Mutex<Vec<PendingCall>>,
}

#[async_trait]
impl SuspensionStore for MemorySuspensions {
    async fn put_suspension(&self, pending: &PendingCall) -> Result<()> {
        let mut all = self.pending.lock().map_err(poisoned)?;
        let id = &pending.suspension.id;
        let fresh = PendingCall {
            resolving: false,
            ..pending.clone()
        };
        match all.iter_mut().find(|p| &p.suspension.id == id) {
            Some(old) => *old = fresh,
            None => all.push(fresh),
        }
        Ok(())
    }

    async fn claim_suspension(&self, id: &str) -> Result<Option<PendingCall>> {
        let mut all = self.pending.lock().map_err(poisoned)?;
        Ok(all
            .iter_mut()
            .find(|p| p.suspension.id == id && !p.resolving)
            .map(|p| {
                p.resolving = true;
                p.clone()
            }))
    }

    async fn finish_suspension(&self, id: &str) -> Result<()> {
        self.pending
            .lock()
            .map_err(poisoned)?
            .retain(|p| p.suspension.id != id);
        Ok(())
    }

    async fn suspensions(&self, session_id: &str) -> Result<Vec<PendingCall>> {
        let all = self.pending.lock().map_err(poisoned)?;
        Ok(all
            .iter()
            .filter(|p| p.session_id == session_id)
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use toolwire_core::{CallRef, ToolResult, Value};

    #[tokio::test]
    async fn a_long_run_keeps_the_newest_events_and_numbers_on_without_gaps() {
        let log = MemoryEventLog::default();
        let extra = 5;
        for _ in 0..MEMORY_EVENTS_KEPT + extra {
            log.append_event("s", "t".into(), EventKind::SessionEnded)
                .await
                .unwrap();
        }
        let kept = log.events_since("s", 0).await.unwrap();
        assert_eq!(kept.len(), MEMORY_EVENTS_KEPT);
        assert_eq!(kept[0].seq, extra as u64 + 1);
        let last = (MEMORY_EVENTS_KEPT + extra) as u64;
        assert_eq!(kept.last().unwrap().seq, last);
        assert_eq!(log.last_event_seq("s").await.unwrap(), last);
        let next = log
            .append_event("s", "t".into(), EventKind::SessionEnded)
            .await
            .unwrap();
        assert_eq!(next.seq, last + 1);
    }

    fn kept(log: &MemoryEventLog) -> (usize, usize, usize) {
        let kept = log.kept.lock().unwrap();
        (kept.order.len(), kept.bytes, kept.sessions.len())
    }

    #[tokio::test]
    async fn many_sessions_share_one_bound_and_an_emptied_one_numbers_on() {
        let log = MemoryEventLog::default();
        log.append_event("first", "t".into(), EventKind::SessionEnded)
            .await
            .unwrap();
        for i in 0..MEMORY_EVENTS_KEPT + 10 {
            log.append_event(&format!("s{i}"), "t".into(), EventKind::SessionEnded)
                .await
                .unwrap();
        }
        let (events, _, _) = kept(&log);
        assert_eq!(events, MEMORY_EVENTS_KEPT);
        // The oldest session's one event is gone, and its number is not.
        assert!(log.events_since("first", 0).await.unwrap().is_empty());
        assert_eq!(log.last_event_seq("first").await.unwrap(), 1);
        let next = log
            .append_event("first", "t".into(), EventKind::SessionEnded)
            .await
            .unwrap();
        assert_eq!(next.seq, 2);
        assert_eq!(log.events_since("first", 0).await.unwrap(), vec![next]);
    }

    #[tokio::test]
    async fn large_results_are_held_within_the_byte_bound() {
        let log = MemoryEventLog::default();
        let big = |i: usize| {
            let call = CallRef::new(format!("c{i}"), "t");
            let result = ToolResult::success(call, Value::text("x".repeat(8 << 20)));
            EventKind::tool_result(result, None)
        };
        for i in 0..20 {
            log.append_event("s", "t".into(), big(i)).await.unwrap();
        }
        let (events, bytes, _) = kept(&log);
        assert!(bytes <= MEMORY_EVENT_BYTES_KEPT, "{bytes} bytes kept");
        assert!((7..20).contains(&events), "{events} events kept");
        let kept = log.events_since("s", 0).await.unwrap();
        assert_eq!(kept.last().unwrap().seq, 20);
        assert_eq!(kept.len(), events);
        // One event larger than the whole bound is still kept, alone.
        let huge = Value::text("y".repeat(MEMORY_EVENT_BYTES_KEPT + 1));
        let huge = ToolResult::success(CallRef::new("h", "t"), huge);
        log.append_event("s", "t".into(), EventKind::tool_result(huge, None))
            .await
            .unwrap();
        let kept = log.events_since("s", 0).await.unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].seq, 21);
    }

    #[tokio::test]
    async fn large_errors_count_toward_the_byte_bound() {
        let log = MemoryEventLog::default();
        for i in 0..20 {
            let call = CallRef::new(format!("c{i}"), "t");
            let failed = ToolResult::error(call, "e".repeat(8 << 20));
            log.append_event("s", "t".into(), EventKind::tool_result(failed, None))
                .await
                .unwrap();
        }
        let (events, bytes, _) = kept(&log);
        assert!(bytes <= MEMORY_EVENT_BYTES_KEPT, "{bytes} bytes kept");
        assert!((7..20).contains(&events), "{events} events kept");
    }

    #[tokio::test]
    async fn sessions_left_without_events_are_forgotten_past_their_bound() {
        let log = MemoryEventLog::default();
        let sessions = MEMORY_EVENTS_KEPT + MEMORY_SESSIONS_REMEMBERED + 50;
        for i in 0..sessions {
            log.append_event(&format!("s{i}"), "t".into(), EventKind::SessionEnded)
                .await
                .unwrap();
        }
        let (events, _, remembered) = kept(&log);
        assert_eq!(events, MEMORY_EVENTS_KEPT);
        assert_eq!(remembered, MEMORY_EVENTS_KEPT + MEMORY_SESSIONS_REMEMBERED);
        // The first sessions are forgotten (they number from 1 again); later emptied
        // ones are still remembered.
        assert_eq!(log.last_event_seq("s0").await.unwrap(), 0);
        assert_eq!(log.last_event_seq("s100").await.unwrap(), 1);
    }
}
