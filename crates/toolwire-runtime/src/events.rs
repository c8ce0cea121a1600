//! The event bus: logs each event (the log numbers it), then broadcasts it live to the
//! subscribers of its session alone; a subscriber resumes from any number without loss or
//! repeat.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::clock::now_rfc3339;
use futures::future::BoxFuture;
use tokio::sync::{broadcast, watch};
use toolwire_core::{Event, EventKind};
use toolwire_store::{EventLog, EventWake, MemoryEventLog, StoreError};
use toolwire_tool::ProgressSink;

/// Logs and broadcasts events. The log assigns each number in the transaction that
/// stores it, so emitters need no lock of their own (not per session, not across
/// processes); live subscribers put out-of-order arrivals right from the log.
///
/// Each session followed here has a broadcast of its own ([`Route`]), made by its first
/// subscriber and dropped with its last, so an event wakes only its own session's feeds:
/// a server's work per event does not grow with other sessions' feeds. Events other
/// writers logged (another process on the same SQLite file, another instance on the same
/// Postgres) come as word from the log ([`EventLog::wakeups`]), which one task per bus
/// turns into one read per session that has new events, broadcast to its subscribers like
/// this process's own; no subscriber polls.
pub struct EventBus {
    log: Arc<dyn EventLog>,
    live: Live,
    /// Follows the log's word of other writers; started by the first subscription.
    router: std::sync::OnceLock<tokio::task::AbortHandle>,
    /// How many times the log said another writer changed it in a way that does not say
    /// which sessions are gone: a feed's reason to look whether its own still exists (see
    /// [`EventBus::changes_elsewhere`]). Watched, not polled: an idle feed has no timer of
    /// its own for it.
    changed: Arc<watch::Sender<u64>>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus").finish_non_exhaustive()
    }
}

impl Drop for EventBus {
    fn drop(&mut self) {
        if let Some(router) = self.router.get() {
            router.abort();
        }
    }
}

/// Live subscribers of one session that fall this far behind re-read from the log
/// instead. Per session (each has its own channel, which allocates its slots up front),
/// so smaller than one channel for all sessions needed.
const LIVE_BUFFER: usize = 256;

impl EventBus {
    /// A bus that logs to `log`. It logs events as they are given: a result is announced
    /// by the landing that stored it, its media already blob references, so nothing here
    /// stores media (logged inline, every image would sit in the database twice, as
    /// base64, and be replayed to every subscriber).
    pub fn new(log: Arc<dyn EventLog>) -> Arc<Self> {
        Arc::new(EventBus {
            log,
            live: Live::default(),
            router: std::sync::OnceLock::new(),
            changed: Arc::new(watch::channel(0).0),
        })
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
        if self.live.is_empty() {
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

    /// Whether this bus logs to `log` itself: an event its store logs beside what it
    /// announces (a result and its `tool_result` event in one commit,
    /// `Stores::record_result_announced`) is then in this bus's log, to be broadcast
    /// with [`EventBus::publish`].
    pub fn logs_to(&self, log: &Arc<dyn EventLog>) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.log), Arc::as_ptr(log))
    }

    /// Broadcasts an event this bus's log already has (see [`EventBus::logs_to`]), as
    /// [`EventBus::emit`] broadcasts what it logs.
    pub async fn publish(&self, event: Event) {
        let Some(route) = self.live.route(&event.session_id) else {
            // Nobody here follows the session: a later subscriber reads it from the log.
            return;
        };
        // The event numbered just before it (the call's start, queued first and logged
        // in the same commit) reaches the live side through its own task, woken by the
        // same commit and maybe not run yet (queued behind a busy worker's task). A few
        // turns let it go first; if it is still not there, what comes before this one
        // is read from the log once, here, for every subscriber: sent with a gap, each
        // subscriber would read the log itself (ten reads for ten feeds, and the result
        // late at all of them). The start's own task then sends it again, which the
        // subscribers skip by its number.
        for _ in 0..PUBLISH_TURNS {
            if self.live.has_before(&route, event.seq) {
                break;
            }
            tokio::task::yield_now().await;
        }
        if !self.live.has_before(&route, event.seq) {
            let high = route.high.load(Ordering::Acquire);
            // Advisory like every broadcast: a failed read leaves the gap to the
            // subscribers, who read the log themselves.
            if let Ok(before) = self.log.events_since(&event.session_id, high).await {
                for early in before.into_iter().filter(|e| e.seq < event.seq) {
                    self.live.send(early);
                }
            }
        }
        drop(route);
        self.live.send(event);
    }

    /// The log's highest number for a session: where a new subscriber starts to see
    /// only what happens from now on.
    pub async fn last_seq(&self, session_id: &str) -> Result<u64, StoreError> {
        self.log.last_event_seq(session_id).await
    }

    /// Word each time the log says that another writer changed it without saying which
    /// sessions it deleted (SQLite: another process committed; Postgres: the listener
    /// reconnected and word may be lost; either: this bus fell behind the log's word). A
    /// feed looks whether its session was deleted elsewhere only when this moved: with no
    /// other writer, never, and with no timer. A deletion the log names reaches that
    /// session's subscribers alone ([`Subscription::deleted`]) and moves nothing here.
    pub fn changes_elsewhere(&self) -> watch::Receiver<u64> {
        self.follow_other_writers();
        self.changed.subscribe()
    }

    /// Says that `session_id` was deleted through this process: its subscribers here see
    /// it on [`Subscription::deleted`], and nobody else wakes (the log tells other
    /// processes, where it can).
    pub fn announce_deleted(&self, session_id: &str) {
        self.live.deleted(session_id);
    }

    /// Events of `session` after `after`, then live ones, without gaps or repeats.
    pub async fn subscribe(
        self: &Arc<Self>,
        session_id: &str,
        after: u64,
    ) -> Result<Subscription, StoreError> {
        self.follow_other_writers();
        // Subscribe before reading the backlog, so nothing falls between the two.
        let route = self.live.join(session_id);
        let rx = route.tx.subscribe();
        let backlog: VecDeque<Event> = self.log.events_since(session_id, after).await?.into();
        let next = backlog.back().map_or(after, |e| e.seq) + 1;
        // What the log had when this subscriber read it need not be read again for it
        // when another writer's word comes.
        route.high.fetch_max(next - 1, Ordering::AcqRel);
        Ok(Subscription {
            bus: Arc::clone(self),
            route,
            session_id: session_id.to_owned(),
            backlog,
            rx,
            next,
            stale: false,
        })
    }

    /// Starts, once, the task that turns the log's word of other writers into events for
    /// the sessions followed here ([`route_wakeups`]).
    fn follow_other_writers(&self) {
        self.router.get_or_init(|| {
            let task = match self.log.wakeups() {
                Some(wakeups) => tokio::spawn(route_wakeups(
                    Arc::clone(&self.log),
                    self.live.clone(),
                    wakeups,
                    Arc::clone(&self.changed),
                )),
                // No other writer can log here: nothing to follow.
                None => tokio::spawn(async {}),
            };
            task.abort_handle()
        });
    }

    /// How many sessions have a live broadcast here (at least one subscriber).
    #[cfg(test)]
    fn routes(&self) -> usize {
        self.live.lock_routes().len()
    }
}

/// The log's word of other writers, turned into events for the sessions followed here:
/// one read per session with events this process has not broadcast, whatever the number
/// of its subscribers, and none for a session nobody here follows. Runs until the bus is
/// dropped (which aborts it) or the log stops sending word.
async fn route_wakeups(
    log: Arc<dyn EventLog>,
    live: Live,
    mut wakeups: broadcast::Receiver<EventWake>,
    changed: Arc<watch::Sender<u64>>,
) {
    // A read that failed is tried again at the next word, or after a pause.
    let mut retry = false;
    loop {
        let mut due: HashSet<String> = HashSet::new();
        let mut compare_all = retry;
        if !retry {
            let first = wakeups.recv().await;
            if !take_wake(first, &live, &changed, &mut due, &mut compare_all) {
                return;
            }
        }
        retry = false;
        // Whatever word came meanwhile joins this round: a burst is one look.
        loop {
            match wakeups.try_recv() {
                Err(broadcast::error::TryRecvError::Empty) => break,
                Err(broadcast::error::TryRecvError::Closed) => return,
                Err(broadcast::error::TryRecvError::Lagged(_)) => compare_all = true,
                Ok(wake) => {
                    take_wake(Ok(wake), &live, &changed, &mut due, &mut compare_all);
                }
            }
        }
        if compare_all {
            let (sessions, highs) = live.followed();
            if sessions.is_empty() {
                continue;
            }
            match log.last_event_seqs(&sessions).await {
                Ok(last) => {
                    for ((session, high), last) in sessions.into_iter().zip(highs).zip(last) {
                        if last > high {
                            due.insert(session);
                        }
                    }
                }
                Err(_) => retry = true,
            }
        }
        for session in due {
            let Some(route) = live.route(&session) else {
                continue;
            };
            match log
                .events_since(&session, route.high.load(Ordering::Acquire))
                .await
            {
                Ok(events) => {
                    for event in events {
                        live.send(event);
                    }
                }
                Err(_) => retry = true,
            }
        }
        if retry {
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }
}

/// After a failed read of the log, how long the router waits before it compares every
/// followed session with the log again.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// Notes one word from the log; `false` when the log sends no more.
fn take_wake(
    wake: Result<EventWake, broadcast::error::RecvError>,
    live: &Live,
    changed: &watch::Sender<u64>,
    due: &mut HashSet<String>,
    compare_all: &mut bool,
) -> bool {
    match wake {
        Ok(EventWake::Logged { session_id, seq }) => {
            // Only a session followed here, and only an event not broadcast yet (this
            // process's own events come back as word too, on Postgres).
            if live
                .route(&session_id)
                .is_some_and(|route| seq > route.high.load(Ordering::Acquire))
            {
                due.insert(session_id);
            }
        }
        Ok(EventWake::Changed) => {
            changed.send_modify(|n| *n += 1);
            *compare_all = true;
        }
        // The log names the session: only its subscribers here hear it, and no other
        // feed looks.
        Ok(EventWake::Deleted { session_id }) => live.deleted(&session_id),
        // Only a look for lost word of events: feeds have no reason to look for their
        // sessions.
        Ok(EventWake::Resync) => *compare_all = true,
        Err(broadcast::error::RecvError::Lagged(_)) => {
            changed.send_modify(|n| *n += 1);
            *compare_all = true;
        }
        Err(broadcast::error::RecvError::Closed) => return false,
    }
    true
}

/// A resumable stream of one session's events.
pub struct Subscription {
    bus: Arc<EventBus>,
    /// The session's broadcast, kept while this subscriber lives.
    route: Arc<Route>,
    session_id: String,
    backlog: VecDeque<Event>,
    rx: broadcast::Receiver<Arc<SharedEvent>>,
    /// The next `seq` this subscriber expects.
    next: u64,
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
    /// Whether the session was deleted since this subscriber joined, watched: through
    /// this process ([`EventBus::announce_deleted`]) or as the log names it (another
    /// instance on the same Postgres). A deletion word cannot say (another process on the
    /// same SQLite file) is not here: [`EventBus::changes_elsewhere`] is the reason to
    /// look for that one.
    pub fn deleted(&self) -> watch::Receiver<bool> {
        self.route.gone.subscribe()
    }

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
                return Some(Ok(Arc::new(SharedEvent::new(e))));
            }
            // Only this session's events come here: other writers' too, read from the
            // log once for all of its subscribers (see `route_wakeups`).
            let received = self.rx.recv().await;
            match received {
                Ok(e) if e.event.seq < self.next => continue,
                Ok(e) if e.event.seq == self.next => {
                    self.next += 1;
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
            return Some(Arc::new(SharedEvent::new(e)));
        }
        loop {
            match self.rx.try_recv() {
                Ok(e) if e.event.seq < self.next => {}
                Ok(e) if e.event.seq == self.next => {
                    self.next += 1;
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
    // Nobody here follows the session (a one-shot CLI command, the gateway, a session no
    // feed shows): no copy of the event for a broadcast nobody gets (a 48 MB result's
    // would be 48 MB more). A subscriber that comes later reads it from the log, which
    // has it already.
    if live.route(session_id).is_some() {
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

/// How many times [`EventBus::publish`] lets other tasks run while the event before its
/// own is not on the live side yet (then it reads that one from the log).
const PUBLISH_TURNS: usize = 4;

/// The live side of the bus: each followed session's broadcast, and the call-started
/// events held back for a moment (see [`HOLD`]). Whatever is held goes out before any
/// later event, so every subscriber still gets them in the log's order.
#[derive(Clone, Default)]
struct Live {
    routes: Arc<Routes>,
    held: Arc<Mutex<Vec<Event>>>,
}

/// The sessions followed here, each by its broadcast. Weak, so that a session's entry goes
/// with its last subscriber ([`Route`]'s drop removes it): the map holds only sessions
/// someone follows now.
type Routes = Mutex<HashMap<String, Weak<Route>>>;

/// One session's broadcast, shared by its subscribers.
struct Route {
    tx: broadcast::Sender<Arc<SharedEvent>>,
    /// The highest event number broadcast here or read by a subscriber as it joined:
    /// word of an event at or below it needs no read of the log.
    high: AtomicU64,
    /// Set once the session is deleted (through this process, or named by the log): its
    /// subscribers end, and no other session's wake.
    gone: watch::Sender<bool>,
    session_id: String,
    routes: Weak<Routes>,
}

impl Drop for Route {
    fn drop(&mut self) {
        let Some(routes) = self.routes.upgrade() else {
            return;
        };
        let mut routes = lock(&routes);
        // A subscriber that came after the last one left has made a new route: keep it.
        if routes
            .get(&self.session_id)
            .is_some_and(|route| route.strong_count() == 0)
        {
            routes.remove(&self.session_id);
        }
    }
}

impl Live {
    /// The session's route, made if nobody follows it yet.
    fn join(&self, session_id: &str) -> Arc<Route> {
        let mut routes = self.lock_routes();
        if let Some(route) = routes.get(session_id).and_then(Weak::upgrade) {
            return route;
        }
        let route = Arc::new(Route {
            tx: broadcast::channel(LIVE_BUFFER).0,
            high: AtomicU64::new(0),
            gone: watch::channel(false).0,
            session_id: session_id.to_owned(),
            routes: Arc::downgrade(&self.routes),
        });
        routes.insert(session_id.to_owned(), Arc::downgrade(&route));
        route
    }

    /// The session's route, if someone here follows it. Dropped by the caller after the
    /// map's lock is released (the last one's drop takes that lock).
    fn route(&self, session_id: &str) -> Option<Arc<Route>> {
        let routes = self.lock_routes();
        routes.get(session_id).and_then(Weak::upgrade)
    }

    /// Word to the session's subscribers here, if any, that it was deleted.
    fn deleted(&self, session_id: &str) {
        if let Some(route) = self.route(session_id) {
            route.gone.send_replace(true);
        }
    }

    /// Whether nobody here follows any session.
    fn is_empty(&self) -> bool {
        self.lock_routes().is_empty()
    }

    /// The followed sessions, each with its [`Route::high`].
    fn followed(&self) -> (Vec<String>, Vec<u64>) {
        let routes: Vec<Arc<Route>> = self
            .lock_routes()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        routes
            .iter()
            .map(|r| (r.session_id.clone(), r.high.load(Ordering::Acquire)))
            .unzip()
    }

    fn lock_routes(&self) -> MutexGuard<'_, HashMap<String, Weak<Route>>> {
        lock(&self.routes)
    }

    /// The held events, then `event`, each to its session's subscribers. No live
    /// subscriber is not an error: the log has it.
    fn send(&self, event: Event) {
        // Still locked: no event held meanwhile can go out ahead of this one.
        let _held = self.flush();
        self.route_one(event);
    }

    /// `event` to its session's subscribers, if any.
    fn route_one(&self, event: Event) {
        if let Some(route) = self.route(&event.session_id) {
            route.high.fetch_max(event.seq, Ordering::AcqRel);
            let _ = route.tx.send(Arc::new(SharedEvent::new(event)));
        }
    }

    /// Whether the event numbered just before `seq` in `route`'s session was broadcast
    /// here or is held to be (or `seq` is the session's first).
    fn has_before(&self, route: &Route, seq: u64) -> bool {
        let before = seq.saturating_sub(1);
        route.high.load(Ordering::Acquire) >= before
            || lock(&self.held)
                .iter()
                .any(|e| e.seq == before && e.session_id == route.session_id)
    }

    /// Keeps `event` until the next [`Live::send`] or [`Live::flush`].
    fn hold(&self, event: Event) {
        lock(&self.held).push(event);
    }

    /// Sends whatever is held; the list stays locked while the guard returned lives.
    fn flush(&self) -> MutexGuard<'_, Vec<Event>> {
        let mut held = lock(&self.held);
        for early in held.drain(..) {
            self.route_one(early);
        }
        held
    }
}

/// Every holder of these locks leaves what they guard whole, so a panic elsewhere cannot
/// spoil it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// An event its store logged beside what it announces is published live; one logged
    /// before it that has not reached the live side (a call's start whose task has not
    /// run) is read from the log once and goes out first, so no subscriber meets a gap.
    #[tokio::test]
    async fn a_published_event_brings_the_one_before_it_along() {
        let log = Arc::new(MemoryEventLog::default());
        let bus = EventBus::new(Arc::clone(&log) as Arc<dyn EventLog>);
        assert!(bus.logs_to(&(Arc::clone(&log) as Arc<dyn EventLog>)));
        assert!(!bus.logs_to(&(Arc::new(MemoryEventLog::default()) as Arc<dyn EventLog>)));
        let mut subs = Vec::new();
        for _ in 0..3 {
            subs.push(bus.subscribe("s", 0).await.unwrap());
        }
        let at = || "2026-12-01T00:00:00Z".to_owned();
        log.append_event("s", at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
        let second = log
            .append_event("s", at(), EventKind::TurnStarted { turn: 2 })
            .await
            .unwrap();
        bus.publish(second).await;
        for sub in &mut subs {
            assert_eq!(sub.rx.len(), 2, "both events live, in one wave");
            let first = sub.try_next_shared().expect("the first, live");
            let second = sub.try_next_shared().expect("the second, live");
            assert_eq!((first.event().seq, second.event().seq), (1, 2));
        }
        // A session nobody here follows: nothing is sent, nothing fails.
        let other = log
            .append_event("t", at(), EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap();
        bus.publish(other).await;
        assert!(subs.iter().all(|sub| sub.rx.is_empty()));
    }

    #[tokio::test]
    async fn a_feed_is_handed_only_its_own_sessions_events() {
        let bus = EventBus::in_memory();
        let mut sub = bus.subscribe("s1", 0).await.unwrap();
        for i in 0..200 {
            bus.emit("s2", EventKind::TurnStarted { turn: i })
                .await
                .unwrap();
        }
        // Nothing of session s2 waits in s1's receiver: its feed is not woken for them.
        assert_eq!(sub.rx.len(), 0, "other sessions' events reached the feed");
        bus.emit("s1", EventKind::TurnStarted { turn: 0 })
            .await
            .unwrap();
        assert_eq!(sub.rx.len(), 1);
        assert_eq!(sub.next().await.unwrap().unwrap().seq, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sessions_route_goes_with_its_last_subscriber() {
        let bus = EventBus::in_memory();
        let a1 = bus.subscribe("s1", 0).await.unwrap();
        let a2 = bus.subscribe("s1", 0).await.unwrap();
        let b = bus.subscribe("s2", 0).await.unwrap();
        assert_eq!(bus.routes(), 2, "one per session, not per subscriber");
        drop(a1);
        assert_eq!(bus.routes(), 2, "s1 still has a subscriber");
        drop(a2);
        assert_eq!(bus.routes(), 1);
        drop(b);
        assert_eq!(bus.routes(), 0);
        // Many subscribers coming and going at once, on a few sessions, while events
        // flow: the map ends empty (no session left behind), and events still arrive.
        let mut tasks = Vec::new();
        for t in 0..8 {
            let bus = Arc::clone(&bus);
            tasks.push(tokio::spawn(async move {
                for i in 0..200 {
                    let session = format!("s{}", (t + i) % 3);
                    let sub = bus.subscribe(&session, u64::MAX - 1).await.unwrap();
                    bus.emit(&session, EventKind::TurnStarted { turn: i })
                        .await
                        .unwrap();
                    drop(sub);
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(bus.routes(), 0, "the map shrank back");
        let mut sub = bus.subscribe("s1", 0).await.unwrap();
        assert_eq!(bus.routes(), 1);
        assert_eq!(sub.next().await.unwrap().unwrap().seq, 1);
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
            by_person: None,
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
