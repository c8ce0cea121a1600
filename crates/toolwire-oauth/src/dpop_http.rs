//! DPoP on token requests: the OAuth HTTP client that puts a proof on them (for rmcp's
//! `AuthorizationManager`), retrying once with the nonce the authorization server asks
//! for. The MCP requests' side is `dpop_mcp.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use crate::dpop::{DpopError, DpopKey, NonceSlot, nonce_from};
use crate::oauth_address::{AddressPolicy, filtered_client};

/// Largest answer read from an authorization server (rmcp caps its own reads the same).
const MAX_OAUTH_BODY: usize = 1024 * 1024;

/// Redirects an OAuth request may follow (registration asks to follow them).
const MAX_REDIRECTS: usize = 5;

/// The proof's header, and the header a server gives its nonce in.
pub(crate) const DPOP: &str = "dpop";
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";

fn boxed(why: String) -> OAuthHttpClientError {
    Box::new(DpopError::Request(why))
}

/// rmcp's `OAuthHttpClient` for an authorization server that offers DPoP: every request
/// goes out as rmcp made it, and a `POST` to the token endpoint (the code exchange, a
/// refresh, client credentials) carries a proof signed with the server's key. A
/// `use_dpop_nonce` refusal is retried once with the nonce given; the latest nonce is
/// kept for the next token request.
pub(crate) struct DpopOAuthClient {
    follow: reqwest::Client,
    stop: reqwest::Client,
    policy: AddressPolicy,
    key: Arc<DpopKey>,
    token_endpoint: String,
    nonce: NonceSlot,
    /// Why the last token request was given up on: rmcp reports a failed exchange as
    /// "Request failed", without this client's reason.
    refusal: Mutex<Option<String>>,
}

impl DpopOAuthClient {
    /// Why DPoP made the last token request fail, once.
    pub(crate) fn take_refusal(&self) -> Option<String> {
        self.refusal.lock().ok().and_then(|mut r| r.take())
    }

    fn refuse(&self, why: String) -> OAuthHttpClientError {
        if let Ok(mut slot) = self.refusal.lock() {
            *slot = Some(why.clone());
        }
        boxed(why)
    }

    pub(crate) fn new(
        key: Arc<DpopKey>,
        token_endpoint: &str,
        resource: &str,
    ) -> Result<Self, DpopError> {
        let policy = AddressPolicy::for_resource(resource);
        let redirects = policy.clone();
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !redirects.allows_url(attempt.url()) {
                attempt.error("a redirect to an address not allowed for this server")
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else {
                attempt.follow()
            }
        });
        let build = |redirect| {
            filtered_client(resource, redirect, Duration::from_secs(30)).map_err(|e| {
                DpopError::Client {
                    what: "OAuth HTTP client",
                    why: e.to_string(),
                }
            })
        };
        Ok(DpopOAuthClient {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            policy: policy.clone(),
            key,
            token_endpoint: crate::dpop::htu(token_endpoint)?,
            nonce: NonceSlot::default(),
            refusal: Mutex::new(None),
        })
    }

    /// One exchange: the response as rmcp reads it, its body read within the cap.
    async fn send(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
        redirect: OAuthHttpRedirectPolicy,
        proof: Option<String>,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let url = reqwest::Url::parse(&parts.uri.to_string())?;
        if !self.policy.allows_url(&url) {
            return Err(boxed(format!(
                "{url} is at an address not allowed for this server's authorization"
            )));
        }
        let client = match redirect {
            OAuthHttpRedirectPolicy::Follow => &self.follow,
            _ => &self.stop,
        };
        let mut request = client
            .request(parts.method.clone(), url)
            .headers(parts.headers.clone())
            .body(body.to_vec());
        if let Some(proof) = proof {
            request = request.header(DPOP, proof);
        }
        let response = request.send().await?;
        let mut builder = http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            builder = builder.header(name, value);
        }
        let mut bytes = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            if bytes.len() + chunk.len() > MAX_OAUTH_BODY {
                return Err(boxed(format!(
                    "the authorization server's answer is larger than {MAX_OAUTH_BODY} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(builder.body(bytes)?)
    }
}

/// Whether a token endpoint's answer is RFC 9449 §8's "use this nonce" (a 400 or 401
/// whose OAuth error is `use_dpop_nonce`).
fn token_nonce_refusal(response: &http::Response<Vec<u8>>) -> bool {
    matches!(response.status().as_u16(), 400 | 401)
        && serde_json::from_slice::<serde_json::Value>(response.body())
            .ok()
            .is_some_and(|b| b["error"] == "use_dpop_nonce")
}

impl OAuthHttpClient for DpopOAuthClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request,
                redirect_policy,
                ..
            } = request;
            let (parts, body) = request.into_parts();
            let to_token_endpoint = parts.method == http::Method::POST
                && crate::dpop::htu(&parts.uri.to_string()).ok().as_deref()
                    == Some(self.token_endpoint.as_str());
            if !to_token_endpoint {
                return self.send(&parts, &body, redirect_policy, None).await;
            }
            let proof = |nonce: Option<String>| {
                self.key
                    .proof("POST", &self.token_endpoint, None, nonce.as_deref())
                    .map_err(|e| self.refuse(e.to_string()))
            };
            let sent = self.nonce.get();
            let response = self
                .send(&parts, &body, redirect_policy, Some(proof(sent.clone())?))
                .await?;
            let given = response
                .headers()
                .get(DPOP_NONCE)
                .map(|v| nonce_from(v.as_bytes()));
            if !token_nonce_refusal(&response) {
                // A new nonce on any other answer is the one to use next (an invalid one
                // is not kept; the next refusal will say so).
                if let Some(Ok(nonce)) = given {
                    self.nonce.set(nonce);
                }
                return Ok(response);
            }
            let nonce = match given {
                Some(Ok(nonce)) if Some(&nonce) != sent.as_ref() => nonce,
                Some(Ok(_)) => {
                    return Err(self.refuse(
                        "the authorization server refused the DPoP nonce it had given \
                         (use_dpop_nonce with the same nonce)"
                            .to_owned(),
                    ));
                }
                Some(Err(e)) => {
                    return Err(self.refuse(format!(
                        "the authorization server asked for a DPoP nonce, but {e}"
                    )));
                }
                None => {
                    return Err(self.refuse(
                        "the authorization server asked for a DPoP nonce (use_dpop_nonce) \
                         but sent no DPoP-Nonce"
                            .to_owned(),
                    ));
                }
            };
            self.nonce.set(nonce.clone());
            let again = self
                .send(&parts, &body, redirect_policy, Some(proof(Some(nonce))?))
                .await?;
            if token_nonce_refusal(&again) {
                return Err(self.refuse(
                    "the authorization server asked for another DPoP nonce after toolwire \
                     sent the one it gave; not retrying further"
                        .to_owned(),
                ));
            }
            if let Some(Ok(nonce)) = again
                .headers()
                .get(DPOP_NONCE)
                .map(|v| nonce_from(v.as_bytes()))
            {
                self.nonce.set(nonce);
            }
            Ok(again)
        })
    }
}
