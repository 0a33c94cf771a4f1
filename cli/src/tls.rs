//! TLS for `--url https://…`: whom the CLI trusts.
//!
//! rustls with the ring provider, trusting the Mozilla root certificates that `webpki-roots`
//! bundles into the binary, plus the certificates of the PEM file named by `SSL_CERT_FILE` when
//! it is set (added to the bundled roots, not instead of them as OpenSSL does; `SSL_CERT_DIR` is
//! not read). The platform's trust store is not consulted: its verifier links Security and
//! CoreFoundation on macOS, which the cross-built packages (linked by zig, without Apple's SDK)
//! cannot link, and one trust source everywhere keeps the CLI behaving alike on every platform.
//!
//! `SSL_CERT_FILE` fails closed: a file that cannot be read, holds a malformed PEM section or no
//! certificate usable as a trust anchor stops the command (`invalid_argument`) instead of being
//! ignored. Certificates webpki cannot use as an anchor (as some old roots in system bundles)
//! are skipped, as rustls-native-certs does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// The environment variable naming a PEM bundle of extra trust anchors.
pub const SSL_CERT_FILE: &str = "SSL_CERT_FILE";

/// Why the extra trust anchors could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum TrustError {
    /// The file could not be read, or holds a malformed PEM section.
    Read {
        /// The file, as `SSL_CERT_FILE` names it.
        path: PathBuf,
        /// What went wrong.
        error: rustls::pki_types::pem::Error,
    },
    /// The file holds no certificate usable as a trust anchor.
    NoCertificate {
        /// The file, as `SSL_CERT_FILE` names it.
        path: PathBuf,
    },
    /// rustls refused the provider's protocol versions (not expected with ring).
    Config(rustls::Error),
}

impl std::fmt::Display for TrustError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrustError::Read { path, error } => write!(f, "{SSL_CERT_FILE} \"{}\": {}", label(path), read_error(error)),
            TrustError::NoCertificate { path } => {
                write!(f, "{SSL_CERT_FILE} \"{}\" holds no usable PEM certificate", label(path))
            }
            TrustError::Config(e) => write!(f, "TLS configuration: {e}"),
        }
    }
}

impl std::error::Error for TrustError {}

fn label(path: &Path) -> String {
    mcplens::sanitize::label(&path.to_string_lossy()).into_owned()
}

/// The I/O error alone (the PEM error's own text for it is its `Debug`).
fn read_error(error: &rustls::pki_types::pem::Error) -> String {
    match error {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// The file `SSL_CERT_FILE` names, if it is set and not empty.
pub fn ssl_cert_file() -> Option<PathBuf> {
    std::env::var_os(SSL_CERT_FILE).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The client configuration: the bundled roots plus the certificates of `extra` (a PEM file).
pub fn client_config(extra: Option<&Path>) -> Result<rustls::ClientConfig, TrustError> {
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = extra {
        let read = |error| TrustError::Read { path: path.to_owned(), error };
        let certificates =
            CertificateDer::pem_file_iter(path).map_err(read)?.collect::<Result<Vec<_>, _>>().map_err(read)?;
        let (added, _unusable) = roots.add_parsable_certificates(certificates);
        if added == 0 {
            return Err(TrustError::NoCertificate { path: path.to_owned() });
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TrustError::Config)?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("mcplens-tls-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        path
    }

    #[test]
    fn bundled_roots_without_extra() {
        assert!(client_config(None).is_ok());
    }

    #[test]
    fn extra_file_fails_closed() {
        let missing = Path::new("/nonexistent/ca.pem");
        let e = client_config(Some(missing)).unwrap_err();
        assert!(matches!(e, TrustError::Read { .. }), "{e:?}");
        assert!(e.to_string().starts_with("SSL_CERT_FILE \"/nonexistent/ca.pem\": "), "{e}");

        let empty = temp_file("empty.pem", b"no PEM here\n");
        let e = client_config(Some(&empty)).unwrap_err();
        assert_eq!(e.to_string(), format!("SSL_CERT_FILE \"{}\" holds no usable PEM certificate", empty.display()));

        let broken = temp_file("broken.pem", b"-----BEGIN CERTIFICATE-----\nAAAA\n");
        let e = client_config(Some(&broken)).unwrap_err();
        assert!(matches!(e, TrustError::Read { .. }), "{e:?}");

        // A certificate section that is not a certificate: skipped, so none is usable.
        let junk = temp_file("junk.pem", b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        let e = client_config(Some(&junk)).unwrap_err();
        assert!(matches!(e, TrustError::NoCertificate { .. }), "{e:?}");

        for path in [empty, broken, junk] {
            let _ = std::fs::remove_file(path);
        }
    }
}
