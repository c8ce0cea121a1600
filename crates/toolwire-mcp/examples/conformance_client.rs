//! The client the official MCP conformance suite drives (tests/mcp-conformance/run):
//! `conformance_client <server-url>`, the scenario named in `MCP_CONFORMANCE_SCENARIO`.
//! It connects through toolwire's bridge over streamable HTTP, lists the tools, and calls
//! each with arguments made from its input schema; a server's question is answered with
//! an empty form, so the form's defaults apply, as a person pressing Enter would get.
//! A server that needs a login gets one as `toolwire mcp login` does it (loopback
//! redirect), with an HTTP client in the browser's place; the client identity comes from
//! the scenario's `MCP_CONFORMANCE_CONTEXT` as a user's `"oauth"` config would give it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value as Json};
use toolwire_core::Status;
use toolwire_core::{Resolution, ToolCall};
use toolwire_mcp::{Limits, McpServer, ServerConfig, Transport};
use toolwire_oauth::{LoopbackRedirect, OAuthSettings};
use toolwire_runtime::Scope;

/// A value of the property's type, for the tool's arguments.
fn sample(prop: &Json) -> Json {
    if let Some(default) = prop.get("default") {
        return default.clone();
    }
    if let Some(first) = prop
        .get("enum")
        .and_then(Json::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match prop.get("type").and_then(Json::as_str) {
        Some("number" | "integer") => Json::from(1),
        Some("boolean") => Json::Bool(true),
        Some("array") => Json::Array(Vec::new()),
        Some("object") => Json::Object(Map::new()),
        _ => Json::String("toolwire".to_owned()),
    }
}

fn arguments(schema: &Json) -> Json {
    let props = schema.get("properties").and_then(Json::as_object);
    Json::Object(
        props
            .into_iter()
            .flatten()
            .map(|(k, p)| (k.clone(), sample(p)))
            .collect(),
    )
}

/// The calls to make, by toolwire's tool names: the ones the scenario's context lists
/// (exact arguments), the schema echo the 2020-12 preservation scenario asks for (the
/// focal tool's schema as toolwire holds it, so a keyword toolwire dropped shows), or
/// every tool with arguments made from its schema.
fn planned_calls(scenario: &str, schemas: &[(String, Json)]) -> Vec<(String, Json)> {
    let named = |remote: &str| {
        schemas
            .iter()
            .find(|(name, _)| name.rsplit("__").next() == Some(remote))
    };
    let context: Json = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    if let Some(listed) = context.get("toolCalls").and_then(Json::as_array) {
        return listed
            .iter()
            .filter_map(|call| {
                let (name, _) = named(call.get("name")?.as_str()?)?;
                let args = call
                    .get("arguments")
                    .cloned()
                    .unwrap_or(Json::Object(Map::new()));
                Some((name.clone(), args))
            })
            .collect();
    }
    if scenario == "json-schema-2020-12-preservation"
        && let (Some((_, focal)), Some((echo, _))) =
            (named("json_schema_2020_12_tool"), named("json_schema_echo"))
    {
        return vec![(echo.clone(), serde_json::json!({"schema": focal}))];
    }
    schemas
        .iter()
        .map(|(name, schema)| (name.clone(), arguments(schema)))
        .collect()
}

/// The Client ID Metadata Document URL the suite's CIMD scenarios expect a client to use.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Logins one run may make: the first, and the step-ups the suite's retry limit allows.
const MAX_LOGINS: u32 = 3;

/// The `"oauth"` settings a user would write for this scenario's authorization server.
fn oauth_settings(scenario: &str, keys: &std::path::Path) -> OAuthSettings {
    let context: Json = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let text = |k: &str| context.get(k).and_then(Json::as_str).map(str::to_owned);
    let mut settings = OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CIMD_URL.to_owned()),
        signing_algorithm: text("signing_algorithm"),
        ..OAuthSettings::default()
    };
    if let Some(pem) = text("private_key_pem") {
        let file = keys.join("client-key.pem");
        std::fs::write(&file, pem).unwrap();
        settings.private_key_file = Some(file);
        settings.client_credentials = true;
    }
    settings.client_credentials |= scenario.starts_with("auth/client-credentials");
    // Workload identity federation: the platform's JWT for this workload.
    if let Some(jwt) = text("valid_jwt") {
        let file = keys.join("workload.jwt");
        std::fs::write(&file, jwt).unwrap();
        settings.assertion_file = Some(file);
    }
    // Cross-app access: the enterprise identity provider, and the person's ID token from it.
    if let (Some(issuer), Some(token_endpoint), Some(client_id), Some(id_token)) = (
        text("idp_issuer"),
        text("idp_token_endpoint"),
        text("idp_client_id"),
        text("idp_id_token"),
    ) {
        let file = keys.join("id-token");
        std::fs::write(&file, id_token).unwrap();
        settings.idp = Some(toolwire_oauth::IdpSettings {
            issuer,
            token_endpoint,
            client_id,
            client_secret: None,
            id_token_file: file,
        });
    }
    settings
}

/// Logs in as a person would, the browser replaced by an HTTP client that follows the
/// authorization server's redirects (the suite's server approves at once).
async fn login(server: &McpServer) {
    let redirect = LoopbackRedirect::bind().await.unwrap();
    let pending = server
        .begin_login(redirect.uri())
        .await
        .unwrap_or_else(|e| {
            eprintln!("login failed: {e}");
            std::process::exit(1)
        });
    let url = pending.url().to_owned();
    let browser = tokio::spawn(async move {
        if let Err(e) = reqwest::get(&url).await {
            eprintln!("the browser's request failed: {e}");
        }
    });
    let finished = redirect
        .complete(server, pending, Duration::from_secs(10))
        .await;
    let _ = browser.await;
    if let Err(e) = finished {
        eprintln!("login failed: {e}");
        std::process::exit(1);
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .expect("usage: conformance_client <server-url>");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} against {url}");
    let tokens = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new(
        "conformance",
        Transport::Http {
            url,
            headers: Default::default(),
        },
    );
    // The suite's scenarios call tools with nobody there to approve them.
    config.approval.server = Some(toolwire_tool::ApprovalPolicy::Never);
    config.oauth = oauth_settings(&scenario, tokens.path());
    let limits = Limits {
        connect_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let server = McpServer::new(config, limits).with_token_dir(tokens.path());
    let mut logins = 0;
    let connected = loop {
        let connected = toolwire_mcp::connect_servers(vec![Arc::clone(&server)]).await;
        match connected.failed.first() {
            None => break connected,
            Some(failed) if failed.needs_login && logins < MAX_LOGINS => {
                logins += 1;
                login(&server).await;
            }
            Some(failed) => {
                eprintln!("{failed}");
                std::process::exit(1);
            }
        }
    };
    let schemas: Vec<(String, Json)> = connected
        .tools
        .iter()
        .map(|t| toolwire_tool::Tool::schema(&**t))
        .map(|s| (s.name.clone(), s.input_schema.clone()))
        .collect();
    let calls = planned_calls(&scenario, &schemas);
    let (ex, _) = support::executor_of(connected);
    let scope = Scope::new("conformance");
    for (i, (name, args)) in calls.iter().enumerate() {
        let mut attempt = 0;
        let mut result = loop {
            let call = ToolCall::new(format!("c{i}-{attempt}"), name, args.clone());
            let result = ex.execute(&scope, call).await.into_result();
            // A call refused for want of scope: log in again (step-up), within the limit.
            if result.status == Status::Error && server.needs_login() && logins < MAX_LOGINS {
                logins += 1;
                attempt += 1;
                login(&server).await;
                continue;
            }
            break result;
        };
        while result.status == Status::Suspended {
            let id = result.suspension.as_ref().unwrap().id.clone();
            result = ex
                .resolve(&id, Resolution::Answer { value: Json::Null })
                .await
                .unwrap()
                .into_result();
            ex.settled(&id).await.unwrap();
        }
        println!("{name}: {}", serde_json::to_string(&result).unwrap());
    }
}
