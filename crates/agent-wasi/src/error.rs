//! Host-side errors. A guest's failure is never one of these: it is an exit status in
//! [`crate::CommandOutput`].

use std::error::Error as StdError;
use std::path::PathBuf;

/// A wasmtime error as a standard error (wasmtime 48's `Error` does not implement
/// [`std::error::Error`] itself).
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

pub(crate) fn boxed(err: wasmtime::Error) -> BoxError {
    err.into_boxed_dyn_error()
}

/// Why a [`crate::Runtime`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// Occurs when wasmtime rejects the engine configuration (for example a pooling allocator
    /// too large for the address space).
    #[error(
        "cannot configure the wasmtime engine: {source}; try a smaller RuntimeConfig::max_instances or InstanceAllocator::OnDemand"
    )]
    Engine {
        /// wasmtime's error.
        source: BoxError,
    },
    /// Occurs when the cache directory cannot be created or inspected.
    #[error(
        "cannot use {path} as the module cache directory: {source}; pass a writable directory in RuntimeConfig::cache_dir, or None to compile in memory only"
    )]
    CacheDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Occurs when the cache directory is writable by group or others, who could then plant
    /// machine code this process would run.
    #[error(
        "the module cache directory {path} is writable by other users (mode {mode:03o}); run `chmod 700` on it or choose a private directory"
    )]
    CacheDirShared {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Occurs when the epoch ticker thread cannot be started.
    #[error("cannot start the epoch ticker thread: {source}; the process may be out of threads")]
    Ticker {
        /// The I/O error from spawning the thread.
        source: std::io::Error,
    },
    /// Occurs when the WASI imports cannot be added to the linker (a wasmtime-wasi bug).
    #[error("cannot set up the WASI preview 1 imports: {source}")]
    Linker {
        /// wasmtime's error.
        source: BoxError,
    },
}

/// Why a module could not be prepared ([`crate::Runtime::prepare`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// Occurs when the expected digest is not 64 hexadecimal digits.
    #[error(
        "expected a sha256 digest as 64 hexadecimal digits, got {given:?}; pass the digest from the bundle manifest"
    )]
    BadDigest {
        /// What was given.
        given: String,
    },
    /// Occurs when the module's bytes do not hash to the expected digest: the bytes are not the
    /// module the caller verified.
    #[error(
        "the module's bytes hash to sha256 {actual}, not the expected {expected}; the file changed since it was verified, reload it from its bundle"
    )]
    DigestMismatch {
        /// The digest the caller gave.
        expected: String,
        /// The digest of the bytes.
        actual: String,
    },
    /// Occurs when the module file cannot be read ([`crate::Runtime::prepare_file`]).
    #[error("cannot read the module {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Occurs when wasmtime cannot compile the module (not WebAssembly, or a feature this engine
    /// does not enable).
    #[error("cannot compile module {sha256}: {source}; check that it is a wasm32-wasip1 module")]
    Compile {
        /// The module's digest.
        sha256: String,
        /// wasmtime's error.
        source: BoxError,
    },
    /// Occurs when the module is not a WASI command: it has no `_start` function of type
    /// `() -> ()`.
    #[error(
        "module {sha256} is not a WASI command (no `_start: func() -> ()` export); build it as a binary for wasm32-wasip1, not a library or reactor"
    )]
    NotACommand {
        /// The module's digest.
        sha256: String,
    },
    /// Occurs when the module imports something the runner does not provide (anything beyond
    /// WASI preview 1 and `agent_net`, such as preview 2 sockets or an unknown host module).
    #[error(
        "module {sha256} imports something agent-wasi does not provide: {source}; guests may only import wasi_snapshot_preview1 and agent_net"
    )]
    Link {
        /// The module's digest.
        sha256: String,
        /// wasmtime's error naming the import.
        source: BoxError,
    },
}

/// Why a command could not be run ([`crate::Runtime::run`]). Host-side failures only: a guest
/// that fails, traps or exceeds a limit gives a [`crate::CommandOutput`] with an exit status.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// Occurs when [`crate::CommandInput`] is malformed.
    #[error("invalid command input: {problem}")]
    InvalidInput {
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// Occurs when the workspace directory cannot be opened for preopening.
    #[error("cannot open the workspace {path} for the guest: {source}; pass an existing directory")]
    Workspace {
        /// The directory.
        path: PathBuf,
        /// wasmtime-wasi's error.
        source: BoxError,
    },
    /// Occurs when [`crate::Limits::fuel`] is set but the runtime was built without
    /// [`crate::RuntimeConfig::consume_fuel`].
    #[error(
        "Limits::fuel is set but this runtime does not meter fuel; build it with RuntimeConfig::consume_fuel = true, or leave Limits::fuel as None and rely on the wall-time limit"
    )]
    FuelDisabled,
    /// Occurs when every instance slot of the pooling allocator is in use.
    #[error(
        "all {max_instances} instance slots of the pooling allocator are in use; wait for running commands to end, or raise RuntimeConfig::max_instances"
    )]
    Busy {
        /// [`crate::RuntimeConfig::max_instances`].
        max_instances: u32,
    },
    /// Occurs when instantiating the module fails for a host-side reason (resources of the
    /// allocator, for instance).
    #[error("cannot instantiate module {sha256}: {source}")]
    Instantiate {
        /// The module's digest.
        sha256: String,
        /// wasmtime's error.
        source: BoxError,
    },
}
