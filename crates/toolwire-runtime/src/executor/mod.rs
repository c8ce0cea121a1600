//! The executor: runs calls under the tool contract (input checked, modes, approvals,
//! timeouts, panics, cancels). Whatever happens, each call gets exactly one valid result
//! that echoes its `callId` and `toolName`. The contract is written out in
//! `docs/contracts.md`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;
use toolwire_core::{
    Audience, CallRef, ErrorCode, EventKind, PendingCall, Resolution, Status, Suspension,
    SuspensionReason, ToolCall, ToolResult, TraceContext, Value, WellKnown,
};
use toolwire_normalize::normalize_value;
use toolwire_store::{MemorySuspensions, StoreError, SuspensionStore};
use toolwire_tool::{
    ApprovalPolicy, ExecutionMode, Output, ProgressSink, Received, Resume, ToolContext, ToolError,
};

use crate::clock::now_rfc3339;
use crate::events::EventBus;
use crate::registry::{Registered, Registry, RegistryError};
use crate::sink::{LandError, Landing, ResultSink};
use crate::trace::{SharedTracer, Tracer};

mod finished;
mod spans;
mod suspend;

pub use finished::Finished;

/// How an [`Executor`] runs calls: concurrency, timeouts, raw payloads.
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// Calls of one batch running at once.
    pub concurrency: usize,
    /// For tools whose schema sets no timeout.
    pub default_timeout: Duration,
    /// Raw payloads ride along in `tool_result` events (for debugging a tool), and are
    /// stored beside their results whatever their size.
    pub debug_raw: bool,
    /// With a result sink, a raw payload (an MCP result as received) whose JSON text is at
    /// most this many bytes is stored beside its result (`metadata.rawRef`), so a person
    /// can download what the server sent; 0 keeps none. Larger ones are not kept: the
    /// result itself holds what they said, their media already stored once.
    pub raw_limit: usize,
}

/// The default [`ExecutorConfig::raw_limit`]: most MCP results are a few kilobytes; one
/// with inline media would store its bytes twice.
pub const DEFAULT_RAW_LIMIT: usize = 1 << 20;

/// The variable [`ExecutorConfig::from_env`] reads `debug_raw` from.
pub const DEBUG_RAW_ENV: &str = "TOOLWIRE_DEBUG_TOOL_RESULT_RAW";

/// The defaults, independent of the process environment: a library's behaviour must not
/// change with a variable its embedder never heard of. Hosts opt in with `from_env`.
impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            concurrency: 8,
            default_timeout: Duration::from_secs(120),
            debug_raw: false,
            raw_limit: DEFAULT_RAW_LIMIT,
        }
    }
}

impl ExecutorConfig {
    /// The defaults, with `debug_raw` from `TOOLWIRE_DEBUG_TOOL_RESULT_RAW=1` (or `true`).
    pub fn from_env() -> Self {
        ExecutorConfig {
            debug_raw: std::env::var(DEBUG_RAW_ENV).is_ok_and(|v| v == "1" || v == "true"),
            ..ExecutorConfig::default()
        }
    }
}

/// Who is calling: the session the calls belong to, and a cancel for all of them.
#[derive(Clone)]
pub struct Scope {
    /// The session the calls belong to.
    pub session_id: String,
    /// The trace the calls run under; the session id unless the host sets one.
    pub trace_id: String,
    /// The session's owner, when the host knows one; tools see it in their context.
    pub user_id: Option<String>,
    /// Cancelling it ends every running call of the scope with a `cancelled` error.
    pub cancel: CancellationToken,
    /// Milliseconds the call being resumed has waited for a person so far (set by
    /// [`Executor::resolve`]; 0 for fresh calls): stamped on its result as `waitedMs`, and
    /// carried by a suspension it makes again.
    pub waited_ms: u64,
    /// The span the calls run under (a turn's `invoke_agent`), when tracing is on.
    pub trace: Option<TraceContext>,
    /// Also told each progress report of the calls, after their one throttle and at the
    /// same time as the event log, not after its commit: a caller that passes progress
    /// on (the gateway, to its host) needs neither a second throttle nor the log.
    pub progress: Option<Arc<dyn ProgressSink>>,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("session_id", &self.session_id)
            .field("trace_id", &self.trace_id)
            .field("user_id", &self.user_id)
            .field("waited_ms", &self.waited_ms)
            .field("trace", &self.trace)
            .field("progress", &self.progress.is_some())
            .finish_non_exhaustive()
    }
}

impl Scope {
    /// A scope for `session_id`, traced under the same id, with a fresh cancel.
    pub fn new(session_id: impl Into<String>) -> Self {
        let session_id = session_id.into();
        Scope {
            trace_id: session_id.clone(),
            session_id,
            user_id: None,
            cancel: CancellationToken::new(),
            waited_ms: 0,
            trace: None,
            progress: None,
        }
    }
}

/// Why an answer to a suspended call could not be applied.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// No call waits on that suspension id.
    #[error("no pending call with suspension id {0:?} (already resolved, or never suspended)")]
    NotFound(String),
    /// The suspension store failed.
    #[error("suspension store: {0}")]
    Store(#[from] StoreError),
    /// The call given to resume does not wait for anyone.
    #[error("call {0:?} does not wait for an answer")]
    NotWaiting(String),
}

/// Runs tool calls under toolwire's contract: one valid result per call, in call order.
pub struct Executor {
    /// Swapped whole when tools come or go (an MCP server got ready after the host
    /// started): a call, a turn or a listing works on the snapshot it took.
    registry: std::sync::RwLock<Arc<Registry>>,
    events: Arc<EventBus>,
    suspensions: Arc<dyn SuspensionStore>,
    config: ExecutorConfig,
    /// Where finished calls land (set once, by the host that stores them). A call's
    /// raw payload and open span travel in its [`Finished`] value, not in a table here.
    sink: std::sync::OnceLock<Arc<dyn ResultSink>>,
    /// Where spans go; `None` (the default) traces nothing and costs nothing.
    tracer: SharedTracer,
}

/// The parts of an [`Executor`]; see [`Executor::builder`].
pub struct ExecutorBuilder {
    registry: Registry,
    events: Option<Arc<EventBus>>,
    suspensions: Option<Arc<dyn SuspensionStore>>,
    config: ExecutorConfig,
    sink: Option<Arc<dyn ResultSink>>,
    tracer: SharedTracer,
}

impl std::fmt::Debug for ExecutorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorBuilder")
            .field("tools", &self.registry.names())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ExecutorBuilder {
    /// Where events are logged and broadcast (default: in memory).
    pub fn events(mut self, events: Arc<EventBus>) -> Self {
        self.events = Some(events);
        self
    }

    /// Where waiting calls are recorded, so any process can finish them (default: in
    /// memory).
    pub fn suspensions(mut self, suspensions: Arc<dyn SuspensionStore>) -> Self {
        self.suspensions = Some(suspensions);
        self
    }

    /// Limits and debugging switches (default: [`ExecutorConfig::default`]).
    pub fn config(mut self, config: ExecutorConfig) -> Self {
        self.config = config;
        self
    }

    /// Where finished results land ([`Executor::set_sink`]).
    pub fn sink(mut self, sink: Arc<dyn ResultSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Where calls' `execute_tool` spans go (default: nowhere).
    pub fn tracer(mut self, tracer: Arc<dyn Tracer>) -> Self {
        self.tracer = Some(tracer);
        self
    }

    /// The executor, with defaults for every part left out.
    pub fn build(self) -> Executor {
        let sink = std::sync::OnceLock::new();
        if let Some(s) = self.sink {
            let _ = sink.set(s);
        }
        Executor {
            registry: std::sync::RwLock::new(Arc::new(self.registry)),
            events: self.events.unwrap_or_else(EventBus::in_memory),
            suspensions: self
                .suspensions
                .unwrap_or_else(|| Arc::new(MemorySuspensions::default())),
            config: self.config,
            sink,
            tracer: self.tracer,
        }
    }
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("tools", &self.registry().names())
            .finish_non_exhaustive()
    }
}

impl Executor {
    /// An executor over `registry` with the defaults: events in memory, suspensions in
    /// memory, [`ExecutorConfig::default`], no sink.
    pub fn new(registry: Registry) -> Self {
        Executor::builder(registry).build()
    }

    /// Builds an executor over `registry`; each part left out takes its default.
    pub fn builder(registry: Registry) -> ExecutorBuilder {
        ExecutorBuilder {
            registry,
            events: None,
            suspensions: None,
            config: ExecutorConfig::default(),
            sink: None,
            tracer: None,
        }
    }

    /// Another executor over `registry` that shares this one's events, suspensions,
    /// limits and sink: an agent's tool set (with `task`), a subagent's (without).
    pub fn with_tools(&self, registry: Registry) -> Executor {
        let mut builder = Executor::builder(registry)
            .events(Arc::clone(&self.events))
            .suspensions(Arc::clone(&self.suspensions))
            .config(self.config.clone());
        builder.sink = self.sink.get().cloned();
        builder.tracer = self.tracer.clone();
        builder.build()
    }

    /// The tools as they are now (a snapshot: tools added later are not in it).
    pub fn registry(&self) -> Arc<Registry> {
        match self.registry.read() {
            Ok(r) => Arc::clone(&r),
            // A panic while swapping left the old or the new set, both whole.
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Changes the tool set: `change` works on a copy, which replaces the set only when
    /// it succeeds, so calls see the old set or the new one, never a half-made one.
    pub fn update_tools(
        &self,
        change: impl FnOnce(&mut Registry) -> Result<(), RegistryError>,
    ) -> Result<(), RegistryError> {
        let mut slot = match self.registry.write() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut next = Registry::clone(&slot);
        change(&mut next)?;
        *slot = Arc::new(next);
        Ok(())
    }

    /// The bus its events go to.
    pub fn events(&self) -> &Arc<EventBus> {
        &self.events
    }

    /// The tracer spans go to, if tracing is on: an agent's turns and model requests
    /// use the same one.
    pub fn tracer(&self) -> Option<&Arc<dyn Tracer>> {
        self.tracer.as_ref()
    }

    /// Sets where finished calls land; `false` when one was set already (the first
    /// stays).
    pub fn set_sink(&self, sink: Arc<dyn ResultSink>) -> bool {
        self.sink.set(sink).is_ok()
    }

    /// Whether finished calls can land (see [`Executor::set_sink`]).
    pub fn has_sink(&self) -> bool {
        self.sink.get().is_some()
    }

    /// Its limits and debugging switches.
    pub fn config(&self) -> &ExecutorConfig {
        &self.config
    }

    /// Runs calls with bounded concurrency; they come back in call order, whatever
    /// order they finish in.
    pub async fn execute_all(&self, scope: &Scope, calls: Vec<ToolCall>) -> Vec<Finished> {
        futures::stream::iter(calls)
            .map(|call| self.execute(scope, call))
            .buffered(self.config.concurrency.max(1))
            .collect()
            .await
    }

    /// Runs one call to exactly one result, or to a wait for a person: the finished call
    /// is landed ([`Executor::land`]) or resumed ([`Executor::resume`]).
    pub async fn execute(&self, scope: &Scope, call: ToolCall) -> Finished {
        self.execute_as(scope, call, false).await
    }

    /// [`Executor::execute`] for a call its caller has approved already: a tool whose
    /// policy asks for approval runs without suspending for it. What a tool asks while it
    /// runs (a blocking tool's question, an MCP server's) is still asked. For a call that
    /// is nobody's to approve: an MCP App's call of its own server's tool that only apps
    /// may call, once the person let the app run. Suspending such a call and approving it
    /// at once still wrote, announced and claimed a suspension for each (a monitor app
    /// polling every 2 s was a call waiting for approval every 2 s on the page).
    pub async fn execute_approved(&self, scope: &Scope, call: ToolCall) -> Finished {
        self.execute_as(scope, call, true).await
    }

    async fn execute_as(&self, scope: &Scope, mut call: ToolCall, approved: bool) -> Finished {
        let started = Started::now();
        let span = self.open_tool_span(scope, &call);
        let trace = span.as_ref().map(|open| open.context().clone());
        // Queued, not waited for: nothing of the call depends on the log having it, and
        // every later event of the call is logged after it.
        let announced = EventKind::ToolCallStarted {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            input: call.input.clone(),
            by_person: call.by_person.clone(),
        };
        let _ = self.events.announce(&scope.session_id, announced).await;
        let registry = self.registry();
        let ran = match registry.get(&call.name) {
            None => {
                let known = registry.names().join(", ");
                Ran::from(ToolResult::error_with_code(
                    CallRef::new(&call.id, &call.name),
                    ErrorCode::UnknownTool,
                    format!("unknown tool `{}`; available tools: {known}", call.name),
                ))
            }
            Some(reg) => self.admit(scope, reg, &mut call, approved, trace).await,
        };
        self.finish(scope, started, ran, span, Vec::new()).await
    }

    /// Input check, then approval (unless `approved` already) or blocking suspension,
    /// else the run itself.
    async fn admit(
        &self,
        scope: &Scope,
        reg: &Registered,
        call: &mut ToolCall,
        approved: bool,
        trace: Option<TraceContext>,
    ) -> Ran {
        if let Err(why) = reg.accept_input(&mut call.input) {
            return Ran::from(ToolResult::error_with_code(
                CallRef::new(&call.id, &call.name),
                ErrorCode::InvalidInput,
                format!("invalid input: {why}"),
            ));
        }
        let schema = reg.schema();
        let suspension = if schema.approval == ApprovalPolicy::Always && !approved {
            Some(Suspension {
                id: new_suspension_id(),
                reason: SuspensionReason::Approval,
                prompt: format!("Allow {} to run with {}?", call.name, call.input),
                input_schema: None,
            })
        } else if schema.execution_mode == ExecutionMode::Blocking {
            Some(Suspension {
                id: new_suspension_id(),
                reason: SuspensionReason::Input,
                prompt: reg.tool.prompt(&call.input),
                input_schema: None,
            })
        } else {
            None
        };
        match suspension {
            // Boxed: a suspension is rare, and its future would otherwise size every
            // call's (which is moved whole into a task).
            Some(s) => Ran::from(Box::pin(self.suspend(scope, call, s, None)).await),
            None => self.run(scope, reg, call, false, trace).await,
        }
    }

    /// Runs the tool: timeout, panic and cancel become error results; widgets are kept
    /// only on success (a failed call's widget would show what did not happen).
    async fn run(
        &self,
        scope: &Scope,
        reg: &Registered,
        call: &ToolCall,
        approved: bool,
        trace: Option<TraceContext>,
    ) -> Ran {
        let (ctx, throttle) = self.context(scope, call, approved, trace);
        let fut = reg.tool.execute(call.input.clone(), ctx.clone());
        self.run_future(scope, reg, call, (ctx, throttle), fut)
            .await
    }

    /// Whether payloads as received are kept: for the store (a sink, within `raw_limit`)
    /// or for the announcement (debugging).
    fn keeps_raw(&self) -> bool {
        self.config.debug_raw || (self.has_sink() && self.config.raw_limit > 0)
    }

    /// The context a call's tool runs with, cancelled with the scope; `trace` is the
    /// call's own span's context when this process traces.
    /// With the context comes its progress throttle, which the run flushes when the
    /// tool ends.
    fn context(
        &self,
        scope: &Scope,
        call: &ToolCall,
        approved: bool,
        trace: Option<TraceContext>,
    ) -> (ToolContext, Arc<crate::progress::Throttled>) {
        let events = Arc::clone(&self.events) as Arc<dyn ProgressSink>;
        let sink = match &scope.progress {
            Some(tap) => Arc::new(crate::progress::Both(events, Arc::clone(tap))),
            None => events,
        };
        // Coalesced once per call: a flood of reports must not become a flood of stored
        // events, nor of the caller's notifications.
        let throttle = Arc::new(crate::progress::Throttled::new(
            sink,
            crate::progress::PROGRESS_INTERVAL,
        ));
        let mut ctx = ToolContext::new(
            &call.id,
            &scope.session_id,
            &scope.trace_id,
            scope.user_id.clone(),
            Some(Arc::clone(&throttle) as Arc<dyn ProgressSink>),
        );
        ctx.approved = approved;
        ctx.cancel = scope.cancel.child_token();
        // The call's own span when this process traces; else the caller's context as it
        // came (an MCP host's, through the gateway), which a process that does not trace
        // passes on unchanged, as W3C asks of one.
        ctx.trace = trace.or_else(|| scope.trace.clone());
        if self.keeps_raw() {
            ctx = ctx.keeping_received();
        }
        (ctx, throttle)
    }

    /// Drives a tool's future (a run or a resume) to one result.
    async fn run_future(
        &self,
        scope: &Scope,
        reg: &Registered,
        call: &ToolCall,
        (ctx, throttle): (ToolContext, Arc<crate::progress::Throttled>),
        fut: BoxFuture<'static, Result<Output, ToolError>>,
    ) -> Ran {
        // Made only for a result of its own (an error); a tool's result carries its own.
        let call_ref = || CallRef::new(&call.id, &call.name);
        let schema = reg.schema();
        let cancel = ctx.cancel.clone();
        let timeout = schema.timeout.unwrap_or(self.config.default_timeout);
        let fut = AssertUnwindSafe(fut).catch_unwind();
        let outcome = tokio::select! {
            biased;
            _ = scope.cancel.cancelled() => Err(interrupted(call_ref())),
            r = tokio::time::timeout(timeout, fut) => match r {
                Err(_) => Err(ToolResult::error_with_code(call_ref(), ErrorCode::Timeout, format!("timed out after {}", humantime::format_duration(timeout)))),
                Ok(Err(panic)) => Err(ToolResult::error_with_code(call_ref(), ErrorCode::Panic, format!("the tool panicked: {}", panic_message(&*panic)))),
                Ok(Ok(r)) => Ok(r),
            },
        };
        // The scope's cancel reaches the tool through its child token: a tool that saw
        // it first (the cancel landed between the two branches' polls, on another
        // thread) ended for the same reason, and gets the same result.
        let outcome = match outcome {
            Ok(Err(ToolError::Cancelled)) if scope.cancel.is_cancelled() => {
                Err(interrupted(call_ref()))
            }
            other => other,
        };
        // Whatever ended the wait, tell the tool to stop.
        cancel.cancel();
        // The last step held back goes out before the result.
        throttle.flush(&scope.session_id, &call.id).await;
        match outcome {
            Err(failed) => Ran::from(failed),
            Ok(Err(ToolError::Suspend { suspension, state })) => Ran::from(
                Box::pin(self.suspend(scope, call, *suspension, Some(state.unwrap_or(Json::Null))))
                    .await,
            ),
            Ok(Err(e)) => Ran::from(tool_error(call_ref(), e)),
            Ok(Ok(output)) => {
                // The raw payload is kept for the store (a sink, within `raw_limit`) or for
                // the event (debugging): the tool's raw output, or what a typed tool (an MCP
                // server's) reported it received.
                let raw = match &output {
                    Output::Raw(raw) if self.keeps_raw() => Some(Received::Json(raw.clone())),
                    _ => ctx.take_received(),
                };
                let mut result = to_result(reg, call, output);
                if let Some(suspension) = result
                    .suspension
                    .take()
                    .filter(|_| result.status == Status::Suspended)
                {
                    // A suspended output (an MCP `input_required`) is recorded like a
                    // mid-run suspension; its metadata is the state the tool resumes from.
                    let state = serde_json::to_value(&result.metadata).unwrap_or(Json::Null);
                    return Ran::from(
                        Box::pin(self.suspend(scope, call, suspension, Some(state))).await,
                    );
                }
                if result.status == Status::Success {
                    result.widgets.extend(ctx.take_widgets());
                    if schema.execution_mode == ExecutionMode::Display {
                        for_display(&mut result);
                    }
                }
                Ran { result, raw }
            }
        }
    }

    /// Stamps timing and makes the call's value: its result, the raw payload kept for
    /// its landing, its open span (with a wait for a person when it suspended), and the
    /// suspensions it went through (`earlier`, then its own when it waits). A call that
    /// waits is announced here, as waiting (a finished one is announced by its landing,
    /// once stored).
    async fn finish(
        &self,
        scope: &Scope,
        started: Started,
        ran: Ran,
        mut span: Option<spans::OpenCall>,
        mut suspensions: Vec<String>,
    ) -> Finished {
        let Ran { mut result, raw } = ran;
        result.metadata.started_at = Some(started.at);
        result.metadata.ended_at = Some(now_rfc3339());
        result.metadata.duration_ms = Some(started.clock.elapsed().as_millis() as u64);
        if result.status == Status::Suspended {
            if let Some(open) = span.as_mut() {
                self.suspended_span(open, &result);
            }
            if let Some(s) = &result.suspension {
                suspensions.push(s.id.clone());
            }
            // Boxed: most calls never wait, and this would size every call's future.
            Box::pin(self.emit(scope, EventKind::tool_result(result.clone(), None))).await;
        } else if scope.waited_ms > 0 {
            result.metadata.waited_ms = Some(scope.waited_ms);
        }
        Finished {
            session_id: scope.session_id.clone(),
            raw: raw.map(|raw| self.kept_raw(raw)),
            result,
            span,
            suspensions,
            progress: scope.progress.clone(),
        }
    }

    async fn emit(&self, scope: &Scope, kind: EventKind) {
        // Events are the live view; the result itself is returned to the caller, who
        // persists it. A failing event log must not fail the call.
        let _ = self.events.emit(&scope.session_id, kind).await;
    }
}

/// Milliseconds from `since` (RFC 3339, maybe written by another process) to now; 0 when
/// unknown (a call suspended before this was recorded) or in the future (clock skew).
fn waited_since(since: Option<&str>) -> u64 {
    since
        .and_then(|at| humantime::parse_rfc3339(at).ok())
        .and_then(|at| std::time::SystemTime::now().duration_since(at).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A finished call's raw payload on its way to the sink: its JSON text to store (within
/// `raw_limit`, or any size when debugging) and, when debugging, the payload to announce.
#[derive(Debug, Default)]
pub(super) struct KeptRaw {
    pub(super) text: Option<Vec<u8>>,
    pub(super) announced: Option<Json>,
}

impl Executor {
    /// A payload received as text is stored as that text (the tool's reader checked it
    /// is one JSON value): parsed again only to be announced when debugging.
    fn kept_raw(&self, raw: Received) -> KeptRaw {
        let debug = self.config.debug_raw;
        let (text, announced) = match raw {
            Received::Json(json) => (serde_json::to_vec(&json).ok(), debug.then_some(json)),
            Received::Text(text) => {
                let announced = if debug {
                    serde_json::from_str(&text).ok()
                } else {
                    None
                };
                (Some(text.into_bytes()), announced)
            }
        };
        KeptRaw {
            text: text.filter(|text| debug || text.len() <= self.config.raw_limit),
            announced,
        }
    }
}

/// A finished call and, when it is kept (debugging, or for the store), the raw payload
/// the tool returned.
struct Ran {
    result: ToolResult,
    raw: Option<Received>,
}

impl From<ToolResult> for Ran {
    fn from(result: ToolResult) -> Self {
        Ran { result, raw: None }
    }
}

struct Started {
    at: String,
    clock: Instant,
}

impl Started {
    fn now() -> Self {
        Started {
            at: now_rfc3339(),
            clock: Instant::now(),
        }
    }
}

/// The result of a call cancelled while it ran (its scope's cancel here, a turn's
/// cancel while an approved call ran in the agent loop).
pub fn interrupted(call: CallRef) -> ToolResult {
    ToolResult::error_with_code(
        call,
        ErrorCode::Cancelled,
        "cancelled: interrupted before completion",
    )
}

fn new_suspension_id() -> String {
    toolwire_core::new_id("susp")
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

fn tool_error(call: CallRef, e: ToolError) -> ToolResult {
    let mut result = ToolResult::error(call, e.to_string());
    if let (Some(info), ToolError::Failed { code, details, .. }) = (result.error.as_mut(), &e) {
        info.code.clone_from(code);
        info.details.clone_from(details);
    }
    if let (Some(info), ToolError::InvalidInput(_)) = (result.error.as_mut(), &e) {
        info.code = Some(ErrorCode::InvalidInput.into());
    }
    if let (Some(info), ToolError::Cancelled) = (result.error.as_mut(), &e) {
        info.code = Some(ErrorCode::Cancelled.into());
    }
    result
}

/// Turns a tool's output into a valid result for this call, checking `outputSchema`; a
/// broken output becomes an `invalid_output` error result.
fn to_result(reg: &Registered, call: &ToolCall, output: Output) -> ToolResult {
    // Made only where it is used: a typed result (an MCP tool's) carries its own.
    let call_ref = || CallRef::new(&call.id, &call.name);
    let invalid = |why: String| {
        ToolResult::error_with_code(
            call_ref(),
            ErrorCode::InvalidOutput,
            format!("invalid output: {why}"),
        )
    };
    let mut result = match output {
        Output::Values(values) => ToolResult::success(call_ref(), values),
        Output::Raw(raw) => normalize_value(raw, &call_ref()).result,
        Output::Result(r) => *r,
    };
    // Only successes are checked against `outputSchema`, which describes them: an error's
    // own text must reach the person and the model, and a suspended call is checked when
    // its final result arrives. The structured value checked is the one stored and sent.
    if reg.has_output_schema() && result.status == Status::Success {
        let verdict = match first_structured(&result.output) {
            Some(data) => reg.check_output(data),
            None => Err("the tool has an outputSchema but returned no structured value".into()),
        };
        if let Err(why) = verdict {
            return invalid(why);
        }
    }
    result.call_id.clone_from(&call.id);
    result.tool_name.clone_from(&call.name);
    match result.validate() {
        Ok(()) => result,
        Err(violations) => {
            let first: Vec<String> = violations.iter().take(3).map(ToString::to_string).collect();
            invalid(first.join("; "))
        }
    }
}

fn first_structured(values: &[Value]) -> Option<&Json> {
    values
        .iter()
        .find(|v| v.is_kind(WellKnown::Structured))
        .map(|v| &v.data)
}

/// Display tools: the values are for the person, the model gets an acknowledgement.
fn for_display(result: &mut ToolResult) {
    let shown = result.output.len() + result.widgets.len();
    for value in &mut result.output {
        value
            .annotations
            .get_or_insert_with(Default::default)
            .audience = Some(vec![Audience::User]);
    }
    let ack = Value::text(format!("Displayed {shown} item(s) to the user."))
        .audience([Audience::Assistant]);
    result.output.insert(0, ack);
}
