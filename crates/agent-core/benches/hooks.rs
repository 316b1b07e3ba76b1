//! Hook figures (issue 3), each next to a baseline measured in the same run
//! (`cargo xtask bench` writes the table to docs/benchmarks.md):
//! - in-process dispatch: 50 registered PreToolUse hooks, 5 of which match, vs. awaiting the 5
//!   matching closures directly;
//! - a command hook round trip (a `true`-like script) vs. a bare spawn-and-wait of the same
//!   script through `sh -c`;
//! - four matching command hooks of 100 ms each vs. one (concurrency: the ratio should be ≈ 1).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::hint::black_box;
use std::process::Stdio;
use std::time::Duration;

use agent_core::hooks::{
    HookContext, HookEvent, HookOptions, HookOutput, HookRegistry, HooksConfig,
};
use agent_core::settings::Settings;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn dispatch(c: &mut Criterion) {
    let rt = runtime();
    let mut reg = HookRegistry::new();
    for i in 0..50 {
        let matcher = if i % 10 == 0 {
            "Bash".to_owned()
        } else {
            format!("Tool{i}|Other{i}")
        };
        reg.register_fn(
            HookEvent::PreToolUse,
            HookOptions::matching(matcher),
            |input| async move {
                let cmd = input
                    .tool_input()
                    .and_then(|i| i["command"].as_str())
                    .unwrap_or("");
                Ok(if cmd.contains("rm -rf") {
                    HookOutput::deny("no")
                } else {
                    HookOutput::default()
                })
            },
        )
        .unwrap();
    }
    let ctx = HookContext::new("bench", "/repo");
    let input = ctx.pre_tool_use(
        "Bash",
        json!({"command": "cargo test --all"}),
        Some("t1".into()),
    );
    assert_eq!(rt.block_on(reg.execute(input.clone())).runs.len(), 5);
    let mut g = c.benchmark_group("hooks");
    g.bench_function("dispatch_50_registered_5_match", |b| {
        b.iter(|| rt.block_on(reg.execute(black_box(input.clone()))));
    });
    // Baseline: the five matching closures' work, awaited directly, with the same input clone.
    let closures: Vec<_> = (0..5)
        .map(|_| {
            |input: std::sync::Arc<agent_core::hooks::HookInput>| async move {
                let cmd = input
                    .tool_input()
                    .and_then(|i| i["command"].as_str())
                    .unwrap_or("");
                Ok::<_, String>(if cmd.contains("rm -rf") {
                    HookOutput::deny("no")
                } else {
                    HookOutput::default()
                })
            }
        })
        .collect();
    g.bench_function("dispatch_baseline_direct_calls", |b| {
        b.iter(|| {
            rt.block_on(async {
                let input = std::sync::Arc::new(black_box(input.clone()));
                let mut outs = Vec::with_capacity(5);
                for f in &closures {
                    outs.push(f(input.clone()).await);
                }
                outs
            })
        });
    });
    g.finish();
}

fn registry_with(dir: &std::path::Path, event: &str, hooks: Value) -> HookRegistry {
    let s = Settings::from_value(
        json!({"hooks": {event: [{"hooks": hooks}]}}),
        "bench.json",
        dir,
        dir,
    )
    .unwrap();
    let mut reg = HookRegistry::new();
    reg.load(&HooksConfig::from_settings(&s).unwrap()).unwrap();
    reg
}

fn commands(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("true.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let script = script.to_str().unwrap().to_owned();
    let ctx = HookContext::new("bench", dir.path());
    let input = ctx.pre_tool_use("Bash", json!({"command": "ls"}), None);
    let one = registry_with(
        dir.path(),
        "PreToolUse",
        json!([{"type": "command", "command": format!("sh {script}")}]),
    );
    let mut g = c.benchmark_group("hooks");
    g.sample_size(30);
    g.bench_function("command_hook_round_trip", |b| {
        b.iter(|| {
            let r = rt.block_on(one.execute(input.clone()));
            assert_eq!(r.runs[0].exit_code, Some(0));
        });
    });
    g.bench_function("command_baseline_bare_spawn", |b| {
        b.iter(|| {
            let out = rt.block_on(async {
                tokio::process::Command::new("sh")
                    .arg("-c")
                    .arg(format!("sh {script}"))
                    .stdin(Stdio::null())
                    .output()
                    .await
            });
            assert!(out.unwrap().status.success());
        });
    });
    // Identical handlers run once, so the four commands differ in a comment.
    let sleepers =
        |n: usize| {
            registry_with(
                dir.path(),
                "PreToolUse",
                json!((0..n)
                .map(|i| json!({"type": "command", "command": format!("sleep 0.1 # hook {i}")}))
                .collect::<Vec<_>>()),
            )
        };
    let four = sleepers(4);
    let single = sleepers(1);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("four_100ms_hooks", |b| {
        b.iter(|| {
            let r = rt.block_on(four.execute(input.clone()));
            assert_eq!(r.runs.len(), 4);
        });
    });
    g.bench_function("four_baseline_one_100ms_hook", |b| {
        b.iter(|| rt.block_on(single.execute(input.clone())));
    });
    g.finish();
}

criterion_group!(benches, dispatch, commands);
criterion_main!(benches);
