//! Rendering a [`Plan`] as a macOS Seatbelt (`sandbox-exec`) policy.
//!
//! Order (later rules win in Seatbelt): the selected profiles in stage order, the read-only
//! add-dirs, the read-write add-dirs, the workdir (each with ancestor `literal`s), the protected
//! paths inside writable directories (write-denied), then the appended profiles.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::selection::{DirGrant, Plan};

/// The placeholder this project's profiles use for the home directory.
pub const HOME_PLACEHOLDER: &str = "__AGENT_HOME_DIR__";
/// Document 001's placeholder, replaced too so its trees assemble unchanged.
pub const SAFEHOUSE_HOME_PLACEHOLDER: &str = "__SAFEHOUSE_REPLACE_ME_WITH_ABSOLUTE_HOME_DIR__";

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

/// The policy text. Identical inputs give identical bytes.
pub fn render(plan: &Plan) -> String {
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
        let _ = writeln!(out, "\n;; ---- {} ----", part.profile.rel);
        let text = part
            .profile
            .text
            .replace(&format!("\"{HOME_PLACEHOLDER}\""), &home)
            .replace(&format!("\"{SAFEHOUSE_HOME_PLACEHOLDER}\""), &home);
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    for grant in &plan.add_dirs_ro {
        dir_grant(&mut out, "add-dirs-ro", grant, false);
    }
    for grant in &plan.add_dirs {
        dir_grant(&mut out, "add-dirs", grant, true);
    }
    if let Some((grant, source)) = &plan.workdir {
        dir_grant(
            &mut out,
            &format!("workdir (source: {source})"),
            grant,
            true,
        );
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
    out
}

fn dir_grant(out: &mut String, what: &str, grant: &DirGrant, write: bool) {
    let _ = writeln!(
        out,
        "\n;; ---- {what}: {} ----\n;; Ancestor directory literals: each directory on the way can be listed, not read below.",
        grant.path.display()
    );
    out.push_str("(allow file-read*");
    for a in ancestors(&grant.path) {
        let _ = write!(out, "\n    (literal {})", quote(&a));
    }
    out.push_str(")\n");
    let ops = if write {
        "file-read* file-write*"
    } else {
        "file-read*"
    };
    let _ = writeln!(out, "(allow {ops} (subpath {}))", quote(&grant.path));
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
