//! Snapshots: what a tree holds, path by path (size, mode, mtime, sha256), read through the
//! workspace's ignore rules.

use std::collections::BTreeMap;
use std::fs::Metadata;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{WorkspaceError, io};

/// What a path is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A symbolic link (never followed), with its target as written.
    Symlink {
        /// The link's target.
        target: String,
    },
}

/// One path of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// File or symlink.
    pub kind: EntryKind,
    /// Size in bytes (a link: its target's length).
    pub size: u64,
    /// Permission bits (`0o644`).
    pub mode: u32,
    /// Lowercase hex sha256 of the content (a link: of its target).
    pub sha256: String,
    /// Modification time in the real folder, nanoseconds since the epoch.
    pub real_mtime: u64,
    /// Modification time of the shadow copy, nanoseconds since the epoch.
    pub shadow_mtime: u64,
}

/// Path (relative, `/`-separated) → entry.
pub type Snapshot = BTreeMap<String, Entry>;

/// Nanoseconds since the epoch of `meta`'s modification time (0 when unknown).
pub fn mtime(meta: &Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Permission bits of `meta`.
pub fn mode(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// sha256 of `data`, hex.
pub fn sha256(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// Opens the regular file at `path` for reading without following a final symlink and
/// without blocking on a FIFO (`O_NOFOLLOW | O_NONBLOCK`): a path the walk listed as a file
/// but swapped for a link, a FIFO or a directory since is refused, never read through.
///
/// # Errors
/// The open's error, or [`std::io::ErrorKind::InvalidInput`] for what is not a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(i32::try_from(flags.bits()).unwrap_or(0))
        .open(path)?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ))
    }
}

/// sha256 of the regular file at `path` ([`open_regular`]), streamed.
pub fn sha256_file(path: &Path) -> Result<String, WorkspaceError> {
    use std::io::Read as _;
    let mut file = open_regular(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// One path found by a walk.
#[derive(Debug)]
pub struct Found {
    /// Relative, `/`-separated.
    pub rel: String,
    /// Absolute.
    pub path: PathBuf,
    /// Its metadata (not following a final symlink).
    pub meta: Metadata,
}

impl Found {
    /// The entry for this path; `previous` (same size and mtime) saves hashing.
    pub fn entry(&self, previous: Option<&Entry>, real: bool) -> Result<Entry, WorkspaceError> {
        let mtime = mtime(&self.meta);
        let (kind, size, sha) = if self.meta.file_type().is_symlink() {
            let target = std::fs::read_link(&self.path).map_err(io(&self.path))?;
            let target = target.to_string_lossy().into_owned();
            let sha = sha256(target.as_bytes());
            (
                EntryKind::Symlink {
                    target: target.clone(),
                },
                target.len() as u64,
                sha,
            )
        } else {
            let size = self.meta.len();
            let same = previous.filter(|p| {
                p.kind == EntryKind::File
                    && p.size == size
                    && (if real { p.real_mtime } else { p.shadow_mtime }) == mtime
            });
            let sha = match same {
                Some(p) => p.sha256.clone(),
                None => sha256_file(&self.path)?,
            };
            (EntryKind::File, size, sha)
        };
        Ok(Entry {
            kind,
            size,
            mode: if self.meta.file_type().is_symlink() {
                0
            } else {
                mode(&self.meta)
            },
            sha256: sha,
            real_mtime: if real {
                mtime
            } else {
                previous.map_or(0, |p| p.real_mtime)
            },
            shadow_mtime: if real {
                previous.map_or(0, |p| p.shadow_mtime)
            } else {
                mtime
            },
        })
    }

    /// Device and inode, to notice hard links.
    pub fn inode(&self) -> (u64, u64) {
        (self.meta.dev(), self.meta.ino())
    }
}

/// Whether two entries hold the same thing (kind, content, mode), or are both absent.
pub(crate) fn same(a: Option<&Entry>, b: Option<&Entry>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.kind == b.kind && a.sha256 == b.sha256 && a.mode == b.mode,
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_swapped_for_a_link_or_a_fifo_is_never_read_through() {
        let t = tempfile::tempdir().unwrap();
        let secret = t.path().join("secret");
        std::fs::write(&secret, "top").unwrap();
        let file = t.path().join("file");
        std::fs::write(&file, "mine").unwrap();
        assert!(sha256_file(&file).is_ok());
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&secret, &file).unwrap();
        assert!(sha256_file(&file).is_err(), "read through a link");
        assert!(open_regular(&file).is_err());
        std::fs::remove_file(&file).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &file,
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        // Returns at once instead of waiting for a writer.
        assert!(sha256_file(&file).is_err(), "a FIFO is no regular file");
    }
}
