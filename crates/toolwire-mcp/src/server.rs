//! One configured MCP server: started when first needed, restarted with backoff when it
//! dies, its stderr kept (the tail) to explain failures.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ClientRequest, CustomRequest, ErrorData, ProtocolVersion};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService,
};
use rmcp::transport::auth::AuthClient;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value as Json;
use tokio::io::AsyncReadExt;

use toolwire_oauth::{DpopHttpClient, GrantError, LoginError, PendingLogin, TokenFile};
use toolwire_tool::{LoginStart, SourceLogin, SourceState, SourceStatus, ToolSource};

use crate::client::{Handler, Router, Sampler};
use crate::config::{ServerConfig, Transport};
use crate::discover::Revision;

/// Limits of one server's connection.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Starting the server and the protocol handshake.
    pub connect_timeout: Duration,
    /// One call, unless its tool says otherwise (progress does not extend it).
    pub call_timeout: Duration,
    /// The first wait before restarting a server that died or failed to start; it
    /// doubles with each failure in a row.
    pub first_backoff: Duration,
    /// The longest wait between restarts, however many failures in a row.
    pub max_backoff: Duration,
    /// Questions one call may ask a person (2026-07-28 `input_required` rounds, or
    /// 2025-11-25 `elicitation/create` requests during the call) before toolwire ends it:
    /// a server that asks again whatever the answer must not loop.
    pub max_input_rounds: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(300),
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_input_rounds: 16,
        }
    }
}

/// How much of a server's stderr is kept to explain why it failed.
const STDERR_TAIL: usize = 4 * 1024;

/// Why a server could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("MCP server `{server}` ({target}): {why}")]
pub struct ServerError {
    /// The server's name as configured.
    pub server: String,
    /// What it runs or reaches, secrets left out.
    pub target: String,
    /// What went wrong, for a person.
    pub why: String,
    /// It refused toolwire for want of a token (or of scope): logging in may fix it.
    pub needs_login: bool,
}

/// A live connection.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    pub router: Arc<Router>,
    pub protocol: ProtocolVersion,
    /// Why it speaks an older revision than toolwire asked for, when it did not say so
    /// itself (see [`McpServer::connect`]).
    pub warning: Option<String>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Where a stdio server's answers to calls that ask for their text are left as
    /// text (`None` over other transports, where rmcp reads every answer).
    pub answers: Option<Arc<crate::stdio::RawAnswers>>,
    /// A stdio server's plain calls, written without rmcp (`None` over other transports).
    pub direct: Option<crate::stdio::DirectCalls>,
    /// Tells the server when the host's roots change (held for its drop).
    _roots_forwarding: Option<crate::roots::Forwarding>,
}

impl Connection {
    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// The last lines the server wrote to stderr, for error messages.
    pub(crate) fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }
}

enum State {
    Idle,
    Up(Arc<Connection>),
    Down {
        failures: u32,
        retry_at: Instant,
        error: ServerError,
    },
    /// Refused for want of a login: not tried again until one happens.
    NeedsLogin(ServerError),
    /// Its authorization server refused the unattended grant outright (`invalid_client`,
    /// a 4xx): the same credentials would be refused again, so it is not tried again
    /// (until a login or logout, or a restart with other settings).
    Refused(ServerError),
}

/// Makes the byte stream of an in-process server, once per connection.
pub type InProcess = Arc<dyn Fn() -> tokio::io::DuplexStream + Send + Sync>;

/// One MCP server.
pub struct McpServer {
    config: ServerConfig,
    /// Set for a server running in this process (tests, embedders): its stream replaces
    /// the configured transport.
    in_process: Option<InProcess>,
    limits: Limits,
    state: tokio::sync::Mutex<State>,
    /// Serves the server's sampling requests; without one they are refused.
    sampler: Option<Arc<dyn Sampler>>,
    /// Where its log messages and resource notices go; `None` drops them.
    notices: Option<crate::OnNotice>,
    /// What it is told its roots are: its entry's own `"roots"`, else the workspace or
    /// the gateway's host's.
    roots: crate::roots::Roots,
    /// `ui://` resources read once per connection: an MCP App's HTML is static.
    pub(crate) ui_cache: Mutex<HashMap<String, serde_json::Value>>,
    /// What a person is shown of it; kept beside `state` (whose lock is held through a
    /// whole handshake) so that reading it never waits.
    shown: Mutex<Shown>,
    /// Where its OAuth tokens are kept (the data directory's `mcp-auth`); without one,
    /// an HTTP server is only reached with its configured headers.
    token_dir: Option<std::path::PathBuf>,
    /// The `WWW-Authenticate` of its last 401 or 403: where a login starts discovery,
    /// and the scope a step-up asks for.
    challenge: Mutex<Option<String>>,
    /// Woken when a login or logout changes what the server would answer.
    pub(crate) login_changed: tokio::sync::Notify,
    /// Logins begun for a host's redirect route (`toolwire serve`), by age.
    pending: Mutex<Vec<(Instant, PendingLogin)>>,
}

/// The server's state as shown, and what it has been.
#[derive(Debug, Clone, Default)]
struct Shown {
    state: SourceState,
    reason: Option<String>,
    protocol: Option<String>,
    warning: Option<String>,
    tools: Vec<String>,
    /// It was up once: starting it again is a restart, not a first connect.
    was_up: bool,
    /// Its tools were listed once (their names are in `tools`).
    listed: bool,
}

impl ToolSource for McpServer {
    fn status(&self) -> SourceStatus {
        McpServer::status(self)
    }

    fn login(&self) -> Option<&dyn SourceLogin> {
        self.token_file().map(|_| self as &dyn SourceLogin)
    }
}

/// Logins begun in a browser that a host finishes on its own redirect route.
impl SourceLogin for McpServer {
    fn begin_login<'a>(
        &'a self,
        redirect_uri: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<LoginStart, String>> {
        Box::pin(async move {
            let pending = McpServer::begin_login(self, redirect_uri)
                .await
                .map_err(|e| e.to_string())?;
            let start = LoginStart {
                url: pending.url().to_owned(),
                state: pending.state().to_owned(),
            };
            if let Ok(mut waiting) = self.pending.lock() {
                // The newest few only: a login nobody finishes must not pile up.
                waiting.retain(|(at, _)| at.elapsed() < toolwire_oauth::LOGIN_TIMEOUT);
                if waiting.len() >= MAX_PENDING_LOGINS {
                    waiting.remove(0);
                }
                waiting.push((Instant::now(), pending));
            }
            Ok(start)
        })
    }

    fn awaits(&self, state: &str) -> bool {
        self.pending
            .lock()
            .is_ok_and(|w| w.iter().any(|(_, p)| p.state() == state))
    }

    fn finish_login<'a>(
        &'a self,
        state: &'a str,
        redirect: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let pending = self.pending.lock().ok().and_then(|mut waiting| {
                let at = waiting.iter().position(|(_, p)| p.state() == state)?;
                Some(waiting.remove(at))
            });
            let Some((at, pending)) = pending else {
                return Err("no login of this server waits for this redirect".to_owned());
            };
            if at.elapsed() >= toolwire_oauth::LOGIN_TIMEOUT {
                return Err("this login took too long; start it again".to_owned());
            }
            McpServer::finish_login(self, pending, redirect)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn logout(&self) -> futures::future::BoxFuture<'_, Result<bool, String>> {
        Box::pin(async move { McpServer::logout(self).await.map_err(|e| e.to_string()) })
    }
}

/// The roots `config`'s entry gives (`"roots"`), or none until the caller gives some.
fn own_roots(config: &ServerConfig) -> crate::roots::Roots {
    match &config.roots {
        Some(dirs) => crate::roots::Roots::fixed(dirs, &config.name),
        None => crate::roots::Roots::default(),
    }
}

/// Logins begun in a browser and not finished yet, kept per server.
const MAX_PENDING_LOGINS: usize = 4;

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server handle for `config`; nothing starts until it is connected.
    pub fn new(config: ServerConfig, limits: Limits) -> Arc<Self> {
        Arc::new(McpServer {
            roots: own_roots(&config),
            config,
            in_process: None,
            sampler: None,
            notices: None,
            limits,
            state: tokio::sync::Mutex::new(State::Idle),
            ui_cache: Mutex::new(HashMap::new()),
            shown: Mutex::new(Shown::default()),
            token_dir: None,
            challenge: Mutex::new(None),
            login_changed: tokio::sync::Notify::new(),
            pending: Mutex::new(Vec::new()),
        })
    }

    /// A server running in this process, reached through the stream `connect` makes.
    pub fn in_process(
        name: &str,
        limits: Limits,
        connect: impl Fn() -> tokio::io::DuplexStream + Send + Sync + 'static,
    ) -> Arc<Self> {
        let mut config = ServerConfig::new(
            name,
            Transport::Stdio {
                command: "(in process)".to_owned(),
                args: Vec::new(),
                env: Default::default(),
                cwd: None,
                inherit: Default::default(),
            },
        );
        // A server in this process is the embedder's own code: its tools run unasked.
        config.approval.server = Some(toolwire_tool::ApprovalPolicy::Never);
        Arc::new(McpServer {
            config,
            in_process: Some(Arc::new(connect)),
            sampler: None,
            notices: None,
            roots: crate::roots::Roots::default(),
            limits,
            state: tokio::sync::Mutex::new(State::Idle),
            ui_cache: Mutex::new(HashMap::new()),
            shown: Mutex::new(Shown::default()),
            token_dir: None,
            challenge: Mutex::new(None),
            login_changed: tokio::sync::Notify::new(),
            pending: Mutex::new(Vec::new()),
        })
    }

    /// The server's log messages and resource notices go to `on` (a gateway's hosts).
    pub fn with_notices(mut self: Arc<Self>, on: crate::OnNotice) -> Arc<Self> {
        if let Some(server) = Arc::get_mut(&mut self) {
            server.notices = Some(on);
        }
        self
    }

    /// Sampling requests go to `sampler` (the session's model provider).
    pub fn with_sampler(mut self: Arc<Self>, sampler: Arc<dyn Sampler>) -> Arc<Self> {
        if let Some(server) = Arc::get_mut(&mut self) {
            server.sampler = Some(sampler);
        }
        self
    }

    /// Keeps its OAuth tokens in `dir` (owner-only), so that it can log in.
    pub fn with_token_dir(mut self: Arc<Self>, dir: &std::path::Path) -> Arc<Self> {
        if let Some(server) = Arc::get_mut(&mut self) {
            server.token_dir = Some(dir.to_owned());
        }
        self
    }

    /// Declares `dirs` (the workspace) as the client's roots, unless the server's entry
    /// gives its own (`"roots"`, which wins).
    pub fn with_roots(mut self: Arc<Self>, dirs: &[std::path::PathBuf]) -> Arc<Self> {
        if let Some(server) = Arc::get_mut(&mut self)
            && server.config.roots.is_none()
        {
            server.roots = crate::roots::Roots::fixed(dirs, "workspace");
        }
        self
    }

    /// Declares `passed` (the gateway's host's roots, as they change) as the client's
    /// roots, unless the server's entry gives its own (`"roots"`, which wins).
    pub fn with_passed_roots(mut self: Arc<Self>, passed: &crate::PassedRoots) -> Arc<Self> {
        if let Some(server) = Arc::get_mut(&mut self)
            && server.config.roots.is_none()
        {
            server.roots = crate::roots::Roots::Passed(passed.clone());
        }
        self
    }

    /// The roots declared to the server, as they are now.
    #[allow(deprecated)] // Roots: still what 2025-11-25 servers ask for.
    pub(crate) fn roots(&self) -> Vec<rmcp::model::Root> {
        self.roots.list()
    }

    /// The name as configured, for people.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The prefix of its tools' names.
    pub fn prefix(&self) -> &str {
        &self.config.prefix
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The limits its calls run under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// An error of this server saying `why` (for a host that failed to use it).
    pub fn error_of(&self, why: &str) -> ServerError {
        self.error(why)
    }

    pub(crate) fn error(&self, why: impl Into<String>) -> ServerError {
        ServerError {
            server: self.config.name.clone(),
            target: self.config.transport.describe(),
            why: why.into(),
            needs_login: false,
        }
    }

    /// The live connection, started (or restarted) if need be. A server that failed
    /// is not tried again before its backoff ends; until then the last error is given.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, ServerError> {
        let mut state = self.state.lock().await;
        let failures = match &*state {
            State::Up(conn) if !conn.is_closed() => return Ok(Arc::clone(conn)),
            // It died since the last call: restart now, with backoff if that fails.
            State::Up(_) => 1,
            State::Down {
                failures,
                retry_at,
                error,
            } => {
                if Instant::now() < *retry_at {
                    let wait = retry_at.saturating_duration_since(Instant::now());
                    let mut error = error.clone();
                    error.why = format!("{} (next attempt in {} ms)", error.why, wait.as_millis());
                    return Err(error);
                }
                *failures
            }
            State::NeedsLogin(error) | State::Refused(error) => return Err(error.clone()),
            State::Idle => 0,
        };
        self.show(|s| {
            s.state = if s.was_up || failures > 0 {
                SourceState::Restarting
            } else {
                SourceState::Connecting
            };
        });
        // Boxed: connecting (a process started, the handshake) is rare, and inline its
        // state would make this future, and so every call's, kilobytes larger.
        match Box::pin(self.connect()).await {
            Ok(conn) => {
                let conn = Arc::new(conn);
                *state = State::Up(Arc::clone(&conn));
                if let Ok(mut cache) = self.ui_cache.lock() {
                    cache.clear();
                }
                let protocol = conn.protocol.to_string();
                let warning = conn.warning.clone();
                self.show(|s| {
                    // Ready once its tools are known (a first connection lists them
                    // next): a person is never shown a ready server without tools.
                    if s.listed {
                        s.state = SourceState::Ready;
                    }
                    s.reason = None;
                    s.protocol = Some(protocol);
                    s.warning = warning;
                    s.was_up = true;
                });
                Ok(conn)
            }
            Err(Failed::Refused(error)) => {
                let why = error.why.clone();
                self.show(|s| {
                    s.state = SourceState::Failed;
                    s.reason = Some(why);
                });
                *state = State::Refused(error.clone());
                Err(error)
            }
            Err(failed) => Err(self.failed(&mut state, failures, failed.into_error())),
        }
    }

    /// Records a failed connection attempt: waiting for a login, or down with backoff.
    fn failed(&self, state: &mut State, failures: u32, error: ServerError) -> ServerError {
        match error {
            error if error.needs_login => {
                let why = error.why.clone();
                self.show(|s| {
                    s.state = SourceState::NeedsLogin;
                    s.reason = Some(why);
                });
                *state = State::NeedsLogin(error.clone());
                error
            }
            error => {
                let why = error.why.clone();
                self.show(|s| {
                    s.state = SourceState::Failed;
                    s.reason = Some(why);
                });
                let exp = failures.min(16);
                let backoff = self
                    .limits
                    .first_backoff
                    .saturating_mul(1u32 << exp)
                    .min(self.limits.max_backoff);
                *state = State::Down {
                    failures: failures + 1,
                    retry_at: Instant::now() + backoff,
                    error: error.clone(),
                };
                error
            }
        }
    }

    /// Whether its authorization server refused its unattended grant outright, so that
    /// no further attempt is made.
    pub(crate) async fn grant_refused(&self) -> bool {
        matches!(&*self.state.lock().await, State::Refused(_))
    }

    /// Whether a connection is up now (a server that died shows as not up at once, not
    /// only when the next call finds out).
    pub(crate) async fn is_up(&self) -> bool {
        matches!(&*self.state.lock().await, State::Up(conn) if !conn.is_closed())
    }

    /// When another connection attempt may be made (now, unless a failure's backoff runs).
    pub(crate) async fn retry_in(&self) -> Duration {
        match &*self.state.lock().await {
            State::Down { retry_at, .. } => retry_at.saturating_duration_since(Instant::now()),
            _ => Duration::ZERO,
        }
    }

    /// Failed connection attempts in a row (0 when up or never tried).
    pub(crate) async fn failures(&self) -> u32 {
        match &*self.state.lock().await {
            State::Down { failures, .. } => *failures,
            _ => 0,
        }
    }

    fn show(&self, change: impl FnOnce(&mut Shown)) {
        if let Ok(mut shown) = self.shown.lock() {
            change(&mut shown);
        }
    }

    /// Records the names its tools were registered under, for [`McpServer::status`].
    pub(crate) fn set_tool_names(&self, names: Vec<String>) {
        self.show(|s| {
            s.tools = names;
            s.listed = true;
            s.state = SourceState::Ready;
        });
    }

    /// Marks a server found dead (between calls) as restarting, before it is.
    pub(crate) fn show_restarting(&self, why: &str) {
        self.show(|s| {
            s.state = SourceState::Restarting;
            s.reason = Some(why.to_owned());
        });
    }

    /// Marks a server given up on: no more attempts are made in the background.
    pub(crate) fn show_given_up(&self, note: &str) {
        self.show(|s| {
            s.state = SourceState::Failed;
            let why = s.reason.take().unwrap_or_default();
            s.reason = Some(format!("{why} ({note})"));
        });
    }

    /// Where the server is now, as a person is shown it.
    pub fn status(&self) -> SourceStatus {
        let shown = self.shown.lock().map(|s| s.clone()).unwrap_or_default();
        SourceStatus {
            name: self.config.name.clone(),
            prefix: self.config.prefix.clone(),
            target: self.config.transport.describe(),
            state: shown.state,
            reason: shown.reason,
            protocol: shown.protocol,
            warning: shown.warning,
            tools: shown.tools,
        }
    }

    /// Forgets a connection that failed mid-call, so the next call starts afresh.
    pub(crate) async fn drop_connection(&self, conn: &Arc<Connection>) {
        let mut state = self.state.lock().await;
        if let State::Up(current) = &*state
            && Arc::ptr_eq(current, conn)
        {
            *state = State::Idle;
        }
    }

    /// Either revision: `server/discover` first, the 2025-11-25 handshake if the server
    /// does not know it. A handshake that fails after the server was reached is tried
    /// once more the 2025-11-25 way (servers answer an unknown `server/discover` in odd
    /// ways); a server that then speaks 2025-11-25 carries a warning that says why.
    async fn connect(&self) -> Result<Connection, Failed> {
        match self.connect_with(Way::Newest).await {
            Err(Failed::Handshake(first)) => {
                let mut conn = self.connect_with(Way::Initialize).await?;
                if conn.protocol == ProtocolVersion::V_2025_11_25 {
                    conn.warning = Some(format!(
                        "speaks 2025-11-25: its 2026-07-28 handshake failed ({}), so it was \
                         started again and asked the 2025-11-25 way",
                        first.why
                    ));
                }
                Ok(conn)
            }
            other => other,
        }
    }

    /// The handshake over a pipe (a local server's stdio, an in-process stream): which
    /// revision it speaks is asked first (see [`crate::discover`]), waiting as long as the
    /// server may take to start, then rmcp's handshake for that revision follows.
    async fn handshake_over_pipe<T>(&self, handler: Handler, mut transport: T, way: Way) -> Started
    where
        T: rmcp::transport::Transport<RoleClient> + 'static,
    {
        let mut deadline = tokio::time::Instant::now() + self.limits.connect_timeout;
        let (lifecycle, warning) = match way {
            Way::Initialize => (ClientLifecycleMode::Initialize, None),
            Way::Newest => {
                let info = rmcp::ClientHandler::get_info(&handler);
                let patience = self.limits.connect_timeout;
                match crate::discover::probe(&mut transport, &info, patience).await {
                    Err(why) => return Ok(Err(ClientInitializeError::ConnectionClosed(why))),
                    Ok(Revision::Current) => (
                        ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        },
                        None,
                    ),
                    Ok(Revision::Legacy) => (ClientLifecycleMode::Initialize, None),
                    // A server that ignores a request it does not know (some 2025-11-25
                    // ones do) may still answer `initialize`: asked, and said.
                    Ok(Revision::Silent) => {
                        deadline = tokio::time::Instant::now() + SILENT_GRACE.min(patience);
                        let warning = format!(
                            "speaks 2025-11-25: it did not answer server/discover within {} s, \
                             so it was asked the 2025-11-25 way",
                            patience.as_secs()
                        );
                        (ClientLifecycleMode::Initialize, Some(warning))
                    }
                }
            }
        };
        let started = handler.serve_with_lifecycle(transport, lifecycle);
        let started = tokio::time::timeout_at(deadline, started).await?;
        Ok(started.map(|service| (service, warning)))
    }

    /// The handshake over streamable HTTP: rmcp's own (`Auto`), whose HTTP transport
    /// reads a 2025-11-25 server's refusal of `server/discover` itself. rmcp gives up on
    /// the answer after 10 s and falls back to 2025-11-25; a server that ends up there
    /// after so long may only have been slow, so that is said rather than hidden.
    async fn handshake_over_http<T>(&self, handler: Handler, transport: T, way: Way) -> Started
    where
        T: rmcp::transport::Transport<RoleClient> + 'static,
    {
        let lifecycle = match way {
            Way::Newest => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Way::Initialize => ClientLifecycleMode::Initialize,
        };
        let began = Instant::now();
        let started = handler.serve_with_lifecycle(transport, lifecycle);
        let started = tokio::time::timeout(self.limits.connect_timeout, started).await?;
        Ok(started.map(|service| {
            let old = service
                .peer()
                .peer_info()
                .is_some_and(|info| info.protocol_version == ProtocolVersion::V_2025_11_25);
            let warning = (way == Way::Newest && old && began.elapsed() >= RMCP_DISCOVER_PATIENCE)
                .then(|| {
                    format!(
                        "speaks 2025-11-25, which it was asked after not answering \
                         server/discover within {} s; it may only have been slow",
                        RMCP_DISCOVER_PATIENCE.as_secs()
                    )
                });
            (service, warning)
        }))
    }

    async fn connect_with(&self, way: Way) -> Result<Connection, Failed> {
        let mut handler = Handler::new(self.sampler.clone(), self.roots.clone());
        handler.notices = self
            .notices
            .clone()
            .map(|on| (self.config.prefix.clone(), on));
        let router = Arc::clone(&handler.router);
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let mut answers = None;
        let mut direct = None;
        let started = match (&self.in_process, &self.config.transport) {
            (Some(connect), _) => {
                let (read, write) = tokio::io::split(connect());
                let transport =
                    rmcp::transport::async_rw::AsyncRwTransport::new_client(read, write);
                self.handshake_over_pipe(handler, transport, way).await
            }
            (
                None,
                Transport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                    inherit,
                },
            ) => {
                let mut cmd = tokio::process::Command::new(command);
                // Only the safe variables (or what the config opts into), then its own.
                cmd.args(args)
                    .env_clear()
                    .envs(inherit.pick(std::env::vars()))
                    .envs(env)
                    .kill_on_drop(true);
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = cmd
                    .spawn()
                    .map_err(|e| Failed::Start(self.error(spawn_error(command, &e))))?;
                let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(Failed::Start(
                        self.error("its stdin or stdout is not a pipe"),
                    ));
                };
                let child_stderr = child.stderr.take();
                let raw = Arc::new(crate::stdio::RawAnswers::default());
                answers = Some(Arc::clone(&raw));
                let process = crate::stdio::Stdio::new(stdout, stdin, Some(child), raw);
                direct = process.direct_calls();
                if let Some(mut pipe) = child_stderr {
                    let keep = Arc::clone(&stderr);
                    tokio::spawn(async move {
                        let mut buf = [0u8; 1024];
                        while let Ok(n) = pipe.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            if let Ok(mut tail) = keep.lock() {
                                tail.extend(&buf[..n]);
                                let excess = tail.len().saturating_sub(STDERR_TAIL);
                                tail.drain(..excess);
                            }
                        }
                    });
                }
                self.handshake_over_pipe(handler, process, way).await
            }
            (None, Transport::Http { url, headers }) => {
                // A stored login that cannot be used now (its authorization server is
                // down, say) is a failure to retry, not a reason to log in again: a token
                // the server refuses comes back as a 401, which is.
                let auth = self.authorized_client().await.map_err(|e| {
                    let error = self.error(format!("cannot use its authorization: {}", e.error));
                    if e.refused {
                        Failed::Refused(error)
                    } else {
                        Failed::Start(error)
                    }
                })?;
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    let name = http::HeaderName::try_from(k.as_str()).map_err(|_| {
                        Failed::Start(self.error(format!("header name {k:?} is not valid")))
                    })?;
                    // The value is never quoted back: it is often a key.
                    let value = http::HeaderValue::try_from(v.as_str()).map_err(|_| {
                        Failed::Start(self.error(format!("the value of header {k:?} is not valid")))
                    })?;
                    custom.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                match auth {
                    Some(Authorized::Bearer(client)) => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        self.handshake_over_http(handler, transport, way).await
                    }
                    Some(Authorized::Dpop(client)) => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        self.handshake_over_http(handler, transport, way).await
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::from_config(config);
                        self.handshake_over_http(handler, transport, way).await
                    }
                }
            }
        };
        let service = match started {
            Err(_) => {
                let tail = tail_text(&stderr);
                return Err(Failed::Timeout(self.error(format!(
                    "did not complete the MCP handshake within {} s{}",
                    self.limits.connect_timeout.as_secs(),
                    with_stderr(&tail)
                ))));
            }
            Ok(Err(e)) if e.auth_challenge().is_some() => {
                let challenge = e.auth_challenge().map(str::to_owned);
                return Err(Failed::Start(self.refused(challenge)));
            }
            Ok(Err(e)) => {
                // Give the stderr reader a moment: a server that exits at once usually
                // says why there.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let tail = tail_text(&stderr);
                return Err(Failed::Handshake(self.error(format!(
                    "{}{}",
                    crate::readable::readable(&e),
                    with_stderr(&tail)
                ))));
            }
            Ok(Ok(started)) => started,
        };
        let (service, warning) = service;
        let protocol = service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.clone())
            .unwrap_or(ProtocolVersion::V_2025_11_25);
        let roots_forwarding = match &self.roots {
            crate::roots::Roots::Passed(passed) => Some(crate::roots::Forwarding::start(
                passed,
                service.peer().clone(),
            )),
            crate::roots::Roots::Fixed(_) => None,
        };
        let has_initialize = protocol.has_initialize();
        Ok(Connection {
            service,
            router,
            protocol,
            warning,
            stderr,
            answers,
            // A 2026-07-28 server's requests carry what rmcp's loop adds to each (the
            // revision, the client and its capabilities): those go through it.
            direct: direct.filter(|_| has_initialize),
            _roots_forwarding: roots_forwarding,
        })
    }

    /// Reads a resource the server offers (a `resource_link`'s target), as the
    /// `resources/read` result's JSON (`contents`: text or base64 blobs), for a person
    /// who asks to open it.
    pub async fn read_resource(&self, uri: &str) -> Result<Json, ServerError> {
        let conn = self.connection().await?;
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let read =
            tokio::time::timeout(self.limits.call_timeout, conn.peer().read_resource(params))
                .await
                .map_err(|_| self.error(format!("resources/read of {uri} did not answer in time")))?
                .map_err(|e| {
                    let why = crate::readable::readable(&e);
                    self.error(format!("resources/read of {uri} failed: {why}"))
                })?;
        serde_json::to_value(read).map_err(|e| self.error(e.to_string()))
    }

    /// What the server declared it offers (`capabilities` of its handshake), connecting
    /// first if it is not up.
    pub async fn capabilities(&self) -> Result<Json, ServerError> {
        let conn = self.connection().await?;
        let declared = conn
            .peer()
            .peer_info()
            .map(|info| info.capabilities.clone());
        serde_json::to_value(declared).map_err(|e| self.error(e.to_string()))
    }

    /// Sends the server request `method` with `params` (a host's request that a gateway
    /// passes on: resources, prompts, completions, logging), its result as the JSON it
    /// came in. The server's own error is given back as it sent it; a server that could
    /// not be reached or did not answer in time is an internal error that says so.
    pub async fn request(&self, method: &str, params: Json) -> Result<Json, ErrorData> {
        let conn = self
            .connection()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let answer =
            tokio::time::timeout(self.limits.call_timeout, request_raw(&conn, method, params))
                .await
                .map_err(|_| {
                    ErrorData::internal_error(
                        format!(
                            "MCP server `{}`: {method} did not answer in time",
                            self.name()
                        ),
                        None,
                    )
                })?;
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) => Err(ErrorData::internal_error(
                format!("MCP server `{}`: {method}: {e}", self.name()),
                None,
            )),
            Err(rmcp::service::ServiceError::McpError(error)) => Err(error),
            Err(e) => Err(ErrorData::internal_error(
                format!(
                    "MCP server `{}`: {method} failed: {}",
                    self.name(),
                    crate::readable::readable(&e)
                ),
                None,
            )),
        }
    }

    /// The server's tools, every page, as the JSON they came in: rmcp's model leaves
    /// out fields toolwire keeps (`execution`, newer ones).
    pub(crate) async fn list_tools(&self) -> Result<(Arc<Connection>, Vec<Json>), ServerError> {
        let conn = self.connection().await?;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        // A server that pages forever is cut off rather than followed.
        for _ in 0..MAX_TOOL_PAGES {
            let params = match &cursor {
                Some(c) => serde_json::json!({"cursor": c}),
                None => serde_json::json!({}),
            };
            let answer = tokio::time::timeout(
                self.limits.connect_timeout,
                request_raw(&conn, "tools/list", params),
            )
            .await
            .map_err(|_| self.error("tools/list did not answer in time"))?;
            let page = match answer {
                Ok(page) => page.map_err(|e| self.error(format!("tools/list: {e}")))?,
                // The token was revoked, or the authorization server changed: log in again.
                Err(e) if e.auth_challenge().is_some() => {
                    let challenge = e.auth_challenge().map(str::to_owned);
                    return Err(self.refused_mid_session(challenge).await);
                }
                Err(e) => {
                    let why = crate::readable::readable(&e);
                    return Err(self.error(format!("tools/list failed: {why}")));
                }
            };
            if let Some(Json::Array(list)) = page.get("tools") {
                tools.extend(list.iter().cloned());
            }
            cursor = page
                .get("nextCursor")
                .and_then(Json::as_str)
                .map(str::to_owned);
            if cursor.is_none() {
                return Ok((conn, tools));
            }
        }
        Err(self.error(format!("tools/list gave more than {MAX_TOOL_PAGES} pages")))
    }
}

/// A loopback redirect finishes its login on the server ([`McpServer::finish_login`]).
impl toolwire_oauth::FinishLogin for McpServer {
    fn name(&self) -> &str {
        McpServer::name(self)
    }

    fn finish_login(
        &self,
        pending: PendingLogin,
        redirect: &str,
    ) -> impl std::future::Future<Output = Result<(), LoginError>> + Send {
        McpServer::finish_login(self, pending, redirect)
    }
}

/// Logging in: the server's side of the OAuth flow ([`OAuthSettings`](toolwire_oauth::OAuthSettings)).
impl McpServer {
    /// Its token file, when it is an HTTP server and toolwire keeps tokens.
    pub fn token_file(&self) -> Option<TokenFile> {
        match (&self.config.transport, &self.token_dir) {
            (Transport::Http { url, .. }, Some(dir)) => {
                Some(TokenFile::new(dir, &self.config.name, url))
            }
            _ => None,
        }
    }

    /// The client that adds (and refreshes) the stored token, or runs the
    /// client-credentials grant when the config asks for that; `None` without tokens.
    async fn authorized_client(&self) -> Result<Option<Authorized>, GrantError> {
        let Some(store) = self.token_file() else {
            return Ok(None);
        };
        let settings = &self.config.oauth;
        // Unattended use gets a new token where a person would be asked to log in: when
        // there is none, or it is about to expire (these grants give no refresh token).
        let stored = if settings.unattended() && store.expires_soon() {
            Ok(None)
        } else {
            toolwire_oauth::stored_manager(&store).await
        };
        let manager = match stored {
            Ok(Some(manager)) => manager,
            Ok(None) | Err(_) if settings.unattended() => {
                toolwire_oauth::unattended(&store, settings).await?
            }
            Ok(None) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        // A DPoP-bound token is presented with proofs made with the key it is bound to.
        if store.token_is_dpop() {
            let key = store.dpop_key().map_err(LoginError::TokenFile)?;
            let client = DpopHttpClient::new(key, store).map_err(LoginError::Dpop)?;
            return Ok(Some(Authorized::Dpop(AuthClient::new(client, manager))));
        }
        Ok(Some(Authorized::Bearer(AuthClient::new(
            reqwest::Client::default(),
            manager,
        ))))
    }

    /// The error of a server that refused toolwire with `challenge` (its 401 or 403).
    pub(crate) fn refused(&self, challenge: Option<String>) -> ServerError {
        let scope = challenge
            .as_deref()
            .is_some_and(|c| c.contains("insufficient_scope"));
        if let Ok(mut slot) = self.challenge.lock() {
            *slot = challenge;
        }
        let how = if self.token_dir.is_some() {
            format!("run `toolwire mcp login {}`", self.config.name)
        } else {
            "log in to it".to_owned()
        };
        let mut error = self.error(if scope {
            format!(
                "it asks for more access than toolwire's login grants (insufficient_scope): {how}"
            )
        } else {
            format!("it requires a login (OAuth): {how}")
        });
        error.needs_login = true;
        error
    }

    /// Marks it as needing a login after a call was refused (a token revoked, or a
    /// tool that needs more scope), so that the next use says so instead of retrying.
    pub(crate) async fn refused_mid_session(&self, challenge: Option<String>) -> ServerError {
        let error = self.refused(challenge);
        let why = error.why.clone();
        *self.state.lock().await = State::NeedsLogin(error.clone());
        self.show(|s| {
            s.state = SourceState::NeedsLogin;
            s.reason = Some(why);
        });
        error
    }

    /// Whether it waits for a person to log in.
    pub fn needs_login(&self) -> bool {
        self.status().state == SourceState::NeedsLogin
    }

    /// Begins a login whose redirect goes to `redirect_uri` (a loopback listener, or
    /// `toolwire serve`'s own route); the person opens [`PendingLogin::url`].
    pub async fn begin_login(&self, redirect_uri: &str) -> Result<PendingLogin, LoginError> {
        let Transport::Http { url, headers } = &self.config.transport else {
            return Err(LoginError::Unavailable(format!(
                "`{}` is not an HTTP server; only those log in",
                self.config.name
            )));
        };
        let store = self.token_file().ok_or_else(|| {
            LoginError::Unavailable("toolwire keeps no tokens here (no data directory)".to_owned())
        })?;
        let known = self.challenge.lock().ok().and_then(|c| c.clone());
        let challenge = match known {
            Some(c) => Some(c),
            None => toolwire_oauth::probe_challenge(url, headers).await,
        };
        toolwire_oauth::begin(
            store,
            &self.config.oauth,
            challenge.as_deref(),
            redirect_uri,
        )
        .await
    }

    /// Finishes a login with the browser's redirect and lets the server be tried again.
    pub async fn finish_login(
        &self,
        pending: PendingLogin,
        redirect: &str,
    ) -> Result<(), LoginError> {
        pending.finish(redirect).await?;
        self.forget_connection("logged in").await;
        Ok(())
    }

    /// Forgets its tokens; `Ok(false)` when there were none. They are revoked at the
    /// authorization server first when it offers that ([`McpServer::log_out`]).
    pub async fn logout(&self) -> Result<bool, LoginError> {
        Ok(self.log_out().await?.removed)
    }

    /// Revokes its tokens at the authorization server when it offers a
    /// `revocation_endpoint` (RFC 7009), then forgets them, whether revoking worked or
    /// not: a person logging out must not be left logged in here.
    pub async fn log_out(&self) -> Result<LoggedOut, LoginError> {
        let store = self.token_file().ok_or_else(|| {
            LoginError::Unavailable(format!("`{}` keeps no tokens", self.config.name))
        })?;
        let revoked = toolwire_oauth::revoke(&store, &self.config.oauth).await;
        let removed = store.remove().map_err(LoginError::TokenFile)?;
        self.forget_connection("logged out").await;
        Ok(LoggedOut { removed, revoked })
    }

    /// Drops the connection (made with the old token, or none) so that the next use
    /// connects afresh, and wakes the supervisor.
    async fn forget_connection(&self, why: &str) {
        if let Ok(mut slot) = self.challenge.lock() {
            *slot = None;
        }
        *self.state.lock().await = State::Idle;
        self.show(|s| {
            s.state = SourceState::Idle;
            s.reason = Some(why.to_owned());
        });
        // A permit is kept when the supervisor is not waiting yet, so no wake-up is lost.
        self.login_changed.notify_one();
    }
}

/// What [`McpServer::log_out`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedOut {
    /// Whether there were tokens to forget.
    pub removed: bool,
    /// The authorization server's revocation: `None` when it offers none (or there was
    /// nothing to revoke), else whether it worked and why not.
    pub revoked: Option<Result<(), String>>,
}

/// The client that presents a server's token: Bearer, or DPoP with a proof per request.
enum Authorized {
    Bearer(AuthClient<reqwest::Client>),
    Dpop(AuthClient<DpopHttpClient>),
}

/// Pages of `tools/list` followed before giving up on a server.
const MAX_TOOL_PAGES: usize = 100;

/// How a connection attempt failed, which decides whether another is worth making.
/// How a handshake goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// The newest revision the server speaks: asked first.
    Newest,
    /// The 2025-11-25 `initialize` handshake only: the second try when the first failed.
    Initialize,
}

/// A handshake's end: the running service and its warning, rmcp's error, or the time ran
/// out.
type Started = Result<
    Result<(RunningService<RoleClient, Handler>, Option<String>), ClientInitializeError>,
    tokio::time::error::Elapsed,
>;

/// How long rmcp's own `Auto` handshake waits for the answer to `server/discover`
/// (its `DEFAULT_AUTO_DISCOVER_TIMEOUT`, which it does not let a client change).
const RMCP_DISCOVER_PATIENCE: Duration = Duration::from_secs(10);

/// How long a server that never answered `server/discover` is given to answer
/// `initialize` (at most its start-up time again): it has had its whole start-up time
/// already, and a server that answers nothing must not hold its caller much longer.
const SILENT_GRACE: Duration = Duration::from_secs(10);

enum Failed {
    /// The server could not be started or reached at all.
    Start(ServerError),
    /// The server answered, but the handshake failed.
    Handshake(ServerError),
    Timeout(ServerError),
    /// Its authorization server refused the unattended grant outright.
    Refused(ServerError),
}

impl Failed {
    fn into_error(self) -> ServerError {
        match self {
            Failed::Start(e) | Failed::Handshake(e) | Failed::Timeout(e) | Failed::Refused(e) => e,
        }
    }
}

fn spawn_error(command: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!("command {command:?} was not found (is it installed and on PATH?)")
    } else {
        format!("could not start {command:?}: {e}")
    }
}

fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    let bytes: Vec<u8> = tail
        .lock()
        .map(|t| t.iter().copied().collect())
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

fn with_stderr(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        let last: Vec<&str> = tail.lines().rev().take(5).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        format!("; its stderr ends with: {}", last.join(" | "))
    }
}

/// A custom request to the server, its failure as rmcp gave it: a caller may need its
/// auth challenge (`tools/list` here; [`crate::task`]'s requests build on it).
pub(crate) async fn request_raw(
    conn: &Connection,
    method: &str,
    params: Json,
) -> Result<Result<Json, serde_json::Error>, rmcp::service::ServiceError> {
    let req = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let answer = conn.peer().send_request(req).await?;
    Ok(serde_json::to_value(answer))
}
