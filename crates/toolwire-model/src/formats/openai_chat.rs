//! OpenAI Chat Completions (also ollama, llama.cpp, vLLM): request body, response and
//! stream decoding.
//!
//! Pairing: one `role: "tool"` message per call, in call order, right after the assistant
//! message. Tool messages take no images, so an image is a placeholder in the tool message
//! and travels in one user message after the last tool message.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value as Json;

use super::ProviderFormat;
use super::{
    AssistantReply, DecodeError, Usage, arguments_json, error_prefixed, joined_text,
    parse_arguments,
};
use crate::conversation::ToolCall;
use crate::media::MediaSupport;
use crate::options::EncodeOptions;
use crate::view::{ModelView, Turn};

const NAME: &str = "openai-chat";

/// The request body, borrowing the view's texts and the options' values (see
/// `anthropic::Request`); only text this format builds (a tool message's joined parts,
/// arguments as a JSON string, a data URL) is owned.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    pub max_completion_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(crate) enum RequestMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        /// `null` when the assistant only called tools.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<RequestToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum UserContent<'a> {
    Text(&'a str),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum UserPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl<'a> },
}

#[derive(Debug, Serialize)]
pub(crate) struct ImageUrl<'a> {
    pub url: Cow<'a, str>,
}

#[derive(Debug, Serialize)]
pub(crate) struct RequestToolCall<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall<'a> {
    pub name: &'a str,
    /// A JSON string, as the API requires.
    pub arguments: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct Tool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionSpec<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionSpec<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub description: &'a str,
    pub parameters: &'a Json,
}

/// The request body for `POST /chat/completions`.
pub(crate) fn encode<'a>(view: &'a ModelView, options: &'a EncodeOptions) -> Request<'a> {
    let mut messages = Vec::with_capacity(view.turns.len() * 2);
    if let Some(system) = &view.system {
        messages.push(RequestMessage::System { content: system });
    }
    for turn in &view.turns {
        match turn {
            Turn::User(text) => messages.push(RequestMessage::User {
                content: UserContent::Text(text),
            }),
            Turn::Assistant { text, calls } => {
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                messages.push(RequestMessage::Assistant {
                    content: (!text.is_empty()).then_some(*text),
                    tool_calls: calls
                        .iter()
                        .map(|c| RequestToolCall {
                            id: &c.id,
                            kind: "function",
                            function: FunctionCall {
                                name: &c.name,
                                arguments: arguments_json(&c.input),
                            },
                        })
                        .collect(),
                });
            }
            Turn::Results { results, then_user } => {
                let mut follow_up: Vec<UserPart<'a>> = Vec::new();
                for r in results {
                    let mut images = Vec::new();
                    let text = joined_text(&r.blocks, |m| {
                        images.push(UserPart::ImageUrl {
                            image_url: ImageUrl {
                                url: m.data.url(&m.mime),
                            },
                        });
                        Cow::Owned(format!(
                            "{} (attached in the next user message)",
                            m.placeholder.text()
                        ))
                    });
                    messages.push(RequestMessage::Tool {
                        tool_call_id: r.call_id,
                        content: if r.is_error {
                            Cow::Owned(error_prefixed(&text))
                        } else {
                            text
                        },
                    });
                    if !images.is_empty() {
                        follow_up.push(UserPart::Text {
                            text: Cow::Owned(format!(
                                "Images returned by tool call {} ({}):",
                                r.call_id, r.tool_name
                            )),
                        });
                        follow_up.extend(images);
                    }
                }
                follow_up.extend(then_user.iter().map(|t| UserPart::Text {
                    text: Cow::Borrowed(*t),
                }));
                if !follow_up.is_empty() {
                    messages.push(RequestMessage::User {
                        content: UserContent::Parts(follow_up),
                    });
                }
            }
        }
    }
    Request {
        model: &options.model,
        messages,
        tools: options
            .tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                function: FunctionSpec {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.input_schema,
                },
            })
            .collect(),
        max_completion_tokens: options.max_tokens,
        stream: options.stream,
        stream_options: options.stream.then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

fn usage_of(v: &Json) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: u.get("prompt_tokens").and_then(Json::as_u64).unwrap_or(0),
        output_tokens: u
            .get("completion_tokens")
            .and_then(Json::as_u64)
            .unwrap_or(0),
    })
}

/// Decodes a non-streaming response body (the first choice).
pub(crate) fn decode_response(body: &Json) -> Result<AssistantReply, DecodeError> {
    let choice = body
        .pointer("/choices/0")
        .ok_or_else(|| DecodeError::new(NAME, "no choices in response"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| DecodeError::new(NAME, "choice without message"))?;
    let mut reply = AssistantReply {
        text: message
            .get("content")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned(),
        stop_reason: choice
            .get("finish_reason")
            .and_then(Json::as_str)
            .map(str::to_owned),
        usage: usage_of(body),
        ..AssistantReply::default()
    };
    for call in message
        .get("tool_calls")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let id = call.get("id").and_then(Json::as_str).unwrap_or_default();
        let name = call
            .pointer("/function/name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let args = call
            .pointer("/function/arguments")
            .and_then(Json::as_str)
            .unwrap_or_default();
        reply
            .tool_calls
            .push(ToolCall::new(id, name, parse_arguments(args)));
    }
    Ok(reply)
}

/// Accumulates `chat.completion.chunk` events; tool calls arrive in pieces keyed by index.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    reply: AssistantReply,
    /// `(id, name, arguments)` in order of first appearance.
    calls: Vec<(String, String, String)>,
    /// The call each stream `index` currently feeds.
    open: std::collections::HashMap<usize, usize>,
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

    /// Feeds one chunk. Returns text to show as it arrives.
    pub(crate) fn push(&mut self, chunk: &Json) -> Result<Option<String>, DecodeError> {
        if let Some(message) = chunk.pointer("/error/message").and_then(Json::as_str) {
            return Err(DecodeError::new(NAME, message));
        }
        if let Some(usage) = usage_of(chunk) {
            self.reply.usage = Some(usage);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(None);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Json::as_str) {
            self.reply.stop_reason = Some(reason.to_owned());
        }
        let delta = choice.get("delta").cloned().unwrap_or_default();
        for call in delta
            .get("tool_calls")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Json::as_u64).unwrap_or(0) as usize;
            let id = call
                .get("id")
                .and_then(Json::as_str)
                .filter(|id| !id.is_empty());
            // A new id on an index already in use is a new call: some compatible servers
            // (ollama) send every parallel call with index 0.
            let slot = match self.open.get(&index) {
                Some(&at)
                    if !id.is_some_and(|id| {
                        !self.calls[at].0.is_empty() && self.calls[at].0 != id
                    }) =>
                {
                    at
                }
                _ => {
                    self.calls.push(Default::default());
                    self.open.insert(index, self.calls.len() - 1);
                    self.calls.len() - 1
                }
            };
            let slot = &mut self.calls[slot];
            if let (Some(id), true) = (id, slot.0.is_empty()) {
                slot.0 = id.to_owned();
            }
            match call.pointer("/function/name").and_then(Json::as_str) {
                // Some servers repeat the whole name in every chunk; OpenAI sends it once.
                Some(name) if slot.1.is_empty() || slot.1 == name => slot.1 = name.to_owned(),
                Some(name) => slot.1.push_str(name),
                None => {}
            }
            if let Some(args) = call.pointer("/function/arguments").and_then(Json::as_str) {
                slot.2.push_str(args);
            }
        }
        let text = delta
            .get("content")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if text.is_empty() {
            return Ok(None);
        }
        self.reply.text.push_str(text);
        Ok(Some(text.to_owned()))
    }

    pub(crate) fn finish(mut self) -> AssistantReply {
        self.reply.tool_calls = self
            .calls
            .into_iter()
            // Only an index gap (nothing at all arrived for it) is skipped: a call with
            // arguments but no id or name is still a call, and must still be answered.
            .filter(|(id, name, args)| !(id.is_empty() && name.is_empty() && args.is_empty()))
            .map(|(id, name, args)| ToolCall::new(id, name, parse_arguments(&args)))
            .collect();
        self.reply
    }
}

stream_decode!(StreamDecoder);

/// OpenAI Chat Completions, also spoken by ollama, llama.cpp and vLLM.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OpenaiChat;

impl ProviderFormat for OpenaiChat {
    fn name(&self) -> &'static str {
        NAME
    }

    openai_account!();

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/chat/completions")
    }

    fn streaming_body(&self, body: &mut Json) {
        super::set_stream_flag(body);
        if let Some(obj) = body.as_object_mut() {
            // Usage arrives only when asked for, in a last chunk without choices.
            obj.insert(
                "stream_options".into(),
                serde_json::json!({"include_usage": true}),
            );
        }
    }

    module_codec!();

    fn media(&self) -> MediaSupport {
        MediaSupport {
            image_types: crate::media::COMMON_IMAGE_TYPES,
            pdf: false,
            audio_video: false,
            urls: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(chunks: &[Json]) -> AssistantReply {
        let mut d = StreamDecoder::new();
        for c in chunks {
            d.push(c).unwrap();
        }
        d.finish()
    }

    fn call_delta(index: u64, id: &str, name: Option<&str>, args: &str) -> Json {
        let mut function = json!({"arguments": args});
        if let Some(n) = name {
            function["name"] = json!(n);
        }
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id, "type": "function", "function": function}]}}]})
    }

    #[test]
    fn a_call_without_id_or_name_is_kept_and_a_gap_is_not() {
        let reply = decode(&[
            call_delta(0, "", None, r#"{"x":1}"#),
            call_delta(2, "c2", Some("ls"), "{}"),
        ]);
        let kept: Vec<(&str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(kept, [("", ""), ("c2", "ls")]);
        assert_eq!(reply.tool_calls[0].input, json!({"x": 1}));
    }

    #[test]
    fn parallel_calls_all_on_index_zero_stay_apart() {
        // As ollama streams them: each call complete, each with index 0.
        let reply = decode(&[
            call_delta(0, "call_a", Some("read_file"), r#"{"path":"a"}"#),
            call_delta(0, "call_b", Some("read_file"), r#"{"path":"b"}"#),
        ]);
        let calls: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.input.clone()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_a", "read_file", json!({"path": "a"})),
                ("call_b", "read_file", json!({"path": "b"}))
            ]
        );
    }

    #[test]
    fn repeated_names_and_empty_continuation_ids_do_not_corrupt_a_call() {
        let reply = decode(&[
            call_delta(0, "call_a", Some("read_file"), "{\"pa"),
            call_delta(0, "", Some("read_file"), "th\":"),
            call_delta(0, "", None, "\"a\"}"),
        ]);
        assert_eq!(reply.tool_calls.len(), 1);
        let c = &reply.tool_calls[0];
        assert_eq!(
            (c.id.as_str(), c.name.as_str(), c.input.clone()),
            ("call_a", "read_file", json!({"path": "a"}))
        );
    }

    #[test]
    fn openai_style_indexed_deltas_still_work() {
        let reply = decode(&[
            call_delta(0, "call_a", Some("read_file"), ""),
            call_delta(1, "call_b", Some("list_dir"), ""),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "{\"path\":\".\"}"}}]}}]}),
        ]);
        let names: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(names, [("call_a", "read_file"), ("call_b", "list_dir")]);
        assert_eq!(reply.tool_calls[1].input, json!({"path": "."}));
    }
}
