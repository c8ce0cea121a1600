//! A call that needs a person, asked through the host: an approval or a tool's question
//! becomes an `elicitation/create` to the MCP client, which shows it to its user. A host
//! that cannot ask (no elicitation capability) gets a clear refusal instead of a call that
//! runs unasked.

use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value as Json, json};
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;

/// Asks the person at the host.
pub(crate) struct HostAsks {
    peer: Peer<RoleServer>,
}

impl HostAsks {
    pub(crate) fn new(peer: Peer<RoleServer>) -> Self {
        HostAsks { peer }
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

impl Approver for HostAsks {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        Box::pin(async move {
            if self.peer.supported_elicitation_modes().is_empty() {
                return Resolution::Deny {
                    reason: Some(format!(
                        "{} needs a person's approval, and this MCP host cannot ask (it \
                         does not support elicitation); allow it in toolwire's mcpServers \
                         config (\"approval\": \"never\") or run it from toolwire",
                        request.call.name
                    )),
                };
            }
            let form = if request.is_question() {
                question_form(request)
            } else {
                approval_form(request)
            };
            let params: ElicitRequestParams = match serde_json::from_value(form) {
                Ok(params) => params,
                Err(e) => {
                    return Resolution::Cancel {
                        reason: Some(format!("the question could not be asked: {e}")),
                    };
                }
            };
            let answer = match self.peer.create_elicitation(params).await {
                Ok(answer) => answer,
                Err(e) => {
                    return Resolution::Cancel {
                        reason: Some(format!("the host could not ask: {e}")),
                    };
                }
            };
            match (answer.action, request.is_question()) {
                (ElicitationAction::Accept, true) => Resolution::Answer {
                    value: answer.content.unwrap_or(Json::Null),
                },
                (ElicitationAction::Accept, false)
                    if answer
                        .content
                        .as_ref()
                        .and_then(|c| c.get("approve"))
                        .and_then(Json::as_bool)
                        == Some(true) =>
                {
                    Resolution::Approve
                }
                (ElicitationAction::Cancel, _) => Resolution::Cancel {
                    reason: Some("the person dismissed the question".to_owned()),
                },
                _ => Resolution::Deny {
                    reason: Some("the person said no".to_owned()),
                },
            }
        })
    }
}
