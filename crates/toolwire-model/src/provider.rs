//! Provider ids: which wire format a conversation is encoded in and a client speaks.
//!
//! Everything about a provider (its name, URLs, env vars, headers, encoding, decoding,
//! media) lives in its format file under [`crate::formats`], behind
//! [`ProviderFormat`]. [`Provider`] stays a small `Copy` enum rather than a handle to that
//! object because callers use it as a plain value: they parse it from the command line
//! and config files, store it, hash it and match on it exhaustively. Its only
//! per-provider code is the one list below, which maps each id to its format object.
//!
//! A new provider is a new file in `formats/` (its `mod` line included) and one entry in
//! that list.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::formats::{ProviderFormat, anthropic, gemini, openai_chat, openai_responses};
use crate::media::MediaRoute;

/// Defines [`Provider`], [`Provider::ALL`] and [`Provider::format`] from one list, so that
/// the ids, their order and their formats cannot disagree.
macro_rules! providers {
    ($($(#[$doc:meta])* $variant:ident => $format:path,)+) => {
        /// The request formats toolwire speaks. Its name, URLs and everything else come
        /// from [`Provider::format`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Provider {
            $($(#[$doc])* $variant,)+
        }

        impl Provider {
            /// Every provider, in a stable order.
            pub const ALL: [Provider; [$(Provider::$variant),+].len()] =
                [$(Provider::$variant),+];

            /// The format object that knows everything about this provider.
            pub fn format(self) -> &'static dyn ProviderFormat {
                match self {
                    $(Provider::$variant => &$format,)+
                }
            }
        }
    };
}

providers! {
    /// Anthropic Messages.
    Anthropic => anthropic::Anthropic,
    /// OpenAI Chat Completions, also spoken by ollama, llama.cpp and vLLM.
    OpenaiChat => openai_chat::OpenaiChat,
    /// OpenAI Responses.
    OpenaiResponses => openai_responses::OpenaiResponses,
    /// Gemini generateContent.
    Gemini => gemini::Gemini,
}

impl Provider {
    /// The id on the command line, in config files and in errors: `anthropic`,
    /// `openai-chat`, `openai-responses`, `gemini`.
    pub fn name(self) -> &'static str {
        self.format().name()
    }

    /// The model used when none is named: a current, widely available one per API.
    pub fn default_model(self) -> &'static str {
        self.format().default_model()
    }

    /// The env var that holds the API key, e.g. `ANTHROPIC_API_KEY`.
    pub fn key_var(self) -> &'static str {
        self.format().key_var()
    }

    /// The env var that points the client at another server, e.g. `OPENAI_BASE_URL`.
    pub fn base_url_var(self) -> &'static str {
        self.format().base_url_var()
    }

    /// Where the API lives when nothing else is set, without the request path.
    pub fn default_base_url(self) -> &'static str {
        self.format().default_base_url()
    }
}

impl From<Provider> for MediaRoute {
    fn from(provider: Provider) -> Self {
        MediaRoute {
            provider: provider.name(),
            support: provider.format().media(),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no provider's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`; expected {names}", names = expected_names())]
pub struct UnknownProvider(pub String);

/// `anthropic, openai-chat, openai-responses or gemini`.
fn expected_names() -> String {
    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

// By name, so that the format's `name()` is the only spelling of a provider anywhere.
impl Serialize for Provider {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Provider {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_serde() {
        for p in Provider::ALL {
            assert_eq!(p.name().parse::<Provider>(), Ok(p));
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Provider>(&json).unwrap(), p);
        }
        let err = "bard".parse::<Provider>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown provider `bard`; expected anthropic, openai-chat, openai-responses or gemini"
        );
        assert!(serde_json::from_str::<Provider>("\"bard\"").is_err());
    }

    #[test]
    fn each_provider_has_its_own_format() {
        let mut names: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Provider::ALL.len());
        assert_eq!(Provider::Anthropic.key_var(), "ANTHROPIC_API_KEY");
        assert_eq!(Provider::OpenaiResponses.key_var(), "OPENAI_API_KEY");
        assert_eq!(Provider::OpenaiChat.base_url_var(), "OPENAI_BASE_URL");
        assert_eq!(Provider::Gemini.base_url_var(), "GEMINI_BASE_URL");
        assert_eq!(
            Provider::Gemini.default_base_url(),
            "https://generativelanguage.googleapis.com"
        );
        assert_eq!(Provider::OpenaiChat.default_model(), "gpt-4.1");
    }
}
