//! WebTransport's certificate: the operator's, loaded once, or a
//! self-signed one made at start and renewed while the shard runs.
//!
//! Browsers take a certificate by its SHA-256 hash (`serverCertificateHashes`)
//! only when it is ECDSA and valid less than 14 days, so a self-signed one
//! is made valid [`SELF_SIGNED_DAYS`] days and replaced every
//! `--webtransport-cert-renew-s` (10 days by default): the endpoint takes
//! the new one for new sessions (`reload_config`; sessions already open keep
//! the one they were made with) and `/webtransport` offers its hash from
//! then on ([`LiveOffer`]). A page that read the old hash just before and
//! connects just after is refused, and falls back to its websocket.

use super::{CertificateHash, Offer, WebTransportError};
use crate::config::{Certificate, WebTransportConfig};
use std::sync::{Arc, PoisonError, RwLock};
use wtransport::Identity;

/// Days a self-signed certificate is valid (browsers take one by hash only
/// when it is valid less than 14 days).
pub const SELF_SIGNED_DAYS: u32 = 13;

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
            let identity =
                Identity::load_pemfiles(cert, key).await.map_err(|e| WebTransportError::Certificate(e.to_string()))?;
            Ok(Made { identity, hashes: Vec::new() })
        }
        Certificate::SelfSigned => self_signed(config),
    }
}

/// A self-signed ECDSA P-256 certificate valid [`SELF_SIGNED_DAYS`] days
/// from now, for the listen address, loopback and the advertised host.
///
/// Errors: [`WebTransportError::SelfSigned`].
pub fn self_signed(config: &WebTransportConfig) -> Result<Made, WebTransportError> {
    let ip = config.listen.ip().to_string();
    // The advertised host too (browsers take a certificate by hash whatever
    // its names; other clients may check them).
    let advertised = config.advertise.as_ref().map(|a| a.host.trim_matches(['[', ']']).to_owned());
    let names = ["localhost", "127.0.0.1", "::1", ip.as_str()].into_iter().chain(advertised.as_deref());
    let identity = Identity::self_signed_builder()
        .subject_alt_names(names)
        .from_now_utc()
        .validity_days(SELF_SIGNED_DAYS)
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
