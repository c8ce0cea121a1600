//! toolwire-model: what a model sees of a conversation, in each provider's format.
//!
//! [`encode_request`] turns a [`Conversation`] into the exact request body for Anthropic
//! Messages, OpenAI Chat Completions, OpenAI Responses or Gemini generateContent: calls and
//! results paired in call order, per-kind text, budgets, media routed, widgets and
//! user-only values left out. [`client`] sends it; [`formats`] decodes the replies.

pub mod blob;
pub mod budget;
pub mod client;
pub mod conversation;
mod encode;
pub mod formats;
pub mod media;
pub mod note;
pub mod options;
pub mod pairing;
pub mod provider;
pub mod read;
pub mod render;
pub mod truncate;
pub mod view;

pub use blob::{BlobError, BlobReader, MemoryBlobs, NoBlobs};
pub use conversation::{Conversation, Message, ToolCall};
pub use encode::{EncodeError, encode_request, encode_view};
pub use formats::{AssistantReply, DecodeError, Usage};
pub use note::{EncodeNote, NoteCode};
pub use options::{EncodeOptions, Provider, ToolSpec, TruncationBudget};
pub use view::ModelView;

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
