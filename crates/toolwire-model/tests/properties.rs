//! Property tests: cuts never exceed their budget (marker included), never split a
//! character, change nothing under budget; every call gets exactly one result, in call
//! order, in every provider's encoding.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Value as Json, json};
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_core::{Message, ToolCall};
use toolwire_model::{
    Conversation, EncodeOptions, NoBlobs, Provider, Turn, build_view, encode_request,
};
use toolwire_model::{CutContext, Weight, cut_diff, cut_json, cut_lines, cut_text};

const CTX: CutContext<'static> = CutContext {
    call_id: "call_7",
    part: 0,
};

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Text of up to `max` pieces mixing ASCII, newlines and 2-, 3- and 4-byte characters.
fn text_of(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("a"),
            Just("\n"),
            Just("é"),
            Just("€"),
            Just("🙂"),
            Just("line ")
        ],
        0..max,
    )
    .prop_map(|parts| parts.concat())
}

fn text() -> impl Strategy<Value = String> {
    text_of(3000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn text_cuts_hold_budget_and_char_boundaries(body in text(), budget in 0usize..4000, tail in any::<bool>()) {
        let weight = if tail { Weight::Tail } else { Weight::Balanced };
        let out = cut_text("", &body, budget, weight, CTX);
        prop_assert!(chars(&out) <= budget, "{} > {budget}", chars(&out));
        if chars(&body) <= budget {
            prop_assert_eq!(out.as_ref(), body.as_str());
        } else if let Some(at) = out.find("\n[… ") {
            // What is kept is a real head and a real tail of the body: no split character.
            let end = out.find(" …]\n").unwrap() + " …]\n".len();
            prop_assert!(body.starts_with(&out[..at]));
            prop_assert!(body.ends_with(&out[end..]));
        }
    }

    #[test]
    fn prefixed_cuts_hold_budget(body in text(), budget in 0usize..2000) {
        let out = cut_text("File: a/b/c.rs\n", &body, budget, Weight::Balanced, CTX);
        prop_assert!(chars(&out) <= budget);
    }

    #[test]
    fn table_cuts_hold_budget(rows in prop::collection::vec(text_of(40).prop_map(|t| t.replace('\n', " ")), 0..200), budget in 0usize..3000) {
        let out = cut_lines(&["name | size"], &rows, &["N rows"], "rows", budget, CTX);
        prop_assert!(chars(&out) <= budget);
        let full = std::iter::once("name | size".to_owned()).chain(rows.iter().cloned()).chain(["N rows".to_owned()]).collect::<Vec<_>>().join("\n");
        if chars(&full) <= budget {
            prop_assert_eq!(out, full);
        }
    }

    #[test]
    fn diff_cuts_hold_budget(lines in prop::collection::vec(prop_oneof![Just("@@ -1,3 +1,3 @@".to_owned()), text_of(40).prop_map(|t| format!("+{}", t.replace('\n', "")))], 0..100), budget in 0usize..3000) {
        let diff = format!("--- a/x\n+++ b/x\n{}\n", lines.join("\n"));
        let out = cut_diff(&diff, budget, CTX);
        prop_assert!(chars(&out) <= budget);
    }

    #[test]
    fn json_cuts_hold_budget_and_stay_valid(n in 0usize..500, s in text(), budget in 0usize..3000) {
        let value = json!({"items": (0..n).collect::<Vec<_>>(), "text": s, "nested": {"deep": [[1, 2], {"k": "v"}]}});
        let out = cut_json(Some("summary"), &value, budget, CTX);
        prop_assert!(chars(&out) <= budget);
        if out.contains("JSON shortened") {
            let json_line = out.lines().nth(1).unwrap();
            prop_assert!(serde_json::from_str::<Json>(json_line).is_ok(), "invalid JSON: {json_line}");
        }
    }

    /// Many parts of one result hold the budget together, separators counted; above a
    /// budget that holds any marker, every marker is whole with a complete call.
    #[test]
    fn many_parts_hold_budget_with_whole_markers(parts in prop::collection::vec(text_of(30), 0..150), budget in 0usize..3000) {
        let values: Vec<Value> = parts.iter().map(|p| Value::text(p.clone())).collect();
        let conv = Conversation::new(vec![
            Message::user("go"),
            Message::assistant("", vec![ToolCall::new("call_7", "search", json!({}))]),
            Message::tool(ToolResult::success(CallRef::new("call_7", "search"), values)),
        ]);
        let mut options = EncodeOptions::for_model("m");
        options.budget.max_chars = budget;
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut notes = Vec::new();
        let view = rt.block_on(build_view(Provider::Anthropic, &conv, &options, &NoBlobs, &mut notes));
        let Some(Turn::Results { results, .. }) = view.turns.get(2) else {
            panic!("no results turn");
        };
        let text = results[0].text();
        if !parts.is_empty() {
            prop_assert!(chars(&text) <= budget, "{} > {budget}", chars(&text));
        }
        if budget >= 400 {
            let opens = text.matches("[…").count();
            prop_assert_eq!(opens, text.matches("…]").count(), "{}", text);
            for marker in text.split("[…").skip(1) {
                let marker = &marker[..marker.find("…]").unwrap()];
                let at = marker.find("read_result {").unwrap() + "read_result ".len();
                let call = &marker[at..at + marker[at..].find('}').unwrap() + 1];
                let call: Json = serde_json::from_str(call).unwrap();
                prop_assert_eq!(&call["callId"], "call_7");
            }
        }
    }

    #[test]
    fn every_call_gets_exactly_one_result_in_order(
        turns in prop::collection::vec((1usize..5, prop::collection::vec(any::<u8>(), 0..8), any::<bool>()), 1..5),
        max_chars in 10usize..200,
    ) {
        let conv = conversation(&turns);
        let calls: Vec<String> = conv.messages.iter().flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.id.clone()).collect(),
            _ => Vec::new(),
        }).collect();
        let mut options = EncodeOptions::for_model("m");
        options.budget.max_chars = max_chars;
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for provider in Provider::ALL {
            let (body, _) = rt.block_on(encode_request(provider, &conv, &options, &NoBlobs)).unwrap();
            let (called, answered, texts) = pairs(provider, &body);
            prop_assert_eq!(&called, &calls, "{}", provider);
            prop_assert_eq!(&answered, &calls, "{} results not one per call in call order", provider);
            for t in texts {
                let t = t.strip_prefix("Error: ").unwrap_or(&t);
                prop_assert!(chars(t) <= max_chars, "{}: {} > {}", provider, chars(t), max_chars);
            }
        }
    }
}

/// A conversation from a recipe: per turn, a number of calls, a shuffle of which results
/// were stored (some missing, some orphans), and whether a user message interleaves.
fn conversation(turns: &[(usize, Vec<u8>, bool)]) -> Conversation {
    let mut messages = vec![Message::user("start")];
    for (t, (n, picks, interject)) in turns.iter().enumerate() {
        let calls: Vec<ToolCall> = (0..*n)
            .map(|i| ToolCall::new(format!("c{t}_{i}"), "bash", json!({})))
            .collect();
        messages.push(Message::assistant("", calls));
        for (k, pick) in picks.iter().enumerate() {
            let id = if *pick as usize % (n + 1) == *n {
                format!("orphan{t}_{k}")
            } else {
                format!("c{t}_{}", *pick as usize % (n + 1))
            };
            let body = "output line\n".repeat(*pick as usize);
            messages.push(Message::tool(ToolResult::success(
                CallRef::new(id, "bash"),
                Value::text(body),
            )));
            if *interject && k == 0 {
                messages.push(Message::user("meanwhile"));
            }
        }
    }
    Conversation::new(messages)
}

/// (call ids in order, result ids in order, result texts) as the provider's body has them.
fn pairs(provider: Provider, body: &Json) -> (Vec<String>, Vec<String>, Vec<String>) {
    let s = |v: &Json| v.as_str().unwrap_or_default().to_owned();
    let (mut called, mut answered, mut texts) = (Vec::new(), Vec::new(), Vec::new());
    match provider {
        Provider::Anthropic => {
            for m in body["messages"].as_array().unwrap() {
                for b in m["content"].as_array().unwrap() {
                    match b["type"].as_str() {
                        Some("tool_use") => called.push(s(&b["id"])),
                        Some("tool_result") => {
                            answered.push(s(&b["tool_use_id"]));
                            texts.extend(
                                b["content"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .map(|c| s(&c["text"])),
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
        Provider::OpenaiChat => {
            for m in body["messages"].as_array().unwrap() {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    called.push(s(&c["id"]));
                }
                if m["role"] == "tool" {
                    answered.push(s(&m["tool_call_id"]));
                    texts.push(s(&m["content"]));
                }
            }
        }
        Provider::OpenaiResponses => {
            for item in body["input"].as_array().unwrap() {
                match item["type"].as_str() {
                    Some("function_call") => called.push(s(&item["call_id"])),
                    Some("function_call_output") => {
                        answered.push(s(&item["call_id"]));
                        texts.push(s(&item["output"]));
                    }
                    _ => {}
                }
            }
        }
        Provider::Gemini => {
            for c in body["contents"].as_array().unwrap() {
                let parts = c["parts"].as_array().unwrap();
                let calls: Vec<String> = parts
                    .iter()
                    .filter_map(|p| p.get("functionCall"))
                    .map(|f| s(&f["id"]))
                    .collect();
                let results: Vec<&Json> = parts
                    .iter()
                    .filter_map(|p| p.get("functionResponse"))
                    .collect();
                called.extend(calls);
                for r in results {
                    answered.push(s(&r["id"]));
                    let text = r["response"]
                        .get("output")
                        .or_else(|| r["response"].get("error"))
                        .unwrap();
                    texts.push(s(text));
                }
            }
        }
    }
    (called, answered, texts)
}
