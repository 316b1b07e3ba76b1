//! The trust store: which public keys are trusted, and for which registries.
//!
//! Two sources, merged: keys built into this crate ([`BUILTIN_KEYS`]) and the user's
//! `$AGENT_HOME/keys/trusted.json`:
//!
//! ```json
//! { "keys": [
//!     { "keyId": "agent-dev-local", "alg": "ed25519", "publicKey": "<base64url, 32 bytes>",
//!       "officialFor": ["/home/me/src/agent/target/bundles/registry"],
//!       "registries": [] }
//! ] }
//! ```
//!
//! - A registry is **official** when a built-in key or a key's `officialFor` names it. An official
//!   registry's manifests must carry a valid signature by a key official for it, and every
//!   asset's sha256 and size must match.
//! - Any other registry is **third-party**: sha256 and size are always checked; a signature is
//!   required only when keys are configured for it (`registries`), and then it must be by one of
//!   those keys.
//!
//! Registries are named by [`registry_id`]: an http(s) URL without trailing `/`, or an absolute
//! directory path.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::keys::{KeyError, PublicKey};

/// A key built into this crate, official for the listed registries.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinKey {
    /// Its id.
    pub key_id: &'static str,
    /// The 32-byte public key, base64url.
    pub public_key: &'static str,
    /// The registries it is official for (as [`registry_id`] writes them).
    pub official_for: &'static [&'static str],
}

/// The keys this build trusts without configuration. The project hosts no public registry
/// yet, so the list is empty: official registries come from the user's trust store (the
/// registry `cargo xtask bundles` lays out is made official for the development key it
/// generates). A release build adds its release key and registry URL here.
pub const BUILTIN_KEYS: &[BuiltinKey] = &[];

/// One entry of `trusted.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedKey {
    /// The key id manifests name.
    pub key_id: String,
    /// Always `ed25519`.
    #[serde(default = "ed25519")]
    pub alg: String,
    /// The 32-byte public key, base64url.
    pub public_key: String,
    /// Registries this key is an official signer for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub official_for: Vec<String>,
    /// Third-party registries whose manifests must be signed by this key (or another one
    /// configured for them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registries: Vec<String>,
}

fn ed25519() -> String {
    "ed25519".into()
}

/// The file's shape.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustFile {
    /// The trusted keys.
    #[serde(default)]
    pub keys: Vec<TrustedKey>,
}

/// A trust store that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a trust store.
    #[error(
        "{path}: not a trust store ({why}); expected {{\"keys\": [{{\"keyId\", \"publicKey\", \"officialFor\", \"registries\"}}]}}"
    )]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A key in it is invalid.
    #[error("{path}: {source}")]
    Key {
        /// The file.
        path: PathBuf,
        /// The key's problem.
        source: KeyError,
    },
}

/// What a registry requires and which keys may sign for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryPolicy {
    /// The registry's id.
    pub registry: String,
    /// Whether it is official.
    pub official: bool,
    /// Whether a manifest must carry a valid signature.
    pub require_signature: bool,
    /// The keys whose signatures count.
    pub keys: Vec<PublicKey>,
}

/// The merged trust store.
#[derive(Clone, Debug, Default)]
pub struct TrustStore {
    path: Option<PathBuf>,
    file: TrustFile,
}

impl TrustStore {
    /// A store holding only the built-in keys (nothing is read or written).
    pub fn builtin_only() -> Self {
        Self::default()
    }

    /// Reads `path` (a missing file is an empty store).
    ///
    /// # Errors
    /// A file that cannot be read or is not a trust store, or holds a bad key.
    pub fn load(path: &Path) -> Result<Self, TrustError> {
        let file = match std::fs::read(path) {
            Ok(bytes) => {
                let file: TrustFile =
                    serde_json::from_slice(&bytes).map_err(|e| TrustError::Format {
                        path: path.to_path_buf(),
                        why: e.to_string(),
                    })?;
                for key in &file.keys {
                    if key.alg != "ed25519" {
                        return Err(TrustError::Format {
                            path: path.to_path_buf(),
                            why: format!(
                                "key `{}` has alg `{}`; only ed25519 is supported",
                                key.key_id, key.alg
                            ),
                        });
                    }
                    PublicKey::from_base64url(&key.key_id, &key.public_key).map_err(|source| {
                        TrustError::Key {
                            path: path.to_path_buf(),
                            source,
                        }
                    })?;
                }
                file
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => TrustFile::default(),
            Err(source) => {
                return Err(TrustError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Ok(Self {
            path: Some(path.to_path_buf()),
            file,
        })
    }

    /// The user's entries (not the built-in ones).
    pub fn entries(&self) -> &[TrustedKey] {
        &self.file.keys
    }

    /// Adds or replaces a key (matched by id), merging its registries with the old entry's.
    pub fn trust(&mut self, key: &PublicKey, official_for: &[String], registries: &[String]) {
        let entry = match self.file.keys.iter_mut().find(|k| k.key_id == key.key_id) {
            Some(existing) => {
                if existing.public_key != key.to_base64url() {
                    existing.public_key = key.to_base64url();
                    existing.official_for.clear();
                    existing.registries.clear();
                }
                existing
            }
            None => {
                self.file.keys.push(TrustedKey {
                    key_id: key.key_id.clone(),
                    alg: ed25519(),
                    public_key: key.to_base64url(),
                    official_for: Vec::new(),
                    registries: Vec::new(),
                });
                let last = self.file.keys.len() - 1;
                &mut self.file.keys[last]
            }
        };
        for r in official_for {
            if !entry.official_for.contains(r) {
                entry.official_for.push(r.clone());
            }
        }
        for r in registries {
            if !entry.registries.contains(r) {
                entry.registries.push(r.clone());
            }
        }
    }

    /// Removes a key; whether it was there.
    pub fn untrust(&mut self, key_id: &str) -> bool {
        let before = self.file.keys.len();
        self.file.keys.retain(|k| k.key_id != key_id);
        before != self.file.keys.len()
    }

    /// Writes the user's entries back (atomically: temp file + rename).
    ///
    /// # Errors
    /// When the store was not loaded from a file, or writing fails.
    pub fn save(&self) -> Result<(), TrustError> {
        let Some(path) = &self.path else {
            return Err(TrustError::Format {
                path: PathBuf::from("(built-in)"),
                why: "the built-in trust store cannot be saved".into(),
            });
        };
        let io = |source| TrustError::Io {
            path: path.clone(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut text = serde_json::to_string_pretty(&self.file).unwrap_or_default();
        text.push('\n');
        let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        std::fs::write(tmp.path(), text).map_err(io)?;
        tmp.persist(path).map_err(|e| io(e.error))?;
        Ok(())
    }

    /// Every key, built-in ones first.
    pub fn all_keys(&self) -> Vec<PublicKey> {
        let mut keys: Vec<PublicKey> = BUILTIN_KEYS
            .iter()
            .filter_map(|k| PublicKey::from_base64url(k.key_id, k.public_key).ok())
            .collect();
        keys.extend(
            self.file
                .keys
                .iter()
                .filter_map(|k| PublicKey::from_base64url(&k.key_id, &k.public_key).ok()),
        );
        keys
    }

    /// What `registry` (a [`registry_id`]) requires.
    pub fn policy_for(&self, registry: &str) -> RegistryPolicy {
        let mut official_keys: Vec<PublicKey> = BUILTIN_KEYS
            .iter()
            .filter(|k| k.official_for.contains(&registry))
            .filter_map(|k| PublicKey::from_base64url(k.key_id, k.public_key).ok())
            .collect();
        official_keys.extend(
            self.file
                .keys
                .iter()
                .filter(|k| k.official_for.iter().any(|r| r == registry))
                .filter_map(|k| PublicKey::from_base64url(&k.key_id, &k.public_key).ok()),
        );
        if !official_keys.is_empty() {
            return RegistryPolicy {
                registry: registry.to_string(),
                official: true,
                require_signature: true,
                keys: official_keys,
            };
        }
        let keys: Vec<PublicKey> = self
            .file
            .keys
            .iter()
            .filter(|k| k.registries.iter().any(|r| r == registry))
            .filter_map(|k| PublicKey::from_base64url(&k.key_id, &k.public_key).ok())
            .collect();
        RegistryPolicy {
            registry: registry.to_string(),
            official: false,
            require_signature: !keys.is_empty(),
            keys,
        }
    }
}

/// The id of a registry base: an http(s) URL with its scheme and host lowercased and no
/// trailing `/`, or an absolute directory path (`.` and `..` removed, symlinks of its existing
/// part resolved, so a registry trusted before it was built keeps its id).
pub fn registry_id(base: &str) -> String {
    let trimmed = base.trim();
    if is_http(trimmed) {
        if let Ok(url) = url::Url::parse(trimmed) {
            return url.as_str().trim_end_matches('/').to_string();
        }
        return trimmed.trim_end_matches('/').to_string();
    }
    let path = trimmed.strip_prefix("file://").unwrap_or(trimmed);
    let path = Path::new(path);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let absolute = agent_core::paths::normalize(&absolute);
    let resolved = agent_core::paths::resolve(&absolute).unwrap_or(absolute);
    resolved.to_string_lossy().trim_end_matches('/').to_string()
}

/// Whether `base` is an http(s) URL (scheme in any case).
pub fn is_http(base: &str) -> bool {
    let lower = base.get(..8).unwrap_or(base).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use crate::keys::KeyPair;

    #[test]
    fn official_and_third_party_policies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trusted.json");
        let mut store = TrustStore::load(&path).unwrap();
        let official = KeyPair::generate("off").unwrap().public();
        let third = KeyPair::generate("third").unwrap().public();
        store.trust(&official, &["https://reg.example".into()], &[]);
        store.trust(&third, &[], &["/srv/reg".into()]);
        store.save().unwrap();
        let store = TrustStore::load(&path).unwrap();

        let p = store.policy_for("https://reg.example");
        assert!(p.official && p.require_signature);
        assert_eq!(p.keys, vec![official.clone()]);

        let p = store.policy_for("/srv/reg");
        assert!(!p.official && p.require_signature);
        assert_eq!(p.keys, vec![third]);

        let p = store.policy_for("/elsewhere");
        assert!(!p.official && !p.require_signature && p.keys.is_empty());

        let mut store = store;
        assert!(store.untrust("off"));
        assert!(!store.untrust("off"));
        assert!(!store.policy_for("https://reg.example").official);
    }

    #[test]
    fn a_bad_store_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trusted.json");
        std::fs::write(&path, r#"{"keys":[{"keyId":"k","publicKey":"nope"}]}"#).unwrap();
        let err = TrustStore::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("trusted.json") && err.contains("not an Ed25519 public key"),
            "{err}"
        );
        std::fs::write(&path, "[").unwrap();
        assert!(
            TrustStore::load(&path)
                .unwrap_err()
                .to_string()
                .contains("not a trust store")
        );
    }

    #[test]
    fn registry_ids_are_normalised() {
        assert_eq!(
            registry_id("HTTPS://Reg.Example/base/"),
            "https://reg.example/base"
        );
        let dir = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        let with_slash = format!("{}/", dir.path().display());
        assert_eq!(registry_id(&with_slash), canonical.to_string_lossy());
        assert_eq!(registry_id("/nowhere/./a/../reg/"), "/nowhere/reg");
    }
}
