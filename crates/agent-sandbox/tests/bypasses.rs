//! Issue 13, classes 6 and 8: the command checker under `allowedCommands`, `allowedReadPaths`
//! and `deniedPaths`, against the bypasses adversarial testing found; and paths resolved in the
//! kernel's order (a symlink before a following `..`) from the session's cwd.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::{Path, PathBuf};

use agent_sandbox::commands::{CommandChecker, which};
use agent_sandbox::paths::{Op, PathPolicy};
use agent_sandbox::settings::SandboxSettings;

struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

/// `root/work` (the workdir, writable), `root/work/secret` (denied), `root/outside/o.txt`,
/// `root/work/dir/link` → `root/outside/deeper`.
fn scratch() -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("work/dir")).unwrap();
    std::fs::create_dir_all(root.join("work/sub")).unwrap();
    std::fs::create_dir_all(root.join("outside/deeper")).unwrap();
    std::fs::write(root.join("work/secret"), "k").unwrap();
    std::fs::write(root.join("work/sub/key"), "k").unwrap();
    std::fs::write(root.join("work/f.txt"), "x").unwrap();
    std::fs::write(root.join("outside/o.txt"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("outside/deeper"), root.join("work/dir/link")).unwrap();
    Scratch { _dir: dir, root }
}

fn path_dirs() -> Vec<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap()).collect()
}

fn checker(s: &Scratch, f: impl FnOnce(&mut SandboxSettings)) -> CommandChecker {
    let work = s.root.join("work");
    let mut settings = SandboxSettings {
        allowed_commands: Some(
            ["git", "cat", "grep", "ls", "find", "echo", "sort", "head"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        ),
        allowed_write_paths: Some(vec![work.clone()]),
        ..SandboxSettings::default()
    };
    f(&mut settings);
    CommandChecker::with_path(&settings, &path_dirs()).with_cwd(work)
}

fn assert_denied(c: &CommandChecker, cmds: &[String]) {
    for cmd in cmds {
        let v = c.check(cmd);
        assert!(!v.allowed, "{cmd:?} was allowed: {}", v.reason);
    }
}

fn assert_allowed(c: &CommandChecker, cmds: &[String]) {
    for cmd in cmds {
        let v = c.check(cmd);
        assert!(v.allowed, "{cmd:?} was denied: {}", v.reason);
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn an_allowlisted_git_runs_no_other_program_and_writes_only_where_allowed() {
    let s = scratch();
    let c = checker(&s, |_| {});
    assert_denied(
        &c,
        &strs(&[
            "git -c alias.x='!id' x",
            "git -c core.fsmonitor=id status",
            "git -c core.pager=id log",
            "git -ccore.pager=id log",
            "git --config-env=core.pager=P log",
            "git grep --open=vim x",
            "git grep --open-files-in-pager=vim x",
            "git grep -Ovim x",
            "git diff --ext-diff",
            "git log --textconv",
            "git log --output=/etc/x",
            "git log --outp=/etc/x",
            "git log --output /etc/x",
            "git init /etc/x",
            "git clone https://example.com/r /etc/x",
            "git clone https://example.com/r",
            "git -C / status",
            "git --git-dir=/etc status",
            "git --work-tree=/ status",
            "GIT_PAGER=id git log",
            "PAGER=id git log",
            "LD_PRELOAD=/tmp/x.so ls",
            "GIT_SSH_COMMAND=id git fetch",
            "sort -o /etc/x f.txt",
            "sort --compress-program=id f.txt",
            "source ./x.sh",
            ". ./x.sh",
        ]),
    );
    let inside = s.root.join("work/out.txt");
    assert_allowed(
        &c,
        &[
            "git status".to_owned(),
            "git log --oneline -5".to_owned(),
            "git -c color.ui=never log".to_owned(),
            format!("git log --output={}", inside.display()),
            "git init sub/repo".to_owned(),
            "LANG=C ls".to_owned(),
        ],
    );
}

#[test]
fn allowed_read_paths_bound_every_path_a_command_reads() {
    let s = scratch();
    let work = s.root.join("work");
    let c = checker(&s, |st| st.allowed_read_paths = Some(vec![work.clone()]));
    let outside = s.root.join("outside/o.txt");
    assert_denied(
        &c,
        &[
            "cat /etc/shadow".to_owned(),
            "cat < /etc/shadow".to_owned(),
            "grep -r x /etc".to_owned(),
            format!("cat {}", outside.display()),
            "cat ../outside/o.txt".to_owned(),
            "head -n1 /etc/passwd".to_owned(),
            "grep -f/etc/passwd x".to_owned(),
            "grep --file=/etc/passwd x".to_owned(),
            "cat /etc/*".to_owned(),
        ],
    );
    assert_allowed(
        &c,
        &strs(&[
            "cat f.txt",
            "cat ./f.txt",
            "grep -r x .",
            "ls",
            "git status",
            "echo /etc/shadow",
        ]),
    );
}

#[test]
fn denied_paths_hold_through_globs_braces_attached_values_variables_and_recursion() {
    let s = scratch();
    let secret = s.root.join("work/secret");
    let key = s.root.join("work/sub/key");
    let c = checker(&s, |st| st.denied_paths = vec![secret.clone(), key.clone()]);
    let w = s.root.join("work");
    let w = w.display();
    assert_denied(
        &c,
        &[
            format!("cat {w}/secre?"),
            format!("cat {w}/secr*"),
            format!("cat {w}/[s]ecret"),
            "cat secre?".to_owned(),
            "cat ./s*".to_owned(),
            format!("cat {{{w}/secret,y}}"),
            "cat {secret,f.txt}".to_owned(),
            format!("grep -f{w}/secret k"),
            "grep -fsecret k".to_owned(),
            "grep -isecret k".to_owned(),
            "grep -fsub/key k".to_owned(),
            format!("grep --file={w}/secret k"),
            format!("p={w}/secret; cat $p"),
            "p=secret; cat \"$p\"".to_owned(),
            "cat $HOME_SECRET_PATH".to_owned(),
            format!("grep -r k {w}"),
            "grep -r k .".to_owned(),
            "grep -R k sub".to_owned(),
            "find . -name x".to_owned(),
            format!("find {w}"),
            "cat sub/*".to_owned(),
            "cat secret".to_owned(),
            "cat < secret".to_owned(),
            "cat dir/../secret".to_owned(),
        ],
    );
    assert_allowed(
        &c,
        &strs(&[
            "ls",
            "ls sub",
            "cat f.txt",
            "cat f*",
            "grep k f.txt",
            "echo $X",
        ]),
    );
}

#[test]
fn a_program_named_by_a_path_is_allowed_only_as_the_allowlisted_executable() {
    let s = scratch();
    let c = checker(&s, |_| {});
    let Some(git) = which("git", &path_dirs()) else {
        return; // git is not installed: nothing to compare with
    };
    std::fs::write(s.root.join("work/git"), "#!/bin/sh\nid\n").unwrap();
    assert_denied(
        &c,
        &strs(&[
            "./git status",
            "../work/git status",
            "/tmp/git status",
            "~/bin/git status",
            "sub/../git status",
        ]),
    );
    assert_allowed(&c, &[format!("{} status", git.display())]);
}

#[test]
fn runtime_evaluation_forms_are_refused() {
    let s = scratch();
    let c = checker(&s, |st| {
        st.allowed_commands = None;
        st.denied_commands = vec!["rm".into()];
    });
    let forms = include_str!("../../agent-core/tests/data/runtime_eval_forms.txt");
    for form in forms
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let cmd = form.replace("CMD", "rm -rf x");
        let v = c.check(&cmd);
        assert!(!v.allowed, "{cmd:?} was allowed: {}", v.reason);
        let cmd = form.replace("CMD", "id");
        assert!(!c.check(&cmd).allowed, "{cmd:?} was allowed");
    }
}

#[test]
fn paths_resolve_symlinks_before_dot_dot_and_from_the_cwd() {
    let s = scratch();
    let work = s.root.join("work");
    let c = checker(&s, |st| {
        st.denied_paths = vec![s.root.join("outside/o.txt")]
    });
    // `dir/link/..` is `outside`, not `dir`: the write lands outside the writable workdir.
    assert_denied(
        &c,
        &strs(&["echo x > dir/link/../o.txt", "cat dir/link/../o.txt"]),
    );
    // Relative paths are the cwd's: writes inside the workdir are allowed.
    assert_allowed(&c, &strs(&["echo x > out.txt", "echo x > dir/new.txt"]));
    let settings = SandboxSettings {
        allowed_write_paths: Some(vec![work.clone()]),
        denied_paths: vec![s.root.join("outside/o.txt")],
        ..SandboxSettings::default()
    };
    let policy = PathPolicy::new(&settings, Some(&work));
    assert!(
        !policy
            .check(Path::new("dir/link/../o.txt"), Op::Read)
            .allowed
    );
    assert!(
        !policy
            .check(Path::new("dir/link/../x.txt"), Op::Write)
            .allowed
    );
    assert!(policy.check(Path::new("dir/x.txt"), Op::Write).allowed);
}
