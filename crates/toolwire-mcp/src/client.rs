//! toolwire's side of an MCP connection: what it declares, and where the server's
//! progress notifications and requests for input go (the call they belong to).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, Implementation,
    ListRootsResult, ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use toolwire_tool::ToolContext;

/// The MIME type of an MCP App's HTML (extension `io.modelcontextprotocol/ui`).
pub(crate) const MCP_APP_MIME: &str = "text/html;profile=mcp-app";

/// A server's request for a person's input, on its way to the call it belongs to. It goes
/// boxed ([`Asks`]): every call makes the channel, few ever use it, and tokio's channel
/// allocates room for 32 of its messages at once (~8 KB a call with `Ask` inline).
#[derive(Debug)]
pub(crate) struct Ask {
    pub params: ElicitRequestParams,
    pub reply: oneshot::Sender<ElicitResult>,
}

/// Where a call's questions go.
pub(crate) type Asks = mpsc::Sender<Box<Ask>>;

/// The calls in flight on one connection, by progress token, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Router {
    calls: Mutex<Vec<InFlight>>,
    /// Numbers the calls registered (before their request, and its progress token,
    /// exists).
    next_key: std::sync::atomic::AtomicU64,
}

#[derive(Debug)]
struct InFlight {
    /// The registration's own number, unique on the connection.
    key: u64,
    /// The progress token its request went out with (serialized), once it did.
    token: Option<String>,
    ctx: ToolContext,
    asks: Asks,
}

/// Removes its call from the router when dropped, however the call ends.
#[derive(Debug)]
pub(crate) struct Registration {
    router: Arc<Router>,
    key: u64,
}

impl Registration {
    /// The call's request went out with `token`: its progress is routed by it.
    pub(crate) fn bind(&mut self, token: &ProgressToken) {
        let token = token_key(token);
        self.router
            .update(self.key, |call| call.token = Some(token));
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.router.calls.lock() {
            calls.retain(|c| c.key != self.key);
        }
    }
}

fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl Router {
    /// Routes the server's questions to `asks` from now on (a question may come before
    /// the call's request has even returned from rmcp: over HTTP the server's answer
    /// stream runs on another worker), and progress to `ctx` once [`Registration::bind`]
    /// names the request's progress token; until the registration is dropped.
    pub(crate) fn register(self: &Arc<Self>, ctx: ToolContext, asks: Asks) -> Registration {
        use std::sync::atomic::Ordering;
        // A number, not a string: no call's key is made (or freed) as text.
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(InFlight {
                key,
                token: None,
                ctx,
                asks,
            });
        }
        Registration {
            router: Arc::clone(self),
            key,
        }
    }

    /// Moves a parked call's routing to a new context (the one it is resumed with).
    pub(crate) fn rebind(&self, registration: &Registration, ctx: ToolContext) {
        self.update(registration.key, |call| call.ctx = ctx);
    }

    /// Changes the call in flight registered as `key`, if it still is.
    fn update(&self, key: u64, change: impl FnOnce(&mut InFlight)) {
        if let Ok(mut calls) = self.calls.lock()
            && let Some(call) = calls.iter_mut().find(|c| c.key == key)
        {
            change(call);
        }
    }

    fn context_of(&self, token: &ProgressToken) -> Option<ToolContext> {
        let key = token_key(token);
        let calls = self.calls.lock().ok()?;
        calls
            .iter()
            .find(|c| c.token.as_deref() == Some(key.as_str()))
            .map(|c| c.ctx.clone())
    }

    /// Over stdio a server's request does not say which call it is for: it goes to the
    /// oldest call in flight, which is exact whenever one call runs at a time.
    fn oldest_asker(&self) -> Option<Asks> {
        let calls = self.calls.lock().ok()?;
        calls.first().map(|c| c.asks.clone())
    }

    /// Puts a question to the person behind the call in flight and waits for the answer.
    async fn ask(&self, params: ElicitRequestParams) -> Result<ElicitResult, Unasked> {
        let asks = self.oldest_asker().ok_or(Unasked::Nobody)?;
        let (reply, answer) = oneshot::channel();
        asks.send(Box::new(Ask { params, reply }))
            .await
            .map_err(|_| Unasked::Ended)?;
        // A call that ends (cancelled, timed out) before the person answers drops the
        // sender.
        answer.await.map_err(|_| Unasked::Ended)
    }
}

/// Why a question got no answer from a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unasked {
    /// No call of this server is in flight: nobody is there to ask.
    Nobody,
    /// The call ended before the person answered.
    Ended,
}

/// Answers a server's `sampling/createMessage`: the request's params in, its result out,
/// as MCP JSON. A host sets one when the session has a model provider.
pub trait Sampler: Send + Sync {
    /// Answers one `sampling/createMessage` request: its params in, its MCP result out.
    fn sample(
        &self,
        params: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, SampleError>>;
}

/// Why a sampler gave no answer, as the server is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// The request is wrong (JSON-RPC invalid params): sent again as is, it fails again.
    #[error("{0}")]
    InvalidRequest(String),
    /// The model or the way to it failed (JSON-RPC internal error).
    #[error("{0}")]
    Failed(String),
}

/// The client handler of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub router: Arc<Router>,
    pub sampler: Option<Arc<dyn Sampler>>,
    /// What `roots/list` answers (the workspace, the server's own, or a host's).
    pub roots: crate::roots::Roots,
    /// Where the server's log messages and resource notices go (a gateway's hosts), with
    /// the server's prefix; `None` drops them.
    pub notices: Option<(String, crate::OnNotice)>,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("sampling", &self.sampler.is_some())
            .finish_non_exhaustive()
    }
}

impl Handler {
    pub(crate) fn new(sampler: Option<Arc<dyn Sampler>>, roots: crate::roots::Roots) -> Self {
        Handler {
            router: Arc::new(Router::default()),
            sampler,
            roots,
            notices: None,
        }
    }

    fn notice(&self, notice: crate::Notice) {
        if let Some((prefix, on)) = &self.notices {
            on(prefix, notice);
        }
    }
}

/// The provider's stop reason in MCP's words (`endTurn`, `maxTokens`, `stopSequence`,
/// `toolUse`); one MCP has no word for is passed on as it came.
pub fn mcp_stop_reason(provider: &str) -> String {
    match provider {
        "end_turn" | "stop" | "STOP" | "completed" | "endTurn" => "endTurn",
        "max_tokens" | "length" | "MAX_TOKENS" | "max_output_tokens" | "maxTokens" => "maxTokens",
        "stop_sequence" | "stopSequence" => "stopSequence",
        "tool_use" | "tool_calls" | "function_call" | "toolUse" => "toolUse",
        other => other,
    }
    .to_owned()
}

/// What toolwire declares: form and URL elicitation, MCP Apps, tasks (polled), roots
/// when it has some to give (`roots`: whether they may change), and sampling when a
/// provider can serve it.
pub(crate) fn client_config(sampling: bool, roots: Option<bool>) -> ClientConfig {
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
    if let Some(list_changed) = roots {
        declared["roots"] = json!({"listChanged": list_changed});
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
        client_config(self.sampler.is_some(), self.roots.declared())
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.list()))
    }

    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(params) = serde_json::to_value(params) {
            self.notice(crate::Notice::Log(params));
        }
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notice(crate::Notice::ResourceUpdated(params.uri.to_string()));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(crate::Notice::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notice(crate::Notice::PromptsChanged);
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
        Ok(match self.router.ask(params).await {
            Ok(answer) => answer,
            // Nobody is there to answer: a question outside any call is declined.
            Err(Unasked::Nobody) => ElicitResult::new(ElicitationAction::Decline),
            // The call ended first: the server is told the question was cancelled.
            Err(Unasked::Ended) => ElicitResult::new(ElicitationAction::Cancel),
        })
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
        let mut params = serde_json::to_value(params)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        // A person approves, edits or refuses what a server sends to their model.
        self.approve_sampling(&mut params).await?;
        let mut reply = sampler.sample(params).await.map_err(|e| match e {
            SampleError::InvalidRequest(why) => ErrorData::invalid_params(why, None),
            SampleError::Failed(why) => {
                ErrorData::internal_error(format!("sampling failed: {why}"), None)
            }
        })?;
        if let Some(reason) = reply.get("stopReason").and_then(|r| r.as_str()) {
            reply["stopReason"] = json!(mcp_stop_reason(reason));
        }
        serde_json::from_value(reply).map_err(|e| {
            ErrorData::internal_error(format!("sampling gave no valid result: {e}"), None)
        })
    }
}

impl Handler {
    /// Asks the person behind the call in flight whether the server may sample their
    /// model with `params`, as a form whose one field is the last message (edit it to
    /// change what is sent). Nobody there, or a refusal, is an error for the server.
    async fn approve_sampling(&self, params: &mut serde_json::Value) -> Result<(), ErrorData> {
        let refused = |why: &str| ErrorData::invalid_request(why.to_owned(), None);
        let messages = params["messages"].as_array().cloned().unwrap_or_default();
        let last = messages
            .iter()
            .rposition(|m| m["role"] == "user")
            .ok_or_else(|| refused("the sampling request has no user message"))?;
        let text = sampled_text(&messages[last]["content"]);
        let question = json!({
            "message": format!(
                "The server asks to send {} message(s) to your model (at most {} tokens). \
                 Accept to send them, after editing the last one if you like; decline to \
                 refuse.",
                messages.len(),
                params["maxTokens"].as_u64().unwrap_or_default()
            ),
            "requestedSchema": {
                "type": "object",
                "properties": {"prompt": {
                    "type": "string",
                    "title": "Last message to the model",
                    "default": text,
                }},
                "required": ["prompt"],
            },
        });
        let params_of_ask: ElicitRequestParams = serde_json::from_value(question)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let answer = self.router.ask(params_of_ask).await.map_err(|why| {
            refused(match why {
                Unasked::Nobody => {
                    "toolwire asks a person before sampling, and no call of this server is \
                     in flight for one to answer"
                }
                Unasked::Ended => "the call ended before the person answered",
            })
        })?;
        let answer = serde_json::to_value(answer).unwrap_or_default();
        if answer["action"] != "accept" {
            return Err(refused(
                "the user refused to send this request to their model",
            ));
        }
        if let Some(edited) = answer["content"]["prompt"].as_str()
            && edited != text
        {
            params["messages"][last]["content"] = json!({"type": "text", "text": edited});
        }
        Ok(())
    }
}

/// The text of a sampling message's content (one block or several).
fn sampled_text(content: &serde_json::Value) -> String {
    let blocks: Vec<&serde_json::Value> = match content {
        serde_json::Value::Array(list) => list.iter().collect(),
        one => vec![one],
    };
    blocks
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A question that comes while the call's request is still on its way out (over HTTP
    /// the server's stream runs on another worker) reaches that call; it was declined as
    /// nobody's when the call registered only once rmcp returned its handle.
    #[tokio::test]
    async fn a_question_before_the_request_returns_reaches_its_call() {
        let router = Arc::new(Router::default());
        let (asks_tx, mut asks) = mpsc::channel(4);
        let mut registration = router.register(ToolContext::detached("c1"), asks_tx);
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }))
        .unwrap();
        let asking = tokio::spawn({
            let router = Arc::clone(&router);
            async move { router.ask(params).await }
        });
        let ask = asks.recv().await.unwrap();
        assert!(
            matches!(&ask.params, ElicitRequestParams::FormElicitationParams { message, .. } if message == "Name?"),
            "{:?}",
            ask.params
        );
        ask.reply
            .send(ElicitResult::new(ElicitationAction::Accept))
            .unwrap();
        assert_eq!(
            asking.await.unwrap().unwrap().action,
            ElicitationAction::Accept
        );
        // Once sent, its progress token routes to it; dropped, nothing does.
        let token = ProgressToken(rmcp::model::NumberOrString::Number(7));
        assert!(router.context_of(&token).is_none());
        registration.bind(&token);
        assert_eq!(router.context_of(&token).unwrap().call_id, "c1".into());
        drop(registration);
        assert!(router.context_of(&token).is_none());
        assert!(router.oldest_asker().is_none());
    }
}
