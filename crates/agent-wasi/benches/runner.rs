//! Runner costs: one `Command(argv)` from start to exit with warm caches (pooling and on-demand
//! allocators), beside spawning native `/bin/echo` in the same run; and preparing a module cold
//! (compile + cache write), from the disk cache, and from memory.
//!
//! `cargo bench -p agent-wasi --bench runner`; the figures are in docs/wasi.md.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench fails by panicking"
)]

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use agent_wasi::{CommandInput, InstanceAllocator, Runtime, RuntimeConfig};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use sha2::{Digest, Sha256};

/// `echo`: writes argv[1..] separated by spaces, then a newline (one `fd_write` per piece).
const ECHO: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) " \n")
  (func $write (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))
  (func (export "_start")
    (local $argc i32) (local $i i32) (local $p i32)
    (drop (call $args_sizes_get (i32.const 16) (i32.const 20)))
    (drop (call $args_get (i32.const 4096) (i32.const 8192)))
    (local.set $argc (i32.load (i32.const 16)))
    (local.set $i (i32.const 1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $argc)))
        (if (i32.gt_u (local.get $i) (i32.const 1)) (then (call $write (i32.const 1024) (i32.const 1))))
        (local.set $p (i32.load (i32.add (i32.const 4096) (i32.shl (local.get $i) (i32.const 2)))))
        (call $write (local.get $p) (call $strlen (local.get $p)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $write (i32.const 1025) (i32.const 1))))"#;

fn echo_module() -> (Vec<u8>, String) {
    let wasm = wat::parse_str(ECHO).unwrap();
    let sha = Sha256::digest(&wasm)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    (wasm, sha)
}

fn command(c: &mut Criterion) {
    let (wasm, sha) = echo_module();
    let workspace = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("command_echo");
    for (name, allocator) in [
        ("pooling", InstanceAllocator::Pooling),
        ("on_demand", InstanceAllocator::OnDemand),
    ] {
        let runtime = Runtime::new(RuntimeConfig::default().with_allocator(allocator)).unwrap();
        let module = runtime.prepare(&wasm, &sha).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                let output = runtime
                    .run(
                        &module,
                        CommandInput::new(["echo", "hello"]),
                        workspace.path(),
                    )
                    .unwrap();
                assert_eq!(output.stdout, b"hello\n");
                black_box(output)
            });
        });
    }
    group.bench_function("native_bin_echo_spawn", |b| {
        b.iter(|| {
            let output = Command::new("/bin/echo").arg("hello").output().unwrap();
            assert_eq!(output.stdout, b"hello\n");
            black_box(output)
        });
    });
    group.finish();
}

fn prepare(c: &mut Criterion) {
    let (wasm, sha) = echo_module();
    let mut group = c.benchmark_group("prepare_echo");
    group.bench_function("cold_compile_and_cache_write", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                let runtime =
                    Runtime::new(RuntimeConfig::default().with_cache_dir(dir.path())).unwrap();
                (dir, runtime)
            },
            |(dir, runtime)| {
                black_box(runtime.prepare(&wasm, &sha).unwrap());
                (dir, runtime)
            },
            BatchSize::PerIteration,
        );
    });
    let warm_dir = tempfile::tempdir().unwrap();
    let config = RuntimeConfig::default().with_cache_dir(warm_dir.path());
    Runtime::new(config.clone())
        .unwrap()
        .prepare(&wasm, &sha)
        .unwrap();
    group.bench_function("disk_cache_hit", |b| {
        b.iter_batched(
            || Runtime::new(config.clone()).unwrap(),
            |runtime| {
                black_box(runtime.prepare(&wasm, &sha).unwrap());
                runtime
            },
            BatchSize::PerIteration,
        );
    });
    let runtime = Runtime::new(config.clone()).unwrap();
    runtime.prepare(&wasm, &sha).unwrap();
    group.bench_function("memory_hit_with_digest_check", |b| {
        b.iter(|| black_box(runtime.prepare(&wasm, &sha).unwrap()));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    targets = command, prepare
}
criterion_main!(benches);
