//! The in-process wasmtime runner of the agent runtime: guest tools compiled to
//! `wasm32-wasip1` run as commands inside this process, each confined to one workspace
//! directory and bounded in time, memory, output and open files.
//!
//! A process makes one [`Runtime`]: one wasmtime engine, a thread ticking its epoch, the WASI
//! preview 1 imports, and the caches of modules. [`Runtime::prepare`] turns a module's bytes
//! (whose sha256 the caller verified against a signed manifest) into a [`PreparedModule`]:
//! compiled once, kept on disk under a key that includes the engine's compatibility hash, and
//! linked once (an `InstancePre`), so a command only instantiates, in tens of microseconds.
//! [`Runtime::run`] runs one `Command(argv)`: the guest sees `argv` and `env` as given (nothing
//! of the host's), the workspace at its mount (`/` by default, or its own host path:
//! [`CommandInput::with_mount`], [`host_mount`]) and no other host path, `PWD` as its working
//! directory, and
//! the stdin/stdout/stderr of the [`CommandInput`]. A guest that fails, traps or exceeds a limit
//! still gives a [`CommandOutput`]: its exit status says what happened (a limit has its own,
//! [`EXIT_WALL_TIME`] and the other `EXIT_*` constants); [`RunError`] is for host-side failures.
//!
//! Core concepts:
//! - [`Runtime`] / [`RuntimeConfig`]: the engine, its allocator ([`InstanceAllocator`]), the
//!   cache directory, the epoch tick.
//! - [`PreparedModule`]: a module ready to run; [`CacheState`] says whether it was compiled,
//!   loaded from the disk cache or found in memory.
//! - [`CommandInput`] / [`CommandOutput`] / [`CommandMeta`]: one run.
//! - [`Limits`] and [`LimitKind`]: wall time, fuel, memory, tables, open files; output caps are
//!   [`Output::Capture`] limits.
//! - [`Input`] / [`Output`]: the stdio, including the reader and writer seams that pipelines
//!   (the [`shell`] module) connect.
//! - [`NetGrant`] / [`NetLimits`] / [`NetAudit`]: network access for a command through the
//!   `agent_net` host import (the [`net`] module), off unless granted.
//!
//! `docs/wasi.md` describes the model, the limits and their exit statuses, and the measured
//! costs.
//!
//! # Example
//!
//! Run a module that writes `hi` to stdout (any `wasm32-wasip1` binary works the same way):
//!
//! ```
//! use agent_wasi::{CommandInput, Runtime, RuntimeConfig};
//! use sha2::{Digest, Sha256};
//!
//! let wasm = wat::parse_str(
//!     r#"(module
//!       (import "wasi_snapshot_preview1" "fd_write"
//!         (func $fd_write (param i32 i32 i32 i32) (result i32)))
//!       (memory (export "memory") 1)
//!       (data (i32.const 16) "hi\n")
//!       (func (export "_start")
//!         (i32.store (i32.const 0) (i32.const 16))  ;; iovec.buf
//!         (i32.store (i32.const 4) (i32.const 3))   ;; iovec.len
//!         (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
//! )?;
//! // In the agent the digest comes from the bundle's signed manifest.
//! let sha256: String = Sha256::digest(&wasm).iter().map(|b| format!("{b:02x}")).collect();
//!
//! let runtime = Runtime::new(RuntimeConfig::default())?;
//! let module = runtime.prepare(&wasm, &sha256)?;
//! let workspace = tempfile::tempdir()?;
//! let output = runtime.run(&module, CommandInput::new(["hi"]), workspace.path())?;
//! assert_eq!(output.exit_code, 0);
//! assert_eq!(output.stdout, b"hi\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ancestors;
mod cache;
mod cancel;
mod command;
mod error;
mod exit;
mod limits;
pub mod net;
mod open;
mod poll;
mod runtime;
pub mod shell;
mod stdio;
mod store;
pub mod toolbox;

pub use cancel::EXIT_CANCELLED;
pub use command::{CommandInput, CommandMeta, CommandOutput, WORKSPACE_GUEST_PATH, host_mount};
pub use error::{BoxError, PrepareError, RunError, RuntimeError};
pub use limits::{
    DEFAULT_MEMORY_BYTES, DEFAULT_OPEN_FILES, DEFAULT_OUTPUT_LIMIT, DEFAULT_TABLE_ELEMENTS,
    DEFAULT_WALL_TIME, EXIT_CPU, EXIT_MEMORY, EXIT_OPEN_FILES, EXIT_OUTPUT, EXIT_TRAP,
    EXIT_WALL_TIME, LimitKind, Limits,
};
pub use net::{NetAudit, NetGrant, NetLimits};
pub use runtime::{CacheState, InstanceAllocator, PreparedModule, Runtime, RuntimeConfig};
pub use stdio::{Input, Output};
