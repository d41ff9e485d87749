//! TLS for the reference server: a fresh self-signed certificate per server (rcgen),
//! rustls with the ring provider, ALPN `h2` then `http/1.1`.

use std::sync::Arc;

use anyhow::Context as _;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

/// The names the certificate is valid for.
pub const CERT_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A generated certificate and the rustls configuration serving it.
pub(crate) struct Tls {
    pub(crate) config: Arc<rustls::ServerConfig>,
    pub(crate) cert_pem: String,
}

impl Tls {
    /// Generates a self-signed certificate for [`CERT_NAMES`] (IP names become IP SANs).
    pub(crate) fn self_signed() -> anyhow::Result<Self> {
        let names: Vec<String> = CERT_NAMES.iter().map(|s| s.to_string()).collect();
        let certified =
            rcgen::generate_simple_self_signed(names).context("generating the TLS certificate")?;
        let key =
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(vec![certified.cert.der().clone()], key)
            .context("TLS certificate")?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            cert_pem: certified.cert.pem(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_is_generated_with_alpn() {
        let tls = Tls::self_signed().unwrap();
        assert!(tls.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(
            tls.config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }
}
