//! Project automation.
//!
//! - `cargo xtask ci`: everything CI checks, in order: the PostgreSQL test server's variable
//!   (required under CI, see [`postgres_server`]), format, clippy (warnings are errors),
//!   the layering check, tests (cargo-nextest when installed, else `cargo test`), doc tests, and
//!   `cargo deny check licenses bans sources` when cargo-deny is installed, then the fuzz
//!   targets (built, each run for 10 s) when cargo-fuzz is installed.
//! - `cargo xtask layering`: the layering check alone.
//! - `cargo xtask bundles`: builds `guest/` for wasm32-wasip1 and lays out the signed
//!   core-utils registry in `target/bundles/registry` (see `bundles.rs`).
//! - `cargo xtask bench`: runs the criterion benches and the start-up bench and writes
//!   `docs/benchmarks.md`.
//! - `cargo xtask demo`: the README's main job: the signed core-utils bundle built and
//!   installed as `cargo xtask bundles` does when it is not installed yet, then `agent demo`
//!   with it, so the demo's Bash step runs in the WASI shell (see `demo.rs`).

#![allow(
    clippy::print_stderr,
    clippy::print_stdout,
    reason = "xtask is a terminal tool; printing progress is its job"
)]

mod bench;
mod bench_startup;
mod bench_tokens;
mod bundles;
mod demo;
mod layering;

use std::process::Command;

use anyhow::{Context, Result, bail};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("layering") => layering::check(),
        Some("bench") => bench::run(&args[1..]),
        Some("bundles") => bundles::run_bundles(&args[1..]),
        Some("demo") => demo::run(&args[1..]),
        _ => Err(anyhow::anyhow!(
            "usage: cargo xtask <ci | layering | bundles [--key FILE] | bench [--quick] [--only GROUP] | demo [-- AGENT-DEMO-ARGS]>"
        )),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// A `cargo` command. Under CI (`CI` set and not `false`/`0`) incremental compilation is off:
/// a one-shot build gains nothing from it and its caches doubled the target directory.
pub fn cargo_command() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
        command.env("CARGO_INCREMENTAL", "0");
    }
    command
}

/// Runs a cargo command, failing with its name when it fails.
pub fn cargo(args: &[&str]) -> Result<()> {
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = cargo_command()
        .args(args)
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Whether a cargo subcommand is installed.
fn has_subcommand(name: &str) -> bool {
    cargo_command()
        .args([name, "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The variable naming the PostgreSQL server the session store's tests use
/// (`agent_store::postgres::testing::TEST_SERVER_ENV`; `.ci/postgres` sets it).
const TEST_SERVER_ENV: &str = "AGENT_TEST_POSTGRES_URL";

/// Checks for the PostgreSQL test server before anything is built: under CI (`CI` set, with any
/// value, as the tests read it) its tests fail without one, so say it first and plainly;
/// elsewhere they skip, and the returned warning says so.
///
/// # Errors
/// Under CI when `AGENT_TEST_POSTGRES_URL` is unset or empty.
fn postgres_server(ci: Option<&str>, url: Option<&str>) -> Result<Option<String>> {
    if url.is_some_and(|u| !u.is_empty()) {
        return Ok(None);
    }
    if let Some(ci) = ci {
        bail!(
            "{TEST_SERVER_ENV} is not set, and CI is (CI={ci}): the PostgreSQL session store's tests need a server; \
             run .ci/run (it starts one on loopback), or `eval \"$(.ci/postgres)\"` then cargo xtask ci"
        );
    }
    Ok(Some(format!(
        "xtask: warning: {TEST_SERVER_ENV} is not set: the PostgreSQL session store's tests will be skipped (`eval \"$(.ci/postgres)\"` starts a server on loopback and sets it)"
    )))
}

fn ci() -> Result<()> {
    let started = std::time::Instant::now();
    let ci = std::env::var_os("CI").map(|v| v.to_string_lossy().into_owned());
    let url = std::env::var_os(TEST_SERVER_ENV).map(|v| v.to_string_lossy().into_owned());
    if let Some(warning) = postgres_server(ci.as_deref(), url.as_deref())? {
        eprintln!("{warning}");
    }
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ])?;
    layering::check()?;
    // The guest bundle: its format and lints, then built and signed, before the tests that
    // run it.
    guest_checks()?;
    bundles::run_bundles(&[])?;
    if has_subcommand("nextest") {
        cargo(&[
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ])?;
    } else {
        eprintln!("xtask: cargo-nextest not installed; using cargo test");
        cargo(&[
            "test",
            "--workspace",
            "--locked",
            "--lib",
            "--bins",
            "--tests",
            "--examples",
        ])?;
    }
    cargo(&["test", "--workspace", "--locked", "--doc"])?;
    // Benches must keep compiling and their setup assertions must hold: `cargo test --benches`
    // runs each criterion benchmark once, in the test profile, so CI does not build the whole
    // dependency tree a second time with optimisations (`cargo xtask bench` measures).
    cargo(&["test", "--workspace", "--locked", "--benches"])?;
    if has_subcommand("deny") {
        cargo(&["deny", "--locked", "check", "licenses", "bans", "sources"])?;
    } else {
        eprintln!(
            "xtask: cargo-deny not installed; skipping the license/bans/sources check (.ci/run installs it)"
        );
    }
    fuzz()?;
    eprintln!("xtask: ci passed in {:.0?}", started.elapsed());
    Ok(())
}

/// `cargo fmt --check` and clippy (warnings are errors) of `guest/`, a workspace of its own,
/// then its tests built for the host: unit tests and the GNU oracle over `tests/cases.json`
/// (the same cases run through the wasm build in agent-wasi's tests).
fn guest_checks() -> Result<()> {
    let guest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask has no parent directory")?
        .join("guest");
    let host = host_triple()?;
    bundles::ensure_target()?;
    for args in [
        &["fmt", "--all", "--check"][..],
        &[
            "clippy",
            "--locked",
            "--release",
            "--target",
            "wasm32-wasip1",
            "--",
            "-D",
            "warnings",
        ][..],
        &["test", "--locked", "--target", host.as_str()][..],
    ] {
        eprintln!("xtask: (guest/) cargo {}", args.join(" "));
        let status = cargo_command()
            .args(args)
            .current_dir(&guest)
            .env_remove("CARGO_TARGET_DIR")
            .status()
            .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
        if !status.success() {
            bail!("`cargo {}` in guest/ failed ({status})", args.join(" "));
        }
    }
    Ok(())
}

/// The host's target triple (`rustc -vV`).
fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV printed no host triple")
}

/// The fuzz targets (`fuzz/`, cargo-fuzz, no sanitizer so stable Rust builds them): all built,
/// each run for 10 seconds (checker_agrees for 6,000 inputs), from a fixed seed.
/// `cargo fuzz run -s none TARGET` runs one on demand, for as long as wanted.
fn fuzz() -> Result<()> {
    if !has_subcommand("fuzz") {
        eprintln!(
            "xtask: cargo-fuzz not installed; skipping the fuzz targets (.ci/run installs it)"
        );
        return Ok(());
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask has no parent directory")?
        .join("fuzz");
    let run = |args: &[&str]| -> Result<()> {
        eprintln!("xtask: (fuzz/) cargo {}", args.join(" "));
        // RUST_BACKTRACE would make every panic that agent-core catches (and fails closed on)
        // capture a backtrace, slow enough to trip the per-input time limit.
        let status = cargo_command()
            .args(args)
            .env("RUST_BACKTRACE", "0")
            .current_dir(&root)
            .status()
            .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
        if !status.success() {
            bail!("`cargo {}` in fuzz/ failed ({status})", args.join(" "));
        }
        Ok(())
    };
    run(&["fuzz", "build", "-s", "none"])?;
    // A unit slower than 10 s is a failure (`-timeout`): brush-parser had inputs that took
    // minutes before the guards of `agent_core::shell` (docs/sandbox.md, Fuzzing).
    // Each runs 10 s; checker_agrees (slow: a WASI shell per input) a fixed number of inputs,
    // so every machine runs the same ones.
    for (target, extra) in [
        ("path_normalizer", &["-max_total_time=10"][..]),
        (
            "command_checker",
            &["-max_total_time=10", "-max_len=160", "-dict=shell.dict"][..],
        ),
        (
            "shell_differential",
            &["-max_total_time=10", "-max_len=160", "-dict=shell.dict"][..],
        ),
        // Seeded from corpus/checker_agrees/seed-* (the test's corpus, docs/shell.md).
        (
            "checker_agrees",
            &["-runs=6000", "-max_len=160", "-dict=shell.dict"][..],
        ),
    ] {
        // A fixed seed: CI explores the same inputs every time (a finding is reproducible,
        // never a flake); `cargo fuzz run` by hand explores anew.
        let mut args = vec![
            "fuzz",
            "run",
            "-s",
            "none",
            target,
            "--",
            "-seed=1",
            "-timeout=10",
        ];
        args.extend_from_slice(extra);
        run(&args)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under CI a missing test server stops `cargo xtask ci` before anything is built; elsewhere
    /// it is one warning line; a server set is silence either way.
    #[test]
    fn the_postgres_test_server_is_required_under_ci_only() {
        let e = postgres_server(Some("true"), None).unwrap_err().to_string();
        assert!(
            e.starts_with("AGENT_TEST_POSTGRES_URL is not set, and CI is (CI=true)"),
            "{e}"
        );
        assert!(e.contains(".ci/run"), "{e}");
        assert!(postgres_server(Some("1"), Some("")).is_err());
        let w = postgres_server(None, None).unwrap().unwrap();
        assert!(
            w.contains("the PostgreSQL session store's tests will be skipped"),
            "{w}"
        );
        assert_eq!(w.lines().count(), 1, "{w}");
        let url = Some("postgres://agent_test@127.0.0.1:5432/postgres");
        assert!(postgres_server(Some("true"), url).unwrap().is_none());
        assert!(postgres_server(None, url).unwrap().is_none());
    }
}
