//! Command hooks as processes: timeouts kill the whole process group, huge output does not
//! exhaust memory, a hook that never reads stdin does not deadlock, and matching hooks run
//! concurrently. No timing assertions: concurrency is shown by hooks that wait for each other.

use std::path::Path;
use std::time::Duration;

use agent_core::hooks::{Decision, HookContext, HookInput, HookRegistry, HooksConfig};
use agent_core::permissions::Settings;
use serde_json::{Value, json};

fn registry(dir: &Path, hooks: Value) -> HookRegistry {
    let s = Settings::from_value(
        json!({"hooks": {"PreToolUse": [{"hooks": hooks}]}}),
        "process.json",
        dir,
        dir,
    )
    .unwrap();
    let mut reg = HookRegistry::new();
    reg.load(&HooksConfig::from_settings(&s).unwrap()).unwrap();
    reg
}

/// A PreToolUse input for `ls` in `dir`.
fn ls(dir: &Path) -> HookInput {
    HookContext::new("s", dir).pre_tool_use("Bash", json!({"command": "ls"}), None)
}

fn alive(pid: u32) -> bool {
    // A zombie waiting for its reaper is dead for our purpose.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_whole_process_group_and_spares_other_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let sleeper = format!(
        "sleep 300 & echo $! >> '{p}'; (sleep 301 &) ; echo $$ >> '{p}'; wait",
        p = pids.display()
    );
    let reg = registry(
        dir.path(),
        json!([
            {"type": "command", "command": sleeper, "timeout": 0.5},
            {"type": "command", "command": "echo 'sibling says no' >&2; exit 2"}
        ]),
    );
    let run = reg.execute(ls(dir.path())).await;
    assert!(run.runs[0].timed_out);
    assert_eq!(run.runs[0].error.as_deref(), Some("timed out after 0.5s"));
    assert!(!run.runs[1].timed_out);
    assert_eq!(run.outcome.decision, Decision::Deny);
    assert_eq!(run.outcome.reason.as_deref(), Some("sibling says no"));
    let recorded: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(recorded.len(), 2);
    // SIGKILL is asynchronous: give the kernel a moment to tear the processes down.
    let mut survivors = recorded.clone();
    for _ in 0..100 {
        survivors.retain(|p| alive(*p));
        if survivors.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(survivors.is_empty(), "still running: {survivors:?}");
    // The double-forked `sleep 301` is in the same group too.
    let out = std::process::Command::new("pgrep")
        .args(["-f", "^sleep 301$"])
        .output();
    if let Ok(out) = out {
        let left: Vec<u32> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|p| alive(*p))
            .collect();
        assert!(left.is_empty(), "double-forked sleeper survived: {left:?}");
    }
}

#[tokio::test]
async fn ten_megabytes_of_output_is_capped_not_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!([{"type": "command", "command": "head -c 10000000 /dev/zero | tr '\\0' a; exit 0"}]),
    );
    let run = reg.execute(ls(dir.path())).await;
    assert_eq!(run.runs[0].exit_code, Some(0));
    assert!(!run.runs[0].timed_out);
    // PreToolUse plain stdout is not context; nothing of it is kept in the outcome.
    assert_eq!(run.outcome.decision, Decision::None);
    assert!(run.outcome.additional_context.is_empty());
}

#[tokio::test]
async fn a_hook_that_reads_no_stdin_does_not_deadlock_on_large_input() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!([{"type": "command", "command": "echo ignoring input >&2; exit 2", "timeout": 30}]),
    );
    let big = "x".repeat(8 << 20);
    let run = reg
        .execute(HookContext::new("s", dir.path()).pre_tool_use(
            "Write",
            json!({"file_path": "/tmp/x", "content": big}),
            None,
        ))
        .await;
    assert!(!run.runs[0].timed_out);
    assert_eq!(run.outcome.decision, Decision::Deny);
    assert_eq!(run.outcome.reason.as_deref(), Some("ignoring input"));
}

#[tokio::test]
async fn matching_hooks_run_concurrently() {
    // Each hook announces itself, then waits until all four have: run one after another, the
    // first would wait for the others until its timeout.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let hooks: Vec<Value> = (0..4)
        .map(|i| {
            json!({"type": "command", "timeout": 20, "command": format!(
                "touch '{d}/ready-{i}'; n=0; while [ $(ls '{d}' | grep -c ready-) -lt 4 ]; do sleep 0.02; n=$((n+1)); [ $n -gt 900 ] && exit 1; done; exit 0"
            )})
        })
        .collect();
    let reg = registry(dir.path(), json!(hooks));
    let run = reg.execute(ls(dir.path())).await;
    assert_eq!(run.runs.len(), 4);
    for r in &run.runs {
        assert_eq!((r.exit_code, r.timed_out), (Some(0), false), "{r:?}");
    }
}
