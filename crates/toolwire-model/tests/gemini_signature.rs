//! Gemini 3 answers 400 unless each functionCall comes back with its `thoughtSignature`:
//! it is decoded from the reply and sent back beside the call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use toolwire_core::Message;
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_model::{Conversation, EncodeOptions, NoBlobs, Provider, encode_request};

#[tokio::test]
async fn thought_signatures_go_back_with_their_calls() {
    let reply = Provider::Gemini.format().decode_response(&json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "a"}}, "thoughtSignature": "sig-AAA"},
        {"functionCall": {"id": "c2", "name": "list_dir", "args": {}}}
    ]}, "finishReason": "STOP"}]}))
    .unwrap();
    assert_eq!(reply.tool_calls[0].signature.as_deref(), Some("sig-AAA"));
    assert_eq!(reply.tool_calls[1].signature, None);

    let mut conv = Conversation::default();
    conv.push(Message::user("read a"));
    conv.push(Message::assistant(String::new(), reply.tool_calls.clone()));
    for c in &reply.tool_calls {
        conv.push(Message::tool(ToolResult::success(
            CallRef::new(&c.id, &c.name),
            Value::text("ok"),
        )));
    }
    let (body, _) = encode_request(
        Provider::Gemini,
        &conv,
        &EncodeOptions::for_model("gemini-3-pro"),
        &NoBlobs,
    )
    .await
    .unwrap();
    let parts = &body["contents"][1]["parts"];
    assert_eq!(
        parts[0],
        json!({"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "a"}}, "thoughtSignature": "sig-AAA"})
    );
    assert_eq!(
        parts[1],
        json!({"functionCall": {"id": "c2", "name": "list_dir", "args": {}}})
    );
}

/// Gemini may omit call ids. The ids toolwire gives such calls are unique in every reply,
/// whole or streamed, not numbered per reply: `gemini_call_0` in every reply of every
/// session let one session's `read_result` marker read another's result.
#[test]
fn id_less_calls_get_unique_ids() {
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
        {"functionCall": {"name": "read_file", "args": {"path": "b"}}}
    ]}, "finishReason": "STOP"}]});
    let format = Provider::Gemini.format();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let reply = format.decode_response(&body).unwrap();
        ids.extend(reply.tool_calls.into_iter().map(|c| c.id));
    }
    let mut streamed = format.stream_decoder();
    streamed.push(&body).unwrap();
    ids.extend(streamed.finish().tool_calls.into_iter().map(|c| c.id));
    assert_eq!(ids.len(), 6);
    for id in &ids {
        assert!(id.starts_with("gemini_call_"), "{id}");
        assert_eq!(toolwire_core::check_id(id), None, "{id} is not a valid id");
    }
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}
