//! Issue 25 (A7): the review never holds a whole large file in memory. A 2 GB sparse file in
//! the shadow is hashed by streaming and shown by size and sha256, never loaded: `status` and
//! `diff` run in a child process (this test binary again) whose peak RSS (`VmHWM`) is read from
//! `/proc/self/status`.

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;
use std::process::Command;

use agent_workspace::{ChangeKind, DIFF_LIMIT, ImportOptions, Workspace};

const CHILD: &str = "AGENT_TEST_WORKSPACE_MEMORY_CHILD";
const TWO_GB: u64 = 2 << 30;
/// The child's whole peak, test harness included; loading the sparse file would be 2 GB.
const PEAK_LIMIT_KB: u64 = 100 * 1024;

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// In the child: open the workspace, review it as `agent workspace status` and `diff` do, and
/// write the peak RSS (kB) to `report`.
fn child(real: &Path, state: &Path, report: &Path) {
    let ws = Workspace::open(real, state).unwrap();
    let set = ws.status().unwrap();
    let kinds: Vec<(&str, &ChangeKind, bool)> = set
        .changes
        .iter()
        .map(|c| (c.path.as_str(), &c.kind, c.binary))
        .collect();
    assert_eq!(
        kinds,
        [
            ("big.bin", &ChangeKind::Added, true),
            ("notes.txt", &ChangeKind::Modified, true),
            ("small.txt", &ChangeKind::Modified, false),
        ]
    );
    let diffs = ws.diff(None).unwrap();
    let text = |p: &str| diffs.iter().find(|(c, _)| c.path == p).unwrap().1.clone();
    let big = text("big.bin");
    assert!(
        big.contains(&format!(
            "--- /dev/null\n+++ b/big.bin\n# size and sha256 changed: absent -> {TWO_GB} bytes, sha256 "
        )),
        "{big}"
    );
    let notes = text("notes.txt");
    assert!(
        notes.contains("# size and sha256 changed: 6 bytes, sha256 "),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(" -> {} bytes", DIFF_LIMIT + 1)),
        "{notes}"
    );
    assert!(text("small.txt").contains("-one\n+two\n"));
    std::fs::write(report, vm_hwm_kb().to_string()).unwrap();
}

#[test]
fn status_and_diff_of_a_2gb_sparse_file_stay_under_100mb() {
    if let Some(dirs) = std::env::var_os(CHILD) {
        let dirs = dirs.into_string().unwrap();
        let parts: Vec<&str> = dirs.split('\n').collect();
        child(
            Path::new(parts[0]),
            Path::new(parts[1]),
            Path::new(parts[2]),
        );
        return;
    }
    let real = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(real.path().join("notes.txt"), "notes\n").unwrap();
    std::fs::write(real.path().join("small.txt"), "one\n").unwrap();
    let opts = ImportOptions {
        state_root: state.path().to_path_buf(),
        shadow: None,
    };
    let (ws, _) = Workspace::import(real.path(), &opts).unwrap();
    // What `truncate -s 2G` does: a 2 GB file of zeros that takes no disk space.
    let big = std::fs::File::create(ws.shadow().join("big.bin")).unwrap();
    big.set_len(TWO_GB).unwrap();
    // A file that grows just over the diff limit.
    let notes = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.shadow().join("notes.txt"))
        .unwrap();
    notes.set_len(DIFF_LIMIT + 1).unwrap();
    std::fs::write(ws.shadow().join("small.txt"), "two\n").unwrap();

    let name = "workspace_memory::status_and_diff_of_a_2gb_sparse_file_stay_under_100mb";
    let report = state.path().join("peak-kb");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(
            CHILD,
            format!(
                "{}\n{}\n{}",
                real.path().display(),
                state.path().display(),
                report.display()
            ),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let peak: u64 = std::fs::read_to_string(&report)
        .expect("the child wrote no peak")
        .parse()
        .unwrap();
    assert!(
        peak < PEAK_LIMIT_KB,
        "status and diff peaked at {peak} kB (limit {PEAK_LIMIT_KB} kB)"
    );
}
