//! What a guest can reach: the workspace at `/`, nothing else of the host.

use std::fs;

use agent_wasi::CommandInput;

use crate::errno;
use crate::guests::{self, describe, prepare, run, runtime};

/// Runs `cat PATH` in a fresh workspace holding `inside.txt` and `etc/passwd` (a decoy), with a
/// host file next to (outside) the workspace.
fn cat(path: &str, setup: impl FnOnce(&std::path::Path)) -> agent_wasi::CommandOutput {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::cat());
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("workspace");
    fs::create_dir_all(workspace.join("etc")).unwrap();
    fs::write(workspace.join("inside.txt"), "inside\n").unwrap();
    fs::write(
        workspace.join("etc/passwd"),
        "the workspace's own etc/passwd\n",
    )
    .unwrap();
    fs::write(root.path().join("outside.txt"), "host secret\n").unwrap();
    setup(&workspace);
    run(
        &runtime,
        &module,
        CommandInput::new(["cat", path]),
        &workspace,
    )
}

#[test]
fn files_inside_the_workspace_are_readable() {
    let output = cat("inside.txt", |_| {});
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    assert_eq!(output.stdout, b"inside\n");
}

#[test]
fn dot_dot_out_of_the_workspace_is_refused() {
    for path in ["../outside.txt", "etc/../../outside.txt", ".."] {
        let output = cat(path, |_| {});
        assert_eq!(
            output.exit_code,
            errno::PERM,
            "{path}: {}",
            describe(&output)
        );
        assert!(output.stdout.is_empty());
    }
}

/// With the workspace preopened at `/`, wasi-libc resolves `/etc/passwd` to `etc/passwd` under
/// the workspace: the guest sees the workspace's own tree, never the host's file.
#[test]
fn absolute_paths_name_workspace_files_not_host_files() {
    let output = cat("etc/passwd", |_| {});
    assert_eq!(output.stdout, b"the workspace's own etc/passwd\n");
    // Without that file, the host's /etc/passwd is still not there.
    let output = cat("etc/passwd", |workspace| {
        fs::remove_file(workspace.join("etc/passwd")).unwrap();
    });
    assert_eq!(output.exit_code, errno::NOENT, "{}", describe(&output));
    // A raw absolute path handed to path_open (no libc translation) does not escape either.
    let output = cat("/etc/passwd", |_| {});
    assert_ne!(output.exit_code, 0, "{}", describe(&output));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("root:"));
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_workspace_are_refused() {
    use std::os::unix::fs::symlink;
    let output = cat("to-etc/passwd", |workspace| {
        symlink("/etc", workspace.join("to-etc")).unwrap();
    });
    assert_eq!(output.exit_code, errno::PERM, "{}", describe(&output));
    let output = cat("to-outside", |workspace| {
        symlink("../outside.txt", workspace.join("to-outside")).unwrap();
    });
    assert_eq!(output.exit_code, errno::PERM, "{}", describe(&output));
    let output = cat("to-outside-abs", |workspace| {
        let target = workspace.parent().unwrap().join("outside.txt");
        symlink(target, workspace.join("to-outside-abs")).unwrap();
    });
    assert_eq!(output.exit_code, errno::PERM, "{}", describe(&output));
    // A symlink that stays inside works.
    let output = cat("to-inside", |workspace| {
        symlink("inside.txt", workspace.join("to-inside")).unwrap();
    });
    assert_eq!(output.stdout, b"inside\n", "{}", describe(&output));
}

#[test]
fn the_workspace_is_writable_and_writes_land_on_the_host() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::write_file());
    let workspace = tempfile::tempdir().unwrap();
    fs::create_dir(workspace.path().join("sub")).unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["write", "sub/out.txt", "written by the guest"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    assert_eq!(
        fs::read_to_string(workspace.path().join("sub/out.txt")).unwrap(),
        "written by the guest"
    );
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["write", "../escaped.txt", "x"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, errno::PERM, "{}", describe(&output));
    assert!(
        !workspace
            .path()
            .parent()
            .unwrap()
            .join("escaped.txt")
            .exists()
    );
}

/// Preview 1 can only use sockets the host preopened, and the runner preopens none: the socket
/// calls fail on every descriptor, and a module importing a socket-creating function (outside
/// preview 1) does not link at all.
#[test]
fn no_sockets() {
    let runtime = runtime();
    let module = prepare(
        &runtime,
        &guests::module(
            r#"
  (func (export "_start")
    (local $fd i32) (local $errno i32)
    (loop $next
      (local.set $errno (call $sock_accept (local.get $fd) (i32.const 0) (i32.const 12)))
      (if (i32.eqz (local.get $errno)) (then (call $proc_exit (i32.const 100))))
      (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
      (br_if $next (i32.lt_u (local.get $fd) (i32.const 8)))))"#,
        ),
    );
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["nc"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0, "{}", describe(&output));

    let (bytes, sha) = guests::wasm(
        r#"(module
             (import "wasi_snapshot_preview1" "sock_open" (func (param i32 i32 i32) (result i32)))
             (memory (export "memory") 1) (func (export "_start")))"#,
    );
    let err = runtime.prepare(&bytes, &sha).unwrap_err();
    assert!(err.to_string().contains("sock_open"), "{err}");
}
