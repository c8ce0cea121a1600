//! The host: stores, tools and a durable executor wired once, for the CLI, the server and
//! any embedder. `host.run_call(..)` runs one call and lands its result (the one driver
//! of a call outside a turn); `host.agent(..)` gives an agent whose turns stream their
//! events.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolwire_agent::{AutoApprove, Host, ProviderSettings};
//!
//! let host = Host::builder().data_dir("/tmp/toolwire").workspace(".").build().await?;
//! let agent = host.agent(&ProviderSettings::default(), Arc::new(AutoApprove))?;
//! let session = agent.start_session(Default::default()).await?;
//! let mut turn = agent.turn(&session.id, "What is in README.md?").await?;
//! while let Some(event) = turn.next().await {
//!     println!("{} {:?}", event.seq, event.kind);
//! }
//! let outcome = turn.finish().await?;
//! # Ok(()) }
//! ```

mod agents;
mod build;
mod calls;
mod recorder;
mod running;
mod settings;

use std::sync::Arc;

use toolwire_model::ClientError;
use toolwire_runtime::{EventBus, Executor, LandError, Registered, Registry, RegistryError};
use toolwire_store::{NewSession, Session, StoreError, Stores};
use toolwire_tool::{SourceStatus, Tool, ToolSource};

use crate::AgentError;

pub use agents::{HostAgent, TurnEvents};
pub use build::{BuildError, HostBuilder, StoreLocation};
pub use calls::CallOptions;
pub use recorder::Recorder;
pub use running::Running;

/// What stops a call made outside a turn, and the trace it belongs to: the caller's own
/// (an MCP host's `traceparent`, which the gateway passes on), so its span and the MCP
/// server's work join that trace instead of starting one of their own.
#[derive(Clone, Default)]
pub struct CallScope {
    /// Stops the call while it runs or waits for a person.
    pub cancel: tokio_util::sync::CancellationToken,
    /// The caller's trace context, if it sent one.
    pub trace: Option<toolwire_core::TraceContext>,
    /// Told the call's progress as it is reported (coalesced once, by the executor),
    /// without waiting for the event log: how the gateway passes progress to its host.
    pub progress: Option<Arc<dyn toolwire_tool::ProgressSink>>,
}

impl std::fmt::Debug for CallScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallScope")
            .field("cancel", &self.cancel)
            .field("trace", &self.trace)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl From<tokio_util::sync::CancellationToken> for CallScope {
    fn from(cancel: tokio_util::sync::CancellationToken) -> Self {
        CallScope {
            cancel,
            ..CallScope::default()
        }
    }
}

impl CallScope {
    /// The executor's scope of a call in `session_id` under this one.
    fn executor_scope(&self, session_id: &str) -> toolwire_runtime::Scope {
        let mut scope = toolwire_runtime::Scope::new(session_id);
        scope.cancel = self.cancel.clone();
        scope.trace = self.trace.clone();
        scope.progress = self.progress.clone();
        scope
    }
}
pub use settings::ProviderSettings;

/// Why a host could not be built or could not do what it was asked.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The stores failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A tool could not be registered.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The model client could not be built.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The agent loop failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// No session has this id.
    #[error("no session {0:?}")]
    NoSession(String),
    /// A run's task ended without finishing: it panicked, or the runtime shutting down
    /// aborted it.
    #[error("the run stopped unexpectedly: {0}")]
    Stopped(String),
    /// [`Running::finish`] was asked again after the outcome was taken.
    #[error("the run was already finished")]
    AlreadyFinished,
    /// The call's wait for its result was cancelled before the result was stored.
    #[error("the call was cancelled before its result was stored")]
    Cancelled,
    /// A suspended call could not be answered.
    #[error(transparent)]
    Resolve(#[from] toolwire_runtime::ResolveError),
    /// The session could not be encoded for a provider.
    #[error("cannot encode the session: {0}")]
    Encode(#[from] toolwire_model::EncodeError),
    /// A finished call could not be landed (no sink, or it still waits).
    #[error(transparent)]
    Land(LandError),
}

impl From<LandError> for HostError {
    fn from(e: LandError) -> Self {
        match e {
            LandError::Store(e) => HostError::Store(e),
            other => HostError::Land(other),
        }
    }
}

/// Stores, tools and the executor over them. Cheap to clone; clones share everything.
#[derive(Debug, Clone)]
pub struct Host {
    stores: Stores,
    executor: Arc<Executor>,
    sources: Sources,
}

/// The host's tool sources (shared by its clones).
#[derive(Clone)]
struct Sources(Arc<Vec<Arc<dyn ToolSource>>>);

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|s| s.status().name))
            .finish()
    }
}

impl Host {
    /// A builder for a host; every part has a default.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The history and blob stores.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// The executor that runs the tools.
    pub fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }

    /// The bus session events go to.
    pub fn events(&self) -> &Arc<EventBus> {
        self.executor.events()
    }

    /// The tool registered as `name` now.
    pub fn tool(&self, name: &str) -> Option<Registered> {
        self.executor.registry().get(name).cloned()
    }

    /// The tool set now (a snapshot: a server that gets ready later adds to the next one).
    pub fn tools(&self) -> Arc<Registry> {
        self.executor.registry()
    }

    /// Each tool source (MCP server) and where it is: connecting, ready, failed, …
    pub fn sources(&self) -> Vec<SourceStatus> {
        self.sources.0.iter().map(|s| s.status()).collect()
    }

    /// The tool source configured as `name`.
    pub fn source(&self, name: &str) -> Option<Arc<dyn ToolSource>> {
        self.sources
            .0
            .iter()
            .find(|s| s.status().name == name)
            .cloned()
    }

    /// Every tool source.
    pub fn source_list(&self) -> Vec<Arc<dyn ToolSource>> {
        self.sources.0.to_vec()
    }

    /// Replaces the tools `owned` accepts (a source's, by name) with `tools`: how a
    /// source that got ready, or restarted, hands over its tools. Calls running keep the
    /// tool they started with; new calls and turns get the new set.
    pub fn replace_tools(
        &self,
        owned: impl Fn(&str) -> bool,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<(), HostError> {
        self.executor.update_tools(|registry| {
            registry.retain(|name| !owned(name));
            tools
                .into_iter()
                .try_for_each(|tool| registry.register_arc(tool))
        })?;
        Ok(())
    }

    /// An existing session, or a new one titled `title`.
    pub async fn session(&self, id: Option<&str>, title: &str) -> Result<Session, HostError> {
        match id {
            Some(id) => self
                .stores
                .history()
                .session(id)
                .await?
                .ok_or_else(|| HostError::NoSession(id.to_owned())),
            None => Ok(self
                .stores
                .create_session(NewSession {
                    title: Some(title.to_owned()),
                    ..NewSession::default()
                })
                .await?),
        }
    }
}
