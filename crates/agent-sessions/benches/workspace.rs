//! Shadow workspace figures (issue 15), each next to a baseline measured in the same run:
//!
//! - import of a generated tree of 10,000 files / 100 MB (100 directories of 100 files of
//!   10,000 bytes) vs. `cp -a` of the same tree (target ≤ 1.5× `cp -a`);
//! - `status` of the unchanged 10,000-file shadow (target ≤ 50 ms) vs. a walk that only
//!   `stat`s every file (the least any status must do);
//! - the Grep tool over the same tree vs. `rg` when installed, else `grep -r`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agent_core::tools::{Tool, ToolContext};
use agent_sessions::tools::Grep;
use agent_sessions::workspace::{ImportOptions, Workspace};
use criterion::{Criterion, criterion_group, criterion_main};

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;
const FILE_BYTES: usize = 10_000;

fn generate(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("dir{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let line = format!("dir {d} file {f}: the quick brown fox jumps over the lazy dog\n");
            let mut text = line.repeat(FILE_BYTES / line.len() + 1);
            text.truncate(FILE_BYTES);
            std::fs::write(dir.join(format!("file{f:03}.txt")), text).unwrap();
        }
    }
}

fn stat_walk(dir: &Path, n: &mut usize) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        if meta.is_dir() {
            stat_walk(&e.path(), n);
        } else {
            *n += black_box(meta.len() as usize).min(1);
        }
    }
}

fn benches(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    generate(&real);
    let mut g = c.benchmark_group("workspace");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(10));

    g.bench_function("import_10k_files_100mb", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let state = tempfile::tempdir_in(tmp.path()).unwrap();
                let opts = ImportOptions {
                    state_root: Some(state.path().to_path_buf()),
                    ..ImportOptions::default()
                };
                let start = Instant::now();
                let (ws, _) = Workspace::import(&real, &opts).unwrap();
                total += start.elapsed();
                black_box(ws);
            }
            total
        });
    });
    g.bench_function("import_baseline_cp_a_10k_files_100mb", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let out = tempfile::tempdir_in(tmp.path()).unwrap();
                let start = Instant::now();
                let status = std::process::Command::new("cp")
                    .arg("-a")
                    .arg(&real)
                    .arg(out.path().join("copy"))
                    .status()
                    .unwrap();
                total += start.elapsed();
                assert!(status.success());
            }
            total
        });
    });

    let state = tempfile::tempdir_in(tmp.path()).unwrap();
    let opts = ImportOptions {
        state_root: Some(state.path().to_path_buf()),
        ..ImportOptions::default()
    };
    let (ws, _) = Workspace::import(&real, &opts).unwrap();
    g.bench_function("status_unchanged_10k_files", |b| {
        b.iter(|| {
            let set = ws.status().unwrap();
            assert!(set.is_empty());
            black_box(set)
        });
    });
    g.bench_function("status_baseline_stat_walk_10k_files", |b| {
        b.iter(|| {
            let mut n = 0;
            stat_walk(ws.shadow(), &mut n);
            black_box(n)
        });
    });
    let ctx = ToolContext::new(ws.shadow(), "bench", "toolu_bench");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let grep = Grep::default();
    let input = serde_json::json!({"pattern": "file 42:", "output_mode": "files_with_matches"});
    g.bench_function("grep_tool_10k_files", |b| {
        b.iter(|| {
            let out = runtime.block_on(grep.call(input.clone(), &ctx)).unwrap();
            black_box(out)
        });
    });
    let rg = std::process::Command::new("rg")
        .arg("--version")
        .output()
        .is_ok();
    g.bench_function("grep_baseline_rg_or_grep_r_10k_files", |b| {
        b.iter(|| {
            let mut cmd = if rg {
                let mut c = std::process::Command::new("rg");
                c.args(["-l", "file 42:"]);
                c
            } else {
                let mut c = std::process::Command::new("grep");
                c.args(["-rl", "file 42:"]);
                c
            };
            let out = cmd.current_dir(ws.shadow()).arg(".").output().unwrap();
            black_box(out)
        });
    });
    g.finish();
}

criterion_group!(workspace, benches);
criterion_main!(workspace);
