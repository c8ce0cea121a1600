//! The OpenAPI 3.1 document at `/api/openapi.json`, built from [`ROUTES`], the table the
//! router is checked against (a test calls every entry and fails on "no such route"),
//! with request schemas derived from the handlers' own types by schemars.

use axum::Json;
use schemars::{JsonSchema, schema_for};
use serde_json::{Map, Value as Json_, json};

use crate::api::{CreateSession, PostCall, PostMessage, SessionList, SessionWithMessages};

/// One documented route.
#[derive(Debug, Clone, Copy)]
pub struct RouteDoc {
    /// The HTTP method, e.g. `GET`.
    pub method: &'static str,
    /// axum's syntax: `{id}` is a path parameter.
    pub path: &'static str,
    /// One line on what the route does.
    pub summary: &'static str,
    /// The request body's schema, for routes that take one.
    pub body: Option<fn() -> Json_>,
    /// The schema of a 200 answer's JSON body, where it is written down.
    pub reply: Option<fn() -> Json_>,
    /// The statuses it answers with, besides the ones of every route ([`EVERY_ROUTE`]).
    pub statuses: &'static [u16],
    /// Query parameters: (name, JSON Schema as text, required, description).
    pub query: &'static [(&'static str, &'static str, bool, &'static str)],
}

fn schema<T: JsonSchema>() -> Json_ {
    serde_json::to_value(schema_for!(T)).unwrap_or(Json_::Null)
}

fn resolution_schema() -> Json_ {
    json!({
        "oneOf": [
            {"type": "object", "required": ["type"], "properties": {"type": {"const": "approve"}}},
            {"type": "object", "required": ["type"], "properties": {"type": {"const": "deny"}, "reason": {"type": "string"}}},
            {"type": "object", "required": ["type", "value"], "properties": {"type": {"const": "answer"}, "value": {}}},
            {"type": "object", "required": ["type"], "properties": {"type": {"const": "cancel"}, "reason": {"type": "string"}}},
        ]
    })
}

/// An event position: JSON numbers stay exact up to 2^53 - 1, in browsers too.
const POSITION: &str = r#"{"type": "integer", "minimum": 0, "maximum": 9007199254740991}"#;

/// A count of sessions skipped (stored as 32 bits).
const OFFSET: &str = r#"{"type": "integer", "minimum": 0, "maximum": 4294967295}"#;

/// Path ids follow toolwire's one id rule (`toolwire_core::check_id`).
fn path_schema(name: &str) -> Json_ {
    match name {
        "blob" => json!({"type": "string", "pattern": "^blake3:[0-9a-f]{64}$"}),
        // A server's name is what its config says: any text.
        "server" => json!({"type": "string", "minLength": 1, "maxLength": 200}),
        _ => json!({"type": "string", "pattern": toolwire_core::ID_PATTERN}),
    }
}

/// Every route the server has.
pub const ROUTES: &[RouteDoc] = &[
    RouteDoc {
        method: "get",
        path: "/api/sessions",
        summary: "Sessions, most recently updated first.",
        body: None,
        reply: Some(schema::<SessionList>),
        statuses: &[200, 400],
        query: &[
            ("offset", OFFSET, false, "sessions skipped"),
            (
                "limit",
                r#"{"type": "integer", "minimum": 1, "maximum": 200}"#,
                false,
                "sessions listed",
            ),
        ],
    },
    RouteDoc {
        method: "post",
        path: "/api/sessions",
        summary: "Create a session.",
        body: Some(schema::<CreateSession>),
        reply: None,
        statuses: &[201, 400, 415, 422],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/sessions/{id}",
        summary: "A session and its messages (all, or a page of them).",
        body: None,
        reply: Some(schema::<SessionWithMessages>),
        statuses: &[200, 400, 404],
        query: &[
            (
                "after",
                r#"{"type": "integer", "minimum": 0, "maximum": 9223372036854775807}"#,
                false,
                "messages after this seq only",
            ),
            (
                "limit",
                r#"{"type": "integer", "minimum": 1, "maximum": 10000}"#,
                false,
                "messages at most (default: every one); `more` says whether others follow",
            ),
        ],
    },
    RouteDoc {
        method: "delete",
        path: "/api/sessions/{id}",
        summary: "Delete a session and its subagents' sessions (blobs are left to gc).",
        body: None,
        reply: None,
        statuses: &[204, 400, 404],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/sessions/{id}/messages",
        summary: "Post a user message: starts an agent turn (409 without a provider).",
        body: Some(schema::<PostMessage>),
        reply: None,
        statuses: &[202, 400, 404, 409, 415, 422],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/sessions/{id}/calls",
        summary: "Run one tool in the session.",
        body: Some(schema::<PostCall>),
        reply: None,
        statuses: &[202, 400, 404, 415, 422],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/sessions/{id}/calls/{call}/cancel",
        summary: "Stop a call that runs or waits for a person; it gets a cancelled result.",
        body: None,
        reply: None,
        statuses: &[202, 400, 404],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/sessions/{id}/suspensions",
        summary: "Calls waiting for a person (also after a restart).",
        body: None,
        reply: None,
        statuses: &[200, 400, 404],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/sessions/{id}/suspensions/{suspension}",
        summary: "Approve, deny, answer or cancel a waiting call.",
        body: Some(resolution_schema),
        reply: None,
        statuses: &[200, 202, 400, 404, 415, 422],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/sessions/{id}/events",
        summary: "Server-sent events with stored sequence numbers; resume with Last-Event-ID or after.",
        body: None,
        reply: None,
        statuses: &[200, 400, 404],
        query: &[("after", POSITION, false, "resume after this event number")],
    },
    RouteDoc {
        method: "get",
        path: "/api/sessions/{id}/export",
        summary: "The request body a provider would be sent for the session.",
        body: None,
        reply: None,
        statuses: &[200, 400, 404],
        query: &[
            (
                "provider",
                r#"{"type": "string", "enum": ["anthropic", "openai-chat", "openai-responses", "gemini"]}"#,
                true,
                "the provider format",
            ),
            (
                "model",
                r#"{"type": "string", "pattern": "\\S"}"#,
                false,
                "the model",
            ),
            (
                "max_chars",
                r#"{"type": "integer", "minimum": 1, "maximum": 9007199254740991}"#,
                false,
                "truncation budget per result",
            ),
            (
                "diagnostics",
                r#"{"type": "boolean"}"#,
                false,
                "answer {request, diagnostics}: the request and what encoding cut (by which budget), repaired or left out",
            ),
        ],
    },
    RouteDoc {
        method: "get",
        path: "/api/tools",
        summary: "The tools, with their schemas.",
        body: None,
        reply: None,
        statuses: &[200],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/servers",
        summary: "The MCP servers and their state (connecting, ready, failed, restarting, needs_login).",
        body: None,
        reply: None,
        statuses: &[200],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/servers/{server}/login",
        summary: "Begin logging in to an MCP server that needs authorization (OAuth): answers \
                  {\"url\"}, the page to open; its redirect lands on /oauth/callback here.",
        body: None,
        reply: None,
        statuses: &[200, 404, 409, 502],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/servers/{server}/logout",
        summary: "Forget an MCP server's OAuth tokens: answers {\"removed\": bool}.",
        body: None,
        reply: None,
        statuses: &[200, 404, 409, 500],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/resources/{blob}/content",
        summary: "A stored blob's bytes, with Range and an immutable ETag.",
        body: None,
        reply: None,
        statuses: &[200, 206, 304, 400, 404, 413, 416],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/ws",
        summary: "WebSocket of a session's events: send {\"sessionId\", \"after\"} first.",
        body: None,
        reply: None,
        statuses: &[101, 400, 426],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/agui",
        summary: "Runs the agent for an AG-UI client: a RunAgentInput in, an SSE stream of AG-UI 1.0 events out (the threadId is the session; resume entries answer the interrupts a run ended with).",
        body: Some(schema::<crate::agui::RunAgentInput>),
        reply: None,
        statuses: &[200, 400, 404, 409, 415, 422],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/agui/follow",
        summary: "A proxy to the AG-UI agent given by --agui-follow: the RunAgentInput goes to it as it came, its SSE stream of AG-UI events comes back as it came, and the run is recorded in the session of its threadId (409 when the server follows no agent; 502 when the agent fails to answer).",
        body: Some(schema::<crate::agui::RunAgentInput>),
        reply: None,
        statuses: &[200, 400, 409, 415, 422, 502],
        query: &[],
    },
    RouteDoc {
        method: "post",
        path: "/api/tools/{name}/resource",
        summary: "resources/read on the tool's source (its MCP server), for an MCP App's view.",
        body: Some(schema::<crate::api::ReadResource>),
        reply: None,
        statuses: &[200, 400, 404, 415, 422, 502],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/info",
        summary: "The server's version, and the provider and model agent turns use, if any.",
        body: None,
        reply: None,
        statuses: &[200],
        query: &[],
    },
    RouteDoc {
        method: "get",
        path: "/api/openapi.json",
        summary: "This document.",
        body: None,
        reply: None,
        statuses: &[200],
        query: &[],
    },
];

/// What any route may answer: the guards' 401 and 403, the timeout's 408, the body
/// limit's 413, and 503 past the connection cap (the event feeds also past their own cap).
pub const EVERY_ROUTE: &[u16] = &[401, 403, 408, 413, 503];

fn reason(status: u16) -> &'static str {
    match status {
        101 => "Switching to a WebSocket",
        200 => "OK",
        201 => "Created",
        202 => "Accepted: follow the session's events",
        204 => "Deleted",
        206 => "Part of the resource",
        304 => "Not modified",
        400 => "Bad request",
        404 => "Not found",
        409 => "Conflict",
        413 => "Too large",
        415 => "Not JSON",
        416 => "Range not satisfiable",
        422 => "Invalid JSON body",
        426 => "Upgrade required",
        500 => "Internal error",
        502 => "The tool's source failed to answer",
        503 => "Busy: too many open connections or event feeds; retry after Retry-After seconds",
        _ => "See the error",
    }
}

/// The document.
pub fn document() -> Json_ {
    let error = json!({
        "type": "object",
        "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}
    });
    let mut paths = Map::new();
    for route in ROUTES {
        let mut op = Map::new();
        op.insert("summary".into(), json!(route.summary));
        let mut params: Vec<Json_> = route
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": path_schema(name)}))
            .collect();
        params.extend(route.query.iter().map(|(name, schema, required, about)| {
            let schema: Json_ = serde_json::from_str(schema).unwrap_or(json!({}));
            json!({"name": name, "in": "query", "required": required, "description": about, "schema": schema})
        }));
        if !params.is_empty() {
            op.insert("parameters".into(), Json_::Array(params));
        }
        if let Some(body) = route.body {
            op.insert(
                "requestBody".into(),
                json!({"required": true, "content": {"application/json": {"schema": body()}}}),
            );
        }
        let mut responses = Map::new();
        for status in route.statuses.iter().chain(EVERY_ROUTE) {
            let mut response = json!({"description": reason(*status)});
            if let (200, Some(reply)) = (*status, route.reply) {
                response["content"] = json!({"application/json": {"schema": reply()}});
            }
            if *status >= 400 {
                response["content"] = json!({"application/json": {"schema": error.clone()}});
            }
            if *status == 503 {
                response["headers"] = json!({"Retry-After": {
                    "description": "seconds to wait before trying again",
                    "schema": {"type": "integer", "minimum": 0}}});
            }
            responses.insert(status.to_string(), response);
        }
        op.insert("responses".into(), Json_::Object(responses));
        let entry = paths
            .entry(route.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[route.method] = Json_::Object(op);
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "toolwire", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Sessions, tool calls and their results, live events."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{}, {"bearer": []}],
        "paths": paths,
    })
}

pub(crate) async fn serve_document() -> Json<Json_> {
    Json(document())
}
