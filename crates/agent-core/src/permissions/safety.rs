//! Step 4: checks that no allow rule, hook or mode can waive (only `bypassPermissions` waives
//! the protected-path part).
//!
//! - **Protected paths** (claude-code.md §4.2): writes to version-control, editor, toolchain and
//!   agent configuration (`.git`, `.vscode`, `.cargo`, `.agent`, `.claude`, ...) and to shell and
//!   tool rc files (`.bashrc`, `.npmrc`, ...) ask, at any depth below the working directory that
//!   contains the path, or anywhere in a path outside every working directory.
//! - **Critical paths for `rm`/`rmdir`** (§4.3): the root, top-level directories, `$HOME`, the
//!   working directories and their parents, globs directly in those, and a glob or trailing
//!   slash right after a variable (`rm -rf "$DIR"/*`) ask even in `bypassPermissions`.
//! - **Commands that cannot be analysed**: a parse error, a nested script only known at run time
//!   (`bash -c "$X"`, `eval $X`), a command name only known at run time (`$cmd x`), `~` after
//!   the script assigns `HOME`, or a command over 10,000 characters asks in every mode, because
//!   deny rules cannot be checked against it.
//!
//! Protected names are compared as case-insensitive, HFS+ and NTFS file systems open them
//! ([`super::protected_names`]); a command that links to a protected path writes it
//! ([`super::links`]); variables and shell options that are not known harmless
//! ([`super::environment`]) ask like program-running options.

use std::path::{Component, Path};

use super::arguments::positionals;
use super::protected_names;
use super::request::{BashSubject, PathArg};
use super::workdirs::{ResolvedPath, WorkingDirs};
use crate::shell::wrappers::basename;

/// Commands longer than this are never auto-approved (Claude Code's limit).
pub(crate) const MAX_AUTO_COMMAND_LEN: usize = 10_000;

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
    /// A variable set that is not known harmless (`PATH=.`, `GIT_EXTERNAL_DIFF=rm git diff`),
    /// or a shell option the checker does not model.
    Environment(String),
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
            Self::Environment(why) => format!(
                "{why}; variables and shell options that change what programs run always need approval, whatever rule allowed the command"
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
///
/// Each form is judged below the innermost working directory that contains it (the cwd or an
/// additional directory, in lexical or canonical form), and whole when it is outside every
/// working directory. So a working directory that itself lies inside a protected directory
/// (the shadow workspace under `~/.agent/workspaces/…`, a checkout under `~/.cargo/git/…`)
/// accepts ordinary writes, while the same protected names below it (`tree/.agent/…`,
/// `tree/.git/…`) and everything outside it (`~/.agent/settings.json`) stay protected. A form
/// whose symlinks lead out of the working directories is judged on its whole resolved path.
pub(crate) fn is_protected(path: &ResolvedPath, wd: &WorkingDirs) -> bool {
    path.forms().any(|p| protected_form(p, wd))
}

/// The normal segments of an absolute, normalised path (a segment that is not UTF-8 cannot be
/// a protected name and stands as `""`, so positions still line up).
fn segments(path: &Path) -> Vec<&str> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_str().unwrap_or("")),
            _ => None,
        })
        .collect()
}

fn protected_form(path: &Path, wd: &WorkingDirs) -> bool {
    // The innermost working directory containing the path (segment-wise), as a count of its
    // segments; 0 (the root) when none does, so the whole path is judged.
    let base = wd
        .dirs()
        .iter()
        .filter(|d| path.starts_with(d))
        .map(|d| segments(d).len())
        .max()
        .unwrap_or(0);
    protected_below(&segments(path), base)
}

/// Whether `segments` name a protected path below its first `base` segments (the working
/// directory). A protected directory counts when it lies below the working directory, that is
/// when its last segment does: one that contains the working directory, or is it, does not
/// (`~/.agent` for `~/.agent/workspaces/x/tree`), while `.config/git` still counts for the
/// working directory `~/.config`.
fn protected_below(segments: &[&str], base: usize) -> bool {
    // Compared as a case-insensitive (or Windows, or HFS+) file system would open them.
    let folded: Vec<String> = segments.iter().map(|s| protected_names::fold(s)).collect();
    let names_at = |at: usize, name: &str| {
        folded
            .get(at)
            .is_some_and(|s| protected_names::names(s, name))
    };
    for i in 0..segments.len() {
        for dir in PROTECTED_DIRS {
            let here = dir
                .iter()
                .enumerate()
                .all(|(k, name)| names_at(i + k, name));
            if i + dir.len() > base && here {
                // `.claude/worktrees` is where Claude Code keeps worktrees, not configuration
                // (spelled exactly: another spelling stays protected).
                let claude_worktree =
                    dir == &[".claude"] && segments.get(i + 1) == Some(&"worktrees");
                if !claude_worktree {
                    return true;
                }
            }
        }
    }
    if segments.len() > base
        && PROTECTED_FILES
            .iter()
            .any(|f| names_at(segments.len() - 1, f))
    {
        return true;
    }
    // `HEAD`, `objects/` and `refs/` at the top of the working directory would turn it into a
    // bare repository that git then trusts.
    ["HEAD", "objects", "refs"]
        .iter()
        .any(|name| names_at(base, name))
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
    if let Some(why) = &bash.home_unknown {
        return Some(Finding::Unanalysable(why.clone()));
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

    /// Protected names in every spelling that a case-insensitive (macOS, Windows), HFS+ or
    /// NTFS file system opens as the protected file itself (issue 24, class 14).
    #[test]
    fn protected_names_match_in_every_spelling_the_file_system_opens() {
        let w = wd();
        for p in [
            ".Git/config",
            ".GIT/hooks/x",
            ".BASHRC",
            ".Bashrc",
            "sub/.NPMRC",
            ".VSCode/settings.json",
            ".Claude/settings.json",
            ".AGENT/settings.json",
            "/h/u/.Config/Git/config",
            ".git./config",
            ".git::$INDEX_ALLOCATION/config",
            "GIT~1/config",
            ".g\u{200c}it/config",
            ".bashrc::$DATA",
            ".Mcp.Json",
            "Head",
            "OBJECTS/ab/cd",
            "Refs/heads/main",
        ] {
            assert!(is_protected(&w.resolve(p), &w), "{p}");
        }
        for p in [
            ".gitignore",
            "docs/Head",
            "src/Config.rs",
            "GIT~/x",
            "bashrc",
        ] {
            assert!(!is_protected(&w.resolve(p), &w), "{p}");
        }
    }

    fn join(base: &str, segs: &[&str]) -> String {
        std::iter::once(base)
            .chain(segs.iter().copied())
            .collect::<Vec<_>>()
            .join("/")
    }

    fn protected_at(w: &WorkingDirs, p: &str) -> bool {
        is_protected(&w.resolve(p), w)
    }

    /// For every protected directory: a working directory inside it (directly, or deeper)
    /// accepts ordinary writes, the same directory below the working directory is still
    /// protected, and the outer protected directory outside the working directory too.
    #[test]
    fn a_working_directory_inside_a_protected_directory() {
        for dir in PROTECTED_DIRS {
            let outer = join("/h/u", dir);
            for cwd in [join(&outer, &["x", "tree"]), outer.clone()] {
                let w = WorkingDirs::new(Path::new(&cwd), Path::new("/h/u"), &[]);
                for p in [
                    "src/main.rs".to_owned(),
                    "new.txt".to_owned(),
                    "a/b/c.json".to_owned(),
                    format!("{cwd}/src/lib.rs"),
                    "docs/HEAD".to_owned(),
                ] {
                    assert!(!protected_at(&w, &p), "cwd {cwd}: {p}");
                }
                for p in [
                    join(".", dir) + "/config",
                    join("sub", dir) + "/hooks/x",
                    join(&cwd, dir) + "/settings.json",
                    join("a/b", dir) + "/c/d",
                    ".agent/settings.json".to_owned(),
                    ".git/config".to_owned(),
                    "sub/.git/hooks/x".to_owned(),
                    ".bashrc".to_owned(),
                    "sub/.npmrc".to_owned(),
                    "HEAD".to_owned(),
                    "objects/ab/cdef".to_owned(),
                    "refs/heads/main".to_owned(),
                    // Outside the working directory: the whole path counts.
                    join("/elsewhere", dir) + "/f",
                    "../.bashrc".to_owned(),
                ] {
                    assert!(protected_at(&w, &p), "cwd {cwd}: {p}");
                }
                // The rest of the outer protected directory is outside the deeper working
                // directory (when the working directory is the protected directory itself,
                // its contents are the working directory's).
                if cwd != outer {
                    for p in [
                        format!("{outer}/config"),
                        format!("{outer}/y/z"),
                        format!("{cwd}/../{}", dir.last().unwrap()),
                        format!("{cwd}/../../settings.json"),
                    ] {
                        assert!(protected_at(&w, &p), "cwd {cwd}: {p}");
                    }
                }
            }
            // The same as an additional working directory; the cwd is elsewhere.
            let add = join(&outer, &["x"]);
            let w = WorkingDirs::new(Path::new("/w/p"), Path::new("/h/u"), &[PathBuf::from(&add)]);
            assert!(!protected_at(&w, &format!("{add}/src/a.rs")), "{add}");
            assert!(!protected_at(&w, "src/a.rs"), "{add}");
            for p in [
                join(&add, dir) + "/f",
                format!("{add}/.bashrc"),
                format!("{add}/refs/x"),
                format!("{outer}/f"),
                join("/w/p", dir) + "/f",
                "/w/p/HEAD".to_owned(),
            ] {
                assert!(protected_at(&w, &p), "add {add}: {p}");
            }
        }
    }

    /// A protected directory that starts in the working directory and ends below it counts:
    /// with `~/.config` as the working directory, `git/config` is `~/.config/git/config`.
    #[test]
    fn a_protected_directory_ending_below_the_working_directory() {
        let w = WorkingDirs::new(Path::new("/h/u/.config"), Path::new("/h/u"), &[]);
        assert!(protected_at(&w, "git/config"));
        assert!(protected_at(&w, "/h/u/.config/git/ignore"));
        assert!(!protected_at(&w, "gitx/config"));
        assert!(!protected_at(&w, "nvim/init.lua"));
        let w = WorkingDirs::new(Path::new("/h/u/.config/git"), Path::new("/h/u"), &[]);
        assert!(!protected_at(&w, "notes.txt"));
        assert!(protected_at(&w, ".config/git/config"));
    }

    /// Protected file names, below a working directory that lies inside protected directories
    /// and below one whose own name is a protected file's name.
    #[test]
    fn protected_files_below_any_working_directory() {
        for f in PROTECTED_FILES {
            for cwd in [
                "/h/u/.agent/workspaces/x/tree".to_owned(),
                "/h/u/.cargo/git/checkouts/x".to_owned(),
                format!("/h/u/{f}/tree"),
                format!("/h/u/{f}"),
            ] {
                let w = WorkingDirs::new(Path::new(&cwd), Path::new("/h/u"), &[]);
                for p in [
                    (*f).to_owned(),
                    format!("sub/{f}"),
                    format!("{cwd}/a/b/{f}"),
                    format!("/elsewhere/{f}"),
                ] {
                    assert!(protected_at(&w, &p), "cwd {cwd}: {p}");
                }
                for p in ["x.txt".to_owned(), format!("{f}.bak"), format!("{f}/inner")] {
                    assert!(!protected_at(&w, &p), "cwd {cwd}: {p}");
                }
            }
        }
    }

    /// Nested working directories: the innermost one containing the path is the one below
    /// which it is judged.
    #[test]
    fn the_innermost_working_directory_counts() {
        let w = WorkingDirs::new(
            Path::new("/h/u"),
            Path::new("/h/u"),
            &[PathBuf::from("/h/u/.cargo/git/checkouts/x")],
        );
        assert!(!protected_at(&w, ".cargo/git/checkouts/x/src/lib.rs"));
        assert!(protected_at(&w, ".cargo/git/checkouts/x/.git/config"));
        assert!(protected_at(&w, ".cargo/git/checkouts/x/HEAD"));
        assert!(protected_at(&w, ".cargo/git/checkouts/y/src/lib.rs"));
        assert!(protected_at(&w, ".cargo/config.toml"));
        assert!(protected_at(&w, ".agent/settings.json"));
        assert!(protected_at(&w, ".bashrc"));
        assert!(!protected_at(&w, "notes.md"));
    }

    /// Outside every working directory the whole path is judged.
    #[test]
    fn paths_outside_the_working_directories_are_judged_whole() {
        let w = WorkingDirs::new(
            Path::new("/h/u/.agent/workspaces/x/tree"),
            Path::new("/h/u"),
            &[PathBuf::from("/h/u/.cargo/git/checkouts/y")],
        );
        for p in [
            "/h/u/.agent/settings.json",
            "/h/u/.agent/workspaces/x/meta.json",
            "/h/u/.agent/workspaces/x/tree-other/a",
            "/h/u/.cargo/config.toml",
            "/h/u/.cargo/git/checkouts/y-other/a",
            "/other/.git/config",
            "/other/a/.vscode/settings.json",
            "/h/u/.config/git/config",
            "/h/u/.bashrc",
            "/elsewhere/sub/.npmrc",
            "~/.zshrc",
            "../meta.json",
            "../../../settings.json",
            "../tree/../../x/y",
        ] {
            assert!(protected_at(&w, p), "{p}");
        }
        for p in ["/tmp/plain.txt", "/h/u/notes.md", "/srv/a/b.rs"] {
            assert!(!protected_at(&w, p), "{p}");
        }
        // `..` is folded before the check: these stay inside the working directory.
        for p in ["a/../b.rs", "./src/../src/x.rs", "../tree/src/y.rs"] {
            assert!(!protected_at(&w, p), "{p}");
        }
    }

    /// `.claude/worktrees` (Claude Code's worktrees) stays writable, as a place below the cwd
    /// and as a working directory; the configuration around it does not.
    #[test]
    fn claude_worktrees() {
        let w = WorkingDirs::new(Path::new("/p"), Path::new("/h/u"), &[]);
        assert!(!protected_at(&w, ".claude/worktrees/x/file"));
        assert!(protected_at(&w, ".claude/worktrees/x/.git/config"));
        assert!(protected_at(
            &w,
            ".claude/worktrees/x/.claude/settings.json"
        ));
        assert!(protected_at(&w, ".claude/settings.json"));
        let w = WorkingDirs::new(Path::new("/p/.claude/worktrees/w"), Path::new("/h/u"), &[]);
        assert!(!protected_at(&w, "src/x.rs"));
        assert!(!protected_at(&w, "/p/.claude/worktrees/other/f"));
        assert!(protected_at(&w, ".claude/settings.json"));
        assert!(protected_at(&w, ".git"));
        assert!(protected_at(&w, "/p/.claude/settings.json"));
        assert!(protected_at(&w, "../../settings.local.json"));
    }

    /// Both forms of a path: each is judged below the working directory that contains it (in
    /// lexical or canonical form), and a resolved form that leaves the working directories is
    /// judged whole.
    #[test]
    fn both_path_forms() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let agent = home.join(".agent");
        let tree = agent.join("workspaces/x/tree");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        std::fs::create_dir_all(tree.join(".git")).unwrap();
        std::fs::create_dir_all(agent.join("workspaces/other")).unwrap();
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        std::fs::create_dir_all(root.join("plain")).unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, tree.join(name)).unwrap();
        };
        link(&agent, "out");
        link(&home.join(".cargo"), "cfg");
        link(&tree.join("src"), "alias");
        link(&tree.join(".git"), "g");
        link(&agent.join("workspaces/other"), "sib");
        link(&root.join("plain"), "plain");
        // The working directory named through a symlink: its lexical form and its canonical
        // form are both working directories.
        std::os::unix::fs::symlink(&home, root.join("home-link")).unwrap();
        let lexical_cwd = root.join("home-link/.agent/workspaces/x/tree");
        for cwd in [&tree, &lexical_cwd] {
            let w = WorkingDirs::new(cwd, &home, &[]);
            for p in ["src/a.rs", "alias/b.rs", "new.txt", "plain/x"] {
                let r = w.resolve(p);
                assert!(!is_protected(&r, &w), "cwd {}: {p} {r:?}", cwd.display());
            }
            for p in [
                // The resolved form leaves the working directory: judged whole.
                "out/settings.json",
                "cfg/config.toml",
                "sib/file",
                // Kernel order: `sib/..` is `workspaces`, outside, not the tree.
                "sib/../settings.json",
                // The resolved form is inside, below `.git`.
                "g/config",
                ".git/config",
                ".agent/settings.json",
                "sub/.git/hooks/x",
                ".bashrc",
                "../../../settings.json",
            ] {
                let r = w.resolve(p);
                assert!(is_protected(&r, &w), "cwd {}: {p} {r:?}", cwd.display());
            }
        }
        // The same check, one form at a time.
        let w = WorkingDirs::new(&tree, &home, &[]);
        let inside = |p: &Path| protected_form(p, &w);
        assert!(!inside(&tree.join("src/a.rs")));
        assert!(inside(&tree.join(".git/config")));
        assert!(inside(&agent.join("settings.json")));
        assert!(!inside(&root.join("plain/x")));
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
