//! Shadow workspace figures (issue 15), each next to a baseline measured in the same run:
//!
//! - import of a generated tree of 10,000 files / 100 MB (100 directories of 100 files of
//!   10,000 bytes) vs. `cp -a` of the same tree (target ≤ 1.5× `cp -a`);
//! - `status` of the unchanged 10,000-file shadow (target ≤ 50 ms) vs. a walk that only
//!   `stat`s every file (the least any status must do);
//! - the Grep tool over the same tree vs. `rg` when installed, else `grep -r`;
//! - `status` of the same shadow holding one more file, a 2 GB sparse one (issue 25: hashed
//!   by streaming, never loaded) vs. `status` of the unchanged shadow, with the peak memory of
//!   each (Linux: `VmHWM` reset through `/proc/self/clear_refs` before one `status`, read
//!   after), written to `target/criterion/workspace/peak_memory.json` for `cargo xtask bench`;
//! - review + commit of 1,000 changed files (issue 25: hashed, staged, backed up, journalled,
//!   applied beneath the root and synced) vs. `cp -r` of the same 1,000 changed files over a
//!   copy of the real folder.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agent_core::tools::{Tool, ToolContext};
use agent_tools::Grep;
use agent_workspace::{CommitOptions, ImportOptions, Workspace};
use criterion::{Criterion, criterion_group, criterion_main};

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;
const FILE_BYTES: usize = 10_000;
const SPARSE_BYTES: u64 = 2 << 30;

/// The resident memory (kB) before running `f` once and the peak while it ran: `VmHWM` is
/// reset to the current RSS (`/proc/self/clear_refs`, Linux) before and read after. `None`
/// where that is not possible.
fn peak_kb(f: impl FnOnce()) -> Option<(u64, u64)> {
    fn field(name: &str) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    let before = field("VmRSS:")?;
    f();
    Some((before, field("VmHWM:")?))
}

/// Where criterion writes this group's results.
fn criterion_dir() -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        std::path::PathBuf::from,
    );
    target.join("criterion/workspace")
}

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
                    state_root: state.path().to_path_buf(),
                    shadow: None,
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
        state_root: state.path().to_path_buf(),
        shadow: None,
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
    // One 2 GB sparse file added by the agent (`truncate -s 2G`): hashed whole on each status
    // (it is not in the base), never held in memory.
    let sparse = ws.shadow().join("sparse.bin");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(SPARSE_BYTES)
        .unwrap();
    g.bench_function("status_10k_files_one_2gb_sparse", |b| {
        b.iter(|| {
            let set = ws.status().unwrap();
            assert_eq!(set.changes.len(), 1);
            black_box(set)
        });
    });
    let with_sparse = peak_kb(|| {
        black_box(ws.status().unwrap());
    });
    std::fs::remove_file(&sparse).unwrap();
    let without = peak_kb(|| {
        black_box(ws.status().unwrap());
    });
    if let (Some(figure), Some(baseline)) = (with_sparse, without) {
        let dir = criterion_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let report = serde_json::json!({
            "status_10k_files_one_2gb_sparse": {"vmRssBeforeKb": figure.0, "vmHwmKb": figure.1},
            "status_unchanged_10k_files": {"vmRssBeforeKb": baseline.0, "vmHwmKb": baseline.1},
        });
        std::fs::write(dir.join("peak_memory.json"), report.to_string()).unwrap();
    }

    // The shadow was written moments ago: flush it, so neither side of the Grep rows reads
    // while the kernel is still writing the tree back.
    let _ = std::process::Command::new("sync").status();
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

    // Review + commit: a tree of 1,000 files (10 directories of 100), every file changed in
    // the shadow; each iteration imports afresh (not timed).
    let small = tmp.path().join("small");
    for d in 0..COMMIT_DIRS {
        let dir = small.join(format!("dir{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            std::fs::write(dir.join(format!("file{f:03}.txt")), "before\n".repeat(1000)).unwrap();
        }
    }
    let change_all = |shadow: &Path| {
        for d in 0..COMMIT_DIRS {
            for f in 0..FILES_PER_DIR {
                let path = shadow.join(format!("dir{d:03}/file{f:03}.txt"));
                std::fs::write(path, "after\n".repeat(1200)).unwrap();
            }
        }
    };
    g.bench_function("review_commit_1000_changed_files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let real = tempfile::tempdir_in(tmp.path()).unwrap();
                let copy = real.path().join("real");
                copy_tree(&small, &copy);
                let state = tempfile::tempdir_in(tmp.path()).unwrap();
                let opts = ImportOptions {
                    state_root: state.path().to_path_buf(),
                    shadow: None,
                };
                let (mut ws, _) = Workspace::import(&copy, &opts).unwrap();
                change_all(ws.shadow());
                let start = Instant::now();
                let review = ws.review().unwrap();
                let report = ws
                    .commit_review(&review, &CommitOptions::default())
                    .unwrap();
                total += start.elapsed();
                assert_eq!(report.applied.len(), COMMIT_DIRS * FILES_PER_DIR);
            }
            total
        });
    });
    g.bench_function("commit_baseline_cp_r_1000_changed_files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let real = tempfile::tempdir_in(tmp.path()).unwrap();
                let copy = real.path().join("real");
                copy_tree(&small, &copy);
                let changed = real.path().join("changed");
                copy_tree(&small, &changed);
                change_all(&changed);
                let start = Instant::now();
                let status = std::process::Command::new("cp")
                    .arg("-r")
                    .arg(format!("{}/.", changed.display()))
                    .arg(&copy)
                    .status()
                    .unwrap();
                total += start.elapsed();
                assert!(status.success());
            }
            total
        });
    });
    g.finish();
}

/// Directories in the review + commit tree (of [`FILES_PER_DIR`] files each: 1,000 files).
const COMMIT_DIRS: usize = 10;

/// Copies the tree `from` (directories and files) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

criterion_group!(workspace, benches);
criterion_main!(workspace);
