//! Anthropic answers 400 to empty text blocks ("text content blocks must be non-empty"):
//! none is ever sent, in a user turn or inside a tool_result.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value as Json, json};
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_core::{Message, ToolCall};
use toolwire_model::{Conversation, EncodeOptions, NoBlobs, Provider, encode_request};

fn texts(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::Object(m) => {
            if m.get("type") == Some(&json!("text")) {
                out.push(
                    m.get("text")
                        .and_then(Json::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                );
            }
            m.values().for_each(|x| texts(x, out));
        }
        Json::Array(a) => a.iter().for_each(|x| texts(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn no_empty_text_block_is_sent() {
    let mut conv = Conversation::default();
    conv.push(Message::user(""));
    conv.push(Message::assistant(
        String::new(),
        vec![ToolCall::new("c1", "echo", json!({}))],
    ));
    conv.push(Message::tool(ToolResult::success(
        CallRef::new("c1", "echo"),
        Value::text(""),
    )));
    let (body, _) = encode_request(
        Provider::Anthropic,
        &conv,
        &EncodeOptions::for_model("m"),
        &NoBlobs,
    )
    .await
    .unwrap();
    let mut found = Vec::new();
    texts(&body["messages"], &mut found);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|t| !t.is_empty()),
        "empty text block in {body}"
    );
    assert_eq!(
        body["messages"][2]["content"][0]["content"][0]["text"],
        "(no output)"
    );
}
