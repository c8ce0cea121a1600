//! A source of tools that comes and goes (an MCP server): its state, as a host shows it.
//!
//! A host starts serving before its sources are ready (a slow server must not hold up
//! the others), so what a person sees of a source is a state that changes: connecting,
//! ready, failed with its reason, restarting after it died.

use serde::{Deserialize, Serialize};

/// Where a source is in its life.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SourceState {
    /// Configured, not started yet (sources may start when first needed).
    #[default]
    Idle,
    /// Starting for the first time.
    Connecting,
    /// Up; its tools are offered.
    Ready,
    /// Could not be started or reached; `reason` says why.
    Failed,
    /// It was up and died (or failed and is tried again); being started again.
    Restarting,
    /// It is protected (OAuth) and toolwire holds no token it accepts: a person must log
    /// in (`toolwire mcp login NAME`, or the web app's "Log in"). Not retried until then,
    /// since every attempt would be refused the same way.
    NeedsLogin,
}

impl SourceState {
    /// The word the API, the page and the terminal use.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceState::Idle => "idle",
            SourceState::Connecting => "connecting",
            SourceState::Ready => "ready",
            SourceState::Failed => "failed",
            SourceState::Restarting => "restarting",
            SourceState::NeedsLogin => "needs_login",
        }
    }
}

/// A source as a person sees it: `GET /api/servers`, `toolwire tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceStatus {
    /// The name as configured.
    pub name: String,
    /// The prefix of its tools' names (`PREFIX__TOOL`).
    pub prefix: String,
    /// What it runs or reaches (`stdio: npx …`, `http: https://…`), secrets left out.
    pub target: String,
    /// Where it is in its life: starting, up, failed, waiting for a login.
    pub state: SourceState,
    /// Why it failed (set with `failed`, and while restarting after a failure).
    pub reason: Option<String>,
    /// The protocol revision it speaks, once known.
    pub protocol: Option<String>,
    /// What a person should know of it while it works: that it speaks an older revision
    /// than toolwire asked for without having said so itself, and why.
    #[serde(default)]
    pub warning: Option<String>,
    /// The names of the tools it gives, as registered.
    pub tools: Vec<String>,
}

/// Something that gives tools and has a state of its own: the host lists these.
pub trait ToolSource: Send + Sync {
    /// Its state and tools as of now.
    fn status(&self) -> SourceStatus;

    /// How a person logs in to it, for a source that can need a login (an MCP server
    /// behind OAuth); `None` for one that never does.
    fn login(&self) -> Option<&dyn SourceLogin> {
        None
    }
}

/// A login begun: the page the person opens, and the `state` its redirect brings back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginStart {
    /// The authorization page the person opens.
    pub url: String,
    /// The OAuth `state` that the redirect brings back, naming this login.
    pub state: String,
}

/// Logging a person in to a source in a browser, the redirect landing on a route the
/// host serves (`toolwire serve`'s own). Errors are for a person; none holds a token.
pub trait SourceLogin: Send + Sync {
    /// Begins a login whose authorization server redirects to `redirect_uri`.
    fn begin_login<'a>(
        &'a self,
        redirect_uri: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<LoginStart, String>>;

    /// Whether a login begun here waits for the redirect carrying `state`.
    fn awaits(&self, state: &str) -> bool;

    /// Finishes the login begun with `state`, with the redirect's full URL.
    fn finish_login<'a>(
        &'a self,
        state: &'a str,
        redirect: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), String>>;

    /// Forgets the stored tokens; `Ok(false)` when there were none.
    fn logout(&self) -> futures::future::BoxFuture<'_, Result<bool, String>>;
}
