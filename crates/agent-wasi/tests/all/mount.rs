//! One path space: the real core-utils bundle with the workspace mounted at its own real path
//! (the default of `ShellContext` and of `agent exec`), so the paths the guest prints and
//! accepts are the host's. Paths outside the mount, and `..` above its root, stay out of reach;
//! the directories above the mount look empty.
//! Needs the registry `cargo xtask bundles` builds; skipped (with a note) without it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;

use agent_wasi::shell::ShellContext;
use agent_wasi::toolbox::Toolbox;
use agent_wasi::{CommandInput, host_mount};

/// A workspace holding `x`, `a.txt`, `b.txt`, `sub/s.txt`, with a file beside it (outside).
fn workspace() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let base = tempfile::tempdir().unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("x"), "the x file\n").unwrap();
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    std::fs::write(ws.join("b.txt"), "b\n").unwrap();
    std::fs::write(ws.join("sub/s.txt"), "s\n").unwrap();
    std::fs::write(base.path().join("outside.txt"), "host secret\n").unwrap();
    let real = host_mount(&ws).unwrap();
    (base, ws, real)
}

struct Ran {
    status: i32,
    stdout: String,
    stderr: String,
}

/// Runs `script` through the toolbox with the default context (the workspace at its real
/// path), `@` in the script standing for that path; `@` put back in the output.
fn shell(toolbox: &Toolbox, ws: &Path, real: &str, script: &str) -> Ran {
    let ctx = ShellContext::new(ws).with_env([("LC_ALL", "C")]);
    let run = toolbox.shell(&script.replace('@', real), &ctx).unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap().replace(real, "@");
    Ran {
        status: run.output.exit_code,
        stdout: text(run.output.stdout),
        stderr: text(run.output.stderr),
    }
}

#[test]
fn the_shell_and_its_commands_see_the_real_paths() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let (_base, ws, real) = workspace();
    assert!(real.starts_with('/') && real.ends_with("/ws"), "{real}");
    for (script, want) in [
        ("pwd", "@\n"),
        ("echo $PWD", "@\n"),
        ("realpath x", "@/x\n"),
        ("cd sub && realpath ../x s.txt", "@/x\n@/sub/s.txt\n"),
        ("ls @/x", "@/x\n"),
        ("cat @/x", "the x file\n"),
        ("cd @/sub && pwd", "@/sub\n"),
        ("cd sub; env | grep ^PWD=", "PWD=@/sub\n"),
        ("ls @/*.txt", "@/a.txt\n@/b.txt\n"),
        ("ls -d @/s*", "@/sub\n"),
        ("find @/sub -name '*.txt'", "@/sub/s.txt\n"),
        ("find . -name s.txt -exec realpath {} \\;", "@/sub/s.txt\n"),
        ("echo @/a.txt | xargs cat", "a\n"),
        ("echo made > @/sub/new; cat sub/new", "made\n"),
        (
            "[[ -f @/x && -d @/sub ]] && test -f @/x && echo both",
            "both\n",
        ),
        ("cd sub; readlink -f ../a.txt", "@/a.txt\n"),
    ] {
        let ran = shell(&toolbox, &ws, &real, script);
        assert_eq!(
            (ran.status, ran.stdout.as_str()),
            (0, want),
            "{script}: {}",
            ran.stderr
        );
    }
}

#[test]
fn paths_outside_the_workspace_stay_out_of_reach() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let (_base, ws, real) = workspace();
    for script in [
        // The guest's own opens: nothing of the host is there.
        "cat /etc/passwd",
        "cat @/../outside.txt",
        "ls ..",
        "cat ../outside.txt",
        "touch /new",
        "mkdir @/../new",
        // The shell's own: cd, redirects.
        "cd /",
        "cd ..",
        "cat < /etc/passwd",
        "cat < ../outside.txt",
        "echo x > /tmp/agent-wasi-mount-test",
    ] {
        let ran = shell(&toolbox, &ws, &real, script);
        assert_ne!(ran.status, 0, "{script}: {}", ran.stdout);
        assert!(
            !ran.stdout.contains("root:") && !ran.stdout.contains("host secret"),
            "{script}: {}",
            ran.stdout
        );
    }
    assert!(!Path::new("/tmp/agent-wasi-mount-test").exists());
    assert!(!Path::new(&real).parent().unwrap().join("new").exists());
    // The directories above the mount exist for the guest (so `realpath` can walk from `/`),
    // empty: nothing of the host is listed.
    for script in [
        "ls -a /",
        "ls -A @/..",
        "find / -maxdepth 1 | wc -l",
        "ls /etc",
    ] {
        let ran = shell(&toolbox, &ws, &real, script);
        assert!(
            matches!(ran.stdout.as_str(), "" | ".\n..\n" | "1\n"),
            "{script}: {} {}",
            ran.stdout,
            ran.stderr
        );
    }
    let ran = shell(&toolbox, &ws, &real, "cd /");
    assert_eq!(ran.stderr, "bash: cd: /: outside the workspace\n");
    let ran = shell(&toolbox, &ws, &real, "cat < /etc/passwd");
    assert_eq!(ran.stderr, "bash: /etc/passwd: outside the workspace\n");
    // A failed `cd` leaves the shell where it was.
    let ran = shell(&toolbox, &ws, &real, "cd /; cd ..; pwd");
    assert_eq!(ran.stdout, "@\n");
}

#[test]
fn a_command_alone_can_be_mounted_at_the_real_path_or_at_the_root() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let (_base, ws, real) = workspace();
    let run = |input: CommandInput| {
        let out = toolbox.exec_input(input, &ws).unwrap();
        (
            out.exit_code,
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let at_real = |argv: &[&str]| CommandInput::new(argv.to_vec()).with_mount(real.clone());
    assert_eq!(run(at_real(&["pwd"])).1, format!("{real}\n"));
    assert_eq!(run(at_real(&["realpath", "x"])).1, format!("{real}/x\n"));
    assert_eq!(
        run(at_real(&["cat", &format!("{real}/x")])).1,
        "the x file\n"
    );
    let sub = at_real(&["ls"]).with_cwd(format!("{real}/sub"));
    assert_eq!(run(sub).1, "s.txt\n");
    assert_eq!(run(at_real(&["ls", "/"])).1, "");
    assert_ne!(run(at_real(&["cat", "/etc/passwd"])).0, 0);
    // A working directory outside the mount is refused before anything runs.
    let outside = at_real(&["ls"]).with_cwd("/");
    let err = toolbox.exec_input(outside, &ws).unwrap_err();
    assert!(err.to_string().contains("inside the workspace"), "{err}");
    // A command no bundle has: the message is on stderr, whatever the mount.
    let (code, _, stderr) = run(at_real(&["nope"]));
    assert_eq!((code, stderr.as_str()), (127, "nope: command not found\n"));
    // The workspace as `/`, as `Toolbox::exec` mounts it.
    let root = CommandInput::new(["ls", "/"]);
    assert_eq!(run(root).1, "a.txt\nb.txt\nsub\nx\n");
    let root = CommandInput::new(["pwd"]).with_cwd("/sub");
    assert_eq!(run(root).1, "/sub\n");
}
