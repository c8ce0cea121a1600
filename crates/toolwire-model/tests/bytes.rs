//! The request body written straight to bytes (`encode_request_bytes`, what the bench
//! measures) is byte for byte what serde_json writes of `encode_request`'s JSON tree, the
//! body the golden files review: for every scenario and provider, with and without the
//! streaming flags, and with arguments that are not an object.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use toolwire_core::{Message, ToolCall};
use toolwire_model::{Conversation, NoBlobs, Provider, encode_request, encode_request_bytes};

#[tokio::test]
async fn bytes_match_the_tree_for_every_scenario() {
    let blobs = support::blobs();
    let mut streaming = support::options();
    streaming.stream = true;
    let mut checked = 0;
    for options in [support::options(), streaming] {
        for (name, conv) in support::scenarios() {
            for provider in Provider::ALL {
                let (tree, tree_notes) = encode_request(provider, &conv, &options, &blobs)
                    .await
                    .unwrap();
                let (bytes, notes) = encode_request_bytes(provider, &conv, &options, &blobs)
                    .await
                    .unwrap();
                assert_eq!(
                    String::from_utf8(bytes).unwrap(),
                    serde_json::to_string(&tree).unwrap(),
                    "{name} for {provider} (stream: {})",
                    options.stream
                );
                assert_eq!(notes, tree_notes, "{name} for {provider}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "only {checked} bodies compared");
}

/// Arguments stored as a JSON string (OpenAI's way), null or a bare value are turned into
/// an object in both paths alike; key order is kept.
#[tokio::test]
async fn odd_arguments_encode_alike() {
    let calls = vec![
        ToolCall::new("a", "t", json!({"z": 1, "a": [1.5, "x"]})),
        ToolCall::new("b", "t", json!("{\"q\": true}")),
        ToolCall::new("c", "t", json!(null)),
        ToolCall::new("d", "t", json!(42)),
        ToolCall::new("e", "t", json!("not json")),
    ];
    let conv = Conversation::new(vec![Message::user("go"), Message::assistant("", calls)]);
    let options = support::options();
    for provider in Provider::ALL {
        let (tree, _) = encode_request(provider, &conv, &options, &NoBlobs)
            .await
            .unwrap();
        let (bytes, _) = encode_request_bytes(provider, &conv, &options, &NoBlobs)
            .await
            .unwrap();
        assert_eq!(bytes, serde_json::to_vec(&tree).unwrap(), "{provider}");
    }
}
