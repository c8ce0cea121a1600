//! A call that needs a person, asked where the person can answer: an approval or a tool's
//! question goes
//! - to a 2025-11-25 host that supports elicitation as an `elicitation/create` request;
//! - to a 2026-07-28 host that supports elicitation as an `input_required` result of its
//!   `tools/call`, which the host answers by calling again with the answer (see
//!   [`crate::rounds`]);
//! - else to the web app of a `toolwire serve` on the same data directory, where the call
//!   is listed as pending (it is recorded in the shared store when it suspends) until the
//!   person answers there or the wait times out;
//! - else nowhere: a clear refusal, never a call that runs unasked.

use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ProtocolVersion};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Value as Json, json};
use tokio::sync::{mpsc, oneshot};
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;
use toolwire_store::SuspensionStore;

use crate::rounds::{Step, resolution_of};

/// Where a gateway may send the people its hosts cannot ask, and how long it waits.
#[derive(Debug, Clone)]
pub struct AskSettings {
    /// The data directory a `toolwire serve` announces itself in (`serve.url`), if any.
    pub data_dir: Option<PathBuf>,
    /// How long a call waits for a person's answer (through the host's retry or the
    /// web app) before it is refused.
    pub timeout: Duration,
    /// How long a 2026-07-28 call that returned `input_required` waits for the host to
    /// call again with the answer (never longer than `timeout`): a host that does not
    /// come back must not hold its room among the waiting calls for long.
    pub retry_wait: Duration,
    /// The host's own approval counts (`toolwire gateway --approvals host`, the
    /// default): toolwire asks only where the person's config says so. Only what a
    /// refusal tells the person to change depends on it.
    pub host_decides: bool,
}

impl Default for AskSettings {
    fn default() -> Self {
        AskSettings {
            data_dir: None,
            timeout: DEFAULT_ASK_TIMEOUT,
            retry_wait: DEFAULT_RETRY_WAIT,
            host_decides: true,
        }
    }
}

impl AskSettings {
    /// How long a 2026-07-28 call waits for its host's retry.
    pub(crate) fn rounds_timeout(&self) -> Duration {
        self.timeout.min(self.retry_wait)
    }
}

/// How long a call waits for a person by default.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a 2026-07-28 call waits for its host's retry by default.
pub const DEFAULT_RETRY_WAIT: Duration = Duration::from_secs(120);

/// The file in the data directory where a running `toolwire serve` writes its URL.
pub const SERVE_URL_FILE: &str = "serve.url";

/// How one call's questions reach the person.
pub(crate) enum Via {
    /// `elicitation/create` to the host.
    Elicit(Peer<RoleServer>),
    /// An `input_required` result, answered by the host's retry.
    Rounds(mpsc::Sender<Step>),
    /// The host cannot ask: the pending call in the shared store, answered in the web
    /// app of a `toolwire serve` if one runs when the call asks (looked for only then,
    /// so that calls needing nobody cost nothing more), else nobody.
    Elsewhere {
        settings: AskSettings,
        suspensions: std::sync::Arc<dyn SuspensionStore>,
    },
}

/// Whether `context`'s host can be asked by elicitation, and on which revision: `Some(true)`
/// for the `input_required` round trip (2026-07-28), `Some(false)` for
/// `elicitation/create`, `None` when it cannot be asked.
pub(crate) fn host_channel(context: &RequestContext<RoleServer>) -> Option<bool> {
    let rounds = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let can = if rounds {
        context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some())
    } else {
        !context.peer.supported_elicitation_modes().is_empty()
    };
    can.then_some(rounds)
}

/// The web app's URL, when a `toolwire serve` announced itself in `settings`' data
/// directory and answers there now.
pub(crate) async fn reachable_serve(settings: &AskSettings) -> Option<String> {
    let dir = settings.data_dir.as_ref()?;
    let text = tokio::fs::read_to_string(dir.join(SERVE_URL_FILE))
        .await
        .ok()?;
    let url = text.lines().next()?.trim().to_owned();
    // Only the host and port matter for "is it up": `http://HOST:PORT/`.
    let authority = url
        .strip_prefix("http://")?
        .split('/')
        .next()
        .filter(|a| !a.is_empty())?
        .to_owned();
    // A file left by a serve that died names a port nobody listens on (or, rarely,
    // someone else): either way the answer would not come, so connect first.
    let connect = tokio::net::TcpStream::connect(authority);
    match tokio::time::timeout(Duration::from_secs(1), connect).await {
        Ok(Ok(_)) => Some(url),
        _ => None,
    }
}

/// Asks the person for one call.
pub(crate) struct HostAsks {
    via: Via,
    timeout: Duration,
}

impl HostAsks {
    pub(crate) fn new(via: Via, timeout: Duration) -> Self {
        HostAsks { via, timeout }
    }
}

/// Input shown to the person, at most this long (the full input is in toolwire's history).
const MAX_SHOWN_INPUT: usize = 2_000;

/// The form of an approval: one yes/no field.
fn approval_form(request: &ApprovalRequest) -> Json {
    let mut input = serde_json::to_string_pretty(&request.call.input).unwrap_or_default();
    if input.len() > MAX_SHOWN_INPUT {
        let mut end = MAX_SHOWN_INPUT;
        while !input.is_char_boundary(end) {
            end -= 1;
        }
        input.truncate(end);
        input.push_str("\n…");
    }
    json!({
        "mode": "form",
        "message": format!(
            "toolwire asks before running {} (it may change things):\n{input}\n\n{}",
            request.call.name, request.suspension.prompt
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {"approve": {
                "type": "boolean",
                "title": "Run it",
                "description": "Yes runs the tool; no refuses it.",
            }},
            "required": ["approve"],
        },
    })
}

/// The form of a tool's question: its own schema, or one text field.
fn question_form(request: &ApprovalRequest) -> Json {
    let schema = request.suspension.input_schema.clone().unwrap_or_else(|| {
        json!({"type": "object", "properties": {"answer": {"type": "string", "title": "Answer"}}, "required": ["answer"]})
    });
    json!({
        "mode": "form",
        "message": format!("{} asks: {}", request.call.name, request.suspension.prompt),
        "requestedSchema": schema,
    })
}

/// The form `request` is asked with.
fn form_of(request: &ApprovalRequest) -> Json {
    if request.is_question() {
        question_form(request)
    } else {
        approval_form(request)
    }
}

impl HostAsks {
    async fn elicit(&self, peer: &Peer<RoleServer>, request: &ApprovalRequest) -> Resolution {
        let params: ElicitRequestParams = match serde_json::from_value(form_of(request)) {
            Ok(params) => params,
            Err(e) => {
                return Resolution::Cancel {
                    reason: Some(format!("the question could not be asked: {e}")),
                };
            }
        };
        match peer.create_elicitation(params).await {
            Ok(answer) => resolution_of(answer.action, answer.content, request.is_question()),
            Err(e) => Resolution::Cancel {
                reason: Some(format!("the host could not ask: {e}")),
            },
        }
    }

    /// Hands the form to the `tools/call` handler, which returns it to the host as
    /// `input_required`; the host's retry brings the answer back.
    async fn by_rounds(&self, steps: &mpsc::Sender<Step>, request: &ApprovalRequest) -> Resolution {
        let (answer, answered) = oneshot::channel();
        let ask = Step::Ask {
            form: form_of(request),
            question: request.is_question(),
            answer,
        };
        if steps.send(ask).await.is_err() {
            return Resolution::Cancel {
                reason: Some("the host's request ended before it could be asked".to_owned()),
            };
        }
        match tokio::time::timeout(self.timeout, answered).await {
            Ok(Ok(resolution)) => resolution,
            Ok(Err(_)) => Resolution::Cancel {
                reason: Some("the host stopped before it answered".to_owned()),
            },
            // The gateway's decision, not the person's: no answer came to decide on.
            Err(_) => Resolution::Refuse {
                reason: format!(
                    "the host did not call again with the person's answer within {} s, so \
                     the gateway stopped waiting for it",
                    self.timeout.as_secs()
                ),
            },
        }
    }

    /// Waits while the call is pending, unclaimed, in the shared store. Once the web app's
    /// answer claims it, the deny returned here is not used: the executor's own claim then
    /// fails and the call's result is the one `toolwire serve` stores (see
    /// `toolwire_agent`'s settle loop). If nobody answers in time, the deny stands.
    async fn by_web(
        &self,
        url: &str,
        suspensions: &dyn SuspensionStore,
        request: &ApprovalRequest,
    ) -> Resolution {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let id = &request.suspension.id;
        loop {
            let waiting = match suspensions.suspensions(&request.session_id).await {
                Ok(listed) => listed
                    .iter()
                    .any(|p| &p.suspension.id == id && !p.resolving),
                // A store that cannot be read now is asked again next tick.
                Err(_) => true,
            };
            if !waiting {
                return Resolution::Deny {
                    reason: Some("answered in toolwire's web app".to_owned()),
                };
            }
            // Nobody said no: the gateway stopped waiting, and says so in its own words.
            if tokio::time::Instant::now() >= deadline {
                return Resolution::Refuse {
                    reason: format!(
                        "{} needs a person's approval, and nobody answered in toolwire's \
                         web app ({url}) within {} s",
                        request.call.name,
                        self.timeout.as_secs()
                    ),
                };
            }
            tokio::time::sleep(WEB_POLL).await;
        }
    }
}

/// What makes toolwire ask before `tool` runs, and what to change so that it runs on
/// the host's approval alone: the person's config (`"approval": "always"`), the
/// gateway's `--approvals toolwire`, or a built-in tool's own rule.
fn how_to_allow(tool: &str, host_decides: bool) -> String {
    let Some((_, remote)) = tool.split_once(toolwire_mcp::SEPARATOR) else {
        return format!(
            "{tool} is one of toolwire's built-in tools (--builtins), which ask before they \
             change anything: run it from `toolwire chat` or `toolwire call --yes`, or \
             start `toolwire serve` to answer in its web app"
        );
    };
    let rules = format!(
        "\"approval\" in its server's mcpServers entry, or \"tools\": {{\"{remote}\": \
         {{\"approval\": ...}}}}"
    );
    if host_decides {
        format!(
            "toolwire asks because your config says \"always\" for it ({rules}): set it to \
             \"never\" there to let the host's own approval decide"
        )
    } else {
        format!(
            "The gateway was started with --approvals toolwire, which asks for every tool \
             not marked read-only: start it without that flag to let the host's own \
             approval decide, or set {rules} to \"never\""
        )
    }
}

/// How often a call waiting for the web app looks whether it was answered.
const WEB_POLL: Duration = Duration::from_millis(250);

impl Approver for HostAsks {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        Box::pin(async move {
            match &self.via {
                Via::Elicit(peer) => self.elicit(peer, request).await,
                Via::Rounds(steps) => self.by_rounds(steps, request).await,
                Via::Elsewhere {
                    settings,
                    suspensions,
                } => {
                    if let Some(url) = reachable_serve(settings).await {
                        return self.by_web(&url, suspensions.as_ref(), request).await;
                    }
                    // Nobody could be asked, so nobody said no: the gateway's refusal.
                    Resolution::Refuse {
                        reason: format!(
                            "{} needs a person's approval, and nobody can be asked: this \
                             MCP host cannot ask (it does not support elicitation), and no \
                             `toolwire serve` runs on toolwire's data directory to ask in \
                             its web app. {}",
                            request.call.name,
                            how_to_allow(&request.call.name, settings.host_decides)
                        ),
                    }
                }
            }
        })
    }
}
