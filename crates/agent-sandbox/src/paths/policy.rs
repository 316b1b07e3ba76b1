//! The path policy: which resolved paths may be read or written.
//!
//! Order: the filesystem root is never allowed; a denied path (of either list for the
//! operation) wins; `unrestricted` allows the rest; otherwise the path must lie inside a granted
//! directory, compared by whole components (`/project` never contains `/project-backup`).
//! Writing a file that has several hard links is refused: another link may sit outside the
//! sandbox.

use std::path::{Path, PathBuf};

use super::normalize::{PathError, absolute, lexical, resolve};
use crate::settings::{SandboxSettings, is_root};
use crate::verdict::Verdict;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Reading (or listing).
    Read,
    /// Writing, creating, deleting.
    Write,
}

impl Op {
    /// `read` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }
}

#[derive(Clone, Debug)]
struct Grant {
    path: PathBuf,
    /// `path` as bytes, for a segment-boundary prefix test without re-parsing components.
    bytes: Vec<u8>,
    rule: String,
}

/// A compiled path policy. Configured directories are resolved once, when it is built.
#[derive(Clone, Debug)]
pub struct PathPolicy {
    cwd: PathBuf,
    read: Option<Vec<Grant>>,
    write: Option<Vec<Grant>>,
    denied_read: Vec<Grant>,
    denied_write: Vec<Grant>,
    unrestricted: bool,
}

fn grants(paths: &[PathBuf], key: &str) -> Vec<Grant> {
    paths
        .iter()
        .map(|p| {
            let path = resolve(&absolute(p, Path::new("/")))
                .unwrap_or_else(|_| lexical(p, Path::new("/")));
            Grant {
                bytes: path.as_os_str().as_encoded_bytes().to_vec(),
                path,
                rule: format!("{key}: {}", p.display()),
            }
        })
        .collect()
}

/// The first grant containing `p`, compared by whole segments: both are normalised absolute
/// paths (no `.`, `..`, repeated or trailing slashes), so a byte prefix that ends at a `/` (or
/// at the end) is a component prefix: `/project` contains `/project/x`, not `/project-backup`.
fn inside<'a>(p: &Path, list: &'a [Grant]) -> Option<&'a Grant> {
    let p = p.as_os_str().as_encoded_bytes();
    list.iter().find(|g| {
        let g = g.bytes.as_slice();
        g == b"/" || (p.starts_with(g) && (p.len() == g.len() || p[g.len()] == b'/'))
    })
}

impl PathPolicy {
    /// Compiles `settings`; relative paths given to [`Self::check`] are anchored at `cwd`
    /// (default: the base directory).
    pub fn new(settings: &SandboxSettings, cwd: Option<&Path>) -> Self {
        let base: Vec<PathBuf> = settings.base_dir.iter().cloned().collect();
        let mut write = Vec::new();
        write.extend(grants(&base, "baseDir"));
        write.extend(grants(&settings.read_write_dirs, "allowDirs"));
        if let Some(w) = &settings.allowed_write_paths {
            write.extend(grants(w, "allowedWritePaths"));
        }
        let write_limited = settings.base_dir.is_some()
            || !settings.read_write_dirs.is_empty()
            || settings.allowed_write_paths.is_some();
        let mut read = write.clone();
        read.extend(grants(&settings.read_only_dirs, "allowDirsReadOnly"));
        if let Some(r) = &settings.allowed_read_paths {
            read.extend(grants(r, "allowedReadPaths"));
        }
        let read_limited = settings.base_dir.is_some()
            || settings.allowed_read_paths.is_some()
            || !settings.read_only_dirs.is_empty();
        let mut denied_read = grants(&settings.denied_paths, "deniedPaths");
        let mut denied_write = denied_read.clone();
        denied_read.extend(grants(&settings.denied_read_paths, "denyRead"));
        denied_write.extend(grants(&settings.denied_write_paths, "denyWrite"));
        let cwd = cwd
            .map(Path::to_path_buf)
            .or_else(|| settings.base_dir.clone())
            .unwrap_or_else(|| PathBuf::from("/"));
        Self {
            cwd,
            read: read_limited.then_some(read),
            write: write_limited.then_some(write),
            denied_read,
            denied_write,
            unrestricted: settings.unrestricted,
        }
    }

    /// Normalises `path` (lexically, then against the filesystem) and checks it.
    pub fn check(&self, path: &Path, op: Op) -> Verdict {
        self.check_resolving(path, op).0
    }

    /// [`Self::check`], also returning the resolved path it judged (when it resolved), so a
    /// caller that goes on to use the path does not resolve it twice.
    pub fn check_resolving(&self, path: &Path, op: Op) -> (Verdict, Option<PathBuf>) {
        // Resolved in the kernel's order: `link/../k` is the `k` beside the link's target.
        match resolve(&absolute(path, &self.cwd)) {
            Ok(real) => {
                let v = self.check_resolved(&real, op);
                if v.allowed && op == Op::Write && has_other_links(&real) {
                    let v = Verdict::deny(
                        format!(
                            "{} has more than one hard link; another link may lie outside the sandbox, so it is not written",
                            real.display()
                        ),
                        Some("built-in: hard links".into()),
                    );
                    return (v, Some(real));
                }
                (v, Some(real))
            }
            Err(e @ PathError::Loop(_)) => (
                Verdict::deny(e.to_string(), Some("built-in: symlink loop".into())),
                None,
            ),
            Err(e) => (
                Verdict::deny(format!("cannot resolve the path: {e}"), None),
                None,
            ),
        }
    }

    /// Whether a resolved path is on a deny list for `op`: the check applied to paths named in
    /// command arguments, which need not lie inside a granted directory.
    pub fn denied(&self, p: &Path, op: Op) -> Option<Verdict> {
        let denied = match op {
            Op::Read => &self.denied_read,
            Op::Write => &self.denied_write,
        };
        inside(p, denied).map(|g| {
            Verdict::deny(
                format!("{} is denied ({})", p.display(), g.rule),
                Some(g.rule.clone()),
            )
        })
    }

    /// Whether reads are limited to granted directories (`allowedReadPaths`, a base directory
    /// or read-only directories are set); otherwise only the deny lists bound reads.
    pub fn reads_limited(&self) -> bool {
        self.read.is_some()
    }

    /// Whether the policy bounds any path: a read or write list, or a deny list.
    pub fn restricts(&self) -> bool {
        self.read.is_some()
            || self.write.is_some()
            || !self.denied_read.is_empty()
            || !self.denied_write.is_empty()
    }

    /// The resolved paths denied for `op`.
    pub fn denied_paths(&self, op: Op) -> impl Iterator<Item = &Path> {
        let list = match op {
            Op::Read => &self.denied_read,
            Op::Write => &self.denied_write,
        };
        list.iter().map(|g| g.path.as_path())
    }

    /// The same policy with relative paths anchored at `cwd`.
    pub fn with_cwd(mut self, cwd: &Path) -> Self {
        self.cwd = cwd.to_path_buf();
        self
    }

    /// The directory relative paths are anchored at.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Checks a path that is already absolute, normalised and resolved (no I/O), such as the
    /// output of [`super::resolve`].
    pub fn check_resolved(&self, p: &Path, op: Op) -> Verdict {
        if is_root(p) {
            return Verdict::deny(
                "the filesystem root is never accessible through the sandbox",
                Some("built-in: filesystem root".into()),
            );
        }
        let denied = match op {
            Op::Read => &self.denied_read,
            Op::Write => &self.denied_write,
        };
        if let Some(g) = inside(p, denied) {
            return Verdict::deny(
                format!("{} is denied ({})", p.display(), g.rule),
                Some(g.rule.clone()),
            );
        }
        if self.unrestricted {
            return Verdict::allow(
                format!("{} may be {} (unrestricted mode)", p.display(), past(op)),
                Some("unrestricted".into()),
            );
        }
        let list = match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
        };
        match list {
            None => Verdict::allow(format!("no {} allowlist is configured", op.as_str()), None),
            Some(list) => match inside(p, list) {
                Some(g) => Verdict::allow(
                    format!("{} is inside {}", p.display(), g.path.display()),
                    Some(g.rule.clone()),
                ),
                None => Verdict::deny(
                    format!(
                        "{} is outside every directory the sandbox lets the agent {}",
                        p.display(),
                        op.as_str()
                    ),
                    None,
                ),
            },
        }
    }
}

fn past(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "written",
    }
}

#[cfg(unix)]
fn has_other_links(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.nlink() > 1)
}

#[cfg(not(unix))]
fn has_other_links(_p: &Path) -> bool {
    false
}
