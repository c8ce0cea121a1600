//! toolwire-runtime: the engine that runs tools under toolwire's contract.
//!
//! A [`Tool`] is registered in a [`Registry`]; an [`Executor`] runs calls against it and
//! guarantees one valid result per call, in call order, whatever the tool does: invalid
//! input, a panic, a timeout, a cancel, an unknown name, a required approval.

pub mod agent;
pub mod builtin;
pub mod context;
pub mod durable;
pub mod events;
pub mod executor;
pub mod registry;
pub mod schema;
pub mod suspend;
pub mod tool;

pub use context::ToolContext;
pub use durable::{StoreEventLog, StoreSuspensions};
pub use events::{Event, EventBus, EventKind, EventLog, MemoryEventLog, Subscription};
pub use executor::{Executor, ExecutorConfig, ResolveError, Scope, codes};
pub use registry::{Registered, Registry, RegistryError};
pub use schema::{ApprovalPolicy, ExecutionMode, ToolAnnotations, ToolExample, ToolSchema};
pub use suspend::{MemorySuspensions, PendingCall, Resolution, SuspensionStore, ToolCall};
pub use tool::{FnTool, Output, Tool, ToolError, tool_fn};
