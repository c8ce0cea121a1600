//! DPoP on MCP requests: the streamable-HTTP client that presents a DPoP-bound token to
//! the MCP server (under rmcp's `AuthClient`), with a fresh proof on each request and one
//! retry with the nonce the server asks for. The token requests' side is `dpop_http.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use crate::auth::TokenFile;
use crate::dpop::{DpopError, DpopKey, NonceSlot, asks_for_nonce, nonce_from};
use crate::dpop_http::{DPOP, DPOP_NONCE};

type HttpError = StreamableHttpError<reqwest::Error>;

fn unexpected(why: String) -> HttpError {
    StreamableHttpError::UnexpectedServerResponse(why.into())
}

/// The streamable-HTTP client for a server whose token is DPoP-bound: rmcp's reqwest
/// client does each request (so its response handling, limits and SSE stay), given
/// `Authorization: DPoP <token>` and a fresh proof (`ath`, the latest nonce) as headers.
///
/// rmcp's client drops a 401's headers, and with them the `DPoP-Nonce` of a
/// `use_dpop_nonce` challenge: on one, this client asks the server again with a bodyless
/// `POST` (answered by its authentication before any body is read, so nothing runs) to
/// read the nonce, then retries the request once with it. A server that asks again gets
/// a clear error, not another round.
#[derive(Clone)]
pub struct DpopHttpClient {
    http: reqwest::Client,
    key: Arc<DpopKey>,
    store: TokenFile,
    nonce: NonceSlot,
}

impl std::fmt::Debug for DpopHttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopHttpClient")
            .field("key", &self.key)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl DpopHttpClient {
    /// A client presenting `store`'s token with proofs made with `key`.
    pub fn new(key: Arc<DpopKey>, store: TokenFile) -> Result<Self, DpopError> {
        // A proof names the URL it is for, so a redirect would carry a proof for another
        // URL: none is followed.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| DpopError::Client {
                what: "HTTP client",
                why: e.to_string(),
            })?;
        Ok(DpopHttpClient {
            http,
            key,
            store,
            nonce: NonceSlot::default(),
        })
    }

    /// The headers that present `token`: DPoP's when the stored token is DPoP-bound
    /// (returned as custom headers, no Bearer token), else the token for rmcp's Bearer.
    fn present(
        &self,
        method: &str,
        uri: &str,
        token: Option<String>,
        nonce: Option<&str>,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(Option<String>, HashMap<HeaderName, HeaderValue>), HttpError> {
        let Some(token) = token else {
            return Ok((None, headers));
        };
        if !self.store.token_is_dpop() {
            return Ok((Some(token), headers));
        }
        let proof = self
            .key
            .proof(method, uri, Some(&token), nonce)
            .map_err(|e| unexpected(e.to_string()))?;
        let authorization = HeaderValue::try_from(format!("DPoP {token}"))
            .map_err(|_| unexpected("the access token cannot be sent in a header".to_owned()))?;
        let proof = HeaderValue::try_from(proof)
            .map_err(|_| unexpected("the DPoP proof cannot be sent in a header".to_owned()))?;
        headers.insert(http::header::AUTHORIZATION, authorization);
        headers.insert(HeaderName::from_static(DPOP), proof);
        Ok((None, headers))
    }

    /// The nonce the server wants, read from its answer to a bodyless `POST` with a
    /// proof that has none.
    async fn ask_nonce(
        &self,
        uri: &str,
        token: &str,
        session: Option<&str>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> Result<String, HttpError> {
        let (_, presented) =
            self.present("POST", uri, Some(token.to_owned()), None, headers.clone())?;
        let mut request = self
            .http
            .post(uri)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json");
        for (name, value) in presented {
            request = request.header(name, value);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        match response.headers().get(DPOP_NONCE) {
            Some(value) => nonce_from(value.as_bytes())
                .map_err(|e| unexpected(format!("the MCP server asked for a DPoP nonce, but {e}"))),
            None => Err(unexpected(
                "the MCP server asked for a DPoP nonce (use_dpop_nonce) but sent no DPoP-Nonce"
                    .to_owned(),
            )),
        }
    }

    /// `call` with the token presented, once more with the server's nonce when it asks
    /// for one.
    async fn presenting<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        session: Option<&str>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, HashMap<HeaderName, HeaderValue>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let sent = self.nonce.get();
        let (bearer, presented) =
            self.present(method, uri, token.clone(), sent.as_deref(), headers.clone())?;
        let first = call(bearer, presented).await;
        let (Err(StreamableHttpError::AuthRequired(challenge)), Some(token)) = (&first, &token)
        else {
            return first;
        };
        if !asks_for_nonce(&challenge.www_authenticate_header) || !self.store.token_is_dpop() {
            return first;
        }
        let nonce = self.ask_nonce(uri, token, session, &headers).await?;
        if Some(&nonce) == sent.as_ref() {
            return Err(unexpected(
                "the MCP server refused the DPoP nonce it had given (use_dpop_nonce with the \
                 same nonce)"
                    .to_owned(),
            ));
        }
        self.nonce.set(nonce.clone());
        let (bearer, presented) =
            self.present(method, uri, Some(token.clone()), Some(&nonce), headers)?;
        match call(bearer, presented).await {
            Err(StreamableHttpError::AuthRequired(c))
                if asks_for_nonce(&c.www_authenticate_header) =>
            {
                Err(unexpected(
                    "the MCP server asked for another DPoP nonce after toolwire sent the one \
                     it gave; not retrying further"
                        .to_owned(),
                ))
            }
            other => other,
        }
    }
}

impl StreamableHttpClient for DpopHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.presenting(
            "POST",
            &uri,
            session_id.as_deref(),
            auth_token,
            custom_headers,
            |token, headers| {
                self.http.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    headers,
                    limits,
                )
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.presenting(
            "DELETE",
            &uri,
            Some(&session_id),
            auth_token,
            custom_headers,
            |token, headers| {
                self.http
                    .delete_session(uri.clone(), session_id.clone(), token, headers)
            },
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.presenting(
            "GET",
            &uri,
            session_id.as_deref(),
            auth_token,
            custom_headers,
            |token, headers| {
                self.http.get_stream(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    headers,
                )
            },
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.presenting(
            "GET",
            &uri,
            session_id.as_deref(),
            auth_token,
            custom_headers,
            |token, headers| {
                self.http.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    headers,
                    max_sse_event_size,
                )
            },
        )
        .await
    }
}
