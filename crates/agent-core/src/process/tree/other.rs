//! [`ProcessTree`] where there is no subreaper or `/proc`: the run's process group, killed on
//! timeout.

use std::convert::Infallible;

/// The hook's process group, killed on timeout.
#[derive(Debug, Default)]
pub struct ProcessTree {
    pgid: Option<u32>,
}

impl ProcessTree {
    pub fn begin() -> Self {
        Self::default()
    }

    pub fn marker(&self) -> Option<(&'static str, String)> {
        None
    }

    pub fn started(&mut self, pid: Option<u32>) {
        self.pgid = pid;
    }

    pub async fn watch(&self) -> Infallible {
        std::future::pending().await
    }

    pub async fn end(&mut self, timed_out: bool) {
        if timed_out {
            kill_group(self.pgid);
        }
    }

    /// Nothing to learn here: only the process group is known.
    pub fn scan_now(&self) {}

    /// Kills the run's process group (for a blocking caller, once the run is over).
    pub fn end_blocking(&mut self) {
        kill_group(self.pgid);
    }

    /// Sends SIGTERM to the run's process group, without waiting.
    pub fn terminate(&self) {
        signal_group(self.pgid, false);
    }

    /// Whether the run's process group still has a process.
    pub fn any_running(&self) -> bool {
        group_exists(self.pgid)
    }

    /// [`Self::terminate`], up to `grace` for the group to go, then SIGKILL.
    pub async fn end_gracefully(&mut self, grace: std::time::Duration) {
        self.terminate();
        let deadline = std::time::Instant::now() + grace;
        while self.any_running() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        kill_group(self.pgid);
    }

    /// [`Self::end_gracefully`] for a blocking caller.
    pub fn end_gracefully_blocking(&mut self, grace: std::time::Duration) {
        self.terminate();
        let deadline = std::time::Instant::now() + grace;
        while self.any_running() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        kill_group(self.pgid);
    }
}

#[cfg(unix)]
fn signal_group(pgid: Option<u32>, kill: bool) {
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(pid) = pgid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(Pid::from_raw)
    {
        let signal = if kill { Signal::KILL } else { Signal::TERM };
        // The group may already be gone; nothing else to do then.
        let _ = kill_process_group(pid, signal);
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: Option<u32>, _kill: bool) {}

#[cfg(unix)]
fn group_exists(pgid: Option<u32>) -> bool {
    use rustix::process::{Pid, test_kill_process_group};
    pgid.and_then(|p| i32::try_from(p).ok())
        .and_then(Pid::from_raw)
        .is_some_and(|pid| test_kill_process_group(pid).is_ok())
}

#[cfg(not(unix))]
fn group_exists(_pgid: Option<u32>) -> bool {
    false
}

fn kill_group(pgid: Option<u32>) {
    signal_group(pgid, true);
}
