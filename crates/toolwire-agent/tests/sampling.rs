//! MCP sampling served by the session's provider: the request's system prompt and
//! messages reach the provider's API (a local HTTP server answering like it), and its
//! reply comes back as a `sampling/createMessage` result.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use toolwire_agent::{ProviderSampler, ProviderSettings};
use toolwire_model::Provider;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn settings(provider: Provider, url: String) -> ProviderSettings {
    ProviderSettings {
        provider: Some(provider),
        model: Some("test-model".into()),
        base_url: Some(url),
        max_iterations: 1,
        stream: false,
    }
}

#[tokio::test]
async fn a_sampling_request_is_answered_by_the_provider() {
    for provider in [Provider::Anthropic, Provider::OpenaiChat] {
        let server = MockServer::start().await;
        let body = support::response_body(provider, &support::text("Paris"));
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&server)
            .await;
        let sampler = ProviderSampler::new(&settings(provider, server.uri())).unwrap();
        let params = json!({
            "systemPrompt": "Answer in one word.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Capital of France?"}},
                {"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
            ],
            "maxTokens": 100000,
        });
        let reply = sampler.sample(&params).await.unwrap();
        assert_eq!(reply["role"], "assistant");
        assert_eq!(reply["content"], json!({"type": "text", "text": "Paris"}));
        assert_eq!(reply["model"], "test-model");
        let sent: serde_json::Value = server.received_requests().await.unwrap()[0]
            .body_json()
            .unwrap();
        let text = sent.to_string();
        assert!(
            text.contains("Capital of France?") && text.contains("Answer in one word."),
            "{text}"
        );
        assert!(
            text.contains("[image content not sent to the model]"),
            "{text}"
        );
        // The server asked for 100,000 tokens; the reply is capped.
        let cap = sent.get("max_tokens").or(sent.get("max_completion_tokens"));
        assert!(
            cap.and_then(|c| c.as_u64()).is_some_and(|c| c <= 4096),
            "{sent}"
        );
    }
}

#[tokio::test]
async fn a_request_without_a_user_message_is_refused() {
    let sampler =
        ProviderSampler::new(&settings(Provider::Anthropic, "http://127.0.0.1:9".into())).unwrap();
    let err = sampler
        .sample(&json!({"messages": [], "maxTokens": 10}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, toolwire_agent::SamplingError::NoUserMessage),
        "{err}"
    );
    assert!(err.is_invalid_request());
    assert!(err.to_string().contains("no user message"), "{err}");
}
