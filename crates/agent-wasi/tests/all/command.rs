//! `Command(argv)`: arguments, environment, working directory, stdio, exit statuses.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;
use std::time::Duration;

use agent_wasi::{
    CacheState, CommandInput, EXIT_TRAP, Input, InstanceAllocator, Output, PrepareError, RunError,
    Runtime, RuntimeConfig,
};

use crate::errno;
use crate::guests::{self, bare, describe, prepare, run, runtime};

#[test]
fn echo_writes_its_arguments() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["echo", "hello", "big world"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    assert_eq!(output.stdout, b"hello big world\n");
    assert!(output.stderr.is_empty());
    assert!(!output.stdout_truncated && !output.stderr_truncated);
    assert_eq!(output.meta.module_sha256, module.sha256());
    assert_eq!(output.meta.limit_hit, None);
    assert_eq!(output.meta.stdout_bytes, 16);
}

#[test]
fn argv_is_passed_through_with_argv0_as_given() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::args());
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["ls", "-l", "", "a b", "ünï"]),
        workspace.path(),
    );
    assert_eq!(output.stdout, "ls\0-l\0\0a b\0ünï\0".as_bytes());
}

#[test]
fn env_contains_only_what_was_passed_plus_pwd_from_cwd() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::env());
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["env"])
        .with_env("LANG", "C.UTF-8")
        .with_env("PWD", "/ignored")
        .with_env("EMPTY", "")
        .with_cwd("/src/lib");
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    let env = String::from_utf8(output.stdout).unwrap();
    let mut vars: Vec<&str> = env.split_terminator('\0').collect();
    vars.sort_unstable();
    // Nothing of the host's environment (PATH, HOME, CARGO_*...): only these.
    assert_eq!(vars, ["EMPTY=", "LANG=C.UTF-8", "PWD=/src/lib"]);
}

#[test]
fn default_cwd_is_the_workspace_root() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::env());
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["env"]),
        workspace.path(),
    );
    assert_eq!(output.stdout, b"PWD=/\0");
}

#[test]
fn proc_exit_gives_the_exit_code_and_returning_gives_zero() {
    let runtime = runtime();
    let workspace = tempfile::tempdir().unwrap();
    for (code, expected) in [(0, 0), (7, 7), (125, 125)] {
        let module = prepare(
            &runtime,
            &guests::module(&format!(
                r#"(func (export "_start") (call $proc_exit (i32.const {code})))"#
            )),
        );
        let output = run(
            &runtime,
            &module,
            CommandInput::new(["x"]),
            workspace.path(),
        );
        assert_eq!(output.exit_code, expected, "{}", describe(&output));
        assert_eq!(output.meta.limit_hit, None);
        assert!(output.stderr.is_empty());
    }
    let module = prepare(&runtime, &bare(r#"(func (export "_start"))"#));
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["x"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0);
}

#[test]
fn a_trap_is_its_own_status_with_the_message_on_stderr() {
    let runtime = runtime();
    let workspace = tempfile::tempdir().unwrap();
    let module = prepare(&runtime, &bare(r#"(func (export "_start") unreachable)"#));
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["x"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, EXIT_TRAP, "{}", describe(&output));
    let trap = output.meta.trap.clone().unwrap();
    assert!(trap.contains("unreachable"), "{trap}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("agent-wasi: the command trapped:") && stderr.contains("unreachable"),
        "{stderr}"
    );
    assert_eq!(output.meta.limit_hit, None);
}

/// wasmtime-wasi alone refuses statuses from 126 up; the runner accepts what a POSIX parent can
/// see (GNU `env` exits 126 or 127), and `limit_hit`/`trap` stay empty: the guest chose them.
#[test]
fn exit_statuses_up_to_255_are_the_guests_own() {
    let runtime = runtime();
    let workspace = tempfile::tempdir().unwrap();
    for code in [126, 127, 137, 255] {
        let module = prepare(
            &runtime,
            &guests::module(&format!(
                r#"(func (export "_start") (call $proc_exit (i32.const {code})))"#
            )),
        );
        let output = run(
            &runtime,
            &module,
            CommandInput::new(["x"]),
            workspace.path(),
        );
        assert_eq!(output.exit_code, code, "{}", describe(&output));
        assert_eq!((output.meta.limit_hit, output.meta.trap), (None, None));
        assert!(output.stderr.is_empty());
    }
}

#[test]
fn an_exit_status_above_255_is_a_trap_with_a_one_line_message() {
    let runtime = runtime();
    let workspace = tempfile::tempdir().unwrap();
    for code in ["256", "-1"] {
        let module = prepare(
            &runtime,
            &guests::module(&format!(
                r#"(func (export "_start") (call $proc_exit (i32.const {code})))"#
            )),
        );
        let output = run(
            &runtime,
            &module,
            CommandInput::new(["x"]),
            workspace.path(),
        );
        assert_eq!(output.exit_code, EXIT_TRAP, "{}", describe(&output));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("outside 0..=255"), "{stderr}");
    }
}

#[test]
fn stdin_bytes_null_and_reader() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::cat());
    let workspace = tempfile::tempdir().unwrap();

    let input = CommandInput::new(["cat"]).with_stdin(Input::Bytes(b"from bytes\n".to_vec()));
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.stdout, b"from bytes\n", "{}", describe(&output));
    assert_eq!(output.meta.stdin_bytes, 11);

    let output = run(
        &runtime,
        &module,
        CommandInput::new(["cat"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0);
    assert!(output.stdout.is_empty());

    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let input = CommandInput::new(["cat"])
        .with_stdin(Input::Reader(Box::new(std::io::Cursor::new(big.clone()))));
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    assert_eq!(output.stdout, big);
}

#[test]
fn output_null_discards_and_counts() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["echo", "abc"]).with_stdout(Output::Null);
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.exit_code, 0);
    assert!(output.stdout.is_empty());
    assert_eq!(output.meta.stdout_bytes, 4);
}

/// The pipeline seam: `flood | head -1` with the two stages on two threads. The writer streams
/// (the reader gets a line while the guest still runs), and once the reader is gone the guest's
/// write fails with EPIPE, so it ends instead of running until its wall-time limit.
#[test]
fn writer_streams_and_a_broken_pipe_ends_the_writer() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::flood(1));
    let workspace = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    let head = std::thread::spawn(move || {
        let mut line = String::new();
        BufReader::new(reader).read_line(&mut line).unwrap();
        line
    });
    let input = CommandInput::new(["yes"]).with_stdout(Output::Writer(Box::new(writer)));
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(head.join().unwrap(), "y\n");
    assert_eq!(output.exit_code, errno::PIPE, "{}", describe(&output));
    assert_eq!(output.meta.limit_hit, None);
    assert!(
        output.duration < Duration::from_secs(10),
        "{:?}",
        output.duration
    );
}

/// The writer is dropped when the guest ends, so the next stage sees end of file.
#[test]
fn the_writer_is_closed_when_the_guest_ends() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let (mut reader, writer) = std::io::pipe().unwrap();
    let input = CommandInput::new(["echo", "one"]).with_stdout(Output::Writer(Box::new(writer)));
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.exit_code, 0);
    let mut all = String::new();
    reader.read_to_string(&mut all).unwrap();
    assert_eq!(all, "one\n");
}

#[test]
fn malformed_input_is_a_host_side_error() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let cases = [
        CommandInput::new(Vec::<String>::new()),
        CommandInput::new(["echo"]).with_cwd("relative"),
        CommandInput::new(["echo"]).with_env("A=B", "c"),
        CommandInput::new(["echo"]).with_env("", "c"),
        CommandInput::new(["echo", "nul\0"]),
    ];
    for input in cases {
        let err = runtime.run(&module, input, workspace.path()).unwrap_err();
        assert!(matches!(err, RunError::InvalidInput { .. }), "{err}");
    }
    let err = runtime
        .run(
            &module,
            CommandInput::new(["echo"]),
            &workspace.path().join("missing"),
        )
        .unwrap_err();
    assert!(matches!(err, RunError::Workspace { .. }), "{err}");
}

#[test]
fn modules_that_are_not_wasi_commands_are_refused() {
    let runtime = runtime();
    let (bytes, sha) = guests::wasm(&bare(r#"(func (export "main"))"#));
    let err = runtime.prepare(&bytes, &sha).unwrap_err();
    assert!(matches!(err, PrepareError::NotACommand { .. }), "{err}");

    let (bytes, sha) = guests::wasm(
        r#"(module (import "env" "host_secret" (func)) (memory (export "memory") 1)
             (func (export "_start")))"#,
    );
    let err = runtime.prepare(&bytes, &sha).unwrap_err();
    assert!(matches!(err, PrepareError::Link { .. }), "{err}");

    let (bytes, sha) =
        guests::wasm("(module (func $f (export \"_start\") (result i32) i32.const 0))");
    let err = runtime.prepare(&bytes, &sha).unwrap_err();
    assert!(matches!(err, PrepareError::NotACommand { .. }), "{err}");

    let not_wasm = b"#!/bin/sh\necho hi\n";
    let err = runtime
        .prepare(not_wasm, &guests::sha256_hex(not_wasm))
        .unwrap_err();
    assert!(matches!(err, PrepareError::Compile { .. }), "{err}");
}

#[test]
fn on_demand_allocator_runs_commands_too() {
    let runtime =
        Runtime::new(RuntimeConfig::default().with_allocator(InstanceAllocator::OnDemand)).unwrap();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["echo", "x"]),
        workspace.path(),
    );
    assert_eq!(output.stdout, b"x\n");
    assert_eq!(output.meta.cache, CacheState::Compiled);
}

/// With every pooling slot taken, a command fails fast (host side) instead of waiting: a
/// pipeline waiting for a slot held by its own other stage would deadlock.
#[test]
fn pool_exhaustion_is_reported_as_busy() {
    let runtime = Runtime::new(RuntimeConfig::default().with_max_instances(1)).unwrap();
    let module = prepare(&runtime, &guests::cat());
    let workspace = tempfile::tempdir().unwrap();

    /// A stdin that says when the guest first reads, then waits to be released.
    struct Gate {
        reading: mpsc::Sender<()>,
        release: mpsc::Receiver<()>,
    }
    impl Read for Gate {
        fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
            let _ = self.reading.send(());
            let _ = self.release.recv();
            Ok(0)
        }
    }
    let (reading, guest_is_reading) = mpsc::channel();
    let (release, released) = mpsc::channel();
    let gate = Gate {
        reading,
        release: released,
    };

    std::thread::scope(|scope| {
        let first = scope.spawn(|| {
            let input = CommandInput::new(["cat"]).with_stdin(Input::Reader(Box::new(gate)));
            run(&runtime, &module, input, workspace.path())
        });
        guest_is_reading.recv().unwrap();
        let err = runtime
            .run(&module, CommandInput::new(["cat"]), workspace.path())
            .unwrap_err();
        assert!(matches!(err, RunError::Busy { max_instances: 1 }), "{err}");
        release.send(()).unwrap();
        assert_eq!(first.join().unwrap().exit_code, 0);
    });
    // The slot is free again.
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["cat"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0);
}

#[test]
fn commands_run_concurrently_on_threads() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (runtime, module, workspace) = (&runtime, &module, workspace.path());
                scope.spawn(move || {
                    let word = format!("w{i}");
                    let output = run(
                        runtime,
                        module,
                        CommandInput::new(["echo", &word]),
                        workspace,
                    );
                    assert_eq!(output.stdout, format!("{word}\n").as_bytes());
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    });
}
