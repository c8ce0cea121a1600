//! Encode notes: what encoding repaired or left out, so nothing is dropped silently (the
//! payload-level notes of normalizing are `toolwire_normalize::Diagnostic`, another meaning).

use serde::Serialize;

/// What an [`EncodeNote`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteCode {
    /// A result whose call id matches no call of the assistant turn before it.
    OrphanResult,
    /// A second result for a call that already has one.
    DuplicateResult,
    /// A call without a result got an "interrupted" error result.
    SynthesizedResult,
    /// Media the provider cannot take, or older than the inline window, became text.
    MediaPlaceholder,
    /// A blob could not be read; a placeholder was sent instead.
    BlobUnavailable,
    /// A result was cut to its budget.
    Truncated,
    /// A well-known value whose data did not match its kind was sent as JSON.
    InvalidValue,
    /// The session begins with a model turn (calls another agent made through the
    /// gateway): a user turn saying so was put before it, as providers refuse a model turn
    /// first.
    OpeningTurn,
}

/// Something encoding repaired or left out, for logs and `toolwire export`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EncodeNote {
    /// What happened.
    pub code: NoteCode,
    /// The call it concerns, when it concerns one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// What happened, in words.
    pub message: String,
}

/// `call_1: result of run cut to 60000 chars`, or the message alone.
impl std::fmt::Display for EncodeNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.call_id {
            Some(id) => write!(f, "{id}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl EncodeNote {
    /// A note of `code` about `call_id`.
    pub fn new(code: NoteCode, call_id: Option<&str>, message: impl Into<String>) -> Self {
        EncodeNote {
            code,
            call_id: call_id.map(str::to_owned),
            message: message.into(),
        }
    }
}
