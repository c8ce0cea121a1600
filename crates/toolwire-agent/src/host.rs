//! The host: stores, tools and a durable executor wired once, for the CLI, the server and
//! any embedder. `host.call(..)` runs one tool the way a person asks for it;
//! `host.agent(..)` gives an agent whose turns stream their events.
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolwire_agent::HostError> {
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

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolwire_core::{Event, Message, ToolCall, ToolResult};
use toolwire_model::Provider;
use toolwire_model::client::{ClientConfig, ClientError, ProviderClient};
use toolwire_runtime::{
    EventBus, Executor, ExecutorConfig, LandError, Registered, Registry, RegistryError, Scope,
    Subscription,
};
use toolwire_store::{NewSession, Session, StoreConfig, StoreError, Stores};
use toolwire_tool::{SourceStatus, Tool, ToolSource};
use toolwire_tools::{Workspace, WorkspaceError, builtin_tools};

use crate::approval::{settle, store_settled};
use crate::{
    Agent, AgentConfig, AgentError, Approver, DEFAULT_MAX_ITERATIONS, TaskTool, TurnOutcome,
    read_result,
};

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("workspace {}", .path.display())]
    Workspace {
        path: PathBuf,
        #[source]
        source: WorkspaceError,
    },
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("no session {0:?}")]
    NoSession(String),
    #[error("cannot open the stores in {}", .dir.display())]
    OpenStores {
        dir: PathBuf,
        #[source]
        source: StoreError,
    },
    /// A database or blob URL (Postgres, S3) could not be opened; the error names it.
    #[error("cannot open the stores: {source}")]
    OpenStoreUrls {
        #[source]
        source: StoreError,
    },
    #[error("no data directory: pass --data-dir or set TOOLWIRE_DATA_DIR")]
    NoDataDir,
    #[error("the run stopped unexpectedly: {0}")]
    Aborted(String),
    #[error(transparent)]
    Resolve(#[from] toolwire_runtime::ResolveError),
    #[error("cannot encode the session: {0}")]
    Encode(#[from] toolwire_model::EncodeError),
    /// The executor cannot store results (built without a sink and not given one).
    #[error(transparent)]
    NoSink(LandError),
}

impl From<LandError> for HostError {
    fn from(e: LandError) -> Self {
        match e {
            LandError::Store(e) => HostError::Store(e),
            other => HostError::NoSink(other),
        }
    }
}

/// Builds a [`Host`]; see the module example.
#[derive(Default)]
pub struct HostBuilder {
    location: StoreLocation,
    stores: Option<Stores>,
    workspace: Option<PathBuf>,
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    no_builtins: bool,
    executor: Option<ExecutorConfig>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("location", &self.location)
            .field("workspace", &self.workspace)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// Where the SQLite history and the blob directory live (default: `$TOOLWIRE_DATA_DIR`,
    /// else the platform data directory).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.location.data_dir = Some(dir.into());
        self
    }

    /// Where the stores are, by directory and URLs; see [`StoreLocation`].
    pub fn location(mut self, location: StoreLocation) -> Self {
        self.location = location;
        self
    }

    /// Stores opened elsewhere (another backend, a test's); overrides `data_dir`.
    pub fn stores(mut self, stores: Stores) -> Self {
        self.stores = Some(stores);
        self
    }

    /// The directory the built-in tools are confined to. Without one, no built-in that
    /// touches files is registered.
    pub fn workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = Some(dir.into());
        self
    }

    /// More tools, registered after the built-ins.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Sources of tools with a state of their own (MCP servers), listed by
    /// [`Host::sources`]; their tools arrive through [`Host::replace_tools`].
    pub fn sources(mut self, sources: impl IntoIterator<Item = Arc<dyn ToolSource>>) -> Self {
        self.sources.extend(sources);
        self
    }

    /// Leaves the built-in tools out (`read_result` stays: it reads the host's own store).
    pub fn without_builtins(mut self) -> Self {
        self.no_builtins = true;
        self
    }

    /// The executor's limits (default: [`ExecutorConfig::from_env`]).
    pub fn executor_config(mut self, config: ExecutorConfig) -> Self {
        self.executor = Some(config);
        self
    }

    pub async fn build(self) -> Result<Host, HostError> {
        let stores = match self.stores {
            Some(stores) => stores,
            None => self.location.open().await?,
        };
        let mut registry = Registry::new();
        if let (Some(dir), false) = (&self.workspace, self.no_builtins) {
            let workspace = Workspace::new(dir).map_err(|source| HostError::Workspace {
                path: dir.clone(),
                source,
            })?;
            for tool in builtin_tools(Arc::new(workspace)) {
                registry.register_arc(tool)?;
            }
        }
        registry.register(read_result(Arc::clone(&stores.history)))?;
        for tool in self.tools {
            registry.register_arc(tool)?;
        }
        let executor = Executor::with(
            Arc::new(registry),
            EventBus::with_media(
                Arc::clone(&stores.events),
                Arc::clone(&stores.blobs),
                stores.config.persist.clone(),
            ),
            Arc::clone(&stores.suspensions),
            self.executor.unwrap_or_else(ExecutorConfig::from_env),
        );
        crate::landing::ensure_sink(&executor, &stores);
        Ok(Host {
            stores,
            executor: Arc::new(executor),
            sources: Sources(Arc::new(self.sources)),
        })
    }
}

/// Where history and blobs live. By default both under one data directory (SQLite +
/// `blobs/`); either can be moved elsewhere by URL: the history to `postgres://…`, the
/// blobs to `s3://bucket/prefix`, so several machines share them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreLocation {
    /// Default: `$TOOLWIRE_DATA_DIR`, else the platform data directory.
    pub data_dir: Option<PathBuf>,
    /// `sqlite://PATH` or `postgres://…` (default: `history.db` in the data directory).
    pub database_url: Option<String>,
    /// `file:///DIR` or `s3://BUCKET/PREFIX` (default: `blobs/` in the data directory).
    pub blob_url: Option<String>,
}

impl StoreLocation {
    pub async fn open(&self) -> Result<Stores, HostError> {
        let dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None if self.database_url.is_some() && self.blob_url.is_some() => PathBuf::new(),
            None => Stores::default_data_dir().map_err(|_| HostError::NoDataDir)?,
        };
        if self.database_url.is_none() && self.blob_url.is_none() {
            return Stores::open(&dir, StoreConfig::from_env())
                .await
                .map_err(|source| HostError::OpenStores { dir, source });
        }
        let absolute = std::path::absolute(&dir).unwrap_or(dir);
        let database = self.database_url.clone().unwrap_or_else(|| {
            format!(
                "sqlite://{}",
                absolute.join(toolwire_store::HISTORY_FILE).display()
            )
        });
        let blobs = self.blob_url.clone().unwrap_or_else(|| {
            format!(
                "file://{}",
                absolute.join(toolwire_store::BLOB_DIR).display()
            )
        });
        if self.database_url.is_none() || self.blob_url.is_none() {
            std::fs::create_dir_all(&absolute).map_err(|e| HostError::OpenStores {
                dir: absolute.clone(),
                source: StoreError::Io {
                    path: absolute.clone(),
                    source: e,
                },
            })?;
        }
        Stores::open_urls(&database, &blobs, StoreConfig::from_env())
            .await
            .map_err(|source| HostError::OpenStoreUrls { source })
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

/// Which provider an agent talks to, and how. Everything is optional: the provider
/// defaults to the first whose key is set, the model to the provider's default.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    /// Another endpoint, e.g. a local OpenAI-compatible server; no key is then required.
    pub base_url: Option<String>,
    pub max_iterations: u32,
    pub stream: bool,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            provider: None,
            model: None,
            base_url: None,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            stream: true,
        }
    }
}

impl ProviderSettings {
    /// The provider asked for, else the first one the environment configures, else
    /// Anthropic (whose missing key then makes a clear error).
    pub fn provider(&self) -> Provider {
        self.provider.unwrap_or_else(|| {
            Provider::ALL
                .into_iter()
                .find(|p| ClientConfig::from_env(*p).is_ok())
                .unwrap_or(Provider::Anthropic)
        })
    }

    /// Where to connect: `base_url` (the key optional), else the provider's usual
    /// variables.
    pub fn client_config(&self) -> Result<ClientConfig, ClientError> {
        let provider = self.provider();
        let from_env = ClientConfig::from_env(provider);
        match &self.base_url {
            Some(url) => Ok(ClientConfig::new(
                provider,
                url,
                from_env.ok().and_then(|c| c.api_key),
            )),
            None => from_env,
        }
    }

    pub fn agent_config(&self) -> AgentConfig {
        let provider = self.provider();
        let mut config = AgentConfig::new(
            self.model
                .clone()
                .unwrap_or_else(|| provider.default_model().to_owned()),
        );
        config.max_iterations = self.max_iterations;
        config.stream = self.stream;
        config
    }
}

impl Host {
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    pub fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }

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
                .history
                .session(id)
                .await?
                .ok_or_else(|| HostError::NoSession(id.to_owned())),
            None => Ok(self
                .stores
                .history
                .create_session(NewSession {
                    title: Some(title.to_owned()),
                    ..NewSession::default()
                })
                .await?),
        }
    }

    /// Runs one tool because a person asked for it, in `session`: the request is stored
    /// as a user message and an assistant tool call, so the history pairs the call with
    /// its result like any model turn (and exports cleanly). A suspended call is put to
    /// `approver` until it ends. Every way out stores exactly one result for the call.
    pub async fn call(
        &self,
        session_id: &str,
        tool: &str,
        input: Json,
        approver: Arc<dyn Approver>,
    ) -> Result<Running<ToolResult>, HostError> {
        let call = ToolCall::new(toolwire_core::ids::new_id("call"), tool, input);
        self.call_as(session_id, call, approver).await
    }

    /// [`Host::call`] with the caller's own call id, for callers that wait for that call's
    /// result on the event feed (the web app's MCP Apps host does).
    pub async fn call_as(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: Arc<dyn Approver>,
    ) -> Result<Running<ToolResult>, HostError> {
        self.call_cancellable(session_id, call, approver, CancellationToken::new())
            .await
    }

    /// [`Host::call_as`], stopped by `cancel`: while it runs (the tool is dropped) or
    /// while it waits for a person (the wait ends); either way it gets its one stored
    /// result, a `cancelled` error.
    pub async fn call_cancellable(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: Arc<dyn Approver>,
        cancel: CancellationToken,
    ) -> Result<Running<ToolResult>, HostError> {
        self.stores
            .append(
                session_id,
                Message::User {
                    text: format!("toolwire call {} {}", call.name, call.input),
                },
            )
            .await?;
        self.stores
            .append(session_id, Message::assistant("", vec![call.clone()]))
            .await?;
        let host = self.clone();
        let session = session_id.to_owned();
        let call_id = call.id.clone();
        let mut running = self
            .run(session_id, async move {
                host.finish_call(&session, call, approver.as_ref(), cancel)
                    .await
            })
            .await?;
        running.call_id = Some(call_id);
        Ok(running)
    }

    async fn finish_call(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: &dyn Approver,
        cancel: CancellationToken,
    ) -> Result<ToolResult, HostError> {
        let mut scope = Scope::new(session_id);
        scope.cancel = cancel.clone();
        let result = self.executor.execute(&scope, call.clone()).await;
        // Only the person who asked for this call cancels it, while it runs or waits.
        let (settled, suspended) =
            settle(&self.executor, approver, session_id, &call, result, &cancel).await;
        // Once settled, the result is stored whatever happens: never cancelled.
        let never = CancellationToken::new();
        // A call answered on another instance: its stored result is this call's. The
        // wait is never cancelled, so there always is one.
        let stored = store_settled(
            &self.executor,
            &self.stores,
            session_id,
            &call,
            settled,
            suspended,
            &never,
        )
        .await?
        .ok_or_else(|| HostError::Aborted("the call was cancelled".into()))?;
        match stored.content {
            Message::ToolResult(result) => Ok(result),
            _ => Err(HostError::Aborted(
                "the store returned a message that is not a tool result".into(),
            )),
        }
    }

    /// Answers a pending call that no running turn or call is waiting on (the process
    /// that suspended it ended, or nobody was asked): the call is finished through the
    /// executor and its result stored, once. A call that suspends again (an MCP server's
    /// second question) is returned suspended and stays pending under its new id.
    pub async fn resolve_pending(
        &self,
        session_id: &str,
        suspension_id: &str,
        resolution: toolwire_core::Resolution,
    ) -> Result<ToolResult, HostError> {
        // The id must be one of this session's, so a caller cannot answer another's.
        let listed = self.executor.pending(session_id).await?;
        if !listed.iter().any(|p| p.suspension.id == suspension_id) {
            return Err(toolwire_runtime::ResolveError::NotFound(suspension_id.to_owned()).into());
        }
        let pending = self.executor.resolve(suspension_id, resolution).await?;
        if pending.status == toolwire_core::Status::Suspended {
            let _ = self.executor.settled(suspension_id).await;
            return Ok(pending);
        }
        let stored = self
            .executor
            .land(session_id, pending, vec![suspension_id.to_owned()])
            .await?;
        match stored.content {
            Message::ToolResult(result) => Ok(result),
            _ => Err(HostError::Aborted(
                "the store returned a message that is not a tool result".into(),
            )),
        }
    }

    /// An agent over this host's tools (plus `task`, for subagents), talking to the
    /// configured provider; suspended calls go to `approver`.
    pub fn agent(
        &self,
        settings: &ProviderSettings,
        approver: Arc<dyn Approver>,
    ) -> Result<HostAgent, HostError> {
        let client = ProviderClient::new(settings.client_config()?)?;
        let task = TaskTool::new();
        let mut registry = Registry::clone(&self.executor.registry());
        registry.register(task.clone())?;
        let executor = Executor::with(
            Arc::new(registry),
            Arc::clone(self.executor.events()),
            Arc::clone(&self.stores.suspensions),
            self.executor.config().clone(),
        );
        let agent = Agent::new(
            client,
            settings.agent_config(),
            Arc::new(executor),
            self.stores.clone(),
            approver,
        );
        task.bind(&agent);
        Ok(HostAgent {
            agent,
            host: self.clone(),
        })
    }

    /// Runs `work` as its own task; the session's events from now on are delivered to
    /// whoever asks for them ([`Running::next`]).
    async fn run<T: Send + 'static>(
        &self,
        session_id: &str,
        work: impl Future<Output = Result<T, HostError>> + Send + 'static,
    ) -> Result<Running<T>, HostError> {
        let events = self.events();
        let from = events.last_seq(session_id).await?;
        Ok(Running {
            subscription: None,
            events: Arc::clone(events),
            session_id: session_id.to_owned(),
            call_id: None,
            task: Some(tokio::spawn(work)),
            done: None,
            seen: from,
        })
    }
}

/// An agent made by [`Host::agent`]: its turns stream their events.
#[derive(Debug, Clone)]
pub struct HostAgent {
    agent: Arc<Agent>,
    host: Host,
}

/// The events of a running turn, ending with the turn.
pub type TurnEvents = Running<TurnOutcome>;

impl HostAgent {
    /// The agent itself (its provider, model and settings).
    pub fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }

    /// Creates a session for this agent's turns and announces it.
    pub async fn start_session(&self, new: NewSession) -> Result<Session, HostError> {
        Ok(self.agent.start_session(new).await?)
    }

    /// Announces that nobody will add to the session any more (the chat ended).
    pub async fn end_session(&self, session_id: &str) {
        self.agent.end_session(session_id).await;
    }

    /// Runs one user message to the end of its turn, streaming its events.
    pub async fn turn(&self, session_id: &str, text: &str) -> Result<TurnEvents, HostError> {
        self.turn_with_cancel(session_id, text, CancellationToken::new())
            .await
    }

    /// [`Self::turn`] with a cancel (Ctrl-C, a stop button): calls still running get
    /// `cancelled` results, which are stored.
    pub async fn turn_with_cancel(
        &self,
        session_id: &str,
        text: &str,
        cancel: CancellationToken,
    ) -> Result<TurnEvents, HostError> {
        let agent = Arc::clone(&self.agent);
        let (session, text) = (session_id.to_owned(), text.to_owned());
        self.host
            .run(session_id, async move {
                Ok(agent.run_turn(&session, &text, cancel).await?)
            })
            .await
    }
}

/// How long, once the work is done, to wait for an event it logged to arrive.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Work running in the background and the events of its session, in order: `next` until
/// `None`, then [`Running::finish`] for the outcome. The events are read only when asked
/// for: a caller that only wants the outcome calls `finish` and nothing subscribes.
pub struct Running<T> {
    /// Opened by the first `next`, from the number the work started at: nothing logged
    /// in between is missed.
    subscription: Option<Subscription>,
    events: Arc<EventBus>,
    session_id: String,
    /// The call's id, for a run of one call.
    call_id: Option<String>,
    task: Option<JoinHandle<Result<T, HostError>>>,
    /// The outcome, once the work ended, and the last event number it logged.
    done: Option<(Result<T, HostError>, u64)>,
    seen: u64,
}

impl<T> std::fmt::Debug for Running<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id)
            .field("seen", &self.seen)
            .field("done", &self.done.is_some())
            .finish()
    }
}

/// A task's end as the work's outcome: a panic or an abort becomes `Aborted`.
fn outcome<T>(ended: Result<Result<T, HostError>, tokio::task::JoinError>) -> Result<T, HostError> {
    ended.map_err(|e| HostError::Aborted(e.to_string()))?
}

impl<T> Running<T> {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The id of the call this runs ([`Host::call`] and its kin); `None` for a turn.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The next event of the session; `None` once the work has ended and every event
    /// it logged was delivered.
    pub async fn next(&mut self) -> Option<Event> {
        if self.subscription.is_none() {
            match self.events.subscribe(&self.session_id, self.seen).await {
                Ok(subscription) => self.subscription = Some(subscription),
                // The log cannot be read: no events, the outcome still comes.
                Err(_) => {
                    if let Some(task) = self.task.take() {
                        self.done = Some((outcome(task.await), self.seen));
                    }
                    return None;
                }
            }
        }
        let subscription = self.subscription.as_mut()?;
        loop {
            if let Some((_, last)) = &self.done {
                if self.seen >= *last {
                    return None;
                }
                return match tokio::time::timeout(DRAIN_WAIT, subscription.next()).await {
                    Ok(Some(Ok(event))) => {
                        self.seen = event.seq;
                        Some(event)
                    }
                    _ => None,
                };
            }
            let task = self.task.as_mut()?;
            tokio::select! {
                ended = task => {
                    self.task = None;
                    let last = self.events.last_seq(&self.session_id).await.unwrap_or(self.seen);
                    self.done = Some((outcome(ended), last));
                }
                event = subscription.next() => match event {
                    Some(Ok(event)) => {
                        self.seen = event.seq;
                        return Some(event);
                    }
                    // The log failed or the bus is gone: the outcome still comes.
                    Some(Err(_)) | None => {
                        if let Some(task) = self.task.take() {
                            self.done = Some((outcome(task.await), self.seen));
                        }
                    }
                },
            }
        }
    }

    /// Waits for the work to end and returns its outcome; events not yet taken are left.
    pub async fn finish(mut self) -> Result<T, HostError> {
        if let Some((outcome, _)) = self.done.take() {
            return outcome;
        }
        match self.task.take() {
            Some(task) => outcome(task.await),
            None => Err(HostError::Aborted("the run was already finished".into())),
        }
    }
}
