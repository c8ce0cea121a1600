//! The typed fast path of `normalize_bytes` gives exactly what the generic path gives, on
//! MCP results built to sit on both sides of its boundary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{Map, Value as Json, json};
use toolwire_core::CallRef;
use toolwire_normalize::{
    normalize_bytes, normalize_bytes_generic, normalize_payload_text, normalize_value,
    payload_call, takes_fast_path,
};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

fn field_value() -> impl Strategy<Value = Json> {
    prop_oneof![
        3 => any::<String>().prop_map(Json::String),
        1 => Just(Json::Null),
        1 => Just(json!(7)),
        1 => Just(json!({"audience": ["user"], "priority": 0.5})),
        1 => Just(json!({"audience": "everyone"})),
        1 => Just(json!({"k": [1, {"x": null}]})),
    ]
}

fn block() -> impl Strategy<Value = Json> {
    let kind = prop::sample::select(vec!["text", "image", "audio", "resource_link", "video"]);
    let data = prop::sample::select(vec![PNG, WAV, "not base64!", "QUJD", ""]);
    let mime = prop::option::of(prop::sample::select(vec![
        "image/png",
        "image/jpeg",
        "audio/wav",
        "text/markdown",
        "text/plain",
        "text/csv",
    ]));
    let extras = prop::collection::vec(
        (
            prop::sample::select(vec![
                "annotations",
                "_meta",
                "mimeType",
                "text",
                "data",
                "title",
            ]),
            field_value(),
        ),
        0..2,
    );
    (
        kind,
        any::<String>(),
        data,
        mime,
        prop::option::of(field_value()),
        prop::option::of(field_value()),
        extras,
    )
        .prop_map(|(kind, text, data, mime, annotations, meta, extras)| {
            let mut b = Map::new();
            b.insert("type".into(), json!(kind));
            match kind {
                "text" => {
                    b.insert("text".into(), json!(text));
                }
                _ => {
                    b.insert("data".into(), json!(data));
                }
            }
            if let Some(m) = mime {
                b.insert("mimeType".into(), json!(m));
            }
            if let Some(a) = annotations {
                b.insert("annotations".into(), a);
            }
            if let Some(m) = meta {
                b.insert("_meta".into(), m);
            }
            // Occasionally a field the fast path must refuse (or a null it must keep).
            for (k, v) in extras {
                b.entry(k).or_insert(v);
            }
            Json::Object(b)
        })
}

fn result() -> impl Strategy<Value = Json> {
    let is_error = prop::option::of(prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(Json::Null),
        Just(json!("yes"))
    ]);
    (
        prop::collection::vec(block(), 0..5),
        is_error,
        prop::option::of(field_value()),
    )
        .prop_map(|(content, is_error, meta)| {
            let mut r = Map::new();
            r.insert("content".into(), Json::Array(content));
            if let Some(e) = is_error {
                r.insert("isError".into(), e);
            }
            if let Some(m) = meta {
                r.insert("_meta".into(), m);
            }
            Json::Object(r)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn fast_and_generic_paths_agree(raw in result()) {
        let bytes = serde_json::to_vec(&raw).unwrap();
        let call = CallRef::new("call_f", "tool");
        let fast = normalize_bytes(&bytes, &call);
        let generic = normalize_bytes_generic(&bytes, &call);
        prop_assert_eq!(&fast.result, &generic.result, "for {}", raw);
        prop_assert_eq!(&fast.diagnostics, &generic.diagnostics, "for {}", raw);
    }

    #[test]
    fn payload_text_is_the_parsed_payload_normalized(raw in result(), named in any::<bool>()) {
        let (tool, call_id) = if named { (Some("t".to_owned()), Some("c".to_owned())) } else { (None, None) };
        let text = serde_json::to_string(&raw).unwrap();
        let got = normalize_payload_text(&text, tool.clone(), call_id.clone()).unwrap();
        let want = normalize_value(raw.clone(), &payload_call(&raw, tool, call_id));
        prop_assert_eq!(&got.result, &want.result, "for {}", raw);
        prop_assert_eq!(&got.diagnostics, &want.diagnostics, "for {}", raw);
    }
}

#[test]
fn payload_text_keeps_the_payloads_own_call_and_refuses_what_is_not_json() {
    // A payload naming its own call is not an MCP result the fast path takes; its names
    // hold unless others are given, as for `normalize_value` of the parsed payload.
    let own = json!({"callId": "k", "toolName": "n", "content": [{"type": "text", "text": "x"}]});
    let text = own.to_string();
    let got = normalize_payload_text(&text, None, None).unwrap().result;
    assert_eq!((got.call_id.as_str(), got.tool_name.as_str()), ("k", "n"));
    let given = normalize_payload_text(&text, Some("t".into()), Some("c".into()))
        .unwrap()
        .result;
    assert_eq!(
        (given.call_id.as_str(), given.tool_name.as_str()),
        ("c", "t")
    );
    let plain = normalize_payload_text(r#"{"content": []}"#, None, None)
        .unwrap()
        .result;
    assert_eq!(
        (plain.call_id.as_str(), plain.tool_name.as_str()),
        ("call_1", "tool")
    );
    assert!(normalize_payload_text("{not json", None, None).is_none());
}

#[test]
fn real_fixtures_take_the_expected_path() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/mcp");
    let mut fast = 0;
    for name in [
        "echo.json",
        "get-tiny-image.json",
        "get-annotated-message-error.json",
        "get-sum.json",
    ] {
        let bytes = std::fs::read(fixtures.join(name)).unwrap();
        assert!(takes_fast_path(&bytes), "{name} should take the fast path");
        let call = CallRef::new("c", "t");
        assert_eq!(
            normalize_bytes(&bytes, &call),
            normalize_bytes_generic(&bytes, &call)
        );
        fast += 1;
    }
    for name in [
        "get-structured-content.json",
        "get-resource-links.json",
        "get-resource-reference-blob.json",
    ] {
        let bytes = std::fs::read(fixtures.join(name)).unwrap();
        assert!(!takes_fast_path(&bytes), "{name} needs the generic path");
    }
    assert_eq!(fast, 4);
}

#[test]
fn generated_cases_cover_both_paths() {
    // A fixed sample of the generator: both outcomes must be common enough to matter.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut fast, mut total) = (0, 0);
    for _ in 0..500 {
        let raw = result().new_tree(&mut runner).unwrap().current();
        total += 1;
        if takes_fast_path(&serde_json::to_vec(&raw).unwrap()) {
            fast += 1;
        }
    }
    assert!(
        fast * 10 > total && fast * 10 < total * 9,
        "fast path on {fast} of {total}"
    );
}
