//! A result of many small parts (500 texts of 500 characters, 50,000 of one character)
//! within its budget in every provider's view: whole parts kept at the head and the tail,
//! one whole marker for the run between them with a complete `read_result` call, the
//! separators between parts paid from the budget, and the left-out run read back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use serde_json::json;
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_core::{Message, ToolCall};
use toolwire_model::{
    Block, Conversation, EncodeOptions, NoBlobs, Provider, Turn, build_view, encode_request,
    read_part,
};

/// Part `i` of `n` parts of `size` characters: its number first (when it fits), so each
/// part is told apart, then filler; letters only, so no part looks like a marker.
fn part(i: usize, size: usize) -> String {
    let head = format!("p{i}:");
    if head.len() > size {
        let letter = char::from(b'a' + (i % 26) as u8);
        return letter.to_string().repeat(size);
    }
    format!("{head}{}", "x".repeat(size - head.len()))
}

fn parts(n: usize, size: usize) -> Vec<String> {
    (0..n).map(|i| part(i, size)).collect()
}

fn conversation(parts: &[String]) -> Conversation {
    let values: Vec<Value> = parts.iter().map(|p| Value::text(p.clone())).collect();
    Conversation::new(vec![
        Message::user("go"),
        Message::assistant("", vec![ToolCall::new("many", "search", json!({}))]),
        Message::tool(ToolResult::success(CallRef::new("many", "search"), values)),
    ])
}

/// What a model is told of the result: its text blocks joined as the view joins them.
fn seen_text(view_blocks: &[Block<'_>]) -> String {
    view_blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.to_string(),
            Block::Media(m) => panic!("no media here: {m:?}"),
            Block::Placeholder(p) => panic!("no media here: {p:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The marker's read call and the parts it covers, checked against what was sent.
struct Run {
    first: usize,
    last: usize,
}

/// Holds `text` (what the model saw of `parts`, cut to `budget`) to the rules: within the
/// budget, whole parts at the head and the tail, exactly one marker, whole, whose
/// `read_result` call is complete and reads back exactly the parts it stands for.
fn check(text: &str, parts: &[String], budget: usize, result: &ToolResult) -> Run {
    let chars = text.chars().count();
    assert!(chars <= budget, "{chars} chars for a budget of {budget}");
    let opens = text.matches("[…").count();
    let closes = text.matches("…]").count();
    assert_eq!((opens, closes), (1, 1), "one whole marker: {text:.400}");
    let start = text.find("[…").unwrap();
    let end = text.find("…]").unwrap() + "…]".len();
    let marker = &text[start..end];
    // The call is complete JSON with the result's call id.
    let call_at = marker.find("read_result {").expect(marker) + "read_result ".len();
    let call_end = call_at + marker[call_at..].find('}').expect(marker) + 1;
    let call: serde_json::Value = serde_json::from_str(&marker[call_at..call_end]).expect(marker);
    assert_eq!(call["callId"], "many", "{marker}");
    assert_eq!(call["offset"], 0, "{marker}");
    let first = call["part"].as_u64().expect(marker) as usize;
    let through = marker.rfind("through part ").expect(marker) + "through part ".len();
    let last: usize = marker[through..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .expect(marker);
    assert!(first <= last && last < parts.len(), "{marker}");
    // Whole parts before and after it, separators and all, and nothing else.
    let head = text[..start].strip_suffix("\n\n").unwrap_or(&text[..start]);
    let tail = text[end..].strip_prefix("\n\n").unwrap_or(&text[end..]);
    let head: Vec<&str> = if head.is_empty() {
        vec![]
    } else {
        head.split("\n\n").collect()
    };
    let tail: Vec<&str> = if tail.is_empty() {
        vec![]
    } else {
        tail.split("\n\n").collect()
    };
    assert_eq!(
        head.len(),
        first,
        "the head runs up to the marker's first part"
    );
    assert_eq!(
        tail.len(),
        parts.len() - last - 1,
        "the tail starts after its last"
    );
    for (i, kept) in head.iter().enumerate() {
        assert_eq!(*kept, parts[i], "head part {i}");
    }
    for (k, kept) in tail.iter().enumerate() {
        assert_eq!(*kept, parts[last + 1 + k], "tail part {}", last + 1 + k);
    }
    assert!(!head.is_empty() && !tail.is_empty(), "{marker}");
    // The marker says how much it stands for.
    let omitted = last - first + 1;
    let omitted_chars: usize = parts[first..=last].iter().map(|p| p.chars().count()).sum();
    let says = format!(
        "({} parts, {} chars)",
        thousands(omitted),
        thousands(omitted_chars)
    );
    assert!(marker.contains(&says), "{marker} should say {says}");
    // The call reads the left-out run back, part by part, as the marker says.
    for (p, want) in parts.iter().enumerate().take(last + 1).skip(first) {
        let read = read_part(result, p, 0, 60_000).unwrap();
        assert_eq!(&read, want, "part {p} read back");
    }
    Run { first, last }
}

fn thousands(n: usize) -> String {
    toolwire_core::humanize::thousands(n as u64)
}

/// `n` parts of `size` characters through every provider's view at `budget`; what each
/// provider saw, and the time each view took.
async fn through_every_view(n: usize, size: usize, budget: usize) {
    let parts = parts(n, size);
    let conversation = conversation(&parts);
    let Some(Message::ToolResult(result)) = conversation.messages.last() else {
        panic!("the result is last");
    };
    let mut options = EncodeOptions::for_model("m");
    options.budget.max_chars = budget;
    for provider in Provider::ALL {
        let started = Instant::now();
        let mut notes = Vec::new();
        let view = build_view(provider, &conversation, &options, &NoBlobs, &mut notes).await;
        let took = started.elapsed();
        let Some(Turn::Results { results, .. }) = view.turns.get(2) else {
            panic!("{provider}: no results turn");
        };
        let text = seen_text(&results[0].blocks);
        let run = check(&text, &parts, budget, result);
        eprintln!(
            "{provider}: {n} parts of {size}: {} chars seen, parts {}–{} left out, view in {took:?}",
            text.chars().count(),
            run.first,
            run.last
        );
        // The encoder sends the view's text: the marker reaches the request whole.
        let (body, _) = encode_request(provider, &conversation, &options, &NoBlobs)
            .await
            .unwrap();
        let start = text.find("[…").unwrap();
        let end = text.find("…]").unwrap() + "…]".len();
        let marker = serde_json::to_string(&text[start..end]).unwrap();
        let marker = &marker[1..marker.len() - 1];
        assert!(body.to_string().contains(marker), "{provider}: {marker}");
    }
}

#[tokio::test]
async fn five_hundred_parts_of_500_chars_keep_whole_parts_and_one_marker() {
    through_every_view(500, 500, 32_000).await;
}

#[tokio::test]
async fn fifty_thousand_one_char_parts_pay_for_their_separators() {
    let started = Instant::now();
    through_every_view(50_000, 1, 32_000).await;
    eprintln!(
        "50,000 one-char parts, 4 providers (view, encode, read back): {:?}",
        started.elapsed()
    );
}

/// Fewer, larger parts are still cut each by its structure, with a marker each (today's
/// behaviour, kept): every share is large enough to be worth a cut.
#[tokio::test]
async fn a_few_large_parts_are_each_cut_by_structure() {
    let parts = parts(3, 40_000);
    let conversation = conversation(&parts);
    let mut options = EncodeOptions::for_model("m");
    options.budget.max_chars = 32_000;
    let mut notes = Vec::new();
    let view = build_view(
        Provider::Anthropic,
        &conversation,
        &options,
        &NoBlobs,
        &mut notes,
    )
    .await;
    let Some(Turn::Results { results, .. }) = view.turns.get(2) else {
        panic!("no results turn");
    };
    let text = seen_text(&results[0].blocks);
    assert!(text.chars().count() <= 32_000);
    assert_eq!(
        text.matches("omitted by toolwire").count(),
        3,
        "{text:.300}"
    );
    for (i, p) in ["p0:", "p1:", "p2:"].iter().enumerate() {
        assert!(text.contains(p), "part {i} has its head: {text:.300}");
        assert!(
            text.contains(&format!("\"part\":{i},\"offset\":")),
            "part {i} has its marker"
        );
    }
}
