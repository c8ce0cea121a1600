//! DPoP (RFC 9449): the per-server ES256 key a DPoP-bound token is bound to, the proof
//! JWTs made with it, and reading what servers say about nonces. Signing is
//! `jsonwebtoken`'s (the crate rmcp's private-key-JWT client authentication signs with);
//! the key is generated with aws-lc-rs, its crypto provider.

use std::sync::{Arc, Mutex};

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};

/// The only algorithm toolwire signs proofs with; an authorization server that does not
/// list it gets Bearer requests.
pub(crate) const ALGORITHM: &str = "ES256";

/// Longest `DPoP-Nonce` taken from a server. RFC 9449 sets no bound; real nonces are a
/// few dozen characters, and each is sent back in every proof.
pub(crate) const MAX_NONCE: usize = 512;

/// Why a proof could not be made, a nonce was not taken, or DPoP gave up on a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DpopError {
    /// The key pair could not be made or encoded, or the stored one is damaged.
    #[error("{0}")]
    Key(&'static str),
    /// The key's public JWK could not be made.
    #[error("cannot make the DPoP key's JWK: {0}")]
    Jwk(String),
    /// A proof could not be signed.
    #[error("cannot sign a DPoP proof: {0}")]
    Sign(String),
    /// The system gave no randomness for a proof's `jti`.
    #[error("no randomness for a DPoP proof")]
    NoRandomness,
    /// The URL a proof is for is not a URL.
    #[error("{0:?} is not a URL")]
    NotAUrl(String),
    /// A server's `DPoP-Nonce` is empty.
    #[error("its DPoP-Nonce is empty")]
    EmptyNonce,
    /// A server's `DPoP-Nonce` is longer than the 512 bytes toolwire takes (its length).
    #[error("its DPoP-Nonce is {0} bytes, more than the {MAX_NONCE} toolwire takes")]
    LongNonce(usize),
    /// A server's `DPoP-Nonce` has characters RFC 9449 does not allow in one.
    #[error("its DPoP-Nonce has characters a nonce cannot have")]
    NonceCharacters,
    /// An HTTP client could not be made (which, and why).
    #[error("cannot make the {what}: {why}")]
    Client {
        /// `HTTP client` or `OAuth HTTP client`.
        what: &'static str,
        /// What reqwest said.
        why: String,
    },
    /// A token request was given up: an address not allowed, an answer too large, a
    /// nonce asked for again or not given.
    #[error("{0}")]
    Request(String),
}

/// A DPoP key pair: the private key (PKCS#8, kept in the token file) and its public JWK.
pub struct DpopKey {
    pkcs8: Vec<u8>,
    signing: EncodingKey,
    jwk: Jwk,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The private key is never shown; the thumbprint names the key.
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new P-256 key pair from the system's random source.
    pub(crate) fn generate() -> Result<Self, DpopError> {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| DpopError::Key("cannot generate a DPoP key"))?;
        let der = pair
            .to_pkcs8v1()
            .map_err(|_| DpopError::Key("cannot encode the DPoP key"))?;
        Self::from_pkcs8(der.as_ref().to_vec())
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<Self, DpopError> {
        // Parsed here so that a damaged stored key is an error now, not at signing.
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8)
            .map_err(|_| DpopError::Key("the stored DPoP key is not a P-256 key"))?;
        let signing = EncodingKey::from_ec_der(&pkcs8);
        let jwk = Jwk::from_encoding_key(&signing, Algorithm::ES256)
            .map_err(|e| DpopError::Jwk(e.to_string()))?;
        Ok(DpopKey {
            pkcs8,
            signing,
            jwk,
        })
    }

    /// The key as stored in the token file (base64url of its PKCS#8 form).
    pub(crate) fn to_stored(&self) -> String {
        URL_SAFE_NO_PAD.encode(&self.pkcs8)
    }

    pub(crate) fn from_stored(text: &str) -> Result<Self, DpopError> {
        let der = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| DpopError::Key("the stored DPoP key is not base64url"))?;
        Self::from_pkcs8(der)
    }

    /// The public key, as the proofs' `jwk` header carries it.
    #[cfg(test)]
    pub(crate) fn public_jwk(&self) -> &Jwk {
        &self.jwk
    }

    /// The RFC 7638 thumbprint (SHA-256) a bound token's `cnf.jkt` names.
    pub(crate) fn thumbprint(&self) -> String {
        self.jwk
            .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .unwrap_or_default()
    }

    /// A proof for one request: `method` to `url` (its query and fragment left out, as
    /// `htu` must be), with `ath` when presenting `access_token` and the server's
    /// `nonce` when it gave one. Each proof has its own `jti`.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, DpopError> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut claims = serde_json::json!({
            "jti": jti()?,
            "htm": method,
            "htu": htu(url)?,
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = ath(token).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        jsonwebtoken::encode(&header, &claims, &self.signing)
            .map_err(|e| DpopError::Sign(e.to_string()))
    }
}

/// 128 random bits, base64url: unique per proof, so a server can refuse a replay.
fn jti() -> Result<String, DpopError> {
    let mut bytes = [0u8; 16];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| DpopError::NoRandomness)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// `ath`: base64url(SHA-256(access token)).
pub(crate) fn ath(access_token: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// `htu`: the request URL without its query and fragment (RFC 9449 §4.2).
pub(crate) fn htu(url: &str) -> Result<String, DpopError> {
    let mut parsed = url::Url::parse(url).map_err(|_| DpopError::NotAUrl(url.to_owned()))?;
    parsed.set_query(None);
    parsed.set_fragment(None);
    Ok(parsed.to_string())
}

/// A server's `DPoP-Nonce`, taken only when it is a nonce: 1 to [`MAX_NONCE`] of RFC
/// 9449's NQCHAR (printable ASCII but space, `"` and `\`), since it goes back into
/// every proof.
pub(crate) fn nonce_from(value: &[u8]) -> Result<String, DpopError> {
    if value.is_empty() {
        return Err(DpopError::EmptyNonce);
    }
    if value.len() > MAX_NONCE {
        return Err(DpopError::LongNonce(value.len()));
    }
    if !value
        .iter()
        .all(|&b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
    {
        return Err(DpopError::NonceCharacters);
    }
    Ok(String::from_utf8_lossy(value).into_owned())
}

/// Whether a `WWW-Authenticate` is a DPoP challenge asking for a nonce
/// (`DPoP error="use_dpop_nonce"`).
pub(crate) fn asks_for_nonce(www_authenticate: &str) -> bool {
    let lower = www_authenticate.to_ascii_lowercase();
    lower.contains("dpop")
        && (lower.contains("error=\"use_dpop_nonce\"") || lower.contains("error=use_dpop_nonce"))
}

/// Whether an authorization server's metadata offers DPoP with ES256.
pub(crate) fn offered(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a == ALGORITHM))
}

/// The latest nonce one server gave (RFC 9449 §8, §9): sent in every proof to it until
/// it gives another.
#[derive(Clone, Default, Debug)]
pub(crate) struct NonceSlot(Arc<Mutex<Option<String>>>);

impl NonceSlot {
    pub(crate) fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|n| n.clone())
    }

    pub(crate) fn set(&self, nonce: String) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(nonce);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    fn verify(proof: &str, key: &DpopKey) -> (Header, serde_json::Value) {
        let header = jsonwebtoken::decode_header(proof).unwrap();
        // Verified with the public key the proof itself carries, as a server does.
        let jwk = header.jwk.clone().unwrap();
        assert_eq!(&jwk, key.public_jwk());
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(
            proof,
            &DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap();
        (header, data.claims)
    }

    #[test]
    fn a_proof_verifies_with_its_jwk_and_carries_the_claims() {
        let key = DpopKey::generate().unwrap();
        let token = "an-access-token";
        let proof = key
            .proof(
                "POST",
                "https://mcp.example.com/mcp?x=1#f",
                Some(token),
                Some("n0nce"),
            )
            .unwrap();
        let (header, claims) = verify(&proof, &key);
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        assert_eq!(header.alg, Algorithm::ES256);
        let jwk = serde_json::to_value(header.jwk.unwrap()).unwrap();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(jwk.get("d").is_none(), "the private key is in the proof");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(claims["nonce"], "n0nce");
        let expected = {
            use sha2::Digest;
            URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes()))
        };
        assert_eq!(claims["ath"], expected.as_str());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(claims["iat"].as_u64().unwrap().abs_diff(now) < 5);
        // A token request's proof has neither ath nor a nonce it was not given, and a
        // fresh jti.
        let other = key
            .proof("POST", "https://as.example.com/token", None, None)
            .unwrap();
        let (_, other) = verify(&other, &key);
        assert!(other.get("ath").is_none() && other.get("nonce").is_none());
        assert_ne!(other["jti"], claims["jti"]);
        assert!(claims["jti"].as_str().unwrap().len() >= 22);
    }

    #[test]
    fn a_stored_key_signs_as_the_same_key_and_a_damaged_one_is_refused() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_stored(&key.to_stored()).unwrap();
        assert_eq!(again.thumbprint(), key.thumbprint());
        assert_eq!(again.public_jwk(), key.public_jwk());
        let proof = again
            .proof("GET", "http://127.0.0.1:1/mcp", None, None)
            .unwrap();
        verify(&proof, &key);
        assert!(DpopKey::from_stored("not base64!").is_err());
        assert!(DpopKey::from_stored(&URL_SAFE_NO_PAD.encode(b"not a key")).is_err());
        let shown = format!("{key:?}");
        assert!(!shown.contains(&key.to_stored()), "{shown}");
    }

    #[test]
    fn only_a_nonce_is_taken_as_one() {
        assert_eq!(nonce_from(b"abc-123_~!").unwrap(), "abc-123_~!");
        assert!(nonce_from(b"").is_err());
        assert!(nonce_from(b"has space").is_err());
        assert!(nonce_from(b"quote\"d").is_err());
        assert!(nonce_from(b"back\\slash").is_err());
        assert!(nonce_from("n\u{e9}".as_bytes()).is_err());
        assert!(nonce_from(b"line\r\nbreak").is_err());
        let long = vec![b'a'; MAX_NONCE + 1];
        let why = nonce_from(&long).unwrap_err();
        assert!(why.to_string().contains("more than"), "{why}");
        // Each refusal is its own variant, for a caller to tell apart.
        assert_eq!(why, DpopError::LongNonce(MAX_NONCE + 1));
        assert_eq!(nonce_from(b""), Err(DpopError::EmptyNonce));
        assert_eq!(nonce_from(b"has space"), Err(DpopError::NonceCharacters));
        assert!(nonce_from(&long[..MAX_NONCE]).is_ok());
    }

    #[test]
    fn a_nonce_challenge_is_recognised() {
        assert!(asks_for_nonce(
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://x/.well-known""#
        ));
        assert!(asks_for_nonce("DPoP error=use_dpop_nonce"));
        assert!(!asks_for_nonce(r#"DPoP resource_metadata="https://x""#));
        assert!(!asks_for_nonce(r#"Bearer error="invalid_token""#));
    }

    #[test]
    fn htu_drops_query_and_fragment_and_refuses_a_non_url() {
        assert_eq!(
            htu("https://a.example:8443/p/q?x=1&y#z").unwrap(),
            "https://a.example:8443/p/q"
        );
        assert!(htu("not a url").is_err());
    }
}
