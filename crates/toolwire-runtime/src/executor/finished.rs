//! A call's life as one value: what [`Executor::execute`] returns and only landing (or a
//! caller with no store, unlanded) consumes. It carries everything between the two, the
//! result, the raw payload as received, the open span and the suspensions it went
//! through, so nothing joins them by call id in a table on the side.

use super::*;
use toolwire_store::StoredResult;

/// A call that ran to its result, or stopped to wait for a person. Land it
/// ([`Executor::land`]): stored, announced as stored, its span ended and its suspensions
/// forgotten; resume it first while it waits ([`Executor::resume`]).
#[must_use = "a finished call must be landed (Executor::land) or taken unlanded (Finished::into_result)"]
pub struct Finished {
    pub(super) session_id: String,
    pub(super) result: ToolResult,
    pub(super) raw: Option<KeptRaw>,
    pub(super) span: Option<spans::OpenCall>,
    pub(super) suspensions: Vec<String>,
    /// The caller's progress tap, kept for the call's resumption.
    pub(super) progress: Option<Arc<dyn ProgressSink>>,
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finished")
            .field("session_id", &self.session_id)
            .field("result", &self.result)
            .field("raw", &self.raw)
            .field("span", &self.span)
            .field("suspensions", &self.suspensions)
            .finish_non_exhaustive()
    }
}

impl Finished {
    /// A result of a call that ran outside this process (an AG-UI agent's tool, a
    /// server's task answered elsewhere), to land like any other: no raw payload, no span.
    pub fn elsewhere(session_id: impl Into<String>, result: ToolResult) -> Self {
        Finished {
            session_id: session_id.into(),
            result,
            raw: None,
            span: None,
            suspensions: Vec::new(),
            progress: None,
        }
    }

    /// This value with `text` (the payload as received, as JSON text) to keep beside its
    /// result when it lands.
    pub fn keeping_raw(mut self, text: Vec<u8>) -> Self {
        self.raw = Some(KeptRaw {
            text: Some(text),
            announced: None,
        });
        self
    }

    /// This value with `ids` as the suspensions to forget when it lands: a result made
    /// in place of a call that waited (its wait cancelled, its answer failed).
    pub fn forgetting(mut self, ids: Vec<String>) -> Self {
        self.suspensions = ids;
        self
    }

    /// The session the call belongs to: with the call id, what identifies it.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The call's result as it is now (suspended while it waits for a person).
    pub fn result(&self) -> &ToolResult {
        &self.result
    }

    /// The result, to add to before it lands (a subagent's session named in it).
    pub fn result_mut(&mut self) -> &mut ToolResult {
        &mut self.result
    }

    /// Whether it waits for a person.
    pub fn is_suspended(&self) -> bool {
        self.result.status == Status::Suspended
    }

    /// The ids of the suspensions it went through, forgotten when it lands.
    pub fn suspensions(&self) -> &[String] {
        &self.suspensions
    }

    /// Gives up the suspensions it went through to the caller, who forgets them itself
    /// (a call whose result another instance stores).
    pub fn take_suspensions(&mut self) -> Vec<String> {
        std::mem::take(&mut self.suspensions)
    }

    /// Why it cannot land in `session_id`'s batch: it still waits, or it is another
    /// session's call.
    fn unlandable(&self, session_id: &str) -> Option<LandError> {
        if self.is_suspended() {
            Some(LandError::StillWaiting(self.result.call_id.clone()))
        } else if self.session_id != session_id {
            Some(LandError::OtherSession(self.session_id.clone()))
        } else {
            None
        }
    }

    /// The result, not landed: for a caller that keeps no history (a test, a bench, a
    /// one-shot normalizer). Its span ends with it; nothing is stored or announced.
    pub fn into_result(self) -> ToolResult {
        if let Some(span) = self.span {
            span.end(&self.result);
        }
        self.result
    }
}

impl Executor {
    /// Lands a finished call through the sink: stored, announced as stored, its span
    /// ended with the stored result, its suspensions forgotten. Every caller that
    /// finishes a call ends it here. `call` is the call itself when it was not stored as
    /// it started (a call recorded behind its answer): stored just before its result.
    pub async fn land(
        &self,
        finished: Finished,
        call: Option<ToolCall>,
    ) -> Result<StoredResult, LandError> {
        let sink = self.sink.get().ok_or(LandError::NoSink)?;
        let session_id = finished.session_id.clone();
        if let Some(why) = finished.unlandable(&session_id) {
            return Err(why);
        }
        let (landing, span) = self.landing(finished, call);
        let stored = sink.land(&session_id, landing).await;
        self.end_landed_span(span, &stored);
        Ok(stored?)
    }

    /// [`Executor::land`] for several finished calls of one session, in order: the sink
    /// may store them all in one write. Each gets its own outcome.
    pub async fn land_many(
        &self,
        session_id: &str,
        finished: Vec<(Option<ToolCall>, Finished)>,
    ) -> Vec<Result<StoredResult, LandError>> {
        let Some(sink) = self.sink.get() else {
            return finished.iter().map(|_| Err(LandError::NoSink)).collect();
        };
        // Only whole, settled calls of this session go into the batch.
        let mut outcomes: Vec<Option<Result<StoredResult, LandError>>> = Vec::new();
        let mut landings = Vec::with_capacity(finished.len());
        let mut spans = Vec::with_capacity(finished.len());
        for (call, finished) in finished {
            if let Some(why) = finished.unlandable(session_id) {
                outcomes.push(Some(Err(why)));
                continue;
            }
            let (landing, span) = self.landing(finished, call);
            landings.push(landing);
            spans.push(span);
            outcomes.push(None);
        }
        let mut stored = sink.land_many(session_id, landings).await.into_iter();
        let mut spans = spans.into_iter();
        outcomes
            .into_iter()
            .map(|outcome| match outcome {
                Some(refused) => refused,
                None => {
                    let landed = stored.next().unwrap_or(Err(StoreError::WriterGone));
                    self.end_landed_span(spans.next().flatten(), &landed);
                    Ok(landed?)
                }
            })
            .collect()
    }

    /// A finished call on its way to the sink, and its span, which ends with the landing.
    fn landing(
        &self,
        finished: Finished,
        call: Option<ToolCall>,
    ) -> (Landing, Option<spans::OpenCall>) {
        let Finished {
            result,
            raw,
            span,
            suspensions,
            ..
        } = finished;
        let raw = raw.unwrap_or_default();
        let landing = Landing {
            result,
            raw: raw.announced,
            raw_text: raw.text,
            suspensions,
            call,
        };
        (landing, span)
    }

    /// Ends a call's span with its result as stored: its media by blob reference.
    fn end_landed_span(
        &self,
        span: Option<spans::OpenCall>,
        stored: &Result<StoredResult, StoreError>,
    ) {
        let Some(span) = span else { return };
        match stored {
            Ok(stored) => span.end(&stored.result),
            Err(_) => span.end(&landed_unknown()),
        }
    }
}

/// The result a span records when the store gave none back (the landing failed).
fn landed_unknown() -> ToolResult {
    ToolResult::error_with_code(
        CallRef::new("", ""),
        ErrorCode::StoreFailed,
        "the result could not be stored",
    )
}
