//! In-process [`EventLog`] and [`SuspensionStore`], for tests and for embedding the
//! executor without a database. They keep the same guarantees as the durable ones within
//! one process: gap-free numbering, and a pending call claimed exactly once.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

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
/// It keeps the newest [`MEMORY_EVENTS_KEPT`] events of each session: an executor embedded
/// without a database for a long run would otherwise grow by two events a call forever.
/// Numbering stays gap-free; a reader asking from further back gets what is kept.
#[derive(Debug, Default)]
pub struct MemoryEventLog {
    events: Mutex<HashMap<String, VecDeque<Event>>>,
}

/// Events kept per session by [`MemoryEventLog`], the oldest dropped first.
pub const MEMORY_EVENTS_KEPT: usize = 10_000;

#[async_trait]
impl EventLog for MemoryEventLog {
    async fn append_event(&self, session_id: &str, at: String, kind: EventKind) -> Result<Event> {
        let mut map = self.events.lock().map_err(poisoned)?;
        // Looked up before an entry is made: the session's id is copied into a key once
        // per session, not once per event (two a call).
        let event = match map.get_mut(session_id) {
            Some(events) => keep(events, session_id, at, kind),
            None => keep(
                map.entry(session_id.to_owned()).or_default(),
                session_id,
                at,
                kind,
            ),
        };
        Ok(event)
    }

    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>> {
        let map = self.events.lock().map_err(poisoned)?;
        Ok(map
            .get(session_id)
            .map(|evs| evs.iter().filter(|e| e.seq > after).cloned().collect())
            .unwrap_or_default())
    }

    async fn last_event_seq(&self, session_id: &str) -> Result<u64> {
        let map = self.events.lock().map_err(poisoned)?;
        Ok(map
            .get(session_id)
            .and_then(|e| e.back())
            .map_or(0, |e| e.seq))
    }
}

/// Numbers the next event of a session's `events`, keeps it (dropping the oldest past
/// [`MEMORY_EVENTS_KEPT`]) and returns it.
fn keep(events: &mut VecDeque<Event>, session_id: &str, at: String, kind: EventKind) -> Event {
    let event = Event {
        session_id: session_id.to_owned(),
        seq: events.back().map_or(0, |e| e.seq) + 1,
        at,
        kind,
    };
    if events.len() >= MEMORY_EVENTS_KEPT {
        events.pop_front();
    }
    events.push_back(event.clone());
    event
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
}
