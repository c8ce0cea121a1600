//! toolwire-runtime: the engine that runs tools under toolwire's contract.
//!
//! A [`Tool`](toolwire_tool::Tool) is registered in a [`Registry`]; an [`Executor`] runs calls against it and
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

pub use clock::now_rfc3339;
pub use events::{EventBus, SharedEvent, Subscription};
pub use executor::{
    DEBUG_RAW_ENV, DEFAULT_RAW_LIMIT, Executor, ExecutorBuilder, ExecutorConfig, Finished,
    ResolveError, Scope, interrupted,
};
pub use registry::{Registered, Registry, RegistryError};
pub use sink::{LandError, Landing, ResultSink, land_each};
