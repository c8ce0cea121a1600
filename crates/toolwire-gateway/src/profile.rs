//! What the gateway knows of each host it serves: how much of a result the host passes
//! to its model before cutting it blindly, which provider's rules its model follows, and
//! its known quirks. toolwire cuts first, by structure, so the host never has to.

use toolwire_model::Provider;

/// The hosts with a profile of their own; any other client gets [`HostProfile::generic`].
pub const HOSTS: [&str; 7] = [
    "claude-code",
    "claude-desktop",
    "codex",
    "gemini",
    "cursor",
    "vscode",
    "generic",
];

/// How the gateway shapes results for one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostProfile {
    /// The name, as `--host` takes it.
    pub name: &'static str,
    /// Characters of one result's text the host's model is given. Set under the host's
    /// own limit, so the host never cuts (it cuts blindly, mid-line, without saying how
    /// to read the rest).
    pub max_chars: usize,
    /// Whose media rules the host's model follows (which media may go inline).
    pub provider: Provider,
    /// The host shows only `structuredContent` when a result has it (claude-code#54737,
    /// codex#38287): such a host gets the text blocks in it too, under
    /// the `toolwire/content` key, when they say more than the value and the tool's
    /// output schema allows an extra member (see `reply::carry_text` for the trade-off).
    pub drops_content_beside_structured: bool,
    /// The host tells its model when a result is an error: its wire format to the model
    /// has a place for MCP's `isError`. Codex's does not, so its model reads an error as
    /// any other output; such a host gets a first line that says the call failed, and how.
    pub flags_errors: bool,
}

impl HostProfile {
    /// The profile for `name` (see [`HOSTS`]), or `None` for a name the gateway does not
    /// know.
    pub fn named(name: &str) -> Option<HostProfile> {
        let profile = match name {
            // Claude Code warns above 10,000 tokens of MCP output and refuses above
            // 25,000 (MAX_MCP_OUTPUT_TOKENS); 32,000 characters stay under the warning.
            "claude-code" => HostProfile {
                name: "claude-code",
                max_chars: 32_000,
                provider: Provider::Anthropic,
                drops_content_beside_structured: true,
                flags_errors: true,
            },
            "claude-desktop" => HostProfile {
                name: "claude-desktop",
                max_chars: 32_000,
                provider: Provider::Anthropic,
                drops_content_beside_structured: false,
                flags_errors: true,
            },
            // Codex cuts every tool output to 10 KiB or 256 lines before its model sees it
            // (codex#6544, #7906).
            "codex" => HostProfile {
                name: "codex",
                max_chars: 9_000,
                provider: Provider::OpenaiResponses,
                drops_content_beside_structured: true,
                flags_errors: false,
            },
            "gemini" => HostProfile {
                name: "gemini",
                max_chars: 25_000,
                provider: Provider::Gemini,
                drops_content_beside_structured: false,
                flags_errors: true,
            },
            "cursor" | "vscode" => HostProfile {
                name: if name == "cursor" { "cursor" } else { "vscode" },
                max_chars: 25_000,
                provider: Provider::Anthropic,
                drops_content_beside_structured: false,
                flags_errors: true,
            },
            "generic" => HostProfile::generic(),
            _ => return None,
        };
        Some(profile)
    }

    /// Any MCP client: toolwire's own default budget, every medium inline.
    pub fn generic() -> HostProfile {
        HostProfile {
            name: "generic",
            max_chars: toolwire_model::DEFAULT_MAX_CHARS,
            provider: Provider::Anthropic,
            drops_content_beside_structured: false,
            flags_errors: true,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_named_host_has_a_profile_under_its_own_limit() {
        for name in HOSTS {
            let profile = HostProfile::named(name).unwrap();
            assert_eq!(profile.name, name);
            assert!(profile.max_chars > 1_000);
        }
        // Codex cuts at 10 KiB: toolwire must cut first.
        assert!(HostProfile::named("codex").unwrap().max_chars < 10_240);
        assert!(HostProfile::named("claude").is_none());
    }
}
