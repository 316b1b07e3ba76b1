//! Issue 13, class 4: every path a command reads (arguments, option values, redirects, after
//! `cd` of any kind) is resolved as the filesystem would, and reads outside the working
//! directories are not auto-approved. Enumerated: read-only commands × ways to name a file
//! outside (absolute, `..`, a symlink inside the project, a symlink followed by `..`, a
//! redirect, an option value, after `cd` into a symlink, `cd -`, `cd` alone, `cd "$D"`).

use agent_core::permissions::{
    Behavior, PermissionEngine, PermissionMode, PreToolUseOutcome, ToolCall,
};
use serde_json::json;

fn decide(e: &PermissionEngine, cmd: &str) -> Behavior {
    e.check(
        &ToolCall::new("Bash", json!({ "command": cmd })),
        &PreToolUseOutcome::default(),
    )
    .behavior
}

#[test]
fn reads_outside_the_working_directories_are_never_auto_approved() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    let outside = root.join("outside");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::create_dir_all(outside.join("deeper")).unwrap();
    std::fs::write(outside.join("k"), "secret").unwrap();
    std::fs::write(proj.join("in.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("deeper"), proj.join("sub/down")).unwrap();
    std::os::unix::fs::symlink("/", proj.join("rootlink")).unwrap();
    let o = outside.display();
    let paths = [
        format!("{o}/k"),
        "../outside/k".to_owned(),
        "link/k".to_owned(),
        "sub/down/../k".to_owned(),
        "rootlink/etc/passwd".to_owned(),
        "./link/./k".to_owned(),
    ];
    let commands = [
        "cat",
        "head -n1",
        "tail -n1",
        "wc -l",
        "grep x",
        "sort",
        "stat",
        "md5sum",
        "nl",
        "cut -c1",
        "file",
        "diff in.txt",
    ];
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ] {
        let e = PermissionEngine::builder(&proj, "/nonexistent-home")
            .mode(mode)
            .build()
            .unwrap();
        assert_eq!(decide(&e, "cat in.txt"), Behavior::Allow);
        for p in &paths {
            for c in commands {
                for cmd in [
                    format!("{c} {p}"),
                    format!("{c} < {p}"),
                    format!("cat in.txt | {c} - < {p}"),
                ] {
                    assert_ne!(decide(&e, &cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
                }
            }
            for cmd in [
                format!("grep -f {p} in.txt"),
                format!("grep -f{p} in.txt"),
                format!("grep --file={p} in.txt"),
                format!("sort --random-source={p} in.txt"),
                format!("date -r {p}"),
                format!("find . -newer {p}"),
                format!("[ -f {p} ]"),
                format!("git blame --contents={p} in.txt"),
            ] {
                assert_ne!(decide(&e, &cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
            }
        }
        for cmd in [
            "cd link && cat k",
            "cd link; cat k",
            "cd sub/down && cat ../k",
            "cd .. && cat outside/k",
            "cd - && cat in.txt",
            "cd && cat in.txt",
            "cd \"$D\" && cat in.txt",
            "pushd link && cat k",
            "(cd link && cat k)",
            "cd rootlink && cat etc/passwd",
        ] {
            assert_ne!(decide(&e, cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
        }
        for cmd in [
            "cd sub && cat ../in.txt",
            "cat sub/../in.txt",
            "cat < in.txt",
        ] {
            assert_eq!(decide(&e, cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
        }
    }
}

/// A `cd` may fail (no such directory, a file, no permission) and the script goes on where it
/// was: a relative path after it is judged from both places, unless the command only runs once
/// the `cd` succeeded (`cd d && ...`). Found by the checker/interpreter differential test
/// (agent-wasi tests/checker_agrees.rs): `cd nope; cat ../x` read the cwd's parent.
#[test]
fn a_cd_that_may_fail_leaves_paths_judged_from_where_the_shell_was() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join("sub/deeper")).unwrap();
    std::fs::write(proj.join("in.txt"), "x").unwrap();
    std::fs::write(root.join("secret"), "s").unwrap();
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::DontAsk,
    ] {
        let e = PermissionEngine::builder(&proj, "/nonexistent-home")
            .mode(mode)
            .build()
            .unwrap();
        for cmd in [
            "cd nope; cat ../secret",
            "cd sub; cat ../secret",
            "cd in.txt; cat ../secret",
            "cd sub || cat ../secret",
            "cd sub\ncat ../secret",
            "if cd sub; then :; fi; cat ../secret",
            "! cd sub && cat ../secret",
            "(cd sub) && cat ../secret",
            "(cd sub && cat ../in.txt); cat ../secret",
            "cd sub | cat && cat ../secret",
            "cd sub && cd nope; cat ../../secret",
            "cd sub && true || cat ../secret",
            "{ cd sub; } && cat ../secret",
        ] {
            assert_ne!(decide(&e, cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
        }
        for cmd in [
            "cd sub && cat ../in.txt",
            "cd sub && cd deeper && cat ../../in.txt",
            "cd sub && ls && cat ../in.txt",
            "cd sub && { cat ../in.txt; }",
            "cd sub; cat in.txt",
            "true; cd sub && cat ../in.txt",
        ] {
            assert_eq!(decide(&e, cmd), Behavior::Allow, "{mode:?}: {cmd:?}");
        }
    }
}

/// `find -execdir` / `-okdir` runs its command in each found file's directory, which the
/// command line does not tell: the command's relative paths are not known, so it is not
/// approved on them (`find sub/down -execdir cat ../k \;` reads beside each file found). Found
/// by the checker/interpreter differential test.
#[test]
fn paths_of_a_find_execdir_command_are_not_known() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::write(proj.join("sub/in.txt"), "x").unwrap();
    let e = PermissionEngine::builder(&proj, "/nonexistent-home")
        .mode(PermissionMode::AcceptEdits)
        .build()
        .unwrap();
    let files = |cmd: &str| -> Vec<Option<std::path::PathBuf>> {
        e.prepare(ToolCall::new("Bash", json!({ "command": cmd })))
            .files_seen()
            .into_iter()
            .map(|f| f.path.map(|p| p.lexical))
            .collect()
    };
    for cmd in [
        "find sub -execdir cat ../x \\;",
        "find sub -okdir cat ../x \\;",
        "find sub -name '*.txt' -execdir rm x {} +",
        "timeout 5 find sub -execdir cat ../x \\;",
        "find sub -execdir sh -c 'cat ../x' \\;",
    ] {
        assert!(files(cmd).contains(&None), "{cmd}: {:?}", files(cmd));
        assert!(!files(cmd).contains(&Some(proj.join("x"))), "{cmd}");
        assert_ne!(decide(&e, cmd), Behavior::Allow, "{cmd}");
    }
    // `-exec` runs where find runs; what follows the find is judged as before.
    assert_eq!(files("find sub -exec cat x \\;"), [Some(proj.join("x"))]);
    assert_eq!(
        files("find sub -execdir cat ../x \\; ; cat y"),
        [None, Some(proj.join("y"))]
    );
}
