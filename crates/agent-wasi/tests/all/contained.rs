//! "Approved means contained" (issue 24, part B) in the WASI shell: a script approved as
//! read-only runs with a read-only view of the workspace (its own redirects and every module's
//! preopen), and a script held to the programs the checker saw cannot start any other, however
//! it is reached (`xargs`, `env`, `timeout`, `find -exec`). The real core-utils bundle; skipped
//! (with a note) without the registry `cargo xtask bundles` builds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;

use agent_wasi::shell::ShellContext;
use agent_wasi::toolbox::Toolbox;

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::create_dir_all(ws.path().join("sub")).unwrap();
    std::fs::write(ws.path().join("sub/b.txt"), "beta\n").unwrap();
    ws
}

struct Ran {
    status: i32,
    stdout: String,
    stderr: String,
    argv: Vec<Vec<String>>,
}

fn shell(toolbox: &Toolbox, ctx: &ShellContext, script: &str) -> Ran {
    let run = toolbox.shell(script, ctx).unwrap();
    Ran {
        status: run.output.exit_code,
        stdout: String::from_utf8(run.output.stdout).unwrap(),
        stderr: String::from_utf8(run.output.stderr).unwrap(),
        argv: run.commands.iter().map(|c| c.argv.clone()).collect(),
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn unchanged(ws: &Path) {
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/b.txt")).unwrap(),
        "beta\n"
    );
    let mut entries: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["a.txt", "sub"], "the workspace changed");
}

#[test]
fn a_read_only_script_reads_but_nothing_it_runs_can_write() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let ws = workspace();
    let ctx = ShellContext::new(ws.path()).read_only();
    // Reading works as usual.
    let ran = shell(&toolbox, &ctx, "cat a.txt; wc -l < sub/b.txt");
    assert_eq!(ran.stdout, "alpha\n1\n", "{}", ran.stderr);
    assert_eq!(ran.status, 0);
    // The shell's own redirects cannot write or create.
    for script in [
        "echo evil > a.txt",
        "echo evil >> a.txt",
        "echo new > new.txt",
    ] {
        let ran = shell(&toolbox, &ctx, script);
        assert_ne!(ran.status, 0, "{script}");
        assert!(
            ran.stderr.contains("Read-only file system"),
            "{script}: {}",
            ran.stderr
        );
        unchanged(ws.path());
    }
    // Nor can any module, whichever way it would write.
    for script in [
        "touch new.txt",
        "rm a.txt",
        "mkdir d",
        "cp a.txt c.txt",
        "mv a.txt z.txt",
        "sed -i s/alpha/evil/ a.txt",
        "tee a.txt < sub/b.txt",
        "ls | xargs rm -f",
        "find . -name '*.txt' -delete",
        "find . -type f -exec rm {} +",
    ] {
        let ran = shell(&toolbox, &ctx, script);
        assert_ne!(ran.status, 0, "{script}: {}", ran.stdout);
        unchanged(ws.path());
    }
}

#[test]
fn a_script_held_to_its_programs_cannot_start_another() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let ws = workspace();
    let seen = names(&["cat", "echo", "env", "find", "ls", "timeout", "xargs"]);
    let ctx = ShellContext::new(ws.path()).with_programs(
        seen,
        "approved as a read-only command for the programs it names",
    );
    let ran = shell(&toolbox, &ctx, "ls; cat a.txt");
    assert_eq!(ran.status, 0, "{}", ran.stderr);
    assert_eq!(ran.stdout, "a.txt\nsub\nalpha\n");
    // Every road to another program is closed: named, and through each command
    // that starts commands.
    for (script, program) in [
        ("rm a.txt", "rm"),
        ("ls | xargs --replace rm -f {}", "rm"),
        ("echo a.txt | xargs rm", "rm"),
        ("timeout --sig KILL 5 rm a.txt", "rm"),
        ("env --u X rm a.txt", "rm"),
        ("find . -name a.txt -exec rm {} +", "rm"),
        ("timeout 5 env xargs -a a.txt touch", "touch"),
    ] {
        let ran = shell(&toolbox, &ctx, script);
        assert!(
            ran.stderr.contains(&format!(
                "{program}: not started: approved as a read-only command"
            )),
            "{script}: {}",
            ran.stderr
        );
        assert!(
            !ran.argv
                .iter()
                .any(|a| a[0].ends_with("rm") || a[0] == "touch"),
            "{script} started {:?}",
            ran.argv
        );
        unchanged(ws.path());
    }
    let ran = shell(&toolbox, &ctx, "rm a.txt");
    assert_eq!(ran.status, 126);
}

#[test]
fn an_offline_script_runs_without_the_network_grant() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let ws = workspace();
    // Offline changes nothing for commands that do not use the network.
    let ctx = ShellContext::new(ws.path()).offline();
    let ran = shell(&toolbox, &ctx, "cat a.txt | wc -c");
    assert_eq!(ran.stdout, "6\n", "{}", ran.stderr);
}

/// Parse once and carry it: the plan compiled from a parse agent-core made (the one a
/// permission decision carries) is what runs; the text is not parsed again.
#[test]
fn the_plan_from_a_carried_parse_is_what_runs() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let ws = workspace();
    let ctx = ShellContext::new(ws.path());
    let carried = agent_core::shell::Prepared::new("cat a.txt | wc -c");
    let plan = agent_wasi::shell::Plan::from_parsed(&carried.parsed).unwrap();
    let ran = toolbox.run_plan_until(&plan, &ctx, None).unwrap();
    assert_eq!(String::from_utf8(ran.output.stdout).unwrap(), "6\n");
    assert_eq!(ran.commands.len(), 2);
    // The route of the same compile agrees with the text's.
    assert!(matches!(
        toolbox.route_compiled(&Ok(plan)),
        agent_wasi::toolbox::Route::Wasi
    ));
    // A parse error is the compiler's refusal, as for the text.
    let broken = agent_core::shell::Prepared::new("cat 'a.txt");
    assert!(agent_wasi::shell::Plan::from_parsed(&broken.parsed).is_err());
}
