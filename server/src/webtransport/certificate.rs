//! WebTransport's certificate: the operator's, loaded once, or a
//! self-signed one made at start and renewed while the shard runs.
//!
//! Browsers take a certificate by its SHA-256 hash (`serverCertificateHashes`)
//! only when it is ECDSA and valid two weeks at most in all
//! ([`MAX_VALIDITY`]), so a self-signed one is made valid from [`BACKDATE`]
//! before its making to [`SELF_SIGNED_DAYS`] days after, and replaced every
//! `--webtransport-cert-renew-s` (10 days by default): the endpoint takes
//! the new one for new sessions (`reload_config`; sessions already open keep
//! the one they were made with) and `/webtransport` offers its hash from
//! then on ([`LiveOffer`]). A page that read the old hash just before and
//! connects just after is refused, and falls back to its websocket.

use super::{CertificateHash, Offer, WebTransportError};
use crate::config::{Certificate, WebTransportConfig};
use std::sync::{Arc, PoisonError, RwLock};
use wtransport::Identity;

/// Days a self-signed certificate is valid after its making (browsers take
/// one by hash only when its whole validity is [`MAX_VALIDITY`] at most).
pub const SELF_SIGNED_DAYS: u32 = 13;

/// How long before its making a self-signed certificate is valid from: a
/// browser whose clock is behind the shard's by up to this much still takes
/// it (valid from "now", it is "not yet valid" to a clock even a second
/// behind, and the page falls back to its websocket).
pub const BACKDATE: time::Duration = time::Duration::hours(1);

/// The longest validity, from its start to its end, of a certificate a
/// browser takes by hash: the W3C WebTransport specification's custom
/// certificate requirements for `serverCertificateHashes`
/// (<https://www.w3.org/TR/webtransport/#custom-certificate-requirements>):
/// "the total length of the validity period MUST NOT exceed two weeks".
/// [`BACKDATE`] and [`SELF_SIGNED_DAYS`] together stay within it.
pub const MAX_VALIDITY: time::Duration = time::Duration::weeks(2);

// The two together within the limit, checked as the crate builds.
const _: () = assert!(BACKDATE.whole_seconds() + SELF_SIGNED_DAYS as i64 * 86_400 < MAX_VALIDITY.whole_seconds());

/// The offer `/webtransport` serves now: replaced when the self-signed
/// certificate is renewed. Cheap to clone (one shared value).
#[derive(Clone, Debug)]
pub struct LiveOffer(Arc<RwLock<Offer>>);

impl LiveOffer {
    /// An offer served as it is until [`LiveOffer::set`].
    pub fn new(offer: Offer) -> LiveOffer {
        LiveOffer(Arc::new(RwLock::new(offer)))
    }

    /// The offer now.
    pub fn get(&self) -> Offer {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Serves `offer` from now on.
    pub fn set(&self, offer: Offer) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = offer;
    }
}

/// Times the operator's certificate and key are read before a shard gives
/// up on a pair that keeps changing under it ([`make`]).
const PAIR_READS: usize = 3;

/// A certificate and what a page is told of it.
pub struct Made {
    /// The chain and key.
    pub identity: Identity,
    /// Its hashes for `serverCertificateHashes` (none for the operator's,
    /// which browsers verify as usual).
    pub hashes: Vec<CertificateHash>,
}

/// Loads the operator's certificate or makes a self-signed one.
///
/// Errors: [`WebTransportError::Certificate`] (the files),
/// [`WebTransportError::SelfSigned`].
pub async fn make(config: &WebTransportConfig) -> Result<Made, WebTransportError> {
    match &config.certificate {
        Certificate::Files { cert, key } => {
            // A renewal may switch the pair while it is read (deploy's
            // certbot hook renames a link over the old one, and the two
            // files are opened one after the other): the certificate is
            // read again after the pair, and the pair again if it changed,
            // so a shard never starts with one renewal's chain and another's
            // key.
            let read = |path: &std::path::Path| {
                let path = path.to_owned();
                async move {
                    tokio::fs::read(&path)
                        .await
                        .map_err(|e| WebTransportError::Certificate(format!("{}: {e}", path.display())))
                }
            };
            for _ in 0..PAIR_READS {
                let before = read(cert).await?;
                let identity = Identity::load_pemfiles(cert, key)
                    .await
                    .map_err(|e| WebTransportError::Certificate(e.to_string()))?;
                if read(cert).await? != before {
                    // Renewed while read: the pair may be two renewals'.
                    continue;
                }
                // The same certificate before and after: a key that is not
                // its own is the operator's mistake, not a renewal's moment.
                check_pair(&identity).map_err(|e| {
                    WebTransportError::Certificate(format!("{} with {}: {e}", cert.display(), key.display()))
                })?;
                return Ok(Made { identity, hashes: Vec::new() });
            }
            Err(WebTransportError::Certificate(format!(
                "{} changed each of {PAIR_READS} times it was read with its key",
                cert.display()
            )))
        }
        Certificate::SelfSigned => self_signed(config),
    }
}

/// Checks that `identity`'s key is its certificate's, and that TLS 1.3
/// takes the pair, as the endpoint's configuration will (wtransport builds it
/// with `expect`: a pair of one renewal's certificate and another's key, or
/// an RSA key with an ECDSA certificate, would panic there).
///
/// Errors: rustls' (`InconsistentKeys(KeyMismatch)`, an unsupported key).
fn check_pair(identity: &Identity) -> Result<(), rustls::Error> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain =
        identity.certificate_chain().as_slice().iter().map(|c| CertificateDer::from(c.der().to_vec())).collect();
    let key = PrivateKeyDer::try_from(identity.private_key().secret_der().to_vec())
        .map_err(|e| rustls::Error::General(e.to_owned()))?;
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map(drop)
}

/// A self-signed ECDSA P-256 certificate valid from [`BACKDATE`] ago to
/// [`SELF_SIGNED_DAYS`] days from now, for the listen address, loopback and
/// the advertised host.
///
/// Errors: [`WebTransportError::SelfSigned`].
pub fn self_signed(config: &WebTransportConfig) -> Result<Made, WebTransportError> {
    let ip = config.listen.ip().to_string();
    // The advertised host too (browsers take a certificate by hash whatever
    // its names; other clients may check them).
    let advertised = config.advertise.as_ref().map(|a| a.host.trim_matches(['[', ']']).to_owned());
    let names = ["localhost", "127.0.0.1", "::1", ip.as_str()].into_iter().chain(advertised.as_deref());
    let now = time::OffsetDateTime::now_utc();
    let identity = Identity::self_signed_builder()
        .subject_alt_names(names)
        .validity_period(now - BACKDATE, now + time::Duration::days(i64::from(SELF_SIGNED_DAYS)))
        .build()
        .map_err(|e| WebTransportError::SelfSigned(e.to_string()))?;
    let hashes = identity
        .certificate_chain()
        .as_slice()
        .first()
        .map(|cert| {
            let value: String = cert.hash().as_ref().iter().map(|b| format!("{b:02x}")).collect();
            vec![CertificateHash { algorithm: "sha-256", value }]
        })
        .unwrap_or_default();
    Ok(Made { identity, hashes })
}

/// The offer of `hashes` at `offered` (the advertised or bound address).
pub fn offer(offered: &Offer, hashes: Vec<CertificateHash>) -> Offer {
    Offer { certificate_hashes: hashes, ..offered.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Congestion;
    use x509_parser::prelude::{FromDer, X509Certificate};

    fn config() -> WebTransportConfig {
        WebTransportConfig {
            listen: "127.0.0.1:0".parse().expect("address"),
            advertise: None,
            certificate: Certificate::SelfSigned,
            datagram_bytes: 1_200,
            congestion: Congestion::Cubic,
            window_floor_bytes: 0,
            send_queue_bytes: 64 * 1024,
            renew_every: std::time::Duration::from_secs(864_000),
        }
    }

    /// A clock up to an hour behind the shard's finds the certificate
    /// valid, and its whole validity is within the two weeks browsers take.
    #[test]
    fn a_self_signed_certificate_is_valid_from_an_hour_ago_for_under_two_weeks_in_all() {
        let before = time::OffsetDateTime::now_utc();
        let made = self_signed(&config()).expect("made");
        let after = time::OffsetDateTime::now_utc();
        let der = made.identity.certificate_chain().as_slice()[0].der().to_vec();
        let (_, cert) = X509Certificate::from_der(&der).expect("x509");
        let (start, end) = (cert.validity().not_before.to_datetime(), cert.validity().not_after.to_datetime());
        // X.509 times are whole seconds.
        let second = time::Duration::seconds(1);
        assert!(start <= after - BACKDATE && start >= before - BACKDATE - second, "valid from {start}");
        assert!(start <= before - time::Duration::minutes(59), "a clock behind by most of an hour takes it");
        assert!(end >= before + time::Duration::days(13) - second, "valid until {end}");
        assert!(end - start <= MAX_VALIDITY, "{} in all", end - start);
    }
}
