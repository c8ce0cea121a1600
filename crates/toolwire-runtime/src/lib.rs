//! toolwire-runtime: the engine that runs tools under toolwire's contract.
//!
//! A [`Tool`] is registered in a [`Registry`]; an [`Executor`] runs calls against it and
//! guarantees one valid result per call, in call order, whatever the tool does: invalid
//! input, a panic, a timeout, a cancel, an unknown name, a required approval.

#![warn(missing_docs)]

mod clock;
mod events;
mod executor;
mod progress;
mod registry;
mod sink;
// A namespace, not re-exported at the root: the tracing hook's types and the GenAI
// attribute names read best as `trace::Tracer`, `trace::attr::TOOL_NAME`.
pub mod trace;

pub use events::{EventBus, SharedEvent, Subscription};
pub use executor::{
    DEBUG_RAW_ENV, DEFAULT_RAW_LIMIT, Executor, ExecutorBuilder, ExecutorConfig, Finished,
    ResolveError, Scope, interrupted,
};
pub use registry::{Registered, Registry, RegistryError};
pub use sink::{LandError, Landing, ResultSink, land_each};
/// The vocabulary and stores the executor works with, re-exported for one import.
pub use toolwire_core::{ErrorCode, Event, EventKind, PendingCall, Resolution, ToolCall};
pub use toolwire_store::{EventLog, MemoryEventLog, MemorySuspensions, SuspensionStore};
/// The tool contract the executor runs, re-exported so that hosts need one import.
pub use toolwire_tool::{
    ApprovalPolicy, CancellationToken, ExecutionMode, FnTool, Output, ProgressSink, Resume, Tool,
    ToolAnnotations, ToolContext, ToolError, ToolExample, ToolOrigin, ToolSchema, reconfigure,
    tool_fn,
};
pub use trace::{Attr, AttrValue, SharedTracer, Span, SpanKind, Tracer};
