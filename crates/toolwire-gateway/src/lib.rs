//! toolwire as an MCP server: a gateway that offers the tools of the configured MCP
//! servers (and `read_result`, and opt-in the built-ins) to the host that starts it, and
//! passes every call through toolwire's pipeline: stored in a session per connection (so
//! `toolwire serve` shows it live), normalized, budgeted by structure for the host, media
//! kept as image blocks or `toolwire://blob/` links, approvals asked through the host's
//! elicitation. Served over stdio (one host connection per process) or streamable HTTP
//! (one toolwire session per MCP session, every caller with the gateway's token; see
//! [`serve_http`]).

#![warn(missing_docs)]

mod asks;
mod http_gateway;
mod passing;
mod profile;
mod progress;
mod reply;
mod rounds;
#[cfg(unix)]
mod stdio;
mod tasks;
mod tasks_wire;

use std::sync::{Arc, Mutex};

use base64::Engine;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value as Json, json};
use tokio::sync::OnceCell;
use toolwire_agent::{CallOptions, CallScope, Host, Recorder, StoreBlobs};
use toolwire_core::{ToolCall, new_id};
use toolwire_store::BlobKey;

pub use asks::{AskSettings, DEFAULT_ASK_TIMEOUT, DEFAULT_RETRY_WAIT, SERVE_URL_FILE};
pub use http_gateway::{
    HTTP_TOKEN_FILE, HttpSettings, MIN_TOKEN_LEN, http_router, http_token, serve_http,
    serve_http_until,
};
pub use passing::Behind;
pub use profile::{HOSTS, HostProfile};
pub use reply::BLOB_URI_PREFIX;

/// Blobs whose type a connection remembers from its own replies (for `resources/read`);
/// bounded, oldest forgotten first.
const MAX_KNOWN_BLOBS: usize = 1024;

/// The tool that reads on where a cut result stopped.
const READ_RESULT: &str = "read_result";

/// Characters left for a page's closing note (what remains and the call that reads on).
const PAGE_NOTE_ROOM: usize = 400;

/// Stateless HTTP clients (2026-07-28 has no MCP sessions) whose toolwire session the
/// gateway remembers, by client name; bounded, oldest forgotten first.
const MAX_STATELESS_CLIENTS: usize = 256;

/// How long the host is given to answer `roots/list`, and a call waits for that answer.
const ROOTS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long `tools/list` waits for the servers still starting before it answers with
/// what is ready: under every host's own timeout for listing (opencode's is 5 s), long
/// enough for a server that starts in a second or two to be in the first listing (a
/// headless host may not list again before its model's first turn).
const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The MCP session header of streamable HTTP (absent on stateless requests).
const MCP_SESSION_HEADER: &str = "mcp-session-id";

/// One host connection's gateway.
pub struct Gateway {
    shared: Arc<Shared>,
    /// The session this connection's calls are stored in, made at its first call.
    session: OnceCell<String>,
    /// Blobs this connection's replies linked to, with their types: this connection may
    /// read them back without a look-up. Per connection, never shared: what another
    /// connection was sent is read only through a result of the asker's own session.
    linked: Mutex<Vec<(String, String)>>,
    /// The resources this connection's host subscribed to (their updates reach it).
    subscribed: passing::Subscriptions,
}

/// What every connection of one gateway process shares.
struct Shared {
    host: Host,
    /// The host's profile (`--host`); `None` picks it from each client's name.
    profile: Option<HostProfile>,
    /// Stores each call and its result behind the answer (made at the first call, on the
    /// runtime that serves it).
    recorder: std::sync::OnceLock<Recorder>,
    /// Toolwire sessions of stateless HTTP clients, by client name: their requests come
    /// one by one, each to a new handler, yet belong to one conversation of the host.
    stateless: tokio::sync::Mutex<Vec<(String, String)>>,
    /// Where people are asked when their host cannot ask, and for how long.
    asks: AskSettings,
    /// Calls of 2026-07-28 hosts waiting for the retry that brings their answer.
    waits: rounds::Waits,
    /// Calls running as tasks of the gateway's own, for hosts that take tasks.
    tasks: tasks::Tasks,
    /// Where the host's roots go, for the servers behind the gateway (stdio only: one
    /// host); `None` passes none on.
    roots: Option<toolwire_mcp::PassedRoots>,
    /// Set once the host's roots were asked for (answered or not): a call waits for it,
    /// so that a server that reads its roots at the call gets the host's.
    roots_asked: tokio::sync::watch::Sender<bool>,
    /// What the servers behind are doing as they start: every connected host is told
    /// when the tools change, and a host that never lists again waits for them.
    news: ToolNews,
    /// The servers behind, whose resources, prompts, completions and logging are passed
    /// through.
    behind: Behind,
}

/// How the servers behind a gateway, started after it answers its hosts, tell it of their
/// tools: a host must not wait for the slowest server before it may list what is ready
/// (opencode's timeout left its model with no tools at all), so each connected host is
/// sent `notifications/tools/list_changed` as a server's tools arrive.
#[derive(Debug, Clone)]
pub struct ToolNews {
    /// Bumped at each change of the tool set.
    changed: Arc<tokio::sync::watch::Sender<u64>>,
    /// Servers whose first start is not over (up or failed).
    starting: Arc<tokio::sync::watch::Sender<usize>>,
}

impl ToolNews {
    fn new() -> Self {
        ToolNews {
            changed: Arc::new(tokio::sync::watch::channel(0).0),
            starting: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }

    /// The tool set changed (a server's tools were handed over): every host connected is
    /// told, and lists again.
    pub fn tools_changed(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// One server's first start is over, whether it came up or failed.
    pub fn started(&self) {
        self.starting.send_modify(|n| *n = n.saturating_sub(1));
    }

    /// Until every server's first start is over: for a host that lists tools once and
    /// never again (Codex ignores `notifications/tools/list_changed`).
    async fn all_started(&self) {
        let mut starting = self.starting.subscribe();
        let _ = starting.wait_for(|n| *n == 0).await;
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("profile", &self.shared.profile.as_ref().map(|p| p.name))
            .field("session", &self.session.get())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway over `host`'s tools, shaping results for `profile`'s host.
    pub fn new(host: Host, profile: HostProfile) -> Self {
        Gateway::with_asks(host, profile, AskSettings::default())
    }

    /// [`Gateway::new`], asking people as `asks` says when their host cannot ask.
    pub fn with_asks(host: Host, profile: HostProfile, asks: AskSettings) -> Self {
        Gateway {
            shared: Arc::new(Shared {
                host,
                profile: Some(profile),
                recorder: std::sync::OnceLock::new(),
                stateless: tokio::sync::Mutex::new(Vec::new()),
                asks,
                waits: rounds::Waits::default(),
                tasks: tasks::Tasks::default(),
                roots: None,
                roots_asked: tokio::sync::watch::channel(false).0,
                news: ToolNews::new(),
                behind: Behind::default(),
            }),
            session: OnceCell::new(),
            linked: Mutex::new(Vec::new()),
            subscribed: passing::Subscriptions::default(),
        }
    }

    /// Passes the resources, prompts, completions and logging of `behind`'s servers
    /// through to the hosts.
    pub fn passing(mut self, behind: Behind) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.behind = behind;
        }
        self
    }

    /// The server (its prefix) of a tool whose `_meta.ui.resourceUri` is `uri`: the page
    /// of an MCP App is read from the server whose tool names it.
    fn ui_owner(&self, uri: &str) -> Option<String> {
        let tools = self.shared.host.tools();
        let name = tools
            .schemas()
            .find(|s| {
                s.extra
                    .get("_meta")
                    .and_then(|meta| meta.pointer("/ui/resourceUri"))
                    .and_then(Json::as_str)
                    == Some(uri)
            })?
            .name
            .clone();
        self.shared.behind.prefix_of(&name)
    }

    /// Shapes each connection's results for the host its client's name says it is
    /// ([`HostProfile::for_client`]), instead of for one profile given.
    pub fn profile_by_client(mut self) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.profile = None;
        }
        self
    }

    /// The profile the results of `context`'s host are shaped for.
    pub(crate) fn profile(&self, context: &RequestContext<RoleServer>) -> HostProfile {
        match &self.shared.profile {
            Some(profile) => profile.clone(),
            None => HostProfile::for_client(&client_name(context)),
        }
    }

    /// Passes the host's roots (and their changes) on to the servers that take `passed`
    /// (see `toolwire_mcp::McpServer::with_passed_roots`). For one host only: over HTTP
    /// every host would replace the others' roots.
    pub fn passing_roots(mut self, passed: toolwire_mcp::PassedRoots) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.roots = Some(passed);
        }
        self
    }

    /// `servers` servers behind the gateway are still starting: a host that lists its
    /// tools only once waits for them (see [`ToolNews::started`]).
    pub fn servers_starting(self, servers: usize) -> Self {
        self.shared.news.starting.send_replace(servers);
        self
    }

    /// Where the servers behind tell this gateway (and every connection of it) that its
    /// tools changed, and that their first start is over.
    pub fn tool_news(&self) -> ToolNews {
        self.shared.news.clone()
    }

    /// Tells `peer`, for as long as it is connected, each time the tool set changes: a
    /// server came up, so its resources and prompts may be new to the host too.
    fn tell_of_tool_changes(&self, peer: rmcp::service::Peer<RoleServer>) {
        let mut changed = self.shared.news.changed.subscribe();
        tokio::spawn(async move {
            while changed.changed().await.is_ok() {
                if peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
                let _ = peer.notify_resource_list_changed().await;
                let _ = peer.notify_prompt_list_changed().await;
            }
        });
    }

    /// Waits before a listing (tools, resources, prompts) is answered, and says whether
    /// only the servers up now are to be listed. Answered with what is ready after a
    /// short wait, so that the servers that start fast are in a host's first listing; the
    /// others are announced as they come. A host that would never list again is given
    /// every server's, once each is up or failed (its connection timeout bounds that).
    /// Every listing waits the same: a host may wait for all of them before it offers
    /// any tool (Claude Code does), so one held longer would hold the tools back too.
    async fn listing_wait(&self, context: &RequestContext<RoleServer>) -> bool {
        let started = self.shared.news.all_started();
        if self.profile(context).follows_list_changed {
            let _ = tokio::time::timeout(LIST_WAIT, started).await;
            true
        } else {
            started.await;
            false
        }
    }

    /// Asks the host for its roots, when it declared the capability, and passes them on.
    #[allow(deprecated)] // Roots: still what 2025-11-25 hosts and servers use.
    async fn ask_roots(&self, peer: &rmcp::service::Peer<RoleServer>) {
        let Some(passed) = &self.shared.roots else {
            return;
        };
        if declares_roots(peer) {
            let asked = peer.list_roots();
            // A host that cannot answer gives no roots: the servers keep what they had
            // from it (none at first), never the gateway's own folder.
            if let Ok(Ok(listed)) = tokio::time::timeout(ROOTS_WAIT, asked).await {
                passed.set(listed.roots);
            }
        }
        self.shared.roots_asked.send_replace(true);
    }

    /// Waits (a while at most) until the host's roots were asked for, when they are
    /// passed on and the host declared them.
    async fn roots_known(&self, context: &RequestContext<RoleServer>) {
        if self.shared.roots.is_none() || !declares_roots(&context.peer) {
            return;
        }
        let mut asked = self.shared.roots_asked.subscribe();
        let _ = tokio::time::timeout(ROOTS_WAIT, asked.wait_for(|done| *done)).await;
    }

    /// A gateway for another connection of this process: the same tools and stores, a
    /// session of its own.
    pub fn sibling(&self) -> Gateway {
        Gateway {
            shared: Arc::clone(&self.shared),
            session: OnceCell::new(),
            linked: Mutex::new(Vec::new()),
            subscribed: passing::Subscriptions::default(),
        }
    }

    /// Waits until every call answered so far is stored; returns how many could not be
    /// stored at all (the store failed) since the gateway started. Called before the
    /// gateway exits, so a host that disconnects loses nothing.
    pub async fn flush(&self) -> u64 {
        match self.shared.recorder.get() {
            Some(recorder) => {
                recorder.flush().await;
                recorder.lost()
            }
            None => 0,
        }
    }

    fn recorder(&self) -> &Recorder {
        self.shared
            .recorder
            .get_or_init(|| self.shared.host.recorder())
    }

    /// The session of this connection, if a call made one.
    pub fn session_id(&self) -> Option<&str> {
        self.session.get().map(String::as_str)
    }

    /// The toolwire session of the connection `context` came on, made at its first call.
    async fn session(&self, context: &RequestContext<RoleServer>) -> Result<String, ErrorData> {
        let stateless = is_stateless_http(context);
        if !stateless && let Some(made) = self.session.get() {
            return Ok(made.clone());
        }
        // Made once per connection (or looked up, for a stateless client): boxed, so
        // every call's future is not the size of a session's making.
        Box::pin(async move {
            let client = client_name(context);
            if stateless {
                return self.stateless_session(&client).await;
            }
            let made = self
                .session
                .get_or_try_init(|| self.new_session(&client))
                .await?;
            Ok(made.clone())
        })
        .await
    }

    async fn new_session(&self, client: &str) -> Result<String, ErrorData> {
        self.shared
            .host
            .session(None, &format!("gateway: {client}"))
            .await
            .map(|s| s.id)
            .map_err(|e| ErrorData::internal_error(format!("no session: {e}"), None))
    }

    /// A stateless client's session: one per client name, kept while the process runs.
    async fn stateless_session(&self, client: &str) -> Result<String, ErrorData> {
        // Held across the making, so two first calls at once make one session.
        let mut known = self.shared.stateless.lock().await;
        if let Some((_, id)) = known.iter().find(|(name, _)| name == client) {
            return Ok(id.clone());
        }
        let id = self.new_session(client).await?;
        if known.len() >= MAX_STATELESS_CLIENTS {
            known.remove(0);
        }
        known.push((client.to_owned(), id.clone()));
        Ok(id)
    }

    /// The session `context`'s connection already has, without making one: a connection
    /// that has called nothing has no results to read.
    async fn existing_session(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        if !is_stateless_http(context) {
            return self.session.get().cloned();
        }
        let client = client_name(context);
        let known = self.shared.stateless.lock().await;
        known
            .iter()
            .find(|(name, _)| *name == client)
            .map(|(_, id)| id.clone())
    }

    fn remember(&self, links: &[reply::BlobLink]) {
        if let Ok(mut known) = self.linked.lock() {
            for link in links {
                if known.len() >= MAX_KNOWN_BLOBS {
                    known.remove(0);
                }
                known.push((link.key.clone(), link.mime.clone()));
            }
        }
    }

    fn mime_of(&self, key: &str) -> Option<String> {
        let known = self.linked.lock().ok()?;
        known
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, m)| m.clone())
    }

    /// The media type of blob `key` as the newest result of `session` holding it gives
    /// it; `None` when no result of that session holds it (the blob is not the asker's to
    /// read, whoever else stored it).
    async fn stored_mime(&self, session: &str, key: &BlobKey) -> Result<Option<String>, ErrorData> {
        // Calls are answered before they are stored: one answered just now must be found.
        Box::pin(self.recorder().flush()).await;
        let history = self.shared.host.stores().history();
        let found = history
            .result_with_blob(session, key)
            .await
            .map_err(|e| ErrorData::internal_error(format!("history unreadable: {e}"), None))?;
        Ok(found.map(|stored| {
            reply::blob_mime(&stored.result, key.as_str())
                .unwrap_or_else(|| "application/octet-stream".to_owned())
        }))
    }

    /// The tools the host's model is offered: every tool of the host but those only a
    /// person may call.
    fn tool_list(&self) -> Vec<Json> {
        let tools = self.shared.host.tools();
        tools
            .schemas()
            .filter(|s| !s.hidden_from_model)
            .map(|s| {
                let mut tool = json!({
                    "name": s.name,
                    "description": s.description,
                    "inputSchema": s.input_schema,
                });
                if let Some(map) = tool.as_object_mut() {
                    if let Some(output) = &s.output_schema {
                        map.insert("outputSchema".into(), output.clone());
                    }
                    if let Some(annotations) = &s.annotations {
                        map.insert("annotations".into(), json!(annotations));
                    }
                    // What the source declared besides (`title`, `icons`, `_meta`) goes on.
                    for (key, value) in &s.extra {
                        map.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                }
                tool
            })
            .collect()
    }

    /// `result` of `call` as the host gets it: cut to its budget, media kept.
    async fn reply(
        &self,
        result: toolwire_core::ToolResult,
        call: ToolCall,
        profile: &HostProfile,
    ) -> Result<CallToolResponse, ErrorData> {
        let (max_chars, output_schema) = self.budget_for(&call.name, profile);
        let blobs = StoreBlobs(Arc::clone(self.shared.host.stores().blobs()));
        let (reply, links) = reply::call_tool_result(
            result,
            call,
            profile,
            max_chars,
            output_schema.as_ref(),
            &blobs,
        )
        .await
        .map_err(|e| ErrorData::internal_error(format!("unsendable result: {e}"), None))?;
        self.remember(&links);
        Ok(CallToolResponse::Complete(reply))
    }

    /// One `tools/call` of the host: passed through the pipeline, answered, stored behind.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let host = &self.shared.host;
        if host.tools().get(&name).is_none() {
            // A tool of a server still starting (a host that knew it from before, or
            // called before its listing came): it is the unknown tool only once every
            // server's start is over.
            self.shared.news.all_started().await;
        }
        if host.tools().get(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("no tool {name:?} behind this gateway"),
                None,
            ));
        }
        // The servers behind must know the host's roots before its first call reaches them.
        self.roots_known(&context).await;
        let mut arguments = request.arguments.unwrap_or_default();
        if let Some(state) = request.request_state.as_deref() {
            let sent = Json::Object(arguments);
            // Boxed, as every path a plain call does not take: this future is moved
            // whole (into its box, into rmcp's task), so its size is what the common
            // path needs, not what the largest rare one does. Each box is bound before
            // it is awaited: a statement's temporaries live across its await, and in
            // `Box::pin(f).await` the unboxed `f` stayed in this future (30 KB, 6.8 KB
            // bound, measured with `size_of_val`).
            let resumed =
                Box::pin(self.resume(state, &name, &sent, request.input_responses, &context));
            return resumed.await;
        }
        if name != READ_RESULT && self.may_be_task(&context) {
            let as_task = Box::pin(self.call_as_task(&name, &arguments, &context));
            if let Some(task) = as_task.await? {
                return Ok(task);
            }
        }
        let session = self.session(&context).await?;
        let channel = asks::host_channel(&context);
        // As the host sent them: what a retry with the person's answer must repeat.
        let sent = (channel == Some(true)).then(|| Json::Object(arguments.clone()));
        if name == READ_RESULT {
            // A page must fit the budget whole, or it would be cut again on its way back.
            let (max_chars, _) = self.budget_for(&name, &self.profile(&context));
            let fits = max_chars.saturating_sub(PAGE_NOTE_ROOM).max(1);
            let asked = arguments
                .get("limit")
                .and_then(Json::as_u64)
                .map_or(fits, |n| usize::try_from(n).unwrap_or(fits));
            arguments.insert("limit".into(), json!(asked.min(fits)));
            // It reads the history: every call answered before must be in it.
            let flushed = Box::pin(self.recorder().flush());
            flushed.await;
        }
        let input = Json::Object(arguments);
        let call = ToolCall::new(new_id("call"), &name, input);
        let progress_token = context.meta.get_progress_token();
        let timeout = self.shared.asks.timeout;
        let via = match (channel, sent) {
            (Some(true), Some(sent)) => {
                // 2026-07-28: the call runs on between this request and the host's retry,
                // so it has a task, a cancel and a channel of its own.
                let (steps, read) = tokio::sync::mpsc::channel(4);
                let cancel = tokio_util::sync::CancellationToken::new();
                let asks = Arc::new(asks::HostAsks::new(
                    asks::Via::Rounds(steps.clone()),
                    self.shared.asks.rounds_timeout(),
                ));
                // Kept whether or not this request asked for progress: a later round's
                // request may, and it gets the steps under its own token.
                let (latest, progress) = tokio::sync::watch::channel(None);
                let options = CallOptions::new(asks)
                    .scope(CallScope {
                        cancel: cancel.clone(),
                        trace: trace_of(&context),
                        progress: Some(progress::Tap::to(progress::To::Latest(latest))),
                    })
                    .without_events();
                let started = Box::pin(host.run_call(&session, call.clone(), options));
                let running = started.await.map_err(|e| {
                    ErrorData::internal_error(format!("the call could not start: {e}"), None)
                })?;
                tokio::spawn(async move {
                    let done = running.finish().await.map_err(|e| e.to_string());
                    let _ = steps.send(rounds::Step::Done(Box::new(done))).await;
                });
                let flight = rounds::Flight {
                    call,
                    session: session.clone(),
                    name,
                    arguments: sent,
                    client: client_name(&context),
                    steps: read,
                    progress,
                    cancel,
                };
                let flown = Box::pin(self.fly(flight, &context));
                return flown.await;
            }
            (Some(_), _) => asks::Via::Elicit(context.peer.clone()),
            (None, _) => asks::Via::Elsewhere {
                settings: self.shared.asks.clone(),
                suspensions: Arc::clone(host.stores().suspensions()),
            },
        };
        let asks = Arc::new(asks::HostAsks::new(via, timeout));
        // The host waits on every call: it is answered first and stored right behind.
        let progress = progress_token
            .map(|token| progress::Tap::to(progress::To::Host(context.peer.clone(), token)));
        let options = CallOptions::new(asks)
            .scope(CallScope {
                cancel: context.ct.clone(),
                trace: trace_of(&context),
                progress,
            })
            .recorded(self.recorder())
            .without_events();
        let running = host
            .run_call(&session, call.clone(), options)
            .await
            .map_err(|e| {
                ErrorData::internal_error(format!("the call could not start: {e}"), None)
            })?;
        let result = running
            .finish()
            .await
            .map_err(|e| ErrorData::internal_error(format!("the call ended badly: {e}"), None))?;
        self.reply(result, call, &self.profile(&context)).await
    }

    /// The budget for tool `name`, and its output schema: the size resolved where the
    /// tool was made (the person's setting, else its `_meta` hint:
    /// `toolwire_mcp::BudgetRules::resolve`), else the host's.
    fn budget_for(&self, name: &str, profile: &HostProfile) -> (usize, Option<Json>) {
        let tools = self.shared.host.tools();
        let Some(tool) = tools.get(name) else {
            return (profile.max_chars, None);
        };
        let schema = tool.schema();
        (
            schema.max_result_chars.unwrap_or(profile.max_chars),
            schema.output_schema.clone(),
        )
    }
}

/// The host's name: from the request's own `_meta` on 2026-07-28 (which has no
/// handshake; rmcp's peer info is then a stand-in), else from the handshake.
fn client_name(context: &RequestContext<RoleServer>) -> String {
    if let Some(info) = context.meta.client_info() {
        return info.name;
    }
    context
        .peer
        .peer_info()
        .map(|info| info.client_info.name.clone())
        .unwrap_or_else(|| "MCP host".to_owned())
}

/// The gateway as it names itself to its hosts: at connection, and on every result that
/// carries a sender (`_meta`'s `io.modelcontextprotocol/serverInfo`).
pub(crate) fn gateway_info() -> Json {
    json!({"name": "toolwire-gateway", "version": env!("CARGO_PKG_VERSION")})
}

/// Whether the host declared the roots capability in its handshake.
fn declares_roots(peer: &rmcp::service::Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some())
}

/// The trace the host's request belongs to (`traceparent` and `tracestate` in its
/// `_meta`, as MCP reserves them), so the call's span and the server's work join it.
/// Anything W3C does not allow is ignored.
fn trace_of(context: &RequestContext<RoleServer>) -> Option<toolwire_core::TraceContext> {
    let text = |key: &str| context.meta.get(key).and_then(Json::as_str);
    toolwire_core::TraceContext::parse(text("traceparent")?, text("tracestate"))
}

/// `result` marked complete, as 2026-07-28 requires of every result (rmcp takes the mark
/// off again for a peer of an older revision).
fn complete(mut result: Json) -> Json {
    if let Some(map) = result.as_object_mut() {
        map.insert("resultType".into(), Json::String("complete".into()));
    }
    result
}

/// Why a server's answer, passed through, could not be read as what the host is sent.
fn unsendable(e: serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("unsendable answer: {e}"), None)
}

/// Whether `context`'s request came over HTTP outside an MCP session (2026-07-28 serves
/// every request statelessly): its handler lives for this one request only.
fn is_stateless_http(context: &RequestContext<RoleServer>) -> bool {
    context
        .extensions
        .get::<http::request::Parts>()
        .is_some_and(|parts| !parts.headers.contains_key(MCP_SESSION_HEADER))
}

/// The gateway as rmcp serves it on stdio, its requests' futures boxed. rmcp spawns a task per
/// request around `ServerHandler`'s dispatch future, which holds every request kind's
/// future inline (10 KB measured), and tokio copies a task's future whole on its way in
/// and out: about ten copies of it a call (~100 KB, measured with a probe on `memcpy`).
/// Boxed here, the task holds a pointer and the dispatch future is copied once.
struct Served(Arc<Gateway>);

impl rmcp::Service<RoleServer> for Served {
    fn handle_request(
        &self,
        request: <RoleServer as rmcp::service::ServiceRole>::PeerReq,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<<RoleServer as rmcp::service::ServiceRole>::Resp, ErrorData>>
    + rmcp::service::MaybeSendFuture
    + '_ {
        Box::pin(rmcp::Service::<RoleServer>::handle_request(
            &*self.0, request, context,
        ))
    }

    fn handle_notification(
        &self,
        notification: <RoleServer as rmcp::service::ServiceRole>::PeerNot,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + rmcp::service::MaybeSendFuture + '_ {
        rmcp::Service::<RoleServer>::handle_notification(&*self.0, notification, context)
    }

    fn get_info(&self) -> <RoleServer as rmcp::service::ServiceRole>::Info {
        rmcp::Service::<RoleServer>::get_info(&*self.0)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        rmcp::Service::<RoleServer>::supported_protocol_versions(&*self.0)
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "prompts": {"listChanged": true},
                "completions": {},
                "logging": {},
                "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}},
            },
            "serverInfo": gateway_info(),
            "instructions": "Tools of the MCP servers configured in toolwire. Results are \
                stored by toolwire; a result cut to fit says so and how to read the rest \
                with read_result.",
        });
        serde_json::from_value(info).unwrap_or_default()
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.tell_of_tool_changes(context.peer.clone());
        self.shared
            .behind
            .tell(context.peer.clone(), self.subscribed.clone());
        self.ask_roots(&context.peer).await;
    }

    async fn on_roots_list_changed(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.ask_roots(&context.peer).await;
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.listing_wait(&context).await;
        serde_json::from_value(complete(json!({"tools": self.tool_list()})))
            .map_err(|e| ErrorData::internal_error(format!("unlistable tools: {e}"), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed: rmcp spawns a task per request around this future, and tokio copies a
        // task's whole future several times. Bound before it is awaited, so the unboxed
        // future is not a temporary kept in this one (see `Gateway::call`).
        let call = Box::pin(self.call(request, context));
        call.await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.task_state(request, &context).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel_task_of(request, &context).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        let params = request.params.unwrap_or(Json::Null);
        match self
            .legacy_task_request(&request.method, &params, &context)
            .await
        {
            Some(answer) => answer.map(rmcp::model::CustomResult::new),
            None => Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let ready_only = self.listing_wait(&context).await;
        let listed = self
            .shared
            .behind
            .list("resources", "resources/list", "resources", ready_only)
            .await;
        serde_json::from_value(complete(listed)).map_err(unsendable)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        let ready_only = self.listing_wait(&context).await;
        let listed = self
            .shared
            .behind
            .list(
                "resources",
                "resources/templates/list",
                "resourceTemplates",
                ready_only,
            )
            .await;
        serde_json::from_value(complete(listed)).map_err(unsendable)
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri.to_string();
        self.subscribed.add(&uri)?;
        let owner = self.ui_owner(&uri);
        let params = json!({"uri": uri});
        let subscribed = self
            .shared
            .behind
            .about_uri("resources/subscribe", params, &uri, owner.as_deref())
            .await;
        if subscribed.is_err() {
            self.subscribed.remove(&uri);
        }
        subscribed.map(drop)
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri.to_string();
        self.subscribed.remove(&uri);
        let owner = self.ui_owner(&uri);
        let params = json!({"uri": uri});
        self.shared
            .behind
            .about_uri("resources/unsubscribe", params, &uri, owner.as_deref())
            .await
            .map(drop)
    }

    /// A 2026-07-28 host (Claude Code is one) hears of list changes only on a
    /// `subscriptions/listen` stream, never as bare notifications: without it, the tools of
    /// a server that comes up after the host's first `tools/list` never reach the host.
    fn accepted_subscription_filter(
        &self,
        _requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(
            rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .build(),
        )
    }

    /// Tells the stream of every change of what the servers behind offer, as
    /// `tell_of_tool_changes` tells an older host, until the host cancels it or leaves.
    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        let mut changed = self.shared.news.changed.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                news = changed.changed() => {
                    if news.is_err() {
                        return Ok(());
                    }
                    // Only what the host asked for: the sink refuses the rest.
                    let sink = context.sink();
                    let accepted = sink.accepted();
                    let told = [
                        accepted.tools_list_changed == Some(true)
                            && sink.notify_tool_list_changed().await.is_err(),
                        accepted.resources_list_changed == Some(true)
                            && sink.notify_resource_list_changed().await.is_err(),
                        accepted.prompts_list_changed == Some(true)
                            && sink.notify_prompt_list_changed().await.is_err(),
                    ];
                    if told.contains(&true) {
                        // The stream or the connection is gone.
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        let ready_only = self.listing_wait(&context).await;
        let listed = self
            .shared
            .behind
            .list("prompts", "prompts/list", "prompts", ready_only)
            .await;
        serde_json::from_value(complete(listed)).map_err(unsendable)
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let got = self.shared.behind.get_prompt(params).await?;
        serde_json::from_value(complete(got))
            .map_err(unsendable)
            .map(rmcp::model::GetPromptResponse::Complete)
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        let params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let owner = params
            .pointer("/ref/uri")
            .and_then(Json::as_str)
            .and_then(|uri| self.ui_owner(uri));
        let completed = self
            .shared
            .behind
            .complete(params, owner.as_deref())
            .await?;
        serde_json::from_value(complete(completed)).map_err(unsendable)
    }

    #[allow(deprecated)] // Logging: still what 2025-11-25 hosts and servers use.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        self.shared.behind.set_level(params).await;
        Ok(())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.to_string();
        let not_found = || ErrorData::resource_not_found(format!("no resource {uri:?}"), None);
        if !uri.starts_with(BLOB_URI_PREFIX) {
            // A resource of a server behind (an MCP App's `ui://` page, a `memo://`).
            let params = serde_json::to_value(&request)
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            let owner = self.ui_owner(&uri);
            let read = self
                .shared
                .behind
                .about_uri("resources/read", params, &uri, owner.as_deref())
                .await?;
            let read: ReadResourceResult = serde_json::from_value(complete(read)).map_err(|e| {
                ErrorData::internal_error(format!("unsendable resource: {e}"), None)
            })?;
            return Ok(ReadResourceResponse::Complete(read));
        }
        let key = uri
            .strip_prefix(BLOB_URI_PREFIX)
            .and_then(|k| BlobKey::parse(k).ok())
            .ok_or_else(not_found)?;
        // Only a blob of this connection's own results: blob keys are content hashes, so
        // answering for any stored blob would also tell whether a known file is stored.
        let mime = match self.mime_of(key.as_str()) {
            Some(mime) => mime,
            None => {
                let session = self
                    .existing_session(&context)
                    .await
                    .ok_or_else(not_found)?;
                self.stored_mime(&session, &key)
                    .await?
                    .ok_or_else(not_found)?
            }
        };
        let bytes = self
            .shared
            .host
            .stores()
            .blobs()
            .get(&key)
            .await
            .map_err(|_| not_found())?;
        let blob = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let read: ReadResourceResult = serde_json::from_value(complete(json!({"contents": [{
            "uri": uri, "mimeType": mime, "blob": blob,
        }]})))
        .map_err(|e| ErrorData::internal_error(format!("unsendable resource: {e}"), None))?;
        Ok(ReadResourceResponse::Complete(read))
    }
}

/// Serves `gateway` on this process's stdin and stdout until the host disconnects.
/// Every call answered is stored before this returns, however the connection ended.
pub async fn serve_stdio(gateway: Gateway) -> Result<(), GatewayError> {
    use rmcp::ServiceExt;
    // Before the host is served: a SIGTERM from then on stores what was answered.
    let stop = toolwire_http::shutdown_signal();
    let stored = gateway.sibling();
    // 2025-11-25's task messages, which rmcp's model drops, are shaped beneath it.
    let listing = gateway.sibling();
    let wire = tasks_wire::Wire::new(gateway.shared.tasks.nonce.clone(), move || {
        listing.task_tools()
    });
    #[cfg(unix)]
    let (input, output) = stdio::stdio();
    #[cfg(not(unix))]
    let (input, output) = rmcp::transport::stdio();
    let (input, output) = tasks_wire::interpose(input, output, &wire);
    // rmcp's line transport, with the host's `tools/call` read in one parse and, once
    // the host is connected, answered beside rmcp's service loop.
    let calls = toolwire_mcp::HostCalls::default();
    let gateway = Arc::new(gateway);
    let running = Served(Arc::clone(&gateway))
        .serve(toolwire_mcp::host_transport(
            input,
            output,
            Some(calls.clone()),
        ))
        .await
        .map_err(|e| GatewayError::HostDidNotConnect(e.to_string()))?;
    let handler: toolwire_mcp::HostHandler = Arc::new(move |request, context| {
        let gateway = Arc::clone(&gateway);
        // Boxed whole, as `Served` boxes rmcp's dispatch: the task holds a pointer.
        Box::pin(async move {
            rmcp::Service::<RoleServer>::handle_request(&*gateway, request, context).await
        })
    });
    calls.start(running.peer().clone(), handler);
    let ended = tokio::select! {
        ended = running.waiting() => ended
            .map(drop)
            .map_err(|e| GatewayError::ConnectionEnded(e.to_string())),
        () = stop => Ok(()),
    };
    stored_all(&stored).await?;
    ended
}

/// Waits until every answered call is stored; errs when some could not be.
async fn stored_all(gateway: &Gateway) -> Result<(), GatewayError> {
    match gateway.flush().await {
        0 => Ok(()),
        lost => Err(GatewayError::Unstored(lost)),
    }
}

/// Why the gateway did not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The host did not finish the MCP handshake on stdio.
    #[error("the host did not connect: {0}")]
    HostDidNotConnect(String),
    /// The host's stdio connection ended with an error.
    #[error("the connection ended badly: {0}")]
    ConnectionEnded(String),
    /// Calls were answered but could not be stored (how many).
    #[error("{0} calls could not be stored in toolwire's history")]
    Unstored(u64),
    /// The HTTP gateway's token is shorter than [`MIN_TOKEN_LEN`].
    #[error("the gateway's token must be at least {MIN_TOKEN_LEN} characters")]
    WeakToken,
    /// The token file (or its directory) could not be read, made or written.
    #[error("cannot {what} {}: {source}", path.display())]
    TokenFile {
        /// What was being done (`read`, `write`, `make the directory of`).
        what: &'static str,
        /// The file, or the directory.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The token file was made by another process, then was gone when read.
    #[error("{} vanished", .0.display())]
    TokenFileVanished(std::path::PathBuf),
    /// The token file can be read by other users, so its token is no credential.
    #[error(
        "{} can be read by other users (mode {mode:o}), so its token is no credential: \
         make it yours only (chmod 600) or delete it to have a new one made",
        path.display()
    )]
    TokenFileShared {
        /// The file.
        path: std::path::PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The token file holds no token of [`MIN_TOKEN_LEN`] characters.
    #[error(
        "{} holds no token of at least {MIN_TOKEN_LEN} characters: delete it to have a \
         new one made",
        .0.display()
    )]
    NoToken(std::path::PathBuf),
}
