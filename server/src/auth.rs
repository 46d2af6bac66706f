//! Identity: the access token a Hello carries, verified against an identity
//! service's keys with `jsonwebtoken`.
//!
//! A token is a JWT. Its signature, expiry (`exp`, with a small leeway) and
//! not-before (`nbf`) are checked, and every claim the operator configured
//! is required: with `--auth-issuer` a token without that `iss` (missing,
//! `null` or another) is refused, and likewise `aud` with
//! `--auth-audience`. The algorithm is pinned by the key, never taken from
//! the token (no `none`, and no algorithm confusion: an RS256 public key
//! never verifies an HS256 token signed with it as a secret). The account
//! is the `sub` claim; the display name is the `--auth-name-claim` claim
//! (default `name`), checked like a Hello's name.
//!
//! Keys come from one file: a JWKS (`--auth-jwks-file`, keys chosen by the
//! token's `kid`; a token without `kid` is checked against the JWKS's only
//! key when it has one, else against its key without a `kid`; reloaded on
//! SIGHUP and when the file changes, so keys rotate without a restart), a
//! PEM public key (`--auth-public-key-file`: RSA for RS256, P-256 for
//! ES256, Ed25519 for EdDSA), or an HMAC secret (`--auth-hs256-secret-file`:
//! the file's bytes, a trailing newline trimmed). A JWKS holds public keys
//! only: an identity service publishes it for anyone to read, so a
//! symmetric (`oct`, or `HS*`) key in it would let any reader mint tokens;
//! such a file is refused, pointing to `--auth-hs256-secret-file`.
//!
//! The token itself is never logged: [`Verifier::verify`] reports only why
//! a token was refused.

use crate::close::CloseReason;
use crate::config::{AuthConfig, AuthKeys, Guests};
use crate::reload::FileStamp;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Who a verified token says the player is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The account: the token's `sub`.
    pub account: String,
    /// The display name from the name claim, when present and valid.
    pub name: Option<String>,
}

/// Why a Hello's token was refused: each its own close code and metric label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No token, and guests are not admitted.
    #[error("an access token is required")]
    Missing,
    /// Past its `exp` (plus the leeway).
    #[error("access token expired")]
    Expired,
    /// Before its `nbf` (minus the leeway).
    #[error("access token not yet valid")]
    NotYetValid,
    /// The signature does not verify with the key (or no key has its `kid`,
    /// or it names another algorithm than the key's).
    #[error("access token signature invalid")]
    BadSignature,
    /// Another issuer than `--auth-issuer`, or none (no `iss`, or `null`).
    #[error("access token of another issuer")]
    WrongIssuer,
    /// Not for `--auth-audience`, or for no audience (no `aud`, or `null`).
    #[error("access token for another audience")]
    WrongAudience,
    /// Not a JWT, a claim missing or of the wrong type.
    #[error("access token malformed")]
    Malformed,
}

impl AuthError {
    /// Every refusal, for documentation tests.
    pub const ALL: [AuthError; 7] = [
        AuthError::Missing,
        AuthError::Expired,
        AuthError::NotYetValid,
        AuthError::BadSignature,
        AuthError::WrongIssuer,
        AuthError::WrongAudience,
        AuthError::Malformed,
    ];

    /// The `reason` label of `mino_auth_refusals_total`.
    pub fn label(self) -> &'static str {
        match self {
            AuthError::Missing => "missing",
            AuthError::Expired => "expired",
            AuthError::NotYetValid => "not_yet_valid",
            AuthError::BadSignature => "bad_signature",
            AuthError::WrongIssuer => "wrong_issuer",
            AuthError::WrongAudience => "wrong_audience",
            AuthError::Malformed => "malformed",
        }
    }
}

impl From<AuthError> for CloseReason {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::Missing => CloseReason::AuthRequired,
            AuthError::Expired => CloseReason::AuthExpired,
            AuthError::NotYetValid => CloseReason::AuthNotYetValid,
            AuthError::BadSignature => CloseReason::AuthBadSignature,
            AuthError::WrongIssuer => CloseReason::AuthWrongIssuer,
            AuthError::WrongAudience => CloseReason::AuthWrongAudience,
            AuthError::Malformed => CloseReason::AuthMalformed,
        }
    }
}

/// Why the keys could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no key this server can use.
    #[error("{path}: {why}")]
    Invalid {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
}

/// A verification key and the one algorithm it verifies.
#[derive(Clone)]
struct Key {
    key: DecodingKey,
    algorithm: Algorithm,
}

/// The keys of one load of the key file.
#[derive(Clone, Default)]
struct Keys {
    /// By `kid`; a JWKS key without one is under "".
    by_id: HashMap<String, Key>,
    /// The file's stamp when loaded.
    stamp: Option<FileStamp>,
}

/// Verifies Hello tokens; shared by every session (cheap to clone).
#[derive(Clone)]
pub struct Verifier {
    config: Arc<AuthConfig>,
    keys: Arc<RwLock<Arc<Keys>>>,
}

impl Verifier {
    /// A verifier of `config`'s keys, loaded now.
    ///
    /// Errors: [`KeyError`] when a key file is configured but unusable.
    pub fn load(config: AuthConfig) -> Result<Verifier, KeyError> {
        let keys = match &config.keys {
            Some(source) => load(source)?,
            None => Keys::default(),
        };
        Ok(Verifier { config: Arc::new(config), keys: Arc::new(RwLock::new(Arc::new(keys))) })
    }

    /// True when tokens can be verified (a key file is configured).
    pub fn enabled(&self) -> bool {
        self.config.keys.is_some()
    }

    /// Who `token` says the player is: `Ok(None)` for a guest (no token, and
    /// guests allowed, or no keys configured at all).
    ///
    /// Errors: [`AuthError`], why the token (or its absence) is refused.
    pub fn verify(&self, token: Option<&str>) -> Result<Option<Identity>, AuthError> {
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return match self.config.guests {
                Guests::Allow => Ok(None),
                Guests::Deny => Err(AuthError::Missing),
            };
        };
        if !self.enabled() {
            // A server without keys admits guests only; a token is not a name.
            return match self.config.guests {
                Guests::Allow => Ok(None),
                Guests::Deny => Err(AuthError::Missing),
            };
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::Malformed)?;
        let keys = self.keys.read().map_or_else(|e| e.into_inner().clone(), |k| k.clone());
        let key = match header.kid.as_deref() {
            Some(kid) => keys.by_id.get(kid),
            None if keys.by_id.len() == 1 => keys.by_id.values().next(),
            None => keys.by_id.get(""),
        }
        .ok_or(AuthError::BadSignature)?;
        let validation = self.validation(key.algorithm);
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &key.key, &validation)
            .map_err(|e| refusal(e.kind()))?;
        let claims = data.claims;
        let account = match claims.get("sub") {
            Some(serde_json::Value::String(sub)) if !sub.is_empty() && sub.len() <= MAX_ACCOUNT_BYTES => sub.clone(),
            _ => return Err(AuthError::Malformed),
        };
        let name = claims
            .get(&self.config.name_claim)
            .and_then(|v| v.as_str())
            .and_then(|n| mino_protocol::client::validate_name(n).ok());
        Ok(Some(Identity { account, name }))
    }

    /// What a token verified with a key of `algorithm` must hold: a
    /// signature of that algorithm, `exp` (and `nbf` when present) within
    /// the leeway, a `sub`, and every claim the operator configured:
    /// `iss` with `--auth-issuer`, `aud` with `--auth-audience`. A configured
    /// claim that is missing, `null` or not a string (or list of strings) is
    /// a refusal ([`AuthError::WrongIssuer`], [`AuthError::WrongAudience`]):
    /// jsonwebtoken compares `iss` and `aud` only when present, so each is
    /// also required.
    fn validation(&self, algorithm: Algorithm) -> Validation {
        let mut validation = Validation::new(algorithm);
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        match &self.config.issuer {
            Some(issuer) => {
                validation.set_issuer(&[issuer]);
                required.push("iss");
            }
            None => validation.iss = None,
        }
        match &self.config.audience {
            Some(audience) => {
                validation.set_audience(&[audience]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        validation
    }

    /// Loads the key file again (key rotation). Keeps the old keys when the
    /// new file is unusable.
    ///
    /// Errors: [`KeyError`]; the old keys stay in use.
    pub fn reload(&self) -> Result<usize, KeyError> {
        let Some(source) = &self.config.keys else { return Ok(0) };
        let keys = load(source)?;
        let n = keys.by_id.len();
        *self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
        Ok(n)
    }

    /// True when the key file changed since it was loaded.
    pub fn changed(&self) -> bool {
        let Some(source) = &self.config.keys else { return false };
        let loaded = self.keys.read().map_or(None, |k| k.stamp);
        FileStamp::of(path_of(source)) != loaded
    }
}

impl Verifier {
    /// Reloads the keys on SIGHUP and when the key file changes (looked at
    /// once a second), until `stop`; logs each reload (never a key).
    pub async fn watch(self, stop: tokio_util::sync::CancellationToken) {
        let Some(source) = self.config.keys.clone() else { return };
        crate::reload::watch(&self, "identity keys", path_of(&source), stop).await;
    }
}

impl crate::reload::Reloadable for Verifier {
    type Error = KeyError;

    fn changed(&self) -> bool {
        Verifier::changed(self)
    }

    fn reload(&self) -> Result<usize, KeyError> {
        Verifier::reload(self)
    }
}

/// Longest account id (`sub`) accepted, bytes.
pub const MAX_ACCOUNT_BYTES: usize = 256;

fn refusal(kind: &jsonwebtoken::errors::ErrorKind) -> AuthError {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => AuthError::Expired,
        K::ImmatureSignature => AuthError::NotYetValid,
        K::InvalidSignature | K::InvalidAlgorithm | K::InvalidEcdsaKey | K::InvalidRsaKey(_) => AuthError::BadSignature,
        K::InvalidIssuer => AuthError::WrongIssuer,
        K::InvalidAudience => AuthError::WrongAudience,
        K::MissingRequiredClaim(claim) if claim == "iss" => AuthError::WrongIssuer,
        K::MissingRequiredClaim(claim) if claim == "aud" => AuthError::WrongAudience,
        _ => AuthError::Malformed,
    }
}

fn path_of(source: &AuthKeys) -> &Path {
    match source {
        AuthKeys::Jwks(p) | AuthKeys::PublicKey(p) | AuthKeys::Hs256Secret(p) => p,
    }
}

fn load(source: &AuthKeys) -> Result<Keys, KeyError> {
    let path = path_of(source);
    let shown = path.display().to_string();
    let stamp = FileStamp::of(path);
    let bytes = std::fs::read(path).map_err(|source| KeyError::Read { path: shown.clone(), source })?;
    let invalid = |why: String| KeyError::Invalid { path: shown.clone(), why };
    let mut by_id = HashMap::new();
    match source {
        AuthKeys::Hs256Secret(_) => {
            let secret = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
            let secret = secret.strip_suffix(b"\r").unwrap_or(secret);
            if secret.len() < 32 {
                return Err(invalid(format!("an HS256 secret of {} bytes; use at least 32", secret.len())));
            }
            by_id.insert(String::new(), Key { key: DecodingKey::from_secret(secret), algorithm: Algorithm::HS256 });
        }
        AuthKeys::PublicKey(_) => {
            let key = DecodingKey::from_rsa_pem(&bytes)
                .map(|k| Key { key: k, algorithm: Algorithm::RS256 })
                .or_else(|_| DecodingKey::from_ec_pem(&bytes).map(|k| Key { key: k, algorithm: Algorithm::ES256 }))
                .or_else(|_| DecodingKey::from_ed_pem(&bytes).map(|k| Key { key: k, algorithm: Algorithm::EdDSA }))
                .map_err(|_| invalid("not an RSA, P-256 or Ed25519 public key in PEM".into()))?;
            by_id.insert(String::new(), key);
        }
        AuthKeys::Jwks(_) => {
            let set: JwkSet = serde_json::from_slice(&bytes).map_err(|e| invalid(format!("not a JWKS: {e}")))?;
            if let Some(secret) = set.keys.iter().find(|jwk| symmetric(jwk)) {
                let kid = secret.common.key_id.as_deref().map_or(String::new(), |k| format!(" (kid {k:?})"));
                return Err(invalid(format!(
                    "a symmetric key{kid} in a JWKS, which anyone may read, would let its readers sign tokens: \
                     give an HMAC secret with --auth-hs256-secret-file instead"
                )));
            }
            for jwk in &set.keys {
                let Some(algorithm) = algorithm_of(jwk) else { continue };
                let Ok(key) = DecodingKey::from_jwk(jwk) else { continue };
                by_id.insert(jwk.common.key_id.clone().unwrap_or_default(), Key { key, algorithm });
            }
            if by_id.is_empty() {
                return Err(invalid("no usable key in the JWKS".into()));
            }
        }
    }
    Ok(Keys { by_id, stamp })
}

/// True for a symmetric key: key type `oct`, or an HMAC `alg`.
fn symmetric(jwk: &Jwk) -> bool {
    matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
        || matches!(jwk.common.key_algorithm, Some(KeyAlgorithm::HS256 | KeyAlgorithm::HS384 | KeyAlgorithm::HS512))
}

/// The one algorithm a public JWK verifies: its `alg` when given, else the
/// usual one of its key type (`None`: not one this server verifies;
/// symmetric keys are refused before, see [`symmetric`]).
fn algorithm_of(jwk: &Jwk) -> Option<Algorithm> {
    if let Some(alg) = jwk.common.key_algorithm {
        return match alg {
            KeyAlgorithm::RS256 => Some(Algorithm::RS256),
            KeyAlgorithm::RS384 => Some(Algorithm::RS384),
            KeyAlgorithm::RS512 => Some(Algorithm::RS512),
            KeyAlgorithm::PS256 => Some(Algorithm::PS256),
            KeyAlgorithm::PS384 => Some(Algorithm::PS384),
            KeyAlgorithm::PS512 => Some(Algorithm::PS512),
            KeyAlgorithm::ES256 => Some(Algorithm::ES256),
            KeyAlgorithm::ES384 => Some(Algorithm::ES384),
            KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
            _ => None,
        };
    }
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Some(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => Some(Algorithm::ES256),
            EllipticCurve::P384 => Some(Algorithm::ES384),
            _ => None,
        },
        AlgorithmParameters::OctetKeyPair(_) => Some(Algorithm::EdDSA),
        AlgorithmParameters::OctetKey(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{encode, EncodingKey, Header};
    use std::time::Duration;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn now() -> u64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }

    fn config(dir: &Path, guests: Guests) -> AuthConfig {
        let path = dir.join("secret");
        std::fs::write(&path, [SECRET, b"\n"].concat()).expect("write secret");
        AuthConfig {
            keys: Some(AuthKeys::Hs256Secret(path)),
            issuer: Some("https://id.example".into()),
            audience: Some("mino".into()),
            guests,
            name_claim: "name".into(),
            leeway: Duration::from_secs(5),
        }
    }

    fn token(claims: serde_json::Value) -> String {
        encode(&Header::default(), &claims, &EncodingKey::from_secret(SECRET)).expect("token")
    }

    fn claims(exp: i64) -> serde_json::Value {
        serde_json::json!({"sub": "acct-1", "name": "Ada", "iss": "https://id.example", "aud": "mino", "exp": exp})
    }

    /// A folder of the test's own, removed when it is dropped.
    fn dir() -> mino_testkit::WorkDir {
        mino_testkit::WorkDir::new("auth")
    }

    #[test]
    fn a_valid_token_names_its_account_and_a_bad_one_says_why() {
        let d = dir();
        let v = Verifier::load(config(d.path(), Guests::Deny)).expect("keys");
        let t = now() as i64;
        let ok = v.verify(Some(&token(claims(t + 60)))).expect("valid");
        assert_eq!(ok, Some(Identity { account: "acct-1".into(), name: Some("Ada".into()) }));
        assert_eq!(v.verify(None), Err(AuthError::Missing));
        assert_eq!(v.verify(Some(&token(claims(t - 60)))), Err(AuthError::Expired));
        assert!(v.verify(Some(&token(claims(t - 2)))).is_ok(), "within the leeway");
        let mut early = claims(t + 60);
        early["nbf"] = (t + 60).into();
        assert_eq!(v.verify(Some(&token(early))), Err(AuthError::NotYetValid));
        let mut other = claims(t + 60);
        other["iss"] = "https://evil.example".into();
        assert_eq!(v.verify(Some(&token(other))), Err(AuthError::WrongIssuer));
        let mut other = claims(t + 60);
        other["aud"] = "another-game".into();
        assert_eq!(v.verify(Some(&token(other))), Err(AuthError::WrongAudience));
        let forged =
            encode(&Header::default(), &claims(t + 60), &EncodingKey::from_secret(b"another secret of 32 bytes!!!!!!"))
                .expect("token");
        assert_eq!(v.verify(Some(&forged)), Err(AuthError::BadSignature));
        assert_eq!(v.verify(Some("not.a.jwt")), Err(AuthError::Malformed));
        let mut nosub = claims(t + 60);
        nosub.as_object_mut().expect("object").remove("sub");
        assert_eq!(v.verify(Some(&token(nosub))), Err(AuthError::Malformed));
    }

    #[test]
    fn a_configured_claim_missing_or_null_is_refused() {
        let d = dir();
        let v = Verifier::load(config(d.path(), Guests::Deny)).expect("keys");
        let t = now() as i64;
        for (claim, refusal) in [("iss", AuthError::WrongIssuer), ("aud", AuthError::WrongAudience)] {
            let mut missing = claims(t + 60);
            missing.as_object_mut().expect("object").remove(claim);
            assert_eq!(v.verify(Some(&token(missing))), Err(refusal), "no {claim}");
            for bad in [serde_json::Value::Null, 42.into(), serde_json::json!([])] {
                let mut c = claims(t + 60);
                c[claim] = bad.clone();
                assert_eq!(v.verify(Some(&token(c))), Err(refusal), "{claim}: {bad}");
            }
        }
        // Unconfigured, neither is needed.
        let open = AuthConfig { issuer: None, audience: None, ..config(d.path(), Guests::Deny) };
        let v = Verifier::load(open).expect("keys");
        let bare = serde_json::json!({"sub": "acct-1", "exp": t + 60});
        assert!(v.verify(Some(&token(bare))).is_ok());
    }

    #[test]
    fn a_jwks_with_a_symmetric_key_is_refused_and_points_to_the_secret_file() {
        let d = dir();
        let path = d.join("jwks.json");
        let cfg =
            |path: &Path| AuthConfig { keys: Some(AuthKeys::Jwks(path.to_owned())), ..config(d.path(), Guests::Deny) };
        use base64::Engine;
        let k = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(SECRET);
        for jwk in [
            serde_json::json!({"kty": "oct", "kid": "s", "k": k}),
            serde_json::json!({"kty": "oct", "kid": "s", "alg": "HS256", "k": k}),
            serde_json::json!({"kty": "oct", "k": k, "alg": "HS512"}),
        ] {
            std::fs::write(&path, serde_json::json!({"keys": [jwk]}).to_string()).expect("write");
            match Verifier::load(cfg(&path)) {
                Err(e @ KeyError::Invalid { .. }) => assert!(e.to_string().contains("--auth-hs256-secret-file"), "{e}"),
                Err(e) => panic!("another error: {e}"),
                Ok(_) => panic!("a symmetric key was accepted: {jwk}"),
            }
        }
    }

    #[test]
    fn alg_none_is_refused() {
        let d = dir();
        let v = Verifier::load(config(d.path(), Guests::Allow)).expect("keys");
        use base64::Engine;
        let b64 = |v: &serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let unsigned =
            format!("{}.{}.", b64(&serde_json::json!({"alg": "none", "typ": "JWT"})), b64(&claims(now() as i64 + 60)));
        assert!(v.verify(Some(&unsigned)).is_err());
    }

    #[test]
    fn guests_are_admitted_only_when_allowed_and_a_bad_name_claim_is_dropped() {
        let d = dir();
        let v = Verifier::load(config(d.path(), Guests::Allow)).expect("keys");
        assert_eq!(v.verify(None), Ok(None));
        let mut c = claims(now() as i64 + 60);
        c["name"] = "\u{7}bell".into();
        assert_eq!(v.verify(Some(&token(c))).map(|i| i.and_then(|i| i.name)), Ok(None));
    }

    #[test]
    fn a_short_secret_is_refused_and_a_rotated_file_is_noticed() {
        let d = dir();
        let path = d.join("short");
        std::fs::write(&path, b"short").expect("write");
        let cfg = AuthConfig { keys: Some(AuthKeys::Hs256Secret(path)), ..config(d.path(), Guests::Deny) };
        assert!(matches!(Verifier::load(cfg), Err(KeyError::Invalid { .. })));
        let v = Verifier::load(config(d.path(), Guests::Deny)).expect("keys");
        assert!(!v.changed());
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(d.join("secret"), b"fedcba9876543210fedcba9876543210").expect("rotate");
        let later = std::time::SystemTime::now() + Duration::from_secs(2);
        let f = std::fs::File::options().write(true).open(d.join("secret")).expect("open");
        f.set_modified(later).expect("mtime");
        assert!(v.changed());
        assert_eq!(v.reload().expect("reloaded"), 1);
        assert!(!v.changed());
        let t = now() as i64;
        assert_eq!(v.verify(Some(&token(claims(t + 60)))), Err(AuthError::BadSignature), "the old key is gone");
    }
}
