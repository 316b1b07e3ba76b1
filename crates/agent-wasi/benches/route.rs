//! The routing decision (`Toolbox::route`: WASI shell or the host's bash) with the real
//! core-utils bundle's command names, each figure beside a baseline measured in the same run:
//!
//! - `route_pipeline` / `route_and_chain_20`: `Toolbox::route` of a typical agent command (a
//!   pipeline with `find -exec` and `xargs`) and of a 20-command `&&` script: agent-core's one
//!   parse (the tree and the checker's commands), the plan compiler, then the walk over every
//!   command name, each looked up in the installed bundles; vs `core_parse_pipeline` / `core_parse_and_chain_20`,
//!   `agent_core::shell::parse` of the same script (the parse the permission checker runs on
//!   every Bash call anyway).
//! - `plan_parse_pipeline` / `plan_parse_and_chain_20` / `plan_parse_compound`: `Plan::parse`
//!   alone (the parse and the plan compiler, no routing) of those scripts and of one with
//!   compound commands, `${..}` operators and arithmetic; vs `core_parse_*` of the same.
//! - `decision_parsed_once_pipeline`: the whole decision from the command string to the plan
//!   that runs (the permission engine, the sandbox's command checker with a denylist, the
//!   route, the plan), the decision's one parse carried to the checker and one compile from it;
//!   vs `decision_parsed_each_time_pipeline`, the same steps each reading the text anew (four
//!   parses, two compiles), as before issue 24.
//! - `route_host_python`: a script that goes to the host (`python3` is not a bundle command);
//!   vs `spawn_bin_true`, spawning `/bin/true` with `std::process::Command::output` (the least
//!   a host route costs).
//!
//! Needs `target/bundles/registry` (`cargo xtask bundles`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench code: a panic is a failure report"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use agent_bundles::registry::Registry;
use agent_bundles::store::BundleStore;
use agent_bundles::trust::TrustStore;
use agent_wasi::toolbox::{Route, Toolbox};
use agent_wasi::{Runtime, RuntimeConfig};
use criterion::{Criterion, criterion_group, criterion_main};

const PIPELINE: &str = "grep -rn 'TODO' src | sort | head -20 && \
    find . -name '*.rs' -exec wc -l {} + | tail -1; ls -la \"$PWD\"/*.toml | xargs -n1 basename";

const AND_CHAIN: &str = "echo start > log.txt && true && test -f log.txt && cat log.txt && \
    echo two >> log.txt && wc -l log.txt && [ -d sub ] && ls sub && echo three >> log.txt && \
    head -n 1 log.txt && tail -n 1 log.txt && printf '%s\\n' x && basename a/b.txt && \
    dirname a/b.txt && seq 1 3 && sort log.txt && uniq log.txt && cut -c1-2 log.txt && \
    tr a-z A-Z < log.txt && grep -c t log.txt";

/// A script with compound commands, parameter operators and arithmetic (the plan compiler's
/// other paths).
const COMPOUND: &str = "for f in a.txt b.txt c.txt; do if [ -f \"$f\" ]; then n=$((n + 1)); \
    echo \"${f%.txt}: ${n:-0}\"; fi; done; case \"$n\" in 3) echo all;; *) echo some;; esac; \
    while [[ $n -gt 0 && -n \"$f\" ]]; do n=$((n - 1)); done";

const HOST: &str = "cd tools && python3 gen.py --out ../build | tee gen.log";

fn registry() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
        .join("bundles/registry")
}

fn toolbox(dir: &Path) -> Toolbox {
    let store = BundleStore::new(dir.join("bundles"));
    let trust = TrustStore::load(&dir.join("trusted.json")).unwrap();
    let registry = Registry::open(&registry().to_string_lossy())
        .expect("run `cargo xtask bundles` first: target/bundles/registry is missing");
    store
        .install(&registry, &trust, "core-utils", None)
        .unwrap();
    let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
    Toolbox::open(Arc::new(runtime), &store, trust, &[]).unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let tb = toolbox(dir.path());
    assert_eq!(tb.route(PIPELINE), Route::Wasi);
    assert_eq!(tb.route(AND_CHAIN), Route::Wasi);
    assert_eq!(
        tb.route(HOST),
        Route::Host {
            reason: "`python3` is not a bundle command".to_owned()
        }
    );

    let mut group = c.benchmark_group("wasi_route");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("route_pipeline", |b| {
        b.iter(|| black_box(tb.route(black_box(PIPELINE))));
    });
    group.bench_function("core_parse_pipeline", |b| {
        b.iter(|| black_box(agent_core::shell::parse(black_box(PIPELINE)).unwrap()));
    });
    group.bench_function("route_and_chain_20", |b| {
        b.iter(|| black_box(tb.route(black_box(AND_CHAIN))));
    });
    group.bench_function("core_parse_and_chain_20", |b| {
        b.iter(|| black_box(agent_core::shell::parse(black_box(AND_CHAIN)).unwrap()));
    });
    for (name, script) in [
        ("plan_parse_pipeline", PIPELINE),
        ("plan_parse_and_chain_20", AND_CHAIN),
        ("plan_parse_compound", COMPOUND),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(agent_wasi::shell::Plan::parse(black_box(script)).unwrap()));
        });
    }
    group.bench_function("core_parse_compound", |b| {
        b.iter(|| black_box(agent_core::shell::parse(black_box(COMPOUND)).unwrap()));
    });
    // The whole decision from the command string, as the Bash tool takes it to its run: the
    // permission engine's decision, the sandbox's command checker, the route, the plan that
    // runs. Before: each reads the text anew (the engine's parse, the checker's, the route's
    // compile, the run's compile: four parses, two compiles). After: the decision's one parse
    // is carried (`PermissionDecision::prepared`), the checker reads it, one compile from it
    // routes and runs.
    let engine = agent_core::permissions::PermissionEngine::builder("/tmp/ws", "/root")
        .build()
        .unwrap();
    // A sandbox with a command denylist, so the checker reads the command (with none it has
    // nothing to check and reads nothing).
    let checker =
        agent_sandbox::commands::CommandChecker::new(&agent_sandbox::settings::SandboxSettings {
            denied_commands: vec!["rm".into(), "curl".into()],
            ..agent_sandbox::settings::SandboxSettings::default()
        })
        .with_cwd(dir.path());
    let call =
        agent_core::permissions::ToolCall::new("Bash", serde_json::json!({ "command": PIPELINE }));
    let hooks = agent_core::permissions::PreToolUseOutcome::default();
    group.bench_function("decision_parsed_once_pipeline", |b| {
        b.iter(|| {
            let d = engine.check(black_box(&call), &hooks);
            let verdict = checker.check_prepared(PIPELINE, d.prepared.as_deref());
            let prepared = d.prepared.as_deref().unwrap();
            let plan = agent_wasi::shell::Plan::from_parsed(&prepared.parsed);
            let route = tb.route_compiled(&plan);
            black_box((verdict, route, plan))
        });
    });
    group.bench_function("decision_parsed_each_time_pipeline", |b| {
        b.iter(|| {
            let d = engine.check(black_box(&call), &hooks);
            let verdict = checker.check(black_box(PIPELINE));
            let route = tb.route(black_box(PIPELINE));
            let plan = agent_wasi::shell::Plan::parse(black_box(PIPELINE));
            black_box((d, verdict, route, plan))
        });
    });
    group.bench_function("route_host_python", |b| {
        b.iter(|| black_box(tb.route(black_box(HOST))));
    });
    group.bench_function("spawn_bin_true", |b| {
        b.iter(|| {
            let out = Command::new("/bin/true").output().unwrap();
            assert!(out.status.success());
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
