//! Anthropic Messages: request body, response and stream decoding.
//!
//! Pairing: all results of one assistant turn go in one user message, as `tool_result`
//! blocks in call order and before any text; errors carry `is_error: true`; images and
//! PDFs go inside the `tool_result` as `image` and `document` blocks.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::ProviderFormat;
use super::{AssistantReply, DecodeError, Usage, arguments_object, parse_arguments};
use crate::conversation::ToolCall;
use crate::media::MediaSupport;
use crate::options::EncodeOptions;
use crate::render::MediaClass;
use crate::view::{Block, MediaData, ModelView, Turn};

const NAME: &str = "anthropic";
/// What an empty user turn or an empty tool result says, as Anthropic refuses empty text.
const EMPTY_USER: &str = "(empty message)";
const EMPTY_RESULT: &str = "(no output)";

/// The request body, borrowing every text and value from the view and the options: it
/// is serialized once, straight to bytes or to a JSON tree, so nothing is copied for it.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<&'a str>,
    pub messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct RequestMessage<'a> {
    pub role: &'static str,
    pub content: Vec<ContentBlock<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Cow<'a, Map<String, Json>>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ResultContents<'a>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// A `tool_result`'s content, written straight from the result's blocks: its blocks
/// but empty texts (Anthropic rejects empty text blocks), or one [`EMPTY_RESULT`] text
/// when none is left. Not collected into a vector per result first: that vector was an
/// allocation, then a cache miss each to write, read and free, per result of a long
/// session.
#[derive(Debug)]
pub(crate) struct ResultContents<'a>(pub &'a [Block<'a>]);

impl Serialize for ResultContents<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut kept = self
            .0
            .iter()
            .filter(|b| b.as_text().is_none_or(|t| !t.is_empty()))
            .peekable();
        if kept.peek().is_none() {
            return serializer.collect_seq([ResultContent::Text { text: EMPTY_RESULT }]);
        }
        serializer.collect_seq(kept.map(result_content))
    }
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ResultContent<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: MediaSource<'a>,
    },
    Document {
        source: MediaSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum MediaSource<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub description: &'a str,
    pub input_schema: &'a Json,
}

/// The request body for `POST /v1/messages`.
pub(crate) fn encode<'a>(view: &'a ModelView, options: &'a EncodeOptions) -> Request<'a> {
    let mut messages = Vec::with_capacity(view.turns.len());
    for turn in &view.turns {
        match turn {
            // Anthropic rejects empty text blocks; an empty user turn still has to exist
            // for the roles to alternate, so it says that it is empty.
            Turn::User(text) => messages.push(RequestMessage {
                role: "user",
                content: vec![ContentBlock::Text {
                    text: if text.is_empty() { EMPTY_USER } else { text },
                }],
            }),
            Turn::Assistant { text, calls } => {
                let mut content = Vec::with_capacity(calls.len() + 1);
                // Anthropic rejects empty text blocks.
                if !text.is_empty() {
                    content.push(ContentBlock::Text { text });
                }
                content.extend(calls.iter().map(|c| ContentBlock::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input: arguments_object(&c.input),
                }));
                if !content.is_empty() {
                    messages.push(RequestMessage {
                        role: "assistant",
                        content,
                    });
                }
            }
            Turn::Results { results, then_user } => {
                let mut content: Vec<ContentBlock<'a>> = results
                    .iter()
                    .map(|r| ContentBlock::ToolResult {
                        tool_use_id: r.call_id,
                        content: ResultContents(&r.blocks),
                        is_error: r.is_error,
                    })
                    .collect();
                content.extend(
                    then_user
                        .iter()
                        .filter(|t| !t.is_empty())
                        .map(|t| ContentBlock::Text { text: t }),
                );
                messages.push(RequestMessage {
                    role: "user",
                    content,
                });
            }
        }
    }
    Request {
        model: &options.model,
        max_tokens: options.max_tokens,
        system: view.system.as_deref(),
        messages,
        tools: options
            .tools
            .iter()
            .map(|t| Tool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.input_schema,
            })
            .collect(),
        stream: options.stream,
    }
}

fn result_content<'a>(block: &'a Block<'_>) -> ResultContent<'a> {
    match block {
        Block::Text(text) => ResultContent::Text { text },
        Block::Placeholder(p) => ResultContent::Text { text: p.text() },
        Block::Media(m) => {
            let source = match &m.data {
                MediaData::Base64(data) => MediaSource::Base64 {
                    media_type: &m.mime,
                    data,
                },
                MediaData::Url(url) => MediaSource::Url { url },
            };
            match m.class {
                MediaClass::Pdf => ResultContent::Document {
                    source,
                    title: m.name.as_deref(),
                },
                // Routing sends only images and PDFs here; anything else would be a bug
                // upstream, and an image block is the closest valid shape.
                _ => ResultContent::Image { source },
            }
        }
    }
}

#[derive(Debug, Deserialize)]
struct Response {
    #[serde(default)]
    content: Vec<ResponseBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<ResponseUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponseBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Json,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize, Default)]
struct ResponseUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// Decodes a non-streaming response body.
pub(crate) fn decode_response(body: &Json) -> Result<AssistantReply, DecodeError> {
    let response: Response =
        serde_json::from_value(body.clone()).map_err(|e| DecodeError::new(NAME, e.to_string()))?;
    let mut reply = AssistantReply {
        stop_reason: response.stop_reason,
        usage: response.usage.map(|u| Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }),
        ..AssistantReply::default()
    };
    for block in response.content {
        match block {
            ResponseBlock::Text { text } => reply.text.push_str(&text),
            ResponseBlock::ToolUse { id, name, input } => {
                reply.tool_calls.push(ToolCall::new(id, name, input))
            }
            ResponseBlock::Other => {}
        }
    }
    Ok(reply)
}

/// Accumulates `message_start` … `message_stop` stream events into a reply.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    reply: AssistantReply,
    /// Content blocks by index: `Some((id, name, partial json))` for tool_use blocks.
    blocks: Vec<Option<(String, String, String)>>,
    /// `message_stop` arrived: the reply is whole.
    stopped: bool,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        StreamDecoder::default()
    }

    /// Whether the stream's final event arrived.
    pub(crate) fn is_complete(&self) -> bool {
        self.stopped
    }

    /// Feeds one event's `data` JSON. Returns text to show as it arrives.
    pub(crate) fn push(&mut self, event: &Json) -> Result<Option<String>, DecodeError> {
        let kind = event.get("type").and_then(Json::as_str).unwrap_or("");
        let index = event.get("index").and_then(Json::as_u64).unwrap_or(0) as usize;
        match kind {
            "message_start" => {
                if let Some(u) = event
                    .pointer("/message/usage/input_tokens")
                    .and_then(Json::as_u64)
                {
                    self.reply
                        .usage
                        .get_or_insert_with(Usage::default)
                        .input_tokens = u;
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").ok_or_else(|| {
                    DecodeError::new(NAME, "content_block_start without content_block")
                })?;
                if self.blocks.len() <= index {
                    self.blocks.resize(index + 1, None);
                }
                if block.get("type").and_then(Json::as_str) == Some("tool_use") {
                    let id = block
                        .get("id")
                        .and_then(Json::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let name = block
                        .get("name")
                        .and_then(Json::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    self.blocks[index] = Some((id, name, String::new()));
                } else if let Some(text) = block.get("text").and_then(Json::as_str) {
                    self.reply.text.push_str(text);
                }
            }
            "content_block_delta" => {
                let delta = event.get("delta").cloned().unwrap_or_default();
                match delta.get("type").and_then(Json::as_str) {
                    Some("text_delta") => {
                        let text = delta.get("text").and_then(Json::as_str).unwrap_or_default();
                        self.reply.text.push_str(text);
                        return Ok(Some(text.to_owned()));
                    }
                    Some("input_json_delta") => {
                        let part = delta
                            .get("partial_json")
                            .and_then(Json::as_str)
                            .unwrap_or_default();
                        match self.blocks.get_mut(index) {
                            Some(Some((_, _, json))) => json.push_str(part),
                            _ => {
                                return Err(DecodeError::new(
                                    NAME,
                                    format!(
                                        "input_json_delta for block {index}, which is not a tool_use"
                                    ),
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(Some((id, name, json))) = self.blocks.get_mut(index).map(Option::take) {
                    self.reply
                        .tool_calls
                        .push(ToolCall::new(id, name, parse_arguments(&json)));
                }
            }
            "message_stop" => self.stopped = true,
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Json::as_str) {
                    self.reply.stop_reason = Some(reason.to_owned());
                }
                if let Some(u) = event.pointer("/usage/output_tokens").and_then(Json::as_u64) {
                    self.reply
                        .usage
                        .get_or_insert_with(Usage::default)
                        .output_tokens = u;
                }
            }
            "error" => {
                let message = event
                    .pointer("/error/message")
                    .and_then(Json::as_str)
                    .unwrap_or("stream error");
                return Err(DecodeError::new(NAME, message));
            }
            _ => {}
        }
        Ok(None)
    }

    pub(crate) fn finish(self) -> AssistantReply {
        self.reply
    }
}

stream_decode!(StreamDecoder);

/// Anthropic Messages.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Anthropic;

impl ProviderFormat for Anthropic {
    fn name(&self) -> &'static str {
        NAME
    }

    fn default_model(&self) -> &'static str {
        "claude-sonnet-4-5"
    }

    fn default_base_url(&self) -> &'static str {
        "https://api.anthropic.com"
    }

    fn key_var(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn base_url_var(&self) -> &'static str {
        "ANTHROPIC_BASE_URL"
    }

    fn key_optional_with_base_url(&self) -> bool {
        false
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)> {
        match api_key {
            Some(key) => vec![
                ("x-api-key", key.to_owned()),
                ("anthropic-version", "2023-06-01".to_owned()),
            ],
            None => Vec::new(),
        }
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/v1/messages")
    }

    fn streaming_body(&self, body: &mut Json) {
        super::set_stream_flag(body);
    }

    module_codec!();

    fn media(&self) -> MediaSupport {
        MediaSupport {
            image_types: crate::media::COMMON_IMAGE_TYPES,
            pdf: true,
            audio_video: false,
            urls: true,
        }
    }
}
