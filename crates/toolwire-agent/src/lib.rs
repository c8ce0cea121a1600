//! toolwire-agent: the agent loop, subagents, and the [`Host`] that the CLI, the server
//! and embedders share.
//!
//! The loop: user message → model → tool calls → results, all in one turn → model again,
//! until the model answers without calls, the iteration limit is reached or the turn is
//! cancelled. Every step is stored, every step is an event.
//!
//! ```text
//! Agent::start_session ─► run_turn(session, text, cancel)
//!   store user, load history ─► [ encode ─► model ─► store assistant
//!                   ─► Executor::execute each call ─► approvals ─► land each ]*
//! ```
//! The request is built from exactly what was stored, so what the model sees is what a
//! reload would see. Subagents are the [`TaskTool`].

#![warn(missing_docs)]

mod approval;
mod blobs;
mod drive;
mod history;
mod host;
mod landing;
mod prompt;
mod read_result;
mod request;
mod run;
mod sampling;
mod spans;
mod task;

use std::sync::Arc;

use toolwire_core::EventKind;
use toolwire_model::{ClientError, ProviderClient};
use toolwire_model::{EncodeError, Provider, TruncationBudget};
use toolwire_runtime::{Executor, LandError};
use toolwire_store::{NewSession, Session, StoreError, Stores};

pub use approval::{ApprovalRequest, Approver, AutoApprove, DenyAll};
pub use blobs::StoreBlobs;
pub use history::{budget_with_tool_settings, tool_specs};
pub use host::{
    BuildError, CallOptions, CallScope, Host, HostAgent, HostBuilder, HostError, ProviderSettings,
    Recorder, Running, StoreLocation, TurnEvents,
};
pub use prompt::{DEFAULT_INSTRUCTIONS, SUBAGENT_INSTRUCTIONS, TASK_TOOL_GUIDANCE, system_prompt};
pub use read_result::read_result;
pub use request::ModelRequest;
pub use sampling::{ProviderSampler, SamplingError};
pub use task::{CHILD_SESSION_KEY, MAX_TASK_RESULT_CHARS, TASK_TOOL, TaskTool};

/// The default limit on model requests per user message.
pub const DEFAULT_MAX_ITERATIONS: u32 = 100;

/// What an [`Agent`] asks of its model: which one, how long, how often, with what instructions.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The model to ask, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// The output limit of each model request.
    pub max_tokens: u32,
    /// Model requests per user message; the turn stops (with valid history) after this many.
    pub max_iterations: u32,
    /// Stream replies, emitting `assistant_delta` events as text arrives.
    pub stream: bool,
    /// The host's instructions; the task guidance is appended when `task` is offered.
    pub instructions: String,
    /// How much of each tool result's text the model sees.
    pub budget: TruncationBudget,
}

impl AgentConfig {
    /// The defaults, for `model`.
    pub fn new(model: impl Into<String>) -> Self {
        AgentConfig {
            model: model.into(),
            max_tokens: 4096,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            stream: false,
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            budget: TruncationBudget::default(),
        }
    }
}

/// Why a turn could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The history store failed.
    #[error("history store: {0}")]
    Store(#[from] StoreError),
    /// The request could not be encoded.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The model's API failed (after retries).
    #[error(transparent)]
    Model(#[from] ClientError),
    /// The executor cannot store results (built without a sink and not given one).
    #[error(transparent)]
    NoSink(LandError),
}

impl From<LandError> for AgentError {
    fn from(e: LandError) -> Self {
        match e {
            LandError::Store(e) => AgentError::Store(e),
            other => AgentError::NoSink(other),
        }
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model answered without calling a tool.
    Done,
    /// The turn was cancelled; calls still running got `cancelled` error results.
    Cancelled,
    /// `max_iterations` model requests were made and the model still called tools.
    MaxIterations,
}

/// The end of one user message's turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// Why the turn ended.
    pub stop: StopReason,
    /// The model's last text (its answer when `stop` is `Done`).
    pub text: String,
    /// Model requests made in this turn.
    pub iterations: u32,
}

/// An agent: a model, the tools (through an executor), the stores and whoever approves.
pub struct Agent {
    client: ProviderClient,
    config: AgentConfig,
    executor: Arc<Executor>,
    stores: Stores,
    approver: Arc<dyn Approver>,
    /// Subagents started by this agent's `task` calls and not yet waited for.
    children: std::sync::Mutex<Vec<ChildRun>>,
    /// `gen_ai.agent.name` in its traces: `toolwire`, or `subagent` for a `task`'s.
    name: &'static str,
}

/// A subagent run, tracked so that a cancelled turn waits for its subagents to store
/// their own cancelled results, and names their sessions in its results.
#[derive(Debug)]
pub(crate) struct ChildRun {
    pub parent_session: String,
    pub call_id: String,
    pub child_session: String,
    /// Cancelled when the subagent's task ends, however it ends.
    pub done: tokio_util::sync::CancellationToken,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.provider())
            .field("config", &self.config)
            .field("executor", &self.executor)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent asking `client`'s model, running tools on `executor`, storing in `stores`, with `approver` deciding suspended calls.
    pub fn new(
        client: ProviderClient,
        config: AgentConfig,
        executor: Arc<Executor>,
        stores: Stores,
        approver: Arc<dyn Approver>,
    ) -> Arc<Self> {
        // Its results land in its stores, announced once stored.
        landing::ensure_sink(&executor, &stores);
        Arc::new(Agent {
            client,
            config,
            executor,
            stores,
            approver,
            children: std::sync::Mutex::new(Vec::new()),
            name: "toolwire",
        })
    }

    /// The provider the agent's client talks to.
    pub fn provider(&self) -> Provider {
        self.client.config().provider
    }

    /// The agent's name in traces (`gen_ai.agent.name`).
    pub fn agent_name(&self) -> &'static str {
        self.name
    }

    /// Its model, limits and instructions.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The executor that runs its tools.
    pub fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }

    /// The stores its sessions live in.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// The system prompt for this agent's tool set.
    pub fn system_prompt(&self) -> String {
        system_prompt(
            &self.config.instructions,
            self.executor.registry().names().iter().map(String::as_str),
        )
    }

    /// Creates a session and announces it.
    pub async fn start_session(&self, new: NewSession) -> Result<Session, AgentError> {
        let session = self.stores.create_session(new).await?;
        self.emit(
            &session.id,
            EventKind::SessionStarted {
                parent_call_id: None,
            },
        )
        .await;
        Ok(session)
    }

    /// Announces that nobody will add to the session any more (the chat ended).
    pub async fn end_session(&self, session_id: &str) {
        self.emit(session_id, EventKind::SessionEnded).await;
    }

    /// The agent a `task` call runs: fresh context, the same model and stores, the tools
    /// minus `task` (so subagents cannot nest), subagent instructions.
    pub fn subagent(&self) -> Agent {
        let registry = self.executor.registry().without(&[TASK_TOOL]);
        // The parent's events, suspensions, limits and sink (its `new` made sure of one).
        let executor = self.executor.with_tools(registry);
        Agent {
            client: self.client.clone(),
            config: AgentConfig {
                instructions: SUBAGENT_INSTRUCTIONS.to_owned(),
                ..self.config.clone()
            },
            executor: Arc::new(executor),
            stores: self.stores.clone(),
            approver: Arc::clone(&self.approver),
            children: std::sync::Mutex::new(Vec::new()),
            name: "subagent",
        }
    }

    pub(crate) fn track_child(&self, run: ChildRun) {
        if let Ok(mut children) = self.children.lock() {
            children.push(run);
        }
    }

    /// Takes the subagent runs started from `session`'s calls.
    pub(crate) fn take_children(&self, session: &str) -> Vec<ChildRun> {
        let Ok(mut children) = self.children.lock() else {
            return Vec::new();
        };
        let (mine, others) = std::mem::take(&mut *children)
            .into_iter()
            .partition(|c| c.parent_session == session);
        *children = others;
        mine
    }

    /// The subagent started by call `call_id` of `session`, if any, no longer tracked.
    pub(crate) fn take_child(&self, session: &str, call_id: &str) -> Option<ChildRun> {
        let mut children = self.children.lock().ok()?;
        let at = children
            .iter()
            .position(|c| c.parent_session == session && c.call_id == call_id)?;
        Some(children.remove(at))
    }

    /// Events are the live view; the store has the record. A failing event log must not
    /// fail the turn.
    async fn emit(&self, session_id: &str, kind: EventKind) {
        let _ = self.executor.events().emit(session_id, kind).await;
    }
}
