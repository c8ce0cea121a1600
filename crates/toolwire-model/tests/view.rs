//! Behaviour across providers: widgets and user-only values never reach the model, old
//! media becomes placeholders, missing blobs are reported, budgets apply per call, per
//! tool and per turn.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_core::{Message, ToolCall};
use toolwire_model::{Conversation, NoBlobs, NoteCode, Provider, encode_request};

#[tokio::test]
async fn widgets_and_user_only_values_never_reach_the_model() {
    for provider in Provider::ALL {
        let (body, _) = encode_request(
            provider,
            &support::mix(),
            &support::options(),
            &support::blobs(),
        )
        .await
        .unwrap();
        let text = body.to_string();
        assert!(
            !text.contains("cloudy"),
            "{provider}: widget fallback leaked"
        );
        assert!(
            !text.contains("weather-forecast"),
            "{provider}: widget leaked"
        );
        assert!(
            !text.contains("internal note"),
            "{provider}: user-only value leaked"
        );
        assert!(
            text.contains("Oslo: 4°C"),
            "{provider}: the model's output is missing"
        );
    }
}

#[tokio::test]
async fn media_older_than_the_window_and_missing_blobs_become_placeholders() {
    let image = |id: &str| {
        Message::tool(ToolResult::success(
            CallRef::new(id, "shot"),
            Value::image(Source::blob(support::blob_key(), 70), "image/png")
                .summary(format!("{id}.png")),
        ))
    };
    let conv = Conversation::new(vec![
        Message::user("go"),
        Message::assistant(
            "",
            vec![ToolCall::new("old", "shot", serde_json::json!({}))],
        ),
        image("old"),
        Message::assistant(
            "",
            vec![ToolCall::new("new", "shot", serde_json::json!({}))],
        ),
        image("new"),
    ]);
    let (body, diags) = encode_request(
        Provider::Anthropic,
        &conv,
        &support::options(),
        &support::blobs(),
    )
    .await
    .unwrap();
    let messages = body["messages"].as_array().unwrap();
    let old = &messages[2]["content"][0]["content"][0];
    assert_eq!(old["type"], "text");
    assert!(
        old["text"]
            .as_str()
            .unwrap()
            .starts_with("[image: old.png, image/png, 70 B, blake3:")
    );
    assert_eq!(messages[4]["content"][0]["content"][0]["type"], "image");
    assert!(
        diags
            .iter()
            .any(|d| d.code == NoteCode::MediaPlaceholder && d.call_id.as_deref() == Some("old"))
    );

    let (body, diags) = encode_request(Provider::Anthropic, &conv, &support::options(), &NoBlobs)
        .await
        .unwrap();
    assert_eq!(
        body["messages"][4]["content"][0]["content"][0]["type"],
        "text"
    );
    assert!(diags.iter().any(|d| d.code == NoteCode::BlobUnavailable));
    assert!(
        !body.to_string().contains("base64"),
        "no base64 pasted as text"
    );
}

fn three_logs() -> Conversation {
    let log = |id: &str, tool: &str, n: usize| {
        Message::tool(ToolResult::success(
            CallRef::new(id, tool),
            Value::text(format!("{}ERROR at the end", "building\n".repeat(n))),
        ))
    };
    Conversation::new(vec![
        Message::user("go"),
        Message::assistant(
            "",
            vec![
                ToolCall::new("small", "bash", serde_json::json!({})),
                ToolCall::new("big1", "bash", serde_json::json!({})),
                ToolCall::new("big2", "grep", serde_json::json!({})),
            ],
        ),
        log("small", "bash", 1),
        log("big1", "bash", 5000),
        log("big2", "grep", 5000),
    ])
}

fn openai_texts(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn budgets_apply_per_instance_tool_call_and_turn() {
    let mut options = support::options();
    options.budget.max_chars = 1000;
    options.budget.per_tool.insert("grep".into(), 500);
    let (body, diags) = encode_request(Provider::OpenaiChat, &three_logs(), &options, &NoBlobs)
        .await
        .unwrap();
    let texts = openai_texts(&body);
    assert_eq!(
        texts[0], "building\nERROR at the end",
        "under budget: untouched"
    );
    assert!(texts[1].chars().count() <= 1000 && texts[1].chars().count() > 900);
    assert!(texts[2].chars().count() <= 500 && texts[2].chars().count() > 400);
    // Shell output is cut tail-weighted: the error at the end survives.
    assert!(texts[1].ends_with("ERROR at the end"));
    assert!(
        texts[1].contains("read them with read_result {\"callId\":\"big1\",\"part\":0,\"offset\":")
    );
    // Each cut names the budget that made it and how much there was.
    let cuts: Vec<String> = diags
        .iter()
        .filter(|d| d.code == NoteCode::Truncated)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(cuts.len(), 2, "{cuts:?}");
    // The size is the result's, to the character: it was a bound (a quarter of its bytes)
    // for a result over four times its limit.
    assert_eq!(
        cuts[0],
        "result of bash cut to 1,000 of 45,016 chars by the per-result budget"
    );
    assert!(
        cuts[1].ends_with("cut to 500 of 45,016 chars by its tool's budget"),
        "{}",
        cuts[1]
    );

    options.budget.per_call.insert("big2".into(), 300);
    let (body, _) = encode_request(Provider::OpenaiChat, &three_logs(), &options, &NoBlobs)
        .await
        .unwrap();
    assert!(openai_texts(&body)[2].chars().count() <= 300);

    // A turn total of 1,225: the small result keeps its 25, the two big ones share the rest.
    options.budget.per_call.clear();
    options.budget.per_tool.clear();
    options.budget.turn_max_chars = Some(1225);
    let (body, diags) = encode_request(Provider::OpenaiChat, &three_logs(), &options, &NoBlobs)
        .await
        .unwrap();
    assert!(
        diags.iter().any(|d| d.code == NoteCode::Truncated
            && d.message.ends_with("by its share of the turn's budget")),
        "{diags:?}"
    );
    let texts = openai_texts(&body);
    assert_eq!(texts[0], "building\nERROR at the end");
    for t in &texts[1..] {
        assert!(
            t.chars().count() <= 600 && t.chars().count() > 500,
            "{}",
            t.chars().count()
        );
    }
}

/// A turn mixing a result that is one plain text within its budget (read once, its block
/// held inline) with one cut by its call's budget and a failed one: each comes out as the
/// general path makes it, the plain text whole and borrowed from the session, and only the
/// cut one noted.
#[tokio::test]
async fn plain_results_beside_cut_and_failed_ones_keep_their_views() {
    use std::borrow::Cow;
    use toolwire_model::{Block, Blocks, EncodeOptions, Turn, build_view};
    let calls = ["plain", "long", "failed"]
        .map(|id| ToolCall::new(id, "bash", serde_json::json!({})))
        .to_vec();
    let conv = Conversation::new(vec![
        Message::user("go"),
        Message::assistant("", calls),
        Message::tool(ToolResult::success(
            CallRef::new("plain", "bash"),
            Value::text("ok\n"),
        )),
        Message::tool(ToolResult::success(
            CallRef::new("long", "bash"),
            Value::text("x".repeat(500)),
        )),
        Message::tool(ToolResult::error(CallRef::new("failed", "bash"), "boom")),
    ]);
    let mut options = EncodeOptions::for_model("m");
    options.budget.per_call.insert("long".to_owned(), 300);
    for provider in Provider::ALL {
        let mut notes = Vec::new();
        let view = build_view(provider, &conv, &options, &NoBlobs, &mut notes).await;
        let Some(Turn::Results { results, .. }) = view.turns.get(2) else {
            panic!("{provider}: no results turn in {:?}", view.turns);
        };
        let [plain, long, failed] = results.as_slice() else {
            panic!("{provider}: {results:?}");
        };
        assert!(
            matches!(
                &plain.blocks,
                Blocks::One(Block::Text(Cow::Borrowed("ok\n")))
            ),
            "{provider}: {:?}",
            plain.blocks
        );
        assert!(!plain.is_error);
        let [Block::Text(cut)] = long.blocks.as_slice() else {
            panic!("{provider}: {:?}", long.blocks);
        };
        assert!(
            cut.len() < 500 && cut.contains("xxx") && cut.contains("read_result"),
            "{provider}: {cut}"
        );
        assert!(failed.is_error);
        assert_eq!(failed.text(), "boom", "{provider}");
        let cut_ids: Vec<Option<&str>> = notes
            .iter()
            .filter(|n| n.code == NoteCode::Truncated)
            .map(|n| n.call_id.as_deref())
            .collect();
        assert_eq!(cut_ids, [Some("long")], "{provider}: {notes:?}");
        // The same blocks compare equal however they are held.
        assert_eq!(
            plain.blocks,
            Blocks::Many(vec![Block::Text(Cow::Borrowed("ok\n"))])
        );
    }
}
