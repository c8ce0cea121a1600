//! Which MCP servers to connect to: `--mcp NAME=COMMAND|URL` flags and the `mcpServers`
//! JSON that Claude Desktop, Cursor and VS Code already use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value as Json;

/// Longest server name: it prefixes every tool name, which providers cap at 64.
pub const MAX_SERVER_NAME: usize = 24;

/// One MCP server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Prefix of its tools' names (`NAME__TOOL`).
    pub name: String,
    pub transport: Transport,
}

/// How to reach a server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP at `url`.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// Header and environment values often hold keys: Debug shows their names only.
impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl Transport {
    /// What a person is shown of this transport: the command line or the URL.
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

/// Why a server configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--mcp {0:?}: expected NAME=COMMAND or NAME=URL")]
    NoEquals(String),
    #[error(
        "MCP server name {0:?}: use 1 to {MAX_SERVER_NAME} letters, digits, '-' or '_', \
         starting with a letter, without '__' (it prefixes the tool names)"
    )]
    BadName(String),
    #[error("MCP server {name:?}: {why}")]
    Server { name: String, why: String },
    #[error("MCP server {0:?} is configured twice")]
    Duplicate(String),
    #[error("{path}: {why}")]
    File { path: String, why: String },
}

/// Parses a `--mcp NAME=COMMAND|URL` flag. A value starting with `http://` or `https://`
/// is a streamable HTTP endpoint; anything else is a command line, split like a shell
/// would (quotes kept together), and run without a shell.
pub fn parse_flag(flag: &str) -> Result<ServerConfig, ConfigError> {
    let (name, target) = flag
        .split_once('=')
        .ok_or_else(|| ConfigError::NoEquals(flag.to_owned()))?;
    let name = check_name(name.trim())?;
    let target = target.trim();
    let server_error = |why: &str| ConfigError::Server {
        name: name.clone(),
        why: why.to_owned(),
    };
    let transport = if is_url(target) {
        Transport::Http {
            url: target.to_owned(),
            headers: BTreeMap::new(),
        }
    } else {
        let words = shlex::split(target).ok_or_else(|| server_error("unbalanced quotes"))?;
        let mut words = words.into_iter();
        let command = words.next().ok_or_else(|| server_error("empty command"))?;
        Transport::Stdio {
            command,
            args: words.collect(),
            env: BTreeMap::new(),
            cwd: None,
        }
    };
    Ok(ServerConfig { name, transport })
}

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

/// A server name must make valid, unambiguous tool names.
fn check_name(name: &str) -> Result<String, ConfigError> {
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= MAX_SERVER_NAME
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(name.to_owned())
    } else {
        Err(ConfigError::BadName(name.to_owned()))
    }
}

/// One entry of `mcpServers`, as Claude Desktop, Cursor and VS Code write it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// VS Code's `"type": "stdio" | "http" | "sse"`.
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    disabled: bool,
}

/// Reads the servers of an `{"mcpServers": {...}}` document (VS Code's `"servers"` key
/// too). Disabled entries are skipped; a server that cannot be used is an error naming
/// it, not silently left out. `base` resolves relative `cwd`s.
pub fn parse_servers_json(doc: &Json, base: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let servers = doc
        .get("mcpServers")
        .or_else(|| doc.get("servers"))
        .and_then(Json::as_object)
        .ok_or_else(|| ConfigError::File {
            path: String::new(),
            why: "no \"mcpServers\" object".to_owned(),
        })?;
    let mut out = Vec::new();
    for (name, raw) in servers {
        let name = check_name(name)?;
        let entry: Entry =
            serde_json::from_value(raw.clone()).map_err(|e| ConfigError::Server {
                name: name.clone(),
                why: e.to_string(),
            })?;
        if entry.disabled {
            continue;
        }
        let transport = match (entry.command, entry.url) {
            (Some(command), None) => Transport::Stdio {
                command,
                args: entry.args,
                env: entry.env,
                cwd: entry.cwd.map(|c| base.join(c)),
            },
            (None, Some(url)) if entry.kind.as_deref() == Some("sse") => {
                return Err(ConfigError::Server {
                    name,
                    why: format!(
                        "{url}: the old HTTP+SSE transport is not supported; \
                         use the server's streamable HTTP endpoint"
                    ),
                });
            }
            (None, Some(url)) if is_url(&url) => Transport::Http {
                url,
                headers: entry.headers,
            },
            (None, Some(url)) => {
                return Err(ConfigError::Server {
                    name,
                    why: format!("{url:?} is not an http(s) URL"),
                });
            }
            (Some(_), Some(_)) => {
                return Err(ConfigError::Server {
                    name,
                    why: "has both \"command\" and \"url\"; give one".to_owned(),
                });
            }
            (None, None) => {
                return Err(ConfigError::Server {
                    name,
                    why: "needs \"command\" or \"url\"".to_owned(),
                });
            }
        };
        out.push(ServerConfig { name, transport });
    }
    Ok(out)
}

/// Reads an `mcpServers` JSON file.
pub fn read_servers_file(path: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let file_error = |why: String| ConfigError::File {
        path: path.display().to_string(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    let doc: Json = serde_json::from_str(&text).map_err(|e| file_error(e.to_string()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_servers_json(&doc, base).map_err(|e| match e {
        ConfigError::File { why, .. } => file_error(why),
        other => other,
    })
}

/// All configured servers, flags last; one name used twice is an error, since its tools
/// would be ambiguous.
pub fn merge(
    groups: impl IntoIterator<Item = Vec<ServerConfig>>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    let mut out: Vec<ServerConfig> = Vec::new();
    for server in groups.into_iter().flatten() {
        if out.iter().any(|s| s.name == server.name) {
            return Err(ConfigError::Duplicate(server.name));
        }
        out.push(server);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flags() {
        let s =
            parse_flag("fs=npx -y \"@modelcontextprotocol/server-filesystem\" '/tmp/a b'").unwrap();
        assert_eq!(s.name, "fs");
        let Transport::Stdio { command, args, .. } = &s.transport else {
            panic!("stdio expected")
        };
        assert_eq!(command, "npx");
        assert_eq!(
            args,
            &["-y", "@modelcontextprotocol/server-filesystem", "/tmp/a b"]
        );
        let h = parse_flag("remote=https://example.com/mcp").unwrap();
        assert!(matches!(h.transport, Transport::Http { .. }));
        for bad in [
            "nothing", "=cmd", "a__b=cmd", "x=", "x='open", "ü=cmd", "9x=cmd",
        ] {
            assert!(parse_flag(bad).is_err(), "{bad}");
        }
        let long = format!("{}=cmd", "n".repeat(MAX_SERVER_NAME + 1));
        assert!(
            parse_flag(&long)
                .unwrap_err()
                .to_string()
                .contains("1 to 24")
        );
    }

    #[test]
    fn claude_desktop_json() {
        let doc = json!({"mcpServers": {
            "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"KEY": "secret"}},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}},
            "off": {"command": "x", "disabled": true},
        }});
        let servers = parse_servers_json(&doc, Path::new("/etc")).unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["everything", "remote"]);
        let debug = format!("{:?}", servers);
        assert!(
            !debug.contains("secret") && !debug.contains("Bearer"),
            "{debug}"
        );
        for bad in [
            json!({"mcpServers": {"a": {}}}),
            json!({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}),
            json!({"mcpServers": {"a": {"url": "ftp://h"}}}),
            json!({"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}),
            json!({"mcpServers": {"a": {"command": 7}}}),
            json!({"other": {}}),
        ] {
            let err = parse_servers_json(&bad, Path::new("/")).unwrap_err();
            assert!(!err.to_string().is_empty());
        }
        let vscode = json!({"servers": {"gh": {"type": "http", "url": "https://api.example/mcp"}}});
        assert_eq!(
            parse_servers_json(&vscode, Path::new("/")).unwrap().len(),
            1
        );
    }

    #[test]
    fn one_name_twice_is_refused() {
        let a = parse_flag("a=cmd").unwrap();
        let err = merge([vec![a.clone()], vec![a]]).unwrap_err();
        assert!(matches!(err, ConfigError::Duplicate(n) if n == "a"));
    }
}
