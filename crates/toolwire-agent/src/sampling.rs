//! An MCP server's sampling request (`sampling/createMessage`) answered by the session's
//! provider: the request's messages as a conversation, the model's text as the reply.
//! JSON in and out, in MCP's shapes, so this crate needs no MCP types.

use serde_json::{Value as Json, json};
use toolwire_core::Message;
use toolwire_model::MemoryBlobs;
use toolwire_model::ProviderClient;
use toolwire_model::{EncodeOptions, Provider, encode_request_bytes};

use crate::{HostError, ProviderSettings};

/// The most tokens a sampling reply may ask for, whatever the server requests.
const MAX_SAMPLING_TOKENS: u32 = 4096;

/// Why a sampling request got no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SamplingError {
    /// The request itself is wrong: the server asked for nothing to answer.
    #[error("the sampling request has no user message")]
    NoUserMessage,
    /// The request cannot be encoded for the model's provider.
    #[error("the sampling request cannot be sent to the model: {0}")]
    Encode(#[from] toolwire_model::EncodeError),
    /// The model's API failed.
    #[error("the model did not answer: {0}")]
    Model(#[from] toolwire_model::ClientError),
}

impl SamplingError {
    /// The request's fault (the server should not send it again as is), not the model's.
    pub fn is_invalid_request(&self) -> bool {
        matches!(self, SamplingError::NoUserMessage)
    }
}

/// Answers sampling requests with one provider and model.
#[derive(Debug)]
pub struct ProviderSampler {
    client: ProviderClient,
    provider: Provider,
    model: String,
}

impl ProviderSampler {
    /// A sampler for the provider `settings` name.
    pub fn new(settings: &ProviderSettings) -> Result<Self, HostError> {
        let client = ProviderClient::new(settings.client_config()?)?;
        Ok(ProviderSampler {
            client,
            provider: settings.provider(),
            model: settings.agent_config().model,
        })
    }

    /// `params` are a `sampling/createMessage` request's; the answer is its result
    /// (`role`, `content`, `model`, `stopReason`). Text is sampled; other content (an
    /// image a server sends) is named in the text rather than dropped silently.
    pub async fn sample(&self, params: &Json) -> Result<Json, SamplingError> {
        let mut messages = Vec::new();
        if let Some(system) = params.get("systemPrompt").and_then(Json::as_str) {
            messages.push(Message::System {
                text: system.to_owned(),
            });
        }
        for m in params
            .get("messages")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let text = content_text(&m["content"]);
            messages.push(match m["role"].as_str() {
                Some("assistant") => Message::Assistant {
                    text,
                    tool_calls: Vec::new(),
                },
                _ => Message::User { text },
            });
        }
        if !messages.iter().any(|m| matches!(m, Message::User { .. })) {
            return Err(SamplingError::NoUserMessage);
        }
        let max_tokens = params
            .get("maxTokens")
            .and_then(Json::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(MAX_SAMPLING_TOKENS)
            .min(MAX_SAMPLING_TOKENS);
        let options = EncodeOptions {
            model: self.model.clone(),
            max_tokens,
            ..EncodeOptions::default()
        };
        let (body, _) =
            encode_request_bytes(self.provider, &messages, &options, &MemoryBlobs::default())
                .await?;
        let reply = self.client.send_bytes(&self.model, body).await?;
        Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": reply.text},
            "model": self.model,
            "stopReason": reply.stop_reason.unwrap_or_else(|| "endTurn".to_owned()),
        }))
    }
}

/// A sampling message's content (one block or a list) as text.
fn content_text(content: &Json) -> String {
    let blocks: Vec<&Json> = match content {
        Json::Array(list) => list.iter().collect(),
        one => vec![one],
    };
    let parts: Vec<String> = blocks
        .into_iter()
        .map(|b| match b["type"].as_str() {
            Some("text") => b["text"].as_str().unwrap_or_default().to_owned(),
            Some(other) => format!("[{other} content not sent to the model]"),
            None => String::new(),
        })
        .collect();
    parts.join("\n")
}
