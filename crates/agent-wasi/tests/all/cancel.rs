//! A command whose caller cancels it (`CommandInput::cancel`, Ctrl-C in the agent) stops at
//! once wherever the guest is: running wasm, sleeping within its wall time (wasmtime-wasi's
//! own `poll_oneoff`), or sleeping past it (the bounded sleep).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_wasi::{CommandInput, EXIT_CANCELLED, Limits};

use crate::guests::{self, bare, describe, prepare, run, runtime};

/// The generous bound the issue sets for Ctrl-C: the guest is stopped well within it.
const BOUND: Duration = Duration::from_secs(3);

/// Runs `wat` with `wall` and a flag set after 300 ms; returns the output and how long it ran.
fn cancelled_after_a_moment(wat: &str, wall: Duration) -> (agent_wasi::CommandOutput, Duration) {
    let runtime = runtime();
    let module = prepare(&runtime, wat);
    let workspace = tempfile::tempdir().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let setter = {
        let flag = Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let started = Instant::now();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["guest"])
            .with_limits(Limits::default().with_wall_time(wall))
            .with_cancel(flag),
        workspace.path(),
    );
    let took = started.elapsed();
    setter.join().unwrap();
    (output, took)
}

fn assert_cancelled(output: &agent_wasi::CommandOutput, took: Duration) {
    assert!(took < BOUND, "took {took:?}: {}", describe(output));
    assert_eq!(output.exit_code, EXIT_CANCELLED, "{}", describe(output));
    assert_eq!(output.meta.limit_hit, None, "{}", describe(output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.lines().last() == Some("agent-wasi: cancelled; the command was stopped"),
        "{}",
        describe(output)
    );
}

#[test]
fn a_cancelled_sleep_within_the_wall_time_stops_at_once() {
    let (output, took) =
        cancelled_after_a_moment(&guests::sleep(30_000_000_000), Duration::from_secs(60));
    assert_cancelled(&output, took);
}

#[test]
fn a_cancelled_sleep_past_the_wall_time_stops_at_once() {
    let (output, took) =
        cancelled_after_a_moment(&guests::sleep(3_600_000_000_000), Duration::from_secs(60));
    assert_cancelled(&output, took);
}

#[test]
fn a_cancelled_loop_stops_at_once() {
    let (output, took) = cancelled_after_a_moment(
        &bare(r#"(func (export "_start") (loop $l (br $l)))"#),
        Duration::from_secs(60),
    );
    assert_cancelled(&output, took);
}
