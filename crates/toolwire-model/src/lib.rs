//! toolwire-model: what a model sees of a conversation, in each provider's format.
//!
//! [`encode_request`] turns a [`Conversation`] into the exact request body for Anthropic
//! Messages, OpenAI Chat Completions, OpenAI Responses or Gemini generateContent: calls and
//! results paired in call order, per-kind text, budgets, media routed, widgets and
//! user-only values left out. [`ProviderClient`] sends it; each [`Provider`]'s
//! [`ProviderFormat`] decodes the replies.

#![warn(missing_docs)]

mod blob;
mod budget;
mod client;
mod conversation;
mod encode;
mod formats;
mod json;
mod media;
mod note;
mod options;
mod pairing;
mod provider;
mod read;
mod render;
mod truncate;
mod view;

pub use blob::{BlobError, BlobFuture, BlobReader, MemoryBlobs, NoBlobs};
pub use client::{ClientConfig, ClientError, DEFAULT_MAX_REPLY_BYTES, ProviderClient, RetryPolicy};
pub use conversation::Conversation;
pub use encode::{EncodeError, encode_request, encode_request_bytes, encode_view};
pub use formats::{AssistantReply, DecodeError, ProviderFormat, StreamDecode, Usage};
pub use media::{MediaRoute, MediaSupport};
pub use note::{EncodeNote, NoteCode};
pub use options::{DEFAULT_MAX_CHARS, EncodeOptions, ToolSpec, TruncationBudget};
pub use provider::{Provider, UnknownProvider};
pub use read::{DEFAULT_READ_CHARS, ReadError, ReadRequest, read, read_part};
pub use render::MediaClass;
pub use truncate::{CutContext, Weight, cut_diff, cut_json, cut_lines, cut_text, cut_value};
pub use view::{
    Block, Blocks, InlineMedia, MediaData, MediaPlaceholder, ModelView, ResultView, Turn,
    build_view,
};

/// A denied approval as the result the model gets: an error that says the user denied it.
pub fn denied_result(
    call: toolwire_core::CallRef,
    reason: Option<&str>,
) -> toolwire_core::ToolResult {
    let message = match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("The user denied this tool call: {reason}"),
        None => "The user denied this tool call.".to_owned(),
    };
    toolwire_core::ToolResult::error_with_code(call, "denied", message)
}
