//! Which provider an agent of the host talks to, and with which model.

use toolwire_model::Provider;
use toolwire_model::{ClientConfig, ClientError};

use crate::{AgentConfig, DEFAULT_MAX_ITERATIONS};

/// Which provider an agent talks to, and how. Everything is optional: the provider
/// defaults to the first whose key is set, the model to the provider's default.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// The provider; the first whose API key is set when `None`.
    pub provider: Option<Provider>,
    /// The model; the provider's default when `None`.
    pub model: Option<String>,
    /// Another endpoint, e.g. a local OpenAI-compatible server; no key is then required.
    pub base_url: Option<String>,
    /// Model requests per user message before the turn stops.
    pub max_iterations: u32,
    /// Stream replies, emitting text as it arrives.
    pub stream: bool,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            provider: None,
            model: None,
            base_url: None,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            stream: true,
        }
    }
}

impl ProviderSettings {
    /// The provider asked for, else the first one the environment configures, else
    /// Anthropic (whose missing key then makes a clear error).
    pub fn provider(&self) -> Provider {
        self.provider.unwrap_or_else(|| {
            Provider::ALL
                .into_iter()
                .find(|p| ClientConfig::from_env(*p).is_ok())
                .unwrap_or(Provider::Anthropic)
        })
    }

    /// Where to connect: `base_url` (the key optional), else the provider's usual
    /// variables.
    pub fn client_config(&self) -> Result<ClientConfig, ClientError> {
        let provider = self.provider();
        let from_env = ClientConfig::from_env(provider);
        match &self.base_url {
            Some(url) => Ok(ClientConfig::new(
                provider,
                url,
                from_env.ok().and_then(|c| c.api_key),
            )),
            None => from_env,
        }
    }

    /// The agent configuration these settings give.
    pub fn agent_config(&self) -> AgentConfig {
        let provider = self.provider();
        let mut config = AgentConfig::new(
            self.model
                .clone()
                .unwrap_or_else(|| provider.default_model().to_owned()),
        );
        config.max_iterations = self.max_iterations;
        config.stream = self.stream;
        config
    }
}
