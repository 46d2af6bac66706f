//! Identity: the keys a Hello's access token is verified with, the claims it
//! must carry, and whether players without one are admitted as guests.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// The identity flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Identity")]
pub struct AuthArgs {
    /// Identity: a JWKS file of the identity service's public keys (tokens
    /// pick theirs by `kid`; a token without `kid` is checked against the
    /// only key of a one-key JWKS; reloaded on SIGHUP and when the file
    /// changes). Symmetric (`oct`) keys are refused: see
    /// --auth-hs256-secret-file. With a key file, a Hello's access token is
    /// verified; see --guests.
    #[arg(long, env = "MINO_AUTH_JWKS_FILE", group = "auth_keys")]
    pub auth_jwks_file: Option<PathBuf>,

    /// Identity: a PEM public key (RSA: RS256, P-256: ES256, Ed25519: EdDSA)
    /// instead of a JWKS.
    #[arg(long, env = "MINO_AUTH_PUBLIC_KEY_FILE", group = "auth_keys")]
    pub auth_public_key_file: Option<PathBuf>,

    /// Identity: a file whose bytes (a trailing newline trimmed; at least 32)
    /// are the HMAC key of HS256 tokens, instead of a public key.
    #[arg(long, env = "MINO_AUTH_HS256_SECRET_FILE", group = "auth_keys")]
    pub auth_hs256_secret_file: Option<PathBuf>,

    /// Identity: the `iss` a token must carry (a token without one, or with
    /// `null`, is refused; unchecked when unset).
    #[arg(long, env = "MINO_AUTH_ISSUER")]
    pub auth_issuer: Option<String>,

    /// Identity: the `aud` a token must be for (a token without one, or with
    /// `null`, is refused; unchecked when unset).
    #[arg(long, env = "MINO_AUTH_AUDIENCE")]
    pub auth_audience: Option<String>,

    /// Identity: the claim that holds the display name (checked like a
    /// Hello's name; the Hello's name is used when it is missing or invalid).
    #[arg(long, env = "MINO_AUTH_NAME_CLAIM", default_value = "name")]
    pub auth_name_claim: String,

    /// Identity: seconds of clock difference allowed on `exp` and `nbf`. 0 to
    /// 300.
    #[arg(long, env = "MINO_AUTH_LEEWAY_S", default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=300))]
    pub auth_leeway_s: u64,

    /// Whether players without a token are admitted as guests: allow (the
    /// default) or deny (every Hello needs a valid token, or a resume ticket
    /// of an account's session).
    #[arg(long, env = "MINO_GUESTS", default_value = "allow")]
    pub guests: Guests,
}

/// Whether players without an access token are admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Guests {
    /// Guests play with the name they give.
    Allow,
    /// Every player needs a valid token (or a ticket of an account's session).
    Deny,
}

/// Where the identity service's keys are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthKeys {
    /// A JWKS file.
    Jwks(PathBuf),
    /// A PEM public key.
    PublicKey(PathBuf),
    /// An HS256 secret.
    Hs256Secret(PathBuf),
}

/// How Hello tokens are verified (see [`crate::auth`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthConfig {
    /// The keys; `None`: no tokens are verified (guests only).
    pub keys: Option<AuthKeys>,
    /// The required issuer.
    pub issuer: Option<String>,
    /// The required audience.
    pub audience: Option<String>,
    /// Whether guests are admitted.
    pub guests: Guests,
    /// The display name's claim.
    pub name_claim: String,
    /// Clock difference allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

impl AuthArgs {
    /// The typed settings; an empty issuer or audience is no check (clap
    /// allows at most one key flag).
    pub fn config(&self) -> AuthConfig {
        AuthConfig {
            keys: self
                .auth_jwks_file
                .clone()
                .map(AuthKeys::Jwks)
                .or_else(|| self.auth_public_key_file.clone().map(AuthKeys::PublicKey))
                .or_else(|| self.auth_hs256_secret_file.clone().map(AuthKeys::Hs256Secret)),
            issuer: self.auth_issuer.clone().filter(|s| !s.is_empty()),
            audience: self.auth_audience.clone().filter(|s| !s.is_empty()),
            guests: self.guests,
            name_claim: self.auth_name_claim.clone(),
            leeway: Duration::from_secs(self.auth_leeway_s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    #[test]
    fn one_key_flag_at_most_and_empty_claims_are_unchecked() {
        let auth = parse(&["--auth-jwks-file", "/k.json", "--auth-issuer", "", "--guests", "deny"]).expect("flags");
        let auth = auth.auth.config();
        assert_eq!(auth.keys, Some(AuthKeys::Jwks("/k.json".into())));
        assert_eq!((auth.issuer, auth.guests, auth.leeway.as_secs()), (None, Guests::Deny, 30));
        assert!(parse(&["--auth-jwks-file", "/k.json", "--auth-public-key-file", "/k.pem"]).is_err());
    }
}
