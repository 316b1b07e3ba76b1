//! Every limit stops the guest with its own status, sets `limit_hit`, and says so on stderr.

use std::fs;
use std::time::{Duration, Instant};

use agent_wasi::{
    CommandInput, CommandOutput, EXIT_CPU, EXIT_MEMORY, EXIT_OPEN_FILES, EXIT_OUTPUT,
    EXIT_WALL_TIME, LimitKind, Limits, Output, RunError, Runtime, RuntimeConfig,
};

use crate::guests::{self, bare, describe, prepare, run, runtime};

fn assert_stopped_by(output: &CommandOutput, kind: LimitKind, exit_code: i32) {
    assert_eq!(output.exit_code, exit_code, "{}", describe(output));
    assert_eq!(output.meta.limit_hit, Some(kind), "{}", describe(output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("agent-wasi: ") && last.contains("limit"),
        "{}",
        describe(output)
    );
}

/// Timing bound for limit tests: generous, so a loaded machine does not make them flaky; the
/// measured stop (within one 10 ms tick) is in docs/wasi.md.
const SLACK: Duration = Duration::from_secs(1);

#[test]
fn an_infinite_loop_stops_at_the_wall_time_limit() {
    let runtime = runtime();
    let module = prepare(
        &runtime,
        &bare(r#"(func (export "_start") (loop $l (br $l)))"#),
    );
    let workspace = tempfile::tempdir().unwrap();
    let limit = Duration::from_millis(300);
    let started = Instant::now();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["spin"]).with_limits(Limits::default().with_wall_time(limit)),
        workspace.path(),
    );
    let elapsed = started.elapsed();
    assert_stopped_by(&output, LimitKind::WallTime, EXIT_WALL_TIME);
    assert!(elapsed >= limit, "stopped early: {elapsed:?}");
    assert!(elapsed < limit + SLACK, "stopped late: {elapsed:?}");
    assert!(output.meta.epoch_ticks >= 20, "{:?}", output.meta);
}

/// A guest sleeping in `poll_oneoff` is cut at the limit too (wasmtime-wasi alone would sleep
/// the whole hour on the runner's thread).
#[test]
fn a_long_sleep_stops_at_the_wall_time_limit() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::sleep(3_600_000_000_000));
    let workspace = tempfile::tempdir().unwrap();
    let limit = Duration::from_millis(300);
    let started = Instant::now();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["sleep"]).with_limits(Limits::default().with_wall_time(limit)),
        workspace.path(),
    );
    let elapsed = started.elapsed();
    assert_stopped_by(&output, LimitKind::WallTime, EXIT_WALL_TIME);
    assert!(elapsed >= limit && elapsed < limit + SLACK, "{elapsed:?}");
}

#[test]
fn a_short_sleep_within_the_limit_just_sleeps() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::sleep(20_000_000));
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["sleep"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    assert!(
        output.duration >= Duration::from_millis(20),
        "{:?}",
        output.duration
    );
}

#[test]
fn a_memory_bomb_stops_at_the_memory_limit() {
    let runtime = runtime();
    let module = prepare(
        &runtime,
        &guests::module(
            r#"(func (export "_start")
                 (loop $grow
                   (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
                 (call $proc_exit (i32.const 3)))"#,
        ),
    );
    let workspace = tempfile::tempdir().unwrap();
    let limit = 8 << 20;
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["bomb"]).with_limits(Limits::default().with_memory_bytes(limit)),
        workspace.path(),
    );
    assert_stopped_by(&output, LimitKind::Memory, EXIT_MEMORY);
    assert!(output.meta.peak_memory_bytes <= limit, "{:?}", output.meta);
    assert!(
        output.meta.peak_memory_bytes > limit - (2 << 20),
        "{:?}",
        output.meta
    );
}

#[test]
fn an_initial_memory_above_the_limit_is_the_memory_status() {
    let runtime = runtime();
    let module = prepare(
        &runtime,
        r#"(module (memory (export "memory") 200) (func (export "_start")))"#,
    );
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["big"]).with_limits(Limits::default().with_memory_bytes(1 << 20)),
        workspace.path(),
    );
    assert_stopped_by(&output, LimitKind::Memory, EXIT_MEMORY);
}

#[test]
fn a_table_bomb_stops_at_the_table_limit() {
    let runtime = runtime();
    let module = prepare(
        &runtime,
        &bare(
            r#"(table 1 funcref)
               (func (export "_start")
                 (loop $grow
                   (br_if $grow
                     (i32.ne (table.grow (ref.null func) (i32.const 1000)) (i32.const -1)))))"#,
        ),
    );
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["tables"]).with_limits(Limits::default().with_table_elements(10_000)),
        workspace.path(),
    );
    assert_stopped_by(&output, LimitKind::TableElements, EXIT_MEMORY);
}

#[test]
fn a_stdout_flood_is_truncated_at_the_capture_limit_and_stopped() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::flood(1));
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["yes"])
        .with_stdout(Output::Capture { limit: 10_000 })
        .with_limits(Limits::default().with_wall_time(Duration::from_secs(30)));
    let output = run(&runtime, &module, input, workspace.path());
    assert_stopped_by(&output, LimitKind::Stdout, EXIT_OUTPUT);
    assert_eq!(output.stdout.len(), 10_000);
    assert!(output.stdout.starts_with(b"y\ny\n"));
    assert!(output.stdout_truncated && !output.stderr_truncated);
    assert!(
        output.duration < Duration::from_secs(10),
        "{:?}",
        output.duration
    );
}

#[test]
fn a_stderr_flood_is_truncated_and_the_message_still_appended() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::flood(2));
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["yes"]).with_stderr(Output::Capture { limit: 5_000 });
    let output = run(&runtime, &module, input, workspace.path());
    assert_stopped_by(&output, LimitKind::Stderr, EXIT_OUTPUT);
    assert!(output.stderr_truncated && !output.stdout_truncated);
    assert_eq!(output.meta.stderr_bytes, 5_000);
    assert!(output.stderr.len() > 5_000);
}

#[test]
fn an_output_exactly_at_the_limit_is_not_truncated() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["echo", "abc"]).with_stdout(Output::Capture { limit: 4 });
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
    assert_eq!(output.stdout, b"abc\n");
    assert!(!output.stdout_truncated);
}

/// Opening files in a loop ends at the open-files limit with its own status; the guest got
/// exactly `open_files` handles (one `x` per successful open).
#[test]
fn fd_exhaustion_is_contained_at_the_open_files_limit() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::open_forever());
    let workspace = tempfile::tempdir().unwrap();
    fs::write(workspace.path().join("f"), "f").unwrap();
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["open"]).with_limits(Limits::default().with_open_files(20)),
        workspace.path(),
    );
    assert_stopped_by(&output, LimitKind::OpenFiles, EXIT_OPEN_FILES);
    assert_eq!(output.stdout, b"x".repeat(20), "{}", describe(&output));
}

#[test]
fn fuel_limits_cpu_deterministically() {
    let runtime = Runtime::new(RuntimeConfig::default().with_consume_fuel(true)).unwrap();
    let module = prepare(
        &runtime,
        &bare(r#"(func (export "_start") (loop $l (br $l)))"#),
    );
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["spin"]).with_limits(Limits::default().with_fuel(Some(100_000)));
    let output = run(&runtime, &module, input, workspace.path());
    assert_stopped_by(&output, LimitKind::Fuel, EXIT_CPU);
    assert_eq!(output.meta.fuel_consumed, Some(100_000));

    let module = prepare(&runtime, &guests::echo());
    let output = run(
        &runtime,
        &module,
        CommandInput::new(["echo", "x"]),
        workspace.path(),
    );
    assert_eq!(output.exit_code, 0);
    assert!(output.meta.fuel_consumed.is_some_and(|fuel| fuel > 0));
}

#[test]
fn a_fuel_limit_needs_a_fuel_metering_runtime() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["echo"]).with_limits(Limits::default().with_fuel(Some(1)));
    let err = runtime.run(&module, input, workspace.path()).unwrap_err();
    assert!(matches!(err, RunError::FuelDisabled), "{err}");
}

#[test]
fn limits_above_the_runtime_maximum_are_refused() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let too_big = runtime.config().max_memory_bytes + 1;
    let input =
        CommandInput::new(["echo"]).with_limits(Limits::default().with_memory_bytes(too_big));
    let err = runtime.run(&module, input, workspace.path()).unwrap_err();
    assert!(matches!(err, RunError::InvalidInput { .. }), "{err}");
}

#[test]
fn an_unbounded_wall_time_is_accepted() {
    let runtime = runtime();
    let module = prepare(&runtime, &guests::echo());
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["echo", "x"])
        .with_limits(Limits::default().with_wall_time(Duration::MAX));
    let output = run(&runtime, &module, input, workspace.path());
    assert_eq!(output.exit_code, 0, "{}", describe(&output));
}
