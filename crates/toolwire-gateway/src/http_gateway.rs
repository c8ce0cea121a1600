//! The gateway over streamable HTTP: rmcp's service at `/mcp` behind a bearer token (the
//! approvals a tool call asks go back to the caller, so a caller that is not the person's
//! host must not get in: any local process of any user could answer its own question and
//! run the tool), on toolwire-http's listener (a connection cap, header, idle and stall
//! timeouts), with the token kept in a file of the data directory only its owner reads.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::{Gateway, GatewayError, stored_all};

/// The file in the data directory that holds the HTTP gateway's token (made at the first
/// `--http` or `toolwire mcp install --http`, mode 0600).
pub const HTTP_TOKEN_FILE: &str = "gateway-token";

/// The shortest token taken: shorter ones could be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// How the HTTP gateway admits its callers and holds their connections.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpSettings {
    /// The token every request must carry as `Authorization: Bearer TOKEN` (at least
    /// [`MIN_TOKEN_LEN`] characters).
    pub token: String,
    /// Most connections open at once (at most half the open-file limit is used); past
    /// it, a new connection takes the place of one doing nothing, else gets `503`.
    pub max_connections: usize,
    /// How long a client has to send a whole request head, from its accept or from the
    /// head's first byte.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
}

impl std::fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token: settings end up in logs.
        f.debug_struct("HttpSettings")
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

impl HttpSettings {
    /// Callers with `token`, and `toolwire serve`'s connection limits.
    pub fn new(token: String) -> Self {
        HttpSettings {
            token,
            max_connections: 512,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
        }
    }
}

/// The gateway's HTTP service: `gateway` at `/mcp`, every request checked for `token`
/// first (in constant time), then rmcp's own checks (only loopback `Host` names, so a
/// page elsewhere cannot rebind a name to this port, and no cross-site `Origin`). Each
/// MCP session (2025-11-25) gets a handler and a toolwire session of its own; stateless
/// requests (2026-07-28) share one toolwire session per client name. A router of its
/// own, so it can be driven in process (a fuzz target, with `tower::ServiceExt::oneshot`)
/// as [`serve_http`] serves it.
pub fn http_router(gateway: Gateway, token: &str) -> Result<axum::Router, GatewayError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    if token.chars().count() < MIN_TOKEN_LEN {
        return Err(GatewayError::WeakToken);
    }
    let config = StreamableHttpServerConfig::default().with_allowed_origins([
        "http://localhost:*",
        "http://127.0.0.1:*",
        "http://[::1]:*",
    ]);
    let service = StreamableHttpService::new(
        move || Ok(gateway.sibling()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token: Arc<str> = Arc::from(token);
    let check = move |request: Request, next: Next| {
        let token = Arc::clone(&token);
        async move {
            if toolwire_http::bearer_matches(request.headers(), &token) {
                next.run(request).await
            } else {
                unauthorized()
            }
        }
    };
    Ok(axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(check)))
}

/// The `401` of a request without the token, before anything of it is read.
fn unauthorized() -> Response {
    let body = r#"{"error":{"code":"unauthorized","message":"the gateway needs its token: send Authorization: Bearer <the token in the data directory's gateway-token file>"}}"#;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(r#"Bearer realm="toolwire gateway""#),
    );
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Serves `gateway` over streamable HTTP at `/mcp` on `listener` until Ctrl-C or
/// SIGTERM (see [`http_router`] and [`serve_http_until`]).
pub async fn serve_http(
    gateway: Gateway,
    listener: tokio::net::TcpListener,
    settings: HttpSettings,
) -> Result<(), GatewayError> {
    serve_http_until(
        gateway,
        listener,
        settings,
        toolwire_http::shutdown_signal(),
    )
    .await
}

/// [`serve_http`] until `stop` resolves; then every call answered is stored before this
/// returns. Not a graceful shutdown of the connections: that would wait for every
/// host's open event stream.
pub async fn serve_http_until(
    gateway: Gateway,
    listener: tokio::net::TcpListener,
    settings: HttpSettings,
    stop: impl Future<Output = ()>,
) -> Result<(), GatewayError> {
    let stored = gateway.sibling();
    let router = http_router(gateway, &settings.token)?;
    let cap =
        toolwire_http::connection_cap(settings.max_connections, toolwire_http::open_files_limit());
    let limits = toolwire_http::Limits {
        header_read: settings.header_read_timeout,
        idle: settings.idle_timeout,
        stall: toolwire_http::STALL_TIMEOUT,
    };
    // The listener's own stop would wait for every connection to finish its request,
    // and a host's event stream never does: on `stop` the accept loop is dropped instead.
    let served = toolwire_http::serve(
        listener,
        router,
        toolwire_http::Connections::new(cap),
        limits,
        std::future::pending(),
    );
    tokio::select! {
        () = served => {}
        () = stop => {}
    }
    stored_all(&stored).await
}

/// The HTTP gateway's token, from [`HTTP_TOKEN_FILE`] in `data_dir`: read when the file
/// is there, else made (random, in a file only its owner can read) and returned, with
/// the file's path. A file others can read, or one that holds no token, is refused
/// rather than replaced: the person decides.
pub fn http_token(data_dir: &Path) -> Result<(String, PathBuf), GatewayError> {
    let path = data_dir.join(HTTP_TOKEN_FILE);
    let fail = |what: &'static str, source: std::io::Error| GatewayError::TokenFile {
        what,
        path: path.clone(),
        source,
    };
    match read_token(&path) {
        Ok(Some(token)) => return Ok((token, path)),
        Ok(None) => {}
        Err(why) => return Err(why),
    }
    std::fs::create_dir_all(data_dir).map_err(|e| fail("make the directory of", e))?;
    // Two v4 UUIDs: 244 random bits from the system's generator, as 64 hex digits.
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    // Written whole beside, then linked to its name, which fails if another process made
    // the file meanwhile: nobody ever reads half a token, and the first one made wins.
    let temp = data_dir.join(format!("{HTTP_TOKEN_FILE}.{}.tmp", uuid::Uuid::new_v4()));
    let written = write_private(&temp, &format!("{token}\n"));
    let linked = written.and_then(|()| std::fs::hard_link(&temp, &path));
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok((token, path)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match read_token(&path)? {
            Some(token) => Ok((token, path)),
            None => Err(GatewayError::TokenFileVanished(path)),
        },
        Err(e) => Err(fail("write", e)),
    }
}

/// The token in `path`, `None` when there is no such file.
fn read_token(path: &Path) -> Result<Option<String>, GatewayError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(GatewayError::TokenFile {
                what: "read the gateway's token in",
                path: path.to_owned(),
                source,
            });
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|source| GatewayError::TokenFile {
                what: "read",
                path: path.to_owned(),
                source,
            })?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(GatewayError::TokenFileShared {
                path: path.to_owned(),
                mode: mode & 0o777,
            });
        }
    }
    let token = text.lines().next().unwrap_or_default().trim();
    if token.chars().count() < MIN_TOKEN_LEN {
        return Err(GatewayError::NoToken(path.to_owned()));
    }
    Ok(Some(token.to_owned()))
}

/// Writes `text` to a new file at `path` that only its owner can read.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_made_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let (token, path) = http_token(&data).unwrap();
        assert_eq!(path, data.join(HTTP_TOKEN_FILE));
        assert_eq!(token.len(), 64);
        assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(http_token(&data).unwrap().0, token);
        // Nothing left beside it.
        assert_eq!(std::fs::read_dir(&data).unwrap().count(), 1);
        // A token too short is refused, not replaced.
        std::fs::remove_file(&path).unwrap();
        write_private(&path, "short\n").unwrap();
        let err = http_token(&data).unwrap_err();
        assert!(
            matches!(&err, GatewayError::NoToken(p) if *p == path),
            "{err}"
        );
        assert!(err.to_string().contains("no token of at least 16"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "short\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_token_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (_, path) = http_token(dir.path()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = http_token(dir.path()).unwrap_err();
        assert!(
            matches!(&err, GatewayError::TokenFileShared { mode: 0o644, .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("can be read by other users (mode 644)"),
            "{err}"
        );
    }
}
