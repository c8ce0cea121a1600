//! What a stored call gets when its own result could not be stored, and URLs made fit for
//! a message: small helpers every backend (and the light build) shares.

use toolwire_core::{CallRef, ErrorCode, ToolResult};

use crate::error::StoreError;

/// The result a call gets when its own could not be stored: every call keeps exactly one
/// result, and this one says why.
pub fn store_failed(call: CallRef, error: &StoreError) -> ToolResult {
    ToolResult::error_with_code(
        call,
        ErrorCode::StoreFailed,
        format!("the tool ran, but its result could not be stored: {error}"),
    )
}

/// A URL with its password replaced, fit for an error message or a log.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_owned();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}
