//! Which paths belong to the workspace: everything under the root except what `.gitignore`
//! and `.agentignore` files exclude (gitignore syntax, read at every level, as Git and the
//! `ignore` crate read them, whether or not the folder is a Git repository), the reserved
//! `.agent/` directories (never imported, never committed), and `.git` (a directory, a file or a
//! link, at any depth; the shadow gets a `.git` of its own, see `workspace::git`).
//! Symlinks are listed as links, never followed.

use std::path::{Component, Path};

use ignore::WalkBuilder;

use super::error::WorkspaceError;
use super::snapshot::Found;

/// The per-folder ignore file of this runtime, read like `.gitignore`.
pub const AGENT_IGNORE: &str = ".agentignore";
/// The reserved directory name (settings, sessions): never imported or committed.
pub const RESERVED: &str = ".agent";
/// Git's directory (or `gitdir:` file) name: never imported or committed, at any depth.
pub const GIT: &str = ".git";

/// Every regular file and symlink under `root` that belongs to the workspace, sorted by path.
///
/// # Errors
/// [`WorkspaceError::Io`] when a directory cannot be read.
pub fn walk(root: &Path) -> Result<Vec<Found>, WorkspaceError> {
    let mut out = Vec::new();
    for item in walker(root).build() {
        let entry = item
            .map_err(|e| WorkspaceError::Invalid(format!("cannot walk {}: {e}", root.display())))?;
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if !(ft.is_file() || ft.is_symlink()) {
            continue;
        }
        let path = entry.path().to_path_buf();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str().map(str::to_owned) else {
            return Err(WorkspaceError::Invalid(format!(
                "{} has a name that is not UTF-8; rename it or list it in {AGENT_IGNORE}",
                path.display()
            )));
        };
        let meta = std::fs::symlink_metadata(&path).map_err(super::error::io(&path))?;
        out.push(Found { rel, path, meta });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// The walk of `root` under the workspace's rules (see the module docs), for any caller that
/// must see the same files (the shadow workspace, Glob and Grep).
pub fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(AGENT_IGNORE)
        .sort_by_file_name(|a, b| a.cmp(b));
    builder.filter_entry(move |e| {
        let name = e.file_name();
        if e.depth() == 0 {
            return true;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        // `.git` whatever it is (a directory, a `gitdir:` file, a link): never part of the
        // workspace; the shadow gets a `.git` of its own (`workspace::git`).
        name != GIT && !(is_dir && name == RESERVED)
    });
    builder
}

/// Whether a symlink at `rel` with `target` stays inside the tree (lexically).
pub(crate) fn link_stays_inside(rel: &str, target: &str) -> bool {
    if Path::new(target).is_absolute() {
        return false;
    }
    let mut depth: i64 = rel.matches('/').count() as i64;
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return false,
        }
        if depth < 0 {
            return false;
        }
    }
    true
}
