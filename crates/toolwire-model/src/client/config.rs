//! Where and how a client connects: URL, key, timeouts, retries; from the usual env vars.

use std::time::Duration;

use super::ClientError;
use crate::provider::Provider;

/// Retries with exponential backoff, unless the server says how long to wait.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait after the first failure; it doubles with each one after.
    pub base_delay: Duration,
    /// The longest wait, whatever the backoff or the server's `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based).
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
        retry_after.unwrap_or(backoff).min(self.max_delay)
    }
}

/// The default [`ClientConfig::max_reply_bytes`]: 16 MiB, far above any real reply.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 16 << 20;

/// Where and how a [`ProviderClient`](crate::ProviderClient) sends requests; `Debug` leaves out the key.
#[derive(Clone, PartialEq)]
pub struct ClientConfig {
    /// Which API the endpoint speaks.
    pub provider: Provider,
    /// Without the path: `https://api.anthropic.com`, `https://api.openai.com/v1`,
    /// `https://generativelanguage.googleapis.com`, or a local OpenAI-compatible server.
    pub base_url: String,
    /// `None` for local servers that need none.
    pub api_key: Option<String>,
    /// Whole-request limit for non-streaming calls.
    pub timeout: Duration,
    /// Limit on setting up a connection.
    pub connect_timeout: Duration,
    /// Longest silence between bytes, which bounds a stalled stream.
    pub read_timeout: Duration,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// The most bytes of one reply (the body, or all stream events) read before the reply
    /// is refused: a reply is stored and sent back every turn, so a 200 MB one must not be.
    pub max_reply_bytes: usize,
}

/// The key is never printed: configs end up in logs and error reports.
impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("retry", &self.retry)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .finish()
    }
}

impl ClientConfig {
    /// A configuration with the default limits and retries.
    pub fn new(provider: Provider, base_url: impl Into<String>, api_key: Option<String>) -> Self {
        ClientConfig {
            provider,
            base_url: base_url.into(),
            api_key,
            timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
        }
    }

    /// From the provider's variables (e.g. `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`).
    /// A server named by the base-URL variable may go without a key when the format allows
    /// it (OpenAI-compatible local servers).
    pub fn from_env(provider: Provider) -> Result<Self, ClientError> {
        Self::from_lookup(provider, |k| {
            std::env::var(k).ok().filter(|v| !v.is_empty())
        })
    }

    /// [`ClientConfig::from_env`] with the variables read through `var`, for tests.
    pub fn from_lookup(
        provider: Provider,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ClientError> {
        let format = provider.format();
        let key = var(format.key_var());
        let base = var(format.base_url_var());
        if key.is_none() && !(base.is_some() && format.key_optional_with_base_url()) {
            return Err(ClientError::MissingKey {
                provider,
                var: format.key_var(),
            });
        }
        let base = base.unwrap_or_else(|| format.default_base_url().to_owned());
        Ok(ClientConfig::new(provider, base, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_prints_the_key() {
        let config = ClientConfig::new(
            Provider::Anthropic,
            "https://api.anthropic.com",
            Some("sk-ant-secret-123".into()),
        );
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-ant-secret-123"), "{shown}");
        assert!(shown.contains("<redacted>") && shown.contains("api.anthropic.com"));
    }

    #[test]
    fn env_lookup_uses_the_usual_variables() {
        let none = |_: &str| None;
        assert!(matches!(
            ClientConfig::from_lookup(Provider::Anthropic, none),
            Err(ClientError::MissingKey {
                var: "ANTHROPIC_API_KEY",
                ..
            })
        ));
        let local =
            |k: &str| (k == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:11434/v1".to_owned());
        let c = ClientConfig::from_lookup(Provider::OpenaiChat, local).unwrap();
        assert_eq!(
            (c.base_url.as_str(), c.api_key),
            ("http://127.0.0.1:11434/v1", None)
        );
        let gem = |k: &str| (k == "GEMINI_API_KEY").then(|| "g".to_owned());
        assert_eq!(
            ClientConfig::from_lookup(Provider::Gemini, gem)
                .unwrap()
                .api_key
                .as_deref(),
            Some("g")
        );
    }

    #[test]
    fn backoff_doubles_and_server_wait_wins() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(1, None), Duration::from_millis(500));
        assert_eq!(p.delay(3, None), Duration::from_secs(2));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7000))),
            Duration::from_secs(60)
        );
    }
}
