//! The limits of one command, the exit statuses that report them, and the store-side enforcement
//! of memory and table growth.
//!
//! Every limit ends the guest the same way: the guest is stopped (a trap raised by the host), the
//! command's exit code is the limit's own status below, [`crate::CommandMeta::limit_hit`] names
//! the limit, and a one-line message starting with `agent-wasi:` is appended to stderr. The
//! statuses differ from each other and follow shell conventions, but a guest may exit with any
//! status from 0 to 255 (GNU `timeout` itself returns 124), so the exit code alone does not prove
//! the host stopped the guest: [`crate::CommandMeta::limit_hit`] and
//! [`crate::CommandMeta::trap`] do.

use std::fmt;
use std::time::Duration;

use wasmtime::ResourceLimiter;

/// Exit status of a command stopped by its wall-time limit ([`Limits::wall_time`]), like GNU
/// `timeout`.
pub const EXIT_WALL_TIME: i32 = 124;

/// Exit status of a command that trapped (`unreachable`, an out-of-bounds access, a stack
/// overflow, a division by zero, a `proc_exit` status above 255…), like a process that called
/// `abort` (128 + SIGABRT). The trap message is appended to stderr.
pub const EXIT_TRAP: i32 = 134;

/// Exit status of a command stopped by its memory limit ([`Limits::memory_bytes`] for linear
/// memory, [`Limits::table_elements`] for tables), like a process killed by the OOM killer
/// (128 + SIGKILL).
pub const EXIT_MEMORY: i32 = 137;

/// Exit status of a command that ran out of fuel ([`Limits::fuel`]), like a process over its CPU
/// rlimit (128 + SIGXCPU).
pub const EXIT_CPU: i32 = 152;

/// Exit status of a command stopped because it wrote more than its stdout or stderr capture limit
/// ([`crate::Output::Capture`]), like a process over its file-size rlimit (128 + SIGXFSZ).
pub const EXIT_OUTPUT: i32 = 153;

/// Exit status of a command stopped because it held more WASI handles than
/// [`Limits::open_files`] allows. No signal matches this one; 154 is the next free status.
pub const EXIT_OPEN_FILES: i32 = 154;

/// Default [`Limits::wall_time`]: two minutes, the default timeout of Claude Code's Bash tool.
pub const DEFAULT_WALL_TIME: Duration = Duration::from_secs(120);

/// Default [`Limits::memory_bytes`]: 512 MiB of linear memory, enough for `sort` of a large file
/// and far below what a 2-core, 24 GiB machine can hold for a few concurrent commands.
pub const DEFAULT_MEMORY_BYTES: usize = 512 << 20;

/// Default [`Limits::table_elements`]: 100 000 elements per table. A 10 MB coreutils module
/// needs a few thousand; each element costs the host a pointer.
pub const DEFAULT_TABLE_ELEMENTS: usize = 100_000;

/// Default [`Limits::open_files`]: 256 handles, a quarter of Linux's usual soft `RLIMIT_NOFILE`.
pub const DEFAULT_OPEN_FILES: u32 = 256;

/// Default capture limit of [`crate::Output::capture`]: 1 MiB per stream.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;

/// WASI handles a command holds before it opens anything: stdin, stdout, stderr and the preopened
/// workspace. They do not count against [`Limits::open_files`].
pub(crate) const BASE_HANDLES: usize = 4;

/// The limits of one command. Output limits are not here: they belong to each captured stream
/// ([`crate::Output::Capture`]).
///
/// Defaults ([`Limits::default`]): wall time [`DEFAULT_WALL_TIME`], no fuel limit, linear memory
/// [`DEFAULT_MEMORY_BYTES`], tables [`DEFAULT_TABLE_ELEMENTS`], open files
/// [`DEFAULT_OPEN_FILES`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Wall-clock time from the start of [`crate::Runtime::run`] until the guest is stopped with
    /// [`EXIT_WALL_TIME`]. Enforced by epoch interruption while the guest runs wasm code (checked
    /// on every tick of [`crate::RuntimeConfig::epoch_tick`], so the guest stops within one tick
    /// after the limit) and while it sleeps in `poll_oneoff` (the sleep is cut at the limit).
    /// A host-supplied [`crate::Input::Reader`] or [`crate::Output::Writer`] that blocks is
    /// outside the guest's control and is not interrupted; see [`crate::Output::Writer`].
    pub wall_time: Duration,
    /// Fuel (roughly one unit per wasm instruction) after which the guest is stopped with
    /// [`EXIT_CPU`]; `None` for no fuel limit. Only honoured when the runtime was built with
    /// [`crate::RuntimeConfig::consume_fuel`]; otherwise [`crate::Runtime::run`] refuses a
    /// `Some` with [`crate::RunError::FuelDisabled`]. Use it for deterministic CPU budgets;
    /// `wall_time` is the default CPU bound.
    pub fuel: Option<u64>,
    /// Largest linear memory, in bytes, the guest may have (rounded down to 64 KiB pages). A
    /// `memory.grow` beyond it stops the guest with [`EXIT_MEMORY`] instead of returning -1, so the
    /// limit is reported instead of surfacing as an allocation-failure abort. Must not exceed
    /// [`crate::RuntimeConfig::max_memory_bytes`].
    pub memory_bytes: usize,
    /// Largest number of elements of any table. Growing beyond it stops the guest with
    /// [`EXIT_MEMORY`]. Must not exceed [`crate::RuntimeConfig::max_table_elements`].
    pub table_elements: usize,
    /// Most WASI handles the guest may hold at once, besides stdin, stdout, stderr and the
    /// workspace: open files and directories, plus the short-lived handles `fd_readdir` and
    /// `poll_oneoff` use. One more stops the guest with [`EXIT_OPEN_FILES`] (the guest does not
    /// get `EMFILE`: wasmtime-wasi 48 reports a full handle table as a trap). Each open handle of
    /// the guest is at most one open host file descriptor, so this also bounds the host's.
    pub open_files: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            wall_time: DEFAULT_WALL_TIME,
            fuel: None,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            table_elements: DEFAULT_TABLE_ELEMENTS,
            open_files: DEFAULT_OPEN_FILES,
        }
    }
}

impl Limits {
    /// Sets [`Limits::wall_time`].
    #[must_use]
    pub fn with_wall_time(mut self, wall_time: Duration) -> Self {
        self.wall_time = wall_time;
        self
    }

    /// Sets [`Limits::fuel`].
    #[must_use]
    pub fn with_fuel(mut self, fuel: Option<u64>) -> Self {
        self.fuel = fuel;
        self
    }

    /// Sets [`Limits::memory_bytes`].
    #[must_use]
    pub fn with_memory_bytes(mut self, memory_bytes: usize) -> Self {
        self.memory_bytes = memory_bytes;
        self
    }

    /// Sets [`Limits::table_elements`].
    #[must_use]
    pub fn with_table_elements(mut self, table_elements: usize) -> Self {
        self.table_elements = table_elements;
        self
    }

    /// Sets [`Limits::open_files`].
    #[must_use]
    pub fn with_open_files(mut self, open_files: u32) -> Self {
        self.open_files = open_files;
        self
    }
}

/// Which limit stopped a command ([`crate::CommandMeta::limit_hit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitKind {
    /// [`Limits::wall_time`]; exit status [`EXIT_WALL_TIME`].
    WallTime,
    /// [`Limits::fuel`]; exit status [`EXIT_CPU`].
    Fuel,
    /// [`Limits::memory_bytes`]; exit status [`EXIT_MEMORY`].
    Memory,
    /// [`Limits::table_elements`]; exit status [`EXIT_MEMORY`].
    TableElements,
    /// The stdout capture limit ([`crate::Output::Capture`]); exit status [`EXIT_OUTPUT`].
    Stdout,
    /// The stderr capture limit ([`crate::Output::Capture`]); exit status [`EXIT_OUTPUT`].
    Stderr,
    /// [`Limits::open_files`]; exit status [`EXIT_OPEN_FILES`].
    OpenFiles,
}

impl LimitKind {
    /// The exit status a command stopped by this limit gets.
    pub const fn exit_code(self) -> i32 {
        match self {
            Self::WallTime => EXIT_WALL_TIME,
            Self::Fuel => EXIT_CPU,
            Self::Memory | Self::TableElements => EXIT_MEMORY,
            Self::Stdout | Self::Stderr => EXIT_OUTPUT,
            Self::OpenFiles => EXIT_OPEN_FILES,
        }
    }

    /// A short name for logs and messages: `wall-time`, `fuel`, `memory`, `table-elements`,
    /// `stdout`, `stderr`, `open-files`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::WallTime => "wall-time",
            Self::Fuel => "fuel",
            Self::Memory => "memory",
            Self::TableElements => "table-elements",
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
            Self::OpenFiles => "open-files",
        }
    }
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error a host-side check raises to stop the guest when a limit is exceeded. It travels
/// through wasmtime as the trap's payload and is recognised again when the call returns.
#[derive(Debug)]
pub(crate) struct LimitExceeded {
    pub(crate) kind: LimitKind,
    /// The line appended to stderr (without the `agent-wasi: ` prefix and the newline).
    pub(crate) message: String,
}

impl LimitExceeded {
    pub(crate) fn wall_time(limit: Duration) -> Self {
        Self {
            kind: LimitKind::WallTime,
            message: format!(
                "wall-time limit of {} ms exceeded; the command was stopped (raise Limits::wall_time if it needs longer)",
                limit.as_millis()
            ),
        }
    }

    pub(crate) fn fuel(limit: u64) -> Self {
        Self {
            kind: LimitKind::Fuel,
            message: format!(
                "fuel limit of {limit} units exceeded; the command was stopped (raise Limits::fuel if it needs more CPU)"
            ),
        }
    }

    pub(crate) fn output(kind: LimitKind, limit: usize) -> Self {
        Self {
            kind,
            message: format!(
                "{kind} exceeded its capture limit of {limit} bytes; the output was truncated and the command stopped (narrow the command's output or raise the Output::Capture limit)"
            ),
        }
    }

    pub(crate) fn open_files(limit: u32) -> Self {
        Self {
            kind: LimitKind::OpenFiles,
            message: format!(
                "open-files limit of {limit} handles exceeded; the command was stopped (close files it no longer needs or raise Limits::open_files)"
            ),
        }
    }
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LimitExceeded {}

/// Store-side enforcement of [`Limits::memory_bytes`] and [`Limits::table_elements`]: a growth
/// beyond the limit raises [`LimitExceeded`] (a trap) instead of failing quietly, and the peak
/// linear-memory size is kept for [`crate::CommandMeta::peak_memory_bytes`].
#[derive(Debug)]
pub(crate) struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    pub(crate) peak_memory: usize,
}

impl Limiter {
    pub(crate) fn new(limits: &Limits) -> Self {
        Self {
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            peak_memory: 0,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            return Err(wasmtime::Error::new(LimitExceeded {
                kind: LimitKind::Memory,
                message: format!(
                    "memory limit of {} bytes exceeded: the guest asked to grow its linear memory from {current} to {desired} bytes; the command was stopped (raise Limits::memory_bytes if it needs more)",
                    self.memory_bytes
                ),
            }));
        }
        self.peak_memory = self.peak_memory.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.table_elements {
            return Err(wasmtime::Error::new(LimitExceeded {
                kind: LimitKind::TableElements,
                message: format!(
                    "table limit of {} elements exceeded: the guest asked to grow a table from {current} to {desired} elements; the command was stopped (raise Limits::table_elements if it needs more)",
                    self.table_elements
                ),
            }));
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        // One command is one core module instance.
        1
    }
}
