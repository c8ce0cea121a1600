//! The client the official MCP conformance suite drives (tests/mcp-conformance/run):
//! `conformance_client <server-url>`, the scenario named in `MCP_CONFORMANCE_SCENARIO`.
//! It connects through toolwire's bridge over streamable HTTP, lists the tools, and calls
//! each with arguments made from its input schema; a server's question is answered with
//! an empty form, so the form's defaults apply, as a person pressing Enter would get.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use serde_json::{Map, Value as Json};
use toolwire_core::Status;
use toolwire_mcp::{Limits, ServerConfig, Transport};
use toolwire_runtime::{Resolution, Scope, ToolCall};

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

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .expect("usage: conformance_client <server-url>");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} against {url}");
    let mut config = ServerConfig::new(
        "conformance",
        Transport::Http {
            url,
            headers: Default::default(),
        },
    );
    // The suite's scenarios call tools with nobody there to approve them.
    config.approval.server = Some(toolwire_mcp::ApprovalPolicy::Never);
    let limits = Limits {
        connect_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let connected = toolwire_mcp::connect_all(vec![config], limits).await;
    if let Some(failed) = connected.failed.first() {
        eprintln!("{failed}");
        std::process::exit(1);
    }
    let schemas: Vec<(String, Json)> = connected
        .tools
        .iter()
        .map(|t| toolwire_runtime::Tool::schema(&**t))
        .map(|s| (s.name.clone(), s.input_schema.clone()))
        .collect();
    let (ex, _) = support::executor_of(connected);
    let scope = Scope::new("conformance");
    for (i, (name, schema)) in schemas.iter().enumerate() {
        let call = ToolCall::new(format!("c{i}"), name, arguments(schema));
        let mut result = ex.execute(&scope, call).await;
        while result.status == Status::Suspended {
            let id = result.suspension.as_ref().unwrap().id.clone();
            result = ex
                .resolve(&id, Resolution::Answer { value: Json::Null })
                .await
                .unwrap();
            ex.settled(&id).await.unwrap();
        }
        println!("{name}: {}", serde_json::to_string(&result).unwrap());
    }
}
