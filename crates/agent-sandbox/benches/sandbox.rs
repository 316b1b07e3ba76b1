//! Sandbox figures (issue 4), each next to a baseline measured in the same run:
//! - a command check of a 5-part compound command, parse included, vs. the parse alone;
//! - the same for a 5-part command that brush-parser must parse (expansions, redirects);
//! - the plain-script parse fast path vs. brush-parser on the same command;
//! - assembly of the whole profile tree with 5 add-dirs vs. reading its files;
//! - a path check without I/O (an already-resolved path against 20 grants and 20 denials) vs.
//!   lexical normalisation alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agent_core::shell;
use agent_sandbox::commands::CommandChecker;
use agent_sandbox::paths::{Op, PathPolicy, lexical};
use agent_sandbox::settings::SandboxSettings;
use criterion::{Criterion, criterion_group, criterion_main};

const COMMAND: &str =
    "git status && cargo build --release | grep warning; npm run lint && ls -la src";
/// Five parts too, with what the fast path leaves to brush-parser: an expansion, a
/// substitution and a redirect. (The expansion is `echo`'s: with denied paths configured, a
/// value only known at run time given to another program could name one, and is refused.)
const BRUSH_COMMAND: &str =
    "echo \"$N\" && cargo build 2> err.txt | grep warning; echo $(date) && ls -la src";

fn bench(c: &mut Criterion) {
    let settings = SandboxSettings {
        denied_commands: (0..20)
            .map(|i| format!("danger{i}"))
            .chain(["rm".into(), "sudo".into()])
            .collect(),
        base_dir: Some(PathBuf::from("/srv/bench/project")),
        read_write_dirs: (0..20)
            .map(|i| PathBuf::from(format!("/srv/bench/rw{i}")))
            .collect(),
        denied_paths: (0..20)
            .map(|i| PathBuf::from(format!("/srv/bench/project/secret{i}")))
            .collect(),
        ..SandboxSettings::default()
    };
    let checker = CommandChecker::with_path(&settings, &[]);
    assert!(
        checker.check(COMMAND).allowed,
        "{:?}",
        checker.check(COMMAND)
    );
    assert!(
        checker.check(BRUSH_COMMAND).allowed,
        "{:?}",
        checker.check(BRUSH_COMMAND)
    );
    assert_eq!(
        shell::parse(COMMAND).unwrap(),
        shell::parse_with_brush_only(COMMAND).unwrap()
    );
    let policy = PathPolicy::new(&settings, None);
    let path = Path::new("/srv/bench/rw19/src/deep/module/file.rs");
    assert!(policy.check_resolved(path, Op::Write).allowed);
    let mut g = c.benchmark_group("sandbox");
    g.bench_function("command_check_5_parts", |b| {
        b.iter(|| checker.check(black_box(COMMAND)))
    });
    g.bench_function("command_baseline_parse_only", |b| {
        b.iter(|| shell::parse(black_box(COMMAND)).unwrap())
    });
    g.bench_function("command_check_5_parts_brush", |b| {
        b.iter(|| checker.check(black_box(BRUSH_COMMAND)))
    });
    g.bench_function("command_baseline_brush_parse_only", |b| {
        b.iter(|| shell::parse(black_box(BRUSH_COMMAND)).unwrap())
    });
    g.bench_function("parse_plain_fast_path", |b| {
        b.iter(|| shell::parse(black_box(COMMAND)).unwrap())
    });
    g.bench_function("parse_plain_baseline_brush_only", |b| {
        b.iter(|| shell::parse_with_brush_only(black_box(COMMAND)).unwrap())
    });
    g.bench_function("path_check_resolved", |b| {
        b.iter(|| policy.check_resolved(black_box(path), Op::Write))
    });
    g.bench_function("path_baseline_lexical", |b| {
        b.iter(|| lexical(black_box(path), Path::new("/")))
    });
    profile_assembly(&mut g);
    g.finish();
}

/// Assembly of this project's whole profile tree with 5 add-dirs: load the tree from disk,
/// resolve the selection, render the Seatbelt policy; vs. reading the same files alone.
fn profile_assembly(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    use agent_sandbox::profile::host::FixedHost;
    use agent_sandbox::profile::selection::{ProfilePlan, Selection};
    use agent_sandbox::profile::{ProfileTree, sbpl};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles");
    let host = FixedHost {
        home: PathBuf::from("/home/u"),
        cwd: PathBuf::from("/home/u/work/app"),
        ..FixedHost::default()
    };
    let selection = Selection {
        add_dirs: (0..3)
            .map(|i| PathBuf::from(format!("/srv/rw/{i}/deep/dir")))
            .collect(),
        add_dirs_ro: (0..2)
            .map(|i| PathBuf::from(format!("/srv/ro/{i}")))
            .collect(),
        enable: vec![
            "all-agents".into(),
            "all-apps".into(),
            "docker".into(),
            "ssh".into(),
        ],
        command: Some("claude".into()),
        ..Selection::default()
    };
    let files: Vec<PathBuf> = ProfileTree::load(&root)
        .unwrap()
        .profiles()
        .iter()
        .map(|p| root.join(&p.rel))
        .collect();
    g.bench_function("profile_assemble_full_tree_5_add_dirs", |b| {
        b.iter(|| {
            let tree = ProfileTree::load(&root).unwrap();
            let plan = ProfilePlan::resolve(&tree, black_box(&selection), &host).unwrap();
            sbpl::render(&plan)
        })
    });
    g.bench_function("profile_baseline_read_tree_files", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|f| std::fs::read_to_string(f).unwrap().len())
                .sum::<usize>()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
