//! Rendering a [`ProfilePlan`] as a macOS Seatbelt (`sandbox-exec`) policy.
//!
//! Order (later rules win in Seatbelt), the same as Agent Safehouse's generator for the same
//! selection:
//! 1. the selected profiles in stage order: the base profile with its `HOME_DIR` and
//!    `WORK_DIR` placeholders filled in; after each other profile, a rule for the target of
//!    each symlinked path it grants ([`super::resolved`]); after `10-system-runtime.sb`,
//!    metadata-only `literal`s for the home directory's ancestors; the Git worktree profiles
//!    (`worktree-common-dir.sb`, `worktrees.sb`) followed by the rules for the workdir's shared
//!    Git directory (read-write) and sibling worktrees (read-only);
//! 2. the read-only add-dirs, then the read-write add-dirs, then the workdir, each with its
//!    ancestor `literal`s (a `subpath` for a directory, a `literal` for a file);
//! 3. this project's one addition: the protected paths inside writable directories,
//!    write-denied (stricter than Safehouse);
//! 4. the appended profiles, then a write-deny of each appended profile's own file and of the
//!    workdir's `.safehouse` configuration file, so the sandboxed process cannot rewrite its
//!    policy.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::resolved::{builtin_candidates, home_candidates};
use super::selection::{BASE_PROFILE, DirGrant, ProfilePlan};

/// The placeholder this project's profiles use for the home directory.
pub const HOME_PLACEHOLDER: &str = "__AGENT_HOME_DIR__";
/// Document 001's placeholder, replaced too so its trees assemble unchanged.
pub const SAFEHOUSE_HOME_PLACEHOLDER: &str = "__SAFEHOUSE_REPLACE_ME_WITH_ABSOLUTE_HOME_DIR__";
/// Agent Safehouse's base-profile placeholder for the workdir definition: replaced by
/// `(define WORK_DIR "<workdir>")`, or `(define WORK_DIR #f)` without a workdir (a profile that
/// builds a path from it then fails to compile instead of matching below `/`).
pub const SAFEHOUSE_WORK_DIR_PLACEHOLDER: &str = "__SAFEHOUSE_REPLACE_ME_WITH_WORK_DIR_DEFINE__";
/// Agent Safehouse's status line placeholder in `worktree-common-dir.sb`.
pub const SAFEHOUSE_COMMON_DIR_PLACEHOLDER: &str =
    "__SAFEHOUSE_REPLACE_ME_WITH_GIT_WORKTREE_COMMON_DIR_STATUS__";
/// Agent Safehouse's status line placeholder in `worktrees.sb`.
pub const SAFEHOUSE_LINKED_WORKTREES_PLACEHOLDER: &str =
    "__SAFEHOUSE_REPLACE_ME_WITH_GIT_LINKED_WORKTREE_PATHS_STATUS__";
/// The name of Agent Safehouse's per-workdir configuration file, which the policy write-denies.
pub const SAFEHOUSE_WORKDIR_CONFIG: &str = ".safehouse";

const COMMON_DIR_PROFILE: &str = "50-integrations-core/worktree-common-dir.sb";
const WORKTREES_PROFILE: &str = "50-integrations-core/worktrees.sb";
const SYSTEM_RUNTIME_PROFILE: &str = "10-system-runtime.sb";

/// Paths inside a writable directory that stay read-only: they run code on the user's behalf
/// later (hooks, shell start-up files, editor and agent configuration). From Claude Code's
/// sandbox-protected writes and srt's mandatory-deny list, plus this project's `.agent/`.
pub const PROTECTED: &[&str] = &[
    ".git/hooks",
    ".git/config",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitconfig",
    ".ripgreprc",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".claude",
    ".agent",
];

/// Host-selection pointers in `10-system-runtime.sb` that are never followed (Safehouse keeps
/// the developer directory a tool chooses explicit in its own integrations).
const NOT_RESOLVED: &[&str] = &[
    "/private/var/select/developer_dir",
    "/var/select/developer_dir",
    "/private/var/db/xcode_select_link",
    "/var/db/xcode_select_link",
];

/// The policy text. Identical inputs give identical bytes.
pub fn render(plan: &ProfilePlan) -> String {
    let home = quote(&plan.home);
    let mut out = String::with_capacity(
        plan.parts
            .iter()
            .map(|p| p.profile.text.len() + 64)
            .sum::<usize>()
            + 4096,
    );
    // The tree's location is not written: the same tree gives the same bytes wherever it is.
    let _ = writeln!(
        out,
        ";; Assembled by agent-sandbox ({} profiles). Later rules win.",
        plan.parts.len()
    );
    for part in &plan.parts {
        let rel = part.profile.rel.as_str();
        let _ = writeln!(out, "\n;; ---- {rel} ----");
        let mut text = part
            .profile
            .text
            .replace(&format!("\"{HOME_PLACEHOLDER}\""), &home)
            .replace(SAFEHOUSE_HOME_PLACEHOLDER, &home[1..home.len() - 1]);
        if rel == BASE_PROFILE {
            let define = match &plan.workdir {
                Some((g, _)) => format!("(define WORK_DIR {})", quote(&g.path)),
                None => "(define WORK_DIR #f)".to_owned(),
            };
            text = text.replace(SAFEHOUSE_WORK_DIR_PLACEHOLDER, &define);
        }
        if rel == COMMON_DIR_PROFILE {
            let status = plan
                .worktrees
                .common_dir
                .as_ref()
                .map_or_else(|| "(none)".to_owned(), |p| p.display().to_string());
            text = text.replace(SAFEHOUSE_COMMON_DIR_PLACEHOLDER, &status);
        }
        if rel == WORKTREES_PROFILE {
            let status = plan
                .worktrees
                .linked
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ");
            text = text.replace(SAFEHOUSE_LINKED_WORKTREES_PLACEHOLDER, &status);
        }
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        if rel == COMMON_DIR_PROFILE {
            common_dir_rules(&mut out, plan);
        } else if rel == WORKTREES_PROFILE {
            linked_worktree_rules(&mut out, plan);
        } else if rel != BASE_PROFILE {
            resolved_rules(&mut out, plan, rel, &part.profile.text);
        }
        if rel == SYSTEM_RUNTIME_PROFILE {
            let _ = writeln!(
                out,
                "\n;; Metadata-only ancestor directory literals for the home directory: {}",
                plan.home.display()
            );
            ancestor_block(&mut out, &plan.home, "file-read-metadata");
        }
    }
    for grant in &plan.add_dirs_ro {
        dir_grant(&mut out, "add-dirs-ro", grant, false);
    }
    for grant in &plan.add_dirs {
        dir_grant(&mut out, "add-dirs", grant, true);
    }
    if let Some((grant, source)) = &plan.workdir {
        let what = if plan.workdir_read_only {
            format!("workdir (source: {source}), read-only")
        } else {
            format!("workdir (source: {source})")
        };
        dir_grant(&mut out, &what, grant, !plan.workdir_read_only);
    }
    let writable: Vec<&DirGrant> = plan.writable().collect();
    if !writable.is_empty() {
        out.push_str("\n;; ---- protected paths inside writable directories: read-only ----\n");
        out.push_str("(deny file-write*");
        for grant in writable {
            for rel in PROTECTED {
                let _ = write!(out, "\n    (subpath {})", quote(&grant.path.join(rel)));
            }
        }
        out.push_str(")\n");
    }
    for appended in &plan.appended {
        let _ = writeln!(out, "\n;; ---- appended: {} ----", appended.path.display());
        out.push_str(&appended.text);
        if !appended.text.ends_with('\n') {
            out.push('\n');
        }
    }
    if !plan.appended.is_empty() {
        out.push_str("\n;; ---- the appended profiles' own files: not writable ----\n");
        for appended in &plan.appended {
            let _ = writeln!(
                out,
                "(deny file-write* (literal {}))",
                quote(&appended.path)
            );
        }
    }
    if let Some((grant, _)) = &plan.workdir {
        let _ = writeln!(
            out,
            "\n;; ---- the workdir's {SAFEHOUSE_WORKDIR_CONFIG} configuration: not writable (last) ----\n\
             (deny file-write* (literal {}))",
            quote(&grant.path.join(SAFEHOUSE_WORKDIR_CONFIG))
        );
    }
    out
}

/// After a profile: a rule for the target of each symlinked path it grants.
fn resolved_rules(out: &mut String, plan: &ProfilePlan, rel: &str, text: &str) {
    let candidates = builtin_candidates(text);
    let mut seen: Vec<(&str, PathBuf)> = candidates
        .iter()
        .map(|(m, p)| (*m, PathBuf::from(p)))
        .collect();
    for (matcher, path) in &candidates {
        if rel == SYSTEM_RUNTIME_PROFILE && NOT_RESOLVED.contains(&path.as_str()) {
            continue;
        }
        let Some(target) = plan.links.get(Path::new(path)) else {
            continue;
        };
        if seen.iter().any(|(m, p)| m == matcher && p == target) {
            continue;
        }
        let _ = writeln!(
            out,
            "\n;; Resolved target for the file-read* path {path} of {rel}: {}",
            target.display()
        );
        ancestor_block(out, target, "file-read*");
        let _ = writeln!(out, "(allow file-read* ({matcher} {}))", quote(target));
        seen.push((matcher, target.clone()));
    }
    let mut emitted: Vec<(String, &str, PathBuf)> = Vec::new();
    for (ops, matcher, rel_path) in home_candidates(text) {
        let original = PathBuf::from(format!("{}{rel_path}", plan.home.display()));
        let Some(target) = plan.links.get(&original) else {
            continue;
        };
        if emitted
            .iter()
            .any(|(o, m, t)| *o == ops && *m == matcher && t == target)
        {
            continue;
        }
        let _ = writeln!(
            out,
            "\n;; Resolved target for the home-scoped {ops} path {} of {rel}: {}",
            original.display(),
            target.display()
        );
        ancestor_block(out, target, "file-read*");
        let _ = writeln!(out, "(allow {ops} ({matcher} {}))", quote(target));
        emitted.push((ops, matcher, target.clone()));
    }
}

/// After `worktree-common-dir.sb`: the workdir's shared Git directory, read-write.
fn common_dir_rules(out: &mut String, plan: &ProfilePlan) {
    match &plan.worktrees.common_dir {
        Some(dir) if plan.workdir_read_only => {
            out.push_str("\n;; The shared Git directory of this linked worktree: read-only, as the workdir.\n");
            ancestor_block(out, dir, "file-read*");
            let _ = writeln!(out, "(allow file-read* (subpath {}))", quote(dir));
        }
        Some(dir) => {
            out.push_str("\n;; The shared Git directory of this linked worktree: read-write.\n");
            ancestor_block(out, dir, "file-read*");
            let _ = writeln!(
                out,
                "(allow file-read* file-write* (subpath {}))",
                quote(dir)
            );
        }
        None => out.push_str(
            "\n;; No external shared git common dir detected for this selected workdir.\n",
        ),
    }
}

/// After `worktrees.sb`: the repository's other worktrees, read-only.
fn linked_worktree_rules(out: &mut String, plan: &ProfilePlan) {
    if plan.worktrees.linked.is_empty() {
        out.push_str("\n;; No linked git worktree snapshot detected for this selected workdir.\n");
        return;
    }
    for tree in &plan.worktrees.linked {
        let _ = writeln!(
            out,
            "\n;; Linked Git worktree (read-only): {}",
            tree.display()
        );
        ancestor_block(out, tree, "file-read*");
        let _ = writeln!(out, "(allow file-read* (subpath {}))", quote(tree));
    }
}

fn dir_grant(out: &mut String, what: &str, grant: &DirGrant, write: bool) {
    let _ = writeln!(
        out,
        "\n;; ---- {what}: {} ----\n;; Ancestor directory literals: each directory on the way can be listed, not read below.",
        grant.path.display()
    );
    ancestor_block(out, &grant.path, "file-read*");
    let ops = if write {
        "file-read* file-write*"
    } else {
        "file-read*"
    };
    let matcher = if grant.is_dir { "subpath" } else { "literal" };
    let _ = writeln!(out, "(allow {ops} ({matcher} {}))", quote(&grant.path));
}

/// `(allow OPS (literal "/") (literal "/a") …)` for every ancestor of `path` and itself.
fn ancestor_block(out: &mut String, path: &Path, ops: &str) {
    let _ = write!(out, "(allow {ops}");
    for a in ancestors(path) {
        let _ = write!(out, "\n    (literal {})", quote(&a));
    }
    out.push_str("\n)\n");
}

/// `/`, `/a`, `/a/b` for `/a/b`.
pub fn ancestors(path: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = path.ancestors().map(Path::to_path_buf).collect();
    v.reverse();
    v
}

/// A Seatbelt string literal: `"` and `\` escaped. Paths reaching here are UTF-8 without control
/// characters (checked when the plan was resolved).
pub fn quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}
