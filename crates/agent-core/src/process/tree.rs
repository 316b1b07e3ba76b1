//! Process containment, the same for command hooks, host commands and MCP stdio servers: when
//! a run's main process has exited (and its output pipes have closed) or its time is up,
//! **every** process it started is killed, including those that left its process group or
//! session (`setsid`, `setsid -f`, a double fork), and the ones the runtime adopted are reaped.
//! (The text below says "hook" for any such run.)
//!
//! # Linux: child subreaper and a `/proc` scan
//!
//! A process group is not a container: `setsid` leaves it, and a double fork hands the
//! grandchild to init, out of reach. So, while any command hook runs, the runtime process is a
//! **child subreaper** (`prctl(PR_SET_CHILD_SUBREAPER)`): a descendant whose parent dies is
//! reparented to the runtime instead of init, and stays in the runtime's process subtree,
//! where a `/proc` scan finds it. The flag is set when the first hook starts and cleared when
//! the last one has been cleaned up (unless the embedder had set it already), so orphans of the
//! runtime's other children are adopted only while hooks run.
//!
//! Hooks of one event run concurrently, and the runtime has other children (tools, servers),
//! so each run tracks which processes are its own. A process of the runtime's subtree belongs
//! to a run when:
//! - it is the run's main process, or a process an earlier scan of this run attributed to it
//!   (pid and start time, so a reused pid never matches);
//! - its parent belongs to the run (ancestry, while the chain is intact);
//! - its process group or session is one created inside the run (the main process's group,
//!   or the session of a member that called `setsid`). Such an id is a pid the kernel does not
//!   reuse while any process still carries it, so it cannot name a stranger's group; an id
//!   whose pid now belongs to a process outside the run is dropped all the same;
//! - its environment holds the run's marker, `AGENT_HOOK_RUN_ID=<uuid>`, which every command
//!   hook gets and its descendants inherit (read from `/proc/<pid>/environ`).
//!
//! The runtime's own process group and session never count, and another running hook's main
//! process and members are never attributed to this run. A scan reads the runtime's subtree
//! through the `children` files of `/proc/<pid>/task/<tid>/` (a few reads per descendant), or
//! all of `/proc` where the kernel lacks them. Scans run when the hook ends and, while it runs,
//! after 100 ms, 200 ms, 400 ms, ... (at most every second), so that a descendant that scrubs
//! its environment is still recognised by the ancestry it had when a scan saw it. The main process is not reaped until the cleanup is over (`waitid(WNOWAIT)`),
//! so its pid, which is the group's id, cannot be reused meanwhile.
//!
//! Cleanup repeats, for at most [`CLEANUP_BUDGET`]: scan, SIGKILL every live member (through
//! a pidfd opened and then checked against the start time, so a pid reused in between is never
//! signalled), reap every member that is a zombie child of the runtime (`waitpid` on that
//! pid only: the runtime's other children are left to their owners), until no member is left.
//!
//! Limit: a descendant that both removes the marker from its environment (`env -i`) and leaves
//! the session before any scan saw it attached is not recognised; it is reparented to the
//! runtime and runs on. A cgroup per hook would close this; see docs/hooks.md.
//!
//! # Other systems
//! The previous behaviour: only the process group is killed, and only on timeout.

/// The environment variable that marks a hook's processes.
#[cfg(target_os = "linux")]
pub(crate) const MARKER_VAR: &str = "AGENT_HOOK_RUN_ID";

/// How long the cleanup after a hook keeps killing and reaping before it gives up (with a
/// warning): processes stuck in uninterruptible sleep die only when they wake.
#[cfg(target_os = "linux")]
pub const CLEANUP_BUDGET: std::time::Duration = std::time::Duration::from_secs(3);

/// The processes of one command hook run.
#[cfg(target_os = "linux")]
pub use linux::ProcessTree;
#[cfg(not(target_os = "linux"))]
pub use other::ProcessTree;

#[cfg(not(target_os = "linux"))]
mod other;

#[cfg(target_os = "linux")]
mod linux;
