//! toolwire's HTTP listener, one job: serving an axum `Router` on a TCP listener with
//! the limits `axum::serve` lacks (see [`serve`]), for every listener toolwire opens
//! (`toolwire serve`'s app and sandbox, `toolwire gateway --http`), and the
//! constant-time check of a bearer token they authenticate callers with, and the signals
//! that stop them. A crate of its own so the MCP gateway gets the same layer without
//! depending on the web app.

#![warn(missing_docs)]

mod conn;

pub use conn::{
    Connections, Limits, RETRY_AFTER_SECS, STALL_TIMEOUT, connection_cap, open_files_limit, serve,
};

use axum::http::{HeaderMap, header};

/// Ctrl-C, or SIGTERM where there is one: what stops a server gracefully. Its handlers are
/// installed as this is called, not when the future is first polled: a server polls it
/// only once it runs, and a SIGTERM that came after a client saw the port open but before
/// that poll met the signal's default action and killed the process instead of stopping it
/// (`toolwire serve`'s test saw it in CI). Call it before the port opens.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        let terminate = signal(SignalKind::terminate()).ok();
        let interrupt = signal(SignalKind::interrupt()).ok();
        async fn received(signal: Option<Signal>) {
            match signal {
                Some(mut signal) => {
                    signal.recv().await;
                }
                // Not installed: this one cannot stop the server, the other still can.
                None => std::future::pending::<()>().await,
            }
        }
        async move {
            tokio::select! {
                () = received(terminate) => {}
                () = received(interrupt) => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of a token.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token of the request's `Authorization: Bearer TOKEN` header, if it has one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Whether `headers` carry `token` as a bearer token, compared in constant time.
pub fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    bearer(headers).is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_bearer_token_must_match_whole() {
        let mut headers = HeaderMap::new();
        assert!(!bearer_matches(&headers, "secret-token"));
        for (sent, ok) in [
            ("Bearer secret-token", true),
            ("Bearer secret-toke", false),
            ("Bearer secret-token2", false),
            ("bearer secret-token", false),
            ("secret-token", false),
            ("Bearer ", false),
        ] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(sent).unwrap());
            assert_eq!(bearer_matches(&headers, "secret-token"), ok, "{sent}");
        }
    }
}
