//! [`ProcessTree`] on Linux: the runtime a child subreaper while a run is active, a `/proc` scan
//! attributing descendants to their run, pidfd kills, adopted orphans reaped.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::convert::Infallible;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{
    Pid, PidfdFlags, Signal, WaitId, WaitIdOptions, WaitOptions, child_subreaper, getpid,
    kill_process, kill_process_group, pidfd_open, pidfd_send_signal, set_child_subreaper,
    test_kill_process_group, waitid, waitpid,
};

use super::{CLEANUP_BUDGET, MARKER_VAR};

/// A process as one scan saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Proc {
    pid: i32,
    ppid: i32,
    pgid: i32,
    sid: i32,
    /// Start time in clock ticks after boot: with the pid, it names one process.
    start: u64,
    zombie: bool,
}

impl Proc {
    fn id(&self) -> ProcId {
        ProcId {
            pid: self.pid,
            start: self.start,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ProcId {
    pid: i32,
    start: u64,
}

/// What is known about one running hook.
#[derive(Debug, Default)]
struct Run {
    main: Option<ProcId>,
    members: BTreeSet<ProcId>,
    /// Process group and session ids created inside the run.
    keys: BTreeSet<i32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subreaper {
    /// Not decided: no hook is running.
    Idle,
    /// We set the flag and clear it when the last hook is done.
    Ours,
    /// Someone else (the embedder) had set it: left alone.
    Theirs,
    /// `prctl` failed: orphans go to init and may escape.
    Unavailable,
}

struct Registry {
    runs: BTreeMap<u64, Run>,
    next: u64,
    subreaper: Subreaper,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    runs: BTreeMap::new(),
    next: 0,
    subreaper: Subreaper::Idle,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `/proc` shows this process under its own pid (not, e.g., another pid
/// namespace's `/proc`). Without it, only the process group is killed.
fn proc_usable() -> bool {
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(|| {
        let me = getpid().as_raw_nonzero().get();
        let ok = read_stat(me).is_some_and(|p| p.pid == me);
        if !ok {
            tracing::warn!(
                "/proc does not show this process; a command hook's descendants that leave its process group are not tracked"
            );
        }
        ok
    })
}

/// One command hook run's processes (see the module docs). Dropping it before
/// [`Self::end`] (a cancelled run) kills what it can at once and finishes in a thread.
#[derive(Debug)]
pub struct ProcessTree {
    target: Target,
    ended: bool,
}

/// What a cleanup needs to know about a run.
#[derive(Debug)]
struct Target {
    run: u64,
    marker: String,
    main: Option<ProcId>,
}

impl ProcessTree {
    /// Registers a run before its process starts, making the runtime a child subreaper.
    pub fn begin() -> Self {
        let mut reg = registry();
        if reg.runs.is_empty() && reg.subreaper == Subreaper::Idle {
            reg.subreaper = match child_subreaper() {
                Ok(Some(_)) => Subreaper::Theirs,
                Ok(None) => match set_child_subreaper(Some(getpid())) {
                    Ok(()) => Subreaper::Ours,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot make the runtime a child subreaper; a hook's descendants that detach (setsid, double fork) may outlive it");
                        Subreaper::Unavailable
                    }
                },
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the child subreaper flag; a hook's descendants that detach (setsid, double fork) may outlive it");
                    Subreaper::Unavailable
                }
            };
        }
        reg.next += 1;
        let run = reg.next;
        reg.runs.insert(run, Run::default());
        Self {
            target: Target {
                run,
                marker: uuid::Uuid::new_v4().simple().to_string(),
                main: None,
            },
            ended: false,
        }
    }

    /// The variable to put in the hook's environment.
    pub fn marker(&self) -> Option<(&'static str, String)> {
        Some((MARKER_VAR, self.target.marker.clone()))
    }

    /// Records the main process once it is spawned.
    pub fn started(&mut self, pid: Option<u32>) {
        let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) else {
            return;
        };
        // Not reaped before the cleanup, so its stat is there even if it exited already.
        let start = if proc_usable() {
            read_stat(pid).map_or(0, |p| p.start)
        } else {
            0
        };
        let id = ProcId { pid, start };
        self.target.main = Some(id);
        let mut reg = registry();
        if let Some(run) = reg.runs.get_mut(&self.target.run) {
            run.main = Some(id);
            run.keys.insert(pid);
        }
    }

    /// Scans now and then while the hook runs, to learn its members while their ancestry
    /// is intact. Never returns; drop it.
    pub async fn watch(&self) -> Infallible {
        let mut delay = Duration::from_millis(100);
        loop {
            tokio::time::sleep(delay).await;
            if self.target.main.is_some() && proc_usable() {
                let _ = self.target.scan();
            }
            delay = (delay * 2).min(Duration::from_secs(1));
        }
    }

    /// Waits until the main process has exited, without reaping it.
    pub async fn main_exited(&self) {
        let Some(pid) = self.target.main.and_then(|m| Pid::from_raw(m.pid)) else {
            return;
        };
        let mut delay = Duration::from_millis(1);
        loop {
            match waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG,
            ) {
                Ok(None) | Err(Errno::INTR) => {}
                // Exited, or not ours to wait for (then there is nothing to wait for).
                Ok(Some(_)) | Err(_) => return,
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(50));
        }
    }

    /// Learns the run's members now: a blocking caller's [`Self::watch`], to call now and
    /// then while the run goes on.
    pub fn scan_now(&self) {
        if self.target.main.is_some() && proc_usable() {
            let _ = self.target.scan();
        }
    }

    /// [`Self::end`] for a blocking caller (a thread, not a task): kills every process of
    /// the run and reaps those the runtime adopted, for at most [`CLEANUP_BUDGET`].
    pub fn end_blocking(&mut self) {
        if self.target.main.is_some() {
            let _ = self.target.round(true);
            self.target.end_blocking();
        }
        self.ended = true;
    }

    /// Asks every process of the run to end: SIGTERM to its process group (when the main
    /// process leads one) and to each member a scan finds, without waiting. [`Self::end`]
    /// afterwards kills what is left.
    pub fn terminate(&self) {
        let Some(main) = self.target.main else {
            return;
        };
        if let Some(pgid) = Pid::from_raw(main.pid) {
            let _ = kill_process_group(pgid, Signal::TERM);
        }
        if proc_usable() {
            for p in self.target.scan().iter().filter(|p| !p.zombie) {
                signal_verified(p, Signal::TERM);
            }
        }
    }

    /// Whether any process of the run still runs (zombies aside).
    pub fn any_running(&self) -> bool {
        let Some(main) = self.target.main else {
            return false;
        };
        if proc_usable() {
            self.target.scan().iter().any(|p| !p.zombie)
        } else {
            Pid::from_raw(main.pid).is_some_and(|g| test_kill_process_group(g).is_ok())
        }
    }

    /// Ends the run politely: [`Self::terminate`], up to `grace` for its processes to exit,
    /// then [`Self::end`] kills and reaps whatever is left.
    pub async fn end_gracefully(&mut self, grace: Duration) {
        self.terminate();
        let deadline = Instant::now() + grace;
        while self.any_running() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.end(true).await;
    }

    /// [`Self::end_gracefully`] for a blocking caller (a process about to exit).
    pub fn end_gracefully_blocking(&mut self, grace: Duration) {
        self.terminate();
        let deadline = Instant::now() + grace;
        while self.any_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.end_blocking();
    }

    /// Kills every process of the run and reaps those the runtime adopted, for at most
    /// [`CLEANUP_BUDGET`]. `timed_out` makes no difference on Linux: the main process is a
    /// member like any other.
    pub async fn end(&mut self, _timed_out: bool) {
        let deadline = Instant::now() + CLEANUP_BUDGET;
        let mut delay = Duration::from_millis(1);
        let mut first = true;
        loop {
            let left = self.target.round(first);
            first = false;
            if left.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                warn_left(&left);
                break;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(50));
        }
        self.ended = true;
    }
}

impl Target {
    /// The cleanup of [`ProcessTree::end`], blocking, for a run whose future was dropped.
    fn end_blocking(&self) {
        let deadline = Instant::now() + CLEANUP_BUDGET;
        let mut delay = Duration::from_millis(1);
        // The first round already ran in `drop`.
        loop {
            let left = self.round(false);
            if left.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                warn_left(&left);
                break;
            }
            std::thread::sleep(delay);
            delay = (delay * 2).min(Duration::from_millis(50));
        }
    }

    /// One cleanup round: kills live members, reaps adopted zombies. Returns the members
    /// still there (live, or zombies the runtime could not reap yet).
    fn round(&self, first: bool) -> Vec<i32> {
        let Some(main) = self.main else {
            return Vec::new();
        };
        let members = if proc_usable() {
            self.scan()
        } else {
            Vec::new()
        };
        // Attribute first (the ancestry is intact while the main process lives), then kill.
        if first && let Some(pgid) = Pid::from_raw(main.pid) {
            // The main process is unreaped, so its pid cannot name another group yet.
            let _ = kill_process_group(pgid, Signal::KILL);
        }
        let me = getpid().as_raw_nonzero().get();
        let mut left = Vec::new();
        for p in &members {
            if p.zombie {
                if p.pid == main.pid {
                    // The runtime's own child: reaped by its owner (tokio), after us.
                    continue;
                }
                if p.ppid == me && reap(p) {
                    continue;
                }
            } else {
                kill_verified(p);
            }
            left.push(p.pid);
        }
        left
    }

    /// Scans `/proc` and returns the run's members; records them (and their group and
    /// session ids) for later scans and for the other runs' exclusions.
    fn scan(&self) -> Vec<Proc> {
        let me = getpid().as_raw_nonzero().get();
        let procs = snapshot(me);
        let Some(own) = procs.iter().find(|p| p.pid == me).copied() else {
            return Vec::new();
        };
        let (run, others) = {
            let reg = registry();
            let Some(run) = reg.runs.get(&self.run) else {
                return Vec::new();
            };
            let run = (run.main, run.members.clone(), run.keys.clone());
            let others: BTreeSet<ProcId> = reg
                .runs
                .iter()
                .filter(|(id, _)| **id != self.run)
                .flat_map(|(_, r)| r.main.iter().chain(r.members.iter()).copied())
                .collect();
            (run, others)
        };
        let (main, known, mut keys) = run;
        let needle = format!("{MARKER_VAR}={}", self.marker);
        let found = attribute(&procs, own, main, &known, &mut keys, &others, &|pid| {
            has_marker(pid, needle.as_bytes())
        });
        let mut reg = registry();
        if let Some(run) = reg.runs.get_mut(&self.run) {
            run.members.extend(found.iter().map(Proc::id));
            run.keys.extend(keys);
        }
        found
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        let run = self.target.run;
        if self.ended || self.target.main.is_none() {
            release(run);
            return;
        }
        // The run's future was dropped (cancelled): kill what can be killed now, while the
        // main process is still unreaped, then finish and release in the background.
        let _ = self.target.round(true);
        let target = Target {
            run,
            marker: std::mem::take(&mut self.target.marker),
            main: self.target.main,
        };
        let spawned = std::thread::Builder::new()
            .name("hook-cleanup".into())
            .spawn(move || {
                target.end_blocking();
                release(target.run);
            });
        if spawned.is_err() {
            // No thread: the processes were signalled above; release now.
            release(run);
        }
    }
}

/// Forgets a run; the last one clears the subreaper flag if it was ours to set.
fn release(run: u64) {
    let mut reg = registry();
    if reg.runs.remove(&run).is_none() {
        return;
    }
    if reg.runs.is_empty() {
        if reg.subreaper == Subreaper::Ours {
            let _ = set_child_subreaper(None);
        }
        reg.subreaper = Subreaper::Idle;
    }
}

fn warn_left(left: &[i32]) {
    tracing::warn!(
        pids = ?left,
        "a command hook's descendants are still there after {}s of cleanup (uninterruptible sleep?); giving up on them",
        CLEANUP_BUDGET.as_secs()
    );
}

/// The members of the run among `procs` (see the module docs). `keys` are the group and
/// session ids known to be the run's; the ones found are added.
fn attribute(
    procs: &[Proc],
    own: Proc,
    main: Option<ProcId>,
    known: &BTreeSet<ProcId>,
    keys: &mut BTreeSet<i32>,
    others: &BTreeSet<ProcId>,
    marked: &dyn Fn(i32) -> bool,
) -> Vec<Proc> {
    let by_pid: HashMap<i32, &Proc> = procs.iter().map(|p| (p.pid, p)).collect();
    // The runtime's subtree (everything attributable is in it, thanks to the subreaper).
    let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut subtree: Vec<&Proc> = Vec::new();
    let mut stack = vec![own.pid];
    while let Some(pid) = stack.pop() {
        for c in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if c.pid != own.pid {
                subtree.push(c);
                stack.push(c.pid);
            }
        }
    }
    let is_known = |p: &Proc| main == Some(p.id()) || known.contains(&p.id());
    let mut members: BTreeSet<i32> = BTreeSet::new();
    // An id is usable unless it is the runtime's, or its pid now names a process outside
    // the run (then the run's group or session of that id is gone).
    let usable = |k: i32, members: &BTreeSet<i32>| {
        k != own.pid
            && k != own.pgid
            && k != own.sid
            && by_pid
                .get(&k)
                .is_none_or(|p| members.contains(&k) || is_known(p))
    };
    let mut checked_marker: BTreeSet<i32> = BTreeSet::new();
    loop {
        let mut changed = false;
        for p in &subtree {
            if members.contains(&p.pid) || others.contains(&p.id()) {
                continue;
            }
            let belongs = is_known(p)
                || members.contains(&p.ppid)
                || (keys.contains(&p.pgid) && usable(p.pgid, &members))
                || (keys.contains(&p.sid) && usable(p.sid, &members));
            if belongs {
                members.insert(p.pid);
                changed = true;
            }
        }
        if !changed {
            // Ancestry and ids are exhausted: ask the environments, once per process.
            for p in &subtree {
                if p.zombie
                    || members.contains(&p.pid)
                    || others.contains(&p.id())
                    || !checked_marker.insert(p.pid)
                {
                    continue;
                }
                if marked(p.pid) {
                    members.insert(p.pid);
                    changed = true;
                }
            }
        }
        for p in &subtree {
            if members.contains(&p.pid) {
                for k in [p.pgid, p.sid] {
                    if usable(k, &members) {
                        keys.insert(k);
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    subtree
        .into_iter()
        .filter(|p| members.contains(&p.pid))
        .copied()
        .collect()
}

/// The runtime and its subtree: through the `children` files of every thread (cheap: a
/// few reads per descendant), or, where the kernel has no such files, every process
/// `/proc` shows.
fn snapshot(me: i32) -> Vec<Proc> {
    static CHILDREN_FILES: OnceLock<bool> = OnceLock::new();
    let fast = *CHILDREN_FILES
        .get_or_init(|| std::fs::metadata(format!("/proc/{me}/task/{me}/children")).is_ok());
    if fast {
        subtree(me)
    } else {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(read_stat)
            .collect()
    }
}

/// `me` and its descendants, following `/proc/<pid>/task/<tid>/children`.
fn subtree(me: i32) -> Vec<Proc> {
    let mut out: Vec<Proc> = read_stat(me).into_iter().collect();
    let mut seen = std::collections::HashSet::from([me]);
    let mut stack = vec![me];
    while let Some(pid) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in text
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
            {
                if seen.insert(child)
                    && let Some(p) = read_stat(child)
                {
                    out.push(p);
                    stack.push(child);
                }
            }
        }
    }
    out
}

fn read_stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Reads `/proc/<pid>/stat`: the fields after the command name (which may hold spaces
/// and parentheses, so the last `)` ends it).
fn parse_stat(pid: i32, text: &str) -> Option<Proc> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state); start time is field 22.
    Some(Proc {
        pid,
        zombie: matches!(*f.first()?, "Z" | "X"),
        ppid: f.get(1)?.parse().ok()?,
        pgid: f.get(2)?.parse().ok()?,
        sid: f.get(3)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn has_marker(pid: i32, needle: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|entry| entry == needle))
}

/// SIGKILL through a pidfd checked against the start time (so a reused pid is never hit);
/// a plain `kill` after the same check where pidfds are missing (Linux before 5.3).
fn kill_verified(p: &Proc) {
    signal_verified(p, Signal::KILL);
}

/// Sends `signal` to `p` if it is still that process (pid and start time).
fn signal_verified(p: &Proc, signal: Signal) {
    let Some(pid) = Pid::from_raw(p.pid) else {
        return;
    };
    let same = || read_stat(p.pid).is_some_and(|q| q.start == p.start);
    match pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => {
            if same() {
                let _ = pidfd_send_signal(&fd, signal);
            }
        }
        Err(Errno::SRCH) => {}
        Err(_) => {
            if same() {
                let _ = kill_process(pid, signal);
            }
        }
    }
}

/// Reaps the zombie `p`, an adopted member, if it is still that process. Returns whether
/// it is gone. The registry lock keeps two runs from reaping the same pid.
fn reap(p: &Proc) -> bool {
    let Some(pid) = Pid::from_raw(p.pid) else {
        return true;
    };
    let _reg = registry();
    match read_stat(p.pid) {
        Some(q) if q.start == p.start && q.zombie => {
            !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None))
        }
        Some(q) if q.start == p.start => false,
        // Gone, or the pid is another process now.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, pgid: i32, sid: i32) -> Proc {
        Proc {
            pid,
            ppid,
            pgid,
            sid,
            start: u64::try_from(pid).unwrap_or(0) * 10,
            zombie: false,
        }
    }

    #[test]
    fn stat_lines_parse_with_odd_command_names() {
        let line = "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 1 18446744073709551615";
        let q = parse_stat(4242, line).unwrap();
        assert_eq!((q.ppid, q.pgid, q.sid, q.start), (1, 4242, 4242, 987654));
        assert!(!q.zombie);
        let z = "7 (sh) Z 100 7 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0";
        assert!(parse_stat(7, z).unwrap().zombie);
        assert!(parse_stat(7, "7 (sh) S 1").is_none());
    }

    #[test]
    fn attribution_follows_ancestry_ids_and_markers_but_not_strangers() {
        // The runtime 100 (group 90, session 80) runs hook A (main 200) and hook B (main
        // 300), and a tool process 400 in its own group.
        let own = p(100, 1, 90, 80);
        let procs = vec![
            own,
            p(200, 100, 200, 80),  // A's main
            p(201, 200, 200, 80),  // A's child: ancestry and group
            p(210, 100, 210, 210), // `setsid -f` orphan of A: own session, adopted
            p(211, 210, 210, 210), // its child: same session
            p(220, 100, 200, 80),  // double-forked orphan still in A's group
            p(300, 100, 300, 80),  // B's main
            p(301, 100, 301, 301), // B's setsid orphan, marked for B
            p(400, 100, 400, 80),  // a tool's process
            p(401, 400, 400, 80),
            p(500, 1, 500, 500), // not in the runtime's subtree at all
        ];
        let main = Some(procs[1].id());
        let mut keys = BTreeSet::from([200]);
        let others = BTreeSet::from([procs[6].id()]);
        let marked = |pid: i32| pid == 210;
        let found = attribute(
            &procs,
            own,
            main,
            &BTreeSet::new(),
            &mut keys,
            &others,
            &marked,
        );
        let mut pids: Vec<i32> = found.iter().map(|p| p.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, [200, 201, 210, 211, 220]);
        assert!(keys.contains(&210) && !keys.contains(&80) && !keys.contains(&90));
    }

    #[test]
    fn a_reused_id_names_no_one() {
        // The run once saw session 210; pid 210 is now a stranger (another start time) in
        // its own session, with a child.
        let own = p(100, 1, 90, 80);
        let mut stranger = p(210, 100, 210, 210);
        stranger.start = 1;
        let procs = vec![own, stranger, p(211, 210, 210, 210)];
        let mut keys = BTreeSet::from([210]);
        let found = attribute(
            &procs,
            own,
            None,
            &BTreeSet::from([ProcId {
                pid: 210,
                start: 2100,
            }]),
            &mut keys,
            &BTreeSet::new(),
            &|_| false,
        );
        assert!(found.is_empty(), "{found:?}");
    }
}
