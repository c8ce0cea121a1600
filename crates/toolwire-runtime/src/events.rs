//! The event bus: logs each event (the log numbers it), then broadcasts it live; a
//! subscriber resumes from any number without loss or repeat.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::clock::now_rfc3339;
use futures::future::BoxFuture;
use tokio::sync::broadcast;
use toolwire_core::{Event, EventKind};
use toolwire_store::{EventLog, EventWake, MemoryEventLog, StoreError};
use toolwire_tool::ProgressSink;

/// Logs and broadcasts events. The log assigns each number in the transaction that
/// stores it, so emitters need no lock of their own (not per session, not across
/// processes); live subscribers put out-of-order arrivals right from the log.
pub struct EventBus {
    log: Arc<dyn EventLog>,
    live: Live,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus").finish_non_exhaustive()
    }
}

/// Live subscribers that fall this far behind re-read from the log instead.
const LIVE_BUFFER: usize = 1024;

/// How long an idle subscriber waits before looking in the log for events another
/// process wrote (a CLI `call` beside a server, or a second server on the same store):
/// those never pass this process's broadcast. A log with wake-ups (Postgres NOTIFY) says
/// so at once; the poll still covers wake-ups lost while its listener reconnects.
pub(crate) const IDLE_POLL: std::time::Duration = std::time::Duration::from_millis(500);

impl EventBus {
    /// A bus that logs to `log`. It logs events as they are given: a result is announced
    /// by the landing that stored it, its media already blob references, so nothing here
    /// stores media (logged inline, every image would sit in the database twice, as
    /// base64, and be replayed to every subscriber).
    pub fn new(log: Arc<dyn EventLog>) -> Arc<Self> {
        let live = Live {
            tx: broadcast::channel(LIVE_BUFFER).0,
            held: Arc::default(),
        };
        Arc::new(EventBus { log, live })
    }

    /// A bus over an in-memory log, for tests and one-off runs.
    pub fn in_memory() -> Arc<Self> {
        EventBus::new(Arc::new(MemoryEventLog::default()))
    }

    /// Logs and broadcasts one event; returns it with its number.
    pub async fn emit(&self, session_id: &str, kind: EventKind) -> Result<Event, StoreError> {
        log_and_send(&*self.log, &self.live, session_id, kind).await
    }

    /// Logs and broadcasts an event nobody waits on (a call started): it is queued in
    /// order, after every event emitted before it, and broadcast once the log has it,
    /// while the caller goes on. A log without a queue logs it before this returns.
    pub async fn announce(&self, session_id: &str, kind: EventKind) -> Result<(), StoreError> {
        let queued = self
            .log
            .queue_event(session_id, now_rfc3339(), kind)
            .await?;
        let mut queued = queued;
        // A log without a queue (memory, and every call's log in a one-off run) has
        // logged it already: broadcast now, without a task (and, on a multi-thread
        // runtime, a worker woken) per call for it.
        if let Some(logged) = futures::FutureExt::now_or_never(&mut queued) {
            // Advisory, as any event: one the log refused is not broadcast.
            if let Ok(event) = logged {
                self.live.send(event);
            }
            return Ok(());
        }
        if self.live.tx.receiver_count() == 0 {
            // Nobody listens here (the MCP gateway, whose viewers are other processes
            // reading the log): no task and no timer per call for a broadcast nobody
            // gets. A subscriber that comes meanwhile reads the event from the log.
            return Ok(());
        }
        let live = self.live.clone();
        tokio::spawn(async move {
            if let Ok(event) = queued.await {
                // Held a moment: a quick call's result follows within it, and both then
                // go out together (see `HOLD`).
                live.hold(event);
                tokio::time::sleep(HOLD).await;
                drop(live.flush());
            }
        });
        Ok(())
    }

    /// Logs several events of one session in order, as one write where the log can,
    /// then broadcasts them; returns how many were logged.
    pub async fn emit_many(
        &self,
        session_id: &str,
        kinds: Vec<EventKind>,
    ) -> Result<usize, StoreError> {
        let timed = kinds
            .into_iter()
            .map(|kind| (now_rfc3339(), kind))
            .collect();
        let events = self.log.append_events(session_id, timed).await?;
        let logged = events.len();
        for event in events {
            self.live.send(event);
        }
        Ok(logged)
    }

    /// The log's highest number for a session: where a new subscriber starts to see
    /// only what happens from now on.
    pub async fn last_seq(&self, session_id: &str) -> Result<u64, StoreError> {
        self.log.last_event_seq(session_id).await
    }

    /// Events of `session` after `after`, then live ones, without gaps or repeats.
    pub async fn subscribe(
        self: &Arc<Self>,
        session_id: &str,
        after: u64,
    ) -> Result<Subscription, StoreError> {
        // Subscribe before reading the backlog, so nothing falls between the two.
        let rx = self.live.tx.subscribe();
        let wakeups = self.log.wakeups();
        let backlog: VecDeque<Event> = self.log.events_since(session_id, after).await?.into();
        let next = backlog.back().map_or(after, |e| e.seq) + 1;
        Ok(Subscription {
            bus: Arc::clone(self),
            session_id: session_id.to_owned(),
            backlog,
            rx,
            wakeups,
            next,
            idle: Box::pin(tokio::time::sleep(IDLE_POLL)),
            last_event: tokio::time::Instant::now(),
            stale: false,
        })
    }
}

/// A resumable stream of one session's events.
pub struct Subscription {
    bus: Arc<EventBus>,
    session_id: String,
    backlog: VecDeque<Event>,
    rx: broadcast::Receiver<Arc<SharedEvent>>,
    /// Word from a shared log (Postgres) that another process logged an event.
    wakeups: Option<broadcast::Receiver<EventWake>>,
    /// The next `seq` this subscriber expects.
    next: u64,
    /// When to look in the log if nothing came: one timer for the subscription's life,
    /// moved only when it fires, rather than a new one per event (a timer insert and
    /// removal per subscriber per event, which at 1,000 subscribers was 1,000 of each).
    idle: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// When the subscriber last had an event: the timer, on firing, counts from here.
    last_event: tokio::time::Instant,
    /// [`Subscription::try_next_shared`] met a gap or a lag: the next wait reads the log
    /// first (the event it took out of order is there).
    stale: bool,
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
    /// Reads what this subscriber has not had yet from the log, which has everything.
    async fn refill(&mut self) -> Result<(), StoreError> {
        let events = self
            .bus
            .log
            .events_since(&self.session_id, self.next - 1)
            .await?;
        self.backlog = events.into();
        Ok(())
    }

    /// The next event, or `None` when the bus is gone.
    pub async fn next(&mut self) -> Option<Result<Event, StoreError>> {
        Some(self.next_shared().await?.map(SharedEvent::into_event))
    }

    /// [`Subscription::next`] as the live subscribers share it: no copy, and its JSON
    /// written once for all of them (what a feed of many subscribers wants).
    pub async fn next_shared(&mut self) -> Option<Result<Arc<SharedEvent>, StoreError>> {
        if self.stale {
            self.stale = false;
            if let Err(e) = self.refill().await {
                return Some(Err(e));
            }
        }
        loop {
            if let Some(e) = self.backlog.pop_front() {
                self.next = e.seq + 1;
                self.last_event = tokio::time::Instant::now();
                return Some(Ok(Arc::new(SharedEvent::new(e))));
            }
            let received = tokio::select! {
                // The broadcast first: a subscriber woken for an event takes it without
                // polling its idle timer and wake-ups as well (one wake per subscriber
                // per event, at 1,000 subscribers 1,000 of each). The other two matter
                // only when no event comes, and then the broadcast is pending anyway.
                biased;
                received = self.rx.recv() => received,
                woken = next_wake(&mut self.wakeups) => {
                    // Another process logged an event of this session that this one has
                    // not had (or the wake-ups lagged): read it from the log now.
                    let wanted = match &woken {
                        Ok(w) => w.session_id == self.session_id && w.seq >= self.next,
                        Err(broadcast::error::RecvError::Lagged(_)) => true,
                        Err(broadcast::error::RecvError::Closed) => {
                            self.wakeups = None;
                            false
                        }
                    };
                    if wanted && let Err(e) = self.refill().await {
                        return Some(Err(e));
                    }
                    continue;
                }
                () = self.idle.as_mut() => {
                    // Events came since it was set: idle only from the last of them.
                    let due = self.last_event + IDLE_POLL;
                    let now = tokio::time::Instant::now();
                    if due > now {
                        self.idle.as_mut().reset(due);
                        continue;
                    }
                    self.idle.as_mut().reset(now + IDLE_POLL);
                    if let Err(e) = self.refill().await {
                        return Some(Err(e));
                    }
                    continue;
                }
            };
            match received {
                Ok(e) if e.event.session_id != self.session_id || e.event.seq < self.next => {
                    continue;
                }
                Ok(e) if e.event.seq == self.next => {
                    self.next += 1;
                    self.last_event = tokio::time::Instant::now();
                    return Some(Ok(e));
                }
                // A gap (or a lag): refill from the log, which has everything.
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    if let Err(e) = self.refill().await {
                        return Some(Err(e));
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl Subscription {
    /// The next event if it is here already, without waiting: what a feed sends in the
    /// same write as the one it just got (a call's start and result, when its subscriber
    /// gets to run after both), so that it is one wake and one write for the subscriber,
    /// not one per event. `None` when none is ready, and when the next one needs the log
    /// (a gap or a lag): [`Subscription::next_shared`] reads it from there.
    pub fn try_next_shared(&mut self) -> Option<Arc<SharedEvent>> {
        if self.stale {
            return None;
        }
        if let Some(e) = self.backlog.pop_front() {
            self.next = e.seq + 1;
            self.last_event = tokio::time::Instant::now();
            return Some(Arc::new(SharedEvent::new(e)));
        }
        loop {
            match self.rx.try_recv() {
                Ok(e) if e.event.session_id != self.session_id || e.event.seq < self.next => {}
                Ok(e) if e.event.seq == self.next => {
                    self.next += 1;
                    self.last_event = tokio::time::Instant::now();
                    return Some(e);
                }
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {
                    self.stale = true;
                    return None;
                }
                Err(
                    broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed,
                ) => return None,
            }
        }
    }
}

/// The next wake-up, or never when the log sends none.
async fn next_wake(
    wakeups: &mut Option<broadcast::Receiver<EventWake>>,
) -> Result<EventWake, broadcast::error::RecvError> {
    match wakeups {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Progress from a running tool becomes a `progress` event of its session.
impl ProgressSink for EventBus {
    fn progress(
        &self,
        session_id: &str,
        call_id: &str,
        done: u64,
        total: Option<u64>,
        message: Option<&str>,
    ) -> BoxFuture<'static, ()> {
        let kind = EventKind::Progress {
            call_id: call_id.to_owned(),
            done,
            total,
            message: message.map(str::to_owned),
        };
        let (log, live) = (Arc::clone(&self.log), self.live.clone());
        let session = session_id.to_owned();
        Box::pin(async move {
            // Advisory: a progress event that cannot be logged is dropped, the call goes on.
            let _ = log_and_send(&*log, &live, &session, kind).await;
        })
    }
}

async fn log_and_send(
    log: &dyn EventLog,
    live: &Live,
    session_id: &str,
    kind: EventKind,
) -> Result<Event, StoreError> {
    let event = log.append_event(session_id, now_rfc3339(), kind).await?;
    // Nobody listens here (a one-shot CLI command, the gateway): no copy of the event
    // for a broadcast nobody gets (a 48 MB result's would be 48 MB more). A subscriber
    // that comes later reads it from the log, which has it already.
    if live.tx.receiver_count() > 0 {
        live.send(event.clone());
    }
    Ok(event)
}

/// How long a logged call-started event waits for the next event before it is
/// broadcast on its own. Every live subscriber is woken, and writes to its socket, for
/// each broadcast: a quick call's start and result, sent apart, were two wakes and two
/// writes per subscriber per call, and the first wave (1,000 subscribers' writes) ran
/// ahead of the call's own work on the same cores, so it delayed the result too. Held
/// for this long, the start goes out with the result in one wave (one write per
/// subscriber); a slow call's start is shown this much later.
const HOLD: std::time::Duration = std::time::Duration::from_millis(25);

/// The live side of the bus: the broadcast, and the call-started events held back for a
/// moment (see [`HOLD`]). Whatever is held goes out before any later event, so every
/// subscriber still gets them in the log's order.
#[derive(Clone)]
struct Live {
    tx: broadcast::Sender<Arc<SharedEvent>>,
    held: Arc<std::sync::Mutex<Vec<Arc<SharedEvent>>>>,
}

impl Live {
    /// The held events, then `event`. No live subscriber is not an error: the log has it.
    fn send(&self, event: Event) {
        // Still locked: no event held meanwhile can go out ahead of this one.
        let _held = self.flush();
        let _ = self.tx.send(Arc::new(SharedEvent::new(event)));
    }

    /// Keeps `event` until the next [`Live::send`] or [`Live::flush`].
    fn hold(&self, event: Event) {
        self.lock().push(Arc::new(SharedEvent::new(event)));
    }

    /// Sends whatever is held; the list stays locked while the guard returned lives.
    fn flush(&self) -> std::sync::MutexGuard<'_, Vec<Arc<SharedEvent>>> {
        let mut held = self.lock();
        for early in held.drain(..) {
            let _ = self.tx.send(early);
        }
        held
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<SharedEvent>>> {
        // The list is left whole by every holder, so a panic elsewhere cannot spoil it.
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// An event as every live subscriber gets it: one copy for all of them (a broadcast
/// hands each receiver a clone, and a result event can be large), written out as JSON
/// once, by the first feed that needs it, for all the others.
#[derive(Debug)]
pub struct SharedEvent {
    event: Event,
    json: std::sync::OnceLock<Arc<str>>,
    /// As `Bytes`, so that each feed's copy is a reference count, not an allocation.
    sse: std::sync::OnceLock<bytes::Bytes>,
}

impl SharedEvent {
    /// Wraps an event for sharing among subscribers.
    pub fn new(event: Event) -> Self {
        SharedEvent {
            event,
            json: std::sync::OnceLock::new(),
            sse: std::sync::OnceLock::new(),
        }
    }

    /// The event itself.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The event as JSON, written once.
    pub fn json(&self) -> Arc<str> {
        Arc::clone(self.json.get_or_init(|| {
            // An event is plain data (string keys, finite numbers): writing it cannot
            // fail; were it to, an empty object keeps the feed going.
            serde_json::to_string(&self.event)
                .unwrap_or_else(|_| "{}".to_owned())
                .into()
        }))
    }

    /// The event as one Server-Sent Events frame (`id`, `event`, `data`, blank line),
    /// written once: every SSE subscriber then sends the same bytes, with no per-feed
    /// framing or copy. The JSON is compact, so it holds no raw newline and fits one
    /// `data:` line.
    pub fn sse_frame(&self) -> bytes::Bytes {
        bytes::Bytes::clone(self.sse.get_or_init(|| {
            let json = self.json();
            let mut frame = Vec::with_capacity(json.len() + 48);
            frame.extend_from_slice(
                format!(
                    "id: {}\nevent: {}\ndata: ",
                    self.event.seq,
                    self.event.kind.name()
                )
                .as_bytes(),
            );
            frame.extend_from_slice(json.as_bytes());
            frame.extend_from_slice(b"\n\n");
            frame.into()
        }))
    }

    /// The event itself, copied only when another subscriber still holds it.
    pub fn into_event(self: Arc<Self>) -> Event {
        match Arc::try_unwrap(self) {
            Ok(shared) => shared.event,
            Err(shared) => shared.event.clone(),
        }
    }
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

    #[tokio::test]
    async fn a_feed_takes_what_is_ready_at_once_in_order() {
        let bus = EventBus::in_memory();
        let mut sub = bus.subscribe("s1", 0).await.unwrap();
        assert!(sub.try_next_shared().is_none(), "nothing yet");
        for i in 0..3 {
            bus.emit("s1", EventKind::TurnStarted { turn: i })
                .await
                .unwrap();
            bus.emit("s2", EventKind::TurnStarted { turn: i })
                .await
                .unwrap();
        }
        let first = sub.next_shared().await.unwrap().unwrap();
        let mut seqs = vec![first.event().seq];
        while let Some(e) = sub.try_next_shared() {
            seqs.push(e.event().seq);
        }
        assert_eq!(seqs, vec![1, 2, 3], "its own session's, in order, once");
        // Then it waits again, and gets the next one.
        bus.emit("s1", EventKind::TurnStarted { turn: 3 })
            .await
            .unwrap();
        assert_eq!(sub.next_shared().await.unwrap().unwrap().event().seq, 4);
    }

    #[tokio::test]
    async fn a_feed_that_lags_while_draining_reads_the_rest_from_the_log() {
        let bus = EventBus::in_memory();
        let mut sub = bus.subscribe("s1", 0).await.unwrap();
        let n = LIVE_BUFFER as u64 + 10;
        for i in 0..n {
            bus.emit("s1", EventKind::TurnStarted { turn: i as u32 })
                .await
                .unwrap();
        }
        // The broadcast kept only the last LIVE_BUFFER: the drain stops at the lag, and
        // the next wait reads the rest from the log, with nothing lost or twice.
        let mut seqs = Vec::new();
        while (seqs.len() as u64) < n {
            match sub.try_next_shared() {
                Some(e) => seqs.push(e.event().seq),
                None => seqs.push(sub.next_shared().await.unwrap().unwrap().event().seq),
            }
        }
        assert_eq!(seqs, (1..=n).collect::<Vec<u64>>());
    }

    #[tokio::test]
    async fn a_held_start_goes_out_alone_or_before_what_follows() {
        let dir = tempfile::tempdir().unwrap();
        let log = toolwire_store::SqliteHistory::open(&dir.path().join("h.db"))
            .await
            .unwrap();
        let bus = EventBus::new(Arc::new(log));
        let mut sub = bus.subscribe("s1", 0).await.unwrap();
        let started = |id: &str| EventKind::ToolCallStarted {
            call_id: id.into(),
            tool_name: "t".into(),
            input: serde_json::json!({}),
        };
        // Alone: broadcast once its hold is over.
        bus.announce("s1", started("c1")).await.unwrap();
        let first = tokio::time::timeout(std::time::Duration::from_secs(5), sub.next_shared())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(first.event().seq, 1);
        // Followed at once: the start still comes first.
        bus.announce("s1", started("c2")).await.unwrap();
        bus.emit("s1", EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
        let mut seqs = Vec::new();
        while seqs.len() < 2 {
            seqs.push(sub.next_shared().await.unwrap().unwrap().event().seq);
        }
        assert_eq!(seqs, vec![2, 3]);
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
