//! Property tests: normalize never panics, always validates, is idempotent, and its
//! results survive a serde round trip, over arbitrary and adversarial payloads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};
use toolwire_core::{CallRef, ToolResult};
use toolwire_normalize::{dismantle, normalize, normalize_bytes, normalize_value};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Keys that steer detection (envelope, MCP, values, sources), mixed with random ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "kind", "data", "type", "text", "content", "status", "callId", "toolName", "output",
            "error", "metadata", "structuredContent", "isError", "mimeType", "uri", "resource",
            "blob", "source", "base64", "url", "widgets", "widget", "fallback", "app", "summary",
            "display", "annotations", "_meta", "path", "modified", "isNew", "columns", "rows",
            "entries", "name", "suspension", "message", "id", "prompt", "reason", "resources",
            "audience", "preferredView", "mediaKind", "size", "rawRef", "startedAt",
        ]).prop_map(str::to_owned),
        1 => "[a-zA-Z_]{1,8}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "text", "diff", "file_content", "file_list", "table", "image", "file", "resource_link",
            "structured", "git.status", "Bad Kind", "json", "success", "error", "suspended", "done",
            "resource_link", "audio", "image/png", "text/markdown", "ui://x/y", "user", "assistant",
            "tree", "hidden", "approval", "input", "not base64!", "",
        ]).prop_map(str::to_owned),
        1 => Just(PNG.to_owned()),
        1 => Just(format!("data:image/gif;base64,{PNG}")),
        1 => Just(format!("blake3:{}", "a".repeat(64))),
        2 => any::<String>(),
    ]
}

fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        text().prop_map(Json::String),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec((key(), inner), 0..7)
                .prop_map(|kv| Json::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn call() -> CallRef {
    CallRef::new("call_p", "prop_tool")
}

fn check(raw: &Json) -> Result<ToolResult, TestCaseError> {
    let n = normalize(raw, &call());
    let r = n.result;
    if let Err(v) = r.validate() {
        return Err(TestCaseError::fail(format!(
            "invalid result:\n{v}\nfrom {raw}"
        )));
    }
    // serde round trip: as values and as bytes.
    let text = serde_json::to_string(&r).unwrap();
    let back: ToolResult = serde_json::from_str(&text).unwrap();
    prop_assert_eq!(&back, &r);
    prop_assert_eq!(serde_json::to_string(&back).unwrap(), text);
    // Idempotence: normalizing the canonical form changes nothing.
    let again = normalize_value(serde_json::to_value(&r).unwrap(), &call());
    prop_assert_eq!(&again.result, &r, "not idempotent for {}", raw);
    prop_assert!(
        again.diagnostics.is_empty(),
        "second pass diagnosed: {:?}",
        again.diagnostics
    );
    Ok(r)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json(raw in json()) {
        check(&raw)?;
    }

    #[test]
    fn arbitrary_mcp_results(blocks in prop::collection::vec(json(), 0..5), sc in prop::option::of(json()), is_error in any::<bool>()) {
        let mut raw = json!({"content": blocks, "isError": is_error});
        if let Some(sc) = sc {
            raw["structuredContent"] = sc;
        }
        check(&raw)?;
    }

    #[test]
    fn arbitrary_envelopes(status in text(), output in json(), error in json(), metadata in json()) {
        check(&json!({"callId": "x", "toolName": "y", "status": status, "output": output, "error": error, "metadata": metadata}))?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let r = normalize_bytes(&bytes, &call()).result;
        prop_assert!(r.validate().is_ok());
    }

    #[test]
    fn arbitrary_text_is_kept_verbatim(s in any::<String>()) {
        let r = normalize_bytes(s.as_bytes(), &call()).result;
        prop_assert!(r.validate().is_ok());
        if serde_json::from_str::<Json>(&s).is_err() && !s.starts_with("data:") && s.len() < 64 {
            prop_assert_eq!(r.output[0].as_text().unwrap().content, s.as_str());
        }
    }
}

#[test]
fn deep_nesting_in_bytes_and_values() {
    let depth = 100_000;
    let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    // As bytes: serde_json refuses past 128 levels, so the payload is kept as text.
    let n = normalize_bytes(text.as_bytes(), &call());
    n.result.validate().unwrap();
    assert_eq!(
        n.result.output[0].as_text().unwrap().content.len(),
        2 * depth
    );

    // As an in-memory value: cut at MAX_DEPTH and kept as a JSON string.
    let build = || {
        // Built by hand: `json!` would serialize the interpolated value recursively.
        let mut deep = json!({"leaf": true});
        for i in 0..depth {
            deep = if i % 2 == 0 {
                Json::Array(vec![deep])
            } else {
                Json::Object(Map::from_iter([("k".to_owned(), deep)]))
            };
        }
        let mut wrapped = json!({"content": [{"type": "text", "text": "deep"}]});
        wrapped
            .as_object_mut()
            .unwrap()
            .insert("structuredContent".into(), deep);
        wrapped
    };
    let wrapped = build();
    let n = normalize(&wrapped, &call());
    n.result.validate().unwrap();
    assert!(
        n.diagnostics
            .iter()
            .any(|d| d.message.contains("nested deeper than"))
    );
    // The stored form reparses under serde_json's own limit.
    let text = serde_json::to_string(&n.result).unwrap();
    let back: ToolResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, n.result);
    // Owned input is cut in place and its remainder freed without recursion.
    let owned = normalize_value(build(), &call());
    assert_eq!(owned.result, n.result);
    dismantle(wrapped);
}

#[test]
fn invalid_base64_and_lone_surrogates() {
    for bad in ["====", "a=bc", "\u{0}\u{1}", "🦀🦀🦀🦀"] {
        let raw = json!({"content": [{"type": "image", "data": bad, "mimeType": "image/png"}]});
        let r = check(&raw).unwrap();
        assert_eq!(r.output[0].kind.as_str(), "structured", "{bad}");
    }
    // Valid base64 whose bytes are not the PNG they claim to be: binary, not an image.
    let raw = json!({"content": [{"type": "image", "data": "abc", "mimeType": "image/png"}]});
    let r = check(&raw).unwrap();
    assert_eq!(
        r.output[0].as_file().unwrap().mime_type,
        Some("application/octet-stream")
    );
    // Escaped lone surrogates are not valid JSON for serde_json: kept as text, no panic.
    for text in [r#""\ud800""#, r#"{"text": "\udc00x"}"#, r#"["\ud83d"]"#] {
        let r = normalize_bytes(text.as_bytes(), &call()).result;
        r.validate().unwrap();
        assert_eq!(r.output[0].as_text().unwrap().content, text);
    }
}
