//! Git inside the shadow: when the real folder is a Git repository, the shadow gets a `.git`
//! of its own, so `git status`, `git diff`, `git log`, `git add -p` and `git stash` work there
//! and show the agent's changes against the user's HEAD, while the real repository's `.git` is
//! only ever read.
//!
//! The shadow's `.git` is a fresh repository (`git init`, no templates, the real one's object
//! format) whose `objects/info/alternates` names the real object directory, so history is
//! shared without a copy and new objects land in the shadow only. The real repository's refs
//! and HEAD (through `git for-each-ref` and `git symbolic-ref`), its index (a file copy, so
//! what the user staged stays staged), `shallow` and `info/exclude`, and an allowlist of its
//! local configuration are brought in. Tracked paths the workspace does not import (ignored by
//! `.agentignore`, links that leave the folder, `.agent/`) are marked skip-worktree so they do
//! not show as deleted. docs/workspace.md (Git in the shadow) gives the reasons.
//!
//! Git runs only against the real repository's read commands (`rev-parse`, `for-each-ref`,
//! `symbolic-ref`, `config --list`, with optional locks off) and against the shadow's `.git`
//! while this module creates it, before any tool runs there. Later operations never run git in
//! the shadow: its `.git` belongs to the agent from then on (it could point `commondir` or a
//! ref directory at the real repository).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::error::{WorkspaceError, io};

/// The name of the file, in the workspace's state directory, that records what was set up.
const RECORD: &str = "git.json";

/// The local configuration keys copied into the shadow's `.git/config` (lowercase, as `git
/// config --list` prints them). `*` stands for one name (a remote's, a branch's). Anything
/// else (hooks, `core.worktree`, `core.fsmonitor`, filters, includes, remote URLs) stays out:
/// the shadow runs no command the user configured and cannot fetch or push.
const CONFIG_ALLOWED: &[&str] = &[
    "core.filemode",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "user.name",
    "user.email",
    "remote.*.fetch",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
];

/// What [`setup`] did for a shadow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitReport {
    /// The real repository's HEAD commit when the shadow's `.git` was made (absent before the
    /// first commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The branch HEAD named then (`refs/heads/main`); absent when detached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Why the shadow has no `.git` (git missing, an unreadable repository); absent when it
    /// was set up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// Gives the fresh `shadow` a `.git` of its own when `real` holds a `.git` (a directory, or a
/// `gitdir:` file of a linked worktree or a submodule: git resolves both). `None` when `real`
/// has no `.git`. A repository that cannot be set up is not an error: the report says why and
/// the shadow is a plain folder. The record is saved in `state_dir` for [`moved_since`].
///
/// # Errors
/// [`WorkspaceError::Io`] when the record cannot be written.
pub(super) fn setup(
    real: &Path,
    shadow: &Path,
    state_dir: &Path,
) -> Result<Option<GitReport>, WorkspaceError> {
    let dot_git = real.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        let _ = std::fs::remove_file(state_dir.join(RECORD));
        return Ok(None);
    };
    let report = if meta.file_type().is_symlink() {
        skipped(format!(
            "{} is a symlink, which is never followed; the shadow has no .git (make it a directory or a gitdir: file)",
            dot_git.display()
        ))
    } else {
        match build(real, shadow) {
            Ok(r) => r,
            Err(why) => {
                // Leave no half-made repository behind.
                let _ = std::fs::remove_dir_all(shadow.join(".git"));
                skipped(format!(
                    "the shadow has no .git: {why} (git in the shadow shows nothing; the workspace works without it)"
                ))
            }
        }
    };
    let path = state_dir.join(RECORD);
    let bytes = serde_json::to_vec(&report).map_err(|e| WorkspaceError::State {
        path: path.clone(),
        why: e.to_string(),
    })?;
    std::fs::write(&path, bytes).map_err(io(&path))?;
    Ok(Some(report))
}

fn skipped(why: String) -> GitReport {
    GitReport {
        skipped: Some(why),
        ..GitReport::default()
    }
}

/// A message when the real repository's HEAD is no longer what the shadow's `.git` was made
/// from (the user committed, or switched branches, in the real folder): the shadow's refs stay
/// as they were, so git there shows the user's new commits as uncommitted changes. `None`
/// when nothing moved or there is no git record.
pub(super) fn moved_since(real: &Path, state_dir: &Path) -> Option<String> {
    let record: GitReport =
        serde_json::from_slice(&std::fs::read(state_dir.join(RECORD)).ok()?).ok()?;
    if record.skipped.is_some() {
        return None;
    }
    let git = Git::new(real);
    let branch = git.ok(&["symbolic-ref", "-q", "HEAD"]);
    let head = git.ok(&["rev-parse", "-q", "--verify", "HEAD"]);
    if branch == record.branch && head == record.head {
        return None;
    }
    let name = |b: &Option<String>, h: &Option<String>| match (b, h) {
        (Some(b), Some(h)) => format!("{b} at {}", short(h)),
        (Some(b), None) => format!("{b} (no commit)"),
        (None, Some(h)) => format!("detached at {}", short(h)),
        (None, None) => "no HEAD".to_owned(),
    };
    Some(format!(
        "the real repository's HEAD moved ({} -> {}); the shadow's git still has the refs it was made with, so it shows those commits' changes as uncommitted; `agent workspace discard` rebuilds the shadow and its .git (it drops the shadow's changes)",
        name(&record.branch, &record.head),
        name(&branch, &head),
    ))
}

fn short(oid: &str) -> &str {
    &oid[..oid.len().min(12)]
}

/// Makes `shadow/.git`. Errors are messages for the report.
fn build(real: &Path, shadow: &Path) -> Result<GitReport, String> {
    let real_git = Git::new(real);
    real_git
        .run(&["--version"], None)
        .map_err(|e| format!("git cannot be run ({e})"))?;
    let paths = real_git.run(
        &[
            "rev-parse",
            "--path-format=absolute",
            "--show-object-format",
            "--git-dir",
            "--git-path",
            "objects",
            "--git-path",
            "index",
            "--git-path",
            "shallow",
            "--git-path",
            "info/exclude",
        ],
        None,
    )?;
    let lines: Vec<&str> = paths.lines().collect();
    let [format, git_dir, objects, index, shallow, exclude] = lines[..] else {
        return Err(format!("git rev-parse answered {paths:?}"));
    };
    let (git_dir, objects) = (PathBuf::from(git_dir), PathBuf::from(objects));

    let shadow_git = Git::new(shadow);
    shadow_git.run(
        &[
            "init",
            "-q",
            "--template=",
            &format!("--object-format={format}"),
        ],
        None,
    )?;
    let dot_git = shadow.join(".git");
    let info = dot_git.join("objects/info");
    std::fs::create_dir_all(&info).map_err(|e| format!("{}: {e}", info.display()))?;
    let alternates = format!("{}\n", objects.display());
    write(&info.join("alternates"), alternates.as_bytes())?;

    // Refs, then HEAD.
    let refs = real_git.run(&["for-each-ref", "--format=%(objectname) %(refname)"], None)?;
    let mut updates = String::new();
    for line in refs.lines() {
        if let Some((oid, name)) = line.split_once(' ') {
            updates.push_str(&format!("create {name} {oid}\n"));
        }
    }
    if !updates.is_empty() {
        shadow_git.run(&["update-ref", "--stdin"], Some(&updates))?;
    }
    let branch = real_git.ok(&["symbolic-ref", "-q", "HEAD"]);
    let head = real_git.ok(&["rev-parse", "-q", "--verify", "HEAD"]);
    match (&branch, &head) {
        (Some(b), _) => {
            shadow_git.run(&["symbolic-ref", "HEAD", b], None)?;
        }
        (None, Some(h)) => {
            shadow_git.run(&["update-ref", "--no-deref", "HEAD", h], None)?;
        }
        (None, None) => return Err("the repository has no HEAD".into()),
    }

    // The index (and a split index's shared part), shallow and info/exclude: byte copies.
    copy_if_present(Path::new(index), &dot_git.join("index"))?;
    if let Ok(entries) = std::fs::read_dir(&git_dir) {
        for e in entries.flatten() {
            let name = e.file_name();
            if name.to_string_lossy().starts_with("sharedindex.") {
                copy_if_present(&e.path(), &dot_git.join(&name))?;
            }
        }
    }
    copy_if_present(Path::new(shallow), &dot_git.join("shallow"))?;
    std::fs::create_dir_all(dot_git.join("info")).map_err(|e| e.to_string())?;
    copy_if_present(Path::new(exclude), &dot_git.join("info/exclude"))?;

    // The allowlisted local configuration.
    let config = real_git
        .run(&["config", "--local", "--list", "-z"], None)
        .unwrap_or_default();
    for item in config.split('\0') {
        let Some((key, value)) = item.split_once('\n') else {
            continue;
        };
        if config_allowed(key) {
            shadow_git.run(&["config", "--add", key, value], None)?;
        }
    }

    // Tracked paths the workspace left out would show as deleted: mark them skip-worktree.
    let missing = shadow_git.run(&["ls-files", "-z", "--deleted"], None)?;
    if !missing.is_empty() {
        shadow_git.run(
            &["update-index", "-z", "--skip-worktree", "--stdin"],
            Some(&missing),
        )?;
    }
    Ok(GitReport {
        head,
        branch,
        skipped: None,
    })
}

/// Whether `key` (lowercase section and variable) is in [`CONFIG_ALLOWED`].
fn config_allowed(key: &str) -> bool {
    CONFIG_ALLOWED.iter().any(
        |pattern| match (pattern.split_once(".*."), key.split_once('.')) {
            (Some((section, variable)), Some((key_section, rest))) => {
                key_section == section
                    && rest
                        .rsplit_once('.')
                        .is_some_and(|(name, var)| !name.is_empty() && var == variable)
            }
            (None, _) => *pattern == key,
            (Some(_), None) => false,
        },
    )
}

fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    std::fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()))
}

fn copy_if_present(from: &Path, to: &Path) -> Result<(), String> {
    match std::fs::read(from) {
        Ok(data) => write(to, &data),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", from.display())),
    }
}

/// `git -C DIR`, with the caller's `GIT_*` environment removed (so no `GIT_DIR`,
/// `GIT_INDEX_FILE` or `GIT_OBJECT_DIRECTORY` redirects it), discovery stopped at `DIR`'s
/// parent, optional locks off (a read never refreshes the real index) and no prompts.
struct Git<'a> {
    dir: &'a Path,
}

impl<'a> Git<'a> {
    fn new(dir: &'a Path) -> Self {
        Self { dir }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(&key);
            }
        }
        if let Some(parent) = self.dir.parent() {
            cmd.env("GIT_CEILING_DIRECTORIES", parent);
        }
        cmd.env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .arg("-C")
            .arg(self.dir);
        cmd
    }

    /// Runs git with `args` (and `input` on stdin); its stdout, or a message with its stderr.
    fn run<S: AsRef<OsStr>>(&self, args: &[S], input: Option<&str>) -> Result<String, String> {
        use std::io::Write as _;
        let mut cmd = self.command();
        cmd.args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let words = || {
            args.iter()
                .map(|a| a.as_ref().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut child = cmd.spawn().map_err(|e| format!("git: {e}"))?;
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin
                .write_all(text.as_bytes())
                .map_err(|e| format!("git {}: {e}", words()))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("git {}: {e}", words()))?;
        if !out.status.success() {
            return Err(format!(
                "`git {}` in {} failed: {}",
                words(),
                self.dir.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        String::from_utf8(out.stdout).map_err(|e| format!("git {}: {e}", words()))
    }

    /// The trimmed output of a query that may fail (`None` then).
    fn ok(&self, args: &[&str]) -> Option<String> {
        self.run(args, None)
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::config_allowed;

    #[test]
    fn only_allowlisted_configuration_is_copied() {
        for key in [
            "core.filemode",
            "user.email",
            "remote.origin.fetch",
            "branch.main.merge",
            "branch.feature/x.remote",
        ] {
            assert!(config_allowed(key), "{key}");
        }
        for key in [
            "core.hookspath",
            "core.fsmonitor",
            "core.worktree",
            "core.sshcommand",
            "remote.origin.url",
            "include.path",
            "filter.lfs.smudge",
            "branch.merge",
            "remote..fetch",
        ] {
            assert!(!config_allowed(key), "{key}");
        }
    }
}
