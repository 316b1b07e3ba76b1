//! `Toolbox::route` with the real core-utils bundle's commands: the scripts it sends to the WASI
//! shell run there (no `command not found`), and the others go to the host with the reason.
//! Needs the registry `cargo xtask bundles` builds; skipped (with a note) without it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use agent_wasi::shell::ShellContext;
use agent_wasi::toolbox::Route;

#[test]
fn routes_with_the_installed_bundle() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let names = toolbox.commands();
    for name in [
        "ls", "grep", "sed", "find", "cat", "wc", "sort", "env", "realpath",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/a.rs"), "// TODO one\nfn a() {}\n").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "b\na\n").unwrap();
    let ctx = ShellContext::new(ws.path());
    let wasi = [
        "ls -la | grep notes | wc -l",
        "grep -rn TODO src | sed 's/TODO/DONE/' | sort",
        "for f in src/*.rs; do wc -l \"$f\"; done",
        "[[ -f notes.txt ]] && sort notes.txt | head -1",
        "find . -name '*.rs' -exec grep -l TODO {} +",
        "find . -name '*.rs' | xargs grep -c fn",
        "env LC_ALL=C sort notes.txt",
        "timeout 5 cat notes.txt",
        "realpath notes.txt; pwd",
        "echo x | xargs rm -f",
    ];
    for script in wasi {
        assert_eq!(toolbox.route(script), Route::Wasi, "{script}");
        // What it promised: the script runs, and nothing in it is missing.
        let run = toolbox.shell(script, &ctx).unwrap();
        let stderr = String::from_utf8_lossy(&run.output.stderr);
        assert!(
            !stderr.contains("not found") && !stderr.contains("No such file or directory"),
            "{script}: {stderr}"
        );
        assert_eq!(run.output.exit_code, 0, "{script}: {stderr}");
    }
    for (script, reason) in [
        ("python3 x.py", "`python3` is not a bundle command"),
        ("cargo test", "`cargo` is not a bundle command"),
        ("git status", "`git` is not a bundle command"),
        ("ls && make", "`make` is not a bundle command"),
        (
            "find . -exec python3 {} \\;",
            "`python3` (run by `find -exec`) is not a bundle command",
        ),
        (
            "env A=1 node x",
            "`node` (run by `env`) is not a bundle command",
        ),
        (
            "xargs sh -c 'ls'",
            "`sh` (run by `xargs`) is not a bundle command",
        ),
        (
            "$X args",
            "the command name is only known at run time: it comes from `$X`",
        ),
    ] {
        assert_eq!(
            toolbox.route(script),
            Route::Host {
                reason: reason.to_owned()
            },
            "{script}"
        );
    }
    for script in ["cat <<EOF\nx\nEOF", "echo $(ls)", "(cd src; ls)"] {
        let Route::Host { reason } = toolbox.route(script) else {
            panic!("{script} was routed to the WASI shell");
        };
        assert!(
            reason.contains("outside the portable subset (line"),
            "{script}: {reason}"
        );
        // The shell refuses it as well, with the same construct.
        assert!(toolbox.shell(script, &ctx).is_err());
    }
}
