//! Stopping a running command when its caller cancels it ([`crate::CommandInput::cancel`]):
//! a person pressed Ctrl-C in the agent, or the shell's script was cancelled.
//!
//! The flag is seen where a guest can be: running wasm code (the epoch callback looks at it
//! on every tick) and sleeping in `poll_oneoff` (a clock-only wait is slept by the host in
//! slices of [`CANCEL_POLL`]; see `poll.rs`). A guest blocked reading a pipe ends when the
//! command writing it does. The guest is then stopped like a limit stops it: a trap raised by
//! the host, exit status [`EXIT_CANCELLED`], and an `agent-wasi:` line on stderr.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Exit status of a command stopped because its caller cancelled it
/// ([`crate::CommandInput::cancel`]), as a shell reports a command ended by Ctrl-C
/// (128 + SIGINT).
pub const EXIT_CANCELLED: i32 = 130;

/// How often a sleeping guest looks at its cancellation flag: the longest a cancelled
/// command keeps sleeping.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(20);

/// The error that stops a cancelled guest.
#[derive(Debug)]
pub(crate) struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cancelled; the command was stopped")
    }
}

impl std::error::Error for Cancelled {}

/// Whether `flag` is present and set.
pub(crate) fn is_set(flag: Option<&AtomicBool>) -> bool {
    flag.is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Sleeps until `until`, or less when `flag` is set first; `true` when it was.
pub(crate) fn sleep_until(until: Instant, flag: Option<&AtomicBool>) -> bool {
    loop {
        if is_set(flag) {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(CANCEL_POLL));
    }
}
