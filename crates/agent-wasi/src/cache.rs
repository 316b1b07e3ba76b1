//! The on-disk cache of compiled modules.
//!
//! One file per module and engine configuration, `<module-sha256>-<engine-hash>.cwasm`, where
//! `<engine-hash>` is a digest of [`wasmtime::Engine::precompile_compatibility_hash`] (the
//! wasmtime version and every setting that changes compiled code), so a wasmtime upgrade or a
//! different configuration misses the cache and recompiles instead of loading stale code.
//!
//! A file is `MAGIC`, a 32-byte sha256 digest, then the precompiled module (`.cwasm`) as
//! [`wasmtime::Module::serialize`] wrote it. The digest covers the module's sha256, the engine hash
//! and the payload, so a file that was truncated, corrupted or copied under another module's
//! name fails the check, is removed and the module is compiled again. One file rather than a
//! `.cwasm` plus a sidecar, so that one rename publishes the payload and its digest together.
//! Files are written to a temporary name in the same directory and renamed into place (atomic on
//! POSIX), so a reader never sees half a file.

use std::fs::{self, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agent_bundles::digest::hex;
use sha2::{Digest, Sha256};
use wasmtime::Engine;

use crate::error::RuntimeError;

/// First bytes of every cache file: format name and version.
const MAGIC: &[u8; 16] = b"agent-wasi-cw\0\0\x01";
const DIGEST_LEN: usize = 32;
const HEADER_LEN: usize = MAGIC.len() + DIGEST_LEN;

/// The cache directory of a [`crate::Runtime`].
#[derive(Debug)]
pub(crate) struct DiskCache {
    dir: PathBuf,
    /// Hex digest of the engine's compatibility hash (first 16 bytes).
    engine_hash: String,
}

/// What looking a module up in the cache found.
pub(crate) enum Lookup {
    /// A verified payload to deserialize.
    Hit(Vec<u8>),
    /// No file.
    Miss,
    /// A file that failed verification (it has been removed); the reason, for the log.
    Rejected(String),
}

impl DiskCache {
    /// Opens (creating it with mode 0700 if needed) the cache directory. Refuses a directory
    /// that other users may write to: whoever can write the cache can choose the machine code
    /// this process runs.
    pub(crate) fn open(dir: &Path, engine: &Engine) -> Result<Self, RuntimeError> {
        create_private_dir(dir).map_err(|source| RuntimeError::CacheDir {
            path: dir.to_owned(),
            source,
        })?;
        check_not_shared(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            engine_hash: engine_hash(engine),
        })
    }

    /// The cache file of a module.
    pub(crate) fn path(&self, module_sha256: &str) -> PathBuf {
        self.dir
            .join(format!("{module_sha256}-{}.cwasm", self.engine_hash))
    }

    /// Reads and verifies the cached compiled module for `module_sha256`.
    pub(crate) fn lookup(&self, module_sha256: &str) -> Lookup {
        let path = self.path(module_sha256);
        let file = match fs::read(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Lookup::Miss,
            Err(err) => return Lookup::Rejected(format!("cannot read {}: {err}", path.display())),
        };
        match self.verify(module_sha256, file) {
            Ok(payload) => Lookup::Hit(payload),
            Err(reason) => {
                // A bad file would fail again next time; remove it (the recompiled module
                // replaces it anyway).
                let _ = fs::remove_file(&path);
                Lookup::Rejected(format!("{}: {reason}", path.display()))
            }
        }
    }

    fn verify(&self, module_sha256: &str, mut file: Vec<u8>) -> Result<Vec<u8>, &'static str> {
        if file.len() < HEADER_LEN || !file.starts_with(MAGIC) {
            return Err("not a cache file of this format (bad header)");
        }
        let expected = self.digest(module_sha256, &file[HEADER_LEN..]);
        if file[MAGIC.len()..HEADER_LEN] != expected[..] {
            return Err("digest mismatch (corrupted, truncated or tampered)");
        }
        file.drain(..HEADER_LEN);
        Ok(file)
    }

    fn digest(&self, module_sha256: &str, payload: &[u8]) -> [u8; DIGEST_LEN] {
        let mut hasher = Sha256::new();
        hasher.update(module_sha256.as_bytes());
        hasher.update(b"\0");
        hasher.update(self.engine_hash.as_bytes());
        hasher.update(b"\0");
        hasher.update(payload);
        hasher.finalize().into()
    }

    /// Stores a compiled module: writes a temporary file in the cache directory, then renames it
    /// over the final name.
    pub(crate) fn store(&self, module_sha256: &str, payload: &[u8]) -> io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = self.path(module_sha256);
        let tmp = self.dir.join(format!(
            ".{module_sha256}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            file.write_all(MAGIC)?;
            file.write_all(&self.digest(module_sha256, payload))?;
            file.write_all(payload)?;
            file.flush()?;
            drop(file);
            fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// The first 16 bytes, in hex, of a sha256 over the engine's compatibility hash.
pub(crate) fn engine_hash(engine: &Engine) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hex(&hasher.0.finalize()[..16])
}

/// Feeds [`Hash`] output into sha256: stable across runs and Rust versions, unlike
/// `DefaultHasher`, so the cache key of an unchanged engine stays the same.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_le_bytes(first)
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(unix)]
fn check_not_shared(dir: &Path) -> Result<(), RuntimeError> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(dir).map_err(|source| RuntimeError::CacheDir {
        path: dir.to_owned(),
        source,
    })?;
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(RuntimeError::CacheDirShared {
            path: dir.to_owned(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_not_shared(_dir: &Path) -> Result<(), RuntimeError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    #[test]
    fn hex_is_lowercase_two_digits_per_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
    }

    #[test]
    fn round_trip_and_rejections() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::open(&dir.path().join("cache"), &Engine::default()).unwrap();
        let sha = "a".repeat(64);
        assert!(matches!(cache.lookup(&sha), Lookup::Miss));
        cache.store(&sha, b"payload").unwrap();
        let Lookup::Hit(payload) = cache.lookup(&sha) else {
            panic!("expected a hit")
        };
        assert_eq!(payload, b"payload");

        // Flip one payload byte: rejected and removed.
        let path = cache.path(&sha);
        let mut file = fs::read(&path).unwrap();
        *file.last_mut().unwrap() ^= 1;
        fs::write(&path, &file).unwrap();
        assert!(matches!(cache.lookup(&sha), Lookup::Rejected(_)));
        assert!(!path.exists());

        // A valid file of another module copied under this module's name: rejected.
        let other = "b".repeat(64);
        cache.store(&other, b"payload").unwrap();
        fs::copy(cache.path(&other), &path).unwrap();
        assert!(matches!(cache.lookup(&sha), Lookup::Rejected(_)));
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let err = DiskCache::open(dir.path(), &Engine::default()).unwrap_err();
        assert!(
            matches!(err, RuntimeError::CacheDirShared { mode: 0o777, .. }),
            "{err}"
        );
    }
}
