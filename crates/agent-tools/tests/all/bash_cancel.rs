//! Ctrl-C reaches a running Bash command (issue 26): a `sleep 30` cancelled through the call's
//! cancellation flag returns within 3 s, says it was cancelled, and leaves no process behind:
//! the native backend (inside bubblewrap when it can run here, else with no OS sandbox, which
//! kills the process group the same way) and the WASI shell (when the core-utils registry is
//! built: `cargo xtask bundles`, and the `wasi` feature is on).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a panic is a failure report; the skip note is for the reader"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::tools::{Tool, ToolContext, ToolError, ToolOutput};
use agent_sandbox::caps::OutputCaps;
use agent_sandbox::outer::backend_named;
use agent_sandbox::profile::ProfileTree;
use agent_sandbox::settings::SandboxSettings;
use agent_tools::{Bash, BashBackend, NativeBackend, Unsandboxed};
use serde_json::json;

/// The bound the issue sets for Ctrl-C during a tool.
const BOUND: Duration = Duration::from_secs(3);

fn tree() -> ProfileTree {
    ProfileTree::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")).unwrap()
}

fn tool(backend: Arc<dyn BashBackend>, ws: &Path) -> Bash {
    Bash::new(backend, SandboxSettings::default()).with_caps(OutputCaps {
        spill_dir: ws.join("spill"),
        ..OutputCaps::default()
    })
}

/// Runs `command` with a cancellation set after a second; the result and how long it took.
fn cancelled_after_a_second(tool: &Bash, ws: &Path, command: &str) -> (ToolOutput, Duration) {
    let ctx = ToolContext::new(ws, "s1", "toolu_1");
    let flag = ctx.cancellation.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        flag.cancel();
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let out: Result<ToolOutput, ToolError> =
        runtime.block_on(tool.call(json!({"command": command}), &ctx));
    let took = started.elapsed();
    setter.join().unwrap();
    (out.unwrap(), took)
}

/// Processes on this machine whose command line holds `marker` (zombies aside).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && text.contains(marker) {
            found.push(format!("{name}: {text}"));
        }
    }
    found
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(tmp.path()).unwrap();
    (tmp, ws)
}

fn assert_cancelled(out: &ToolOutput, took: Duration) {
    assert!(took < BOUND, "took {took:?}: {}", out.output);
    assert_eq!(out.output["cancelled"], true, "{}", out.output);
    assert_eq!(out.output["interrupted"], true, "{}", out.output);
    assert!(out.is_error, "{}", out.output);
    let why = out.output["stoppedBy"].as_str().unwrap_or_default();
    assert!(why.contains("cancelled by the user"), "{}", out.output);
}

#[cfg(target_os = "linux")]
#[test]
fn a_cancelled_host_command_ends_with_every_process_it_started() {
    let (_t, ws) = workspace();
    let outer = match backend_named("bwrap").unwrap() {
        b if b.probe().is_ok() => b,
        b => {
            eprintln!(
                "note: bubblewrap cannot run here ({}); the command runs with no OS sandbox",
                b.probe().unwrap_err()
            );
            backend_named("none").unwrap()
        }
    };
    let name = outer.name();
    let tool = tool(
        Arc::new(NativeBackend::new(outer, tree(), Unsandboxed::Allowed)),
        &ws,
    );
    let marker = format!("30.{}1", std::process::id());
    let (out, took) = cancelled_after_a_second(
        &tool,
        &ws,
        &format!("echo started; sleep {marker} & sleep {marker}; echo not-cancelled"),
    );
    assert_cancelled(&out, took);
    assert_eq!(out.output["stdout"], "started\n", "{name}: {}", out.output);
    assert!(
        out.output["stoppedBy"]
            .as_str()
            .unwrap()
            .contains("every process it started were killed")
    );
    let mut left = processes_with(&marker);
    for _ in 0..25 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = processes_with(&marker);
    }
    assert!(left.is_empty(), "{name}: left running: {left:?}");
}

#[cfg(feature = "wasi")]
#[test]
fn a_cancelled_wasi_script_stops_the_command_it_runs() {
    use agent_bundles::registry::Registry;
    use agent_bundles::store::BundleStore;
    use agent_bundles::trust::TrustStore;
    use agent_tools::WasiBackend;
    use agent_wasi::toolbox::Toolbox;
    use agent_wasi::{Runtime, RuntimeConfig};

    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let registry = target.join("bundles/registry");
    if !registry.join("index.json").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: `cargo xtask ci` builds it before the tests",
            registry.display()
        );
        eprintln!("skipped: run `cargo xtask bundles` first");
        return;
    }
    let (_t, ws) = workspace();
    let (_h, home) = workspace();
    let store = BundleStore::new(home.join("bundles"));
    let trust = TrustStore::load(&home.join("trusted.json")).unwrap();
    store
        .install(
            &Registry::open(&registry.to_string_lossy()).unwrap(),
            &trust,
            "core-utils",
            None,
        )
        .unwrap();
    let runtime =
        Runtime::new(RuntimeConfig::default().with_cache_dir(target.join("wasi-test-cache")))
            .unwrap();
    let toolbox = Toolbox::open(Arc::new(runtime), &store, trust, &[]).unwrap();
    let tool = tool(Arc::new(WasiBackend::new(Arc::new(toolbox))), &ws);
    let (out, took) =
        cancelled_after_a_second(&tool, &ws, "echo started; sleep 30; echo not-cancelled");
    assert_cancelled(&out, took);
    assert_eq!(out.output["backend"], "wasi", "{}", out.output);
    assert_eq!(out.output["stdout"], "started\n", "{}", out.output);
}
