//! Shared test helpers: arbitrary tool results and messages, deterministic media bytes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};
use toolwire_core::{
    CallRef, ErrorInfo, Metadata, Source, Suspension, SuspensionReason, ToolResult, Value, Widget,
};
use toolwire_core::{Message, ToolCall};

/// Bytes that depend on `seed` and differ from any other seed's.
pub(crate) fn media_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    let mut block = 0u64;
    while out.len() < len {
        let mut h = blake3::Hasher::new();
        h.update(&seed.to_le_bytes());
        h.update(&block.to_le_bytes());
        out.extend_from_slice(h.finalize().as_bytes());
        block += 1;
    }
    out.truncate(len);
    out
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

pub(crate) fn arb_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Json::from),
        ".{0,12}".prop_map(Json::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::btree_map("[a-zA-Z_]{1,6}", inner, 0..4)
                .prop_map(|m| Json::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        ".{0,40}".prop_map(Value::text),
        ".{0,40}".prop_map(Value::markdown),
        (any::<u64>(), 0usize..3000).prop_map(|(seed, len)| {
            Value::image(Source::base64(b64(&media_bytes(seed, len))), "image/png")
        }),
        (any::<u64>(), 0usize..600).prop_map(|(seed, len)| {
            Value::file(
                Source::base64(b64(&media_bytes(seed, len))),
                "audio/wav",
                Some("a.wav".into()),
            )
        }),
        (any::<u64>(), 1usize..5000).prop_map(|(seed, len)| {
            Value::file(
                Source::base64(b64(&media_bytes(seed, len))),
                "video/mp4",
                None,
            )
        }),
        (any::<u64>(), 0usize..2000).prop_map(|(seed, len)| {
            Value::file(
                Source::base64(b64(&media_bytes(seed, len))),
                "application/pdf",
                Some("d.pdf".into()),
            )
        }),
        arb_json().prop_map(Value::structured),
        (".{0,20}", ".{0,20}").prop_map(|(a, b)| Value::diff("src/x.rs", Some(a), b)),
        prop::collection::vec((".{0,8}", any::<i32>()), 0..5).prop_map(|rows| {
            Value::table(
                ["name", "n"],
                rows.into_iter()
                    .map(|(name, n)| json!({"name": name, "n": n})),
            )
            .summary("rows")
        }),
        (arb_json(), arb_json()).prop_map(|(data, meta)| {
            let mut v = Value::new("acme.custom_kind", data)
                .language("rust")
                .collapsed(true);
            if let Json::Object(m) = meta {
                v.meta = Some(m);
            }
            v
        }),
        Just(Value::image(
            Source::url("https://example.com/x.png"),
            "image/png"
        )),
    ]
}

fn arb_metadata() -> impl Strategy<Value = Metadata> {
    (
        prop::option::of(any::<u64>()),
        prop::collection::btree_map("x_[a-z]{1,6}", arb_json(), 0..3),
        prop::option::of(prop::collection::vec(arb_json(), 0..2)),
    )
        .prop_map(|(duration, extra, sources)| Metadata {
            sources,
            started_at: duration.map(|_| "2026-01-02T03:04:05Z".to_owned()),
            ended_at: duration.map(|_| "2026-01-02T03:04:06Z".to_owned()),
            duration_ms: duration,
            waited_ms: duration.map(|d| d / 2),
            raw_ref: None,
            extra: extra.into_iter().collect(),
        })
}

fn arb_widget() -> impl Strategy<Value = Widget> {
    ("[a-z-]{1,12}", arb_json(), ".{1,20}")
        .prop_map(|(w, data, fallback)| Widget::new(w, data, fallback))
}

pub(crate) fn arb_result() -> impl Strategy<Value = ToolResult> {
    let call =
        ("[A-Za-z0-9_-]{1,24}", "[a-z_]{1,12}").prop_map(|(id, name)| CallRef::new(id, name));
    let body = prop_oneof![
        prop::collection::vec(arb_value(), 1..4).prop_map(|out| (
            0u8,
            out,
            None::<(String, Option<String>, Option<Json>)>
        )),
        (
            ".{0,30}",
            prop::option::of("[a-z_]{1,10}"),
            prop::option::of(arb_json())
        )
            .prop_map(|(m, c, d)| (1u8, Vec::new(), Some((m, c, d)))),
        (".{1,30}", any::<bool>()).prop_map(|(p, input)| {
            (
                2u8,
                Vec::new(),
                Some((p, input.then(|| "input".to_owned()), None)),
            )
        }),
    ];
    (
        call,
        body,
        prop::collection::vec(arb_widget(), 0..3),
        arb_metadata(),
    )
        .prop_map(|(call, (status, output, extra), widgets, metadata)| {
            let mut r = match (status, extra) {
                (1, Some((message, code, details))) => {
                    let mut r = ToolResult::error(call, "x");
                    r.error = Some(ErrorInfo {
                        message,
                        code,
                        details,
                    });
                    r
                }
                (2, Some((prompt, input, _))) => ToolResult::suspended(
                    call,
                    Suspension {
                        id: "susp_1".into(),
                        reason: if input.is_some() {
                            SuspensionReason::Input
                        } else {
                            SuspensionReason::Approval
                        },
                        prompt,
                        input_schema: input.map(|_| json!({"type": "string"})),
                    },
                ),
                _ => ToolResult::success(call, output),
            };
            r.widgets = widgets;
            r.metadata = metadata;
            r
        })
}

pub(crate) fn arb_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        4 => arb_result().prop_map(Message::ToolResult),
        1 => ".{0,40}".prop_map(|text| Message::User { text }),
        1 => (".{0,40}", prop::collection::vec(("[a-z0-9_]{1,10}", "[a-z_]{1,8}", arb_json()), 0..3)).prop_map(
            |(text, calls)| Message::Assistant {
                text,
                tool_calls: calls.into_iter().map(|(id, name, input)| ToolCall::new(id, name, input)).collect(),
            }
        ),
        1 => (prop::option::of("[a-z0-9_]{1,10}"), arb_widget())
            .prop_map(|(call_id, widget)| Message::Widget { call_id, widget }),
    ]
}
pub(crate) mod backends;

/// A call waiting for approval in `session`.
pub(crate) fn pending(id: &str, session: &str) -> toolwire_core::PendingCall {
    toolwire_core::PendingCall {
        suspension: Suspension {
            id: id.to_owned(),
            reason: SuspensionReason::Approval,
            prompt: format!("Allow {id}?"),
            input_schema: None,
        },
        call: ToolCall::new(
            format!("call_{id}"),
            "delete_branch",
            json!({"branch": "old"}),
        ),
        session_id: session.to_owned(),
        trace_id: "t1".to_owned(),
        user_id: None,
        tool_state: None,
        suspended_at: None,
        waited_ms: 0,
        resolving: false,
    }
}
