//! A scripted model provider for the binary's tests: a local HTTP server that answers each
//! request with the next ready reply (OpenAI-compatible SSE chunks, or anything else), and
//! a clear 400 when the script has run out.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{Value as Json, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Replies in order; each is a ready response.
pub(crate) struct Script(pub Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.0.lock().unwrap().pop_front().unwrap_or_else(|| {
            ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"message": "the test script has no more replies"}}))
        })
    }
}

/// A server answering POSTs to `path` with `replies`, in order.
pub(crate) async fn server(path: &str, replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path(path))
        .respond_with(Script(Mutex::new(replies.into())))
        .mount(&server)
        .await;
    server
}

/// A streamed reply of `events`, closed with `[DONE]`.
pub(crate) fn sse(events: &[Json]) -> ResponseTemplate {
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// One OpenAI chat-completions chunk carrying `delta`.
pub(crate) fn chunk(delta: Json) -> Json {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}
