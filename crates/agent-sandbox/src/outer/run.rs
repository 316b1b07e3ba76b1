//! Running a wrapped command: limits, capture, wall time, killing the process group, audit.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use agent_core::process::ProcessTree;

use super::{
    AuditRecord, Ending, ExecError, ExecOutcome, ExecRequest, NoneBackend, OuterSandbox,
    ResourceLimits,
};

/// How long output is still read after the command was reaped.
const PIPE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How often [`run_cancellable`] looks at its cancellation: a cancelled command's process
/// group is killed at most this long after the flag is set (well within the second the
/// interactive session promises).
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Runs `request` under `backend` (see the module docs for the fallback rule).
///
/// # Errors
/// [`ExecError::Unavailable`] when the backend cannot run here and `fail_if_unavailable` is set;
/// [`ExecError::Invalid`] for an empty command; [`ExecError::Io`] when the process cannot be
/// started.
pub fn run(backend: &dyn OuterSandbox, request: &ExecRequest) -> Result<ExecOutcome, ExecError> {
    run_cancellable(backend, request, &|| false)
}

/// [`run`], stopped early when `cancelled` answers `true` (a person pressed Ctrl-C): the
/// whole process group is killed as for the wall-time limit, within [`CANCEL_POLL`] of the
/// answer changing, everything the command started ends with it, and the audit's ending is
/// [`Ending::Cancelled`] (with the output read until then).
///
/// # Errors
/// As [`run`].
pub fn run_cancellable(
    backend: &dyn OuterSandbox,
    request: &ExecRequest,
    cancelled: &dyn Fn() -> bool,
) -> Result<ExecOutcome, ExecError> {
    if request.command.is_empty() {
        return Err(ExecError::Invalid("no command to run".into()));
    }
    let span = tracing::info_span!("outer_sandbox_run", backend = backend.name(), command = %request.command.join(" "));
    let _guard = span.enter();
    let (used, unsandboxed): (&dyn OuterSandbox, Option<String>) = match backend.probe() {
        Ok(()) => (backend, None),
        Err(u) if request.fail_if_unavailable => return Err(u.into()),
        Err(u) => {
            tracing::warn!(reason = %u, "running without the OS sandbox (failIfUnavailable is false)");
            (&NoneBackend, Some(u.to_string()))
        }
    };
    let wrapped = used.wrap(request)?;
    let mut argv = trampoline(&request.limits);
    argv.push(wrapped.program.clone());
    argv.extend(wrapped.args.iter().cloned());

    let started = Instant::now();
    // The one containment runner (the same as command hooks' and MCP servers'): everything the
    // command starts ends with it, also what left its process group (`setsid`), whatever the
    // backend; the OS backends' pid namespace is a second wall.
    let mut tree = ProcessTree::begin();
    let mut child = match spawn(request, &argv, &tree) {
        Ok(c) => c,
        Err(e) => {
            remove_policy(wrapped.policy_file.as_deref());
            return Err(e.into());
        }
    };
    let pgid = child.id();
    tree.started(Some(pgid));
    let tree = Arc::new(Mutex::new(tree));
    let running = Arc::new(AtomicBool::new(true));
    let scanner = start_scanner(&tree, &running);
    let cap = usize::try_from(request.limits.output_bytes).unwrap_or(usize::MAX);
    let (readers, over) = start_readers(&mut child, cap, pgid);
    let waiter = start_waiter(child, pgid, tree, running, scanner);
    let deadline = request
        .limits
        .wall
        .and_then(|wall| started.checked_add(wall));
    let (status, stopped) = wait(&waiter, deadline, cancelled, pgid)?;
    let (stdout, stderr, held_open) = collect(readers);
    let mut denied = Vec::new();
    if held_open {
        denied.push(
            "a process that left the command's process group kept its output open; output after that point was not read"
                .to_owned(),
        );
    }
    remove_policy(wrapped.policy_file.as_deref());

    let ending = if over.load(Ordering::SeqCst) {
        denied.push(format!(
            "output passed {} bytes; the process group was killed",
            request.limits.output_bytes
        ));
        Ending::OutputLimit
    } else if stopped == Some(Ending::WallTimeout) {
        denied.push(format!(
            "wall time passed {:?}; the process group was killed",
            request.limits.wall.unwrap_or_default()
        ));
        Ending::WallTimeout
    } else if stopped == Some(Ending::Cancelled) {
        denied.push(
            "cancelled by the user; the process group and everything it started were killed"
                .to_owned(),
        );
        Ending::Cancelled
    } else {
        ending_of(status)
    };
    match ending {
        Ending::Signaled { signal } => denied.push(signal_meaning(signal)),
        // bubblewrap exits with 128 + N when the command was killed by signal N.
        Ending::Exited { code } if used.name() == "bwrap" && (129..=160).contains(&code) => {
            denied.push(signal_meaning(code - 128));
        }
        _ => {}
    }
    if let Some(why) = &unsandboxed {
        denied.push(format!("ran WITHOUT the OS sandbox: {why}"));
    }
    let audit = AuditRecord {
        backend: used.name().to_owned(),
        requested_backend: backend.name().to_owned(),
        unsandboxed,
        command: request.command.clone(),
        argv,
        workdir: request.plan.workdir.as_ref().map(|(g, _)| g.path.clone()),
        mounts: wrapped.mounts,
        network: wrapped.network,
        env_kept: request.env.kept.iter().map(|(k, _)| k.clone()).collect(),
        env_dropped: request.env.dropped.clone(),
        limits: request.limits.clone(),
        denied,
        ending,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    tracing::info!(ending = ?audit.ending, duration_ms = audit.duration_ms, "outer sandbox run ended");
    Ok(ExecOutcome {
        stdout,
        stderr,
        audit,
    })
}

/// Starts `argv` in a process group of its own, with the request's environment alone, no
/// stdin, stdout and stderr piped, in the plan's working directory, marked as a member of
/// `tree`.
fn spawn(
    request: &ExecRequest,
    argv: &[String],
    tree: &ProcessTree,
) -> std::io::Result<std::process::Child> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(request.env.kept.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((name, value)) = tree.marker() {
        cmd.env(name, value);
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    if let Some((g, _)) = &request.plan.workdir {
        cmd.current_dir(&g.path);
    }
    cmd.spawn()
}

/// A thread that learns the command's members while their ancestry is intact (after 100 ms,
/// 200 ms, ... at most every second), so one that detaches later is still known; it stops
/// once `running` is false (unpark it to stop at once).
fn start_scanner(tree: &Arc<Mutex<ProcessTree>>, running: &Arc<AtomicBool>) -> std::thread::Thread {
    let (tree, running) = (Arc::clone(tree), Arc::clone(running));
    std::thread::spawn(move || {
        let mut delay = std::time::Duration::from_millis(100);
        loop {
            std::thread::park_timeout(delay);
            if !running.load(Ordering::SeqCst) {
                return;
            }
            tree.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .scan_now();
            delay = (delay * 2).min(std::time::Duration::from_secs(1));
        }
    })
    .thread()
    .clone()
}

/// One output stream being read: what was kept, and a message when the stream ended.
type Reader = (Arc<Mutex<Vec<u8>>>, mpsc::Receiver<()>);

/// Threads reading the child's stdout and stderr, `cap` bytes kept of both together; the flag
/// is set when the output passed the cap (the process group is then killed).
fn start_readers(
    child: &mut std::process::Child,
    cap: usize,
    pgid: u32,
) -> (Vec<Reader>, Arc<AtomicBool>) {
    let total = Arc::new(AtomicUsize::new(0));
    let over = Arc::new(AtomicBool::new(false));
    let readers = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .map(|stream| {
        let (total, over) = (Arc::clone(&total), Arc::clone(&over));
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel::<()>();
        let sink = Arc::clone(&kept);
        std::thread::spawn(move || {
            capture(stream, &sink, &total, &over, cap, pgid);
            let _ = tx.send(());
        });
        (kept, rx)
    })
    .collect();
    (readers, over)
}

/// A thread that waits for the command and sends its status. Nothing the command started may
/// outlive it: once it has exited, and before it is reaped (so its pid, which is the group's
/// id, cannot be reused), every process of the run is killed, in its process group or not,
/// and adopted orphans are reaped.
fn start_waiter(
    mut child: std::process::Child,
    pgid: u32,
    tree: Arc<Mutex<ProcessTree>>,
    running: Arc<AtomicBool>,
    scanner: std::thread::Thread,
) -> mpsc::Receiver<std::io::Result<std::process::ExitStatus>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        wait_without_reaping(pgid);
        running.store(false, Ordering::SeqCst);
        scanner.unpark();
        tree.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .end_blocking();
        kill_group(pgid);
        let _ = tx.send(child.wait());
    });
    rx
}

/// Waits for the command's status from `waiter`, its wall time (`deadline`), or the
/// cancellation, whichever comes first; on either of the last two the process group is
/// killed and the ending that stopped it is returned beside the status.
fn wait(
    waiter: &mpsc::Receiver<std::io::Result<std::process::ExitStatus>>,
    deadline: Option<Instant>,
    cancelled: &dyn Fn() -> bool,
    pgid: u32,
) -> Result<(std::process::ExitStatus, Option<Ending>), ExecError> {
    let mut stopped: Option<Ending> = None;
    let status = loop {
        let now = Instant::now();
        let slice = deadline.map_or(CANCEL_POLL, |d| {
            d.saturating_duration_since(now).min(CANCEL_POLL)
        });
        match waiter.recv_timeout(slice) {
            Ok(s) => break s,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(std::io::Error::other("the waiter thread ended").into());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let ending = if cancelled() {
                    Ending::Cancelled
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Ending::WallTimeout
                } else {
                    continue;
                };
                stopped = Some(ending);
                kill_group(pgid);
                break waiter
                    .recv()
                    .map_err(|_| std::io::Error::other("the waiter thread ended"))?;
            }
        }
    }?;
    Ok((status, stopped))
}

/// The output kept of stdout and stderr, and whether a stream was still held open after the
/// grace period. A process that left the group (`setsid`) can hold the pipes open; its output
/// is not waited for beyond [`PIPE_GRACE`], and the audit says so.
fn collect(readers: Vec<Reader>) -> (Vec<u8>, Vec<u8>, bool) {
    let mut held_open = false;
    let mut outputs = readers.into_iter().map(|(kept, done)| {
        held_open |= done.recv_timeout(PIPE_GRACE).is_err();
        std::mem::take(
            &mut *kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    });
    let stdout = outputs.next().unwrap_or_default();
    let stderr = outputs.next().unwrap_or_default();
    drop(outputs);
    (stdout, stderr, held_open)
}

/// `/bin/sh -c 'ulimit ...; exec "$@"'` when any rlimit is set: limits are applied in the
/// child without unsafe code, then the shell is replaced by the program.
fn trampoline(limits: &ResourceLimits) -> Vec<String> {
    let mut script = Vec::new();
    if let Some(s) = limits.cpu_seconds {
        script.push(format!("ulimit -t {s}"));
    }
    if let Some(b) = limits.address_space {
        script.push(format!("ulimit -v {}", b.div_ceil(1024)));
    }
    if let Some(b) = limits.file_size {
        script.push(format!("ulimit -f {}", b.div_ceil(512)));
    }
    if script.is_empty() {
        return Vec::new();
    }
    script.push("exec \"$@\"".to_owned());
    vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        script.join(" && "),
        "agent-sandbox-limits".to_owned(),
    ]
}

fn capture(
    stream: Option<Box<dyn Read + Send>>,
    kept: &Mutex<Vec<u8>>,
    total: &AtomicUsize,
    over: &AtomicBool,
    cap: usize,
    pgid: u32,
) {
    let Some(mut stream) = stream else {
        return;
    };
    let mut buf = [0u8; 8192];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let before = total.fetch_add(n, Ordering::SeqCst);
        let room = cap.saturating_sub(before);
        kept.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(&buf[..n.min(room)]);
        if before + n > cap && !over.swap(true, Ordering::SeqCst) {
            kill_group(pgid);
        }
    }
}

#[cfg(unix)]
fn kill_group(pgid: u32) {
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
        // The group may be gone already.
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pgid: u32) {}

/// Blocks until the child `pid` has exited, leaving it a zombie (`waitid(WNOWAIT)`).
#[cfg(any(target_os = "linux", target_os = "macos", target_os = "freebsd"))]
fn wait_without_reaping(pid: u32) {
    use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        while let Err(rustix::io::Errno::INTR) = waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {}
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "freebsd")))]
fn wait_without_reaping(_pid: u32) {}

fn ending_of(status: std::process::ExitStatus) -> Ending {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Ending::Signaled { signal };
    }
    match status.code() {
        // bubblewrap reports a child killed by a signal as 128 + the signal.
        Some(code) => Ending::Exited { code },
        None => Ending::Signaled { signal: 0 },
    }
}

fn signal_meaning(signal: i32) -> String {
    let what = match signal {
        9 => "SIGKILL",
        24 => "SIGXCPU: the CPU-time limit",
        25 => "SIGXFSZ: the file-size limit",
        11 => "SIGSEGV (often the address-space limit)",
        6 => "SIGABRT (often a failed allocation under the address-space limit)",
        _ => "a signal",
    };
    format!("killed by signal {signal} ({what})")
}

fn remove_policy(path: Option<&std::path::Path>) {
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}
