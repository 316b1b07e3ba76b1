//! One host command through the OS sandbox vs. the same command bare, each next to a baseline
//! measured in the same run:
//! - `host_bare`: `/bin/bash -c true`, spawned and waited for (std::process);
//! - `host_runner_none`: the same through `outer::run` with no OS sandbox (the limits
//!   trampoline, output capture, the containment runner);
//! - `host_sandboxed`: the same through `outer::run` in bubblewrap with the policy the Bash
//!   tool uses (the repository's profile tree, the workspace as the workdir, the command
//!   `bash`, an allowlisted environment). Skipped where bubblewrap cannot run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "bench code: a panic is a failure report; a skip is said on stderr"
)]

use std::path::Path;
use std::process::{Command, Stdio};

use agent_sandbox::outer::{
    self, BwrapBackend, ExecRequest, NoneBackend, OuterSandbox, ResourceLimits,
};
use agent_sandbox::profile::ProfileTree;
use agent_sandbox::profile::env::EnvPlan;
use agent_sandbox::profile::host::{Host, SystemHost};
use agent_sandbox::profile::selection::{ProfilePlan, Selection, Workdir};
use criterion::{Criterion, criterion_group, criterion_main};

fn request(workdir: &Path) -> ExecRequest {
    let tree =
        ProfileTree::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")).unwrap();
    let selection = Selection {
        workdir: Workdir::Path(workdir.to_path_buf()),
        command: Some("bash".into()),
        ..Selection::default()
    };
    ExecRequest {
        plan: ProfilePlan::resolve(&tree, &selection, &SystemHost).unwrap(),
        env: EnvPlan::sanitize(&SystemHost.vars(), &[]),
        command: vec!["/bin/bash".into(), "-c".into(), "true".into()],
        limits: ResourceLimits::default(),
        fail_if_unavailable: true,
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let req = request(&ws);
    let mut g = c.benchmark_group("outer");
    g.sample_size(30);
    g.bench_function("host_bare", |b| {
        b.iter(|| {
            let status = Command::new("/bin/bash")
                .args(["-c", "true"])
                .current_dir(&ws)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .unwrap()
                .status;
            assert!(status.success());
        });
    });
    g.bench_function("host_runner_none", |b| {
        b.iter(|| {
            let out = outer::run(&NoneBackend, &req).unwrap();
            assert_eq!(out.code(), Some(0));
        });
    });
    let bwrap = BwrapBackend::new(None);
    match bwrap.probe() {
        Ok(()) => {
            g.bench_function("host_sandboxed", |b| {
                b.iter(|| {
                    let out = outer::run(&bwrap, &req).unwrap();
                    assert_eq!(out.code(), Some(0), "{:?}", out.audit);
                });
            });
            // A read-only approval: the workdir bound read-only.
            let mut ro = request(&ws);
            ro.plan.workdir_read_only = true;
            g.bench_function("host_sandboxed_read_only", |b| {
                b.iter(|| {
                    let out = outer::run(&bwrap, &ro).unwrap();
                    assert_eq!(out.code(), Some(0), "{:?}", out.audit);
                });
            });
        }
        Err(e) => eprintln!("host_sandboxed skipped: {e}"),
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
