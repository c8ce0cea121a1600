//! Unattended grants (client credentials) that the authorization server refuses: a
//! definite refusal (`invalid_client`, `unauthorized_client`, `invalid_grant`,
//! `invalid_scope`) is asked once and the server given up on with that reason; a server
//! that is down for now (503) is asked again with backoff.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use toolwire_mcp::{Limits, McpServer, ServerConfig, Transport};
use toolwire_oauth::OAuthSettings;
use toolwire_tool::SourceState;

struct Peer {
    base: String,
    /// The token endpoint's answer.
    status: StatusCode,
    error: &'static str,
    token_requests: AtomicUsize,
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
        "response_types_supported": ["code"],
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    }))
    .into_response()
}

async fn token(State(p): State<Arc<Peer>>) -> Response {
    p.token_requests.fetch_add(1, Ordering::SeqCst);
    (
        p.status,
        axum::Json(serde_json::json!({"error": p.error, "error_description": "no"})),
    )
        .into_response()
}

async fn start(status: StatusCode, error: &'static str) -> Arc<Peer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = Arc::new(Peer {
        base: format!("http://{}", listener.local_addr().unwrap()),
        status,
        error,
        token_requests: AtomicUsize::new(0),
    });
    let app = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/token", post(token))
        .with_state(Arc::clone(&peer));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    peer
}

/// The server, kept up by the supervisor with a short backoff, after `wait`; and the
/// supervisor, which stops supervising when dropped.
async fn supervised(
    peer: &Peer,
    tokens: &std::path::Path,
    wait: Duration,
) -> (Arc<McpServer>, toolwire_mcp::Supervisor) {
    let mut config = ServerConfig::new(
        "unattended",
        Transport::Http {
            url: format!("{}/mcp", peer.base),
            headers: Default::default(),
        },
    );
    config.oauth = OAuthSettings {
        client_id: Some("tw-client".into()),
        client_secret: Some("tw-secret".into()),
        client_credentials: true,
        ..OAuthSettings::default()
    };
    let limits = Limits {
        first_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(40),
        ..Limits::default()
    };
    let server = McpServer::new(config, limits).with_token_dir(tokens);
    let supervisor = toolwire_mcp::supervise(vec![Arc::clone(&server)], Arc::new(|_, _| {}));
    tokio::time::sleep(wait).await;
    (server, supervisor)
}

#[tokio::test]
async fn a_definite_refusal_is_asked_once_and_given_up_on() {
    for (status, error) in [
        (StatusCode::UNAUTHORIZED, "invalid_client"),
        (StatusCode::BAD_REQUEST, "unauthorized_client"),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        (StatusCode::BAD_REQUEST, "invalid_scope"),
    ] {
        let peer = start(status, error).await;
        let tokens = tempfile::tempdir().unwrap();
        // Six attempts at 20-40 ms apart would all be made within this wait.
        let (server, _supervisor) = supervised(&peer, tokens.path(), Duration::from_secs(2)).await;
        assert_eq!(
            peer.token_requests.load(Ordering::SeqCst),
            1,
            "{error}: asked again after a definite refusal"
        );
        let status = server.status();
        assert_eq!(status.state, SourceState::Failed, "{error}");
        let reason = status.reason.unwrap_or_default();
        assert!(reason.contains("refused the grant"), "{error}: {reason}");
        assert!(reason.contains(error), "{reason}");
    }
}

#[tokio::test]
async fn a_server_down_for_now_is_asked_again() {
    let peer = start(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable").await;
    let tokens = tempfile::tempdir().unwrap();
    let (server, _supervisor) = supervised(&peer, tokens.path(), Duration::ZERO).await;
    // Until the supervisor gives up: six attempts 20-40 ms apart take well under a second
    // on a quiet machine, but a fixed wait missed the last one on a loaded 2-core one.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let reason = loop {
        let reason = server.status().reason.unwrap_or_default();
        if reason.contains("gave up after") || tokio::time::Instant::now() > deadline {
            break reason;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let asked = peer.token_requests.load(Ordering::SeqCst);
    assert!(
        reason.contains("gave up after"),
        "after {asked} attempts: {reason}"
    );
    assert_eq!(asked, toolwire_mcp::MAX_BACKGROUND_ATTEMPTS as usize);
}
