//! Gemini generateContent: request body, response and stream decoding.
//!
//! Pairing: the results of one model turn are one content whose `functionResponse` parts
//! match the turn's `functionCall` parts in number and order. Errors are
//! `response: {error}`; media goes in `functionResponse.parts` as `inlineData`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value as Json, json};

use super::ProviderFormat;
use super::{AssistantReply, DecodeError, Usage, arguments_object, joined_text};
use crate::conversation::ToolCall;
use crate::media::MediaSupport;
use crate::options::EncodeOptions;
use crate::view::{MediaData, ModelView, Turn};

const NAME: &str = "gemini";

/// The request body, borrowing the view's texts and the options' values (see
/// `anthropic::Request`); only a result's joined text is owned.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Request<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content<'a>>,
    pub contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    pub generation_config: GenerationConfig,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GenerationConfig {
    pub max_output_tokens: u32,
}

#[derive(Debug, Serialize)]
pub(crate) struct Content<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    pub parts: Vec<Part<'a>>,
}

/// One part of a content. Untagged with explicit keys, because a `thoughtSignature` sits
/// beside `functionCall` in the same part.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Part<'a> {
    Text {
        text: &'a str,
    },
    FunctionCall {
        #[serde(rename = "functionCall")]
        function_call: FunctionCall<'a>,
        #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    FunctionResponse {
        #[serde(rename = "functionResponse")]
        function_response: FunctionResponse<'a>,
    },
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub args: Cow<'a, Map<String, Json>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionResponse<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub response: ResponseText<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ResponsePart<'a>>,
}

/// A function response's `response`: `{"output": text}` or `{"error": text}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResponseText<'a> {
    Output(Cow<'a, str>),
    Error(Cow<'a, str>),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResponsePart<'a> {
    pub inline_data: InlineData<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InlineData<'a> {
    pub mime_type: &'a str,
    pub data: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tool<'a> {
    pub function_declarations: Vec<FunctionDeclaration<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FunctionDeclaration<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub description: &'a str,
    /// Full JSON Schema; the older `parameters` field takes only an OpenAPI subset.
    pub parameters_json_schema: &'a Json,
}

fn text_content<'a>(role: &'static str, text: &'a str) -> Content<'a> {
    Content {
        role: Some(role),
        parts: vec![Part::Text { text }],
    }
}

/// The request body for `POST /v1beta/models/{model}:generateContent` (the model is in the
/// URL, not the body).
pub(crate) fn encode<'a>(view: &'a ModelView, options: &'a EncodeOptions) -> Request<'a> {
    let mut contents = Vec::with_capacity(view.turns.len());
    for turn in &view.turns {
        match turn {
            Turn::User(text) => contents.push(text_content("user", text)),
            Turn::Assistant { text, calls } => {
                let mut parts = Vec::with_capacity(calls.len() + 1);
                if !text.is_empty() {
                    parts.push(Part::Text { text });
                }
                parts.extend(calls.iter().map(|c| Part::FunctionCall {
                    function_call: FunctionCall {
                        id: &c.id,
                        name: &c.name,
                        args: arguments_object(&c.input),
                    },
                    thought_signature: c.signature.as_deref(),
                }));
                if !parts.is_empty() {
                    contents.push(Content {
                        role: Some("model"),
                        parts,
                    });
                }
            }
            Turn::Results { results, then_user } => {
                let parts = results
                    .iter()
                    .map(|r| {
                        let mut media = Vec::new();
                        let text = joined_text(&r.blocks, |m| {
                            // The model reads `response`; it names the attached part.
                            // Routing never sends URL media inline to Gemini.
                            if let MediaData::Base64(data) = &m.data {
                                media.push(ResponsePart {
                                    inline_data: InlineData {
                                        mime_type: &m.mime,
                                        data,
                                    },
                                });
                            }
                            Cow::Borrowed(m.placeholder.text())
                        });
                        let response = if r.is_error {
                            ResponseText::Error(text)
                        } else {
                            ResponseText::Output(text)
                        };
                        Part::FunctionResponse {
                            function_response: FunctionResponse {
                                id: r.call_id,
                                name: r.tool_name,
                                response,
                                parts: media,
                            },
                        }
                    })
                    .collect();
                contents.push(Content {
                    role: Some("user"),
                    parts,
                });
                contents.extend(then_user.iter().map(|t| text_content("user", t)));
            }
        }
    }
    let declarations: Vec<FunctionDeclaration<'a>> = options
        .tools
        .iter()
        .map(|t| FunctionDeclaration {
            name: &t.name,
            description: &t.description,
            parameters_json_schema: &t.input_schema,
        })
        .collect();
    Request {
        system_instruction: view.system.as_deref().map(|s| Content {
            role: None,
            parts: vec![Part::Text { text: s }],
        }),
        contents,
        tools: if declarations.is_empty() {
            Vec::new()
        } else {
            vec![Tool {
                function_declarations: declarations,
            }]
        },
        generation_config: GenerationConfig {
            max_output_tokens: options.max_tokens,
        },
    }
}

/// Decodes a `GenerateContentResponse` (the whole body, or one stream chunk) into `reply`.
/// Calls without an id get a new unique one (`gemini_call_<uuid>`): a call id names a
/// result in the history and in `read_result` markers, so one numbered per reply would
/// repeat in every reply of every session.
fn merge(body: &Json, reply: &mut AssistantReply) -> Result<Option<String>, DecodeError> {
    if let Some(message) = body.pointer("/error/message").and_then(Json::as_str) {
        return Err(DecodeError::new(NAME, message));
    }
    if let Some(u) = body.get("usageMetadata") {
        reply.usage = Some(Usage {
            input_tokens: u
                .get("promptTokenCount")
                .and_then(Json::as_u64)
                .unwrap_or(0),
            // Thinking is output too, as the other providers count it.
            output_tokens: ["candidatesTokenCount", "thoughtsTokenCount"]
                .iter()
                .filter_map(|k| u.get(*k).and_then(Json::as_u64))
                .sum(),
        });
    }
    let Some(candidate) = body.pointer("/candidates/0") else {
        if let Some(reason) = body
            .pointer("/promptFeedback/blockReason")
            .and_then(Json::as_str)
        {
            return Err(DecodeError::new(NAME, format!("prompt blocked: {reason}")));
        }
        return Ok(None);
    };
    if let Some(reason) = candidate.get("finishReason").and_then(Json::as_str) {
        reply.stop_reason = Some(reason.to_owned());
    }
    let mut shown = String::new();
    for part in candidate
        .pointer("/content/parts")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        if part.get("thought").and_then(Json::as_bool) == Some(true) {
            continue;
        }
        if let Some(text) = part.get("text").and_then(Json::as_str) {
            reply.text.push_str(text);
            shown.push_str(text);
        }
        if let Some(call) = part.get("functionCall") {
            let name = call.get("name").and_then(Json::as_str).unwrap_or_default();
            let id = call
                .get("id")
                .and_then(Json::as_str)
                .map_or_else(|| toolwire_core::new_id("gemini_call"), str::to_owned);
            let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
            let mut call = ToolCall::new(id, name, args);
            // Gemini 3 requires the signature back with the call in the next request.
            call.signature = part
                .get("thoughtSignature")
                .and_then(Json::as_str)
                .map(str::to_owned);
            reply.tool_calls.push(call);
        }
    }
    Ok((!shown.is_empty()).then_some(shown))
}

/// Decodes a non-streaming response body.
pub(crate) fn decode_response(body: &Json) -> Result<AssistantReply, DecodeError> {
    if body.get("candidates").is_none()
        && body.get("error").is_none()
        && body.get("promptFeedback").is_none()
    {
        return Err(DecodeError::new(NAME, "response without candidates"));
    }
    let mut reply = AssistantReply::default();
    merge(body, &mut reply)?;
    Ok(reply)
}

/// Accumulates `streamGenerateContent?alt=sse` chunks; each is a partial response.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    reply: AssistantReply,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        StreamDecoder::default()
    }

    /// Whether the stream's final event (a finish reason, or the completed response)
    /// arrived.
    pub(crate) fn is_complete(&self) -> bool {
        self.reply.stop_reason.is_some()
    }

    pub(crate) fn push(&mut self, chunk: &Json) -> Result<Option<String>, DecodeError> {
        merge(chunk, &mut self.reply)
    }

    pub(crate) fn finish(self) -> AssistantReply {
        self.reply
    }
}

stream_decode!(StreamDecoder);

/// Gemini generateContent.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Gemini;

impl ProviderFormat for Gemini {
    fn name(&self) -> &'static str {
        NAME
    }

    fn default_model(&self) -> &'static str {
        "gemini-2.5-flash"
    }

    fn default_base_url(&self) -> &'static str {
        "https://generativelanguage.googleapis.com"
    }

    fn key_var(&self) -> &'static str {
        "GEMINI_API_KEY"
    }

    fn base_url_var(&self) -> &'static str {
        "GEMINI_BASE_URL"
    }

    fn key_optional_with_base_url(&self) -> bool {
        false
    }

    fn headers(&self, api_key: Option<&str>) -> Vec<(&'static str, String)> {
        api_key
            .map(|key| vec![("x-goog-api-key", key.to_owned())])
            .unwrap_or_default()
    }

    fn url(&self, base: &str, model: &str, stream: bool) -> String {
        if stream {
            format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/v1beta/models/{model}:generateContent")
        }
    }

    /// Gemini streams by URL (`streamGenerateContent`), not by a body flag.
    fn streaming_body(&self, _body: &mut Json) {}

    module_codec!();

    fn media(&self) -> MediaSupport {
        MediaSupport {
            image_types: &[
                "image/png",
                "image/jpeg",
                "image/webp",
                "image/heic",
                "image/heif",
            ],
            pdf: false,
            audio_video: true,
            urls: false,
        }
    }
}
