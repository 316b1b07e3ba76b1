//! Permission-engine figures (issue 2): with 200 rules loaded,
//! (a) matching an already-parsed 5-part compound command,
//! (b) the whole decision for that command string, parse included,
//! (c) a Read/Edit file-path decision;
//! each next to a baseline measured in the same run (`cargo xtask bench` writes the table to
//! docs/benchmarks.md).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::hint::black_box;

use agent_core::permissions::rules::BashPattern;
use agent_core::permissions::{PermissionEngine, PreToolUseOutcome, ToolCall};
use agent_core::settings::Settings;
use agent_core::shell;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// Five simple commands, all covered by allow rules, so every part is matched.
const COMMAND: &str =
    "git status && cargo build --release | grep warning; npm run lint && ls -la src";

/// 200 rules of every kind, shaped like real settings files.
fn rules() -> Value {
    let mut allow: Vec<String> = Vec::new();
    let mut ask: Vec<String> = Vec::new();
    let mut deny: Vec<String> = Vec::new();
    for i in 0..50 {
        allow.push(format!("Bash(tool{i} *)"));
        allow.push(format!("Bash(npm run script{i})"));
    }
    allow.extend(
        [
            "Bash(git status)",
            "Bash(cargo build *)",
            "Bash(grep *)",
            "Bash(npm run lint)",
            "Bash(ls*)",
        ]
        .map(String::from),
    );
    for i in 0..15 {
        allow.push(format!("Edit(./src/mod{i}/**)"));
        allow.push(format!("Read(//opt/data{i}/**)"));
    }
    for i in 0..10 {
        allow.push(format!("WebFetch(domain:site{i}.example.com)"));
    }
    for i in 0..20 {
        deny.push(format!("Bash(danger{i} *)"));
        ask.push(format!("Bash(git push{i} *)"));
    }
    for i in 0..10 {
        deny.push(format!("Read(secret{i}/**)"));
    }
    deny.extend(
        [
            "Bash(rm -rf *)",
            "Bash(curl *)",
            "Read(.env)",
            "Edit(//etc/**)",
            "mcp__danger",
        ]
        .map(String::from),
    );
    let total = allow.len() + ask.len() + deny.len();
    assert_eq!(total, 200, "the bench loads 200 rules");
    json!({"permissions": {"allow": allow, "ask": ask, "deny": deny}})
}

/// A real project folder, so path decisions pay for the filesystem checks they make in use.
fn project() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let cwd = root.join("proj");
    let home = root.join("home");
    std::fs::create_dir_all(cwd.join("src/mod7")).unwrap();
    std::fs::create_dir_all(cwd.join("config/secret3")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(cwd.join("src/mod7/lib.rs"), "").unwrap();
    std::fs::write(cwd.join("config/secret3/key.pem"), "").unwrap();
    (tmp, cwd, home)
}

fn bench(c: &mut Criterion) {
    let (_tmp, cwd, home) = project();
    let settings = Settings::from_value(rules(), "bench.json", &cwd, &home).unwrap();
    let engine = PermissionEngine::builder(&cwd, &home)
        .settings(&settings)
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    let call = ToolCall::new("Bash", json!({ "command": COMMAND }));
    assert!(engine.check(&call, &none).is_allowed());

    let mut g = c.benchmark_group("permissions");
    // (a) matching an already-parsed compound command.
    let prepared = engine.prepare(call.clone());
    g.bench_function("a_match_parsed_compound", |b| {
        b.iter(|| black_box(engine.check_prepared(black_box(&prepared), &none)))
    });
    // (a) baseline: the same command's five parts tested against every Bash rule in turn
    // (no first-word index).
    let patterns: Vec<BashPattern> = rules()["permissions"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|l| l.as_array().unwrap().iter())
        .filter_map(|r| {
            r.as_str()?
                .strip_prefix("Bash(")?
                .strip_suffix(')')
                .map(str::to_owned)
        })
        .filter_map(|p| BashPattern::parse(&p).ok())
        .collect();
    let parts: Vec<String> = shell::parse(COMMAND)
        .unwrap()
        .commands
        .iter()
        .map(|c| c.text_from(0))
        .collect();
    g.bench_function("a_baseline_linear_scan", |b| {
        b.iter(|| {
            let mut hits = 0;
            for part in &parts {
                for p in &patterns {
                    hits += usize::from(p.matches(black_box(part)));
                }
            }
            black_box(hits)
        })
    });
    // (b) the whole decision from the command string.
    g.bench_function("b_decide_command_string", |b| {
        b.iter(|| black_box(engine.check(black_box(&call), &none)))
    });
    // (b) baseline: brush-parser's parse alone.
    g.bench_function("b_baseline_parse_only", |b| {
        b.iter(|| black_box(shell::parse(black_box(COMMAND)).unwrap()))
    });
    // (c) a file-path decision (Edit allowed by a rule; Read of a denied file).
    let edit = ToolCall::new(
        "Edit",
        json!({"file_path": "src/mod7/lib.rs", "old_string": "a", "new_string": "b"}),
    );
    let read = ToolCall::new("Read", json!({"file_path": "config/secret3/key.pem"}));
    assert!(engine.check(&edit, &none).is_allowed());
    assert!(!engine.check(&read, &none).is_allowed());
    g.bench_function("c_decide_edit_path", |b| {
        b.iter(|| black_box(engine.check(black_box(&edit), &none)))
    });
    g.bench_function("c_decide_read_path", |b| {
        b.iter(|| black_box(engine.check(black_box(&read), &none)))
    });
    // (c) baseline: resolving the path alone (lexical normalisation plus the symlink check, one
    // `lstat` per component below the working directory).
    let wd = agent_core::permissions::WorkingDirs::new(&cwd, &home, &[]);
    g.bench_function("c_baseline_resolve_path", |b| {
        b.iter(|| black_box(wd.resolve(black_box("src/mod7/lib.rs"))))
    });
    // (c) baseline: one `lstat` system call, the unit the path check is made of.
    let file = cwd.join("src/mod7/lib.rs");
    g.bench_function("c_baseline_one_lstat", |b| {
        b.iter(|| black_box(std::fs::symlink_metadata(black_box(&file)).is_ok()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
