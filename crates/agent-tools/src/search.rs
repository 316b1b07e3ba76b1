//! What `Glob` and `Grep` search: the files under a directory of the workspace, walked by the
//! shadow workspace's own rules ([`walker`]: `.gitignore`/`.agentignore` applied, hidden files
//! included, `.git/` and `.agent/` left out, links not followed).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agent_core::tools::ToolError;

use super::files::Confined;
use agent_workspace::filter::walker;

/// A file found by a walk.
pub struct Hit {
    /// Absolute path.
    pub path: PathBuf,
    /// Relative to the walk's base, `/`-separated.
    pub rel: String,
    /// Modification time.
    pub mtime: SystemTime,
}

/// The base directory of a search: `path` (or the workspace root), which must be readable.
pub fn base(fs: &Confined, path: Option<&str>) -> Result<PathBuf, ToolError> {
    let base = match path {
        Some(p) => fs.path(p),
        None => fs.cwd().to_path_buf(),
    };
    let real = std::fs::canonicalize(&base)
        .map_err(|_| ToolError::Execution(format!("{} does not exist", base.display())))?;
    if !fs.readable(&real) || !fs.readable(&base) {
        return Err(ToolError::Sandbox(format!(
            "{} is outside the workspace; tools work only inside it",
            base.display()
        )));
    }
    Ok(real)
}

/// Every file under `base`.
pub fn files(base: &Path) -> Vec<Hit> {
    let mut out = Vec::new();
    for entry in walker(base).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path().to_path_buf();
        let Ok(rel) = path.strip_prefix(base) else {
            continue;
        };
        let rel = rel.to_string_lossy().into_owned();
        let mtime = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        out.push(Hit { path, rel, mtime });
    }
    out
}

/// Newest first, then by path.
pub fn by_mtime(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.rel.cmp(&b.rel)));
}
