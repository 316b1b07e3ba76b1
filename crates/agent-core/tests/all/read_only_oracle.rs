//! The execution oracle for the built-in read-only set (issue 13): every command the engine
//! auto-approves as read-only, run under `strace -f` in a scratch tree, executes nothing but
//! the read-only programs it names, opens nothing for writing, and opens nothing outside the
//! scratch tree except the system's own files (libraries, locale, `/etc/passwd` for user
//! names, git's system configuration). A canary directory beside the tree, reachable through a
//! symlink inside it, must never be opened.

use std::path::Path;
use std::process::{Command, Stdio};

use agent_core::permissions::{
    Behavior, PermissionEngine, PermissionMode, PreToolUseOutcome, ToolCall,
};
use serde_json::json;

/// Commands to try: the common read-only forms, and the adversarial ones (which the engine
/// must refuse, so the oracle never runs them).
const CORPUS: &[&str] = &[
    "ls",
    "ls -la",
    "ls -R src",
    "ls --color=never -1",
    "cat README.md",
    "cat -n README.md src/a.rs",
    "cat < README.md",
    "head -5 README.md",
    "head -n 2 README.md",
    "tail -n 1 README.md",
    "tail -c 5 README.md",
    "wc -l README.md",
    "wc -lw -- README.md",
    "grep -rn fn src",
    "grep -e fn -r .",
    "grep -c x README.md",
    "grep -fpatterns.txt README.md",
    "egrep 'a|b' README.md",
    "find . -name '*.rs'",
    "find src -type f -newer README.md",
    "find . -maxdepth 1 -print0",
    "stat README.md",
    "du -sh src",
    "diff README.md src/a.rs",
    "diff -u README.md README.md",
    "sort README.md",
    "sort -u -r README.md",
    "sort -k 1,1 -t , README.md",
    "cut -d ' ' -f 1 README.md",
    "nl README.md",
    "tac README.md",
    "realpath src",
    "readlink -f src",
    "md5sum README.md",
    "sha256sum README.md",
    "cksum README.md",
    "file README.md",
    "file -b --mime-type README.md",
    "date",
    "date -u +%Y",
    "date -r README.md",
    "uname -a",
    "basename /a/b",
    "dirname /a/b",
    "id -u",
    "whoami",
    "nproc",
    "pwd",
    "seq 3",
    "echo hi",
    "printf '%s\\n' a b",
    "test -f README.md",
    "[ -d src ]",
    "[ \"$x\" = y ]",
    "true",
    "cd src && ls",
    "cd src && cat a.rs",
    "git status",
    "git status --short",
    "git log --oneline -3",
    "git log -p -1",
    "git show --stat HEAD",
    "git diff HEAD",
    "git diff --stat",
    "git blame README.md",
    "git grep -n fn",
    "git ls-files",
    "git ls-tree -r HEAD",
    "git rev-parse HEAD",
    "git rev-parse --show-toplevel",
    "git branch",
    "git branch -a",
    "git tag -l",
    "git remote -v",
    "git config --get user.name",
    "git config --list",
    "git describe --always",
    "git shortlog -s HEAD",
    "git rev-list --count HEAD",
    "git stash list",
    "git cat-file -p HEAD",
    "git for-each-ref",
    "git count-objects -v",
    // Adversarial: refused, never run.
    "cat canary-link/secret",
    "cd canary-link && cat secret",
    "cat < canary-link/secret",
    "cat canary-link/../canary/secret",
    "sort -o out.txt README.md",
    "sort --outp=out.txt README.md",
    "sort -uo out.txt README.md",
    "sort --compress-program=sh README.md",
    "wc --files0-from=list.txt",
    "tree -o out.txt",
    "date -s 2020-01-01",
    "git log --output=out.txt",
    "git log --outp=out.txt",
    "git grep --open=sh x",
    "git -c core.pager=sh log",
    "git diff --no-index README.md ../canary/secret",
    "grep -f ../canary/secret README.md",
    "grep -f../canary/secret README.md",
    "file -m ../canary/secret README.md",
    "cd - && cat x",
    "echo $((x))",
    "test -v 'a[$(touch pwned)]'",
];

/// Programs the read-only commands may execute (themselves, and git's own helpers).
fn may_exec(base: &str) -> bool {
    agent_core::programs::read_only::lookup(base).is_some()
        || matches!(
            base,
            "bash" | "git" | "find" | "test" | "[" | "echo" | "printf" | "egrep" | "fgrep"
        )
        || base.starts_with("git-")
}

/// System locations a read-only program may open for reading.
const SYSTEM: &[&str] = &[
    "/usr/",
    "/lib",
    "/etc/",
    "/proc/",
    "/sys/",
    "/dev/null",
    "/dev/tty",
    "/dev/urandom",
    "/run/",
    "/var/lib/",
    "/tmp/.X",
];

fn run(cmd: &str, dir: &Path, home: &Path) -> String {
    let log = dir.join("../trace");
    let out = Command::new("timeout")
        .args([
            "20",
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=execve,open,openat,openat2,creat,truncate,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,symlink,symlinkat,link,linkat,chmod,fchmodat",
            "-o",
        ])
        .arg(&log)
        .args(["bash", "-c", cmd])
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let trace = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!trace.is_empty(), "{cmd}: no trace ({out:?})");
    trace
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("../home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "git {args:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn auto_approved_read_only_commands_only_read_inside_the_tree() {
    let strace = Command::new("strace").arg("-V").output();
    assert!(
        strace.is_ok_and(|o| o.status.success()),
        "strace is needed for the execution oracle; install it (.ci/run does on CI)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let tree = root.join("tree");
    let home = root.join("home");
    let canary = root.join("canary");
    for d in [&tree.join("src"), &home, &canary] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(tree.join("README.md"), "hello world\nfn x\n").unwrap();
    std::fs::write(tree.join("src/a.rs"), "fn main() {}\n").unwrap();
    std::fs::write(tree.join("patterns.txt"), "fn\n").unwrap();
    std::fs::write(canary.join("secret"), "k").unwrap();
    std::os::unix::fs::symlink(&canary, tree.join("canary-link")).unwrap();
    git(&tree, &["init", "-q"]);
    git(
        &tree,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "add",
            "README.md",
            "src",
        ],
    );
    git(
        &tree,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );

    let engine = PermissionEngine::builder(&tree, &home)
        .mode(PermissionMode::Default)
        .build()
        .unwrap();
    let mut ran = 0;
    for cmd in CORPUS {
        let d = engine.check(
            &ToolCall::new("Bash", json!({ "command": cmd })),
            &PreToolUseOutcome::default(),
        );
        if d.behavior != Behavior::Allow {
            continue;
        }
        let trace = run(cmd, &tree, &home);
        for line in trace.lines() {
            let Some(path) = line.split('"').nth(1) else {
                continue;
            };
            let abs = if path.starts_with('/') {
                path.to_owned()
            } else {
                tree.join(path).display().to_string()
            };
            let failed = line.contains("= -1");
            assert!(
                !abs.starts_with(&canary.display().to_string())
                    || failed && !line.contains("openat"),
                "{cmd:?} touched the canary: {line}"
            );
            if line.contains("execve(") {
                if failed {
                    continue;
                }
                let base = path.rsplit('/').next().unwrap_or(path);
                assert!(may_exec(base), "{cmd:?} executed {path}:\n{line}");
                continue;
            }
            let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"]
                .iter()
                .any(|f| line.contains(f))
                || [
                    "creat(",
                    "truncate(",
                    "rename",
                    "unlink",
                    "mkdir",
                    "symlink",
                    "link(",
                    "linkat(",
                    "chmod",
                ]
                .iter()
                .any(|f| line.contains(f));
            // git refreshes its own index (`.git/index` through `index.lock`) on `status` and
            // `diff`: bookkeeping inside the repository's metadata, which is allowed here
            // (documented in docs/permissions.md; GIT_OPTIONAL_LOCKS=0 avoids it).
            let git_bookkeeping = cmd.starts_with("git ")
                && abs.starts_with(&tree.join(".git").display().to_string())
                && !abs.contains("/hooks/")
                && !abs.ends_with("/config");
            let harmless = abs == "/dev/null" || abs == "/dev/tty" || git_bookkeeping;
            assert!(
                !writes || failed || harmless,
                "{cmd:?} opened for writing: {line}"
            );
            let inside = abs.starts_with(&tree.display().to_string())
                || abs.starts_with(&home.display().to_string());
            let system = SYSTEM.iter().any(|s| abs.starts_with(s));
            assert!(
                inside || system || failed,
                "{cmd:?} opened {abs} outside the tree: {line}"
            );
        }
        ran += 1;
    }
    assert!(ran >= 70, "only {ran} commands were auto-approved and run");
    assert!(!tree.join("pwned").exists());
    assert!(!tree.join("out.txt").exists());
}
