//! Verification: a manifest's signature under a registry's policy, and each asset's bytes
//! against its sha256 and size. Each way to fail has its own error.

use crate::digest::sha256_hex;
use crate::keys::PublicKey;
use crate::manifest::{Asset, Manifest};
use crate::trust::RegistryPolicy;

/// Why a bundle failed verification.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The registry requires a signature and the manifest has none.
    #[error("manifest signature required: {registry} is {kind} and {name}@{version} is not signed")]
    MissingSignature {
        /// The registry.
        registry: String,
        /// `an official registry` or `a registry with configured keys`.
        kind: &'static str,
        /// The bundle.
        name: String,
        /// Its version.
        version: String,
    },
    /// The signature names a key that is not trusted for this registry.
    #[error(
        "unknown signature keyId `{key_id}`: no key by that id is trusted for {registry} (trusted here: {trusted}); trust it with `agent keys trust {key_id}=BASE64URL --registry REGISTRY` if you know its owner"
    )]
    UnknownKeyId {
        /// The id the manifest names.
        key_id: String,
        /// The registry.
        registry: String,
        /// The ids that would count, comma-separated, or `none`.
        trusted: String,
    },
    /// The signature's algorithm is not ed25519.
    #[error("unsupported signature algorithm `{0}`: only ed25519 is accepted")]
    UnsupportedAlgorithm(String),
    /// The signature does not verify.
    #[error(
        "invalid manifest signature: key `{key_id}` did not sign this manifest (it was changed after signing, or signed by another key)"
    )]
    BadSignature {
        /// The key tried.
        key_id: String,
    },
    /// An asset's bytes hash to something else.
    #[error(
        "sha256 mismatch for `{path}`: the manifest says {expected}, the bytes hash to {actual}"
    )]
    HashMismatch {
        /// The asset.
        path: String,
        /// From the manifest.
        expected: String,
        /// Of the bytes.
        actual: String,
    },
    /// An asset has another length.
    #[error(
        "size mismatch for `{path}`: the manifest says {expected} bytes, the file has {actual}"
    )]
    SizeMismatch {
        /// The asset.
        path: String,
        /// From the manifest.
        expected: u64,
        /// Of the bytes.
        actual: u64,
    },
}

/// How a manifest passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignatureStatus {
    /// Signed by this trusted key.
    Verified {
        /// The key.
        key_id: String,
    },
    /// Not checked: the registry requires no signature (third-party, no keys configured).
    NotRequired {
        /// Whether the manifest carried a signature anyway (unverifiable here).
        present: bool,
    },
}

/// Checks `manifest`'s signature under `policy`.
///
/// # Errors
/// [`VerifyError::MissingSignature`], [`VerifyError::UnsupportedAlgorithm`],
/// [`VerifyError::UnknownKeyId`] or [`VerifyError::BadSignature`].
pub fn verify_manifest(
    manifest: &Manifest,
    policy: &RegistryPolicy,
) -> Result<SignatureStatus, VerifyError> {
    if !policy.require_signature {
        return Ok(SignatureStatus::NotRequired {
            present: manifest.signature.is_some(),
        });
    }
    if manifest.signature.is_none() {
        return Err(VerifyError::MissingSignature {
            registry: policy.registry.clone(),
            kind: if policy.official {
                "an official registry"
            } else {
                "a registry with configured keys"
            },
            name: manifest.name.clone(),
            version: manifest.version.clone(),
        });
    }
    verify_signature_with(manifest, &policy.keys, &policy.registry)
}

/// Checks `manifest`'s signature against `keys` (whatever the registry): the signature must be
/// there, be ed25519, name one of `keys` and verify.
///
/// # Errors
/// As [`verify_manifest`]; `registry` only names the source in messages.
pub fn verify_signature_with(
    manifest: &Manifest,
    keys: &[PublicKey],
    registry: &str,
) -> Result<SignatureStatus, VerifyError> {
    let Some(signature) = &manifest.signature else {
        return Err(VerifyError::MissingSignature {
            registry: registry.to_string(),
            kind: "a source whose keys were given",
            name: manifest.name.clone(),
            version: manifest.version.clone(),
        });
    };
    if signature.alg != "ed25519" {
        return Err(VerifyError::UnsupportedAlgorithm(signature.alg.clone()));
    }
    let candidates: Vec<&PublicKey> = keys
        .iter()
        .filter(|k| k.key_id == signature.key_id)
        .collect();
    if candidates.is_empty() {
        let mut ids: Vec<&str> = keys.iter().map(|k| k.key_id.as_str()).collect();
        ids.dedup();
        return Err(VerifyError::UnknownKeyId {
            key_id: signature.key_id.clone(),
            registry: registry.to_string(),
            trusted: if ids.is_empty() {
                "none".into()
            } else {
                ids.join(", ")
            },
        });
    }
    let sorted = manifest.signed_payload();
    let listed = manifest.payload_as_listed();
    for key in candidates {
        if key.verifies(&sorted, &signature.sig_base64)
            || (listed != sorted && key.verifies(&listed, &signature.sig_base64))
        {
            return Ok(SignatureStatus::Verified {
                key_id: key.key_id.clone(),
            });
        }
    }
    Err(VerifyError::BadSignature {
        key_id: signature.key_id.clone(),
    })
}

/// Checks `bytes` against `asset`'s size, then its sha256.
///
/// # Errors
/// [`VerifyError::SizeMismatch`] or [`VerifyError::HashMismatch`].
pub fn verify_asset(asset: &Asset, bytes: &[u8]) -> Result<(), VerifyError> {
    check_digest(asset, &sha256_hex(bytes), bytes.len() as u64)
}

/// Checks a digest and length already computed (streamed downloads, files) against `asset`.
///
/// # Errors
/// As [`verify_asset`].
pub fn check_digest(asset: &Asset, sha256: &str, size: u64) -> Result<(), VerifyError> {
    if size != asset.size {
        return Err(VerifyError::SizeMismatch {
            path: asset.path.clone(),
            expected: asset.size,
            actual: size,
        });
    }
    if !sha256.eq_ignore_ascii_case(&asset.sha256) {
        return Err(VerifyError::HashMismatch {
            path: asset.path.clone(),
            expected: asset.sha256.clone(),
            actual: sha256.to_string(),
        });
    }
    Ok(())
}

/// Signs `manifest` with `key`: the manifest with its `signature` block set.
pub fn sign_manifest(manifest: &Manifest, key: &crate::keys::KeyPair) -> Manifest {
    let sig = key.sign_base64(&manifest.signed_payload());
    manifest.with_signature(crate::manifest::SignatureBlock {
        key_id: key.key_id.clone(),
        alg: "ed25519".into(),
        sig_base64: sig,
    })
}
