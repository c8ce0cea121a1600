//! The provider flags `chat` and `serve` share, and the settings they make.

use anyhow::Result;
use toolwire_agent::ProviderSettings;
use toolwire_model::ClientError;
use toolwire_model::Provider;

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ProviderArgs {
    /// anthropic, openai-chat, openai-responses or gemini (default: the first whose API
    /// key is set, else anthropic).
    #[arg(long, env = "TOOLWIRE_PROVIDER")]
    pub provider: Option<Provider>,
    /// The model (default per provider, e.g. claude-sonnet-4-5, gpt-4.1, gemini-2.5-flash).
    #[arg(long, env = "TOOLWIRE_MODEL")]
    pub model: Option<String>,
    /// Another endpoint for the provider, e.g. a local OpenAI-compatible server
    /// (http://127.0.0.1:11434/v1); no API key is then required.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

impl ProviderArgs {
    /// Whether any provider was asked for (`serve` runs without one).
    pub(crate) fn given(&self) -> bool {
        self.provider.is_some() || self.base_url.is_some()
    }

    /// The settings, checked now: a missing key is the most common mistake, and its
    /// message says which variable to set.
    pub(crate) fn settings(&self, max_iterations: u32, stream: bool) -> Result<ProviderSettings> {
        let settings = ProviderSettings {
            provider: self.provider,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            max_iterations,
            stream,
        };
        settings.client_config().map_err(|e| match e {
            ClientError::MissingKey { provider, var } => anyhow::anyhow!(
                "no API key for {provider}: set {var} (or pass --base-url for a local server)"
            ),
            other => other.into(),
        })?;
        Ok(settings)
    }
}
