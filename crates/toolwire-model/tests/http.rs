//! The provider clients against a local wiremock server that answers like each API:
//! streamed tool calls, a 429 then success, and 500 three times then failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::json;
use toolwire_core::ToolCall;
use toolwire_model::Provider;
use toolwire_model::{ClientConfig, ClientError, ProviderClient, RetryPolicy};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn client(provider: Provider, server: &MockServer) -> ProviderClient {
    let mut config = ClientConfig::new(provider, server.uri(), Some("test-key".into()));
    config.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
    };
    config.timeout = Duration::from_secs(5);
    ProviderClient::new(config).unwrap()
}

fn sse(events: &[serde_json::Value]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn expected_calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new("call_a", "read_file", json!({"path": "a.txt"})),
        ToolCall::new("call_b", "list_dir", json!({"path": "."})),
    ]
}

#[tokio::test]
async fn anthropic_streams_tool_calls() {
    let server = MockServer::start().await;
    let body = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 12}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "look."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": "}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"a.txt\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "call_b", "name": "list_dir", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \".\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ];
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "test-key"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(sse_response(sse(&body)))
        .expect(1)
        .mount(&server)
        .await;
    let mut shown = String::new();
    let reply = client(Provider::Anthropic, &server)
        .stream("m", &json!({"model": "m", "messages": []}), |t| {
            shown.push_str(t)
        })
        .await
        .unwrap();
    assert_eq!(shown, "Let me look.");
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(reply.tool_calls, expected_calls());
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        reply.usage.map(|u| (u.input_tokens, u.output_tokens)),
        Some((12, 30))
    );
    let sent: serde_json::Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(sent["stream"], json!(true));
}

#[tokio::test]
async fn openai_chat_streams_tool_calls_in_pieces() {
    let server = MockServer::start().await;
    let chunk = |delta: serde_json::Value, finish: Option<&str>| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut body = sse(&[
        chunk(json!({"role": "assistant", "content": "Checking"}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "list_dir", "arguments": "{\"path\":\".\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9}}),
    ]);
    body.push_str("data: [DONE]\n\n");
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", "Bearer test-key"))
        .respond_with(sse_response(body))
        .mount(&server)
        .await;
    let reply = client(Provider::OpenaiChat, &server)
        .stream("m", &json!({"model": "m", "messages": []}), |_| {})
        .await
        .unwrap();
    assert_eq!(reply.text, "Checking");
    assert_eq!(reply.tool_calls, expected_calls());
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.usage.map(|u| u.output_tokens), Some(9));
}

#[tokio::test]
async fn openai_responses_streams_tool_calls() {
    let server = MockServer::start().await;
    let fc = |id: &str, name: &str, args: &str| json!({"type": "function_call", "call_id": id, "name": name, "arguments": args});
    let body = sse(&[
        json!({"type": "response.created", "response": {"output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": fc("call_a", "read_file", "")}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"path\":\"a.txt\"}"}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": fc("call_b", "list_dir", "")}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"path\":\".\"}"}),
    ]);
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(sse_response(body))
        .mount(&server)
        .await;
    // Without `response.completed` the stream was cut off: an error, not two calls that
    // may be missing arguments.
    let err = client(Provider::OpenaiResponses, &server)
        .stream("m", &json!({"model": "m", "input": []}), |_| {})
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("ended before the reply was complete"),
        "{err}"
    );

    // With `response.completed`, the final response is authoritative.
    let server = MockServer::start().await;
    let done = json!({"type": "response.completed", "response": {"status": "completed", "output": [
        {"type": "message", "content": [{"type": "output_text", "text": "Hi"}]},
        fc("call_a", "read_file", "{\"path\":\"a.txt\"}"),
        fc("call_b", "list_dir", "{\"path\":\".\"}"),
    ], "usage": {"input_tokens": 1, "output_tokens": 2}}});
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(sse_response(sse(&[done])))
        .mount(&server)
        .await;
    let reply = client(Provider::OpenaiResponses, &server)
        .stream("m", &json!({}), |_| {})
        .await
        .unwrap();
    assert_eq!(
        (reply.text.as_str(), reply.tool_calls),
        ("Hi", expected_calls())
    );
}

#[tokio::test]
async fn gemini_streams_function_calls() {
    let server = MockServer::start().await;
    let body = sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "On it."}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "call_a", "name": "read_file", "args": {"path": "a.txt"}}},
            {"functionCall": {"id": "call_b", "name": "list_dir", "args": {"path": "."}}}
        ]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4}}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-test:streamGenerateContent"))
        .and(header("x-goog-api-key", "test-key"))
        .respond_with(sse_response(body))
        .mount(&server)
        .await;
    let reply = client(Provider::Gemini, &server)
        .stream("gemini-test", &json!({"contents": []}), |_| {})
        .await
        .unwrap();
    assert_eq!(reply.text, "On it.");
    assert_eq!(reply.tool_calls, expected_calls());
}

#[tokio::test]
async fn rate_limit_then_success_is_retried_after_the_servers_wait() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "20")
                .set_body_json(
                    json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
                ),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}]
        })))
        .with_priority(2)
        .mount(&server)
        .await;
    let started = std::time::Instant::now();
    let reply = client(Provider::OpenaiChat, &server)
        .send("m", &json!({}))
        .await
        .unwrap();
    assert_eq!(reply.text, "done");
    assert!(
        started.elapsed() >= Duration::from_millis(20),
        "retry-after not honoured"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn server_errors_three_times_fail_with_the_providers_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({
            "type": "error", "error": {"type": "api_error", "message": "Internal server error (test)"}
        })))
        .expect(3)
        .mount(&server)
        .await;
    let err = client(Provider::Anthropic, &server)
        .send("m", &json!({}))
        .await
        .unwrap_err();
    match &err {
        ClientError::Http {
            status,
            message,
            attempts,
            ..
        } => {
            assert_eq!(
                (*status, message.as_str(), *attempts),
                (500, "Internal server error (test)", 3)
            );
        }
        other => panic!("expected an HTTP error, got {other:?}"),
    }
    assert!(
        err.to_string()
            .contains("anthropic returned HTTP 500: Internal server error (test)")
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": {"code": 400, "message": "Please ensure that function response turn comes right after a function call turn.", "status": "INVALID_ARGUMENT"}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(Provider::Gemini, &server)
        .send("g", &json!({}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("function response turn comes right after"),
        "{err}"
    );
}

#[tokio::test]
async fn non_streaming_replies_decode_for_every_provider() {
    let bodies = [
        (
            Provider::Anthropic,
            "/v1/messages",
            json!({"content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.txt"}}], "stop_reason": "tool_use"}),
        ),
        (
            Provider::OpenaiChat,
            "/chat/completions",
            json!({"choices": [{"message": {"content": "ok", "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]}, "finish_reason": "tool_calls"}]}),
        ),
        (
            Provider::OpenaiResponses,
            "/responses",
            json!({"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}, {"type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}]}),
        ),
        (
            Provider::Gemini,
            "/v1beta/models/m:generateContent",
            json!({"candidates": [{"content": {"parts": [{"text": "ok"}, {"functionCall": {"id": "call_a", "name": "read_file", "args": {"path": "a.txt"}}}]}, "finishReason": "STOP"}]}),
        ),
    ];
    for (provider, route, body) in bodies {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(route))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&server)
            .await;
        let reply = client(provider, &server)
            .send("m", &json!({}))
            .await
            .unwrap();
        assert_eq!(reply.text, "ok", "{provider}");
        assert_eq!(
            reply.tool_calls,
            vec![ToolCall::new(
                "call_a",
                "read_file",
                json!({"path": "a.txt"})
            )],
            "{provider}"
        );
    }
}

#[tokio::test]
async fn a_server_slower_than_the_timeout_is_a_clear_error_not_a_hang() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&server)
        .await;
    let mut config = ClientConfig::new(Provider::OpenaiChat, server.uri(), Some("test-key".into()));
    config.timeout = Duration::from_millis(200);
    config.read_timeout = Duration::from_millis(200);
    config.retry = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
    };
    let started = std::time::Instant::now();
    let err = ProviderClient::new(config)
        .unwrap()
        .send("m", &json!({}))
        .await
        .unwrap_err();
    // Two attempts of 200 ms each, far from the server's 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");
    assert!(
        err.to_string().contains("openai-chat: request failed"),
        "{err}"
    );
}

#[tokio::test]
async fn a_stream_that_stops_early_is_an_error_not_a_short_reply() {
    let server = MockServer::start().await;
    // A tool call half streamed, then the connection ends: no content_block_stop, no message_stop.
    let body = sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"pa"}}),
    ]);
    Mock::given(method("POST"))
        .respond_with(sse_response(body))
        .mount(&server)
        .await;
    let err = client(Provider::Anthropic, &server)
        .stream("m", &json!({}), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Stream { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("ended before the reply was complete"),
        "{err}"
    );
}

/// A base URL that cannot be used fails at once with a line that says so, instead of
/// "builder error" after every retry; an unreachable server names the URL and the cause.
#[tokio::test]
async fn transport_errors_are_clear_and_permanent_ones_are_not_retried() {
    let mut config = ClientConfig::new(Provider::OpenaiChat, "not a url", None);
    config.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: std::time::Duration::from_secs(30),
        max_delay: std::time::Duration::from_secs(30),
    };
    let client = ProviderClient::new(config).unwrap();
    let started = std::time::Instant::now();
    let err = client.send("m", &json!({})).await.unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "retried"
    );
    let text = err.to_string();
    assert!(text.contains("is the base URL valid?"), "{text}");
    assert!(text.contains("not a url"), "{text}");

    // Nothing listens on port 9 of localhost: a connect error, named as one.
    let mut config = ClientConfig::new(Provider::OpenaiChat, "http://127.0.0.1:9", None);
    config.retry = RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    };
    let err = ProviderClient::new(config)
        .unwrap()
        .send("m", &json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("could not connect: http://127.0.0.1:9"),
        "{err}"
    );
}

/// A reply over the cap is refused, whole or streamed, instead of being read, stored and
/// re-sent every turn.
#[tokio::test]
async fn an_oversized_reply_is_refused() {
    let server = MockServer::start().await;
    let huge = "x".repeat(200_000);
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": huge},
                       "finish_reason": "stop"}]});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let mut config = ClientConfig::new(Provider::OpenaiChat, server.uri(), None);
    config.max_reply_bytes = 100_000;
    let client = ProviderClient::new(config).unwrap();
    let err = client.send("m", &json!({})).await.unwrap_err();
    assert!(
        matches!(err, ClientError::TooLarge { limit: 100_000, .. }),
        "{err}"
    );

    let server = MockServer::start().await;
    let chunk = json!({"choices": [{"index": 0, "delta": {"content": "y".repeat(50_000)}}]});
    let events: String = (0..5).map(|_| format!("data: {chunk}\n\n")).collect();
    Mock::given(method("POST"))
        .respond_with(sse_response(events))
        .mount(&server)
        .await;
    let mut config = ClientConfig::new(Provider::OpenaiChat, server.uri(), None);
    config.max_reply_bytes = 100_000;
    let err = ProviderClient::new(config)
        .unwrap()
        .stream("m", &json!({}), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::TooLarge { .. }), "{err}");
}
