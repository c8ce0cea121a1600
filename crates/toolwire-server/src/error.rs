//! The API's errors: `{"error": {"code", "message"}}` with the status that says what went
//! wrong (and `Retry-After` when waiting helps), and the mapping from the host's errors to
//! them.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolwire_agent::HostError;
use toolwire_store::StoreError;

/// An error answer. Messages never quote a token, and text from tools is JSON-escaped
/// like any other string.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds after which trying again may succeed, sent as `Retry-After`.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// `503`: the server is at a limit now; trying again after `retry_after` seconds may
    /// succeed.
    pub(crate) fn unavailable(
        code: &'static str,
        message: impl Into<String>,
        retry_after: u64,
    ) -> Self {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, message)
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub(crate) fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

impl From<HostError> for ApiError {
    fn from(e: HostError) -> Self {
        match e {
            HostError::NoSession(id) => no_session(&id),
            HostError::Resolve(toolwire_runtime::ResolveError::NotFound(id)) => {
                ApiError::not_found(format!("no pending call {id:?} in this session"))
            }
            HostError::Store(store) => store.into(),
            other => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                other.to_string(),
            ),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::SessionNotFound { id } => no_session(&id),
            StoreError::InvalidId { .. } | StoreError::InvalidBlobKey { .. } => {
                ApiError::bad_request(e.to_string())
            }
            StoreError::SessionExists { .. } => {
                ApiError::new(axum::http::StatusCode::CONFLICT, "conflict", e.to_string())
            }
            StoreError::BlobNotFound { .. } => ApiError::not_found(e.to_string()),
            other => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "store",
                other.to_string(),
            ),
        }
    }
}

/// The answer for a session that is not there: its id quoted (a `SessionId`'s debug
/// form would show the type's name to the page).
pub(crate) fn no_session(id: &str) -> ApiError {
    ApiError::not_found(format!("no session {id:?}"))
}
