//! Logging in against an authorization server that lies: a small one on loopback, made
//! to answer with a wrong issuer, a `resource` for another server, `http:` endpoints off
//! loopback, a redirect to another host, metadata too large or not JSON, no S256 PKCE,
//! and a redirect whose state is not the login's. Each gets a clear error and no token is requested or
//! stored. A well-behaved one shows what a good login sends (PKCE S256, `resource`) and
//! keeps (an owner-only file), and that no debug output shows the token.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use sha2::Digest;
use toolwire_mcp::{Limits, McpServer, ServerConfig, Transport};

const ACCESS_TOKEN: &str = "tw-test-access-token-0123456789";

/// How the authorization server misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Lie {
    None,
    WrongIssuer,
    OtherResource,
    HttpTokenEndpoint,
    RedirectElsewhere,
    Oversized,
    Malformed,
    PlainPkceOnly,
    /// Its metadata has no `code_challenge_methods_supported`: it does not say it does PKCE.
    NoPkce,
    /// Its revocation endpoint fails (503).
    RevocationFails,
}

struct Auth {
    base: String,
    lie: Lie,
    /// Where `RedirectElsewhere` sends discovery.
    elsewhere: String,
    registrations: AtomicUsize,
    token_requests: AtomicUsize,
    token_form: Mutex<String>,
    /// Each revocation request's form and Authorization header.
    revocations: Mutex<Vec<(String, Option<String>)>>,
}

async fn mcp(State(a): State<Arc<Auth>>) -> Response {
    let challenge = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"read\"",
        a.base
    );
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, challenge)],
    )
        .into_response()
}

async fn protected_resource(State(a): State<Arc<Auth>>) -> Response {
    let resource = if a.lie == Lie::OtherResource {
        "http://127.0.0.1:9/another-server".to_owned()
    } else {
        format!("{}/mcp", a.base)
    };
    axum::Json(serde_json::json!({
        "resource": resource,
        "authorization_servers": [a.base],
        "scopes_supported": ["read"],
    }))
    .into_response()
}

async fn metadata(State(a): State<Arc<Auth>>) -> Response {
    let b = &a.base;
    let mut doc = serde_json::json!({
        "issuer": b,
        "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"),
        "registration_endpoint": format!("{b}/register"),
        "revocation_endpoint": format!("{b}/revoke"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": ["read"],
    });
    match a.lie {
        Lie::WrongIssuer => doc["issuer"] = "https://issuer.example".into(),
        Lie::HttpTokenEndpoint => doc["token_endpoint"] = "http://auth.example.com/token".into(),
        Lie::RedirectElsewhere => {
            let to = format!("{}/.well-known/oauth-authorization-server", a.elsewhere);
            return (StatusCode::FOUND, [(header::LOCATION, to)]).into_response();
        }
        Lie::Oversized => {
            doc["padding"] = "x".repeat(3 << 20).into();
        }
        Lie::Malformed => return (StatusCode::OK, "{\"issuer\": ").into_response(),
        Lie::PlainPkceOnly => {
            doc["code_challenge_methods_supported"] = serde_json::json!(["plain"])
        }
        Lie::NoPkce => {
            doc.as_object_mut()
                .unwrap()
                .remove("code_challenge_methods_supported");
        }
        Lie::None | Lie::OtherResource | Lie::RevocationFails => {}
    }
    axum::Json(doc).into_response()
}

async fn register(State(a): State<Arc<Auth>>, body: String) -> Response {
    a.registrations.fetch_add(1, Ordering::SeqCst);
    let sent: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    axum::Json(serde_json::json!({
        "client_id": "registered-client",
        "redirect_uris": sent["redirect_uris"],
    }))
    .into_response()
}

async fn token(State(a): State<Arc<Auth>>, _headers: HeaderMap, body: String) -> Response {
    a.token_requests.fetch_add(1, Ordering::SeqCst);
    *a.token_form.lock().unwrap() = body;
    axum::Json(serde_json::json!({
        "access_token": ACCESS_TOKEN,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": "tw-test-refresh-token",
        "scope": "read",
    }))
    .into_response()
}

async fn revoke(State(a): State<Arc<Auth>>, headers: HeaderMap, body: String) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap().to_owned());
    a.revocations.lock().unwrap().push((body, authorization));
    if a.lie == Lie::RevocationFails {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    StatusCode::OK.into_response()
}

async fn listen(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// An authorization server that tells `lie`, with the count of requests to the host a
/// redirect points at.
async fn start(lie: Lie) -> (Arc<Auth>, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    let elsewhere = listen(Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { StatusCode::NOT_FOUND }
    }))
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let auth = Arc::new(Auth {
        base,
        lie,
        elsewhere,
        registrations: AtomicUsize::new(0),
        token_requests: AtomicUsize::new(0),
        token_form: Mutex::new(String::new()),
        revocations: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/mcp", post(mcp).get(mcp))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/token", post(token))
        .route("/revoke", post(revoke))
        .with_state(Arc::clone(&auth));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (auth, hits)
}

fn server(auth: &Auth, tokens: &std::path::Path) -> Arc<McpServer> {
    let config = ServerConfig::new(
        "guarded",
        Transport::Http {
            url: format!("{}/mcp", auth.base),
            headers: Default::default(),
        },
    );
    McpServer::new(config, Limits::default()).with_token_dir(tokens)
}

const REDIRECT: &str = "http://127.0.0.1:1/callback";

/// Begins a login against a server that tells `lie`; the error, which must come.
async fn refused(lie: Lie) -> (String, Arc<Auth>, usize, tempfile::TempDir) {
    let (auth, elsewhere) = start(lie).await;
    let tokens = tempfile::tempdir().unwrap();
    let begun = tokio::time::timeout(
        Duration::from_secs(60),
        server(&auth, tokens.path()).begin_login(REDIRECT),
    )
    .await
    .expect("the login neither failed nor succeeded in time");
    let error = match begun {
        Ok(pending) => panic!("a lying server got a login begun: {}", pending.url()),
        Err(e) => e.to_string(),
    };
    assert_eq!(auth.token_requests.load(Ordering::SeqCst), 0);
    assert!(
        std::fs::read_dir(tokens.path()).map_or(true, |mut d| d.next().is_none()),
        "something was stored"
    );
    (error, auth, elsewhere.load(Ordering::SeqCst), tokens)
}

#[tokio::test]
async fn a_wrong_issuer_is_refused() {
    let (error, ..) = refused(Lie::WrongIssuer).await;
    assert!(error.contains("issuer"), "{error}");
}

#[tokio::test]
async fn a_resource_for_another_server_is_refused() {
    let (error, ..) = refused(Lie::OtherResource).await;
    assert!(error.contains("resource"), "{error}");
}

#[tokio::test]
async fn an_http_endpoint_off_loopback_is_refused_before_registering() {
    let (error, auth, ..) = refused(Lie::HttpTokenEndpoint).await;
    assert!(error.contains("not https"), "{error}");
    assert!(error.contains("http://auth.example.com/token"), "{error}");
    assert_eq!(auth.registrations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn oversized_metadata_is_refused() {
    let (error, ..) = refused(Lie::Oversized).await;
    assert!(!error.is_empty());
}

#[tokio::test]
async fn malformed_metadata_is_refused() {
    let (error, ..) = refused(Lie::Malformed).await;
    assert!(!error.is_empty());
}

#[tokio::test]
async fn a_server_without_s256_pkce_is_refused() {
    let (error, auth, ..) = refused(Lie::PlainPkceOnly).await;
    assert!(error.contains("PKCE") && error.contains("S256"), "{error}");
    assert_eq!(auth.registrations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_server_that_does_not_advertise_pkce_is_refused_before_registering() {
    // The MCP authorization spec: metadata without `code_challenge_methods_supported`
    // means no PKCE, and the client must not go on.
    let (error, auth, ..) = refused(Lie::NoPkce).await;
    assert!(
        error.contains("PKCE") && error.contains("code_challenge_methods_supported"),
        "{error}"
    );
    assert_eq!(auth.registrations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed() {
    let (auth, elsewhere) = start(Lie::RedirectElsewhere).await;
    let tokens = tempfile::tempdir().unwrap();
    let begun = server(&auth, tokens.path()).begin_login(REDIRECT).await;
    assert_eq!(
        elsewhere.load(Ordering::SeqCst),
        0,
        "discovery followed the redirect"
    );
    // Without metadata, the 2025-03-26 fallback is the MCP server's own origin: never the
    // host the redirect named.
    if let Ok(pending) = begun {
        assert!(
            pending
                .url()
                .starts_with(&format!("{}/authorize?", auth.base)),
            "{}",
            pending.url()
        );
    }
    assert_eq!(auth.token_requests.load(Ordering::SeqCst), 0);
}

fn param(url: &str, name: &str) -> String {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("{url} has no {name}"))
}

#[tokio::test]
async fn a_redirect_with_another_state_gets_no_token() {
    let (auth, _) = start(Lie::None).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&auth, tokens.path());
    let pending = server.begin_login(REDIRECT).await.unwrap();
    let forged = format!("{REDIRECT}?code=stolen&state=not-{}", pending.state());
    let error = server.finish_login(pending, &forged).await.unwrap_err();
    assert!(
        matches!(error, toolwire_oauth::LoginError::Redirect(_)),
        "{error:?}"
    );
    let error = error.to_string();
    assert!(error.contains("state"), "{error}");
    assert_eq!(auth.token_requests.load(Ordering::SeqCst), 0);
    assert!(!server.token_file().unwrap().has_tokens());
}

#[tokio::test]
async fn a_refusal_on_the_redirect_is_reported_clipped() {
    let (auth, _) = start(Lie::None).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&auth, tokens.path());
    let pending = server.begin_login(REDIRECT).await.unwrap();
    let refused = format!(
        "{REDIRECT}?error=access_denied&error_description={}&state={}",
        "no%0Away".to_owned() + &"x".repeat(5000),
        pending.state()
    );
    let error = server.finish_login(pending, &refused).await.unwrap_err();
    assert!(
        matches!(error, toolwire_oauth::LoginError::Refused(_)),
        "{error:?}"
    );
    let error = error.to_string();
    assert!(error.contains("refused: access_denied no"), "{error}");
    assert!(!error.contains('\n') && error.len() < 600, "{error}");
    assert_eq!(auth.token_requests.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_good_login_sends_pkce_and_resource_and_keeps_the_token_owner_only() {
    let (auth, _) = start(Lie::None).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&auth, tokens.path());
    let pending = server.begin_login(REDIRECT).await.unwrap();
    let url = pending.url().to_owned();
    assert!(
        url.starts_with(&format!("{}/authorize?", auth.base)),
        "{url}"
    );
    assert_eq!(param(&url, "code_challenge_method"), "S256");
    assert_eq!(param(&url, "resource"), format!("{}/mcp", auth.base));
    // The scope the 401's WWW-Authenticate named.
    assert_eq!(param(&url, "scope"), "read");
    assert_eq!(param(&url, "client_id"), "registered-client");
    assert_eq!(auth.registrations.load(Ordering::SeqCst), 1);
    let challenge = param(&url, "code_challenge");
    assert!(!format!("{pending:?}").contains(&challenge));

    let redirect = format!("{REDIRECT}?code=good-code&state={}", pending.state());
    server.finish_login(pending, &redirect).await.unwrap();
    let form = auth.token_form.lock().unwrap().clone();
    let sent = |name: &str| {
        url::form_urlencoded::parse(form.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| panic!("the token request has no {name}: {form}"))
    };
    assert_eq!(sent("grant_type"), "authorization_code");
    assert_eq!(sent("code"), "good-code");
    assert_eq!(sent("resource"), format!("{}/mcp", auth.base));
    let verifier = sent("code_verifier");
    let derived = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    assert_eq!(
        derived, challenge,
        "the verifier does not match the challenge"
    );

    let file = server.token_file().unwrap();
    assert!(file.has_tokens());
    let text = std::fs::read_to_string(file.path()).unwrap();
    assert!(text.contains(ACCESS_TOKEN));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(file.path().parent().unwrap()), 0o700);
    }
    for shown in [
        format!("{server:?}"),
        format!("{:?}", server.config()),
        format!("{file:?}"),
        format!("{:?}", server.status()),
    ] {
        assert!(!shown.contains(ACCESS_TOKEN), "{shown}");
    }
    // Logging out revokes at the authorization server (RFC 7009): the refresh token
    // first, then the access token, as the registered public client.
    let done = server.log_out().await.unwrap();
    assert_eq!(done.revoked, Some(Ok(())));
    assert!(done.removed);
    let revoked: Vec<(String, String, String)> = auth
        .revocations
        .lock()
        .unwrap()
        .iter()
        .map(|(form, authorization)| {
            assert!(
                authorization.is_none(),
                "a public client sent {authorization:?}"
            );
            let field = |name: &str| {
                url::form_urlencoded::parse(form.as_bytes())
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            (field("token"), field("token_type_hint"), field("client_id"))
        })
        .collect();
    assert_eq!(
        revoked,
        [
            (
                "tw-test-refresh-token".to_owned(),
                "refresh_token".to_owned(),
                "registered-client".to_owned()
            ),
            (
                ACCESS_TOKEN.to_owned(),
                "access_token".to_owned(),
                "registered-client".to_owned()
            ),
        ]
    );
    assert!(!file.path().exists());
    assert!(!server.logout().await.unwrap());
    assert_eq!(
        auth.revocations.lock().unwrap().len(),
        2,
        "nothing left to revoke"
    );
}

#[tokio::test]
async fn a_failed_revocation_still_forgets_the_tokens() {
    let (auth, _) = start(Lie::RevocationFails).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&auth, tokens.path());
    let pending = server.begin_login(REDIRECT).await.unwrap();
    let redirect = format!("{REDIRECT}?code=good-code&state={}", pending.state());
    server.finish_login(pending, &redirect).await.unwrap();
    let file = server.token_file().unwrap();
    assert!(file.has_tokens());
    let done = server.log_out().await.unwrap();
    assert!(done.removed);
    let why = done.revoked.unwrap().unwrap_err();
    assert!(
        why.contains("503") && why.contains("refresh token"),
        "{why}"
    );
    assert!(!why.contains("tw-test-refresh-token"), "{why}");
    assert!(!file.path().exists(), "a failed revocation kept the tokens");
}

#[tokio::test]
async fn idle_connections_to_the_redirect_listener_do_not_hold_the_redirect() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (auth, _) = start(Lie::None).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&auth, tokens.path());
    let listener = toolwire_oauth::LoopbackRedirect::bind().await.unwrap();
    let uri = listener.uri().to_owned();
    let pending = server.begin_login(&uri).await.unwrap();
    let redirect = format!("{uri}?code=good-code&state={}", pending.state());
    let completing = {
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            listener
                .complete(&*server, pending, Duration::from_secs(60))
                .await
        })
    };
    // Two connections that say nothing (another local process, a browser's speculative
    // preconnects), then the browser's real redirect.
    let addr = uri
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/callback"))
        .unwrap()
        .to_owned();
    let mut idle = Vec::new();
    for _ in 0..2 {
        idle.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    let mut browser = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let target = redirect.strip_prefix(&format!("http://{addr}")).unwrap();
    browser
        .write_all(format!("GET {target} HTTP/1.1\r\nhost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut page = String::new();
    tokio::time::timeout(Duration::from_secs(30), browser.read_to_string(&mut page))
        .await
        .expect("the redirect was never answered")
        .unwrap();
    let took = started.elapsed();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(
        took < Duration::from_secs(3),
        "the redirect waited {took:?} behind idle connections"
    );
    completing.await.unwrap().unwrap();
    assert!(server.token_file().unwrap().has_tokens());
    drop(idle);
}
