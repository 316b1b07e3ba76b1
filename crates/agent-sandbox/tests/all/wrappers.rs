//! Issue 24: wrappers (`xargs`, `env`, `timeout`, `time`, `flock`, ...) read with the
//! programs' own option tables, by the sandbox's command checker as by the permission engine.

use agent_sandbox::commands::CommandChecker;
use agent_sandbox::settings::SandboxSettings;

fn verdicts(c: &CommandChecker, cases: &[(&str, bool)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(cmd, allowed)| {
            let v = c.check(cmd);
            (v.allowed != allowed).then(|| format!("{cmd:?}: allowed={} ({})", v.allowed, v.reason))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `deniedCommands: ["rm"]` sees `rm` where the wrapper's program would run it, and refuses
/// a wrapper whose options it cannot read as the program would, or that runs the command in
/// another directory (where `deniedPaths` would not see its relative paths).
#[test]
fn a_denied_command_behind_any_spelling_of_a_wrapper_is_refused() {
    let c = CommandChecker::new(&SandboxSettings {
        denied_commands: vec!["rm".to_owned()],
        denied_paths: vec![std::path::PathBuf::from("/etc/shadow")],
        ..SandboxSettings::default()
    })
    .with_cwd(std::env::temp_dir());
    verdicts(
        &c,
        &[
            ("ls | xargs --replace rm -rf x", false),
            ("timeout --sig KILL 5 rm x", false),
            ("xargs --max-a 1 rm x", false),
            ("env --u X rm x", false),
            ("xargs --replace sh -c 'rm x'", false),
            ("xargs -I{} sh -c 'echo {}'", false),
            ("xargs -I{} {} x", false),
            ("env -S'rm x'", false),
            ("env -S'-u X rm x'", false),
            ("watch -n 1 'ls; rm x'", false),
            ("flock l -c 'rm x'", false),
            ("xargs --max 1 echo x", false),
            ("env -C /etc cat shadow", false),
            ("cat /etc/shadow", false),
            ("timeout --sig KILL 1 echo t", true),
            ("xargs --replace echo x", true),
            ("env -S'echo x'", true),
        ],
    );
}

/// Files the wrappers themselves write (`time -o`, `flock FILE`, `watch -s`) are checked
/// against the write grants, at any depth of wrapping.
#[test]
fn files_wrappers_write_are_checked_against_the_write_grants() {
    let dir = tempfile::tempdir().unwrap();
    let work = std::fs::canonicalize(dir.path()).unwrap();
    let c = CommandChecker::new(&SandboxSettings {
        allowed_write_paths: Some(vec![work.clone()]),
        ..SandboxSettings::default()
    })
    .with_cwd(work.clone());
    let inside = work.join("t.txt");
    let inside = inside.display();
    verdicts(
        &c,
        &[
            ("\\time -o /etc/x ls", false),
            ("command time --output=/etc/x ls", false),
            ("nice -n 1 time --out /etc/x ls", false),
            ("timeout 5 /usr/bin/time -ao/etc/x ls", false),
            ("flock /etc/lock ls", false),
            ("watch -s /etc/shots -x ls", false),
            (&format!("\\time -o {inside} ls"), true),
            ("flock lock ls", true),
        ],
    );
}
