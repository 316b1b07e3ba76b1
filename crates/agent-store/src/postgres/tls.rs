//! TLS to the PostgreSQL server: what `sslmode` and `sslrootcert` ask for, the connector built
//! from them once (at [`PgOptions::new`](super::PgOptions::new)), and readable messages for a
//! handshake that failed.
//!
//! The rule of this runtime: a server certificate is never accepted unverified. So `disable`,
//! `allow` and `prefer` connect without TLS (libpq's `prefer` may use an unverified session; here
//! it means plain), and `require` verifies the chain and the host name like `verify-full`
//! (libpq's `require` checks neither unless a root file exists). `verify-ca` verifies the chain
//! only. The roots are a PEM file (`sslrootcert=FILE`) or the operating system's
//! (`sslrootcert=system`, the default), loaded with `rustls-native-certs`; the crypto is rustls
//! on aws-lc-rs, the provider reqwest already brings in.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Result, StoreError};

/// What `sslmode` asks for (libpq's six values; see the module documentation for how this
/// runtime reads each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// The mode named `value`, or `None` for an unknown one.
    pub(crate) fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "disable" => Self::Disable,
            "allow" => Self::Allow,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// The name as written in a URL.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Allow => "allow",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }

    /// Whether the connection uses TLS (always verified).
    pub(crate) fn uses_tls(self) -> bool {
        matches!(self, Self::Require | Self::VerifyCa | Self::VerifyFull)
    }
}

/// Where the trusted roots come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The operating system's (`sslrootcert=system`).
    System,
    /// A PEM file of one or more CA certificates.
    File(PathBuf),
}

impl Roots {
    /// The roots as a message names them.
    fn describe(&self) -> String {
        match self {
            Self::System => "the system's roots (sslrootcert=system)".to_owned(),
            Self::File(path) => format!("the roots in {}", path.display()),
        }
    }
}

/// How connections are made: plain, or TLS with a verifier built once.
#[derive(Clone)]
pub(crate) enum Connector {
    Plain,
    Tls {
        mode: SslMode,
        roots: Roots,
        make: MakeRustlsConnect,
    },
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Plain => f.write_str("Plain"),
            Self::Tls { mode, roots, .. } => f
                .debug_struct("Tls")
                .field("mode", mode)
                .field("roots", roots)
                .finish_non_exhaustive(),
        }
    }
}

impl Connector {
    /// The connector for `mode` with `roots` (used only when `mode` uses TLS). `shown` is the
    /// URL as messages show it.
    ///
    /// # Errors
    /// [`StoreError::Config`] when the roots cannot be read or hold no certificate.
    pub(crate) fn new(mode: SslMode, roots: Roots, shown: &str) -> Result<Self> {
        if !mode.uses_tls() {
            return Ok(Self::Plain);
        }
        let store = match &roots {
            Roots::File(path) => file_roots(path, shown)?,
            Roots::System => system_roots(shown)?,
        };
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
            .build()
            .map_err(|e| {
                StoreError::Config(format!(
                    "the sessions URL `{shown}`: cannot build a certificate verifier from {} \
                     ({e}); give sslrootcert=FILE with the CA that signed the server's certificate",
                    roots.describe()
                ))
            })?;
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| {
                StoreError::Config(format!(
                    "this build's TLS provider offers no TLS version ({e}); rebuild agent-store \
                     with rustls' aws_lc_rs feature"
                ))
            })?;
        let config = if mode == SslMode::VerifyCa {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
                .with_no_client_auth()
        } else {
            builder.with_webpki_verifier(webpki).with_no_client_auth()
        };
        Ok(Self::Tls {
            mode,
            roots,
            make: MakeRustlsConnect::new(config),
        })
    }

    /// The `sslmode` when TLS is on.
    pub(crate) fn tls_mode(&self) -> Option<SslMode> {
        match self {
            Self::Plain => None,
            Self::Tls { mode, .. } => Some(*mode),
        }
    }

    /// A readable account of a failed connection when TLS is what failed (`None` otherwise):
    /// what was wrong and what to do.
    pub(crate) fn explain(&self, error: &tokio_postgres::Error) -> Option<String> {
        let Self::Tls { mode, roots, .. } = self else {
            return None;
        };
        let mut source: Option<&(dyn std::error::Error + 'static)> =
            std::error::Error::source(error);
        while let Some(s) = source {
            let rustls = s.downcast_ref::<rustls::Error>().or_else(|| {
                s.downcast_ref::<io::Error>()
                    .and_then(io::Error::get_ref)
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            });
            if let Some(e) = rustls {
                return Some(explain_rustls(e, *mode, roots));
            }
            if s.to_string() == "server does not support TLS" {
                return Some(format!(
                    "the server does not offer TLS, and sslmode={} requires it: turn `ssl` on in \
                     its postgresql.conf (with ssl_cert_file and ssl_key_file), or reach it over \
                     loopback, a Unix socket or a tunnel with sslmode=disable",
                    mode.name()
                ));
            }
            source = s.source();
        }
        None
    }
}

/// What a rustls error during the handshake means here.
fn explain_rustls(e: &rustls::Error, mode: SslMode, roots: &Roots) -> String {
    let from = roots.describe();
    match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "the server's certificate is not trusted by {from}: {e}; give sslrootcert=FILE of \
             the CA that signed it"
        ),
        rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected,
            presented,
        }) => format!(
            "the server's certificate does not name the host `{}` (it names {}), and \
             sslmode={} checks the host name: connect by a name the certificate carries, or use \
             sslmode=verify-ca to check only that it chains to {from}",
            expected.to_str(),
            if presented.is_empty() {
                "no host".to_owned()
            } else {
                presented
                    .iter()
                    .map(|n| plain_name(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            mode.name()
        ),
        rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => format!(
            "the server's certificate does not name the host connected to, and sslmode={} \
             checks the host name: connect by a name the certificate carries, or use \
             sslmode=verify-ca to check only that it chains to {from}",
            mode.name()
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => format!("the server's certificate has expired ({e}): the server needs a new one"),
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => format!(
            "the server's certificate is not valid yet ({e}): check this host's clock and the \
             server's certificate"
        ),
        rustls::Error::InvalidCertificate(_) => {
            format!("the server's certificate was refused when checked against {from}: {e}")
        }
        _ => format!("the TLS handshake with the server failed: {e}"),
    }
}

/// A name as rustls presents it (`DnsName("db")`, `IpAddress(10.0.0.1)`) without the wrapper.
fn plain_name(name: &str) -> &str {
    let inner = name
        .strip_prefix("DnsName(")
        .or_else(|| name.strip_prefix("IpAddress("))
        .and_then(|n| n.strip_suffix(')'));
    inner.map_or(name, |n| n.trim_matches('"'))
}

/// The CA certificates in the PEM file at `path`.
fn file_roots(path: &Path, shown: &str) -> Result<RootCertStore> {
    let bytes = std::fs::read(path).map_err(|e| {
        StoreError::Config(format!(
            "the sessions URL `{shown}` names sslrootcert={} which cannot be read ({e}); give the \
             path of a PEM file with the CA certificate(s) that signed the server's certificate, \
             or sslrootcert=system for the operating system's roots",
            path.display()
        ))
    })?;
    let mut store = RootCertStore::empty();
    for (i, cert) in CertificateDer::pem_slice_iter(&bytes).enumerate() {
        let cert = cert.map_err(|e| {
            StoreError::Config(format!(
                "sslrootcert={}: PEM block {} is not readable ({e}); give a PEM file of CA \
                 certificates (-----BEGIN CERTIFICATE-----)",
                path.display(),
                i + 1
            ))
        })?;
        store.add(cert).map_err(|e| {
            StoreError::Config(format!(
                "sslrootcert={}: certificate {} is not a usable CA certificate ({e})",
                path.display(),
                i + 1
            ))
        })?;
    }
    if store.is_empty() {
        return Err(StoreError::Config(format!(
            "sslrootcert={} holds no certificate; give a PEM file with the CA certificate(s) that \
             signed the server's certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        )));
    }
    Ok(store)
}

/// The operating system's roots.
fn system_roots(shown: &str) -> Result<RootCertStore> {
    let found = rustls_native_certs::load_native_certs();
    let mut store = RootCertStore::empty();
    // Individual unparsable roots are skipped, as browsers and curl do.
    let (_added, _skipped) = store.add_parsable_certificates(found.certs);
    if store.is_empty() {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(StoreError::Config(format!(
            "the sessions URL `{shown}` uses the system's CA certificates (sslrootcert=system), \
             and none were found{why}; install them (Debian: ca-certificates) or give \
             sslrootcert=FILE"
        )));
    }
    Ok(store)
}

/// `sslmode=verify-ca`: the chain must lead to a trusted root; the host name is not checked.
/// The wrapped verifier checks the chain before the name, so only a name mismatch is forgiven.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presented_names_lose_their_wrappers() {
        assert_eq!(plain_name("DnsName(\"localhost\")"), "localhost");
        assert_eq!(plain_name("IpAddress(127.0.0.1)"), "127.0.0.1");
        assert_eq!(plain_name("db.example"), "db.example");
    }

    #[test]
    fn modes_parse_and_name_themselves() {
        for name in [
            "disable",
            "allow",
            "prefer",
            "require",
            "verify-ca",
            "verify-full",
        ] {
            let mode = SslMode::parse(name).unwrap();
            assert_eq!(mode.name(), name);
            assert_eq!(
                mode.uses_tls(),
                matches!(name, "require" | "verify-ca" | "verify-full")
            );
        }
        assert_eq!(SslMode::parse("VERIFY-FULL"), None);
    }
}
