//! Issue 25 (B1): git inside the shadow. The shadow of a Git repository has a `.git` of its
//! own: `git status`, `diff`, `log`, `add -p`, `stash` and `commit` work there against the
//! user's HEAD, `.git` is never part of the change set, and the real repository's `.git` is
//! never written (every file under it is hashed before and after, byte for byte).
//! These tests need the `git` binary; without it they say so and pass.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use agent_workspace::{ChangeKind, CommitOptions, ImportOptions, Workspace};
use sha2::{Digest, Sha256};

#[expect(clippy::print_stderr, reason = "a skipped test says why")]
fn have_git() -> bool {
    let ok = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no `git` binary on PATH");
    }
    ok
}

/// Runs git in `dir` with `input` on stdin; panics with its stderr when it fails.
fn git_in(dir: &Path, args: &[&str], input: Option<&str>) -> String {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if let Some(text) = input {
        stdin.write_all(text.as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, None)
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Every file and link under `dir`: path → sha256 of its bytes (a link: of its target).
fn hashes(dir: &Path) -> BTreeMap<String, String> {
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", t.display()));
            } else if meta.is_dir() {
                out.insert(format!("{rel}/"), String::new());
                go(root, &p, out);
            } else {
                let digest = Sha256::digest(std::fs::read(&p).unwrap());
                out.insert(rel, format!("{digest:?}"));
            }
        }
    }
    let mut out = BTreeMap::new();
    go(dir, dir, &mut out);
    out
}

/// A repository with two commits, a remote-tracking ref, a tag, packed refs, a tracked path
/// the workspace does not import (`.agentignore`), and a staged change of the user's.
fn repository(real: &Path) {
    git(real, &["init", "-q", "-b", "main"]);
    git(real, &["config", "user.name", "Ada"]);
    git(real, &["config", "user.email", "ada@example.com"]);
    git(real, &["config", "core.hooksPath", "/nonexistent/hooks"]);
    write(real, "src/app.py", "print('one')\n");
    write(real, "README.md", "# app\n");
    write(real, ".gitignore", "*.log\n");
    write(real, "secrets/token", "t0ken\n");
    git(real, &["add", "-A"]);
    git(real, &["commit", "-q", "-m", "first"]);
    write(real, "src/app.py", "print('one')\nprint('two')\n");
    write(real, ".agentignore", "secrets/\n");
    git(real, &["add", "-A"]);
    git(real, &["commit", "-q", "-m", "second"]);
    git(real, &["update-ref", "refs/remotes/origin/main", "HEAD~1"]);
    git(real, &["tag", "v1", "HEAD~1"]);
    git(real, &["pack-refs", "--all"]);
    write(real, "README.md", "# app\n\nstaged by the user\n");
    git(real, &["add", "README.md"]);
    write(real, "build.log", "noise\n");
}

#[test]
fn git_works_in_the_shadow_and_the_real_git_dir_is_never_written() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&real).unwrap();
    repository(&real);
    let before = hashes(&real.join(".git"));
    let real_head = git(&real, &["rev-parse", "HEAD"]).trim().to_owned();

    let opts = ImportOptions {
        state_root: state,
        shadow: None,
    };
    let (mut ws, report) = Workspace::import(&real, &opts).unwrap();
    let report = report.git.unwrap();
    assert_eq!(report.skipped, None);
    assert_eq!(report.head.as_deref(), Some(real_head.as_str()));
    assert_eq!(report.branch.as_deref(), Some("refs/heads/main"));
    let s = ws.shadow().to_path_buf();

    // The user's HEAD, history, refs and staged change are there; nothing else shows.
    assert_eq!(git(&s, &["rev-parse", "HEAD"]).trim(), real_head);
    assert_eq!(git(&s, &["log", "--format=%s"]), "second\nfirst\n");
    assert_eq!(
        git(&s, &["rev-parse", "origin/main"]),
        git(&real, &["rev-parse", "HEAD~1"])
    );
    assert_eq!(
        git(&s, &["rev-parse", "v1"]),
        git(&real, &["rev-parse", "v1"])
    );
    assert_eq!(git(&s, &["status", "--porcelain"]), "M  README.md\n");
    assert_eq!(git(&s, &["diff"]), "");
    // The user's hooks path is not copied (the shadow runs no command the user configured).
    assert!(!git(&s, &["config", "--list"]).contains("hookspath"));

    // The agent edits, reviews with git diff, stages a hunk, stashes and commits.
    write(
        &s,
        "src/app.py",
        "print('one')\nprint('two')\nprint('agent')\n",
    );
    write(&s, "new.py", "print('new')\n");
    let diff = git(&s, &["diff"]);
    assert!(diff.contains("+print('agent')\n"), "{diff}");
    assert!(
        git(&s, &["status", "--porcelain"]).contains(" M src/app.py\n?? new.py\n"),
        "{}",
        git(&s, &["status", "--porcelain"])
    );
    git_in(&s, &["add", "-p", "src/app.py"], Some("y\n"));
    assert!(git(&s, &["diff", "--cached"]).contains("+print('agent')\n"));
    git(&s, &["stash", "-q"]);
    assert_eq!(
        std::fs::read_to_string(s.join("src/app.py")).unwrap(),
        "print('one')\nprint('two')\n"
    );
    git(&s, &["stash", "pop", "-q"]);
    assert!(
        std::fs::read_to_string(s.join("src/app.py"))
            .unwrap()
            .contains("agent")
    );
    git(&s, &["add", "new.py"]);
    git(&s, &["commit", "-q", "-m", "agent work"]);
    assert_eq!(
        git(&s, &["log", "--format=%s", "-1"]),
        "agent work\n",
        "the commit lands in the shadow's repository"
    );

    // .git is never part of the change set.
    let set = ws.status().unwrap();
    let paths: Vec<(&str, &ChangeKind)> = set
        .changes
        .iter()
        .map(|c| (c.path.as_str(), &c.kind))
        .collect();
    assert_eq!(
        paths,
        [
            ("new.py", &ChangeKind::Added),
            ("src/app.py", &ChangeKind::Modified)
        ]
    );
    assert_eq!(ws.diff(None).unwrap().len(), 2);
    ws.commit(&CommitOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(real.join("new.py")).unwrap(),
        "print('new')\n"
    );
    assert!(ws.status().unwrap().is_empty());

    // Discard rebuilds the shadow and its .git from the real repository.
    write(&s, "scratch.txt", "x\n");
    ws.discard().unwrap();
    assert!(!s.join("scratch.txt").exists());
    assert_eq!(git(&s, &["rev-parse", "HEAD"]).trim(), real_head);
    assert_eq!(git(&s, &["log", "--format=%s"]), "second\nfirst\n");
    assert!(ws.refresh().unwrap().git.is_none());

    // Nothing under the real .git changed, byte for byte.
    assert_eq!(hashes(&real.join(".git")), before);
}

#[test]
fn refresh_says_when_the_user_committed_in_the_real_repository() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir_all(&real).unwrap();
    repository(&real);
    let opts = ImportOptions {
        state_root: tmp.path().join("state"),
        shadow: None,
    };
    let (mut ws, _) = Workspace::import(&real, &opts).unwrap();
    let shadow_head = git(ws.shadow(), &["rev-parse", "HEAD"]);
    git(&real, &["commit", "-q", "-m", "user work"]);
    let report = ws.refresh().unwrap();
    let note = report.git.unwrap();
    assert!(note.contains("HEAD moved"), "{note}");
    assert!(note.contains("agent workspace discard"), "{note}");
    // The shadow's refs stay as they were made.
    assert_eq!(git(ws.shadow(), &["rev-parse", "HEAD"]), shadow_head);
}

#[test]
fn a_linked_worktree_whose_git_is_a_file_gets_a_shadow_git_too() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("main");
    std::fs::create_dir_all(&main).unwrap();
    repository(&main);
    git(&main, &["commit", "-q", "-m", "third"]);
    let linked = tmp.path().join("linked");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            linked.to_str().unwrap(),
        ],
    );
    assert!(linked.join(".git").is_file());
    let before = hashes(&main.join(".git"));

    let opts = ImportOptions {
        state_root: tmp.path().join("state"),
        shadow: None,
    };
    let (ws, report) = Workspace::import(&linked, &opts).unwrap();
    let report = report.git.unwrap();
    assert_eq!(report.skipped, None);
    assert_eq!(report.branch.as_deref(), Some("refs/heads/feature"));
    let s = ws.shadow();
    assert!(s.join(".git").is_dir());
    assert_eq!(git(s, &["log", "--format=%s"]), "third\nsecond\nfirst\n");
    assert_eq!(git(s, &["status", "--porcelain"]), "");
    write(s, "README.md", "changed\n");
    assert!(git(s, &["diff", "--stat"]).contains("README.md"));
    assert_eq!(ws.status().unwrap().changes.len(), 1);
    assert_eq!(hashes(&main.join(".git")), before);
}

#[test]
fn a_git_symlink_is_not_followed_and_the_report_says_so() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    repository(&elsewhere);
    let real = tmp.path().join("real");
    std::fs::create_dir_all(&real).unwrap();
    write(&real, "a.txt", "a\n");
    std::os::unix::fs::symlink(elsewhere.join(".git"), real.join(".git")).unwrap();
    let opts = ImportOptions {
        state_root: tmp.path().join("state"),
        shadow: None,
    };
    let (ws, report) = Workspace::import(&real, &opts).unwrap();
    let why = report.git.unwrap().skipped.unwrap();
    assert!(
        why.contains("is a symlink, which is never followed"),
        "{why}"
    );
    assert!(!ws.shadow().join(".git").exists());
    assert_eq!(report.files, 1);
}
