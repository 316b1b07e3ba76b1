//! Processes the runtime starts on the host, and the one way they end: [`ProcessTree`]
//! contains a run (a command hook, a host command of the Bash tool, an MCP stdio server) so that
//! when it ends, or its time is up, every process it started ends with it, including those that
//! left its process group or session (`setsid`, a double fork) and the grandchildren a launcher
//! such as `npx` leaves behind. On Linux the runtime is a child subreaper while any run is
//! active, and a `/proc` scan attributes descendants to their run (see `process/tree.rs` for the
//! rules and the limit); elsewhere the run's process group is killed.
//!
//! ```no_run
//! use agent_core::process::ProcessTree;
//!
//! let mut tree = ProcessTree::begin();
//! let mut command = std::process::Command::new("sh");
//! command.args(["-c", "setsid sleep 100 & sleep 1"]);
//! if let Some((name, value)) = tree.marker() {
//!     command.env(name, value);
//! }
//! let mut child = command.spawn()?;
//! tree.started(Some(child.id()));
//! // ... wait for it without reaping it, scanning now and then (`tree.scan_now()`) ...
//! tree.end_blocking(); // the detached `sleep 100` is killed too
//! child.wait()?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod tree;

pub use tree::{CLEANUP_BUDGET, ProcessTree};
