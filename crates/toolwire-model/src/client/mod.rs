//! HTTP clients for the four provider APIs: one request, streaming or not, with timeouts,
//! retries on 429 and 5xx (honouring `retry-after`) and the provider's own error message.

mod config;
mod retry;

pub use config::{ClientConfig, DEFAULT_MAX_REPLY_BYTES, RetryPolicy};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::Value as Json;

use crate::formats::{AssistantReply, DecodeError};
use crate::provider::Provider;

/// Why a model request failed, after any retries.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The provider needs an API key and its variable is not set.
    #[error("{provider}: no API key; set {var}")]
    MissingKey {
        /// The provider asked.
        provider: Provider,
        /// The variable to set.
        var: &'static str,
    },
    /// The provider answered with an error; `message` is the provider's own.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        /// The provider asked.
        provider: Provider,
        /// The HTTP status of the last attempt.
        status: u16,
        /// The provider's error message, cut to a readable length.
        message: String,
        /// How many attempts were made before giving up.
        attempts: u32,
    },
    /// The request never got an answer: connection refused, timeout, TLS failure.
    #[error("{provider}: request failed: {message}")]
    Transport {
        /// The provider asked.
        provider: Provider,
        /// What the HTTP client said.
        message: String,
    },
    /// The reply does not have the shape the provider's format documents.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A streamed reply ended or broke before its final event.
    #[error("{provider}: stream broke off: {message}")]
    Stream {
        /// The provider asked.
        provider: Provider,
        /// How it broke.
        message: String,
    },
    /// The reply went over [`ClientConfig::max_reply_bytes`].
    #[error("{provider}: the reply is larger than {limit} bytes; refused")]
    TooLarge {
        /// The provider asked.
        provider: Provider,
        /// The limit in bytes.
        limit: usize,
    },
}

/// A client for one provider.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    config: ClientConfig,
    http: reqwest::Client,
}

impl ProviderClient {
    /// A client with this configuration; fails only if the HTTP client cannot be built.
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

    /// Its provider, endpoint, key and limits.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sends `body` (from [`crate::encode_request`]) and decodes the whole reply.
    pub async fn send(&self, model: &str, body: &Json) -> Result<AssistantReply, ClientError> {
        self.send_bytes(model, self.to_bytes(body)?).await
    }

    /// Sends these bytes as the request body (from [`crate::encode_request_bytes`], as
    /// the agent loop does, so what `toolwire export` prints is what was sent) and decodes
    /// the whole reply.
    pub async fn send_bytes(
        &self,
        model: &str,
        body: impl Into<bytes::Bytes>,
    ) -> Result<AssistantReply, ClientError> {
        let mut response = self.post(model, body.into(), false).await?;
        let provider = self.config.provider;
        let limit = self.config.max_reply_bytes;
        let read_error = |e: reqwest::Error| ClientError::Transport {
            provider,
            message: format!("reading the response: {e}"),
        };
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(read_error)? {
            if bytes.len() + chunk.len() > limit {
                return Err(ClientError::TooLarge { provider, limit });
            }
            bytes.extend_from_slice(&chunk);
        }
        let json: Json = serde_json::from_slice(&bytes).map_err(|e| {
            DecodeError::new(provider.name(), format!("the response is not JSON: {e}"))
        })?;
        Ok(provider.format().decode_response(&json)?)
    }

    /// Streams the reply: `on_text` sees text as it arrives; the whole reply is returned.
    pub async fn stream(
        &self,
        model: &str,
        body: &Json,
        on_text: impl FnMut(&str) + Send,
    ) -> Result<AssistantReply, ClientError> {
        let mut body = body.clone();
        self.config.provider.format().streaming_body(&mut body);
        self.stream_bytes(model, self.to_bytes(&body)?, on_text)
            .await
    }

    /// Streams the reply to a request of these bytes, which must ask for a stream (encoded
    /// with [`crate::EncodeOptions::stream`] set): `on_text` sees text as it arrives; the
    /// whole reply is returned.
    pub async fn stream_bytes(
        &self,
        model: &str,
        body: impl Into<bytes::Bytes>,
        mut on_text: impl FnMut(&str) + Send,
    ) -> Result<AssistantReply, ClientError> {
        let provider = self.config.provider;
        let response = self.post(model, body.into(), true).await?;
        // The raw bytes are counted before the event parser buffers them: one endless event
        // must not grow memory past the cap either. Reading stops there; the loop below
        // then reports the reply as too large.
        let limit = self.config.max_reply_bytes;
        let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut seen = 0usize;
        let flag = std::sync::Arc::clone(&over);
        let mut events = response
            .bytes_stream()
            .take_while(move |chunk| {
                if let Ok(bytes) = chunk {
                    seen += bytes.len();
                }
                let within = seen <= limit;
                if !within {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                std::future::ready(within)
            })
            .eventsource();
        let mut decoder = provider.format().stream_decoder();
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
        if over.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(ClientError::TooLarge { provider, limit });
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

    /// A JSON tree as the bytes serde_json writes of it.
    fn to_bytes(&self, body: &Json) -> Result<Vec<u8>, ClientError> {
        serde_json::to_vec(body).map_err(|e| ClientError::Transport {
            provider: self.config.provider,
            message: format!("the request body could not be written: {e}"),
        })
    }

    fn url(&self, model: &str, stream: bool) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        self.config.provider.format().url(base, model, stream)
    }

    /// POSTs with retries; returns the first successful response.
    async fn post(
        &self,
        model: &str,
        body: bytes::Bytes,
        stream: bool,
    ) -> Result<reqwest::Response, ClientError> {
        let provider = self.config.provider;
        let url = self.url(model, stream);
        let mut attempt = 0;
        loop {
            attempt += 1;
            // The bytes as given (a clone shares them): a body re-encoded here could differ
            // from what `toolwire export` prints.
            let mut request = self
                .http
                .post(&url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
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
                Err(e) => {
                    let error = ClientError::Transport {
                        provider,
                        message: transport_message(&e, &url),
                    };
                    // A request that cannot be built (a bad base URL) fails the same way
                    // every time: say so at once rather than after every retry.
                    if !transport_retryable(&e) {
                        return Err(error);
                    }
                    (None, error)
                }
            };
            if attempt >= self.config.retry.max_attempts {
                return Err(error);
            }
            tokio::time::sleep(self.config.retry.delay(attempt, retry_after)).await;
        }
    }

    fn authorize(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let headers = self
            .config
            .provider
            .format()
            .headers(self.config.api_key.as_deref());
        for (name, value) in headers {
            // Marked sensitive, so the key never shows in a debug print of the request.
            if let Ok(mut value) = reqwest::header::HeaderValue::from_str(&value) {
                value.set_sensitive(true);
                request = request.header(name, value);
            }
        }
        request
    }
}

/// At most this many characters of an error body are quoted in an error.
const MAX_ERROR_CHARS: usize = 2000;

/// The provider's own message from an error body (`{"error": {"message": …}}` in all four
/// APIs), else the body itself; cut to [`MAX_ERROR_CHARS`] either way, saying so.
fn provider_message(body: &str) -> String {
    let message = serde_json::from_str::<Json>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Json::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.trim().to_owned());
    // The body is the server's text: control characters (escape sequences) are dropped
    // here, so an error line can never carry one, whoever prints it.
    let message: String = message
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    toolwire_core::humanize::excerpt(&message, MAX_ERROR_CHARS)
}

/// A transport failure as one clear line: what went wrong (the URL could not be used, no
/// connection, a timeout, an unreadable body), where, and the causes reqwest wraps —
/// never a bare "builder error".
fn transport_message(e: &reqwest::Error, url: &str) -> String {
    let what = if e.is_builder() {
        "the request could not be built (is the base URL valid?)"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_decode() || e.is_body() {
        "could not read the response"
    } else {
        "the request failed"
    };
    let mut line = format!("{what}: {url}");
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// Connections refused, resets and timeouts may pass; a request that cannot be built, a
/// redirect loop or an undecodable body will fail again.
fn transport_retryable(e: &reqwest::Error) -> bool {
    !(e.is_builder() || e.is_redirect() || e.is_decode())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_cut_and_cleaned() {
        let body = format!("\u{1b}[2J{}", "x".repeat(5000));
        let message = provider_message(&body);
        assert!(!message.contains('\u{1b}'));
        assert!(message.ends_with("(5004 bytes in all)"), "{message}");
        let json = r#"{"error": {"message": "bad\u001b]52;c;x\u0007 key"}}"#;
        assert_eq!(provider_message(json), "bad ]52;c;x  key");
    }
}
