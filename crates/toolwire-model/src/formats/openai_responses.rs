//! OpenAI Responses: request body, response and stream decoding.
//!
//! Pairing: each call is a `function_call` item and each result a `function_call_output`
//! item with the same `call_id`, in call order. Images are `input_image` and PDFs
//! `input_file` items inside the output array.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value as Json;

use super::ProviderFormat;
use super::{AssistantReply, DecodeError, Usage, arguments_json, error_prefixed, parse_arguments};
use crate::conversation::ToolCall;
use crate::media::MediaSupport;
use crate::options::EncodeOptions;
use crate::render::MediaClass;
use crate::view::{Block, MediaData, ModelView, ResultView, Turn};

const NAME: &str = "openai-responses";

/// The request body, borrowing the view's texts and the options' values (see
/// `anthropic::Request`); only text this format changes (an error's prefix, a data URL,
/// arguments as a JSON string) is owned.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<&'a str>,
    pub input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    pub max_output_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Item<'a> {
    Message {
        role: &'static str,
        content: &'a str,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        /// A JSON string.
        arguments: String,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Output<'a>,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Output<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<OutputPart<'a>>),
}

// The variants are the API's `type` values (`input_text`, ...), prefix and all.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum OutputPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        image_url: Cow<'a, str>,
        detail: &'static str,
    },
    InputFile {
        #[serde(skip_serializing_if = "Option::is_none")]
        file_data: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        file_url: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<&'a str>,
    },
}

#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub description: &'a str,
    pub parameters: &'a Json,
    /// Strict mode would reject the open schemas MCP tools publish.
    pub strict: bool,
}

/// The request body for `POST /responses`.
pub(crate) fn encode<'a>(view: &'a ModelView, options: &'a EncodeOptions) -> Request<'a> {
    let mut input = Vec::with_capacity(view.turns.len() * 2);
    for turn in &view.turns {
        match turn {
            Turn::User(text) => input.push(Item::Message {
                role: "user",
                content: text,
            }),
            Turn::Assistant { text, calls } => {
                if !text.is_empty() {
                    input.push(Item::Message {
                        role: "assistant",
                        content: text,
                    });
                }
                input.extend(calls.iter().map(|c| Item::FunctionCall {
                    call_id: &c.id,
                    name: &c.name,
                    arguments: arguments_json(&c.input),
                }));
            }
            Turn::Results { results, then_user } => {
                input.extend(results.iter().map(|r| Item::FunctionCallOutput {
                    call_id: r.call_id,
                    output: output(r),
                }));
                input.extend(then_user.iter().map(|t| Item::Message {
                    role: "user",
                    content: t,
                }));
            }
        }
    }
    Request {
        model: &options.model,
        instructions: view.system.as_deref(),
        input,
        tools: options
            .tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                name: &t.name,
                description: &t.description,
                parameters: &t.input_schema,
                strict: false,
            })
            .collect(),
        max_output_tokens: options.max_tokens,
        stream: options.stream,
    }
}

/// A plain string when the result is only text, else a list of input parts.
fn output<'a>(r: &'a ResultView) -> Output<'a> {
    let mut first_text = true;
    let mut text_of = |t: &'a str| -> Cow<'a, str> {
        let text = if r.is_error && first_text {
            Cow::Owned(error_prefixed(t))
        } else {
            Cow::Borrowed(t)
        };
        first_text = false;
        text
    };
    if let [block] = r.blocks.as_slice()
        && let Some(t) = block.as_text()
    {
        return Output::Text(text_of(t));
    }
    let mut parts = Vec::with_capacity(r.blocks.len() + 1);
    if r.is_error && r.blocks.first().and_then(Block::as_text).is_none() {
        parts.push(OutputPart::InputText { text: text_of("") });
    }
    for block in r.blocks.iter() {
        parts.push(match block {
            Block::Text(t) => OutputPart::InputText { text: text_of(t) },
            Block::Placeholder(p) => OutputPart::InputText {
                text: text_of(p.text()),
            },
            Block::Media(m) if m.class == MediaClass::Pdf => match &m.data {
                MediaData::Base64(_) => OutputPart::InputFile {
                    file_data: Some(Cow::Owned(m.data.as_url(&m.mime))),
                    file_url: None,
                    filename: Some(m.name.as_deref().unwrap_or("document.pdf")),
                },
                MediaData::Url(url) => OutputPart::InputFile {
                    file_data: None,
                    file_url: Some(url),
                    filename: m.name.as_deref(),
                },
            },
            Block::Media(m) => OutputPart::InputImage {
                image_url: m.data.url(&m.mime),
                detail: "auto",
            },
        });
    }
    Output::Parts(parts)
}

fn usage_of(response: &Json) -> Option<Usage> {
    let u = response.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: u.get("input_tokens").and_then(Json::as_u64).unwrap_or(0),
        output_tokens: u.get("output_tokens").and_then(Json::as_u64).unwrap_or(0),
    })
}

/// Decodes a non-streaming response body (also the `response` of `response.completed`).
pub(crate) fn decode_response(body: &Json) -> Result<AssistantReply, DecodeError> {
    let items = body
        .get("output")
        .and_then(Json::as_array)
        .ok_or_else(|| DecodeError::new(NAME, "response without an output array"))?;
    let mut reply = AssistantReply {
        stop_reason: body.get("status").and_then(Json::as_str).map(str::to_owned),
        usage: usage_of(body),
        ..AssistantReply::default()
    };
    for item in items {
        match item.get("type").and_then(Json::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part.get("type").and_then(Json::as_str) == Some("output_text") {
                        reply
                            .text
                            .push_str(part.get("text").and_then(Json::as_str).unwrap_or_default());
                    }
                }
            }
            Some("function_call") => {
                let id = item
                    .get("call_id")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                let name = item.get("name").and_then(Json::as_str).unwrap_or_default();
                let args = item
                    .get("arguments")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                reply
                    .tool_calls
                    .push(ToolCall::new(id, name, parse_arguments(args)));
            }
            _ => {}
        }
    }
    Ok(reply)
}

/// Accumulates Responses stream events. `response.completed` carries the whole response,
/// which is authoritative; deltas are returned for display as they come.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    text: String,
    /// Function calls by output index: (call_id, name, arguments).
    calls: Vec<Option<(String, String, String)>>,
    completed: Option<AssistantReply>,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        StreamDecoder::default()
    }

    /// Whether the stream's final event (a finish reason, or the completed response)
    /// arrived.
    pub(crate) fn is_complete(&self) -> bool {
        self.completed.is_some()
    }

    pub(crate) fn push(&mut self, event: &Json) -> Result<Option<String>, DecodeError> {
        let index = event
            .get("output_index")
            .and_then(Json::as_u64)
            .unwrap_or(0) as usize;
        match event.get("type").and_then(Json::as_str).unwrap_or("") {
            "response.output_text.delta" => {
                let delta = event
                    .get("delta")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                self.text.push_str(delta);
                return Ok(Some(delta.to_owned()));
            }
            "response.output_item.added" | "response.output_item.done" => {
                let item = event.get("item").cloned().unwrap_or_default();
                if item.get("type").and_then(Json::as_str) == Some("function_call") {
                    if self.calls.len() <= index {
                        self.calls.resize(index + 1, None);
                    }
                    let field = |k: &str| {
                        item.get(k)
                            .and_then(Json::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    };
                    let args = field("arguments");
                    let slot = self.calls[index].get_or_insert_with(Default::default);
                    slot.0 = field("call_id");
                    slot.1 = field("name");
                    if !args.is_empty() {
                        slot.2 = args;
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = event
                    .get("delta")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                match self.calls.get_mut(index) {
                    Some(Some(slot)) => slot.2.push_str(delta),
                    _ => {
                        return Err(DecodeError::new(
                            NAME,
                            format!("arguments delta for unknown output {index}"),
                        ));
                    }
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(response) = event.get("response") {
                    self.completed = Some(decode_response(response)?);
                }
            }
            "response.failed" | "error" => {
                let message = event
                    .pointer("/response/error/message")
                    .or_else(|| event.get("message"))
                    .or_else(|| event.pointer("/error/message"))
                    .and_then(Json::as_str)
                    .unwrap_or("stream failed");
                return Err(DecodeError::new(NAME, message));
            }
            _ => {}
        }
        Ok(None)
    }

    pub(crate) fn finish(self) -> AssistantReply {
        if let Some(reply) = self.completed {
            return reply;
        }
        AssistantReply {
            text: self.text,
            tool_calls: self
                .calls
                .into_iter()
                .flatten()
                .map(|(id, name, args)| ToolCall::new(id, name, parse_arguments(&args)))
                .collect(),
            ..AssistantReply::default()
        }
    }
}

stream_decode!(StreamDecoder);

/// OpenAI Responses.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OpenaiResponses;

impl ProviderFormat for OpenaiResponses {
    fn name(&self) -> &'static str {
        NAME
    }

    openai_account!();

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/responses")
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
