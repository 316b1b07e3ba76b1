//! FIFOs and other special files in the workspace: opening one must not hold the host's thread
//! past every limit. Opening a FIFO blocks until its other end is opened, and a blocked
//! `open(2)` is outside wasm code, where epoch interruption cannot reach, and before the
//! shell's cancellation check. So the shell's own redirects (`< fifo`, `> fifo`), `xargs -a`,
//! `[[ -r fifo ]]` and every module's `path_open` refuse whatever is not a regular file or a
//! directory, at once (docs/shell.md, Special files).
//! Needs the registry `cargo xtask bundles` builds for the module cases; those are skipped
//! (with a note) without it.

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_wasi::Limits;
use agent_wasi::shell::{ShellContext, ShellOutput, Stage, StageRunner, run_script};

/// How long a script may take before the test calls it stuck: far above the 1 s limit.
const STUCK: Duration = Duration::from_secs(20);

/// A workspace holding `f`, a FIFO nobody writes to or reads from, and `x`, a regular file.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("f"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(dir.path().join("x"), "x\n").unwrap();
    dir
}

/// Runs `run` on its own thread; when it is still running after [`STUCK`], opens the FIFO's
/// both ends to let it go and fails.
fn bounded<T: Send + 'static>(
    ws: &Path,
    what: &str,
    run: impl FnOnce() -> T + Send + 'static,
) -> (T, Duration) {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(run());
    });
    match rx.recv_timeout(STUCK) {
        Ok(out) => (out, started.elapsed()),
        Err(_) => {
            // Free the stuck thread: a reader and a writer for the FIFO.
            let fifo = ws.join("f");
            let _reader = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&fifo);
            panic!("{what}: still blocked after {STUCK:?}");
        }
    }
}

/// Knows `cat`, and never runs it: the shell's own opens are under test.
struct NoCommands;

impl StageRunner for NoCommands {
    fn has_command(&self, name: &str) -> bool {
        name == "cat"
    }

    fn run_stage(&self, _stage: Stage) -> i32 {
        0
    }
}

fn shell_alone(ws: &Path, script: &str) -> (ShellOutput, Duration) {
    let root = ws.to_owned();
    let script_owned = script.to_owned();
    bounded(ws, script, move || {
        let ctx = ShellContext::new(&root).with_cancel(Arc::new(AtomicBool::new(false)));
        run_script(&script_owned, &ctx, &NoCommands).unwrap()
    })
}

#[test]
fn the_shells_own_redirects_refuse_a_fifo_at_once() {
    let ws = workspace();
    for script in [
        "cat < f",
        "echo hi > f",
        "echo hi >> f",
        "echo hi &> f",
        "cat 0< f",
        "{ cat; } < f",
        "while read l; do :; done < f",
        "xargs -a f echo",
    ] {
        let (out, took) = shell_alone(ws.path(), script);
        assert!(took < Duration::from_secs(5), "{script}: took {took:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.exit_code, 0, "{script}: {stderr}");
        assert!(
            stderr.contains("not a regular file"),
            "{script}: the error says why: {stderr}"
        );
    }
    // Regular files still open.
    let (out, _) = shell_alone(ws.path(), "cat < x && echo y >> x");
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_condition_on_a_fifo_does_not_open_it() {
    let ws = workspace();
    // As the bundle's `test`, which cannot open a FIFO either: neither readable nor writable.
    let (out, took) = shell_alone(
        ws.path(),
        "[[ -e f ]] && echo exists; [[ -r f ]] || echo unreadable; [[ -w f ]] || echo unwritable; [[ -r x && -w x ]] && echo x",
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "exists\nunreadable\nunwritable\nx\n"
    );
}

#[test]
fn a_module_opening_a_fifo_ends_within_its_wall_time() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    let mut limits = Limits::default();
    limits.wall_time = Duration::from_secs(1);
    let toolbox = Arc::new(toolbox.with_limits(limits));
    let ws = workspace();
    for script in ["cat f", "head -c 1 f", "wc -c f", "cp x f", "tee f < x"] {
        let root = ws.path().to_owned();
        let tb = Arc::clone(&toolbox);
        let owned = script.to_owned();
        let (run, took) = bounded(ws.path(), script, move || {
            let ctx = ShellContext::new(&root).with_env([("LC_ALL", "C")]);
            tb.shell(&owned, &ctx).unwrap()
        });
        assert!(took < Duration::from_secs(5), "{script}: took {took:?}");
        let stderr = String::from_utf8_lossy(&run.output.stderr);
        assert_ne!(run.output.exit_code, 0, "{script}: {stderr}");
        // `cat` looks before it opens and refuses by itself; the others' open is refused.
        assert!(
            (stderr.contains("Not supported") || stderr.contains("unknown filetype"))
                && (stderr.contains(" f:") || stderr.contains("'f'")),
            "{script}: names the file and why: {stderr}"
        );
    }
    // A regular file beside it still reads.
    let ctx = ShellContext::new(ws.path()).with_env([("LC_ALL", "C")]);
    let run = toolbox.shell("cat x", &ctx).unwrap();
    assert_eq!(run.output.stdout, b"x\n");
}
