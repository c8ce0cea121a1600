//! What the gateway knows of each host it serves: how much of a result the host passes
//! to its model before cutting it blindly, which provider's rules its model follows, and
//! its known quirks. toolwire cuts first, by structure, so the host never has to.

use toolwire_model::Provider;

/// The hosts with a profile of their own; any other client gets [`HostProfile::generic`].
pub const HOSTS: [&str; 8] = [
    "claude-code",
    "claude-desktop",
    "codex",
    "gemini",
    "opencode",
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
    /// output schema allows an extra member (see `reply::structured_content` for the
    /// trade-off).
    pub drops_content_beside_structured: bool,
    /// The host tells its model when a result is an error: its wire format to the model
    /// has a place for MCP's `isError`. Codex's does not, so its model reads an error as
    /// any other output; such a host gets a first line that says the call failed, and how.
    pub flags_errors: bool,
    /// The host lists tools again when told `notifications/tools/list_changed`, so the
    /// gateway answers its `tools/list` with the servers that are up and tells it of the
    /// rest as they come. Codex lists once (codex#10105, #33266): its `tools/list` waits
    /// until every server's first start is over.
    pub follows_list_changed: bool,
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
                follows_list_changed: true,
            },
            "claude-desktop" => HostProfile {
                name: "claude-desktop",
                max_chars: 32_000,
                provider: Provider::Anthropic,
                drops_content_beside_structured: false,
                flags_errors: true,
                follows_list_changed: true,
            },
            // Codex cuts every tool output to 10 KiB or 256 lines before its model sees it
            // (codex#6544, #7906).
            "codex" => HostProfile {
                name: "codex",
                max_chars: 9_000,
                provider: Provider::OpenaiResponses,
                drops_content_beside_structured: true,
                flags_errors: false,
                follows_list_changed: false,
            },
            // opencode keeps the head of a tool's output, 51,200 bytes or 2,000 lines at
            // most, and drops the rest (with our marker and tail); its wire formats carry
            // no error flag. 40,000 characters stay under its byte cut unless a fifth of
            // the text is beyond ASCII; lines are not budgeted (a result of very short
            // lines may still meet its line cut).
            "opencode" => HostProfile {
                name: "opencode",
                max_chars: 40_000,
                provider: Provider::Anthropic,
                drops_content_beside_structured: false,
                flags_errors: false,
                follows_list_changed: true,
            },
            "gemini" => HostProfile {
                name: "gemini",
                max_chars: 25_000,
                provider: Provider::Gemini,
                drops_content_beside_structured: false,
                flags_errors: true,
                follows_list_changed: true,
            },
            "cursor" | "vscode" => HostProfile {
                name: if name == "cursor" { "cursor" } else { "vscode" },
                max_chars: 25_000,
                provider: Provider::Anthropic,
                drops_content_beside_structured: false,
                flags_errors: true,
                follows_list_changed: true,
            },
            "generic" => HostProfile::generic(),
            _ => return None,
        };
        Some(profile)
    }

    /// The profile of the host that names itself `client` in `initialize` (`clientInfo`
    /// `name`, as each host sends it: `claude-code`, `codex-mcp-client`,
    /// `gemini-cli-mcp-client`, `opencode`, `cursor-vscode`, `Visual Studio Code`,
    /// `claude-ai`), for a gateway started without `--host`; any other client is
    /// [`HostProfile::generic`].
    pub fn for_client(client: &str) -> HostProfile {
        let client = client.to_ascii_lowercase();
        let host = if client.contains("claude-code") || client.contains("claude code") {
            "claude-code"
        } else if client.contains("claude-ai") || client.contains("claude desktop") {
            "claude-desktop"
        } else if client.contains("opencode") {
            "opencode"
        } else if client.contains("codex") {
            "codex"
        } else if client.contains("gemini") {
            "gemini"
        } else if client.contains("cursor") {
            "cursor"
        } else if client.contains("visual studio code") || client.contains("vscode") {
            "vscode"
        } else {
            "generic"
        };
        HostProfile::named(host).unwrap_or_else(HostProfile::generic)
    }

    /// Any MCP client: toolwire's own default budget, every medium inline.
    pub fn generic() -> HostProfile {
        HostProfile {
            name: "generic",
            max_chars: toolwire_model::DEFAULT_MAX_CHARS,
            provider: Provider::Anthropic,
            drops_content_beside_structured: false,
            flags_errors: true,
            follows_list_changed: true,
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
        // opencode keeps 51,200 bytes: toolwire must cut first.
        let opencode = HostProfile::named("opencode").unwrap();
        assert!(opencode.max_chars * 5 / 4 < 51_200 && !opencode.flags_errors);
    }

    #[test]
    fn a_host_is_known_by_the_name_it_gives_in_initialize() {
        for (client, host) in [
            ("claude-code", "claude-code"),
            ("codex-mcp-client", "codex"),
            ("gemini-cli-mcp-client", "gemini"),
            ("opencode", "opencode"),
            ("cursor-vscode", "cursor"),
            ("Visual Studio Code", "vscode"),
            ("claude-ai", "claude-desktop"),
            ("mcp-inspector", "generic"),
            ("", "generic"),
        ] {
            assert_eq!(HostProfile::for_client(client).name, host, "{client}");
        }
    }
}
