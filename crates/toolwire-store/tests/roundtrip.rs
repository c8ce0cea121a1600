//! Acceptance: arbitrary results → persist → append → reopen → load gives equal values and
//! equal JSON bytes, with media resolved from the blob store to the original bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use proptest::prelude::*;
use support::backends::Backend;
use toolwire_core::Message;
use toolwire_core::{ResourceKind, ToolResult};
use toolwire_store::NewSession;

/// Every inline source in the result before persisting, by output index.
fn inline_media(result: &ToolResult) -> Vec<(usize, Vec<u8>)> {
    result
        .output
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let b64 = v.data.get("source")?.get("base64")?.as_str()?;
            Some((i, STANDARD.decode(b64).unwrap()))
        })
        .collect()
}

/// On every backend: SQLite + files, and Postgres + S3 where they run.
async fn round_trip(messages: Vec<Message>) {
    for backend in support::backends::all().await {
        round_trip_on(&backend, messages.clone()).await;
    }
}

async fn round_trip_on(backend: &Backend, messages: Vec<Message>) {
    let stores = backend.open().await;
    let parent = stores.create_session(NewSession::default()).await.unwrap();
    let session = stores
        .create_session(NewSession::child_of(&parent.id))
        .await
        .unwrap();

    let mut appended = Vec::new();
    let mut originals = Vec::new();
    for content in messages {
        let content = match content {
            Message::ToolResult(r) => {
                originals.push(inline_media(&r));
                Message::ToolResult(stores.persist(r, None).await.unwrap())
            }
            other => other,
        };
        appended.push(stores.append(&session.id, content).await.unwrap());
    }
    drop(stores);

    let stores = backend.open().await;
    let loaded = stores.history().load(&session.id).await.unwrap();
    assert_eq!(loaded.len(), appended.len());
    for (a, l) in appended.iter().zip(&loaded) {
        assert_eq!(a.content, l.content);
        assert_eq!(
            (a.id, a.seq, a.created_at_ms),
            (l.id, l.seq, l.created_at_ms)
        );
        assert_eq!(
            serde_json::to_string(&a.content).unwrap(),
            serde_json::to_string(&l.content).unwrap()
        );
    }
    let seqs: Vec<i64> = loaded.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=loaded.len() as i64).collect::<Vec<_>>());

    let results = loaded.iter().filter_map(|m| m.content.as_tool_result());
    for (result, media) in results.zip(originals) {
        // Every media source now resolves to the bytes the tool returned.
        for (i, bytes) in media {
            let source = &result.output[i].data["source"];
            let resolved = match source.get("blob") {
                Some(key) => {
                    let resource = result
                        .resources
                        .iter()
                        .find(|r| Some(r.uri.as_str()) == key.as_str());
                    let resource = resource.expect("an externalized blob is listed in resources");
                    assert_eq!(resource.size, bytes.len() as u64);
                    if result.output[i].mime_type.as_deref() == Some("video/mp4") {
                        assert_eq!(resource.kind, ResourceKind::Video);
                    }
                    stores.blob(key.as_str().unwrap()).await.unwrap().to_vec()
                }
                None => {
                    assert!(
                        bytes.len() <= 1024,
                        "only small non-audio/video media stays inline"
                    );
                    STANDARD.decode(source["base64"].as_str().unwrap()).unwrap()
                }
            };
            assert_eq!(resolved, bytes);
        }
        let found = stores
            .history()
            .find_result(&session.id, &result.call_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.session_id, session.id);
        // Call ids may repeat within a generated session; the newest one is returned.
        let newest = loaded
            .iter()
            .filter_map(|m| m.content.as_tool_result())
            .rfind(|r| r.call_id == result.call_id)
            .unwrap();
        assert_eq!(&found.result, newest);
    }
    let children = stores.history().child_sessions(&parent.id).await.unwrap();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].id, session.id);
    assert_eq!(children[0].message_count, loaded.len() as i64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_messages_survive_a_reopen(messages in prop::collection::vec(support::arb_message(), 1..8)) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(round_trip(messages));
    }
}

/// Images, audio, video, widgets, errors and suspensions, once each, so a failure points
/// at one of them.
#[tokio::test]
async fn images_audio_video_widgets_errors_and_suspensions_round_trip() {
    use serde_json::json;
    use toolwire_core::{CallRef, Source, Suspension, SuspensionReason, Value, Widget};
    let img = support::media_bytes(1, 5000);
    let wav = support::media_bytes(2, 100);
    let mp4 = support::media_bytes(3, 300_000);
    let success = ToolResult::success(
        CallRef::new("call_media", "capture"),
        vec![
            Value::image(Source::base64(support::b64(&img)), "image/png"),
            Value::file(
                Source::base64(support::b64(&wav)),
                "audio/wav",
                Some("a.wav".into()),
            ),
            Value::file(
                Source::base64(support::b64(&mp4)),
                "video/mp4",
                Some("v.mp4".into()),
            ),
        ],
    )
    .with_widget(Widget::new("weather", json!({"t": 21.5}), "21.5 °C"));
    let error =
        ToolResult::error_with_code(CallRef::new("call_err", "x"), "timeout", "took too long");
    let suspended = ToolResult::suspended(
        CallRef::new("call_wait", "deploy"),
        Suspension {
            id: "s1".into(),
            reason: SuspensionReason::Approval,
            prompt: "Deploy?".into(),
            input_schema: None,
        },
    );
    round_trip(vec![
        Message::User { text: "go".into() },
        Message::ToolResult(success),
        Message::ToolResult(error),
        Message::ToolResult(suspended),
    ])
    .await;
}
