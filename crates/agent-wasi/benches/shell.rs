//! The real core-utils bundle through the toolbox (issue: "per-command start-to-exit of `echo hi`
//! with warm caches ... ≥ 15× faster than fork/exec of native `/bin/echo` and ≥ 100× faster than
//! the wasmtime CLI per command; `cat f | grep x | wc -l` on a 1 MB file and a 20-command `&&`
//! script: report both beside bash; cold first-ever run reported separately"), each figure beside
//! a baseline measured in the same run:
//!
//! - `coreutils_echo_warm`: `Toolbox::exec(["echo", "hi"])` from the installed bundle (`echo`
//!   lives in the 84 KB `coreutils-lite.wasm`, with true, false, pwd, basename and dirname), the
//!   verified module prepared (warm memory cache), stdout captured; vs `native_bin_echo_spawn`, spawning
//!   `/bin/echo hi` with `std::process::Command::output`; and vs `wasmtime_cli_echo` (when the
//!   wasmtime 48 CLI is installed: `WASMTIME_CLI=/path/to/wasmtime`, never in CI), one `wasmtime
//!   run --allow-precompiled` process per command on the same precompiled module.
//! - `pipeline_1mb`: `Toolbox::shell("cat big.txt | grep x | wc -l")` on a 1 MiB file; vs
//!   `bash_pipeline_1mb`, `bash -c` with the host's GNU tools, same file.
//! - `and_chain_20`: a 20-command `&&` script (echo, true, test, cat, wc, ...) through the toolbox;
//!   vs `bash_and_chain_20`, the same script with `bash -c`.
//! - `cold_first_run`: a fresh runtime and an empty module cache: verify and compile both
//!   modules of the bundle (`Toolbox::warm_up`, what `agent bundles install` does), write the
//!   cache, run `echo hi`; vs `warm_first_run_disk_cache`: a fresh runtime whose cache
//!   holds the compiled module (what every new `agent` process pays once).
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
use agent_wasi::shell::ShellContext;
use agent_wasi::toolbox::Toolbox;
use agent_wasi::{Input, Runtime, RuntimeConfig};
use criterion::{Criterion, criterion_group, criterion_main};

const AND_CHAIN: &str = "echo start > log.txt && true && test -f log.txt && cat log.txt && \
    echo two >> log.txt && wc -l log.txt && [ -d sub ] && ls sub && echo three >> log.txt && \
    head -n 1 log.txt && tail -n 1 log.txt && printf '%s\\n' x && basename a/b.txt && \
    dirname a/b.txt && seq 1 3 && sort log.txt && uniq log.txt && cut -c1-2 log.txt && \
    tr a-z A-Z < log.txt && grep -c t log.txt";

fn registry() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
        .join("bundles/registry")
}

fn store(dir: &Path) -> (BundleStore, TrustStore) {
    let store = BundleStore::new(dir.join("bundles"));
    let trust = TrustStore::load(&dir.join("trusted.json")).unwrap();
    let registry = Registry::open(&registry().to_string_lossy())
        .expect("run `cargo xtask bundles` first: target/bundles/registry is missing");
    store
        .install(&registry, &trust, "core-utils", None)
        .unwrap();
    (store, trust)
}

fn toolbox(store: &BundleStore, trust: &TrustStore, cache: &Path) -> Toolbox {
    let runtime = Runtime::new(RuntimeConfig::default().with_cache_dir(cache)).unwrap();
    Toolbox::open(Arc::new(runtime), store, trust.clone(), &[]).unwrap()
}

fn echo(toolbox: &Toolbox, ws: &Path) {
    let out = toolbox
        .exec(
            vec!["echo".into(), "hi".into()],
            "/",
            Vec::new(),
            Input::Null,
            1 << 20,
            ws,
        )
        .unwrap();
    assert_eq!(out.stdout, b"hi\n");
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (store, trust) = store(dir.path());
    let cache = dir.path().join("cache");
    let tb = toolbox(&store, &trust, &cache);
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/f"), "f\n").unwrap();
    let mut big = String::new();
    let mut i = 0u64;
    while big.len() < 1 << 20 {
        big.push_str(if i.is_multiple_of(7) {
            "a line with x in it\n"
        } else {
            "another plain line\n"
        });
        i += 1;
    }
    std::fs::write(ws.join("big.txt"), &big).unwrap();
    echo(&tb, &ws);

    let mut group = c.benchmark_group("wasi_shell");
    // The cold run compiles a 5.6 MB module (seconds); ten samples keep the group bounded.
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("coreutils_echo_warm", |b| b.iter(|| echo(&tb, &ws)));
    group.bench_function("native_bin_echo_spawn", |b| {
        b.iter(|| {
            let out = Command::new("/bin/echo").arg("hi").output().unwrap();
            assert_eq!(out.stdout, b"hi\n");
        });
    });
    if let Some(cli) = std::env::var_os("WASMTIME_CLI") {
        // The same module precompiled by that CLI (its cwasm format is its own).
        let wasm = store
            .resolver(&[])
            .unwrap()
            .which("echo")
            .map(|r| r.bundle.dir.join(&r.entry.module_path))
            .unwrap();
        let cwasm = dir.path().join("coreutils.cwasm");
        let status = Command::new(&cli)
            .args(["compile", "-o"])
            .arg(&cwasm)
            .arg(&wasm)
            .status()
            .unwrap();
        assert!(status.success());
        let dir_arg = format!("{}::/", ws.display());
        group.bench_function("wasmtime_cli_echo", |b| {
            b.iter(|| {
                let out = Command::new(&cli)
                    .args([
                        "run",
                        "--allow-precompiled",
                        "--dir",
                        &dir_arg,
                        "--argv0",
                        "echo",
                    ])
                    .arg(&cwasm)
                    .arg("hi")
                    .output()
                    .unwrap();
                assert_eq!(out.stdout, b"hi\n");
            });
        });
    }
    let ctx = ShellContext::new(&ws).with_env([("LC_ALL", "C")]);
    let bash = |script: &'static str| {
        let ws = ws.clone();
        move || {
            Command::new("bash")
                .args(["--noprofile", "--norc", "-c", script])
                .current_dir(&ws)
                .env_clear()
                .env("LC_ALL", "C")
                .env("PATH", "/usr/bin:/bin")
                .output()
                .unwrap()
        }
    };
    let pipeline = "cat big.txt | grep x | wc -l";
    let want = bash(pipeline)().stdout;
    assert_eq!(tb.shell(pipeline, &ctx).unwrap().output.stdout, want);
    group.bench_function("pipeline_1mb", |b| {
        b.iter(|| black_box(tb.shell(pipeline, &ctx).unwrap()));
    });
    let run = bash(pipeline);
    group.bench_function("bash_pipeline_1mb", |b| b.iter(|| black_box(run())));
    // The same pipeline held to a read-only approval: read-only workspace (redirects and
    // preopens), offline, only the programs the checker saw may start.
    let held = ctx.clone().read_only().offline().with_programs(
        vec!["cat".into(), "grep".into(), "wc".into()],
        "approved as read-only",
    );
    assert_eq!(tb.shell(pipeline, &held).unwrap().output.stdout, want);
    group.bench_function("pipeline_1mb_read_only", |b| {
        b.iter(|| black_box(tb.shell(pipeline, &held).unwrap()));
    });
    let want = bash(AND_CHAIN)().stdout;
    let ours = tb.shell(AND_CHAIN, &ctx).unwrap();
    std::fs::remove_file(ws.join("log.txt")).unwrap();
    assert_eq!(
        ours.output.stdout, want,
        "the && script must print what bash prints"
    );
    assert!(
        ours.commands.len() >= 15,
        "every command but the built-ins ran as a module"
    );
    group.bench_function("and_chain_20", |b| {
        b.iter(|| black_box(tb.shell(AND_CHAIN, &ctx).unwrap()));
    });
    let run = bash(AND_CHAIN);
    group.bench_function("bash_and_chain_20", |b| b.iter(|| black_box(run())));

    let mut n = 0u32;
    group.bench_function("cold_first_run", |b| {
        b.iter(|| {
            n += 1;
            let fresh = dir.path().join(format!("cold-{n}"));
            let tb = toolbox(&store, &trust, &fresh);
            assert!(tb.warm_up().is_empty());
            echo(&tb, &ws);
            std::fs::remove_dir_all(&fresh).unwrap();
        });
    });
    group.bench_function("warm_first_run_disk_cache", |b| {
        b.iter(|| {
            let tb = toolbox(&store, &trust, &cache);
            assert!(tb.warm_up().is_empty());
            echo(&tb, &ws);
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
