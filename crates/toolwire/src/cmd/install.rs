//! `toolwire mcp install --host HOST`: writes the one entry that starts `toolwire gateway`
//! into a host's own MCP config file (Claude Code, Claude Desktop, Cursor, VS Code, Gemini
//! CLI, opencode: JSON; Codex: TOML), keeping a backup of the file it changes; with `--http`, the
//! entry that reaches a running `toolwire gateway --http` instead, with its token in an
//! `Authorization` header (the file is then made readable by its owner only). Everything
//! else in the file is left as it was (keys keep their order; the TOML is edited as text,
//! so its comments stay).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value as Json};

/// The hosts `install` knows, as `--host` takes them.
pub(crate) const INSTALL_HOSTS: [&str; 7] = [
    "claude-code",
    "claude-desktop",
    "cursor",
    "vscode",
    "codex",
    "gemini",
    "opencode",
];

/// How a host's config file holds its MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `{"mcpServers": {NAME: {"command", "args"}}}`.
    McpServers,
    /// VS Code: `{"servers": {NAME: {"type": "stdio", "command", "args"}}}`.
    VsCode,
    /// Codex: `[mcp_servers.NAME]` with `command` and `args`.
    CodexToml,
    /// opencode: `{"mcp": {NAME: {"type": "local", "command": [COMMAND, ARGS...]}}}`
    /// (its schema has no `args`, and refuses keys it does not know).
    OpenCode,
}

fn format_of(host: &str) -> Format {
    match host {
        "vscode" => Format::VsCode,
        "codex" => Format::CodexToml,
        "opencode" => Format::OpenCode,
        _ => Format::McpServers,
    }
}

/// Where `host` keeps its user-wide MCP config, under `home`.
pub(crate) fn default_config_path(host: &str, home: &Path) -> Option<PathBuf> {
    let app_config = if cfg!(target_os = "macos") {
        home.join("Library/Application Support")
    } else {
        home.join(".config")
    };
    Some(match host {
        "claude-code" => home.join(".claude.json"),
        "claude-desktop" => app_config.join("Claude/claude_desktop_config.json"),
        "cursor" => home.join(".cursor/mcp.json"),
        "vscode" => app_config.join("Code/User/mcp.json"),
        "gemini" => home.join(".gemini/settings.json"),
        "codex" => home.join(".codex/config.toml"),
        // opencode reads ~/.config on every system.
        "opencode" => home.join(".config/opencode/opencode.json"),
        _ => return None,
    })
}

/// The entry written: how the host reaches the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// The host starts `command args` and speaks MCP on its stdio.
    Stdio { command: String, args: Vec<String> },
    /// The host connects to a running `toolwire gateway --http` at `url`, sending `token`.
    Http { url: String, token: String },
}

/// What `install` did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Installed {
    pub path: PathBuf,
    /// The copy of the file as it was, if there was one.
    pub backup: Option<PathBuf>,
    /// An entry of that name was there and is replaced.
    pub replaced: bool,
}

/// Writes the entry `name` = `command args` for `host` into `path`, after backing the
/// file up. A file that does not parse is left alone: the error says so.
#[cfg(test)]
pub(crate) fn install(
    host: &str,
    path: &Path,
    name: &str,
    command: &str,
    args: &[String],
) -> Result<Installed> {
    let entry = Entry::Stdio {
        command: command.to_owned(),
        args: args.to_vec(),
    };
    install_entry(host, path, name, &entry)
}

/// Writes `entry` as `name` for `host` into `path`, after backing the file up. A file
/// that does not parse is left alone: the error says so. A file that holds a token is
/// written readable by its owner only, and so is its backup (it may hold an older one).
pub(crate) fn install_entry(
    host: &str,
    path: &Path,
    name: &str,
    entry: &Entry,
) -> Result<Installed> {
    if host == "claude-desktop" && matches!(entry, Entry::Http { .. }) {
        bail!(
            "Claude Desktop's config file takes only servers it starts itself: install it \
             without --http"
        );
    }
    let old = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let (new, replaced) = match format_of(host) {
        Format::CodexToml => edit_toml(old.as_deref().unwrap_or(""), name, entry)?,
        format => edit_json(old.as_deref(), format, host, name, entry)
            .with_context(|| format!("{} was left as it was", path.display()))?,
    };
    let private = matches!(entry, Entry::Http { .. });
    let backup = match &old {
        Some(text) => Some(back_up(path, text, private)?),
        None => None,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    }
    // Written beside and renamed over, so a host never reads half a file.
    let temp = path.with_extension("toolwire-tmp");
    write_new(&temp, &new, private).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(Installed {
        path: path.to_owned(),
        backup,
        replaced,
    })
}

/// Writes `text` to `path`, replacing what was there; readable by its owner only when
/// `private`.
fn write_new(path: &Path, text: &str, private: bool) -> std::io::Result<()> {
    use std::io::Write;
    // A temp file left by an earlier run may have other permissions: made anew.
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut out = private_if(
        std::fs::OpenOptions::new().write(true).create_new(true),
        private,
    )
    .open(path)?;
    out.write_all(text.as_bytes())
}

/// `options` with mode 0600 when `private` (on Unix; elsewhere the system's defaults).
fn private_if(options: &mut std::fs::OpenOptions, private: bool) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    options
}

/// A copy of `text` beside `path`, under a name no earlier backup has.
fn back_up(path: &Path, text: &str, private: bool) -> Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let file = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("config");
    for n in 0..1000 {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let backup = path.with_file_name(format!("{file}.toolwire-backup-{stamp}{suffix}"));
        match private_if(
            std::fs::OpenOptions::new().write(true).create_new(true),
            private,
        )
        .open(&backup)
        {
            Ok(mut out) => {
                use std::io::Write;
                out.write_all(text.as_bytes())
                    .with_context(|| format!("cannot write {}", backup.display()))?;
                return Ok(backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("cannot write {}", backup.display())),
        }
    }
    bail!("no free backup name beside {}", path.display())
}

/// `entry` as `host`'s config holds it, for `--print` (Codex's as JSON).
pub(crate) fn shown_entry(host: &str, entry: &Entry) -> Json {
    json_entry(host, format_of(host), entry)
}

/// `entry` as `host` writes a server in its JSON config.
fn json_entry(host: &str, format: Format, entry: &Entry) -> Json {
    match entry {
        Entry::Stdio { command, args } if format == Format::OpenCode => {
            let mut line = vec![command.clone()];
            line.extend(args.iter().cloned());
            serde_json::json!({"type": "local", "command": line, "enabled": true})
        }
        Entry::Http { url, token } if format == Format::OpenCode => serde_json::json!({
            "type": "remote", "url": url, "enabled": true,
            "headers": {"Authorization": format!("Bearer {token}")},
        }),
        Entry::Stdio { command, args } if format == Format::VsCode => {
            serde_json::json!({"type": "stdio", "command": command, "args": args})
        }
        Entry::Stdio { command, args } => serde_json::json!({"command": command, "args": args}),
        Entry::Http { url, token } => {
            let headers = serde_json::json!({"Authorization": format!("Bearer {token}")});
            match host {
                // Gemini CLI: `httpUrl` is streamable HTTP (`url` would be the old SSE).
                "gemini" => serde_json::json!({"httpUrl": url, "headers": headers}),
                // Cursor tells the transport by the `url` alone.
                "cursor" => serde_json::json!({"url": url, "headers": headers}),
                _ => serde_json::json!({"type": "http", "url": url, "headers": headers}),
            }
        }
    }
}

fn edit_json(
    old: Option<&str>,
    format: Format,
    host: &str,
    name: &str,
    entry: &Entry,
) -> Result<(String, bool)> {
    let mut doc: Json = match old {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str(text).context("it is not JSON")?
        }
        _ => Json::Object(Map::new()),
    };
    let Json::Object(root) = &mut doc else {
        bail!("it is JSON but not an object");
    };
    let key = match format {
        Format::VsCode => "servers",
        Format::OpenCode => "mcp",
        _ => "mcpServers",
    };
    let entry = json_entry(host, format, entry);
    let servers = root.entry(key).or_insert_with(|| Json::Object(Map::new()));
    let Json::Object(servers) = servers else {
        bail!("its {key:?} is not an object");
    };
    let replaced = servers.insert(name.to_owned(), entry).is_some();
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok((text, replaced))
}

/// Codex's TOML, edited as text: the `[mcp_servers.NAME]` table is replaced (up to the
/// next table header) or appended; the rest of the file, comments too, stays.
/// Seconds Codex is told to wait for the gateway's start-up: a server's connection and
/// its tool listing are bounded by 30 s each (`toolwire_mcp::Limits`).
const CODEX_STARTUP_SECS: u64 = 60;

fn edit_toml(old: &str, name: &str, entry: &Entry) -> Result<(String, bool)> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!("a Codex server name must be letters, digits, - or _: {name:?}");
    }
    // A JSON string is a valid TOML basic string (the same escapes).
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    let header = format!("[mcp_servers.{name}]");
    let mut table = match entry {
        Entry::Stdio { command, args } => {
            let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
            format!(
                "{header}\ncommand = {}\nargs = [{}]\n",
                quote(command),
                args.join(", ")
            )
        }
        // Codex sends `http_headers` as they are (`headers` it would ignore).
        Entry::Http { url, token } => format!(
            "{header}\nurl = {}\nhttp_headers = {{ \"Authorization\" = {} }}\n",
            quote(url),
            quote(&format!("Bearer {token}"))
        ),
    };
    // Codex lists the tools once, at start-up, and never again, so the gateway holds its
    // `tools/list` until every server behind is up or failed: Codex must wait that long
    // (its own default is 10 s), and fail its start-up, saying so, rather than run on
    // without the gateway's tools (`required`, Codex's config reference).
    table.push_str(&format!(
        "startup_timeout_sec = {CODEX_STARTUP_SECS}\nrequired = true\n"
    ));
    let mut out = String::new();
    let mut replaced = false;
    let mut skipping = false;
    for line in old.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            skipping = trimmed == header || trimmed.starts_with(&format!("[mcp_servers.{name}."));
            if trimmed == header {
                out.push_str(&table);
                out.push('\n');
                replaced = true;
            }
        }
        if !skipping {
            out.push_str(line);
        }
    }
    if !replaced {
        if !out.is_empty() && !out.ends_with("\n\n") {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(&table);
    }
    Ok((out, replaced))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args() -> Vec<String> {
        ["gateway", "--host", "cursor"].map(String::from).to_vec()
    }

    #[test]
    fn json_hosts_get_one_entry_and_keep_the_rest_and_a_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        let before =
            r#"{"theme": "dark", "mcpServers": {"fs": {"command": "npx", "args": ["fs"]}}}"#;
        std::fs::write(&path, before).unwrap();
        let done = install("cursor", &path, "toolwire", "/bin/toolwire", &args()).unwrap();
        assert!(!done.replaced);
        assert_eq!(
            std::fs::read_to_string(done.backup.unwrap()).unwrap(),
            before
        );
        let after: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["theme"], "dark");
        assert_eq!(after["mcpServers"]["fs"]["command"], "npx");
        assert_eq!(after["mcpServers"]["toolwire"]["command"], "/bin/toolwire");
        assert_eq!(after["mcpServers"]["toolwire"]["args"][2], "cursor");
        // Keys keep their order.
        let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["theme", "mcpServers"]);

        // Again: replaced, and a second backup that does not overwrite the first.
        let again = install("cursor", &path, "toolwire", "/bin/toolwire", &args()).unwrap();
        assert!(again.replaced);
        let backups = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains("toolwire-backup")
            })
            .count();
        assert_eq!(backups, 2);
    }

    #[test]
    fn vscode_uses_servers_and_a_missing_file_is_made_without_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Code/User/mcp.json");
        let done = install("vscode", &path, "toolwire", "toolwire", &args()).unwrap();
        assert_eq!(done.backup, None);
        let after: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["servers"]["toolwire"]["type"], "stdio");
    }

    /// opencode takes the command line as one array, under `mcp`, with `"type":
    /// "local"` (it refuses `args`); over HTTP, `"type": "remote"` with the token.
    #[test]
    fn opencode_gets_its_own_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opencode.json");
        std::fs::write(&path, r#"{"$schema": "https://opencode.ai/config.json"}"#).unwrap();
        install("opencode", &path, "toolwire", "/bin/toolwire", &args()).unwrap();
        let after: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let entry = &after["mcp"]["toolwire"];
        assert_eq!(
            entry,
            &serde_json::json!({"type": "local", "enabled": true,
                "command": ["/bin/toolwire", "gateway", "--host", "cursor"]})
        );
        assert_eq!(after["$schema"], "https://opencode.ai/config.json");
        let http = Entry::Http {
            url: "http://127.0.0.1:8931/mcp".into(),
            token: "t0k".into(),
        };
        install_entry("opencode", &path, "toolwire", &http).unwrap();
        let after: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let entry = &after["mcp"]["toolwire"];
        assert_eq!(entry["type"], "remote");
        assert_eq!(entry["headers"]["Authorization"], "Bearer t0k");
        assert_eq!(
            default_config_path("opencode", Path::new("/home/u")),
            Some(PathBuf::from("/home/u/.config/opencode/opencode.json"))
        );
    }

    #[test]
    fn a_file_that_is_not_json_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ not json").unwrap();
        let err = install("gemini", &path, "toolwire", "toolwire", &args()).unwrap_err();
        assert!(format!("{err:#}").contains("was left as it was"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn codex_toml_is_edited_as_text_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my settings\nmodel = \"o4\"\n\n[mcp_servers.toolwire]\ncommand = \"old\"\n\n[mcp_servers.toolwire.env]\nX = \"1\"\n\n[mcp_servers.fs]\ncommand = \"npx\"\n";
        std::fs::write(&path, before).unwrap();
        let odd = vec!["gateway".to_owned(), "a \"quoted\" \\ path".to_owned()];
        let done = install("codex", &path, "toolwire", "/bin/toolwire", &odd).unwrap();
        assert!(done.replaced);
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.starts_with("# my settings\nmodel = \"o4\"\n\n[mcp_servers.toolwire]\n"),
            "{after}"
        );
        assert!(
            after.contains("args = [\"gateway\", \"a \\\"quoted\\\" \\\\ path\"]"),
            "{after}"
        );
        assert!(
            !after.contains("old") && !after.contains("X = \"1\""),
            "{after}"
        );
        assert!(
            after.ends_with("[mcp_servers.fs]\ncommand = \"npx\"\n"),
            "{after}"
        );
        // Codex lists tools once: it waits for the gateway's servers, and fails loudly
        // rather than run on without them.
        assert!(
            after.contains("startup_timeout_sec = 60\nrequired = true\n"),
            "{after}"
        );
        assert!(install("codex", &path, "bad name", "x", &[]).is_err());
    }

    #[test]
    fn every_host_has_a_config_path() {
        for host in INSTALL_HOSTS {
            assert!(
                default_config_path(host, Path::new("/home/u")).is_some(),
                "{host}"
            );
        }
        assert_eq!(
            default_config_path("claude-code", Path::new("/home/u")),
            Some(PathBuf::from("/home/u/.claude.json"))
        );
    }
}
