//! toolwire's HTTP server: the REST API under `/api`, live events over SSE and WebSocket,
//! and the guards of a safe local server, on the `Host` every front end shares.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let host = toolwire_agent::Host::builder().build().await?;
//! let config = toolwire_server::ServeConfig::new("127.0.0.1:7777".parse()?);
//! let server = toolwire_server::Server::bind(host, config).await?;
//! println!("{}", server.url());
//! server.run(std::future::pending()).await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod agui;
mod agui_proxy;
mod api;
mod approver;
mod calls;
mod error;
mod events;
mod extract;
mod guard;
mod login;
// A namespace: the API's OpenAPI description, `openapi::ROUTES` and `openapi::document()`.
pub mod openapi;
mod resources;
mod sandbox;
mod web;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::task::JoinSet;
use toolwire_agent::{Host, ProviderSettings};

pub(crate) use approver::WebApprover;
pub(crate) use error::ApiError;
pub use guard::Guard;

/// Largest request body: the API takes small JSON documents only.
pub const MAX_BODY: usize = 1024 * 1024;

/// Longest a request may take to answer (streams only need to start in time).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a shutdown waits for turns and calls still running to store their results.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Most connections open at once, by default: well below the common limit of 1024 open
/// files, which the store, MCP servers and the sandbox need too.
pub const MAX_CONNECTIONS: usize = 512;

/// Most event feeds (SSE and WebSocket together) open at once, by default: a quarter of
/// the connections, so feeds alone never take every connection from plain requests.
pub const MAX_FEEDS: usize = 128;

/// How long a client has to send a whole request head, from its connection's accept or
/// from the head's first byte, by default.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a kept-alive connection may wait for its next request, by default.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

use toolwire_http::{RETRY_AFTER_SECS, STALL_TIMEOUT};

/// How to serve.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeConfig {
    /// The address to listen on; port 0 picks a free one.
    pub addr: SocketAddr,
    /// Required on any address but loopback; checked on every API request when set.
    pub token: Option<String>,
    /// The provider agent turns use; without one, posting a message answers 409.
    pub provider: Option<ProviderSettings>,
    /// How long a shutdown waits for running turns and calls to store their results.
    /// Calls still waiting for a person then are dropped, and stay pending in the store,
    /// to be answered after a restart.
    pub shutdown_grace: Duration,
    /// The port of the MCP Apps sandbox proxy, on the same address (0: any free port).
    /// Another port is another origin, which the MCP Apps extension requires.
    pub sandbox_port: u16,
    /// The origins a reverse proxy serves this instance under (`https://tw.example.com`):
    /// their host passes the Host allowlist and they pass the Origin check. Setting one
    /// requires a token, since the instance is then reachable beyond this machine.
    pub public_origins: Vec<String>,
    /// Most connections open at once (both ports together); past it a new connection is
    /// answered `503` with `Retry-After` and closed, never queued. At most half the
    /// process's open-file limit is used, where the system tells it.
    pub max_connections: usize,
    /// Most event feeds open at once, SSE and WebSocket together; past it `503` with
    /// `Retry-After`.
    pub max_feeds: usize,
    /// A connection that has not sent a whole request head this long after its accept, or
    /// after the head's first byte, is dropped (slow or silent clients).
    pub header_read_timeout: Duration,
    /// A kept-alive connection with no request this long after its last answer is closed.
    pub idle_timeout: Duration,
    /// The AG-UI agent `POST /api/agui/follow` forwards to and records
    /// ([`toolwire_agui`]).
    pub agui_follow: Option<toolwire_agui::FollowTarget>,
}

impl ServeConfig {
    /// Serving on `addr` with no token, no provider and the default limits.
    pub fn new(addr: SocketAddr) -> Self {
        ServeConfig {
            addr,
            token: None,
            provider: None,
            shutdown_grace: SHUTDOWN_GRACE,
            sandbox_port: 0,
            public_origins: Vec::new(),
            max_connections: MAX_CONNECTIONS,
            max_feeds: MAX_FEEDS,
            header_read_timeout: HEADER_READ_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            agui_follow: None,
        }
    }
}

/// Why the server did not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address was given without a token.
    #[error(
        "{0} is not a loopback address: anyone who can reach it could run tools, so a token is \
         required (pass --token or set TOOLWIRE_TOKEN)"
    )]
    TokenRequired(SocketAddr),
    /// The token is too short to resist guessing.
    #[error("a token must be at least 16 characters")]
    WeakToken,
    /// A public origin was given without a token.
    #[error(
        "a public origin makes the server reachable by others, so a token is required \
         (pass --token or set TOOLWIRE_TOKEN)"
    )]
    TokenRequiredForPublicOrigin,
    /// The public origin is not `http(s)://HOST[:PORT]`.
    #[error("public origin {0:?}: expected http(s)://HOST[:PORT], with no path")]
    BadPublicOrigin(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why it could not be bound.
        #[source]
        source: std::io::Error,
    },
    /// Serving failed after it started.
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub(crate) host: Host,
    pub(crate) provider: Option<ProviderSettings>,
    pub(crate) approver: Arc<WebApprover>,
    pub(crate) guard: Arc<Guard>,
    /// Calls started by requests, which a person may stop.
    pub(crate) calls: calls::RunningCalls,
    /// Turns and calls started by requests, awaited at shutdown.
    tasks: Arc<Mutex<JoinSet<()>>>,
    /// Set when the server begins to shut down: event feeds end then, or the graceful
    /// shutdown would wait forever for streams that never finish by themselves.
    closing: Arc<tokio::sync::watch::Sender<bool>>,
    /// The MCP Apps sandbox proxy's origin (`http://127.0.0.1:P`), once bound.
    pub(crate) sandbox_origin: Option<String>,
    /// The open event feeds' slots, and word of deleted sessions for them.
    pub(crate) feeds: Arc<events::Feeds>,
    /// The external AG-UI agent this server follows, if any.
    pub agui_follow: Option<toolwire_agui::FollowTarget>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("provider", &self.provider.as_ref().map(|p| p.provider()))
            .field("hosts", &self.guard.hosts)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// The shared state of a server for `host`, answering agent turns with `provider` when set, behind `guard`.
    pub fn new(host: Host, provider: Option<ProviderSettings>, guard: Guard) -> Self {
        // Waits end when another instance on the same store claims the call.
        let approver = Arc::new(WebApprover::shared(Arc::clone(host.stores().suspensions())));
        AppState {
            host,
            provider,
            approver,
            guard: Arc::new(guard),
            calls: calls::RunningCalls::default(),
            tasks: Arc::new(Mutex::new(JoinSet::new())),
            closing: Arc::new(tokio::sync::watch::Sender::new(false)),
            sandbox_origin: None,
            feeds: Arc::new(events::Feeds::new(MAX_FEEDS)),
            agui_follow: None,
        }
    }

    /// Resolves when the server begins to shut down.
    pub(crate) fn closing(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.closing.subscribe();
        async move {
            let _ = rx.wait_for(|closing| *closing).await;
        }
    }

    /// Runs work past the request that started it, to be awaited at shutdown.
    fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        if let Ok(mut tasks) = self.tasks.lock() {
            // Finished tasks are collected as new ones come, so the set stays small.
            while tasks.try_join_next().is_some() {}
            tasks.spawn(work);
        }
    }

    /// Waits (up to `grace`) for the work still running to end and store its results.
    pub async fn drain(&self, grace: Duration) {
        let mut tasks = match self.tasks.lock() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(_) => return,
        };
        let _ =
            tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    }
}

/// Every route: the REST API, the event feeds, resources, OpenAPI and the page, behind
/// the guards, body limit and timeout.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route(
            "/api/sessions",
            get(api::list_sessions).post(api::create_session),
        )
        .route(
            "/api/sessions/{id}",
            get(api::get_session).delete(events::delete_session),
        )
        .route("/api/sessions/{id}/messages", post(api::post_message))
        .route("/api/sessions/{id}/calls", post(api::post_call))
        .route(
            "/api/sessions/{id}/calls/{call}/cancel",
            post(api::cancel_call),
        )
        .route("/api/sessions/{id}/suspensions", get(api::list_suspensions))
        .route(
            "/api/sessions/{id}/suspensions/{suspension}",
            post(api::resolve),
        )
        .route("/api/sessions/{id}/events", get(events::sse))
        .route("/api/sessions/{id}/export", get(api::export))
        .route("/api/tools", get(api::list_tools))
        .route("/api/servers", get(api::list_servers))
        .route("/api/servers/{server}/login", post(login::begin))
        .route("/api/servers/{server}/logout", post(login::logout))
        .route(login::CALLBACK_PATH, get(login::callback))
        .route("/api/tools/{name}/resource", post(api::read_tool_resource))
        .route("/api/resources/{blob}/content", get(resources::content))
        .route("/api/ws", get(events::ws))
        .route("/api/agui", post(agui::run))
        .route("/api/agui/follow", post(agui_proxy::proxy))
        .route("/api/openapi.json", get(openapi::serve_document))
        .route("/api/info", get(api::info))
        .route("/", get(page))
        .route("/sessions/{id}", get(web::session_page))
        .route("/web/{*path}", get(web::serve_asset))
        .fallback(no_route);
    api.layer(axum::middleware::from_fn_with_state(
        state.clone(),
        guard::check,
    ))
    .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY))
    .layer(tower_http::timeout::TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        REQUEST_TIMEOUT,
    ))
    .with_state(state)
}

async fn no_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no_route", "no such route")
}

#[derive(Debug, serde::Deserialize)]
struct PageQuery {
    token: Option<String>,
}

/// The app's page, served with a policy that allows no inline script and nothing from
/// elsewhere. `/?token=...` (the URL the server
/// prints) trades the token for an HttpOnly cookie and redirects, so the token leaves
/// the address bar and the history.
async fn page(
    axum::extract::State(state): axum::extract::State<AppState>,
    axum::extract::Query(q): axum::extract::Query<PageQuery>,
) -> Response {
    if let (Some(given), Some(_)) = (q.token, &state.guard.token) {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {given}"))
                .unwrap_or(HeaderValue::from_static("")),
        );
        if !state.guard.accepts(&headers) {
            return ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "wrong token")
                .into_response();
        }
        // The cookie holds a login made from the token, never the token: cookies ignore
        // ports, so every other service on this host would be sent it.
        let (Some(name), Some(login)) = (state.guard.cookie_name(), state.guard.new_login()) else {
            return ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "no token is set")
                .into_response();
        };
        let secure = if state.guard.secure_cookies {
            "; Secure"
        } else {
            ""
        };
        let cookie = format!("{name}={login}; HttpOnly; SameSite=Strict; Path=/{secure}");
        let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, v);
        }
        return response;
    }
    web::page(state.sandbox_origin.as_deref())
}

/// A bound server, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    sandbox_listener: tokio::net::TcpListener,
    sandbox: sandbox::SandboxState,
    state: AppState,
    url: String,
    grace: Duration,
    max_connections: usize,
    limits: toolwire_http::Limits,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("url", &self.url).finish()
    }
}

impl Server {
    /// Checks the configuration and binds. A non-loopback address without a token is
    /// refused here, before anything listens.
    pub async fn bind(host: Host, config: ServeConfig) -> Result<Self, ServeError> {
        if !config.addr.ip().is_loopback() && config.token.is_none() {
            return Err(ServeError::TokenRequired(config.addr));
        }
        if config.token.as_ref().is_some_and(|t| t.len() < 16) {
            return Err(ServeError::WeakToken);
        }
        if !config.public_origins.is_empty() && config.token.is_none() {
            return Err(ServeError::TokenRequiredForPublicOrigin);
        }
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .map_err(|source| ServeError::Bind {
                addr: config.addr,
                source,
            })?;
        let addr = listener.local_addr()?;
        let sandbox_at = SocketAddr::new(addr.ip(), config.sandbox_port);
        let sandbox_listener =
            tokio::net::TcpListener::bind(sandbox_at)
                .await
                .map_err(|source| ServeError::Bind {
                    addr: sandbox_at,
                    source,
                })?;
        let sandbox_addr = sandbox_listener.local_addr()?;
        let mut guard = Guard::for_addr(addr, config.token.clone());
        for origin in &config.public_origins {
            guard
                .allow_origin(origin)
                .ok_or_else(|| ServeError::BadPublicOrigin(origin.clone()))?;
        }
        let sandbox = sandbox::SandboxState {
            guard: Guard::for_addr(sandbox_addr, None),
            app_origins: guard.origins.clone(),
        };
        let url = format!("http://{addr}/");
        let mut state = AppState::new(host, config.provider, guard);
        state.sandbox_origin = Some(format!("http://{sandbox_addr}"));
        state.feeds = Arc::new(events::Feeds::new(config.max_feeds));
        state.agui_follow = config.agui_follow;
        let max_connections = toolwire_http::connection_cap(
            config.max_connections,
            toolwire_http::open_files_limit(),
        )
        .min(tokio::sync::Semaphore::MAX_PERMITS);
        Ok(Server {
            listener,
            sandbox_listener,
            sandbox,
            state,
            url,
            grace: config.shutdown_grace,
            max_connections,
            limits: toolwire_http::Limits {
                header_read: config.header_read_timeout,
                idle: config.idle_timeout,
                stall: STALL_TIMEOUT,
            },
        })
    }

    /// The address to open; with a token, the one-time URL is `url()?token=...`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address actually bound (the port, when 0 was asked for).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// The connection cap in force: [`ServeConfig::max_connections`], or less when the
    /// open-file limit is low.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// The names and addresses (`host:port`) the app answers to, for saying at start which
    /// a browser may use; any other needs [`ServeConfig::public_origins`].
    pub fn hosts(&self) -> &[String] {
        &self.state.guard.hosts
    }

    /// Serves until `shutdown` resolves, then stops taking requests, lets the requests in
    /// flight finish, and waits for the turns and calls still running to store their
    /// results.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let state = self.state.clone();
        let closing = Arc::clone(&state.closing);
        let shutdown = async move {
            shutdown.await;
            closing.send_replace(true);
        };
        // One cap for both ports: they draw on the same file descriptors.
        let connections = toolwire_http::Connections::new(self.max_connections);
        // The sandbox serves two static files; it stops with the app.
        let sandbox = toolwire_http::serve(
            self.sandbox_listener,
            sandbox::router(self.sandbox),
            connections.clone(),
            self.limits,
            state.closing(),
        );
        let app = toolwire_http::serve(
            self.listener,
            router(self.state),
            connections,
            self.limits,
            shutdown,
        );
        tokio::join!(app, sandbox);
        state.drain(self.grace).await;
        Ok(())
    }
}
