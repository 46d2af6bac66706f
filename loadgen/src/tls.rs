//! TLS for `wss://` targets (a shard behind nginx or another TLS proxy): one
//! rustls client configuration built at start and shared by every bot, so
//! sessions can be resumed and nothing is parsed per connection.
//!
//! Trust: the public web roots (webpki-roots), plus the certificates of any
//! `--ca-file` (a private CA, or a self-signed server certificate that is its
//! own anchor), or none at all with `--insecure` (test certificates only).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_tungstenite::Connector;

/// What to trust for `wss://` targets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM files whose certificates are trusted besides the public web roots.
    pub ca_files: Vec<PathBuf>,
    /// Accept any server certificate (no verification at all): for
    /// self-signed test certificates only.
    pub insecure: bool,
}

/// Why the TLS settings could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A `--ca-file` could not be read or holds no usable certificate.
    #[error("CA file {path}: {detail}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(rustls::Error),
}

// Its text says the cause (`{0}`): not its error source too, or a chain
// printed with `{:#}` says it twice (an outside trial).
impl From<rustls::Error> for TlsError {
    fn from(e: rustls::Error) -> TlsError {
        TlsError::Config(e)
    }
}

/// The client TLS settings every bot shares; cheap to clone. Two values are
/// equal when they are the same settings (same allocation).
#[derive(Clone)]
pub struct Tls(Arc<ClientConfig>);

impl Tls {
    /// Builds the settings `options` ask for (ring crypto, TLS 1.2 and 1.3).
    ///
    /// Errors: [`TlsError`] when a CA file is unreadable or holds no certificate.
    pub fn new(options: &TlsOptions) -> Result<Tls, TlsError> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
        let config = if options.insecure {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(AcceptAny(provider))).with_no_client_auth()
        } else {
            builder.with_root_certificates(roots(options)?).with_no_client_auth()
        };
        Ok(Tls(Arc::new(config)))
    }

    /// The connector handed to the websocket handshake.
    pub fn connector(&self) -> Connector {
        Connector::Rustls(self.0.clone())
    }
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls").field("alpn", &self.0.alpn_protocols).finish_non_exhaustive()
    }
}

impl PartialEq for Tls {
    fn eq(&self, other: &Tls) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Tls {}

/// The web roots plus every certificate of `options.ca_files`.
fn roots(options: &TlsOptions) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    for path in &options.ca_files {
        let err = |detail: String| TlsError::CaFile { path: path.clone(), detail };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .map_err(|e| err(e.to_string()))?
            .collect::<Result<_, _>>()
            .map_err(|e| err(e.to_string()))?;
        let (added, _ignored) = store.add_parsable_certificates(certs);
        if added == 0 {
            return Err(err("no usable certificate".into()));
        }
    }
    Ok(store)
}

/// A verifier that accepts every certificate but still checks the handshake
/// signatures (so the peer holds the key of the certificate it sent).
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_roots_build_and_compare_by_identity() {
        let web = || Tls::new(&TlsOptions::default()).expect("web roots");
        let a = web();
        assert_eq!(a, a.clone());
        assert_ne!(a, web());
        assert!(Tls::new(&TlsOptions { insecure: true, ..TlsOptions::default() }).is_ok());
    }

    #[test]
    fn unreadable_or_empty_ca_files_are_refused() {
        let missing = TlsOptions { ca_files: vec!["/nonexistent/ca.pem".into()], insecure: false };
        assert!(matches!(Tls::new(&missing), Err(TlsError::CaFile { .. })));
        let empty = std::env::temp_dir().join(format!("mino-loadgen-empty-ca-{}.pem", std::process::id()));
        std::fs::write(&empty, "not a certificate\n").expect("write");
        let none = TlsOptions { ca_files: vec![empty.clone()], insecure: false };
        let err = Tls::new(&none).expect_err("refused");
        let _ = std::fs::remove_file(&empty);
        assert!(err.to_string().contains("no usable certificate"), "{err}");
    }
}
