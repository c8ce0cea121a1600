//! The provider-neutral conversation: what a session holds, free of any provider's JSON.

use serde::{Deserialize, Serialize};
/// The conversation vocabulary is core's, shared with the store and the runtime: what is
/// stored is what is encoded, with no look-alike types converted in between. Imported
/// from `toolwire_core` by callers (one public path); the crate's own modules name them here.
pub(crate) use toolwire_core::{Message, ToolCall};

/// A conversation as stored: ordered messages. Tool results hold the canonical
/// [`toolwire_core::ToolResult`], so the same stored value feeds every provider's view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
}

impl Conversation {
    /// A conversation of these messages.
    pub fn new(messages: Vec<Message>) -> Self {
        Conversation { messages }
    }

    /// Appends a message at the end.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }
}

/// Its messages, borrowed: what [`crate::build_view`] and the encoders read.
impl<'a> IntoIterator for &'a Conversation {
    type Item = &'a Message;
    type IntoIter = std::slice::Iter<'a, Message>;

    fn into_iter(self) -> Self::IntoIter {
        self.messages.iter()
    }
}
