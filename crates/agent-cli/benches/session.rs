//! The interactive session's latency on a real terminal (issue 26), each next to a baseline
//! measured in the same run:
//!
//! - `first_byte_to_screen`: from the moment the loopback model server writes an answer (a
//!   text chunk with a marker, OpenAI wire format) to the moment the marker is on the
//!   pseudo-terminal `agent` runs on (provider stream parsing, the loop, the live transcript)
//!   vs. `first_byte_baseline_relay`: the same bytes relayed from a loopback socket to the
//!   same kind of terminal by a minimal `python3` relay (socket read, terminal write);
//! - `ctrl_c_to_prompt`: from a Ctrl-C typed while the agent runs `sleep 30` (host Bash in the
//!   OS sandbox) to its prompt back on screen (the interrupt, the tool's processes ended, the
//!   cancellation logged, the prompt redrawn) vs. `ctrl_c_baseline_sleep`: from a Ctrl-C typed
//!   on a terminal running `sleep 30` itself to that process gone.
//!
//! Linux with bubblewrap, `setsid` and `python3`; elsewhere nothing is measured.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs,
    reason = "bench code: a panic is a failure report; criterion's macros"
)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[cfg(target_os = "linux")]
#[path = "../tests/all/support/model.rs"]
mod model;
#[cfg(target_os = "linux")]
#[path = "../tests/all/support/terminal.rs"]
mod terminal;

#[cfg(target_os = "linux")]
use model::{Turn, on_path, openai, serve_with};
#[cfg(target_os = "linux")]
use terminal::{Terminal, running};

#[cfg(target_os = "linux")]
fn benches(c: &mut Criterion) {
    let agent = PathBuf::from(env!("CARGO_BIN_EXE_agent"));
    if !(on_path("bwrap") && on_path("setsid") && on_path("python3")) {
        eprintln!("session bench skipped: needs bwrap, setsid and python3");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let settings = root.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Bash(sleep *)"]}, "bash": {"backend": "native"}})
            .to_string(),
    )
    .unwrap();
    let mut g = c.benchmark_group("session");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));

    // One session answers every prompt: odd requests with a marked text.
    let (url, sent) = serve_with(|k| Some(openai(&Turn::Text(marker(k)))));
    let args = |url: &str| -> Vec<String> {
        vec![
            "--settings".into(),
            settings.display().to_string(),
            "--provider".into(),
            "openai-compatible".into(),
            "--base-url".into(),
            format!("{url}/v1"),
            "--model".into(),
            "m".into(),
        ]
    };
    let mut t = Terminal::start(&agent, &home, &project, &args(&url), &[("NO_COLOR", "1")]);
    let mut at = t.wait_for("/help for the commands", 0, Duration::from_secs(60));
    let mut k = 0usize;
    g.bench_function("first_byte_to_screen", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                at = t.wait_for("› ", at, Duration::from_secs(30));
                t.type_in("hi\r");
                at = t.wait_for(&marker(k), at, Duration::from_secs(30));
                let shown = Instant::now();
                let written = sent.lock().unwrap()[k];
                total += shown.saturating_duration_since(written);
                k += 1;
            }
            total
        });
    });
    t.type_in("/exit\r");
    let _ = t.child.wait();

    g.bench_function("first_byte_baseline_relay", |b| {
        let (url, sent) = serve_with(|k| Some(format!("{}\n", marker(k))));
        let port = url.rsplit(':').next().unwrap().to_owned();
        let relay = format!(
            "import socket,sys\nwhile True:\n s=socket.create_connection(('127.0.0.1',{port}))\n s.sendall(b'POST / HTTP/1.1\\r\\ncontent-length: 0\\r\\n\\r\\n')\n while True:\n  d=s.recv(4096)\n  if not d: break\n  sys.stdout.buffer.write(d); sys.stdout.buffer.flush()\n sys.stdin.readline()\n"
        );
        let mut r = Terminal::start(
            Path::new("python3"),
            &home,
            &project,
            &["-c".into(), relay],
            &[],
        );
        let mut at = 0usize;
        let mut k = 0usize;
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                at = r.wait_for(&marker(k), at, Duration::from_secs(30));
                let shown = Instant::now();
                let written = sent.lock().unwrap()[k];
                total += shown.saturating_duration_since(written);
                k += 1;
                r.type_in("\r");
            }
            total
        });
        let _ = r.child.kill();
    });

    // Ctrl-C during `sleep 30`: each prompt is answered with a call to sleep.
    let sleeps = Arc::new(Mutex::new(0usize));
    let count = Arc::clone(&sleeps);
    let (url, _) = serve_with(move |_| {
        let mut n = count.lock().unwrap();
        *n += 1;
        Some(openai(&Turn::Call(
            "t",
            "Bash",
            json!({"command": format!("sleep 30.{}{}", std::process::id(), *n)}),
        )))
    });
    let mut t = Terminal::start(&agent, &home, &project, &args(&url), &[("NO_COLOR", "1")]);
    let at = t.wait_for("/help for the commands", 0, Duration::from_secs(60));
    let mut at = t.wait_for("› ", at, Duration::from_secs(30));
    g.bench_function("ctrl_c_to_prompt", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                t.type_in("wait\r");
                let n = *sleeps.lock().unwrap() + 1;
                let process = format!("sleep 30.{}{}", std::process::id(), n);
                let started = Instant::now();
                while !running(&process) {
                    assert!(started.elapsed() < Duration::from_secs(30));
                    std::thread::sleep(Duration::from_millis(5));
                }
                at = t.len();
                let pressed = Instant::now();
                t.type_in("\u{3}");
                at = t.wait_for("› ", at, Duration::from_secs(30));
                total += pressed.elapsed();
            }
            total
        });
    });
    t.type_in("/exit\r");
    let _ = t.child.wait();

    g.bench_function("ctrl_c_baseline_sleep", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut s =
                    Terminal::start(Path::new("sleep"), &home, &project, &["30".into()], &[]);
                std::thread::sleep(Duration::from_millis(50));
                let pressed = Instant::now();
                s.type_in("\u{3}");
                while s.child.try_wait().unwrap().is_none() {
                    std::thread::sleep(Duration::from_micros(200));
                }
                total += pressed.elapsed();
            }
            total
        });
    });
    g.finish();
}

/// The marker of the `k`-th answer.
fn marker(k: usize) -> String {
    format!("marker-{k:05}-end")
}

#[cfg(not(target_os = "linux"))]
fn benches(_: &mut Criterion) {}

criterion_group!(session, benches);
criterion_main!(session);
