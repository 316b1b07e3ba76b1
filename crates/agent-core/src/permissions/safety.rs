//! Step 4: checks that no allow rule, hook or mode can waive (only `bypassPermissions` waives
//! the protected-path part).
//!
//! - **Protected paths** (claude-code.md §4.2): writes to version-control, editor, toolchain and
//!   agent configuration (`.git`, `.vscode`, `.cargo`, `.agent`, `.claude`, ...) and to shell and
//!   tool rc files (`.bashrc`, `.npmrc`, ...) ask, wherever they are.
//! - **Critical paths for `rm`/`rmdir`** (§4.3): the root, top-level directories, `$HOME`, the
//!   working directories and their parents, globs directly in those, and a glob or trailing
//!   slash right after a variable (`rm -rf "$DIR"/*`) ask even in `bypassPermissions`.
//! - **Commands that cannot be analysed**: a parse error, a nested script only known at run time
//!   (`bash -c "$X"`, `eval $X`), a command name only known at run time (`$cmd x`), or a command
//!   over 10,000 characters asks in every mode, because deny rules cannot be checked against it.

use std::path::Path;

use super::arguments::positionals;
use super::request::{BashSubject, PathArg};
use super::workdirs::{ResolvedPath, WorkingDirs};
use crate::shell::wrappers::basename;

/// Commands longer than this are never auto-approved (Claude Code's limit).
pub const MAX_AUTO_COMMAND_LEN: usize = 10_000;

/// Directories whose contents are protected, as path-segment sequences.
const PROTECTED_DIRS: &[&[&str]] = &[
    &[".git"],
    &[".config", "git"],
    &[".vscode"],
    &[".idea"],
    &[".husky"],
    &[".cargo"],
    &[".devcontainer"],
    &[".yarn"],
    &[".mvn"],
    &[".claude"],
    &[".agent"],
];

/// File names that are protected wherever they are.
const PROTECTED_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_aliases",
    ".bash_logout",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".profile",
    ".envrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnp.cjs",
    ".pnp.loader.mjs",
    ".pnpmfile.cjs",
    "bunfig.toml",
    ".bunfig.toml",
    ".bazelrc",
    ".bazelversion",
    ".bazeliskrc",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "gradle-wrapper.properties",
    "maven-wrapper.properties",
    ".devcontainer.json",
    ".ripgreprc",
    "pyrightconfig.json",
    ".mcp.json",
    ".claude.json",
];

/// What a safety check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Finding {
    /// A write to a protected path.
    ProtectedWrite(String),
    /// `rm`/`rmdir` of a critical path.
    CriticalRm(String),
    /// A command the parse cannot vouch for.
    Unanalysable(String),
    /// A tool that asks the user something: no mode answers for them.
    UserInteraction(String),
    /// An option of a known program that runs another program (`git -c core.pager=…`,
    /// `--ext-diff`, `npm --script-shell=…`).
    RunsProgram(String),
}

impl Finding {
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::ProtectedWrite(p) => format!(
                "writes to protected path {p} (version-control, editor, toolchain or agent configuration) always need approval"
            ),
            Self::CriticalRm(p) => format!(
                "removes critical path {p} (the root, a top-level directory, the home directory, or a working directory or its parent); this always needs approval"
            ),
            Self::RunsProgram(why) => format!(
                "{why}; options that run another program or change the system always need approval, whatever rule allowed the program"
            ),
            Self::UserInteraction(tool) => format!(
                "{tool} asks the user a question; no mode or rule answers it in their place"
            ),
            Self::Unanalysable(why) => format!(
                "{why}; commands that cannot be fully analysed always need approval, because deny rules cannot be checked against them"
            ),
        }
    }
}

/// Whether a path (either form) is protected.
pub(crate) fn is_protected(path: &ResolvedPath, wd: &WorkingDirs) -> bool {
    path.forms().any(|p| protected_form(p, wd.cwd()))
}

fn protected_form(path: &Path, cwd: &Path) -> bool {
    let segments: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    for (i, _) in segments.iter().enumerate() {
        for dir in PROTECTED_DIRS {
            if segments[i..].starts_with(dir) {
                // `.claude/worktrees` is where Claude Code keeps worktrees, not configuration.
                let claude_worktree =
                    dir == &[".claude"] && segments.get(i + 1) == Some(&"worktrees");
                if !claude_worktree {
                    return true;
                }
            }
        }
    }
    if segments.last().is_some_and(|f| PROTECTED_FILES.contains(f)) {
        return true;
    }
    // `HEAD`, `objects/` and `refs/` at the top of the working directory would turn it into a
    // bare repository that git then trusts.
    if let Ok(rel) = path.strip_prefix(cwd) {
        let first = rel.components().next().and_then(|c| c.as_os_str().to_str());
        if matches!(first, Some("HEAD" | "objects" | "refs")) {
            return true;
        }
    }
    false
}

/// The first protected write of an edit tool or a Bash command.
pub(crate) fn protected_write<'a>(
    paths: impl IntoIterator<Item = &'a ResolvedPath>,
    wd: &WorkingDirs,
) -> Option<Finding> {
    paths
        .into_iter()
        .find(|p| is_protected(p, wd))
        .map(|p| Finding::ProtectedWrite(p.lexical.display().to_string()))
}

/// Bash writes as resolved paths (those known before run time).
pub(crate) fn bash_write_paths(writes: &[PathArg]) -> impl Iterator<Item = &ResolvedPath> {
    writes.iter().filter_map(|w| w.path.as_ref())
}

/// The first `rm`/`rmdir` of a critical path.
pub(crate) fn critical_rm(bash: &BashSubject, wd: &WorkingDirs) -> Option<Finding> {
    let script = bash.parsed.as_ref().ok()?;
    for cmd in &script.commands {
        let words = cmd.effective_words();
        let Some(name) = words
            .first()
            .filter(|w| w.is_static())
            .map(|w| basename(&w.text))
        else {
            continue;
        };
        if !matches!(name, "rm" | "rmdir") {
            continue;
        }
        for arg in positionals(words) {
            let text = arg.text.as_str();
            if arg.dynamic {
                let bare = arg.raw.trim_matches('"').trim_end_matches('/');
                if matches!(
                    bare,
                    "$PWD"
                        | "${PWD}"
                        | "$OLDPWD"
                        | "${OLDPWD}"
                        | "$(pwd)"
                        | "$(pwd -P)"
                        | "$(pwd -L)"
                        | "`pwd`"
                        | "~+"
                        | "~-"
                ) {
                    return Some(Finding::CriticalRm(format!(
                        "`{}` (the current directory)",
                        arg.raw
                    )));
                }
                if arg.raw.contains('$') && (text.ends_with('/') || text.ends_with('*')) {
                    return Some(Finding::CriticalRm(format!(
                        "`{}` (a glob or trailing slash right after a variable)",
                        arg.raw
                    )));
                }
                continue;
            }
            if arg.glob {
                // The directory the glob expands in: everything before the first glob character.
                let cut = text.find(['*', '?', '[', '{']).unwrap_or(text.len());
                let dir = match text[..cut].rfind('/') {
                    Some(0) => "/",
                    Some(i) => &text[..i],
                    None => ".",
                };
                let resolved = wd.resolve(dir);
                if resolved.forms().any(|p| wd.is_critical(p)) {
                    return Some(Finding::CriticalRm(format!(
                        "`{}` (a glob directly in {})",
                        arg.raw,
                        resolved.lexical.display()
                    )));
                }
                continue;
            }
            let resolved = wd.resolve(text);
            if resolved.forms().any(|p| wd.is_critical(p)) {
                return Some(Finding::CriticalRm(resolved.lexical.display().to_string()));
            }
        }
    }
    None
}

/// Why a Bash command cannot be fully analysed, if it cannot.
pub(crate) fn unanalysable(bash: &BashSubject) -> Option<Finding> {
    if bash.text.len() > MAX_AUTO_COMMAND_LEN {
        return Some(Finding::Unanalysable(format!(
            "the command is longer than {MAX_AUTO_COMMAND_LEN} characters"
        )));
    }
    let script = match &bash.parsed {
        Ok(s) => s,
        Err(e) => return Some(Finding::Unanalysable(e.message.clone())),
    };
    if let Some(issue) = script.issues.first() {
        return Some(Finding::Unanalysable(issue.detail.clone()));
    }
    script
        .commands
        .iter()
        .find(|c| c.has_dynamic_name())
        .map(|c| {
            Finding::Unanalysable(format!(
                "the command name `{}` is only known at run time",
                c.words.first().map_or("", |w| w.raw.as_str())
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn wd() -> WorkingDirs {
        WorkingDirs::new(
            Path::new("/w/p"),
            Path::new("/h/u"),
            &[PathBuf::from("/data/x")],
        )
    }

    #[test]
    fn protected() {
        let w = wd();
        for p in [
            ".git/config",
            ".git/hooks/pre-commit",
            "a/.vscode/settings.json",
            "/h/u/.bashrc",
            "/h/u/.config/git/config",
            ".claude/settings.json",
            ".agent/settings.json",
            "HEAD",
            "refs/heads/x",
            "sub/.npmrc",
        ] {
            assert!(is_protected(&w.resolve(p), &w), "{p}");
        }
        for p in [
            "src/main.rs",
            ".gitignore",
            ".claude/worktrees/x/file",
            "/h/u/.config/other",
            "docs/HEAD",
        ] {
            assert!(!is_protected(&w.resolve(p), &w), "{p}");
        }
    }

    fn rm(cmd: &str) -> Option<Finding> {
        critical_rm(&BashSubject::new(cmd, &wd()), &wd())
    }

    #[test]
    fn critical() {
        for c in [
            "rm -rf /",
            "rm -rf /usr",
            "rm -rf ~",
            "rm -rf $HOME",
            "rm -rf ~/",
            "rm -rf .",
            "rm -rf ..",
            "rm -rf /w",
            "rm -rf *",
            "rm -rf ./*",
            "rm -rf /data/x/*",
            "rm -rf \"$DIR\"/*",
            "rm -rf $DIR/",
            "rmdir /w/p",
            "sudo rm -rf /",
            "echo $(rm -rf /)",
            "rm -rf /us*",
            "rm -- -x /",
        ] {
            assert!(rm(c).is_some(), "{c}");
        }
        for c in [
            "rm -rf build",
            "rm -rf /w/p/target",
            "rm src/*.o",
            "rm -rf $DIR",
            "ls /",
            "rm -rf /data/x/y",
        ] {
            assert!(rm(c).is_none(), "{c}: {:?}", rm(c));
        }
    }

    #[test]
    fn unanalysable_commands() {
        let w = wd();
        for c in [
            "echo \"x",
            "$cmd x",
            "bash -c \"$X\"",
            "eval $X",
            "{rm,-rf,/}",
            "x=rm; $x -rf /",
        ] {
            assert!(unanalysable(&BashSubject::new(c, &w)).is_some(), "{c}");
        }
        for c in ["git status", "echo $X", "FOO=$(id) make"] {
            assert!(unanalysable(&BashSubject::new(c, &w)).is_none(), "{c}");
        }
        let long = "echo ".to_owned() + &"x".repeat(MAX_AUTO_COMMAND_LEN);
        assert!(unanalysable(&BashSubject::new(&long, &w)).is_some());
    }
}
