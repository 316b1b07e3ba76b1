//! Command hooks as processes: timeouts kill the whole process group, and on Linux every
//! descendant (also those that left the group and the session) ends with the run, whether it
//! timed out, exited or was cancelled, without touching other hooks' processes or the runtime's
//! other children; huge output does not exhaust memory, a hook that never reads stdin does not
//! deadlock, and matching hooks run concurrently. No timing assertions: concurrency is shown by
//! hooks that wait for each other.

use std::path::Path;
use std::time::Duration;

use agent_core::hooks::{Decision, HookContext, HookInput, HookRegistry, HooksConfig};
use agent_core::settings::Settings;
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

/// Descendants that leave the hook's process group and session (Linux: the runtime adopts and
/// ends them; elsewhere only the process group is killed, docs/hooks.md).
#[cfg(target_os = "linux")]
mod escapees {
    use super::*;

    /// A descendant for the tests below: `sh desc.sh DIR NAME SECONDS` writes `PID START` (its
    /// start time, `/proc/PID/stat` field 22) to `DIR/NAME.pid`, sleeps, then creates
    /// `DIR/NAME.marker`. Returns the script's path.
    fn descendant_script(dir: &Path) -> String {
        let script = dir.join("desc.sh");
        std::fs::write(
            &script,
            "echo \"$$ $(cut -d' ' -f22 /proc/$$/stat)\" > \"$1/$2.tmp\" && mv \"$1/$2.tmp\" \"$1/$2.pid\"\n\
             sleep \"$3\"\n\
             touch \"$1/$2.marker\"\n",
        )
        .unwrap();
        script.display().to_string()
    }

    /// Whether util-linux `setsid` has `-f` (fork always).
    fn setsid_has_fork() -> bool {
        std::process::Command::new("setsid")
            .arg("--help")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--fork"))
    }

    /// The descendants a hook starts: `setsid CMD &` (left the group and the session, child of the
    /// hook), `( setsid CMD & )` (double fork: adopted at once), and `setsid -f CMD` where
    /// available. `quiet` detaches them from the hook's output pipes. Returns the shell text, which
    /// waits until each has written its pid file, and the names.
    fn start_escapees(dir: &Path, prefix: &str, secs: u32, quiet: bool) -> (String, Vec<String>) {
        let script = descendant_script(dir);
        let d = dir.display();
        let io = if quiet {
            " </dev/null >/dev/null 2>&1"
        } else {
            ""
        };
        let mut names = vec![format!("{prefix}-setsid"), format!("{prefix}-double")];
        let mut text = format!(
            "setsid sh '{script}' '{d}' {n0} {secs}{io} &\n( setsid sh '{script}' '{d}' {n1} {secs}{io} & )\n",
            n0 = names[0],
            n1 = names[1]
        );
        if setsid_has_fork() {
            names.push(format!("{prefix}-fork"));
            text.push_str(&format!(
                "setsid -f sh '{script}' '{d}' {n2} {secs}{io}\n",
                n2 = names[2]
            ));
        }
        for n in &names {
            text.push_str(&format!(
                "while [ ! -e '{d}/{n}.pid' ]; do sleep 0.01; done\n"
            ));
        }
        (text, names)
    }

    /// `(pid, start time)` as a descendant recorded it.
    fn recorded_pid(dir: &Path, name: &str) -> (u32, u64) {
        let text = std::fs::read_to_string(dir.join(format!("{name}.pid"))).unwrap();
        let mut it = text.split_whitespace();
        (
            it.next().unwrap().parse().unwrap(),
            it.next().unwrap().parse().unwrap(),
        )
    }

    /// Whether that process is still in the process table (alive, or a zombie nobody reaped).
    fn in_process_table(pid: u32, start: u64) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().nth(19))
                .and_then(|s| s.parse::<u64>().ok())
                == Some(start)
        })
    }

    /// Every named descendant is gone from the process table: killed, and reaped.
    fn assert_all_gone(dir: &Path, names: &[String]) {
        for n in names {
            let (pid, start) = recorded_pid(dir, n);
            assert!(
                !in_process_table(pid, start),
                "{n} (pid {pid}) is still in the process table: {:?}",
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
            );
        }
    }

    /// After the descendants' sleep, none of them created its marker.
    async fn assert_no_markers(dir: &Path, names: &[String], secs: u64) {
        tokio::time::sleep(Duration::from_millis(secs * 1000 + 600)).await;
        for n in names {
            assert!(
                !dir.join(format!("{n}.marker")).exists(),
                "{n} survived long enough to create its marker"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_timed_out_hook_leaves_no_descendant_even_outside_its_group_or_session() {
        let dir = tempfile::tempdir().unwrap();
        // `a-*` keep the hook's stdout and stderr open; `b-*` do not.
        // They would create their markers 4 s in; the hook times out at 2 s.
        let (a, mut names) = start_escapees(dir.path(), "a", 4, false);
        let (b, more) = start_escapees(dir.path(), "b", 4, true);
        names.extend(more);
        let reg = registry(
            dir.path(),
            json!([{"type": "command", "command": format!("{a}{b}exec sleep 100"), "timeout": 2}]),
        );
        let run = reg.execute(ls(dir.path())).await;
        assert!(run.runs[0].timed_out, "{:?}", run.runs[0]);
        assert_eq!(run.runs[0].error.as_deref(), Some("timed out after 2s"));
        assert_all_gone(dir.path(), &names);
        assert_no_markers(dir.path(), &names, 2).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hook_that_exits_at_once_leaves_no_descendant_behind() {
        let dir = tempfile::tempdir().unwrap();
        let (start, names) = start_escapees(dir.path(), "x", 2, true);
        let reg = registry(
            dir.path(),
            json!([{"type": "command", "command": format!("{start}echo started; exit 0"), "timeout": 20}]),
        );
        let run = reg.execute(ls(dir.path())).await;
        assert_eq!(
            (run.runs[0].exit_code, run.runs[0].timed_out),
            (Some(0), false),
            "{:?}",
            run.runs[0]
        );
        assert!(
            run.runs[0].duration < Duration::from_secs(2),
            "{:?}",
            run.runs[0]
        );
        assert_all_gone(dir.path(), &names);
        assert_no_markers(dir.path(), &names, 2).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_timeout_cleans_up_its_own_hook_only() {
        // Hook A times out after 1 s; hook B, running alongside, has an adopted `setsid` orphan of
        // its own (a child of the runtime, like A's) that must still be alive 2 s in; and a process
        // of the runtime that is no hook's, adopted during the run too, must survive both.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let script = descendant_script(dir.path());
        let stranger = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "( setsid sh '{script}' '{d}' stranger 30 </dev/null >/dev/null 2>&1 & ); sleep 1.5"
            ))
            .spawn()
            .unwrap();
        let a = format!(
            "( setsid sh '{script}' '{d}' a 30 </dev/null >/dev/null 2>&1 & )\n\
             while [ ! -e '{d}/a.pid' ]; do sleep 0.01; done\nexec sleep 100"
        );
        let b = format!(
            "( setsid sh '{script}' '{d}' b 30 </dev/null >/dev/null 2>&1 & )\n\
             while [ ! -e '{d}/b.pid' ]; do sleep 0.01; done\nsleep 2\n\
             kill -0 $(cut -d' ' -f1 '{d}/b.pid') || exit 3\nexit 0"
        );
        let reg = registry(
            dir.path(),
            json!([
                {"type": "command", "command": a, "timeout": 1},
                {"type": "command", "command": b, "timeout": 20}
            ]),
        );
        let run = reg.execute(ls(dir.path())).await;
        assert!(run.runs[0].timed_out, "{:?}", run.runs[0]);
        assert_eq!(
            (run.runs[1].exit_code, run.runs[1].timed_out),
            (Some(0), false),
            "B or its orphan was hit by A's cleanup: {:?}",
            run.runs[1]
        );
        assert_all_gone(dir.path(), &["a".into(), "b".into()]);
        let mut stranger = stranger;
        assert!(stranger.wait().unwrap().success());
        let (pid, start) = recorded_pid(dir.path(), "stranger");
        assert!(
            in_process_table(pid, start),
            "a process no hook started was killed"
        );
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_run_still_ends_its_descendants() {
        let dir = tempfile::tempdir().unwrap();
        let (start, names) = start_escapees(dir.path(), "c", 30, true);
        let d = dir.path().display();
        let reg = registry(
            dir.path(),
            json!([{"type": "command", "command": format!("{start}touch '{d}/started'; exec sleep 100"), "timeout": 60}]),
        );
        let execute = reg.execute(ls(dir.path()));
        let started = dir.path().join("started");
        let waiting = async {
            while !started.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        // The run is dropped (cancelled) once its descendants are all there.
        tokio::select! {
            _ = execute => panic!("the hook cannot finish on its own"),
            () = waiting => {}
        }
        // The rest of the cleanup runs in a thread: give it its budget.
        let mut left = names.clone();
        for _ in 0..200 {
            left.retain(|n| {
                let (pid, start) = recorded_pid(dir.path(), n);
                in_process_table(pid, start)
            });
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(left.is_empty(), "still there: {left:?}");
    }
}
