//! Provider wire formats, one module each. Each implements [`ProviderFormat`], which owns
//! everything about its provider: name, URLs, env vars, headers, request bodies from a
//! [`crate::view::ModelView`], responses and stream events back into an
//! [`AssistantReply`], and which media it takes. The client, the config, the encoder and
//! media routing only ask this trait; a new provider is a new module here plus its entry
//! in the list in `provider.rs`.

/// Implements [`StreamDecode`] for a format's `StreamDecoder` through its own `push`,
/// `is_complete` and `finish`, so each format writes only those.
macro_rules! stream_decode {
    ($decoder:ty) => {
        impl $crate::formats::StreamDecode for $decoder {
            fn push(
                &mut self,
                event: &serde_json::Value,
            ) -> Result<Option<String>, $crate::formats::DecodeError> {
                <$decoder>::push(self, event)
            }

            fn is_complete(&self) -> bool {
                <$decoder>::is_complete(self)
            }

            fn finish(self: Box<Self>) -> $crate::formats::AssistantReply {
                <$decoder>::finish(*self)
            }
        }
    };
}

/// Inside a format's `impl ProviderFormat`: the encoder, decoder and stream decoder are
/// its module's own `encode`, `decode_response` and `StreamDecoder`.
macro_rules! module_codec {
    () => {
        fn encode(
            &self,
            view: &$crate::view::ModelView,
            options: &$crate::options::EncodeOptions,
        ) -> Result<serde_json::Value, serde_json::Error> {
            serde_json::to_value(encode(view, options))
        }

        fn encode_bytes(
            &self,
            view: &$crate::view::ModelView,
            options: &$crate::options::EncodeOptions,
        ) -> Result<Vec<u8>, serde_json::Error> {
            // The bytes serde_json would write, through the faster writer, into a buffer
            // sized for the whole body up front.
            $crate::json::to_vec(&encode(view, options), view.body_estimate())
        }

        fn decode_response(
            &self,
            body: &serde_json::Value,
        ) -> Result<$crate::formats::AssistantReply, $crate::formats::DecodeError> {
            decode_response(body)
        }

        fn stream_decoder(&self) -> Box<dyn $crate::formats::StreamDecode> {
            Box::new(StreamDecoder::new())
        }
    };
}

/// Inside the `impl ProviderFormat` of each OpenAI API: one account, one model family, the
/// same variables and the same bearer key, whichever endpoint.
macro_rules! openai_account {
    () => {
        fn default_model(&self) -> &'static str {
            "gpt-4.1"
        }

        fn default_base_url(&self) -> &'static str {
            "https://api.openai.com/v1"
        }

        fn key_var(&self) -> &'static str {
            "OPENAI_API_KEY"
        }

        fn base_url_var(&self) -> &'static str {
            "OPENAI_BASE_URL"
        }

        /// ollama, llama.cpp and vLLM speak these formats without a key.
        fn key_optional_with_base_url(&self) -> bool {
            true
        }

        fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)> {
            api_key
                .map(|key| vec![("authorization", format!("Bearer {key}"))])
                .unwrap_or_default()
        }
    };
}

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;

use std::borrow::Cow;

use serde_json::{Map, Value as Json};

use crate::conversation::{Message, ToolCall};
use crate::media::MediaSupport;
use crate::options::EncodeOptions;
use crate::view::{Block, InlineMedia, ModelView};

/// One provider's API: where it is, how to authenticate, how to encode a request and how
/// to decode the reply. Implemented once per file in this module.
pub trait ProviderFormat: Send + Sync {
    /// The id on the command line, in config files and in errors, e.g. `openai-chat`.
    fn name(&self) -> &'static str;

    /// The model used when none is named.
    fn default_model(&self) -> &'static str;

    /// Where the API lives, without the request path.
    fn default_base_url(&self) -> &'static str;

    /// The env var holding the API key.
    fn key_var(&self) -> &'static str;

    /// The env var that points the client at another server (a proxy, a local server).
    fn base_url_var(&self) -> &'static str;

    /// Whether a server named by [`ProviderFormat::base_url_var`] may go without a key, as
    /// local servers that speak the format often do.
    fn key_optional_with_base_url(&self) -> bool;

    /// The headers every request carries: the key in the API's scheme, when there is one,
    /// and any version header the API requires.
    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)>;

    /// The request URL under `base` (given without a trailing slash).
    fn url(&self, base: &str, model: &str, stream: bool) -> String;

    /// Turns a body from [`ProviderFormat::encode`] into the body of a streaming request.
    fn streaming_body(&self, body: &mut Json);

    /// The request body for `view`.
    fn encode(&self, view: &ModelView, options: &EncodeOptions) -> Result<Json, serde_json::Error>;

    /// The same request body as [`ProviderFormat::encode`], byte for byte as serde_json
    /// writes that tree, but written straight from the view: no JSON tree is built.
    fn encode_bytes(
        &self,
        view: &ModelView,
        options: &EncodeOptions,
    ) -> Result<Vec<u8>, serde_json::Error>;

    /// Decodes a whole (non-streaming) response body.
    fn decode_response(&self, body: &Json) -> Result<AssistantReply, DecodeError>;

    /// A fresh decoder for one streamed reply.
    fn stream_decoder(&self) -> Box<dyn StreamDecode>;

    /// Which media the API takes inside a tool result.
    fn media(&self) -> MediaSupport;
}

/// Accumulates one streamed reply, event by event.
pub trait StreamDecode: Send {
    /// Feeds one event's `data` JSON. Returns text to show as it arrives.
    fn push(&mut self, event: &Json) -> Result<Option<String>, DecodeError>;

    /// Whether the stream's final event arrived; a stream that ends before it was cut off.
    fn is_complete(&self) -> bool;

    /// The whole reply.
    fn finish(self: Box<Self>) -> AssistantReply;
}

/// Sets the `stream` flag that most formats carry in the body.
pub(crate) fn set_stream_flag(body: &mut Json) {
    if let Some(obj) = body.as_object_mut() {
        obj.insert("stream".into(), Json::Bool(true));
    }
}

/// What the model answered: its text and the calls it made, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistantReply {
    /// The reply's text; empty when it only called tools.
    pub text: String,
    /// The calls it made, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The provider's own stop reason, e.g. `tool_use`, `tool_calls`, `STOP`.
    pub stop_reason: Option<String>,
    /// Tokens spent, when the provider reported them.
    pub usage: Option<Usage>,
}

/// Tokens one request spent, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request (prompt, tools, history).
    pub input_tokens: u64,
    /// Tokens of the reply.
    pub output_tokens: u64,
}

impl AssistantReply {
    /// The reply as an assistant message, to append to the conversation.
    pub fn into_message(self) -> Message {
        Message::assistant(self.text, self.tool_calls)
    }
}

/// A response or stream event that does not have the shape its format documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected {provider} response: {message}")]
pub struct DecodeError {
    /// The provider's format name, e.g. `anthropic`.
    pub provider: &'static str,
    /// What did not fit the format.
    pub message: String,
}

impl DecodeError {
    pub(crate) fn new(provider: &'static str, message: impl Into<String>) -> Self {
        DecodeError {
            provider,
            message: message.into(),
        }
    }
}

/// Tool input as the JSON object every provider requires. Stored arguments that are a
/// JSON string (as OpenAI sends them) are parsed; anything else is wrapped, never lost.
/// An object is borrowed as it is, the common case, so encoding copies no arguments.
pub(crate) fn arguments_object(arguments: &Json) -> Cow<'_, Map<String, Json>> {
    match arguments {
        Json::Object(map) => Cow::Borrowed(map),
        Json::Null => Cow::Owned(Map::new()),
        Json::String(s) => Cow::Owned(match serde_json::from_str::<Json>(s) {
            Ok(Json::Object(map)) => map,
            _ => Map::from_iter([("input".to_owned(), arguments.clone())]),
        }),
        other => Cow::Owned(Map::from_iter([("input".to_owned(), other.clone())])),
    }
}

/// Tool input as the JSON string the OpenAI formats send: [`arguments_object`], written
/// compactly (as `Json::Object(..).to_string()` would), by the body's own writer (the
/// same bytes; serde_json's writer escaped each string a byte at a time, and its buffer
/// started small and grew).
pub(crate) fn arguments_json(arguments: &Json) -> String {
    crate::json::to_vec(&*arguments_object(arguments), 64)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| "{}".to_owned())
}

/// Parses a streamed or returned arguments string; an unparsable one is kept as a string
/// so that the result can tell the model its input was invalid.
pub(crate) fn parse_arguments(raw: &str) -> Json {
    if raw.trim().is_empty() {
        return Json::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Json::String(raw.to_owned()))
}

/// The text sent for an error result in formats without an error flag.
/// A result's blocks as one text: its one text block as it is (the common case, no copy),
/// else every block's text joined by a blank line, a media block's as `media` gives it
/// (which may also take the media into a part of its own).
pub(crate) fn joined_text<'a>(
    blocks: &'a [Block<'_>],
    mut media: impl FnMut(&'a InlineMedia) -> Cow<'a, str>,
) -> Cow<'a, str> {
    if let [block] = blocks
        && let Some(text) = block.as_text()
    {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        blocks
            .iter()
            .map(|block| match block {
                Block::Media(m) => media(m),
                text => Cow::Borrowed(text.as_text().unwrap_or_default()),
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
    )
}

pub(crate) fn error_prefixed(text: &str) -> String {
    format!("Error: {text}")
}
