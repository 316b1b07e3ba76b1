//! Ed25519 keys: raw 32-byte keys written as base64url (a JWK's `x` and `d`), each with a
//! `keyId`.
//!
//! A key pair is stored as a JWK (`{"kty":"OKP","crv":"Ed25519","kid":ID,"x":PUBLIC,"d":SEED}`)
//! in a file only its owner can read (0600); the public half is the same without `d`. That is
//! the form the TypeScript SDK imports with WebCrypto, so keys move between the two as they are.

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde_json::{Value, json};

use crate::relpath;

/// A key that could not be read, made or written.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// A public key that is not 32 bytes of base64url, or not a valid curve point.
    #[error(
        "public key `{0}` is not an Ed25519 public key: give the 32-byte key as base64url (a JWK's `x`, 43 characters)"
    )]
    BadPublicKey(String),
    /// A key id with characters outside the allowlist.
    #[error("key id `{0}` must {1}")]
    BadKeyId(String, &'static str),
    /// A key file that is not an Ed25519 JWK with `d`.
    #[error(
        "{path}: not an Ed25519 private key ({why}); make one with `agent keys generate --id ID`"
    )]
    BadKeyFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The system's random source failed.
    #[error("cannot get random bytes for a new key: {0}")]
    Random(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The key file exists already.
    #[error("{0} exists already; remove it or pick another --id / --out")]
    Exists(PathBuf),
}

/// Checks a key id: a path component (letters, digits, `. _ - +`), since it names key files.
///
/// # Errors
/// [`KeyError::BadKeyId`].
pub fn check_key_id(id: &str) -> Result<(), KeyError> {
    relpath::check_component(id).map_err(|why| KeyError::BadKeyId(id.to_string(), why))
}

/// A public key with its id.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// The id manifests name it by.
    pub key_id: String,
    key: VerifyingKey,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({}={})", self.key_id, self.to_base64url())
    }
}

impl PublicKey {
    /// Reads a base64url (or standard base64) 32-byte key.
    ///
    /// # Errors
    /// [`KeyError::BadPublicKey`] or [`KeyError::BadKeyId`].
    pub fn from_base64url(key_id: &str, text: &str) -> Result<Self, KeyError> {
        check_key_id(key_id)?;
        let trimmed = text.trim().trim_end_matches('=');
        let bytes = URL_SAFE_NO_PAD
            .decode(trimmed)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(trimmed))
            .map_err(|_| KeyError::BadPublicKey(text.to_string()))?;
        let raw: [u8; 32] = bytes
            .try_into()
            .map_err(|_| KeyError::BadPublicKey(text.to_string()))?;
        let key =
            VerifyingKey::from_bytes(&raw).map_err(|_| KeyError::BadPublicKey(text.to_string()))?;
        Ok(Self {
            key_id: key_id.to_string(),
            key,
        })
    }

    /// Reads `ID=BASE64URL` (the CLI's `--key` form).
    ///
    /// # Errors
    /// As [`PublicKey::from_base64url`], or a missing `=`.
    pub fn from_assignment(text: &str) -> Result<Self, KeyError> {
        match text.split_once('=') {
            Some((id, key)) => Self::from_base64url(id, key),
            None => Err(KeyError::BadKeyId(
                text.to_string(),
                "be written ID=BASE64URL (for example agent-dev=ZzLClo23…)",
            )),
        }
    }

    /// The key as base64url without padding.
    pub fn to_base64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.key.as_bytes())
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.key.as_bytes()
    }

    /// The public JWK.
    pub fn to_jwk(&self) -> Value {
        json!({"kty": "OKP", "crv": "Ed25519", "kid": self.key_id, "x": self.to_base64url()})
    }

    /// Whether `signature` (standard base64 of 64 bytes) is this key's signature of `message`
    /// (strict verification: no small-order keys, canonical `S`).
    pub fn verifies(&self, message: &[u8], signature_base64: &str) -> bool {
        let Ok(bytes) = STANDARD.decode(signature_base64.trim()) else {
            return false;
        };
        let Ok(raw) = <[u8; 64]>::try_from(bytes.as_slice()) else {
            return false;
        };
        self.key
            .verify_strict(message, &Signature::from_bytes(&raw))
            .is_ok()
    }
}

/// A private key with its id.
pub struct KeyPair {
    /// The id manifests name it by.
    pub key_id: String,
    key: SigningKey,
}

impl fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyPair({}, ****)", self.key_id)
    }
}

impl KeyPair {
    /// A new random key pair.
    ///
    /// # Errors
    /// A bad id or a failing random source.
    pub fn generate(key_id: &str) -> Result<Self, KeyError> {
        check_key_id(key_id)?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(Self::from_seed(key_id, &seed))
    }

    /// The key pair of a 32-byte seed (RFC 8032's "secret key").
    pub fn from_seed(key_id: &str, seed: &[u8; 32]) -> Self {
        Self {
            key_id: key_id.to_string(),
            key: SigningKey::from_bytes(seed),
        }
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            key_id: self.key_id.clone(),
            key: self.key.verifying_key(),
        }
    }

    /// Signs `message`; the signature as standard base64 (a manifest's `sigBase64`).
    pub fn sign_base64(&self, message: &[u8]) -> String {
        STANDARD.encode(self.key.sign(message).to_bytes())
    }

    /// The raw 64-byte signature of `message`.
    pub fn sign_raw(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }

    /// The private JWK (holds the secret: write it only to a 0600 file).
    pub fn to_private_jwk(&self) -> Value {
        json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "kid": self.key_id,
            "alg": "Ed25519",
            "x": self.public().to_base64url(),
            "d": URL_SAFE_NO_PAD.encode(self.key.as_bytes()),
        })
    }

    /// Reads a private JWK file.
    ///
    /// # Errors
    /// [`KeyError::Io`] or [`KeyError::BadKeyFile`].
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |why: &str| KeyError::BadKeyFile {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
        if value.get("kty").and_then(Value::as_str) != Some("OKP")
            || value.get("crv").and_then(Value::as_str) != Some("Ed25519")
        {
            return Err(bad("`kty` must be OKP and `crv` Ed25519"));
        }
        let kid = value
            .get("kid")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`kid` (the key id) is missing"))?;
        check_key_id(kid)?;
        let d = value
            .get("d")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`d` (the private key) is missing: this is a public key"))?;
        let seed: [u8; 32] = URL_SAFE_NO_PAD
            .decode(d.trim_end_matches('='))
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("`d` must be 32 bytes of base64url"))?;
        let pair = Self::from_seed(kid, &seed);
        if let Some(x) = value.get("x").and_then(Value::as_str)
            && x.trim_end_matches('=') != pair.public().to_base64url()
        {
            return Err(bad("`x` does not match `d`"));
        }
        Ok(pair)
    }

    /// Writes the private JWK to `path` (created 0600, never overwritten).
    ///
    /// # Errors
    /// [`KeyError::Exists`] or [`KeyError::Io`].
    pub fn save(&self, path: &Path) -> Result<(), KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                KeyError::Exists(path.to_path_buf())
            } else {
                io(e)
            }
        })?;
        let mut text = serde_json::to_string_pretty(&self.to_private_jwk()).unwrap_or_default();
        text.push('\n');
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 8032 §7.1, tests 1 to 3 (Ed25519): secret key, public key, message, signature.
    const RFC8032: [(&str, &str, &str, &str); 3] = [
        (
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        ),
        (
            "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            "72",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
        ),
        (
            "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
            "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
            "af82",
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
        ),
    ];

    #[test]
    fn rfc8032_vectors_sign_and_verify() {
        for (secret, public, message, signature) in RFC8032 {
            let seed: [u8; 32] = unhex(secret).try_into().unwrap();
            let pair = KeyPair::from_seed("v", &seed);
            assert_eq!(pair.public().as_bytes().to_vec(), unhex(public));
            let message = unhex(message);
            assert_eq!(pair.sign_raw(&message).to_vec(), unhex(signature));
            let b64 = STANDARD.encode(unhex(signature));
            assert!(pair.public().verifies(&message, &b64));
            let mut other = message.clone();
            other.push(0);
            assert!(!pair.public().verifies(&other, &b64));
        }
    }

    #[test]
    fn jwk_round_trip_and_public_forms() {
        let dir = tempfile::tempdir().unwrap();
        let pair = KeyPair::generate("dev-1").unwrap();
        let path = dir.path().join("dev-1.jwk");
        pair.save(&path).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        assert!(matches!(pair.save(&path), Err(KeyError::Exists(_))));
        let loaded = KeyPair::load(&path).unwrap();
        assert_eq!(loaded.public(), pair.public());
        let x = pair.public().to_base64url();
        assert_eq!(x.len(), 43);
        let assigned = PublicKey::from_assignment(&format!("dev-1={x}")).unwrap();
        assert_eq!(assigned, pair.public());
        assert!(PublicKey::from_base64url("k", "AAAA").is_err());
        assert!(PublicKey::from_base64url("a/b", &x).is_err());
        assert!(PublicKey::from_assignment(&x).is_err());
        assert!(!format!("{pair:?}").contains(&URL_SAFE_NO_PAD.encode(pair.key.as_bytes())));
    }

    #[test]
    fn a_public_jwk_is_not_a_key_pair() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pub.jwk");
        let pair = KeyPair::generate("p").unwrap();
        std::fs::write(&path, pair.public().to_jwk().to_string()).unwrap();
        let err = KeyPair::load(&path).unwrap_err().to_string();
        assert!(err.contains("`d` (the private key) is missing"), "{err}");
    }
}
