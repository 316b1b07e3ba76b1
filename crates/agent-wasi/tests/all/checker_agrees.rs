//! The permission checker and the WASI shell must agree (issue 24, part A): the interpreter,
//! with a runner that records every command line and executes nothing, must never start a
//! program or open a file the checker did not see in the same script (`support/checker.rs`
//! says exactly what is compared and how).
//!
//! The corpus is `fixtures/checker_agrees/corpus.txt` (pipelines, every wrapper the shell runs
//! with every option form, `find -exec`, redirects, loops, conditionals, globs, braces) plus
//! every script of the bash differential's `fixtures/shell/corpus.txt`. Scripts that disagree
//! today, each with the class it stands for, are in `fixtures/checker_agrees/known_failures.txt`:
//! they must still disagree (a fixed one must leave the list, so the list only shrinks), and
//! they are reported on every run. The fuzz target `checker_agrees` runs the same check on
//! arbitrary input, seeded from these scripts.

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a failed unwrap is a failed test; the known failures are reported"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "support/checker.rs"]
mod checker;

/// How long one run of one script may take before it is cancelled: a few scripts of the bash
/// corpus loop until a program does something (`while test -f w.txt; do rm w.txt; done`),
/// which the recording runner never does.
const BOUND: Duration = Duration::from_secs(1);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Reads a corpus file: one entry per line, `| ` continues the previous entry on a new line,
/// `#` comments and blank lines skipped.
fn entries(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("| ") {
            let last = out
                .last_mut()
                .expect("a continuation needs an entry before it");
            last.push('\n');
            last.push_str(rest);
        } else if !(line.trim().is_empty() || line.starts_with('#')) {
            out.push(line.to_owned());
        }
    }
    out
}

/// A directory for the workspace: in memory when the system has `/dev/shm` (the corpus
/// rewrites the tree after every script that writes), else the usual temporary directory.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

/// The known failures: `CLASS => SCRIPT`.
fn known_failures() -> Vec<(String, String)> {
    entries(&fixtures().join("checker_agrees/known_failures.txt"))
        .into_iter()
        .map(|entry| {
            let (class, script) = entry
                .split_once(" => ")
                .expect("a known failure is `CLASS => SCRIPT`");
            (class.to_owned(), script.to_owned())
        })
        .collect()
}

#[test]
fn the_shell_starts_and_opens_only_what_the_checker_saw() {
    let mut scripts = entries(&fixtures().join("checker_agrees/corpus.txt"));
    let own = scripts.len();
    scripts.extend(entries(&fixtures().join("shell/corpus.txt")));
    assert!(own >= 400, "the corpus has {own} scripts");
    let known: Vec<String> = known_failures().into_iter().map(|(_, s)| s).collect();
    let base = scratch();
    let ws = base.path().join("ws");
    let (mut ran, mut started, mut opened, mut unknown) = (0, 0, 0, 0);
    let mut cancelled = Vec::new();
    let mut failures = Vec::new();
    for script in &scripts {
        if known.contains(script) {
            continue; // the next test runs it
        }
        let outcome = checker::check(script, &ws, BOUND);
        if outcome.refused.is_some() {
            continue;
        }
        ran += 1;
        started += usize::from(outcome.stages > 0);
        opened += usize::from(outcome.opened > 0);
        unknown += usize::from(outcome.programs_unknown);
        if outcome.cancelled {
            cancelled.push(script.as_str());
        }
        for problem in outcome.problems {
            failures.push(format!("{script:?}: {problem}"));
        }
    }
    eprintln!(
        "checker_agrees: {} scripts, {ran} run by the shell ({started} started programs, {opened} opened files, {unknown} with a name the checker cannot know)",
        scripts.len()
    );
    // What ran until cancelled was still compared; only loops waiting on a program may.
    assert!(
        cancelled.len() <= 5,
        "cancelled after {BOUND:?}: {cancelled:?}"
    );
    // Not vacuous: most scripts run, start programs, and many open files.
    assert!(ran >= 600, "only {ran} scripts ran");
    assert!(started >= 350, "only {started} scripts started a program");
    assert!(opened >= 80, "only {opened} scripts opened a file");
    assert!(
        failures.is_empty(),
        "{} disagreements (fix the checker or the interpreter, whichever is wrong against bash; a wrapper-table one goes to known_failures.txt):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The list of known failures only shrinks: each still disagrees (once fixed, it moves to the
/// corpus), and each is reported with its class.
#[test]
fn known_failures_still_disagree_and_are_reported() {
    let base = scratch();
    let ws = base.path().join("ws");
    let mut fixed = Vec::new();
    let known = known_failures();
    for (class, script) in &known {
        // The fuzz target tells the classes apart by these words; they must agree.
        let told = checker::known_classes(script);
        assert!(
            told.contains(&class.as_str()),
            "{script:?} is listed as `{class}` but told as {told:?}: update known_classes"
        );
        let outcome = checker::check(script, &ws, BOUND);
        assert!(
            outcome.refused.is_none(),
            "{script:?}: the shell refuses it ({:?}), so it cannot disagree: remove it",
            outcome.refused
        );
        if outcome.problems.is_empty() {
            fixed.push(format!("{class} => {script}"));
        } else {
            eprintln!(
                "known failure [{class}] {script:?}: {}",
                outcome.problems.join("; ")
            );
        }
    }
    eprintln!(
        "checker_agrees: {} known failures",
        known.len() - fixed.len()
    );
    assert!(
        fixed.is_empty(),
        "these agree now: move them from known_failures.txt to corpus.txt:\n{}",
        fixed.join("\n")
    );
}

/// The harness finds a disagreement when there is one: a checker's view of another script
/// (missing a program, a file, a write, a directory) disagrees with what the shell does.
#[test]
fn a_checker_that_missed_something_is_caught() {
    let base = scratch();
    let ws = base.path().join("ws");
    checker::make_tree(&ws);
    let ws = ws.canonicalize().unwrap();
    let mut view = checker::checker_view("ls > out.txt", &ws).unwrap();
    let agrees = checker::compare("rm x > out.txt", &ws, &view, BOUND);
    assert!(
        agrees.problems.iter().any(|p| p.contains("started `rm x`")),
        "{:?}",
        agrees.problems
    );
    view.files.clear();
    let agrees = checker::compare("rm x > out.txt", &ws, &view, BOUND);
    assert!(
        agrees
            .problems
            .iter()
            .any(|p| p.contains("out.txt for writing")),
        "{:?}",
        agrees.problems
    );
    // A read through a symlink is seen at its target; a write the checker took for a read is
    // still a disagreement.
    let view = checker::checker_view("cat < a.txt", &ws).unwrap();
    let agrees = checker::compare("cat < link.txt >> a.txt", &ws, &view, BOUND);
    assert!(
        agrees
            .problems
            .iter()
            .any(|p| p.contains("a.txt for writing")),
        "{:?}",
        agrees.problems
    );
    let agrees = checker::compare("cat < link.txt", &ws, &view, BOUND);
    assert!(agrees.problems.is_empty(), "{:?}", agrees.problems);
    // An operand judged from the wrong directory.
    let view = checker::checker_view("rm x.txt", &ws).unwrap();
    let agrees = checker::compare("cd dir1 && rm x.txt", &ws, &view, BOUND);
    assert!(
        agrees.problems.iter().any(|p| p.contains("ran in")),
        "{:?}",
        agrees.problems
    );
}

/// The fuzz target's seeds (`fuzz/corpus/checker_agrees/seed-NNN`) are this corpus and the
/// known failures, one script per file. `CHECKER_AGREES_WRITE_SEEDS=1` writes them anew.
#[test]
fn the_fuzz_seeds_are_the_corpus() {
    let mut scripts = entries(&fixtures().join("checker_agrees/corpus.txt"));
    scripts.extend(known_failures().into_iter().map(|(_, s)| s));
    let mut unique: Vec<String> = Vec::new();
    for s in scripts {
        if !unique.contains(&s) {
            unique.push(s);
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/checker_agrees");
    if std::env::var_os("CHECKER_AGREES_WRITE_SEEDS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seed-")
            {
                std::fs::remove_file(path).unwrap();
            }
        }
        for (i, s) in unique.iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{:03}", i + 1)), s).unwrap();
        }
    }
    let mut seeds: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("seed-")
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    seeds.sort();
    unique.sort();
    assert!(
        seeds == unique,
        "fuzz/corpus/checker_agrees/seed-* differ from the corpus: run this test with CHECKER_AGREES_WRITE_SEEDS=1"
    );
}
