//! DPoP (RFC 9449) against servers on loopback that misbehave: an authorization server
//! and an MCP server that ask for a new nonce forever, and nonces too long or not
//! nonces. Each gets a bounded number of requests and a clear error, and every request
//! toolwire made carries a proof that verifies with the key it names.
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

const ACCESS_TOKEN: &str = "tw-dpop-bound-token-0123456789";

/// What the token endpoint answers.
#[derive(Clone, Copy, PartialEq)]
enum TokenEndpoint {
    /// A DPoP-bound token, at once.
    Grants,
    /// `use_dpop_nonce` with a new nonce, every time.
    AsksForever,
    /// `use_dpop_nonce` with a nonce of 10 KB.
    OversizedNonce,
    /// `use_dpop_nonce` with a "nonce" holding a space and a quote.
    MalformedNonce,
}

struct Peer {
    base: String,
    token_endpoint: TokenEndpoint,
    /// Each token request's DPoP header (None when it had none).
    token_proofs: Mutex<Vec<Option<String>>>,
    /// Each authenticated MCP request's Authorization and DPoP headers.
    mcp_requests: Mutex<Vec<(String, Option<String>)>>,
    nonces: AtomicUsize,
}

impl Peer {
    fn next_nonce(&self) -> String {
        format!("nonce-{}", self.nonces.fetch_add(1, Ordering::SeqCst))
    }
}

fn resource_metadata_url(p: &Peer) -> String {
    format!("{}/.well-known/oauth-protected-resource/mcp", p.base)
}

/// The MCP server: no token → the DPoP challenge; a token → a new nonce asked for,
/// forever.
async fn mcp(State(p): State<Arc<Peer>>, headers: HeaderMap) -> Response {
    let Some(authorization) = headers.get(header::AUTHORIZATION) else {
        let challenge = format!("DPoP resource_metadata=\"{}\"", resource_metadata_url(&p));
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
        )
            .into_response();
    };
    let proof = headers.get("dpop").map(|v| v.to_str().unwrap().to_owned());
    p.mcp_requests
        .lock()
        .unwrap()
        .push((authorization.to_str().unwrap().to_owned(), proof));
    let challenge = format!(
        "DPoP error=\"use_dpop_nonce\", resource_metadata=\"{}\"",
        resource_metadata_url(&p)
    );
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE.as_str(), challenge),
            ("dpop-nonce", p.next_nonce()),
        ],
    )
        .into_response()
}

async fn protected_resource(State(p): State<Arc<Peer>>) -> Response {
    axum::Json(serde_json::json!({
        "resource": format!("{}/mcp", p.base),
        "authorization_servers": [p.base],
    }))
    .into_response()
}

async fn metadata(State(p): State<Arc<Peer>>) -> Response {
    let b = &p.base;
    axum::Json(serde_json::json!({
        "issuer": b,
        "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"),
        "registration_endpoint": format!("{b}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "dpop_signing_alg_values_supported": ["ES256"],
    }))
    .into_response()
}

async fn register(body: String) -> Response {
    let sent: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    axum::Json(serde_json::json!({
        "client_id": "registered-client",
        "redirect_uris": sent["redirect_uris"],
    }))
    .into_response()
}

async fn token(State(p): State<Arc<Peer>>, headers: HeaderMap) -> Response {
    let proof = headers.get("dpop").map(|v| v.to_str().unwrap().to_owned());
    p.token_proofs.lock().unwrap().push(proof);
    let refusal = |nonce: String| {
        (
            StatusCode::BAD_REQUEST,
            [("dpop-nonce", nonce)],
            axum::Json(serde_json::json!({"error": "use_dpop_nonce"})),
        )
            .into_response()
    };
    match p.token_endpoint {
        TokenEndpoint::Grants => axum::Json(serde_json::json!({
            "access_token": ACCESS_TOKEN,
            "token_type": "DPoP",
            "expires_in": 3600,
        }))
        .into_response(),
        TokenEndpoint::AsksForever => refusal(p.next_nonce()),
        TokenEndpoint::OversizedNonce => refusal("n".repeat(10_000)),
        TokenEndpoint::MalformedNonce => refusal("a \"nonce\"".to_owned()),
    }
}

async fn start(token_endpoint: TokenEndpoint) -> Arc<Peer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = Arc::new(Peer {
        base: format!("http://{}", listener.local_addr().unwrap()),
        token_endpoint,
        token_proofs: Mutex::new(Vec::new()),
        mcp_requests: Mutex::new(Vec::new()),
        nonces: AtomicUsize::new(0),
    });
    let app = Router::new()
        .route("/mcp", post(mcp).get(mcp).delete(mcp))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/token", post(token))
        .with_state(Arc::clone(&peer));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    peer
}

fn server(peer: &Peer, tokens: &std::path::Path) -> Arc<McpServer> {
    let config = ServerConfig::new(
        "bound",
        Transport::Http {
            url: format!("{}/mcp", peer.base),
            headers: Default::default(),
        },
    );
    let limits = Limits {
        connect_timeout: Duration::from_secs(20),
        ..Limits::default()
    };
    McpServer::new(config, limits).with_token_dir(tokens)
}

/// The proof's claims, after checking that it is a DPoP proof for `method` to `url`
/// whose signature verifies with the public key in its own header.
fn verified(proof: &str, method: &str, url: &str) -> (serde_json::Value, String) {
    let head = jsonwebtoken::decode_header(proof).unwrap();
    assert_eq!(head.typ.as_deref(), Some("dpop+jwt"));
    let jwk = head.jwk.expect("the proof names no key");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<serde_json::Value>(
        proof,
        &jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap(),
        &validation,
    )
    .expect("the proof's signature does not verify with its jwk")
    .claims;
    assert_eq!(claims["htm"], method);
    assert_eq!(claims["htu"], url);
    let thumbprint = jwk
        .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
        .unwrap();
    (claims, thumbprint)
}

/// Logs in with the redirect an approving authorization server would send.
async fn log_in(server: &McpServer) -> Result<(), String> {
    let pending = server
        .begin_login("http://127.0.0.1:1/callback")
        .await
        .map_err(|e| e.to_string())?;
    let redirect = format!(
        "http://127.0.0.1:1/callback?code=a-code&state={}",
        pending.state()
    );
    tokio::time::timeout(
        Duration::from_secs(30),
        server.finish_login(pending, &redirect),
    )
    .await
    .expect("the token request did not end")
    .map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_token_endpoint_asking_for_a_nonce_forever_gets_one_retry_and_a_clear_error() {
    let peer = start(TokenEndpoint::AsksForever).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&peer, tokens.path());
    let error = log_in(&server).await.unwrap_err();
    assert!(
        error.contains("asked for another DPoP nonce after toolwire sent the one it gave"),
        "{error}"
    );
    let proofs = peer.token_proofs.lock().unwrap().clone();
    assert_eq!(proofs.len(), 2, "not one retry: {proofs:?}");
    let token_url = format!("{}/token", peer.base);
    let (first, key) = verified(proofs[0].as_deref().unwrap(), "POST", &token_url);
    let (second, same_key) = verified(proofs[1].as_deref().unwrap(), "POST", &token_url);
    assert!(first.get("nonce").is_none() && first.get("ath").is_none());
    assert_eq!(
        second["nonce"], "nonce-0",
        "the retry did not use the given nonce"
    );
    assert_ne!(first["jti"], second["jti"]);
    assert_eq!(key, same_key, "the retry was signed with another key");
    assert!(!server.token_file().unwrap().has_tokens());
}

#[tokio::test]
async fn an_oversized_or_malformed_nonce_is_refused_without_a_retry() {
    for (kind, why) in [
        (TokenEndpoint::OversizedNonce, "more than the 512"),
        (
            TokenEndpoint::MalformedNonce,
            "characters a nonce cannot have",
        ),
    ] {
        let peer = start(kind).await;
        let tokens = tempfile::tempdir().unwrap();
        let server = server(&peer, tokens.path());
        let error = log_in(&server).await.unwrap_err();
        assert!(error.contains(why), "{error}");
        assert!(error.len() < 1000, "the nonce was quoted back: {error}");
        assert_eq!(peer.token_proofs.lock().unwrap().len(), 1);
        assert!(!server.token_file().unwrap().has_tokens());
    }
}

#[tokio::test]
async fn an_mcp_server_asking_for_a_nonce_forever_is_given_up_on_clearly() {
    let peer = start(TokenEndpoint::Grants).await;
    let tokens = tempfile::tempdir().unwrap();
    let server = server(&peer, tokens.path());
    log_in(&server).await.unwrap();
    let (_, bound_key) = verified(
        peer.token_proofs.lock().unwrap()[0].as_deref().unwrap(),
        "POST",
        &format!("{}/token", peer.base),
    );

    // The key is kept with the tokens, owner-only, and shown nowhere.
    let file = server.token_file().unwrap();
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file.path()).unwrap()).unwrap();
    let private = stored["dpopKey"].as_str().expect("no DPoP key stored");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    for shown in [format!("{server:?}"), format!("{file:?}")] {
        assert!(
            !shown.contains(private) && !shown.contains(ACCESS_TOKEN),
            "{shown}"
        );
    }

    let connected = tokio::time::timeout(
        Duration::from_secs(60),
        toolwire_mcp::connect_servers(vec![Arc::clone(&server)]),
    )
    .await
    .expect("connecting did not end");
    let error = connected.failed.first().expect("it connected").to_string();
    assert!(
        error.contains("asked for another DPoP nonce after toolwire sent the one it gave"),
        "{error}"
    );
    let requests = peer.mcp_requests.lock().unwrap().clone();
    // Two handshakes (2026-07-28, then 2025-11-25), each: the request, the bodyless one
    // that reads the nonce, the retry with it. No more.
    assert_eq!(requests.len(), 6, "{requests:?}");
    let mcp_url = format!("{}/mcp", peer.base);
    let ath = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(ACCESS_TOKEN.as_bytes()));
    let mut jtis = Vec::new();
    for (i, (authorization, proof)) in requests.iter().enumerate() {
        assert_eq!(authorization, &format!("DPoP {ACCESS_TOKEN}"));
        let (claims, key) = verified(proof.as_deref().unwrap(), "POST", &mcp_url);
        assert_eq!(claims["ath"], ath.as_str());
        assert_eq!(key, bound_key, "an MCP request was signed with another key");
        jtis.push(claims["jti"].as_str().unwrap().to_owned());
        if i % 3 == 2 {
            // The nonce the bodyless request was given (each answer has a new one).
            assert_eq!(claims["nonce"], format!("nonce-{}", i - 1), "request {i}");
        } else {
            assert!(claims.get("nonce").is_none(), "request {i}: {claims}");
        }
    }
    jtis.sort();
    jtis.dedup();
    assert_eq!(jtis.len(), 6, "a proof was reused");
    assert!(server.logout().await.unwrap());
    assert!(!file.path().exists(), "the key outlived the logout");
}
