//! Command hooks: a process per run, the input JSON on stdin, stdout and stderr captured with a
//! memory cap, in its own process group with no terminal on any of its standard streams.
//!
//! A run ends when the main process has exited and its output pipes have closed (a background
//! child that keeps them open keeps the run going), or when its time is up. Then, on Linux,
//! **every** process it started is killed, including those that left the process group or the
//! session, and the ones the runtime adopted are reaped ([`crate::process`]): a finished hook
//! leaves nothing behind. Elsewhere only the process group is killed, and only on timeout.
//!
//! The environment is the runtime's minus `OTEL_*` and, with `hookEnvironment.scrubSecrets`,
//! minus every variable whose name looks like a secret ([`HookEnvironment`]), plus the hook
//! variables the caller passes and the run marker `AGENT_HOOK_RUN_ID` (Linux).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::config::HookShell;
use super::environment::HookEnvironment;
use super::protocol::{RawExit, RawRun};
use crate::process::ProcessTree as HookTree;

/// At most this much of a hook's stdout is kept in memory; the rest is read and discarded.
pub(crate) const MAX_STDOUT_BYTES: usize = 1 << 20;
/// At most this much of a hook's stderr is kept.
pub(crate) const MAX_STDERR_BYTES: usize = 64 << 10;

/// How to start one command hook.
#[derive(Clone, Debug)]
pub(crate) struct CommandSpec<'a> {
    pub command: &'a str,
    pub args: Option<&'a [String]>,
    pub shell: HookShell,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    /// Which of the runtime's variables the hook must not see.
    pub environment: &'a HookEnvironment,
    /// Values substituted for `${NAME}` in exec-form arguments.
    pub substitutions: &'a [(&'static str, String)],
}

/// Reads `r` to the end, keeping the first `cap` bytes. Returns the kept bytes and the total.
async fn read_capped<R: AsyncRead + Unpin>(r: Option<R>, cap: usize) -> (Vec<u8>, usize) {
    let Some(mut r) = r else {
        return (Vec::new(), 0);
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut total = 0usize;
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total = total.saturating_add(n);
                let room = cap.saturating_sub(kept.len());
                if room > 0 {
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    }
    (kept, total)
}

fn substitute(arg: &str, subs: &[(&'static str, String)]) -> String {
    let mut out = arg.to_owned();
    for (name, value) in subs {
        let pattern = format!("${{{name}}}");
        if out.contains(&pattern) {
            out = out.replace(&pattern, value);
        }
    }
    out
}

/// Runs one command hook to completion or until `timeout`, then ends everything it started.
pub(crate) async fn run(spec: &CommandSpec<'_>, stdin: &[u8], timeout: Duration) -> RawRun {
    let mut cmd = match spec.args {
        Some(args) => {
            let mut c = tokio::process::Command::new(spec.command);
            c.args(args.iter().map(|a| substitute(a, spec.substitutions)));
            c
        }
        None => {
            let mut c = tokio::process::Command::new(match spec.shell {
                HookShell::Sh => "sh",
                HookShell::Bash => "bash",
            });
            c.arg("-c").arg(spec.command);
            c
        }
    };
    cmd.current_dir(spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if name.starts_with("OTEL_") || spec.environment.withholds(&name) {
            cmd.env_remove(&k);
        }
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    // Registered before the spawn, so that the runtime adopts the hook's orphans from the start.
    let mut tree = HookTree::begin();
    if let Some((k, v)) = tree.marker() {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return RawRun {
                exit: RawExit::Failed(format!("could not be started: {e}")),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    tree.started(child.id());
    let input = child.stdin.take();
    let out = child.stdout.take();
    let err = child.stderr.take();
    let write = async move {
        if let Some(mut w) = input {
            // A hook that exits without reading its input closes the pipe: not an error.
            let _ = w.write_all(stdin).await;
            let _ = w.shutdown().await;
        }
    };
    let work = async {
        let ((), (out, out_total), (err, _), early) = tokio::join!(
            write,
            read_capped(out, MAX_STDOUT_BYTES),
            read_capped(err, MAX_STDERR_BYTES),
            main_exited(&tree, &mut child)
        );
        (out, out_total, err, early)
    };
    let finished = tokio::select! {
        r = tokio::time::timeout(timeout, work) => r,
        never = tree.watch() => match never {},
    };
    match finished {
        Ok((out, out_total, err, early)) => {
            tree.end(false).await;
            let status = match early {
                Some(s) => s,
                None => child.wait().await,
            };
            let exit = match status {
                Ok(s) => match s.code() {
                    Some(c) => RawExit::Code(c),
                    None => RawExit::Signal(signal_of(&s)),
                },
                Err(e) => RawExit::Failed(format!("could not be waited for: {e}")),
            };
            let mut stdout = String::from_utf8_lossy(&out).into_owned();
            if out_total > out.len() {
                // Too long to be a decision: keep it as plain text, noted by the caller.
                stdout.push_str(&format!(
                    "\n[stdout truncated: {out_total} bytes, the first {} kept]",
                    out.len()
                ));
            }
            RawRun {
                exit,
                stdout,
                stderr: String::from_utf8_lossy(&err).into_owned(),
            }
        }
        Err(_) => {
            tree.end(true).await;
            let _ = child.start_kill();
            let _ = child.wait().await;
            RawRun {
                exit: RawExit::TimedOut,
                stdout: String::new(),
                stderr: String::new(),
            }
        }
    }
}

/// Waits until the main process has exited. On Linux it is left unreaped (a zombie) for the
/// cleanup, and `None` says to reap it afterwards; elsewhere it is reaped here.
#[cfg(target_os = "linux")]
async fn main_exited(
    tree: &HookTree,
    _child: &mut tokio::process::Child,
) -> Option<std::io::Result<std::process::ExitStatus>> {
    tree.main_exited().await;
    None
}

#[cfg(not(target_os = "linux"))]
async fn main_exited(
    _tree: &HookTree,
    child: &mut tokio::process::Child,
) -> Option<std::io::Result<std::process::ExitStatus>> {
    Some(child.wait().await)
}

#[cfg(unix)]
fn signal_of(s: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.signal().unwrap_or(0)
}

#[cfg(not(unix))]
fn signal_of(_s: &std::process::ExitStatus) -> i32 {
    0
}
