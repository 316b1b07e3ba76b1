//! The checker/interpreter differential on arbitrary input (issue 24): the WASI shell, with a
//! runner that executes nothing, must never start a program or open a file that the permission
//! checker did not see in the same script. The harness is the test's
//! (`crates/agent-wasi/tests/all/support/checker.rs`, docs/shell.md "The checker and the
//! interpreter agree"); each run is cancelled after 2 s. Skipped: input that is not UTF-8,
//! scripts the shell refuses, and scripts of a class still listed in
//! `fixtures/checker_agrees/known_failures.txt` (the wrappers' option parsing). Seeded from the
//! test's corpus (`corpus/checker_agrees/seed-*`). Linux only (the harness watches the
//! workspace with inotify); elsewhere every input passes.

#![no_main]

#[cfg(target_os = "linux")]
use std::{path::PathBuf, sync::OnceLock, time::Duration};

use libfuzzer_sys::fuzz_target;

#[cfg(target_os = "linux")]
#[path = "../../crates/agent-wasi/tests/all/support/checker.rs"]
mod checker;

/// The known failures, whose classes are skipped while they are listed.
#[cfg(target_os = "linux")]
const KNOWN_FAILURES: &str =
    include_str!("../../crates/agent-wasi/tests/fixtures/checker_agrees/known_failures.txt");

/// How long one run of one input may take before it is cancelled.
#[cfg(target_os = "linux")]
const BOUND: Duration = Duration::from_secs(2);

/// The classes listed in the known failures (`CLASS => SCRIPT`).
#[cfg(target_os = "linux")]
fn listed_classes() -> &'static Vec<String> {
    static CLASSES: OnceLock<Vec<String>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut classes: Vec<String> = KNOWN_FAILURES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(" => "))
            .map(|(class, _)| class.to_owned())
            .collect();
        classes.dedup();
        classes
    })
}

/// A workspace directory of this process's own, in memory when the system has `/dev/shm`.
#[cfg(target_os = "linux")]
fn workspace() -> &'static PathBuf {
    static WS: OnceLock<PathBuf> = OnceLock::new();
    WS.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_owned()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("agent-fuzz-checker-agrees-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a directory for the workspace");
        dir.join("ws")
    })
}

fuzz_target!(
    init: {
        // As in command_checker: panics inside brush-parser are caught and fail closed.
        std::panic::set_hook(Box::new(|_| {}));
    },
    |data: &[u8]| {
    let Ok(script) = std::str::from_utf8(data) else {
        return;
    };
    #[cfg(target_os = "linux")]
    agree(script);
    #[cfg(not(target_os = "linux"))]
    let _ = script;
    }
);

/// Runs the differential on `script`; a disagreement is printed and panics.
#[cfg(target_os = "linux")]
fn agree(script: &str) {
    let classes = checker::known_classes(script);
    if classes
        .iter()
        .any(|c| listed_classes().iter().any(|l| l == c))
    {
        return;
    }
    let outcome = checker::check(script, workspace(), BOUND);
    if !outcome.problems.is_empty() {
        // Printed here: the panic hook is silent (see `init`).
        eprintln!(
            "the checker and the shell disagree on {script:?}:\n{}",
            outcome.problems.join("\n")
        );
        panic!("the checker and the shell disagree on {script:?}");
    }
}
