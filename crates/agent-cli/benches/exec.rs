//! The outer sandbox's cost (issue 5): `agent sandbox exec --backend bwrap -- true` against a
//! bare `true`, spawned and waited for in the same run. Skipped, with the reason on stderr,
//! where bubblewrap cannot run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "bench code: a panic is a failure report; a skip is reported on stderr"
)]

use std::process::{Command, Stdio};

use agent_sandbox::outer::{BwrapBackend, OuterSandbox};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    if let Err(e) = BwrapBackend::new(None).probe() {
        eprintln!("exec bench SKIPPED (bubblewrap unavailable): {e}");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let run = |cmd: &mut Command| {
        let status = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    };
    let mut g = c.benchmark_group("exec");
    g.sample_size(30);
    g.bench_function("exec_bwrap_true", |b| {
        b.iter(|| {
            run(Command::new(env!("CARGO_BIN_EXE_agent"))
                .args(["sandbox", "exec", "--backend", "bwrap", "--workdir"])
                .arg(work.path())
                .args(["--", "true"]))
        })
    });
    g.bench_function("exec_baseline_bare_true", |b| {
        b.iter(|| run(&mut Command::new("true")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
