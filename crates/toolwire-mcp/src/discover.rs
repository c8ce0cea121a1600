//! Which revision a local server speaks, asked once before rmcp's handshake. rmcp's own
//! probe (`ClientLifecycleMode::Auto`) waits a fixed 10 s for the answer to
//! `server/discover`, then sends `initialize` on the same pipe; a 2026-07-28 server that
//! took longer to start (markitdown-mcp: about 9 s, more on a busy machine) answered the
//! discover request late, its answer broke the `initialize` exchange, and the server was
//! started a second time and spoke 2025-11-25 with nobody told. This probe waits as long
//! as the server may take to start, and says what it learnt.

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientRequest, DiscoverRequest, DiscoverRequestParams,
    ErrorCode, JsonRpcMessage, ProtocolVersion, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::transport::Transport;

/// The id of the probe's request: a string, so it never meets one of rmcp's numbered ids.
const PROBE_ID: &str = "toolwire-discover";

/// What the server's answer to `server/discover` says it speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Revision {
    /// It offers 2026-07-28, or refused the request as only a 2026-07-28 server does
    /// (a missing capability, a header mismatch, an unsupported version): rmcp's
    /// discover handshake follows, and says what is wrong if anything is.
    Current,
    /// It answered as a server without `server/discover` does (an error, an empty
    /// result, a list of older revisions): the 2025-11-25 handshake follows. Not a
    /// downgrade: that is what it speaks.
    Legacy,
    /// No answer within the time it may take to start.
    Silent,
}

/// Sends `server/discover` over `transport` and waits up to `patience` for its answer.
/// What else the server sends meanwhile (log lines, a ping) is dropped, as rmcp drops it
/// before a handshake. An error means the connection closed or could not be written.
pub(crate) async fn probe<T: Transport<RoleClient>>(
    transport: &mut T,
    info: &ClientConfig,
    patience: Duration,
) -> Result<Revision, String> {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        info.client_info.clone(),
        info.capabilities.clone(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    let id = RequestId::String(PROBE_ID.into());
    let request = ClientJsonRpcMessage::request(ClientRequest::DiscoverRequest(discover), id);
    transport
        .send(request)
        .await
        .map_err(|e| format!("cannot send server/discover: {e}"))?;
    let answer = async {
        loop {
            match transport.receive().await {
                None => return Err("it closed the connection before answering".to_owned()),
                Some(JsonRpcMessage::Response(r)) if is_probe(&r.id) => {
                    return Ok(match r.result {
                        ServerResult::DiscoverResult(found)
                            if found
                                .supported_versions
                                .contains(&ProtocolVersion::V_2026_07_28) =>
                        {
                            Revision::Current
                        }
                        _ => Revision::Legacy,
                    });
                }
                // An error without an id answers the one request there is.
                Some(JsonRpcMessage::Error(e)) if e.id.as_ref().is_none_or(is_probe) => {
                    return Ok(if is_current_refusal(e.error.code) {
                        Revision::Current
                    } else {
                        Revision::Legacy
                    });
                }
                Some(_) => {}
            }
        }
    };
    match tokio::time::timeout(patience, answer).await {
        Ok(known) => known,
        Err(_) => Ok(Revision::Silent),
    }
}

fn is_probe(id: &RequestId) -> bool {
    matches!(id, RequestId::String(s) if &**s == PROBE_ID)
}

/// The errors a server that knows `server/discover` gives it (they came with the
/// 2026-07-28 revision); any other error is a server that does not know the method.
fn is_current_refusal(code: ErrorCode) -> bool {
    code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        || code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        || code == ErrorCode::HEADER_MISMATCH
}
