//! The Claude Agent SDK's round trip per `can_use_tool` call (issue 27), measured with the
//! real Python SDK (`target/sdk-py`, as `tests/sdk.rs` finds it) driving the release `agent`
//! through `ClaudeSDKClient` against a loopback model server:
//!
//! - `can_use_tool_round_trip`: from `agent` writing a `can_use_tool` request to taking in the
//!   SDK's answer (read and parsed by the SDK, the callback run, its answer written), as
//!   `agent` itself times it (`AGENT_SDK_TIMINGS`); each prompt is answered with [`CALLS`]
//!   Write calls, each asked;
//! - `stdio_echo_round_trip`: the same kind of JSON line sent to a minimal `python3` process
//!   that parses it and writes an answer line back over a pipe: the floor of any such round
//!   trip.
//!
//! Without the SDK nothing is measured (the bench says so).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs,
    reason = "bench code: a panic is a failure report; criterion's macros"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[path = "../tests/all/support/model.rs"]
mod model;

use model::{calls, serve_with, text};

/// Write calls per prompt, each a `can_use_tool` round trip.
const CALLS: usize = 10;

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("AGENT_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/sdk-py/bin/python")
        });
    Command::new(&p)
        .args(["-c", "import claude_agent_sdk"])
        .output()
        .is_ok_and(|o| o.status.success())
        .then_some(p)
}

fn benches(c: &mut Criterion) {
    let Some(py) = python() else {
        eprintln!(
            "sdk bench skipped: the Claude Agent SDK is not installed in target/sdk-py (see .ci/run)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let folder = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&folder).unwrap();
    // Every prompt: CALLS Writes of new files in one answer, then a text.
    let (url, _) = serve_with(|k| {
        Some(if k % 2 == 0 {
            let writes: Vec<(String, serde_json::Value)> = (0..CALLS)
                .map(|i| {
                    (
                        format!("call_{k}_{i}"),
                        json!({"file_path": format!("notes-{k}-{i}.txt"), "content": "x\n"}),
                    )
                })
                .collect();
            let refs: Vec<(&str, &str, serde_json::Value)> = writes
                .iter()
                .map(|(id, input)| (id.as_str(), "Write", input.clone()))
                .collect();
            calls(&refs)
        } else {
            text("ok")
        })
    });
    std::fs::write(
        home.join("settings.json"),
        json!({"provider": {"name": "openai-compatible", "baseUrl": format!("{url}/v1")}, "model": "m"})
            .to_string(),
    )
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/drive.py");
    let mut sdk = Command::new(&py)
        .arg(script)
        .args(["bench", env!("CARGO_BIN_EXE_agent")])
        .arg(&folder)
        .env("AGENT_HOME", &home)
        .env("HOME", &home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = sdk.stdin.take().unwrap();
    let mut from = BufReader::new(sdk.stdout.take().unwrap());
    let mut g = c.benchmark_group("sdk");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(2));
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("can_use_tool_round_trip", |b| {
        b.iter_custom(|iters| {
            writeln!(to, "{iters}").unwrap();
            let mut line = String::new();
            from.read_line(&mut line).unwrap();
            Duration::from_secs_f64(
                line.trim()
                    .parse()
                    .unwrap_or_else(|e| panic!("{e}: {line:?}")),
            )
        });
    });
    drop(to);
    let _ = sdk.wait();

    // The floor: a JSON line to a python3 process that parses it and answers with a line.
    let mut echo = Command::new(&py)
        .args([
            "-c",
            "import json,sys\nfor l in sys.stdin:\n r=json.loads(l)\n sys.stdout.write(json.dumps({'type':'control_response','response':{'subtype':'success','request_id':r['request_id'],'response':{'behavior':'allow','updatedInput':r['request']['input']}}})+'\\n')\n sys.stdout.flush()\n",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = echo.stdin.take().unwrap();
    let mut from = BufReader::new(echo.stdout.take().unwrap());
    let request = json!({"type": "control_request", "request_id": "agent_req_1", "request": {
        "subtype": "can_use_tool", "tool_name": "Write",
        "input": {"file_path": "/tmp/project/notes.txt", "content": "x\n"},
        "permission_suggestions": [], "blocked_path": null, "tool_use_id": "call_1"}})
    .to_string();
    g.bench_function("stdio_echo_round_trip", |b| {
        b.iter_custom(|iters| {
            let started = Instant::now();
            for _ in 0..iters {
                writeln!(to, "{request}").unwrap();
                let mut line = String::new();
                from.read_line(&mut line).unwrap();
            }
            started.elapsed()
        });
    });
    g.finish();
    drop(to);
    let _ = echo.wait();
}

criterion_group!(sdk, benches);
criterion_main!(sdk);
