//! Which MCP servers to connect to: `--mcp NAME=COMMAND|URL` flags and the `mcpServers`
//! JSON that Claude Desktop, Cursor and VS Code already use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value as Json;
use toolwire_tool::ApprovalPolicy;

/// Longest tool-name prefix made from a server's name: it prefixes every tool name, which
/// providers cap at 64.
pub(crate) const MAX_SERVER_NAME: usize = 24;

/// Longest server name accepted at all (names are shown in prompts and errors).
const MAX_NAME_CHARS: usize = 200;

/// One MCP server to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The name as configured, any text the other MCP hosts accept (`"trial py"`): what
    /// a person is shown.
    pub name: String,
    /// Prefix of its tools' names (`PREFIX__TOOL`): the name cleaned to what every
    /// provider accepts, made unique across servers by [`merge`].
    pub prefix: String,
    /// How to reach it: a command on stdio, or an HTTP URL.
    pub transport: Transport,
    /// Which of its calls ask a person first.
    pub approval: ApprovalRules,
    /// How many characters of its tools' results a model (or the gateway's host) is given.
    pub budget: BudgetRules,
    /// How it is logged in to (HTTP servers that need OAuth authorization).
    pub oauth: toolwire_oauth::OAuthSettings,
    /// The folders declared to it as its roots, from its entry's `"roots"`: these win
    /// over the workspace (`call`, `serve`) and the gateway's host's roots. `None`: it
    /// gets those; an empty list declares no roots at all, so a server that takes the
    /// client's roots over its own arguments (server-filesystem) keeps its arguments.
    pub roots: Option<Vec<PathBuf>>,
}

impl ServerConfig {
    /// A server with the default rules: its name cleaned into its prefix, approvals by
    /// the tools' annotations.
    pub fn new(name: impl Into<String>, transport: Transport) -> Self {
        let name = name.into();
        ServerConfig {
            prefix: clean_prefix(&name),
            name,
            transport,
            approval: ApprovalRules::default(),
            budget: BudgetRules::default(),
            oauth: toolwire_oauth::OAuthSettings::default(),
            roots: None,
        }
    }
}

/// Who decides whether a call of this server's tools asks first. The MCP spec's defaults
/// make a tool without annotations "not read-only, maybe destructive", so by default
/// every tool not marked `readOnlyHint: true` asks; the config overrides that per server
/// (`"approval"`) and per tool (`"tools": {"NAME": {"approval"}}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalRules {
    /// The policy for every tool of the server, unless a tool's own entry says otherwise.
    pub server: Option<ApprovalPolicy>,
    /// By the tool's own name on its server.
    pub tools: BTreeMap<String, ApprovalPolicy>,
    /// For a tool neither rule covers, instead of what its annotations say: `toolwire
    /// gateway` sets `Never`, since its host asks its own person before it calls a tool
    /// (or was told not to), and a second gate would refuse what that person allowed.
    pub unset: Option<ApprovalPolicy>,
}

impl ApprovalRules {
    /// The policy for tool `remote` (its name on the server) with `read_only` from its
    /// `readOnlyHint`: the tool's rule, else the server's, else `unset`, else the
    /// annotations'.
    pub fn policy(&self, remote: &str, read_only: Option<bool>) -> ApprovalPolicy {
        self.tools
            .get(remote)
            .copied()
            .or(self.server)
            .or(self.unset)
            .unwrap_or(if read_only == Some(true) {
                ApprovalPolicy::Never
            } else {
                ApprovalPolicy::Always
            })
    }
}

/// Characters of one result's text the model sees, set by the person for a server
/// (`"maxResultChars"`) or for one of its tools (`"tools": {"NAME": {"maxResultChars"}}`).
/// The person's setting wins over the tool's own `_meta` size hint
/// (`anthropic/maxResultSizeChars`): the tool asks, the person decides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BudgetRules {
    /// For every tool of the server.
    pub server: Option<usize>,
    /// By the tool's own name on its server.
    pub tools: BTreeMap<String, usize>,
}

/// The smallest and largest `maxResultChars` accepted: below, not even a cut marker and a
/// few lines fit; above, one result would fill any model's context window.
pub const RESULT_CHARS_RANGE: std::ops::RangeInclusive<usize> = 500..=2_000_000;

/// The `_meta` key by which a tool asks for a larger result budget (Claude Code's own);
/// [`BudgetRules::resolve`] honours it where the person set no size.
pub const MAX_RESULT_CHARS_META: &str = "anthropic/maxResultSizeChars";

impl BudgetRules {
    /// The person's setting for tool `remote` (its name on the server), if any: the tool's,
    /// else the server's.
    pub fn limit(&self, remote: &str) -> Option<usize> {
        self.tools.get(remote).copied().or(self.server)
    }

    /// The result budget of tool `remote` whose definition's `_meta` is `meta`: the one
    /// rule, applied where the tool is made (its schema's `max_result_chars`), so the agent
    /// loop, `export` and the gateway read the same number. The person's setting (the
    /// tool's, else the server's) decides; else the tool's own hint
    /// ([`MAX_RESULT_CHARS_META`]), brought into [`RESULT_CHARS_RANGE`], the range a
    /// person may give (a hint is a request, not an error); else none, and the host's
    /// default applies.
    pub fn resolve(&self, remote: &str, meta: Option<&serde_json::Value>) -> Option<usize> {
        self.limit(remote).or_else(|| {
            let hint = meta?.get(MAX_RESULT_CHARS_META)?.as_u64()?;
            let hint = usize::try_from(hint).unwrap_or(usize::MAX);
            Some(hint.clamp(*RESULT_CHARS_RANGE.start(), *RESULT_CHARS_RANGE.end()))
        })
    }
}

fn result_chars(n: Option<u64>, whose: &str) -> Result<Option<usize>, String> {
    let Some(n) = n else { return Ok(None) };
    match usize::try_from(n) {
        Ok(n) if RESULT_CHARS_RANGE.contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{whose}\"maxResultChars\" is {n}; give between {} and {} characters",
            RESULT_CHARS_RANGE.start(),
            RESULT_CHARS_RANGE.end()
        )),
    }
}

/// Which of toolwire's environment variables a stdio server is started with, besides
/// its config's `env`. Provider keys must not reach every server (server-everything's
/// `get-env` prints them), so the default is the short list the official SDKs pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum InheritEnv {
    /// [`SAFE_ENV`] only.
    #[default]
    Safe,
    /// [`SAFE_ENV`] and these names too (`"inheritEnv": ["GITHUB_TOKEN"]`).
    Also(Vec<String>),
    /// Everything (`"inheritEnv": true`): an explicit opt-in.
    All,
}

/// The variables every stdio server gets when toolwire has them: what a program needs to
/// find its tools, home, user, terminal, locale and temporary directory.
pub const SAFE_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
    "TZ",
];

impl InheritEnv {
    /// The inherited variables, from `vars` (toolwire's environment). A value that is a
    /// shell function (`() {`) is left out, as the SDKs do.
    pub fn pick(&self, vars: impl Iterator<Item = (String, String)>) -> BTreeMap<String, String> {
        vars.filter(|(k, v)| {
            let wanted = match self {
                InheritEnv::All => true,
                InheritEnv::Safe => SAFE_ENV.contains(&k.as_str()),
                InheritEnv::Also(more) => {
                    SAFE_ENV.contains(&k.as_str()) || more.iter().any(|m| m == k)
                }
            };
            wanted && !v.starts_with("()")
        })
        .collect()
    }
}

/// How to reach a server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program to run.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Set for the server on top of what it inherits.
        env: BTreeMap<String, String>,
        /// The working directory; toolwire's own when `None`.
        cwd: Option<PathBuf>,
        /// Which of toolwire's environment variables it inherits.
        inherit: InheritEnv,
    },
    /// Streamable HTTP at `url`.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (an API key, for one).
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
                inherit,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .field("inherit", inherit)
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
#[non_exhaustive]
pub enum ConfigError {
    /// A `--mcp` flag without `=` between name and target.
    #[error("--mcp {0:?}: expected NAME=COMMAND or NAME=URL")]
    NoEquals(String),
    /// A server name that is empty, too long, blank or has control characters.
    #[error(
        "MCP server name {0:?}: give 1 to {MAX_NAME_CHARS} characters, not all spaces, \
         with no control characters"
    )]
    BadName(String),
    /// A server's entry is malformed.
    #[error("MCP server {name:?}: {why}")]
    Server {
        /// The server's name.
        name: String,
        /// What is wrong with its entry.
        why: String,
    },
    /// Two servers have the same name.
    #[error("MCP server {0:?} is configured twice")]
    Duplicate(String),
    /// A config file cannot be read or parsed.
    #[error("{path}: {why}")]
    File {
        /// The file.
        path: String,
        /// Why it cannot be used.
        why: String,
    },
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
            inherit: InheritEnv::Safe,
        }
    };
    Ok(ServerConfig::new(name, transport))
}

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

/// A server name is any text the other hosts accept; its tool prefix is made from it.
/// Only what cannot be shown is refused.
fn check_name(name: &str) -> Result<String, ConfigError> {
    let ok = !name.trim().is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.chars().any(char::is_control);
    if ok {
        Ok(name.to_owned())
    } else {
        Err(ConfigError::BadName(name.to_owned()))
    }
}

/// A tool-name prefix made from a server name: ASCII letters, digits and `-`, with any
/// run of other characters (and of `_`) as one `_`, no `_` at either end, starting with a
/// letter, at most [`MAX_SERVER_NAME`] long. Because a prefix never holds `__` nor ends
/// with `_`, the first `__` of a tool's name is always the separator: two servers'
/// names can only meet if their prefixes do, which [`merge`] prevents.
pub(crate) fn clean_prefix(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out = out.trim_matches('_').to_owned();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert_str(0, "mcp_");
    }
    cut(&mut out, MAX_SERVER_NAME);
    out
}

/// Cuts an ASCII prefix to `max` bytes, never leaving a `_` at its end.
fn cut(prefix: &mut String, max: usize) {
    prefix.truncate(max);
    while prefix.ends_with('_') {
        prefix.pop();
    }
}

/// The cleaned prefix with a stable hash of the full name: for names whose cleaned forms
/// meet (`"a b"` and `"a_b"`).
fn hashed_prefix(name: &str) -> String {
    let hash = blake3::hash(name.as_bytes()).to_hex();
    let mut base = clean_prefix(name);
    cut(&mut base, MAX_SERVER_NAME - 7);
    format!("{base}-{}", &hash[..6])
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
    /// toolwire's own keys: `"always"` or `"never"` for every tool of the server.
    #[serde(default)]
    approval: Option<ApprovalPolicy>,
    /// Per tool, by its name on the server: `{"write_file": {"approval": "always"}}`.
    #[serde(default)]
    tools: BTreeMap<String, ToolEntry>,
    /// Characters of each result the model sees, for every tool of the server.
    #[serde(default)]
    max_result_chars: Option<u64>,
    /// `true` (all of toolwire's environment) or a list of names to pass beyond the
    /// safe default.
    #[serde(default)]
    inherit_env: Option<Json>,
    /// How toolwire identifies itself to the server's authorization server.
    #[serde(default)]
    oauth: Option<OAuthEntry>,
    /// The folders declared to the server as its roots (`[]`: none), instead of the
    /// workspace or the gateway's host's.
    #[serde(default)]
    roots: Option<Vec<PathBuf>>,
}

/// The `"oauth"` object of an entry.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OAuthEntry {
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    client_metadata_url: Option<String>,
    #[serde(default)]
    scopes: Vec<String>,
    /// `"authorization_code"` (a person logs in; the default) or `"client_credentials"`.
    #[serde(default)]
    grant: Option<String>,
    #[serde(default)]
    private_key_file: Option<PathBuf>,
    #[serde(default)]
    signing_algorithm: Option<String>,
    /// The enterprise identity provider (`"grant": "enterprise"`).
    #[serde(default)]
    idp: Option<IdpEntry>,
    /// The workload's JWT (`"grant": "jwt_bearer"`).
    #[serde(default)]
    assertion_file: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IdpEntry {
    issuer: String,
    token_endpoint: String,
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    id_token_file: PathBuf,
}

// Written by hand: the entry holds a client secret, which debug output must not show.
impl std::fmt::Debug for OAuthEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthEntry")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

fn oauth_of(
    entry: Option<OAuthEntry>,
    base: &Path,
) -> Result<toolwire_oauth::OAuthSettings, String> {
    let Some(entry) = entry else {
        return Ok(toolwire_oauth::OAuthSettings::default());
    };
    let (client_credentials, enterprise, jwt_bearer) = match entry.grant.as_deref() {
        None | Some("authorization_code") => (false, false, false),
        Some("client_credentials") => (true, false, false),
        Some("enterprise") => (false, true, false),
        Some("jwt_bearer") => (false, false, true),
        Some(other) => {
            return Err(format!(
                "\"oauth\".\"grant\" is \"authorization_code\", \"client_credentials\", \
                 \"enterprise\" or \"jwt_bearer\", not {other:?}"
            ));
        }
    };
    let assertion_file = match (jwt_bearer, entry.assertion_file) {
        (true, Some(file)) => Some(base.join(file)),
        (true, None) => return Err("\"grant\": \"jwt_bearer\" needs \"assertionFile\"".to_owned()),
        (false, Some(_)) => {
            return Err("\"assertionFile\" is for \"grant\": \"jwt_bearer\"".to_owned());
        }
        (false, None) => None,
    };
    let idp = match (enterprise, entry.idp) {
        (true, Some(idp)) => Some(toolwire_oauth::IdpSettings {
            issuer: idp.issuer,
            token_endpoint: idp.token_endpoint,
            client_id: idp.client_id,
            client_secret: idp.client_secret,
            id_token_file: base.join(idp.id_token_file),
        }),
        (true, None) => return Err("\"grant\": \"enterprise\" needs \"idp\"".to_owned()),
        (false, Some(_)) => {
            return Err("\"idp\" is for \"grant\": \"enterprise\"".to_owned());
        }
        (false, None) => None,
    };
    if (enterprise || jwt_bearer) && entry.client_id.is_none() {
        return Err("this \"grant\" needs \"clientId\"".to_owned());
    }
    if client_credentials && entry.client_id.is_none() {
        return Err("\"oauth\" with the client_credentials grant needs \"clientId\"".to_owned());
    }
    Ok(toolwire_oauth::OAuthSettings {
        client_id: entry.client_id,
        client_secret: entry.client_secret,
        client_metadata_url: entry.client_metadata_url,
        scopes: entry.scopes,
        client_credentials,
        private_key_file: entry.private_key_file.map(|f| base.join(f)),
        signing_algorithm: entry.signing_algorithm,
        idp,
        assertion_file,
    })
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolEntry {
    #[serde(default)]
    approval: Option<ApprovalPolicy>,
    #[serde(default)]
    max_result_chars: Option<u64>,
}

fn inherit_of(value: Option<Json>) -> Result<InheritEnv, String> {
    match value {
        None | Some(Json::Bool(false)) => Ok(InheritEnv::Safe),
        Some(Json::Bool(true)) => Ok(InheritEnv::All),
        Some(Json::Array(names)) => names
            .into_iter()
            .map(|n| match n {
                Json::String(s) => Ok(s),
                other => Err(format!("\"inheritEnv\" lists names, not {other}")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(InheritEnv::Also),
        Some(other) => Err(format!(
            "\"inheritEnv\" is true, false or a list of variable names, not {other}"
        )),
    }
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
        let server_error = |why: String| ConfigError::Server {
            name: name.clone(),
            why,
        };
        let inherit = inherit_of(entry.inherit_env).map_err(server_error)?;
        let oauth = oauth_of(entry.oauth, base).map_err(server_error)?;
        let mut budget = BudgetRules {
            server: result_chars(entry.max_result_chars, "").map_err(server_error)?,
            tools: BTreeMap::new(),
        };
        for (tool, rule) in &entry.tools {
            let whose = format!("tool {tool:?}: ");
            if let Some(n) = result_chars(rule.max_result_chars, &whose).map_err(server_error)? {
                budget.tools.insert(tool.clone(), n);
            }
        }
        let approval = ApprovalRules {
            server: entry.approval,
            tools: entry
                .tools
                .into_iter()
                .filter_map(|(tool, rule)| Some((tool, rule.approval?)))
                .collect(),
            unset: None,
        };
        let transport = match (entry.command, entry.url) {
            (Some(command), None) => Transport::Stdio {
                command,
                args: entry.args,
                env: entry.env,
                cwd: entry.cwd.map(|c| base.join(c)),
                inherit,
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
        let mut server = ServerConfig::new(name, transport);
        server.approval = approval;
        server.budget = budget;
        server.oauth = oauth;
        server.roots = entry
            .roots
            .map(|dirs| dirs.into_iter().map(|d| base.join(d)).collect());
        out.push(server);
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
/// would be ambiguous. Prefixes are made unique: a server whose cleaned prefix another
/// shares, and whose name is not exactly that prefix, gets a stable hash of its name.
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
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for server in &out {
        *counts.entry(server.prefix.clone()).or_default() += 1;
    }
    for server in &mut out {
        if counts.get(&server.prefix).copied().unwrap_or(0) > 1 && server.name != server.prefix {
            server.prefix = hashed_prefix(&server.name);
        }
    }
    // A hashed prefix meeting another is a 1-in-16-million accident; still refused by name.
    let mut seen = std::collections::HashSet::new();
    for server in &out {
        if !seen.insert(server.prefix.as_str()) {
            return Err(ConfigError::Server {
                name: server.name.clone(),
                why: format!(
                    "its tool prefix {:?} is another server's too; rename one",
                    server.prefix
                ),
            });
        }
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
        for bad in ["nothing", "=cmd", " =cmd", "x=", "x='open", "a\tb=cmd"] {
            assert!(parse_flag(bad).is_err(), "{bad}");
        }
        let long = format!("{}=cmd", "n".repeat(MAX_NAME_CHARS + 1));
        assert!(
            parse_flag(&long)
                .unwrap_err()
                .to_string()
                .contains("1 to 200")
        );
    }

    #[test]
    fn any_name_a_host_accepts_makes_a_valid_prefix() {
        for (name, prefix) in [
            ("trial py", "trial_py"),
            ("a__b", "a_b"),
            ("9x", "mcp_9x"),
            ("ü", "mcp"),
            ("server.files", "server_files"),
            ("_lead_", "lead"),
            ("everything", "everything"),
        ] {
            assert_eq!(clean_prefix(name), prefix, "{name}");
        }
        let long = clean_prefix(&"n".repeat(100));
        assert_eq!(long.len(), MAX_SERVER_NAME);
        let doc = json!({"mcpServers": {"trial py": {"command": "python3", "args": ["s.py"]}}});
        let servers = parse_servers_json(&doc, Path::new("/")).unwrap();
        assert_eq!(servers[0].name, "trial py");
        assert_eq!(servers[0].prefix, "trial_py");
    }

    #[test]
    fn prefixes_are_unique_across_servers() {
        let doc = json!({"mcpServers": {
            "a": {"command": "x"}, "a_": {"command": "x"}, "a b": {"command": "x"},
            "a_b": {"command": "x"},
        }});
        let servers = merge([parse_servers_json(&doc, Path::new("/")).unwrap()]).unwrap();
        let prefixes: Vec<&str> = servers.iter().map(|s| s.prefix.as_str()).collect();
        let unique: std::collections::HashSet<&&str> = prefixes.iter().collect();
        assert_eq!(unique.len(), prefixes.len(), "{prefixes:?}");
        // The name that is exactly its prefix keeps it; the others are hashed, stably.
        assert!(
            prefixes.contains(&"a") && prefixes.contains(&"a_b"),
            "{prefixes:?}"
        );
        let again = merge([parse_servers_json(&doc, Path::new("/")).unwrap()]).unwrap();
        assert_eq!(servers, again);
        for p in prefixes {
            assert!(!p.contains("__") && !p.ends_with('_'), "{p}");
            assert!(toolwire_tool::is_valid_tool_name(&format!("{p}__x")), "{p}");
        }
    }

    #[test]
    fn approvals_follow_annotations_unless_configured() {
        let rules = ApprovalRules::default();
        assert_eq!(rules.policy("read", Some(true)), ApprovalPolicy::Never);
        assert_eq!(rules.policy("write", Some(false)), ApprovalPolicy::Always);
        assert_eq!(rules.policy("plain", None), ApprovalPolicy::Always);
        let doc = json!({"mcpServers": {"fs": {
            "command": "x", "approval": "never",
            "tools": {"write_file": {"approval": "always"}},
        }}});
        let fs = parse_servers_json(&doc, Path::new("/")).unwrap().remove(0);
        assert_eq!(fs.approval.policy("read_file", None), ApprovalPolicy::Never);
        assert_eq!(
            fs.approval.policy("write_file", Some(true)),
            ApprovalPolicy::Always
        );
        // The gateway's host decides what no rule covers; the rules still win.
        let mut gateway = fs.approval.clone();
        gateway.server = None;
        gateway.unset = Some(ApprovalPolicy::Never);
        assert_eq!(gateway.policy("plain", None), ApprovalPolicy::Never);
        assert_eq!(gateway.policy("write_file", None), ApprovalPolicy::Always);
        let bad = json!({"mcpServers": {"fs": {"command": "x", "approval": "sometimes"}}});
        assert!(parse_servers_json(&bad, Path::new("/")).is_err());
    }

    #[test]
    fn result_sizes_are_set_per_server_and_per_tool_within_bounds() {
        let doc = json!({"mcpServers": {"fs": {
            "command": "x", "maxResultChars": 8000,
            "tools": {"read_file": {"maxResultChars": 120000}, "write_file": {"approval": "always"}},
        }}});
        let fs = parse_servers_json(&doc, Path::new("/")).unwrap().remove(0);
        assert_eq!(fs.budget.limit("read_file"), Some(120_000));
        assert_eq!(fs.budget.limit("write_file"), Some(8_000));
        let plain = json!({"mcpServers": {"fs": {"command": "x"}}});
        let plain = parse_servers_json(&plain, Path::new("/"))
            .unwrap()
            .remove(0);
        assert_eq!(plain.budget.limit("read_file"), None);
        // Out of range, negative or not a number: an error naming the server and the tool.
        for bad in [
            json!({"command": "x", "maxResultChars": 10}),
            json!({"command": "x", "maxResultChars": -5}),
            json!({"command": "x", "maxResultChars": "big"}),
            json!({"command": "x", "tools": {"grep": {"maxResultChars": 99_000_000_000u64}}}),
        ] {
            let err = parse_servers_json(&json!({"mcpServers": {"fs": bad}}), Path::new("/"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("fs"), "{err}");
        }
        let huge = json!({"mcpServers": {"fs": {"command": "x", "tools": {"grep": {"maxResultChars": 99_000_000_000u64}}}}});
        let err = parse_servers_json(&huge, Path::new("/"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"grep\"") && err.contains("2000000"), "{err}");
    }

    #[test]
    fn servers_inherit_only_a_safe_environment() {
        let vars = || {
            [
                ("PATH", "/bin"),
                ("HOME", "/root"),
                ("ANTHROPIC_API_KEY", "sk-secret"),
                ("GITHUB_TOKEN", "ghp"),
                ("SHELL", "() { evil; }"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        };
        let safe = InheritEnv::Safe.pick(vars());
        assert_eq!(safe.keys().collect::<Vec<_>>(), ["HOME", "PATH"]);
        let also = InheritEnv::Also(vec!["GITHUB_TOKEN".into()]).pick(vars());
        assert!(also.contains_key("GITHUB_TOKEN") && !also.contains_key("ANTHROPIC_API_KEY"));
        assert!(
            InheritEnv::All
                .pick(vars())
                .contains_key("ANTHROPIC_API_KEY")
        );
        let doc = json!({"mcpServers": {"gh": {"command": "x", "inheritEnv": ["GITHUB_TOKEN"]}}});
        let gh = parse_servers_json(&doc, Path::new("/")).unwrap().remove(0);
        assert!(matches!(
            gh.transport,
            Transport::Stdio {
                inherit: InheritEnv::Also(_),
                ..
            }
        ));
        let bad = json!({"mcpServers": {"gh": {"command": "x", "inheritEnv": "yes"}}});
        assert!(parse_servers_json(&bad, Path::new("/")).is_err());
    }

    #[test]
    fn claude_desktop_json() {
        let doc = json!({"mcpServers": {
            "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"KEY": "secret"}},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}},
            "off": {"command": "x", "disabled": true},
            "login": {"url": "https://example.com/mcp", "oauth": {"clientId": "tw", "clientSecret": "oauth-secret", "scopes": ["read"]}},
        }});
        let servers = parse_servers_json(&doc, Path::new("/etc")).unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["everything", "remote", "login"]);
        assert_eq!(servers[2].oauth.client_id.as_deref(), Some("tw"));
        assert_eq!(
            servers[2].oauth.client_secret.as_deref(),
            Some("oauth-secret")
        );
        assert_eq!(servers[2].oauth.scopes, ["read"]);
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
            json!({"mcpServers": {"a": {"url": "http://h", "oauth": {"grant": "implicit"}}}}),
            json!({"mcpServers": {"a": {"url": "http://h", "oauth": {"grant": "client_credentials"}}}}),
            json!({"mcpServers": {"a": {"url": "http://h", "oauth": {"clientID": "typo"}}}}),
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

    /// The person decides (the tool's size, else the server's); a tool's hint applies only
    /// where they set none, brought into the range a person may give.
    #[test]
    fn the_persons_size_wins_and_a_tools_hint_is_held_to_the_same_range() {
        let rules = BudgetRules {
            server: None,
            tools: BTreeMap::from([("read".to_owned(), 9_000)]),
        };
        let hint = |n: u64| json!({ MAX_RESULT_CHARS_META: n });
        assert_eq!(rules.resolve("read", Some(&hint(400_000))), Some(9_000));
        assert_eq!(rules.resolve("grep", Some(&hint(400_000))), Some(400_000));
        assert_eq!(rules.resolve("grep", None), None);
        assert_eq!(rules.resolve("grep", Some(&json!({"other": 1}))), None);
        assert_eq!(
            rules.resolve("grep", Some(&json!({ MAX_RESULT_CHARS_META: "big" }))),
            None
        );
        // One range for both: what a person may not give, a hint does not get either.
        assert_eq!(
            rules.resolve("grep", Some(&hint(10))),
            Some(*RESULT_CHARS_RANGE.start())
        );
        assert_eq!(
            rules.resolve("grep", Some(&hint(99_000_000_000))),
            Some(*RESULT_CHARS_RANGE.end())
        );
        assert!(result_chars(Some(10), "").is_err());
        assert!(result_chars(Some(99_000_000_000), "").is_err());
        // A server-wide size is the person's too: it wins over the tool's hint.
        let server = BudgetRules {
            server: Some(5_000),
            ..rules
        };
        assert_eq!(server.resolve("grep", Some(&hint(400_000))), Some(5_000));
        assert_eq!(server.resolve("read", Some(&hint(400_000))), Some(9_000));
    }
}
