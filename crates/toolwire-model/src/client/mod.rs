//! HTTP clients for the four provider APIs: one request, streaming or not, with timeouts,
//! retries on 429 and 5xx (honouring `retry-after`) and the provider's own error message.

mod config;
mod retry;

pub use config::{ClientConfig, RetryPolicy};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::Value as Json;

use crate::formats::{
    AssistantReply, DecodeError, anthropic, gemini, openai_chat, openai_responses,
};
use crate::options::Provider;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{provider}: no API key; set {var}")]
    MissingKey {
        provider: Provider,
        var: &'static str,
    },
    /// The provider answered with an error; `message` is the provider's own.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        provider: Provider,
        status: u16,
        message: String,
        /// How many attempts were made before giving up.
        attempts: u32,
    },
    #[error("{provider}: request failed: {message}")]
    Transport { provider: Provider, message: String },
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("{provider}: stream broke off: {message}")]
    Stream { provider: Provider, message: String },
}

/// A client for one provider.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    config: ClientConfig,
    http: reqwest::Client,
}

impl ProviderClient {
    pub fn new(config: ClientConfig) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .build()
            .map_err(|e| ClientError::Transport {
                provider: config.provider,
                message: e.to_string(),
            })?;
        Ok(ProviderClient { config, http })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sends `body` (from [`crate::encode_request`]) and decodes the whole reply.
    pub async fn send(&self, model: &str, body: &Json) -> Result<AssistantReply, ClientError> {
        let response = self.post(model, body, false).await?;
        let provider = self.config.provider;
        let json: Json = response.json().await.map_err(|e| ClientError::Transport {
            provider,
            message: format!("reading the response: {e}"),
        })?;
        Ok(match provider {
            Provider::Anthropic => anthropic::decode_response(&json)?,
            Provider::OpenaiChat => openai_chat::decode_response(&json)?,
            Provider::OpenaiResponses => openai_responses::decode_response(&json)?,
            Provider::Gemini => gemini::decode_response(&json)?,
        })
    }

    /// Streams the reply: `on_text` sees text as it arrives; the whole reply is returned.
    pub async fn stream(
        &self,
        model: &str,
        body: &Json,
        mut on_text: impl FnMut(&str) + Send,
    ) -> Result<AssistantReply, ClientError> {
        let provider = self.config.provider;
        let mut body = body.clone();
        if let Some(obj) = body.as_object_mut() {
            match provider {
                Provider::Anthropic | Provider::OpenaiResponses => {
                    obj.insert("stream".into(), Json::Bool(true));
                }
                Provider::OpenaiChat => {
                    obj.insert("stream".into(), Json::Bool(true));
                    obj.insert(
                        "stream_options".into(),
                        serde_json::json!({"include_usage": true}),
                    );
                }
                Provider::Gemini => {}
            }
        }
        let response = self.post(model, &body, true).await?;
        let mut events = response.bytes_stream().eventsource();
        let mut decoder = StreamDecoder::new(provider);
        let mut done = false;
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| ClientError::Stream {
                provider,
                message: e.to_string(),
            })?;
            if event.data.trim() == "[DONE]" {
                done = true;
                break;
            }
            if event.data.trim().is_empty() {
                continue;
            }
            let json: Json = serde_json::from_str(&event.data).map_err(|e| {
                DecodeError::new(provider.name(), format!("stream event is not JSON: {e}"))
            })?;
            if let Some(text) = decoder.push(&json)? {
                on_text(&text);
            }
        }
        // A stream that just stops is a broken reply, not a short one: half a tool call
        // must not pass for a finished turn.
        if !(done || decoder.is_complete()) {
            return Err(ClientError::Stream {
                provider,
                message: "the stream ended before the reply was complete".into(),
            });
        }
        Ok(decoder.finish())
    }

    fn url(&self, model: &str, stream: bool) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        match self.config.provider {
            Provider::Anthropic => format!("{base}/v1/messages"),
            Provider::OpenaiChat => format!("{base}/chat/completions"),
            Provider::OpenaiResponses => format!("{base}/responses"),
            Provider::Gemini if stream => {
                format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse")
            }
            Provider::Gemini => format!("{base}/v1beta/models/{model}:generateContent"),
        }
    }

    /// POSTs with retries; returns the first successful response.
    async fn post(
        &self,
        model: &str,
        body: &Json,
        stream: bool,
    ) -> Result<reqwest::Response, ClientError> {
        let provider = self.config.provider;
        let url = self.url(model, stream);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self.http.post(&url).json(body);
            if !stream {
                request = request.timeout(self.config.timeout);
            }
            request = self.authorize(request);
            let outcome = request.send().await;
            let (retry_after, error) = match outcome {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = retry::retry_after(response.headers());
                    let text = response.text().await.unwrap_or_default();
                    let error = ClientError::Http {
                        provider,
                        status,
                        message: provider_message(&text),
                        attempts: attempt,
                    };
                    if !retry::is_retryable(status) {
                        return Err(error);
                    }
                    (retry_after, error)
                }
                Err(e) => (
                    None,
                    ClientError::Transport {
                        provider,
                        message: e.to_string(),
                    },
                ),
            };
            if attempt >= self.config.retry.max_attempts {
                return Err(error);
            }
            tokio::time::sleep(self.config.retry.delay(attempt, retry_after)).await;
        }
    }

    fn authorize(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let Some(key) = self.config.api_key.as_deref() else {
            return request;
        };
        match self.config.provider {
            Provider::Anthropic => request
                .header("x-api-key", key)
                .header("anthropic-version", "2023-06-01"),
            Provider::OpenaiChat | Provider::OpenaiResponses => request.bearer_auth(key),
            Provider::Gemini => request.header("x-goog-api-key", key),
        }
    }
}

/// The provider's own message from an error body (`{"error": {"message": …}}` in all four
/// APIs), else the body itself.
fn provider_message(body: &str) -> String {
    serde_json::from_str::<Json>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Json::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.trim().chars().take(2000).collect())
}

enum StreamDecoder {
    Anthropic(anthropic::StreamDecoder),
    OpenaiChat(openai_chat::StreamDecoder),
    OpenaiResponses(openai_responses::StreamDecoder),
    Gemini(gemini::StreamDecoder),
}

impl StreamDecoder {
    fn new(provider: Provider) -> Self {
        match provider {
            Provider::Anthropic => StreamDecoder::Anthropic(anthropic::StreamDecoder::new()),
            Provider::OpenaiChat => StreamDecoder::OpenaiChat(openai_chat::StreamDecoder::new()),
            Provider::OpenaiResponses => {
                StreamDecoder::OpenaiResponses(openai_responses::StreamDecoder::new())
            }
            Provider::Gemini => StreamDecoder::Gemini(gemini::StreamDecoder::new()),
        }
    }

    fn push(&mut self, event: &Json) -> Result<Option<String>, DecodeError> {
        match self {
            StreamDecoder::Anthropic(d) => d.push(event),
            StreamDecoder::OpenaiChat(d) => d.push(event),
            StreamDecoder::OpenaiResponses(d) => d.push(event),
            StreamDecoder::Gemini(d) => d.push(event),
        }
    }

    fn is_complete(&self) -> bool {
        match self {
            StreamDecoder::Anthropic(d) => d.is_complete(),
            StreamDecoder::OpenaiChat(d) => d.is_complete(),
            StreamDecoder::OpenaiResponses(d) => d.is_complete(),
            StreamDecoder::Gemini(d) => d.is_complete(),
        }
    }

    fn finish(self) -> AssistantReply {
        match self {
            StreamDecoder::Anthropic(d) => d.finish(),
            StreamDecoder::OpenaiChat(d) => d.finish(),
            StreamDecoder::OpenaiResponses(d) => d.finish(),
            StreamDecoder::Gemini(d) => d.finish(),
        }
    }
}
