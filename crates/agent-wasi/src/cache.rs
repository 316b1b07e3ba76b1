//! The on-disk cache of compiled modules.
//!
//! One file per module and engine configuration, `<module-sha256>-<engine-hash>.cwasm`, where
//! `<engine-hash>` is a digest of [`wasmtime::Engine::precompile_compatibility_hash`] (the
//! wasmtime version and every setting that changes compiled code), so a wasmtime upgrade or a
//! different configuration misses the cache and recompiles instead of loading stale code.
//!
//! A file is the precompiled module (`.cwasm`) as [`wasmtime::Module::serialize`] wrote it, then
//! a CRC-32 checksum (4 bytes, little-endian), then `MAGIC`: a trailer rather than a header, so that the file can
//! be mapped as it is ([`wasmtime::Module::deserialize_open_file`]: wasmtime needs its ELF image
//! at offset 0, and ignores the bytes after it). Mapping instead of reading costs no copy of the
//! 17 MB of compiled core-utils and keeps only the pages a command touches resident. The checksum
//! covers the module's sha256, the engine hash and the payload, so a file that was truncated,
//! corrupted or copied under another module's name fails the check, is removed and the module
//! is compiled again; it is checked on the open handle that is then mapped, before mapping.
//! A checksum, not a cryptographic digest: it guards against accidents (a disk error, a bad
//! copy), and no digest stored beside the file could guard against someone who can write it
//! (the ownership checks below are what do); CRC-32 runs at several GB/s where SHA-256 took
//! 10 ms of every start-up for the 17 MB file (docs/wasi.md, Start-up of a new process).
//! One file rather than a `.cwasm` plus a sidecar, so that one rename publishes the payload and
//! its checksum together. Files are written to a temporary name in the same directory (mode
//! 0600), synced, and renamed into place (atomic on POSIX), so a reader never sees half a file,
//! and never changed in place afterwards, so a mapped file keeps its verified bytes.
//!
//! **Who may have written it.** The checksum is not a keyed MAC, so what stops someone else's
//! machine code from being loaded is ownership (Unix): the directory must be owned by this
//! process's effective user and not writable by group or others, checked when it is opened
//! ([`RuntimeError::CacheDirShared`], or [`RuntimeError::CacheDir`] for another owner); and
//! every file is checked again when it is read, on the open handle (`fstat`, so the file
//! checked is the file read): a regular file, owned by this user, not writable by group or
//! others. A file that fails (planted after the directory was checked, or left by an older
//! version with a loose umask) is a cache miss: it is removed, the module is compiled from its
//! verified wasm, and the new file replaces it atomically; a warning names the file and why.
//!
//! The parent directories are not checked. A file passes only if this user owns it and no one
//! else can write it, so someone who controls a parent can at most move this user's own,
//! checksummed files around (a file under another module's or engine's name fails the
//! checksum) or replace the directory with one they own (refused at open; its files refused at
//! read). That is a denial of service (a recompile), never foreign code.

use std::fs::{self, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use wasmtime::Engine;

use crate::error::RuntimeError;

/// Last bytes of every cache file: format name and version (1 had a sha256 digest and this in a
/// header; such a file is rejected and rewritten).
const MAGIC: &[u8; 16] = b"agent-wasi-cw\0\0\x02";
const CHECKSUM_LEN: usize = 4;
const TRAILER_LEN: usize = CHECKSUM_LEN + MAGIC.len();
/// The read size while hashing a cache file.
const CHUNK: usize = 256 << 10;

/// The cache directory of a [`crate::Runtime`].
#[derive(Debug)]
pub(crate) struct DiskCache {
    dir: PathBuf,
    /// Hex digest of the engine's compatibility hash (first 16 bytes).
    engine_hash: String,
}

/// What looking a module up in the cache found.
pub(crate) enum Lookup {
    /// A verified file to map: the handle that was checked and hashed.
    Hit(fs::File),
    /// No file.
    Miss,
    /// A file that failed verification (it has been removed); the reason, for the log.
    Rejected(String),
}

impl DiskCache {
    /// Opens (creating it with mode 0700 if needed) the cache directory. Refuses a directory
    /// that another user owns or that group or others may write to: whoever can write the
    /// cache can choose the machine code this process runs.
    pub(crate) fn open(dir: &Path, engine: &Engine) -> Result<Self, RuntimeError> {
        create_private_dir(dir).map_err(|source| RuntimeError::CacheDir {
            path: dir.to_owned(),
            source,
        })?;
        check_dir(dir)?;
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

    /// Opens and verifies the cached compiled module for `module_sha256`: the file must be a
    /// regular file owned by this user and writable by no one else (checked on the open
    /// handle), and its checksum must match (computed from that handle, which is returned for
    /// mapping). A file that fails is removed.
    pub(crate) fn lookup(&self, module_sha256: &str) -> Lookup {
        let path = self.path(module_sha256);
        let (mut file, len) = match open_private_file(&path) {
            Ok(found) => found,
            Err(FileProblem::Missing) => return Lookup::Miss,
            Err(FileProblem::Unreadable(err)) => {
                return Lookup::Rejected(format!("cannot read {}: {err}", path.display()));
            }
            Err(FileProblem::NotPrivate(why)) => {
                // Not ours alone: never read. Remove it so the recompiled module's file takes
                // its place (the rename would replace it anyway).
                let _ = fs::remove_file(&path);
                return Lookup::Rejected(format!(
                    "{}: {why}; it was not loaded and has been removed (if it comes back, someone else can write to {}: check its owner and mode, `chmod 700` it, or remove it)",
                    path.display(),
                    self.dir.display()
                ));
            }
        };
        match self.verify(module_sha256, &mut file, len) {
            Ok(()) => Lookup::Hit(file),
            Err(reason) => {
                // A bad file would fail again next time; remove it (the recompiled module
                // replaces it anyway).
                let _ = fs::remove_file(&path);
                Lookup::Rejected(format!("{}: {reason}", path.display()))
            }
        }
    }

    /// Checks the trailer of `file` (`len` bytes, as `fstat` gave it), then its checksum.
    fn verify(&self, module_sha256: &str, file: &mut fs::File, len: u64) -> Result<(), String> {
        let payload_len = len
            .checked_sub(TRAILER_LEN as u64)
            .ok_or("not a cache file of this format (too short)")?;
        let unreadable = |err: io::Error| format!("cannot read it: {err}");
        let mut trailer = [0u8; TRAILER_LEN];
        file.seek(SeekFrom::Start(payload_len))
            .and_then(|_| file.read_exact(&mut trailer))
            .map_err(unreadable)?;
        if &trailer[CHECKSUM_LEN..] != MAGIC {
            return Err("not a cache file of this format (bad trailer)".into());
        }
        let mut hasher = self.hasher(module_sha256);
        file.seek(SeekFrom::Start(0)).map_err(unreadable)?;
        let mut chunk = vec![0u8; CHUNK];
        let mut left = payload_len;
        while left > 0 {
            let n = usize::try_from(left.min(CHUNK as u64)).unwrap_or(CHUNK);
            file.read_exact(&mut chunk[..n]).map_err(unreadable)?;
            hasher.update(&chunk[..n]);
            left -= n as u64;
        }
        if trailer[..CHECKSUM_LEN] != hasher.finalize().to_le_bytes() {
            return Err("checksum mismatch (corrupted, truncated or tampered)".into());
        }
        Ok(())
    }

    /// The checksum of a cache file, fed the payload next: over the module's sha256, the
    /// engine hash and the payload.
    fn hasher(&self, module_sha256: &str) -> crc32fast::Hasher {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(module_sha256.as_bytes());
        hasher.update(b"\0");
        hasher.update(self.engine_hash.as_bytes());
        hasher.update(b"\0");
        hasher
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
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            // 0600 whatever the umask: a file group or others could write is refused on read.
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&tmp)?;
            let mut hasher = self.hasher(module_sha256);
            hasher.update(payload);
            file.write_all(payload)?;
            file.write_all(&hasher.finalize().to_le_bytes())?;
            file.write_all(MAGIC)?;
            // On disk before the rename publishes it: a crash leaves the old file or none,
            // never a named file whose blocks were not written.
            file.sync_all()?;
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
    hex::encode(&hasher.0.finalize()[..16])
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

/// Why a cache file was not read.
enum FileProblem {
    /// There is none.
    Missing,
    /// It could not be opened or read.
    Unreadable(io::Error),
    /// It is not this user's alone (the reason, for the warning).
    NotPrivate(String),
}

/// Opens a cache file and checks, on the open handle, that it is a regular file owned by this
/// user and writable by no one else; the handle and the file's length.
fn open_private_file(path: &Path) -> Result<(fs::File, u64), FileProblem> {
    // Not a regular file (a FIFO would block the open, a directory cannot be read): refused
    // before opening. The check that counts is the one on the open handle below.
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(FileProblem::NotPrivate(
                "is a symbolic link, not a file this user wrote".into(),
            ));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(FileProblem::NotPrivate("is not a regular file".into()));
        }
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(FileProblem::Missing),
        Err(err) => return Err(FileProblem::Unreadable(err)),
    }
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(FileProblem::Missing),
        Err(err) => return Err(FileProblem::Unreadable(err)),
    };
    let meta = file.metadata().map_err(FileProblem::Unreadable)?;
    if !meta.is_file() {
        return Err(FileProblem::NotPrivate("is not a regular file".into()));
    }
    if let Some(why) = not_private(&meta) {
        return Err(FileProblem::NotPrivate(why));
    }
    Ok((file, meta.len()))
}

/// What makes `meta` unfit for the cache: owned by another user than this process's effective
/// user, or writable by group or others. `None` when it is fine (always, off Unix).
#[cfg(unix)]
fn not_private(meta: &fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let me = sys::euid();
    let mode = meta.mode() & 0o7777;
    if meta.uid() != me {
        return Some(format!(
            "is owned by uid {}, not by this user (uid {me})",
            meta.uid()
        ));
    }
    if mode & 0o022 != 0 {
        return Some(format!(
            "is writable by {} (mode {:03o})",
            if mode & 0o002 != 0 {
                "everyone"
            } else {
                "its group"
            },
            mode & 0o777
        ));
    }
    None
}

#[cfg(not(unix))]
fn not_private(_meta: &fs::Metadata) -> Option<String> {
    None
}

/// The cache directory must be a directory owned by this process's effective user and not
/// writable by group or others.
#[cfg(unix)]
fn check_dir(dir: &Path) -> Result<(), RuntimeError> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(dir).map_err(|source| RuntimeError::CacheDir {
        path: dir.to_owned(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(RuntimeError::CacheDir {
            path: dir.to_owned(),
            source: io::Error::new(io::ErrorKind::NotADirectory, "it is not a directory"),
        });
    }
    let me = sys::euid();
    if meta.uid() != me {
        return Err(RuntimeError::CacheDir {
            path: dir.to_owned(),
            source: io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it is owned by uid {}, not by this user (uid {me}), and whoever owns it can plant machine code this process would run; remove it (or `chown` it to yourself and `chmod 700` it)",
                    meta.uid()
                ),
            ),
        });
    }
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
fn check_dir(_dir: &Path) -> Result<(), RuntimeError> {
    Ok(())
}

/// The process's effective user id (rustix, already in the workspace: no FFI of our own).
#[cfg(unix)]
mod sys {
    /// This process's effective user id.
    pub(super) fn euid() -> u32 {
        rustix::process::geteuid().as_raw()
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stderr,
        reason = "tests; a skipped assertion says why"
    )]

    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::open(&dir.path().join("cache"), &Engine::default()).unwrap();
        let sha = "a".repeat(64);
        assert!(matches!(cache.lookup(&sha), Lookup::Miss));
        cache.store(&sha, b"payload").unwrap();
        let Lookup::Hit(mut file) = cache.lookup(&sha) else {
            panic!("expected a hit")
        };
        // The handle to map: the payload at offset 0, the trailer after it.
        let mut payload = vec![0; 7];
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_exact(&mut payload).unwrap();
        assert_eq!(payload, b"payload");

        // Flip one payload byte: rejected and removed.
        let path = cache.path(&sha);
        let mut file = fs::read(&path).unwrap();
        file[0] ^= 1;
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
    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    fn set_mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Gives `path` to uid 65534 (nobody); false when this process may not (not root).
    #[cfg(unix)]
    fn give_away(path: &Path) -> bool {
        match std::os::unix::fs::chown(path, Some(65534), None) {
            Ok(()) => true,
            Err(err) => {
                eprintln!("skipped the foreign-owner assertion: chown failed ({err})");
                false
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_group_writable_directory_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        set_mode(dir.path(), 0o770);
        let err = DiskCache::open(dir.path(), &Engine::default()).unwrap_err();
        assert!(
            matches!(err, RuntimeError::CacheDirShared { mode: 0o770, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("chmod 700"), "{err}");
        set_mode(dir.path(), 0o700);
        assert!(DiskCache::open(dir.path(), &Engine::default()).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_owned_by_another_user_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        fs::create_dir(&cache).unwrap();
        set_mode(&cache, 0o700);
        if !give_away(&cache) {
            return;
        }
        let err = DiskCache::open(&cache, &Engine::default()).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, RuntimeError::CacheDir { .. }), "{text}");
        assert!(
            text.contains("is owned by uid 65534, not by this user") && text.contains("remove it"),
            "{text}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn files_are_written_private_and_a_file_others_can_write_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::open(&dir.path().join("cache"), &Engine::default()).unwrap();
        let sha = "c".repeat(64);
        cache.store(&sha, b"payload").unwrap();
        let path = cache.path(&sha);
        assert_eq!(mode_of(&path), 0o600);
        assert!(matches!(cache.lookup(&sha), Lookup::Hit(_)));
        for (mode, why) in [
            (0o666, "is writable by everyone (mode 666)"),
            (0o602, "is writable by everyone (mode 602)"),
            (0o620, "is writable by its group (mode 620)"),
        ] {
            cache.store(&sha, b"payload").unwrap();
            set_mode(&path, mode);
            let Lookup::Rejected(reason) = cache.lookup(&sha) else {
                panic!("mode {mode:o} was read")
            };
            assert!(reason.contains(why), "{reason}");
            assert!(
                reason.contains("was not loaded and has been removed"),
                "{reason}"
            );
            assert!(!path.exists(), "a refused file is removed");
        }
        // A symbolic link (even to a good file of ours) is not read.
        cache.store(&"d".repeat(64), b"payload").unwrap();
        std::os::unix::fs::symlink(cache.path(&"d".repeat(64)), &path).unwrap();
        let Lookup::Rejected(reason) = cache.lookup(&sha) else {
            panic!("a symbolic link was read")
        };
        assert!(reason.contains("symbolic link"), "{reason}");
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_owned_by_another_user_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::open(&dir.path().join("cache"), &Engine::default()).unwrap();
        let sha = "e".repeat(64);
        cache.store(&sha, b"payload").unwrap();
        let path = cache.path(&sha);
        if !give_away(&path) {
            return;
        }
        // Its checksum is right and its mode is 0600: only the owner is wrong.
        let Lookup::Rejected(reason) = cache.lookup(&sha) else {
            panic!("a foreign file was read")
        };
        assert!(
            reason.contains("is owned by uid 65534, not by this user"),
            "{reason}"
        );
        assert!(!path.exists());
    }

    /// The whole path through the runtime: a planted file is a miss, the module is compiled
    /// from its wasm, and the file is rewritten private (and used next time).
    #[cfg(unix)]
    #[test]
    fn a_planted_file_is_recompiled_and_rewritten() {
        use crate::{CacheState, Runtime, RuntimeConfig};
        let dir = tempfile::tempdir().unwrap();
        let cache_dir = dir.path().join("cache");
        let wasm =
            wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "_start")))"#)
                .unwrap();
        let sha = agent_bundles::digest::sha256_hex(&wasm);
        let runtime = || Runtime::new(RuntimeConfig::default().with_cache_dir(&cache_dir)).unwrap();
        let first = runtime().prepare(&wasm, &sha).unwrap();
        assert_eq!(first.cache_state(), CacheState::Compiled);
        assert_eq!(
            runtime().prepare(&wasm, &sha).unwrap().cache_state(),
            CacheState::Disk
        );
        let file = fs::read_dir(&cache_dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .unwrap();
        set_mode(&file, 0o666);
        assert_eq!(
            runtime().prepare(&wasm, &sha).unwrap().cache_state(),
            CacheState::Compiled,
            "a world-writable file is not loaded"
        );
        assert_eq!(mode_of(&file), 0o600, "rewritten private");
        assert_eq!(
            runtime().prepare(&wasm, &sha).unwrap().cache_state(),
            CacheState::Disk
        );
        if give_away(&file) {
            assert_eq!(
                runtime().prepare(&wasm, &sha).unwrap().cache_state(),
                CacheState::Compiled,
                "a foreign-owned file is not loaded"
            );
            use std::os::unix::fs::MetadataExt;
            assert_eq!(fs::metadata(&file).unwrap().uid(), sys::euid());
        }
        // A directory that became group-writable is refused at the next start.
        set_mode(&cache_dir, 0o770);
        assert!(matches!(
            Runtime::new(RuntimeConfig::default().with_cache_dir(&cache_dir)),
            Err(RuntimeError::CacheDirShared { .. })
        ));
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
