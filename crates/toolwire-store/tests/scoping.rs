//! A call id names a call within its session only: two sessions that reuse an id (the
//! Gemini decoder once named every id-less call `gemini_call_0`) each read their own
//! result back, and a blob is found only through a result of the session that asks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use toolwire_core::{CallRef, Message, Source, ToolResult, Value};
use toolwire_store::{BlobKey, NewSession};

/// A result of call `id` saying `text`, with an image large enough to go to the blob store.
fn result(id: &str, text: &str, seed: u64) -> ToolResult {
    let bytes = support::media_bytes(seed, 4096);
    let mut r = ToolResult::success(CallRef::new(id, "shot"), Value::text(text));
    r.output.push(Value::image(
        Source::base64(support::b64(&bytes)),
        "image/png",
    ));
    r
}

/// The blob key of the stored result's image.
fn blob_of(message: &Message) -> BlobKey {
    let r = message.as_tool_result().unwrap();
    let key = r.output[1].data["source"]["blob"].as_str().unwrap();
    BlobKey::parse(key).unwrap()
}

on_every_backend! {
    async fn a_call_id_is_read_within_its_session_only(backend) {
        let stores = backend.open().await;
        let a = stores.create_session(NewSession::default()).await.unwrap();
        let b = stores.create_session(NewSession::default()).await.unwrap();
        let empty = stores.create_session(NewSession::default()).await.unwrap();
        let id = "gemini_call_0";
        let persisted = |r| async { Message::ToolResult(stores.persist(r, None).await.unwrap()) };
        let in_a = stores.append(&a.id, persisted(result(id, "from A", 1)).await).await.unwrap();
        // Stored after A's: an unscoped lookup ("the newest with this id") returns B's to A.
        let in_b = stores.append(&b.id, persisted(result(id, "from B", 2)).await).await.unwrap();
        let history = stores.history();

        let text = |found: Option<toolwire_store::StoredResult>| {
            found.map(|f| f.result.output[0].data["content"].as_str().unwrap().to_owned())
        };
        assert_eq!(text(history.find_result(&a.id, id).await.unwrap()).as_deref(), Some("from A"));
        assert_eq!(text(history.find_result(&b.id, id).await.unwrap()).as_deref(), Some("from B"));
        assert_eq!(history.find_result(&empty.id, id).await.unwrap(), None);

        let (blob_a, blob_b) = (blob_of(&in_a.content), blob_of(&in_b.content));
        assert_ne!(blob_a, blob_b);
        let found = history.result_with_blob(&a.id, &blob_a).await.unwrap().unwrap();
        assert_eq!(found.session_id, a.id);
        assert!(history.result_with_blob(&b.id, &blob_a).await.unwrap().is_none());
        assert!(history.result_with_blob(&empty.id, &blob_b).await.unwrap().is_none());
        assert!(history.result_with_blob(&b.id, &blob_b).await.unwrap().is_some());
        // Ids that are not ids are refused, as everywhere else.
        assert!(history.find_result("../a", id).await.is_err());
        assert!(history.result_with_blob("../a", &blob_a).await.is_err());
    }
}
