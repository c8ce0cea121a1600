//! The one entry point the binary and the runtime call: a conversation in, a request body out.

use serde_json::Value as Json;

use crate::blob::BlobReader;
use crate::conversation::{Conversation, Message};
use crate::note::EncodeNote;
use crate::options::EncodeOptions;
use crate::provider::Provider;
use crate::view::{ModelView, build_view};

/// Why a request body could not be produced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The request could not be written as JSON.
    #[error("could not serialize the {provider} request: {source}")]
    Serialize {
        /// The provider whose format was being written.
        provider: Provider,
        /// What serde_json said.
        #[source]
        source: serde_json::Error,
    },
}

/// Serializes the view into `provider`'s request body.
pub fn encode_view(
    provider: Provider,
    view: &ModelView,
    options: &EncodeOptions,
) -> Result<Json, EncodeError> {
    provider
        .format()
        .encode(view, options)
        .map_err(|source| EncodeError::Serialize { provider, source })
}

/// The exact request body for `provider`, and what was repaired or left out on the way
/// (orphan results dropped, interrupted calls answered, media as placeholders, cuts).
pub async fn encode_request(
    provider: Provider,
    conversation: &Conversation,
    options: &EncodeOptions,
    blobs: &dyn BlobReader,
) -> Result<(Json, Vec<EncodeNote>), EncodeError> {
    let mut diags = Vec::new();
    let view = build_view(provider, conversation, options, blobs, &mut diags).await;
    let body = encode_view(provider, &view, options)?;
    Ok((body, diags))
}

/// The bytes sent: [`encode_request`]'s body, written straight from the view without
/// building a JSON tree first (byte for byte what `serde_json::to_vec` writes of
/// [`encode_request`]'s body; tests/golden.rs and tests/bytes.rs check it). This is what
/// [`crate::ProviderClient::send_bytes`] sends and `toolwire export` prints. `conversation`
/// is a [`Conversation`] or messages borrowed where they are held (the agent loop's stored
/// session), so no copy of the session is made for a request.
pub async fn encode_request_bytes<'a>(
    provider: Provider,
    conversation: impl IntoIterator<Item = &'a Message>,
    options: &EncodeOptions,
    blobs: &dyn BlobReader,
) -> Result<(Vec<u8>, Vec<EncodeNote>), EncodeError> {
    let mut diags = Vec::new();
    let view = build_view(provider, conversation, options, blobs, &mut diags).await;
    let body = provider
        .format()
        .encode_bytes(&view, options)
        .map_err(|source| EncodeError::Serialize { provider, source })?;
    Ok((body, diags))
}
