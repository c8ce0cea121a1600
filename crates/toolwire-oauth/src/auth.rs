//! MCP authorization (OAuth 2.1) for servers over HTTP: where a server's tokens are kept,
//! logging in (authorization code + PKCE, on a loopback redirect or the web app's), client
//! credentials for unattended use, and the checks toolwire adds to rmcp's.
//!
//! rmcp's auth module does discovery (RFC 9728, RFC 8414, OpenID, the 2025-03-26
//! fallbacks), registration (CIMD, RFC 7591), PKCE, the `resource` parameter, issuer
//! checks, refresh, and the client-credentials grants; toolwire drives it and keeps what
//! it cannot: a token file per server and resource, the state a person is shown, and the
//! redirect listener.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationMetadataSource, ClientCredentialsConfig, CredentialStore, JwtSigningAlgorithm,
    OAuthClientConfig, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::dpop::{DpopError, DpopKey};
use crate::dpop_http::DpopOAuthClient;

/// Largest token file read back: a token response is a few kilobytes; anything bigger
/// was not written by toolwire.
const MAX_TOKEN_FILE: u64 = 256 * 1024;

/// Longest a login waits for the person to finish in the browser.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Largest request head the loopback redirect listener reads.
const MAX_CALLBACK_REQUEST: usize = 16 * 1024;

/// How a server's authorization server knows toolwire: the `"oauth"` object of an
/// `mcpServers` entry. Without one, toolwire registers itself (CIMD or RFC 7591).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A client registered out of band.
    pub client_id: Option<String>,
    /// Its secret (confidential clients, client credentials).
    pub client_secret: Option<String>,
    /// An `https://` URL of toolwire's Client ID Metadata Document, used as the client id
    /// where the authorization server supports CIMD.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for instead of the ones the server names.
    pub scopes: Vec<String>,
    /// Unattended: the client-credentials grant instead of a person logging in.
    pub client_credentials: bool,
    /// A PEM private key for `private_key_jwt` client authentication.
    pub private_key_file: Option<PathBuf>,
    /// Its algorithm (`RS256`, `ES256`, …).
    pub signing_algorithm: Option<String>,
    /// Enterprise-managed authorization (SEP-990, cross-app access): the enterprise
    /// identity provider whose ID token is exchanged for an identity assertion (ID-JAG),
    /// which the server's authorization server takes as the grant. Unattended.
    pub idp: Option<IdpSettings>,
    /// Workload identity federation (RFC 7523 JWT bearer): a file holding the JWT the
    /// platform issued to this workload, given as the grant. Unattended.
    pub assertion_file: Option<PathBuf>,
}

/// The enterprise identity provider of [`OAuthSettings::idp`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IdpSettings {
    /// The identity provider's issuer URL, as its ID tokens name it.
    pub issuer: String,
    /// Where toolwire exchanges the person's ID token for an authorization grant.
    pub token_endpoint: String,
    /// toolwire's client at the identity provider.
    pub client_id: String,
    /// toolwire's secret at the identity provider, for a confidential client.
    pub client_secret: Option<String>,
    /// Where the person's ID token is (written by the single sign-on that got it).
    pub id_token_file: PathBuf,
}

impl std::fmt::Debug for IdpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdpSettings")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("id_token_file", &self.id_token_file)
            .finish_non_exhaustive()
    }
}

impl OAuthSettings {
    /// Whether tokens come without a person (client credentials, enterprise-managed).
    pub fn unattended(&self) -> bool {
        self.client_credentials || self.idp.is_some() || self.assertion_file.is_some()
    }
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client secret is left out: never shown, not even in debug output.
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("client_credentials", &self.client_credentials)
            .field("private_key_file", &self.private_key_file)
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp", &self.idp)
            .field("assertion_file", &self.assertion_file)
            .finish_non_exhaustive()
    }
}

/// Why logging in (or using a token) failed. Each variant's text is for a person and
/// says what to do where there is something to do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoginError {
    /// rmcp's part of the flow failed (discovery, registration, the code exchange, a
    /// refresh, an unattended grant), or the flow stopped unexpectedly.
    #[error("{0}")]
    Flow(String),
    /// The authorization server's metadata or answer fails a check toolwire makes
    /// (an endpoint not https, no S256 PKCE, an issuer that changed, too large).
    #[error("{0}")]
    Server(String),
    /// The authorization server refused, with an OAuth error.
    #[error("{0}")]
    Refused(String),
    /// An endpoint could not be reached or its answer read.
    #[error("{0}")]
    Unreachable(String),
    /// The server's `"oauth"` settings lack what the grant needs, or name a file,
    /// endpoint or algorithm that cannot be used.
    #[error("{0}")]
    Settings(String),
    /// The browser's redirect is not this login's (or not a URL), or the loopback
    /// listener for it could not be opened.
    #[error("{0}")]
    Redirect(String),
    /// Nobody finished the login in the browser within this long.
    #[error("nobody finished the login in the browser within {} s", .0.as_secs())]
    TimedOut(Duration),
    /// The server's token file could not be read, written or removed.
    #[error("{0}")]
    TokenFile(String),
    /// A DPoP key or proof could not be made.
    #[error(transparent)]
    Dpop(#[from] DpopError),
    /// This server does not log in: it is not an HTTP server, or toolwire keeps no
    /// tokens here.
    #[error("{0}")]
    Unavailable(String),
}

/// Why an unattended grant failed, and whether the authorization server refused it
/// outright (an OAuth error such as `invalid_client`, or another 4xx): asking again with
/// the same credentials would get the same answer, so it is not asked again.
#[derive(Debug, Clone)]
pub struct GrantError {
    /// Why, for a person.
    pub error: LoginError,
    /// Whether the authorization server refused the grant outright.
    pub refused: bool,
}

impl From<LoginError> for GrantError {
    fn from(error: LoginError) -> Self {
        GrantError {
            error,
            refused: false,
        }
    }
}

impl From<AuthError> for GrantError {
    fn from(e: AuthError) -> Self {
        LoginError::from(e).into()
    }
}

/// OAuth error codes (RFC 6749 §5.2, RFC 8707) that no retry changes.
const DEFINITE_ERRORS: [&str; 8] = [
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "invalid_target",
    "access_denied",
];

/// Whether rmcp's client-credentials error is the authorization server's refusal (an
/// OAuth error answer, or a 4xx) rather than a failure to reach it. rmcp gives these as
/// text only: "Token exchange failed: " then the OAuth2 crate's "Server returned error
/// response: CODE…", or (private-key JWT) "CODE: …" or "HTTP 4xx …".
fn definite_refusal(e: &AuthError) -> bool {
    let AuthError::ClientCredentialsError(text) = e else {
        return false;
    };
    let Some(rest) = text.strip_prefix("Token exchange failed: ") else {
        return false;
    };
    let rest = rest
        .strip_prefix("Server returned error response: ")
        .unwrap_or(rest);
    DEFINITE_ERRORS.iter().any(|code| {
        rest.starts_with(code) && !rest[code.len()..].starts_with(char::is_alphanumeric)
    }) || rest
        .strip_prefix("HTTP 4")
        .is_some_and(|r| r.starts_with(char::is_numeric))
}

impl From<AuthError> for LoginError {
    fn from(e: AuthError) -> Self {
        LoginError::Flow(auth_error_text(&e))
    }
}

/// An rmcp auth error as one line. Its own texts never hold a token; a URL it names is
/// the authorization server's, which the person needs to see.
pub(crate) fn auth_error_text(e: &AuthError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// The token file's contents.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    server: String,
    /// The MCP server's URL: a token is for one resource only.
    resource: String,
    /// The secret of a client toolwire registered (RFC 7591), needed to refresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<StoredCredentials>,
    /// The DPoP private key (base64url PKCS#8) the tokens are bound to, when the
    /// authorization server offers DPoP: as secret as the tokens, and kept with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_key: Option<String>,
}

/// One server's tokens for one resource, in a file only its owner can read
/// (`<data dir>/mcp-auth/<hash>.json`, mode 0600 in a 0700 directory).
#[derive(Clone)]
pub struct TokenFile {
    path: PathBuf,
    server: String,
    resource: String,
    /// The client secret to write beside the next tokens saved (set at login).
    client_secret: Arc<Mutex<Option<String>>>,
    /// The DPoP key once read or made, written back with every save (a store cleared by
    /// rmcp must not lose the key its next token is bound to).
    dpop: Arc<Mutex<Option<Arc<DpopKey>>>>,
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenFile")
            .field("path", &self.path)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl TokenFile {
    /// The file of `server`'s tokens for `resource` in `dir`. The name is a hash, so a
    /// server's name never becomes a path.
    pub fn new(dir: &Path, server: &str, resource: &str) -> Self {
        let hash = blake3::hash(format!("{server}\n{resource}").as_bytes()).to_hex();
        TokenFile {
            path: dir.join(format!("{}.json", &hash[..24])),
            server: server.to_owned(),
            resource: resource.to_owned(),
            client_secret: Arc::new(Mutex::new(None)),
            dpop: Arc::new(Mutex::new(None)),
        }
    }

    /// The token file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<Option<Record>, String> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        if meta.len() > MAX_TOKEN_FILE {
            return Err(format!(
                "{} is larger than a token file can be; remove it and log in again",
                self.path.display()
            ));
        }
        let text = std::fs::read(&self.path)
            .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        let record: Record = serde_json::from_slice(&text).map_err(|_| {
            format!(
                "{} is not a toolwire token file; remove it and log in again",
                self.path.display()
            )
        })?;
        // A file for another resource (a changed URL would hash elsewhere, so this is a
        // copied or edited file) is not used: a token goes to its own resource only.
        if record.resource != self.resource {
            return Ok(None);
        }
        Ok(Some(record))
    }

    fn write(&self, record: &Record) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // A directory that was already there (made by hand, or by an older toolwire) is
        // narrowed too: the mode above applies only to one created now.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot restrict {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        let tmp = self.path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&tmp).and_then(|mut file| {
            std::io::Write::write_all(&mut file, &text)?;
            file.sync_all()
        });
        written
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot write {}: {e}", self.path.display())
            })
    }

    /// Whether tokens are stored (a person logged in, or client credentials were used).
    pub fn has_tokens(&self) -> bool {
        matches!(self.read(), Ok(Some(Record { credentials: Some(c), .. })) if c.token_response.is_some())
    }

    /// Whether the stored access token is missing or ends within a minute.
    pub fn expires_soon(&self) -> bool {
        let Some(credentials) = self.read().ok().flatten().and_then(|r| r.credentials) else {
            return true;
        };
        let Some(response) = &credentials.token_response else {
            return true;
        };
        let (Some(life), Some(received)) = (
            oauth2::TokenResponse::expires_in(response),
            credentials.token_received_at,
        ) else {
            return false;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        received.saturating_add(life.as_secs()) < now.saturating_add(60)
    }

    /// Forgets the tokens; `Ok(false)` when there were none.
    pub fn remove(&self) -> Result<bool, String> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("cannot remove {}: {e}", self.path.display())),
        }
    }

    fn stored_secret(&self) -> Option<String> {
        self.read().ok().flatten().and_then(|r| r.client_secret)
    }

    fn granted_scopes(&self) -> Vec<String> {
        self.read()
            .ok()
            .flatten()
            .and_then(|r| r.credentials)
            .map(|c| c.granted_scopes)
            .unwrap_or_default()
    }

    /// The server's DPoP key: the stored one, or a new one stored now (before any token
    /// request that binds a token to it).
    pub fn dpop_key(&self) -> Result<Arc<DpopKey>, String> {
        if let Some(key) = self.dpop.lock().ok().and_then(|k| k.clone()) {
            return Ok(key);
        }
        let mut record = self.read()?.unwrap_or_default();
        let key = match &record.dpop_key {
            Some(stored) => Arc::new(DpopKey::from_stored(stored).map_err(|e| {
                format!("{}: {e}; remove it and log in again", self.path.display())
            })?),
            None => {
                let key = Arc::new(DpopKey::generate().map_err(|e| e.to_string())?);
                record.server = self.server.clone();
                record.resource = self.resource.clone();
                record.dpop_key = Some(key.to_stored());
                self.write(&record)?;
                key
            }
        };
        if let Ok(mut slot) = self.dpop.lock() {
            *slot = Some(Arc::clone(&key));
        }
        Ok(key)
    }

    /// Whether the stored access token is DPoP-bound (`token_type` DPoP), so that it is
    /// presented with the DPoP scheme and a proof.
    pub fn token_is_dpop(&self) -> bool {
        self.read()
            .ok()
            .flatten()
            .and_then(|r| r.credentials)
            .and_then(|c| c.token_response)
            .is_some_and(|t| {
                oauth2::TokenResponse::token_type(&t)
                    .as_ref()
                    .eq_ignore_ascii_case("dpop")
            })
    }

    fn set_client_secret(&self, secret: Option<String>) {
        if let Ok(mut slot) = self.client_secret.lock() {
            *slot = secret;
        }
    }
}

fn store_error(why: String) -> AuthError {
    AuthError::CredentialStoreError(why)
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self
            .read()
            .map_err(store_error)?
            .and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut record = self.read().map_err(store_error)?.unwrap_or_default();
        record.server = self.server.clone();
        record.resource = self.resource.clone();
        if let Some(secret) = self.client_secret.lock().ok().and_then(|s| s.clone()) {
            record.client_secret = Some(secret);
        }
        record.credentials = Some(credentials);
        if record.dpop_key.is_none()
            && let Some(key) = self.dpop.lock().ok().and_then(|k| k.clone())
        {
            record.dpop_key = Some(key.to_stored());
        }
        self.write(&record).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove().map(|_| ()).map_err(store_error)
    }
}

/// Whether `url` may be used to reach an authorization server: `https:`, or `http:` on
/// a loopback host only (tokens and codes must not cross a network in clear).
pub(crate) fn endpoint_allowed(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    match parsed.scheme() {
        "https" => parsed.host_str().is_some(),
        "http" => match parsed.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// Refuses metadata whose endpoints toolwire will not send codes, secrets or tokens to.
fn check_endpoints(metadata: &AuthorizationMetadata) -> Result<(), LoginError> {
    let named = [
        (
            "authorization_endpoint",
            Some(&metadata.authorization_endpoint),
        ),
        ("token_endpoint", Some(&metadata.token_endpoint)),
        (
            "registration_endpoint",
            metadata.registration_endpoint.as_ref(),
        ),
    ];
    for (field, url) in named {
        if let Some(url) = url
            && !endpoint_allowed(url)
        {
            return Err(LoginError::Server(format!(
                "the authorization server's {field} {url:?} is not https (http is allowed on \
                 loopback only); no credentials were sent"
            )));
        }
    }
    Ok(())
}

/// Whether two URLs share scheme, host and port.
fn same_origin(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// Largest metadata document read (rmcp caps its own reads the same way).
const MAX_METADATA: usize = 1024 * 1024;

/// The 2025-03-26 way: the authorization server metadata at the MCP server's origin,
/// accepted when it names `issuer` (the same origin) as its own.
async fn legacy_metadata(
    resource: &str,
    issuer: &str,
) -> Result<AuthorizationMetadata, LoginError> {
    let mut url = reqwest::Url::parse(resource).map_err(|e| LoginError::Settings(e.to_string()))?;
    url.set_path("/.well-known/oauth-authorization-server");
    url.set_query(None);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| LoginError::Unreachable(e.to_string()))?;
    let mut response = client
        .get(url.clone())
        .header("MCP-Protocol-Version", "2025-03-26")
        .send()
        .await
        .map_err(|e| LoginError::Unreachable(format!("cannot read {url}: {e}")))?;
    if !response.status().is_success() {
        return Err(LoginError::Server(format!(
            "{url} answered {}",
            response.status()
        )));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| LoginError::Unreachable(format!("cannot read {url}: {e}")))?
    {
        if body.len() + chunk.len() > MAX_METADATA {
            return Err(LoginError::Server(format!(
                "{url} is larger than {MAX_METADATA} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body).map_err(|e| {
        LoginError::Server(format!("{url} is not authorization server metadata: {e}"))
    })?;
    if metadata.issuer.as_deref() != Some(issuer) {
        return Err(LoginError::Server(format!(
            "{url} changed its issuer between two reads"
        )));
    }
    Ok(metadata)
}

/// Asks the server, unauthenticated, why it refuses: the `WWW-Authenticate` of its 401.
/// A server that answers otherwise gives no challenge, and discovery then probes the
/// well-known locations.
pub async fn probe_challenge(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        // A configured static Authorization header is what is being replaced.
        if !k.eq_ignore_ascii_case("authorization") {
            request = request.header(k, v);
        }
    }
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "toolwire", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let response = request.body(body.to_string()).send().await.ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A login begun: the URL the person opens, and what finishing it needs.
pub struct PendingLogin {
    manager: AuthorizationManager,
    url: String,
    state: String,
    pub(crate) store: TokenFile,
    dpop: Option<Arc<DpopOAuthClient>>,
}

impl std::fmt::Debug for PendingLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingLogin")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl PendingLogin {
    /// The authorization server's page to open in a browser.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The `state` the redirect must carry back (it binds the redirect to this login).
    pub fn state(&self) -> &str {
        &self.state
    }

    /// Finishes with the redirect the browser was sent to (`…/callback?code=…&state=…`):
    /// the code is exchanged (with the PKCE verifier, the state and the issuer checked)
    /// and the tokens stored.
    pub async fn finish(self, redirect: &str) -> Result<(), LoginError> {
        let parsed = reqwest::Url::parse(redirect)
            .map_err(|_| LoginError::Redirect("the redirect is not a URL".into()))?;
        let param = |name: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = param("error") {
            let detail = param("error_description").unwrap_or_default();
            return Err(LoginError::Refused(format!(
                "the authorization server refused: {} {}",
                clip(&error, 100),
                clip(&detail, 300)
            )));
        }
        let callback = AuthorizationCallback::from_redirect_url(redirect)?;
        // rmcp checks the state against the one it stored too; this says which failed.
        if callback.csrf_token != self.state {
            return Err(LoginError::Redirect(
                "the redirect's state does not match this login (a stale or forged redirect); \
                 no token was requested"
                    .into(),
            ));
        }
        self.manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| token_error(e, self.dpop.as_ref()))?;
        Ok(())
    }
}

/// At most `max` characters of text that came from a server, control characters dropped.
fn clip(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// The authorization server's metadata for `resource`, by rmcp's discovery (from the
/// challenge when there is one), checked for endpoints toolwire may use.
async fn discover(
    manager: &AuthorizationManager,
    resource: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, LoginError> {
    Ok(discover_documented(manager, resource, challenge).await?.0)
}

/// [`discover`], and whether the metadata is a document the authorization server
/// published (`false`: none was found, and the metadata is the 2025-03-26 default
/// endpoints at the MCP server's origin).
async fn discover_documented(
    manager: &AuthorizationManager,
    resource: &str,
    challenge: Option<&str>,
) -> Result<(AuthorizationMetadata, bool), LoginError> {
    let (metadata, documented) = match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => (
            resolution.metadata,
            resolution.source != AuthorizationMetadataSource::LegacyEndpointFallback,
        ),
        // A 2025-03-26 server is its own authorization server, found at its origin's
        // well-known metadata; that revision binds no issuer to it, so an issuer on the
        // same origin under another path (`/oauth`) is that server's. Any other
        // mismatch (another origin) stays refused.
        Err(AuthError::AuthorizationServerMismatch {
            received_issuer, ..
        }) if same_origin(&received_issuer, resource) => {
            (legacy_metadata(resource, &received_issuer).await?, true)
        }
        Err(e) => return Err(e.into()),
    };
    check_endpoints(&metadata)?;
    Ok((metadata, documented))
}

/// Refuses an authorization server that does not say it does PKCE with S256 before
/// anything is sent to it (a registration, a browser sent to it). The MCP authorization
/// spec: metadata without `code_challenge_methods_supported` means no PKCE, and the
/// client must not go on; without PKCE a code intercepted on its way to the redirect
/// (another app on the same loopback port, a log) buys a token. With no document at all
/// (a 2025-03-26 server's default endpoints) there is nothing to read: that revision
/// requires PKCE of every server, and the S256 challenge is sent regardless.
fn check_pkce(metadata: &AuthorizationMetadata, documented: bool) -> Result<(), LoginError> {
    match &metadata.code_challenge_methods_supported {
        Some(methods) if methods.iter().any(|m| m == "S256") => Ok(()),
        Some(methods) => Err(LoginError::Server(format!(
            "the authorization server does not support PKCE with S256 (its \
             code_challenge_methods_supported lists {}); toolwire logs in only with S256 PKCE",
            clip(&methods.join(", "), 200)
        ))),
        None if !documented => Ok(()),
        None => Err(LoginError::Server(
            "the authorization server's metadata has no code_challenge_methods_supported: \
             it does not say it supports PKCE, which the MCP authorization spec requires; \
             no login was begun"
                .into(),
        )),
    }
}

/// The manager for `store`'s server, its authorization server's metadata discovered
/// (from `challenge` when there is one) and set. When that server offers DPoP with
/// ES256, the manager's HTTP client is [`DpopOAuthClient`], so that every token request
/// carries a proof made with the server's key, and discovery is made again through it
/// (the manager keeps what discovery found: the `resource`, the scopes).
async fn manager_for(store: &TokenFile, challenge: Option<&str>) -> Result<Managed, LoginError> {
    let resource = store.resource.as_str();
    let mut manager = AuthorizationManager::new(resource).await?;
    let (mut metadata, documented) = discover_documented(&manager, resource, challenge).await?;
    let mut dpop = None;
    if crate::dpop::offered(&metadata) {
        let key = store.dpop_key().map_err(LoginError::TokenFile)?;
        let client = Arc::new(
            DpopOAuthClient::new(key, &metadata.token_endpoint, resource)
                .map_err(LoginError::Dpop)?,
        );
        dpop = Some(Arc::clone(&client));
        manager = AuthorizationManager::new_with_oauth_http_client(resource, client).await?;
        metadata = discover(&manager, resource, challenge).await?;
        if !crate::dpop::offered(&metadata) {
            return Err(LoginError::Server(
                "the authorization server's metadata changed between two reads (DPoP)".into(),
            ));
        }
    }
    manager.set_credential_store(store.clone());
    manager.set_metadata(metadata.clone());
    Ok(Managed {
        manager,
        metadata,
        documented,
        dpop,
    })
}

/// What [`manager_for`] makes.
struct Managed {
    manager: AuthorizationManager,
    metadata: AuthorizationMetadata,
    /// Whether `metadata` is the authorization server's own document (see
    /// [`discover_documented`]).
    documented: bool,
    /// The DPoP client of its token requests, asked why one failed.
    dpop: Option<Arc<DpopOAuthClient>>,
}

/// A failed token request's error, with DPoP's reason when DPoP gave up on it (rmcp
/// reports only that the request failed).
fn token_error(e: AuthError, dpop: Option<&Arc<DpopOAuthClient>>) -> LoginError {
    let text = auth_error_text(&e);
    match dpop.and_then(|d| d.take_refusal()) {
        Some(why) => LoginError::Flow(format!("{text}: {why}")),
        None => LoginError::Flow(text),
    }
}

/// Begins logging in to the server at `resource`: discovery (from `challenge`, the 401
/// or 403's `WWW-Authenticate`, when there is one), the client's identity, and the
/// authorization URL with PKCE, `state`, `resource` and the scopes.
pub async fn begin(
    store: TokenFile,
    settings: &OAuthSettings,
    challenge: Option<&str>,
    redirect_uri: &str,
) -> Result<PendingLogin, LoginError> {
    let Managed {
        mut manager,
        metadata,
        documented,
        dpop,
    } = manager_for(&store, challenge).await?;
    check_pkce(&metadata, documented)?;
    let mut scopes = if settings.scopes.is_empty() {
        manager.select_scopes(None, &[])
    } else {
        settings.scopes.clone()
    };
    // A new login (a step-up after `insufficient_scope`) asks for more, never less.
    for granted in store.granted_scopes() {
        if !scopes.contains(&granted) {
            scopes.push(granted);
        }
    }
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let cimd_supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let config = if let Some(id) = &settings.client_id {
        let mut config = OAuthClientConfig::new(id.clone(), redirect_uri);
        if let Some(secret) = &settings.client_secret {
            config = config.with_client_secret(secret.clone());
        }
        config
    } else if let Some(url) = settings
        .client_metadata_url
        .as_ref()
        .filter(|_| cimd_supported)
    {
        OAuthClientConfig::new(url.clone(), redirect_uri)
    } else if metadata.registration_endpoint.is_some() {
        manager
            .register_client("toolwire", redirect_uri, &scope_refs)
            .await?
    } else {
        return Err(LoginError::Server(
            "the authorization server offers no registration (neither dynamic registration \
             nor client ID metadata documents): register toolwire there and set \
             \"oauth\": {\"clientId\": …} for this server"
                .into(),
        ));
    };
    store.set_client_secret(config.client_secret.clone());
    manager.configure_client(config.with_scopes(scopes.clone()))?;
    let url = manager.get_authorization_url(&scope_refs).await?;
    let state = reqwest::Url::parse(&url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| LoginError::Flow("the authorization URL carries no state".into()))?;
    Ok(PendingLogin {
        manager,
        url,
        state,
        store,
        dpop,
    })
}

/// The manager that authorizes a connection from stored tokens (refreshing them before
/// they expire), or `None` when there are none.
pub async fn stored_manager(store: &TokenFile) -> Result<Option<AuthorizationManager>, LoginError> {
    if !store.has_tokens() {
        return Ok(None);
    }
    // Discovered here (not by rmcp's `initialize_from_store`) for the same checks and
    // fallbacks as at login.
    let mut manager = manager_for(store, None).await?.manager;
    if !manager.initialize_from_store().await? {
        return Ok(None);
    }
    // rmcp keeps only the client id; a registered client's secret is needed to refresh.
    if let Some(secret) = store.stored_secret()
        && let Some(client_id) = store
            .read()
            .ok()
            .flatten()
            .and_then(|r| r.credentials)
            .map(|c| c.client_id)
    {
        manager.configure_client(
            OAuthClientConfig::new(client_id, "http://127.0.0.1/callback")
                .with_client_secret(secret),
        )?;
    }
    Ok(Some(manager))
}

/// Unattended: the client-credentials grant (client secret, basic or post as the server
/// offers, or a private-key JWT), or the enterprise-managed one; the token is stored
/// like a person's, and the manager that uses it made from the store.
pub async fn unattended(
    store: &TokenFile,
    settings: &OAuthSettings,
) -> Result<AuthorizationManager, GrantError> {
    // rmcp's private-key-JWT and enterprise exchanges are not `Send` (they hold a form
    // serializer across an await), so the grant runs on a thread with its own runtime.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (own_store, own_settings) = (store.clone(), settings.clone());
    std::thread::spawn(move || {
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| GrantError::from(LoginError::Flow(format!("cannot start the grant: {e}"))))
            .and_then(|rt| {
                rt.block_on(async {
                    match (&own_settings.idp, &own_settings.assertion_file) {
                        (Some(idp), _) => grant_enterprise(&own_store, &own_settings, idp)
                            .await
                            .map_err(GrantError::from),
                        (None, Some(file)) => {
                            grant_jwt_bearer(&own_store, &own_settings, file).await
                        }
                        (None, None) => grant_client_credentials(&own_store, &own_settings).await,
                    }
                })
            });
        let _ = tx.send(result);
    });
    rx.await
        .map_err(|_| LoginError::Flow("the unattended grant stopped unexpectedly".into()))??;
    Ok(stored_manager(store)
        .await?
        .ok_or_else(|| LoginError::Flow("the client-credentials grant stored no token".into()))?)
}

async fn grant_client_credentials(
    store: &TokenFile,
    settings: &OAuthSettings,
) -> Result<(), GrantError> {
    let client_id = settings.client_id.clone().ok_or_else(|| {
        LoginError::Settings("client credentials need \"oauth\": {\"clientId\"}".into())
    })?;
    let resource = Some(store.resource.clone());
    let scopes = settings.scopes.clone();
    let config = match (&settings.private_key_file, &settings.client_secret) {
        (Some(file), _) => {
            let signing_key = std::fs::read(file).map_err(|e| {
                LoginError::Settings(format!(
                    "cannot read the private key {}: {e}",
                    file.display()
                ))
            })?;
            let signing_algorithm = signing_algorithm(settings.signing_algorithm.as_deref())?;
            ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key,
                signing_algorithm,
                token_endpoint_audience: None,
                scopes,
                resource,
            }
        }
        (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.clone(),
            scopes,
            resource,
        },
        (None, None) => {
            return Err(LoginError::Settings(
                "client credentials need \"clientSecret\" or \"privateKeyFile\"".into(),
            )
            .into());
        }
    };
    let Managed {
        mut manager, dpop, ..
    } = manager_for(store, None).await?;
    manager.validate_client_credentials_metadata(&config)?;
    manager.configure_client_credentials(&config)?;
    if let Err(e) = manager.exchange_client_credentials(&config).await {
        let refused = definite_refusal(&e);
        return Err(GrantError {
            error: token_error(e, dpop.as_ref()),
            refused,
        });
    }
    Ok(())
}

/// SEP-990: the person's ID token, exchanged at their identity provider for an identity
/// assertion (ID-JAG) for this server's authorization server, then redeemed there.
async fn grant_enterprise(
    store: &TokenFile,
    settings: &OAuthSettings,
    idp: &IdpSettings,
) -> Result<(), LoginError> {
    use rmcp::transport::auth::enterprise::{
        EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
    };
    let client_id = settings.client_id.clone().ok_or_else(|| {
        LoginError::Settings(
            "enterprise-managed authorization needs \"oauth\": {\"clientId\"}".into(),
        )
    })?;
    if !endpoint_allowed(&idp.token_endpoint) {
        return Err(LoginError::Settings(format!(
            "the identity provider's token endpoint {:?} is not https (http is allowed on \
             loopback only)",
            idp.token_endpoint
        )));
    }
    let id_token = read_secret_file(&idp.id_token_file)?;
    let manager = AuthorizationManager::new(store.resource.as_str()).await?;
    let metadata = discover(&manager, &store.resource, None).await?;
    let issuer = metadata.issuer.clone().ok_or_else(|| {
        LoginError::Server("the authorization server's metadata names no issuer".into())
    })?;
    // The authorization server's advertised methods decide basic or post.
    let post_only = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|methods| {
            methods.iter().any(|m| m == "client_secret_post")
                && !methods.iter().any(|m| m == "client_secret_basic")
        });
    let secret_auth = |secret: &Option<String>, post: bool| match secret {
        Some(s) if post => {
            EmaClientAuthentication::ClientSecretPost(oauth2::ClientSecret::new(s.clone()))
        }
        Some(s) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(s.clone())),
        None => EmaClientAuthentication::None,
    };
    let idp_server = EmaAuthorizationServer::new(&idp.issuer, &idp.token_endpoint, &idp.client_id)
        .with_client_authentication(secret_auth(&idp.client_secret, false));
    let resource_server =
        EmaAuthorizationServer::new(issuer.clone(), &metadata.token_endpoint, &client_id)
            .with_client_authentication(secret_auth(&settings.client_secret, post_only));
    let http = rmcp::transport::auth::default_oauth_http_client()?;
    let mut request = EmaExchangeRequest::new_with_id_token(
        idp_server,
        resource_server,
        &store.resource,
        &id_token,
    );
    if !settings.scopes.is_empty() {
        request = request.with_scopes(settings.scopes.clone());
    }
    let token = request
        .exchange(&http, &http)
        .await
        .map_err(|e| LoginError::Flow(format!("enterprise-managed authorization failed: {e}")))?;
    let mut response = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "bearer",
    });
    if let Some(expires) = token.expires_in {
        response["expires_in"] = expires.as_secs().into();
    }
    let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
    scopes.sort();
    keep_token(store, client_id, response, scopes, issuer).await
}

/// Stores a token response (JSON, as a token endpoint gives it) got without a person.
async fn keep_token(
    store: &TokenFile,
    client_id: String,
    response: serde_json::Value,
    scopes: Vec<String>,
    issuer: String,
) -> Result<(), LoginError> {
    let response = serde_json::from_value(response)
        .map_err(|e| LoginError::Server(format!("the token response is not one: {e}")))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let credentials = StoredCredentials::new(client_id, Some(response), scopes, Some(now))
        .with_issuer(Some(issuer));
    store.save(credentials).await?;
    Ok(())
}

/// Workload identity federation (SEP-1933, RFC 7523): a JWT the platform issued to this
/// workload, given to the authorization server as the grant. A refusal is final: the
/// same assertion is not sent again, and no other grant is tried.
async fn grant_jwt_bearer(
    store: &TokenFile,
    settings: &OAuthSettings,
    assertion_file: &Path,
) -> Result<(), GrantError> {
    let client_id = settings.client_id.clone().ok_or_else(|| {
        LoginError::Settings("the jwt_bearer grant needs \"oauth\": {\"clientId\"}".into())
    })?;
    let assertion = read_secret_file(assertion_file)?;
    let manager = AuthorizationManager::new(store.resource.as_str()).await?;
    let metadata = discover(&manager, &store.resource, None).await?;
    let issuer = metadata.issuer.clone().unwrap_or_default();
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
        .append_pair("assertion", &assertion)
        .append_pair("client_id", &client_id)
        .append_pair("resource", &store.resource);
    if !settings.scopes.is_empty() {
        form.append_pair("scope", &settings.scopes.join(" "));
    }
    let body = form.finish();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| LoginError::Unreachable(e.to_string()))?;
    let endpoint = &metadata.token_endpoint;
    let mut response = client
        .post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| LoginError::Unreachable(format!("cannot reach {endpoint}: {e}")))?;
    let status = response.status();
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| LoginError::Unreachable(format!("cannot read {endpoint}'s answer: {e}")))?
    {
        if bytes.len() + chunk.len() > MAX_METADATA {
            return Err(LoginError::Server(format!("{endpoint}'s answer is too large")).into());
        }
        bytes.extend_from_slice(&chunk);
    }
    let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if !status.is_success() {
        let code = answer["error"].as_str().unwrap_or("no error code");
        let detail = answer["error_description"].as_str().unwrap_or_default();
        return Err(GrantError {
            error: LoginError::Refused(format!(
                "the authorization server refused the workload's assertion ({status}): {} {}",
                clip(code, 100),
                clip(detail, 300)
            )),
            refused: status.is_client_error(),
        });
    }
    let scopes = answer["scope"]
        .as_str()
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(keep_token(store, client_id, answer, scopes, issuer).await?)
}

/// Longest a logout waits on the authorization server to revoke its tokens.
const REVOCATION_TIMEOUT: Duration = Duration::from_secs(20);

/// Revokes `store`'s tokens at the authorization server (RFC 7009), the refresh token
/// first (revoking it ends the grant), then the access token. `None` when there is
/// nothing to revoke or the server offers no `revocation_endpoint`; `Some(Err(why))`
/// when revoking failed (the caller forgets the tokens anyway).
pub async fn revoke(store: &TokenFile, settings: &OAuthSettings) -> Option<Result<(), String>> {
    let record = store.read().ok()??;
    let credentials = record.credentials?;
    let response = credentials.token_response?;
    let access = oauth2::TokenResponse::access_token(&response)
        .secret()
        .clone();
    let refresh = oauth2::TokenResponse::refresh_token(&response).map(|t| t.secret().clone());
    let secret = record.client_secret.or_else(|| {
        (settings.client_id.as_deref() == Some(credentials.client_id.as_str()))
            .then(|| settings.client_secret.clone())
            .flatten()
    });
    let revoking = async {
        let manager = AuthorizationManager::new(store.resource.as_str())
            .await
            .map_err(|e| auth_error_text(&e))?;
        let metadata = discover(&manager, &store.resource, None)
            .await
            .map_err(|e| e.to_string())?;
        let Some(endpoint) = metadata
            .additional_fields
            .get("revocation_endpoint")
            .and_then(serde_json::Value::as_str)
        else {
            return Ok(false);
        };
        if !endpoint_allowed(endpoint) {
            return Err(format!(
                "its revocation_endpoint {endpoint:?} is not https (http is allowed on \
                 loopback only); no token was sent"
            ));
        }
        // The secret goes where the token endpoint takes it (rmcp's choice): in the body
        // when the server offers client_secret_post only, else in Basic.
        let methods = metadata
            .additional_fields
            .get("revocation_endpoint_auth_methods_supported")
            .or_else(|| {
                metadata
                    .additional_fields
                    .get("token_endpoint_auth_methods_supported")
            })
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default();
        let post_only = methods.iter().any(|m| m == "client_secret_post")
            && !methods.iter().any(|m| m == "client_secret_basic");
        let client = crate::oauth_address::filtered_client(
            &store.resource,
            reqwest::redirect::Policy::none(),
            REVOCATION_TIMEOUT,
        )
        .map_err(|e| e.to_string())?;
        let tokens = refresh
            .iter()
            .map(|t| (t, "refresh_token"))
            .chain([(&access, "access_token")]);
        let revoking_as = RevokingClient {
            client: &client,
            endpoint,
            client_id: &credentials.client_id,
            secret: secret.as_deref(),
            post_only,
        };
        for (token, hint) in tokens {
            match revoking_as.revoke(token, hint, false).await {
                // The MCP Python SDK's endpoint wants a client_secret field even from a
                // public client: one more request with an empty one, for that case only.
                Err(why) if secret.is_none() && why.contains("client_secret") => {
                    revoking_as.revoke(token, hint, true).await?
                }
                other => other?,
            }
        }
        Ok(true)
    };
    match tokio::time::timeout(REVOCATION_TIMEOUT, revoking).await {
        Ok(Ok(true)) => Some(Ok(())),
        Ok(Ok(false)) => None,
        Ok(Err(why)) => Some(Err(why)),
        Err(_) => Some(Err(format!(
            "the authorization server did not answer within {} s",
            REVOCATION_TIMEOUT.as_secs()
        ))),
    }
}

/// One client revoking at one revocation endpoint.
struct RevokingClient<'a> {
    client: &'a reqwest::Client,
    endpoint: &'a str,
    client_id: &'a str,
    secret: Option<&'a str>,
    /// The secret goes in the body, not in Basic.
    post_only: bool,
}

impl RevokingClient<'_> {
    /// Revokes `token` (of kind `hint`); `empty_secret` adds an empty `client_secret`.
    async fn revoke(&self, token: &str, hint: &str, empty_secret: bool) -> Result<(), String> {
        let endpoint = self.endpoint;
        // The form is finished before any await: its serializer is not `Send`.
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            // The client names itself in the body too (servers such as the MCP Python
            // SDK's require it, with Basic as well).
            form.append_pair("token", token)
                .append_pair("token_type_hint", hint)
                .append_pair("client_id", self.client_id);
            match self.secret {
                Some(secret) if self.post_only => {
                    form.append_pair("client_secret", secret);
                }
                None if empty_secret => {
                    form.append_pair("client_secret", "");
                }
                _ => {}
            }
            form.finish()
        };
        let mut request = self
            .client
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some(secret) = self.secret.filter(|_| !self.post_only) {
            request = request.basic_auth(form_encode(self.client_id), Some(form_encode(secret)));
        }
        let mut answer = request
            .body(body)
            .send()
            .await
            .map_err(|e| format!("cannot reach {endpoint}: {e}"))?;
        // RFC 7009 §2.2: 200 for a revoked token and for one it did not know.
        let status = answer.status();
        if status.is_success() {
            return Ok(());
        }
        // The OAuth error, if the answer is one (read within a bound, clipped).
        let mut bytes = Vec::new();
        while let Ok(Some(chunk)) = answer.chunk().await {
            if bytes.len() + chunk.len() > MAX_METADATA {
                bytes.clear();
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let said = serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|v| {
                let code = v["error"].as_str().unwrap_or_default();
                let detail = v["error_description"].as_str().unwrap_or_default();
                format!(": {} {}", clip(code, 100), clip(detail, 300))
            })
            .unwrap_or_default();
        Err(format!(
            "{endpoint} answered {status} to revoking the {}{}",
            hint.replace('_', " "),
            said.trim_end()
        ))
    }
}

/// RFC 6749 §2.3.1: client credentials in HTTP Basic are form-encoded first.
fn form_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A secret kept in a file (an ID token), read with a bound and trimmed.
fn read_secret_file(path: &Path) -> Result<String, LoginError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| LoginError::Settings(format!("cannot read {}: {e}", path.display())))?;
    if meta.len() > MAX_TOKEN_FILE {
        return Err(LoginError::Settings(format!(
            "{} is too large for a token",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoginError::Settings(format!("cannot read {}: {e}", path.display())))?;
    Ok(text.trim().to_owned())
}

fn signing_algorithm(name: Option<&str>) -> Result<JwtSigningAlgorithm, LoginError> {
    Ok(match name.unwrap_or("RS256") {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => {
            return Err(LoginError::Settings(format!(
                "signing algorithm {other:?} is not one of RS256, RS384, RS512, ES256, ES384"
            )));
        }
    })
}

/// What a loopback redirect finishes a login on (toolwire-mcp's `McpServer`): the
/// server's name, for the page the browser is shown, and the step that takes the
/// redirect. A trait so that this crate stays below the MCP client that uses it.
pub trait FinishLogin: Sync {
    /// The server's name, as the person knows it.
    fn name(&self) -> &str;
    /// Finishes `pending` with the browser's redirect URL (`redirect`).
    fn finish_login(
        &self,
        pending: PendingLogin,
        redirect: &str,
    ) -> impl std::future::Future<Output = Result<(), LoginError>> + Send;
}

/// A listener for the authorization server's redirect on a loopback port (RFC 8252):
/// the redirect URI is known before the login begins, the code arrives after.
#[derive(Debug)]
pub struct LoopbackRedirect {
    listener: tokio::net::TcpListener,
    /// The same port on the other loopback (IPv6 `[::1]` beside 127.0.0.1), when the
    /// system has it: a browser sent to `localhost` may try either (RFC 8252 §7.3).
    other: Option<tokio::net::TcpListener>,
    uri: String,
}

impl LoopbackRedirect {
    /// Listens on 127.0.0.1 on a port the system picks, and on `[::1]` at the same port
    /// where IPv6 is available; on `[::1]` only where IPv4 loopback is not. The redirect
    /// URI names the IP literal listened on first (RFC 8252 §7.3: not `localhost`).
    pub async fn bind() -> Result<Self, LoginError> {
        let (listener, host) = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
            Ok(listener) => (listener, "127.0.0.1"),
            Err(v4) => match tokio::net::TcpListener::bind(("::1", 0)).await {
                Ok(listener) => (listener, "[::1]"),
                Err(v6) => {
                    return Err(LoginError::Redirect(format!(
                        "cannot listen on loopback: {v4} (IPv4), {v6} (IPv6)"
                    )));
                }
            },
        };
        let port = listener
            .local_addr()
            .map_err(|e| LoginError::Redirect(e.to_string()))?
            .port();
        let other = if host == "127.0.0.1" {
            // Best effort: the port may be taken on IPv6, or IPv6 may be off.
            tokio::net::TcpListener::bind(("::1", port)).await.ok()
        } else {
            None
        };
        Ok(LoopbackRedirect {
            listener,
            other,
            uri: format!("http://{host}:{port}/callback"),
        })
    }

    /// The next connection on either listener.
    async fn accept(&self) -> std::io::Result<tokio::net::TcpStream> {
        match &self.other {
            Some(other) => tokio::select! {
                accepted = self.listener.accept() => accepted.map(|(s, _)| s),
                accepted = other.accept() => accepted.map(|(s, _)| s),
            },
            None => self.listener.accept().await.map(|(s, _)| s),
        }
    }

    /// Whether it also listens on the IPv6 loopback.
    pub fn on_ipv6(&self) -> bool {
        self.other.is_some() || self.uri.contains("[::1]")
    }

    /// The redirect URI to register: `http://127.0.0.1:PORT/callback`.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the browser's redirect to `pending`'s login, finishes the login with it
    /// (the code exchanged, the tokens stored) and tells the tab how that went. Other
    /// requests (a favicon, a stray or forged redirect) are answered 404 and waited past.
    pub async fn complete(
        &self,
        server: &impl FinishLogin,
        pending: PendingLogin,
        timeout: Duration,
    ) -> Result<(), LoginError> {
        let state = pending.state().to_owned();
        let (url, mut stream) = tokio::time::timeout(timeout, self.landing(&state))
            .await
            .map_err(|_| LoginError::TimedOut(timeout))?;
        let finished = server.finish_login(pending, &url).await;
        let _ = match &finished {
            Ok(()) => {
                let done = format!(
                    "toolwire is logged in to {}. You can close this tab and return to the terminal.",
                    server.name()
                );
                respond(&mut stream, "200 OK", &done).await
            }
            Err(e) => {
                let failed = format!("Logging in to {} failed: {e}", server.name());
                respond(&mut stream, "502 Bad Gateway", &failed).await
            }
        };
        finished
    }

    /// The redirect that carries `state`: its URL, and the connection to answer it on.
    /// Connections are read side by side, each for at most 10 s: one that says nothing (a
    /// browser's preconnect, another local process) must not hold the redirect behind it.
    async fn landing(&self, state: &str) -> (String, tokio::net::TcpStream) {
        let mut reading = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.accept(), if reading.len() < MAX_CALLBACK_CONNECTIONS => {
                    let Ok(stream) = accepted else {
                        // Out of descriptors, say: wait rather than spin.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    reading.spawn(redirect_on(stream, state.to_owned()));
                }
                Some(read) = reading.join_next() => {
                    if let Ok(Some(landed)) = read {
                        // The other connections' tasks end with `reading`.
                        return landed;
                    }
                }
            }
        }
    }
}

/// Connections the redirect listener reads at once; past that it accepts the next as
/// one ends (each ends within 10 s), so that a flood of them costs bounded memory.
const MAX_CALLBACK_CONNECTIONS: usize = 64;

/// The redirect to the login `state` names when `stream` carries it: its URL, and the
/// connection to answer it on. Other requests (a favicon, a stray or forged redirect)
/// are answered 404.
async fn redirect_on(
    mut stream: tokio::net::TcpStream,
    state: String,
) -> Option<(String, tokio::net::TcpStream)> {
    let target = read_request_target(&mut stream).await?;
    let url = format!("http://127.0.0.1{target}");
    let matches = reqwest::Url::parse(&url).is_ok_and(|u| {
        u.path() == "/callback" && u.query_pairs().any(|(k, v)| k == "state" && v == state)
    });
    if matches {
        return Some((url, stream));
    }
    let _ = respond(&mut stream, "404 Not Found", "Not a login redirect.").await;
    None
}

/// The target of an HTTP request's first line (`/callback?…`), read with a bound.
async fn read_request_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_CALLBACK_REQUEST {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    })
    .await;
    read.ok()??;
    let text = String::from_utf8_lossy(&head);
    let mut first = text.lines().next()?.split(' ');
    match (first.next(), first.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

async fn respond(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    // The text may quote an authorization server's error: escaped, never markup.
    let text: String = text
        .chars()
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            c => c.to_string(),
        })
        .collect();
    let body = format!("<!doctype html><meta charset=utf-8><title>toolwire</title><p>{text}</p>");
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn http_endpoints_only_on_loopback() {
        assert!(endpoint_allowed("https://auth.example.com/token"));
        assert!(endpoint_allowed("http://127.0.0.1:9000/token"));
        assert!(endpoint_allowed("http://localhost/token"));
        assert!(endpoint_allowed("http://[::1]:8/token"));
        assert!(!endpoint_allowed("http://auth.example.com/token"));
        assert!(!endpoint_allowed("http://10.0.0.1/token"));
        assert!(!endpoint_allowed("ftp://127.0.0.1/token"));
        assert!(!endpoint_allowed("not a url"));
    }

    #[test]
    fn a_token_file_for_another_resource_or_too_large_is_not_used() {
        let dir = std::env::temp_dir().join(format!("tw-token-test-{}", std::process::id()));
        let file = TokenFile::new(&dir, "srv", "https://a.example/mcp");
        let record = Record {
            server: "srv".into(),
            resource: "https://b.example/mcp".into(),
            ..Record::default()
        };
        file.write(&record).unwrap();
        assert!(
            file.read().unwrap().is_none(),
            "another resource's file was used"
        );
        std::fs::write(file.path(), vec![b' '; MAX_TOKEN_FILE as usize + 1]).unwrap();
        assert!(
            file.read()
                .err()
                .unwrap_or_default()
                .contains("larger than a token file")
        );
        std::fs::write(file.path(), b"not json").unwrap();
        assert!(
            file.read()
                .err()
                .unwrap_or_default()
                .contains("not a toolwire token file")
        );
        assert!(!file.has_tokens());
        assert!(file.expires_soon());
        assert!(file.remove().unwrap());
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn a_refusal_is_told_from_a_failure_to_reach_the_server() {
        let refusal = |text: &str| {
            definite_refusal(&AuthError::ClientCredentialsError(format!(
                "Token exchange failed: {text}"
            )))
        };
        // rmcp's texts: the OAuth2 crate's for a client secret, its own for a JWT.
        assert!(refusal(
            "Server returned error response: invalid_client: bad secret"
        ));
        assert!(refusal(
            "Server returned error response: unauthorized_client"
        ));
        assert!(refusal("invalid_grant: the assertion expired"));
        assert!(refusal("HTTP 403 Forbidden"));
        assert!(!refusal("Request failed"));
        assert!(!refusal("HTTP 503 Service Unavailable"));
        assert!(!refusal(
            "Server returned error response: temporarily_unavailable"
        ));
        assert!(!refusal("invalid_clientele: made up"));
        assert!(!definite_refusal(&AuthError::AuthorizationRequired));
    }

    #[tokio::test]
    async fn the_redirect_listener_answers_on_both_loopbacks() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let redirect = LoopbackRedirect::bind().await.unwrap();
        let port = reqwest::Url::parse(redirect.uri()).unwrap().port().unwrap();
        let ipv6 = std::net::TcpListener::bind(("::1", 0)).is_ok();
        assert_eq!(
            redirect.on_ipv6(),
            ipv6,
            "IPv6 loopback is {}available but the listener is {}on it",
            if ipv6 { "" } else { "not " },
            if redirect.on_ipv6() { "" } else { "not " }
        );
        let mut hosts = vec!["127.0.0.1"];
        if ipv6 {
            hosts.push("::1");
        }
        for host in hosts {
            let landing = tokio::spawn({
                let request = format!("GET /callback?code=c&state=s-{host} HTTP/1.1\r\n\r\n");
                async move {
                    let mut stream = tokio::net::TcpStream::connect((host, port)).await.unwrap();
                    stream.write_all(request.as_bytes()).await.unwrap();
                    let mut answer = String::new();
                    let _ = stream.read_to_string(&mut answer).await;
                    answer
                }
            });
            let (url, mut stream) = tokio::time::timeout(
                Duration::from_secs(10),
                redirect.landing(&format!("s-{host}")),
            )
            .await
            .unwrap();
            assert!(url.ends_with(&format!("state=s-{host}")), "{url}");
            respond(&mut stream, "200 OK", "done").await.unwrap();
            assert!(landing.await.unwrap().starts_with("HTTP/1.1 200"));
        }
    }

    #[test]
    fn settings_debug_hides_the_secret() {
        let settings = OAuthSettings {
            client_id: Some("id".into()),
            client_secret: Some("s3cret-value".into()),
            ..OAuthSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cret-value"), "{shown}");
        assert!(shown.contains("\"id\""), "{shown}");
    }
}
