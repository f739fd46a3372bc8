//! https for the replay server: a self-signed certificate for 127.0.0.1,
//! made at start (nothing secret is stored anywhere), served with rustls.

use std::io;
use std::sync::Arc;

/// The server's TLS settings and the certificate clients must trust.
pub struct Identity {
    /// rustls' server settings.
    pub config: Arc<rustls::ServerConfig>,
    /// The certificate, PEM (a kubeconfig's `certificate-authority-data`).
    pub certificate_pem: String,
}

impl Identity {
    /// A fresh certificate for `127.0.0.1` and `localhost`.
    pub fn new() -> io::Result<Self> {
        let error = |e: &dyn std::fmt::Display| io::Error::other(format!("replay TLS: {e}"));
        let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        let rcgen::CertifiedKey { cert, key_pair } =
            rcgen::generate_simple_self_signed(names).map_err(|e| error(&e))?;
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(key_pair.serialize_der());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| error(&e))?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key.into())
            .map_err(|e| error(&e))?;
        Ok(Self {
            config: Arc::new(config),
            certificate_pem: cert.pem(),
        })
    }
}
