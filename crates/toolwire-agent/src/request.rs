//! The model request an agent sends: its options (model, tools, each tool's result size,
//! system prompt, stream) and its bytes, defined once for the agent loop and for
//! `toolwire export` and the server's `/export`, so an export is the body the client sends.

use toolwire_core::Message;
use toolwire_model::{BlobReader, EncodeError, EncodeNote, EncodeOptions, Provider};
use toolwire_runtime::Registry;
use toolwire_store::{StoredMessage, Stores};

use crate::history::{budget_with_tool_settings, tool_specs};
use crate::{AgentConfig, HostError, StoreBlobs, system_prompt};

/// What an agent sends `provider` besides the session: built from its configuration and
/// its tool set the same way for a turn and for an export.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    provider: Provider,
    /// The system prompt as the first message, when there is one.
    system: Option<Message>,
    options: EncodeOptions,
}

impl ModelRequest {
    /// The request of an agent with `config` and the tools of `registry`: the tools it is
    /// told about, each tool's own result size (folded into its schema where it was made,
    /// e.g. an MCP tool's), and the system prompt for that tool set.
    pub fn new(provider: Provider, config: &AgentConfig, registry: &Registry) -> Self {
        let system = system_prompt(
            &config.instructions,
            registry.names().iter().map(String::as_str),
        );
        let options = EncodeOptions {
            model: config.model.clone(),
            max_tokens: config.max_tokens,
            tools: tool_specs(registry),
            budget: budget_with_tool_settings(&config.budget, registry),
            stream: config.stream,
            ..EncodeOptions::default()
        };
        ModelRequest {
            provider,
            system: (!system.is_empty()).then(|| Message::system(system)),
            options,
        }
    }

    /// A request with the caller's own `options` and `system` prompt (empty for none):
    /// for an embedder that encodes sessions without an agent (the Python package).
    pub fn with_options(provider: Provider, system: &str, options: EncodeOptions) -> Self {
        ModelRequest {
            provider,
            system: (!system.is_empty()).then(|| Message::system(system)),
            options,
        }
    }

    /// The provider it is for.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The encoding options: model, tools, budgets, stream.
    pub fn options(&self) -> &EncodeOptions {
        &self.options
    }

    /// The request body for a stored session, as the bytes sent, and what encoding cut,
    /// repaired or left out. The view borrows the stored messages: nothing of the session
    /// is copied before its bytes are written.
    pub async fn body(
        &self,
        stored: &[StoredMessage],
        blobs: &dyn BlobReader,
    ) -> Result<(Vec<u8>, Vec<EncodeNote>), EncodeError> {
        let messages = self.system.iter().chain(stored.iter().map(|m| &m.content));
        toolwire_model::encode_request_bytes(self.provider, messages, &self.options, blobs).await
    }

    /// [`ModelRequest::body`] of session `session_id` as it is stored now: what the
    /// agent would send next (`toolwire export`, the server's `/export`).
    pub async fn export(
        &self,
        stores: &Stores,
        session_id: &str,
    ) -> Result<(Vec<u8>, Vec<EncodeNote>), HostError> {
        if stores.history().session(session_id).await?.is_none() {
            return Err(HostError::NoSession(session_id.to_owned()));
        }
        let stored = stores.history().load(session_id).await?;
        let blobs = StoreBlobs(std::sync::Arc::clone(stores.blobs()));
        Ok(self.body(&stored, &blobs).await?)
    }
}
