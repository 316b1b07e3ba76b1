//! The directories above a workspace mounted below `/`.
//!
//! With the workspace preopened at `/home/me/proj`, nothing covers `/`, `/home` or `/home/me`,
//! and wasi-libc answers every call on them with `ENOENT`. Tools that walk a path from `/`
//! one component at a time then fail on a file that exists: uutils' `realpath` and `readlink
//! -f` look at `/`, `/home`, ... in turn to see whether each is a symlink. So each ancestor is
//! preopened too, read-only, on one empty directory of the host: the ancestors exist and hold
//! nothing, and no host file is reachable through them.
//!
//! The empty directory is `$TMPDIR/agent-wasi-empty-<uid>`, created once per user with mode
//! `0555` (no one but root can put anything in it) and checked when a process first needs it:
//! a directory, owned by this user, not writable by anyone, empty. When it cannot be had,
//! commands run without the ancestors (they still run; only such walks fail).

use std::path::PathBuf;
use std::sync::OnceLock;

/// The ancestors of `mount` (a normalized absolute guest path), from `/` down to its parent;
/// none for `/`.
pub(crate) fn of(mount: &str) -> Vec<String> {
    let mut out = Vec::new();
    if mount == "/" {
        return out;
    }
    out.push("/".to_owned());
    let mut at = 0;
    while let Some(i) = mount[at + 1..].find('/') {
        at += 1 + i;
        out.push(mount[..at].to_owned());
    }
    out
}

/// The shared empty directory, or `None` when it cannot be had (the reason is logged once).
pub(crate) fn empty_dir() -> Option<&'static PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| match make_empty_dir() {
        Ok(dir) => Some(dir),
        Err(why) => {
            tracing::warn!(
                reason = %why,
                "agent-wasi: no empty directory for the ancestors of a mount; tools that walk paths from / (realpath) will fail"
            );
            None
        }
    })
    .as_ref()
}

#[cfg(unix)]
fn make_empty_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    let base = std::env::temp_dir();
    let uid = own_uid(&base)?;
    let dir = base.join(format!("agent-wasi-empty-{uid}"));
    match std::fs::create_dir(&dir) {
        Ok(()) => std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555))
            .map_err(|e| format!("cannot make {} read-only: {e}", dir.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o222 != 0 {
        return Err(format!(
            "{} is not a directory of this user that no one may write (mode {:o}, owner {}); remove it",
            dir.display(),
            meta.mode() & 0o7777,
            meta.uid()
        ));
    }
    let mut entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    if entries.next().is_some() {
        return Err(format!("{} is not empty; remove it", dir.display()));
    }
    Ok(dir)
}

/// This process's user id: the owner of a file it creates in `base`.
#[cfg(unix)]
fn own_uid(base: &std::path::Path) -> Result<u32, String> {
    use std::os::unix::fs::MetadataExt;

    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let probe = base.join(format!("agent-wasi-probe-{}-{nanos}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| format!("cannot create {}: {e}", probe.display()))?;
    let uid = file.metadata().map(|m| m.uid());
    drop(file);
    let _ignored = std::fs::remove_file(&probe);
    uid.map_err(|e| format!("cannot inspect {}: {e}", probe.display()))
}

#[cfg(not(unix))]
fn make_empty_dir() -> Result<PathBuf, String> {
    Err("guest paths below / are only mounted with their ancestors on Unix".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_from_the_root_down() {
        assert!(of("/").is_empty());
        assert_eq!(of("/ws"), ["/"]);
        assert_eq!(of("/home/me/proj"), ["/", "/home", "/home/me"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_empty_directory_is_empty_and_read_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = empty_dir().unwrap();
        let meta = std::fs::metadata(dir).unwrap();
        assert_eq!(meta.permissions().mode() & 0o222, 0);
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
        // Made again (another process), it is accepted as it is.
        assert_eq!(&make_empty_dir().unwrap(), dir);
    }
}
