//! Issue 24, class 7: a command that walks directories and follows the symbolic links it meets
//! reads wherever they lead (`grep -R`, `ls -RL`, `find -L`, `du -L`, `tree -l`, `rg -L`, and
//! `diff` of two directories, which follows links unless `--no-dereference`), so it is not a
//! read-only command; the same walks that keep to the tree still are. Each project holds a
//! link to a directory outside it and two directories whose entries are links out.

use agent_core::permissions::{Behavior, PermissionEngine, PermissionMode};

use crate::support::check;

fn decide(e: &PermissionEngine, cmd: &str) -> Behavior {
    check(e, "Bash", cmd).behavior
}

/// A project with `out` (a link to a directory outside), `a/k` and `b/k` (links to a file
/// outside), `c/k` and `d/k` (plain files), and `in.txt`.
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    let outside = root.join("outside");
    for d in ["a", "b", "c", "d"] {
        std::fs::create_dir_all(proj.join(d)).unwrap();
    }
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("k"), "secret").unwrap();
    std::fs::write(proj.join("in.txt"), "x").unwrap();
    std::fs::write(proj.join("c/k"), "x").unwrap();
    std::fs::write(proj.join("d/k"), "y").unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("k"), proj.join("a/k")).unwrap();
    std::os::unix::fs::symlink(outside.join("k"), proj.join("b/k")).unwrap();
    (tmp, proj)
}

#[test]
fn walks_that_follow_links_out_of_the_tree_are_not_read_only() {
    let (_tmp, proj) = project();
    for mode in [PermissionMode::Default, PermissionMode::DontAsk] {
        let e = PermissionEngine::builder(&proj, "/nonexistent-home")
            .mode(mode)
            .build()
            .unwrap();
        for cmd in [
            "grep -R secret .",
            "grep -rR secret .",
            "grep --dereference-recursive secret .",
            "grep secret -R",
            "ls -RL",
            "ls -R -L .",
            "ls -L out",
            "ls --dereference -R",
            "find -L .",
            "find -L . -name k",
            "find . -follow",
            "find . -follow -name k -print",
            "du -L",
            "du -aL .",
            "du --dereference .",
            "tree -l",
            "tree -al .",
            "rg -L secret",
            "rg --follow secret .",
            "diff a c",
            "diff -r a c",
            "diff -r . ../proj",
            "diff --recursive a c",
            "diff -q a b",
        ] {
            assert_ne!(decide(&e, cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
        }
    }
}

#[test]
fn walks_that_keep_to_the_tree_stay_read_only() {
    let (_tmp, proj) = project();
    let e = PermissionEngine::builder(&proj, "/nonexistent-home")
        .build()
        .unwrap();
    for cmd in [
        "grep -r secret .",
        "grep -r secret c",
        "ls -R",
        "ls -lR .",
        "find . -name k",
        "find -H c -name k",
        "find -P . -type l",
        "du -a .",
        "tree -a",
        "rg secret",
        "diff c/k d/k",
        "diff in.txt c/k",
        "diff --no-dereference a c",
        "diff -r --no-dereference a c",
        "diff --no-dereference -rq . c",
    ] {
        assert_eq!(decide(&e, cmd), Behavior::Allow, "{cmd:?}");
    }
}
