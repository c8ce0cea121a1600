//! toolwire's side of an MCP connection: what it declares, and where the server's
//! progress notifications and requests for input go (the call they belong to).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use toolwire_tool::ToolContext;

/// The MIME type of an MCP App's HTML (extension `io.modelcontextprotocol/ui`).
pub const MCP_APP_MIME: &str = "text/html;profile=mcp-app";

/// A server's request for a person's input, on its way to the call it belongs to.
#[derive(Debug)]
pub(crate) struct Ask {
    pub params: ElicitRequestParams,
    pub reply: oneshot::Sender<ElicitResult>,
}

/// The calls in flight on one connection, by progress token, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Router {
    calls: Mutex<Vec<InFlight>>,
}

#[derive(Debug)]
struct InFlight {
    token: String,
    ctx: ToolContext,
    asks: mpsc::Sender<Ask>,
}

/// Removes its call from the router when dropped, however the call ends.
#[derive(Debug)]
pub(crate) struct Registration {
    router: Arc<Router>,
    token: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.router.calls.lock() {
            calls.retain(|c| c.token != self.token);
        }
    }
}

fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl Router {
    /// Routes `token`'s progress to `ctx` and the server's questions to `asks`, until the
    /// registration is dropped.
    pub(crate) fn register(
        self: &Arc<Self>,
        token: &ProgressToken,
        ctx: ToolContext,
        asks: mpsc::Sender<Ask>,
    ) -> Registration {
        let token = token_key(token);
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(InFlight {
                token: token.clone(),
                ctx,
                asks,
            });
        }
        Registration {
            router: Arc::clone(self),
            token,
        }
    }

    /// Moves a parked call's routing to a new context (the one it is resumed with).
    pub(crate) fn rebind(&self, registration: &Registration, ctx: ToolContext) {
        if let Ok(mut calls) = self.calls.lock()
            && let Some(call) = calls.iter_mut().find(|c| c.token == registration.token)
        {
            call.ctx = ctx;
        }
    }

    fn context_of(&self, token: &ProgressToken) -> Option<ToolContext> {
        let key = token_key(token);
        let calls = self.calls.lock().ok()?;
        calls.iter().find(|c| c.token == key).map(|c| c.ctx.clone())
    }

    /// Over stdio a server's request does not say which call it is for: it goes to the
    /// oldest call in flight, which is exact whenever one call runs at a time.
    fn oldest_asker(&self) -> Option<mpsc::Sender<Ask>> {
        let calls = self.calls.lock().ok()?;
        calls.first().map(|c| c.asks.clone())
    }
}

/// Answers a server's `sampling/createMessage`: the request's params in, its result out,
/// as MCP JSON. A host sets one when the session has a model provider.
pub trait Sampler: Send + Sync {
    fn sample(&self, params: serde_json::Value)
    -> BoxFuture<'_, Result<serde_json::Value, String>>;
}

/// The client handler of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub router: Arc<Router>,
    pub sampler: Option<Arc<dyn Sampler>>,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("sampling", &self.sampler.is_some())
            .finish_non_exhaustive()
    }
}

impl Handler {
    pub(crate) fn new(sampler: Option<Arc<dyn Sampler>>) -> Self {
        Handler {
            router: Arc::new(Router::default()),
            sampler,
        }
    }
}

/// What toolwire declares: form and URL elicitation, MCP Apps, tasks (polled), and
/// sampling when a provider can serve it.
pub(crate) fn client_config(sampling: bool) -> ClientConfig {
    let mut declared = json!({
        "elicitation": {"form": {}, "url": {}},
        "extensions": {
            "io.modelcontextprotocol/ui": {"mimeTypes": [MCP_APP_MIME]},
            "io.modelcontextprotocol/tasks": {},
        },
    });
    if sampling {
        declared["sampling"] = json!({});
    }
    let capabilities: ClientCapabilities = serde_json::from_value(declared).unwrap_or_default();
    let mut info = Implementation::default();
    info.name = "toolwire".to_owned();
    info.version = env!("CARGO_PKG_VERSION").to_owned();
    // The revision offered in an `initialize` handshake: the newest that has one. The
    // 2026-07-28 revision is asked for through `server/discover` instead.
    ClientConfig::new(capabilities, info).with_protocol_version(ProtocolVersion::V_2025_11_25)
}

// Sampling is deprecated by SEP-2577, but 2025-11-25 servers still ask for it, and a
// clear refusal beats rmcp's bare "method not found".
#[allow(deprecated)]
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        client_config(self.sampler.is_some())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(ctx) = self.router.context_of(&params.progress_token) {
            // Progress is a float in MCP; toolwire counts in whole steps.
            let whole = |v: f64| {
                if v.is_finite() && v > 0.0 {
                    v as u64
                } else {
                    0
                }
            };
            ctx.progress(
                whole(params.progress),
                params.total.map(whole),
                params.message.as_deref(),
            )
            .await;
        }
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(asks) = self.router.oldest_asker() else {
            // Nobody is there to answer: a question outside any call is declined.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let (reply, answer) = oneshot::channel();
        if asks.send(Ask { params, reply }).await.is_err() {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        // A call that ends (cancelled, timed out) before the person answers drops the
        // sender: the server is told the question was cancelled.
        Ok(answer
            .await
            .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel)))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sampler) = &self.sampler else {
            return Err(ErrorData::invalid_request(
                "toolwire does not serve sampling requests for this server: no model provider \
                 is configured for this session",
                None,
            ));
        };
        let params = serde_json::to_value(params)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let reply = sampler
            .sample(params)
            .await
            .map_err(|why| ErrorData::internal_error(format!("sampling failed: {why}"), None))?;
        serde_json::from_value(reply).map_err(|e| {
            ErrorData::internal_error(format!("sampling gave no valid result: {e}"), None)
        })
    }
}
