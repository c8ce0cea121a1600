//! Progress of one call, coalesced once, before it becomes durable events or reaches a
//! caller's tap (the gateway's host): a tool (or an MCP server) may report thousands of
//! times a second, and each report would be a stored event. The latest report wins; at
//! most one is passed on per interval, the final one (`done == total`) at once, the one
//! held back when the call ends before its result, and a message is cut to a bounded
//! size.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use toolwire_tool::ProgressSink;

/// At most one progress event per call per interval is stored (10 a second).
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Longest progress message kept, in characters; the rest is cut with "…".
pub(crate) const MAX_PROGRESS_MESSAGE: usize = 1024;

/// One report: done, total, message.
type Report = (u64, Option<u64>, Option<String>);

/// The progress sink of one call, in front of the executor's.
pub(crate) struct Throttled {
    inner: Arc<dyn ProgressSink>,
    interval: Duration,
    /// Shared with the task that sends a held-back report.
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    last: Option<Instant>,
    /// The latest report held back, sent when the interval ends.
    pending: Option<Report>,
    flush_scheduled: bool,
}

impl State {
    /// The report held back, to send now: the interval starts again from its sending.
    fn take_pending(&mut self) -> Option<Report> {
        let held = self.pending.take();
        if held.is_some() {
            self.last = Some(Instant::now());
        }
        held
    }
}

impl Throttled {
    pub(crate) fn new(inner: Arc<dyn ProgressSink>, interval: Duration) -> Self {
        Throttled {
            inner,
            interval,
            state: Arc::new(Mutex::new(State::default())),
        }
    }
}

fn cut(message: &str) -> String {
    match message.char_indices().nth(MAX_PROGRESS_MESSAGE) {
        Some((at, _)) => format!("{}…", &message[..at]),
        None => message.to_owned(),
    }
}

impl Throttled {
    /// Passes on the report held back, if any, now: the call ended, and its last step
    /// must come before its result. Reports after this are passed on as before.
    pub(crate) fn flush(&self, session_id: &str, call_id: &str) -> BoxFuture<'static, ()> {
        let held = self
            .state
            .lock()
            .ok()
            .and_then(|mut state| state.take_pending());
        match held {
            Some((done, total, message)) => {
                self.inner
                    .progress(session_id, call_id, done, total, message.as_deref())
            }
            None => Box::pin(async {}),
        }
    }
}

/// Two sinks told the same report at once: the event log, and a caller's tap that must
/// not wait for the log's commit.
pub(crate) struct Both(
    pub(crate) Arc<dyn ProgressSink>,
    pub(crate) Arc<dyn ProgressSink>,
);

impl ProgressSink for Both {
    fn progress(
        &self,
        session_id: &str,
        call_id: &str,
        done: u64,
        total: Option<u64>,
        message: Option<&str>,
    ) -> BoxFuture<'static, ()> {
        let first = self.0.progress(session_id, call_id, done, total, message);
        let second = self.1.progress(session_id, call_id, done, total, message);
        Box::pin(async move {
            futures::join!(first, second);
        })
    }
}

impl ProgressSink for Throttled {
    fn progress(
        &self,
        session_id: &str,
        call_id: &str,
        done: u64,
        total: Option<u64>,
        message: Option<&str>,
    ) -> BoxFuture<'static, ()> {
        let report: Report = (done, total, message.map(cut));
        let now = Instant::now();
        let last_one = total.is_some_and(|t| done >= t);
        let Ok(mut state) = self.state.lock() else {
            return Box::pin(async {});
        };
        let due = state.last.map(|l| l + self.interval);
        if last_one || due.is_none_or(|d| now >= d) {
            state.last = Some(now);
            state.pending = None;
            drop(state);
            let (done, total, message) = report;
            return self
                .inner
                .progress(session_id, call_id, done, total, message.as_deref());
        }
        state.pending = Some(report);
        if !state.flush_scheduled
            && let (Some(due), Ok(rt)) = (due, tokio::runtime::Handle::try_current())
        {
            state.flush_scheduled = true;
            let (inner, shared) = (Arc::clone(&self.inner), Arc::clone(&self.state));
            let interval = self.interval;
            let (session, call) = (session_id.to_owned(), call_id.to_owned());
            // Held back until the interval ends, then the latest report is sent.
            rt.spawn(async move {
                let mut due = due;
                let pending = loop {
                    tokio::time::sleep_until(due.into()).await;
                    let Ok(mut s) = shared.lock() else { return };
                    // A report sent meanwhile restarted the interval: wait for its end.
                    let next = s.last.map(|l| l + interval);
                    if let Some(next) = next.filter(|n| Instant::now() < *n) {
                        due = next;
                        continue;
                    }
                    s.flush_scheduled = false;
                    break s.take_pending();
                };
                if let Some((done, total, message)) = pending {
                    inner
                        .progress(&session, &call, done, total, message.as_deref())
                        .await;
                }
            });
        }
        Box::pin(async {})
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<Report>>);

    impl ProgressSink for Recorder {
        fn progress(
            &self,
            _session: &str,
            _call: &str,
            done: u64,
            total: Option<u64>,
            message: Option<&str>,
        ) -> BoxFuture<'static, ()> {
            self.0
                .lock()
                .unwrap()
                .push((done, total, message.map(str::to_owned)));
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn a_flood_becomes_a_bounded_rate_and_the_latest_report_wins() {
        let recorder = Arc::new(Recorder::default());
        let sink = Throttled::new(recorder.clone(), Duration::from_millis(50));
        let big = "x".repeat(4096);
        let started = Instant::now();
        let mut sent = 0u64;
        while started.elapsed() < Duration::from_millis(300) {
            sent += 1;
            sink.progress("s", "c", sent, None, Some(&big)).await;
        }
        tokio::time::sleep(Duration::from_millis(120)).await;
        let got = recorder.0.lock().unwrap().clone();
        assert!(sent > 1000, "the flood was a flood: {sent}");
        assert!(got.len() <= 300 / 50 + 2, "{} stored of {sent}", got.len());
        // The last report of the burst arrives once the interval ends.
        assert_eq!(got.last().unwrap().0, sent);
        let message = got[0].2.as_deref().unwrap();
        assert_eq!(message.chars().count(), MAX_PROGRESS_MESSAGE + 1);
        assert!(message.ends_with('…'));
        // The final report passes at once.
        sink.progress("s", "c", 10, Some(10), None).await;
        assert_eq!(recorder.0.lock().unwrap().last().unwrap().0, 10);
    }

    #[tokio::test]
    async fn the_step_held_back_goes_out_when_the_call_ends_not_an_interval_later() {
        let recorder = Arc::new(Recorder::default());
        let sink = Throttled::new(recorder.clone(), Duration::from_secs(60));
        sink.progress("s", "c", 1, Some(9), None).await;
        sink.progress("s", "c", 2, Some(9), None).await;
        sink.progress("s", "c", 3, Some(9), Some("nearly")).await;
        assert_eq!(recorder.0.lock().unwrap().len(), 1, "held back");
        sink.flush("s", "c").await;
        let got = recorder.0.lock().unwrap().clone();
        assert_eq!(
            got,
            [(1, Some(9), None), (3, Some(9), Some("nearly".into()))]
        );
        // Nothing is left to send twice.
        sink.flush("s", "c").await;
        assert_eq!(recorder.0.lock().unwrap().len(), 2);
    }
}
