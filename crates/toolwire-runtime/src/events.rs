//! Typed events with a per-session sequence number, logged so a subscriber can resume
//! from any number without loss (seed 003's event flow).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex as StdMutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use tokio::sync::{Mutex, broadcast};
use toolwire_core::{Suspension, ToolResult, Widget};

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub session_id: String,
    /// 1, 2, 3, ... per session, without gaps.
    pub seq: u64,
    /// RFC 3339.
    pub at: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum EventKind {
    SessionStarted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_call_id: Option<String>,
    },
    SessionEnded,
    TurnStarted {
        turn: u32,
    },
    TurnEnded {
        turn: u32,
    },
    AssistantDelta {
        text: String,
    },
    ToolCallStarted {
        call_id: String,
        tool_name: String,
        input: Json,
    },
    Progress {
        call_id: String,
        done: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The sanitized result. `raw` rides along only with `TOOLWIRE_DEBUG_TOOL_RESULT_RAW=1`.
    ToolResult {
        result: Box<ToolResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<Json>,
    },
    Widget {
        call_id: String,
        widget: Widget,
    },
    Suspended {
        call_id: String,
        suspension: Suspension,
    },
    Resolved {
        call_id: String,
        suspension_id: String,
        resolution: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum EventLogError {
    #[error("event log: {0}")]
    Backend(String),
}

/// Where events are kept for replay. The store crate provides a durable one; this crate
/// has [`MemoryEventLog`].
pub trait EventLog: Send + Sync + 'static {
    fn append(&self, event: &Event) -> BoxFuture<'_, Result<(), EventLogError>>;
    /// Events of `session` with `seq > after`, in order.
    fn since(&self, session: &str, after: u64) -> BoxFuture<'_, Result<Vec<Event>, EventLogError>>;
    /// The highest `seq` logged for `session`, 0 if none.
    fn last_seq(&self, session: &str) -> BoxFuture<'_, Result<u64, EventLogError>>;
}

#[derive(Debug, Default)]
pub struct MemoryEventLog {
    events: StdMutex<HashMap<String, Vec<Event>>>,
}

impl EventLog for MemoryEventLog {
    fn append(&self, event: &Event) -> BoxFuture<'_, Result<(), EventLogError>> {
        let event = event.clone();
        Box::pin(async move {
            let mut map = self
                .events
                .lock()
                .map_err(|_| EventLogError::Backend("poisoned".into()))?;
            map.entry(event.session_id.clone()).or_default().push(event);
            Ok(())
        })
    }

    fn since(&self, session: &str, after: u64) -> BoxFuture<'_, Result<Vec<Event>, EventLogError>> {
        let session = session.to_owned();
        Box::pin(async move {
            let map = self
                .events
                .lock()
                .map_err(|_| EventLogError::Backend("poisoned".into()))?;
            Ok(map
                .get(&session)
                .map(|evs| evs.iter().filter(|e| e.seq > after).cloned().collect())
                .unwrap_or_default())
        })
    }

    fn last_seq(&self, session: &str) -> BoxFuture<'_, Result<u64, EventLogError>> {
        let session = session.to_owned();
        Box::pin(async move {
            let map = self
                .events
                .lock()
                .map_err(|_| EventLogError::Backend("poisoned".into()))?;
            Ok(map
                .get(&session)
                .and_then(|e| e.last())
                .map_or(0, |e| e.seq))
        })
    }
}

/// Numbers, logs and broadcasts events. Emission is serialized so that the log and every
/// live subscriber see one order.
pub struct EventBus {
    log: Arc<dyn EventLog>,
    seqs: Mutex<HashMap<String, u64>>,
    live: broadcast::Sender<Event>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus").finish_non_exhaustive()
    }
}

/// Live subscribers that fall this far behind re-read from the log instead.
const LIVE_BUFFER: usize = 1024;

impl EventBus {
    pub fn new(log: Arc<dyn EventLog>) -> Arc<Self> {
        let (live, _) = broadcast::channel(LIVE_BUFFER);
        Arc::new(EventBus {
            log,
            seqs: Mutex::new(HashMap::new()),
            live,
        })
    }

    pub fn in_memory() -> Arc<Self> {
        EventBus::new(Arc::new(MemoryEventLog::default()))
    }

    /// Logs and broadcasts one event; returns it with its number.
    pub async fn emit(&self, session_id: &str, kind: EventKind) -> Result<Event, EventLogError> {
        let mut seqs = self.seqs.lock().await;
        let last = match seqs.get(session_id) {
            Some(s) => *s,
            None => self.log.last_seq(session_id).await?,
        };
        let mut event = Event {
            session_id: session_id.to_owned(),
            seq: last + 1,
            at: now_rfc3339(),
            kind,
        };
        if self.log.append(&event).await.is_err() {
            // Another process may have logged events to this session since the number was
            // cached: read the log's own last number and try once more.
            seqs.remove(session_id);
            event.seq = self.log.last_seq(session_id).await? + 1;
            self.log.append(&event).await?;
        }
        seqs.insert(session_id.to_owned(), event.seq);
        // No live subscriber is not an error: the log has it.
        let _ = self.live.send(event.clone());
        Ok(event)
    }

    /// Events of `session` after `after`, then live ones, without gaps or repeats.
    pub async fn subscribe(
        self: &Arc<Self>,
        session_id: &str,
        after: u64,
    ) -> Result<Subscription, EventLogError> {
        // Subscribe before reading the backlog, so nothing falls between the two.
        let rx = self.live.subscribe();
        let backlog: VecDeque<Event> = self.log.since(session_id, after).await?.into();
        let next = backlog.back().map_or(after, |e| e.seq) + 1;
        Ok(Subscription {
            bus: Arc::clone(self),
            session_id: session_id.to_owned(),
            backlog,
            rx,
            next,
        })
    }
}

/// A resumable stream of one session's events.
pub struct Subscription {
    bus: Arc<EventBus>,
    session_id: String,
    backlog: VecDeque<Event>,
    rx: broadcast::Receiver<Event>,
    /// The next `seq` this subscriber expects.
    next: u64,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("session_id", &self.session_id)
            .field("next", &self.next)
            .finish()
    }
}

impl Subscription {
    /// The next event, or `None` when the bus is gone.
    pub async fn next(&mut self) -> Option<Result<Event, EventLogError>> {
        loop {
            if let Some(e) = self.backlog.pop_front() {
                self.next = e.seq + 1;
                return Some(Ok(e));
            }
            match self.rx.recv().await {
                Ok(e) if e.session_id != self.session_id || e.seq < self.next => continue,
                Ok(e) if e.seq == self.next => {
                    self.next += 1;
                    return Some(Ok(e));
                }
                // A gap (or a lag): refill from the log, which has everything.
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    match self.bus.log.since(&self.session_id, self.next - 1).await {
                        Ok(events) => self.backlog = events.into(),
                        Err(e) => return Some(Err(e)),
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn subscribers_resume_from_any_seq_without_gaps() {
        let bus = EventBus::in_memory();
        for i in 0..5 {
            bus.emit("s1", EventKind::TurnStarted { turn: i })
                .await
                .unwrap();
            bus.emit("s2", EventKind::TurnStarted { turn: i })
                .await
                .unwrap();
        }
        let mut sub = bus.subscribe("s1", 2).await.unwrap();
        let bus2 = Arc::clone(&bus);
        let producer = tokio::spawn(async move {
            for i in 5..2000 {
                bus2.emit("s1", EventKind::TurnStarted { turn: i })
                    .await
                    .unwrap();
            }
        });
        let mut seen = Vec::new();
        while seen.len() < 1997 {
            seen.push(sub.next().await.unwrap().unwrap().seq);
        }
        producer.await.unwrap();
        assert_eq!(seen, (3..2000).collect::<Vec<u64>>());
    }

    #[test]
    fn events_serialize_with_a_type_tag_and_camel_case() {
        let e = Event {
            session_id: "s".into(),
            seq: 1,
            at: "2026-01-01T00:00:00.000Z".into(),
            kind: EventKind::Progress {
                call_id: "c".into(),
                done: 1,
                total: Some(3),
                message: None,
            },
        };
        let j = serde_json::to_value(&e).unwrap();
        assert_eq!(j["type"], "progress");
        assert_eq!(j["callId"], "c");
        assert_eq!(j["sessionId"], "s");
        assert_eq!(serde_json::from_value::<Event>(j).unwrap(), e);
    }
}
