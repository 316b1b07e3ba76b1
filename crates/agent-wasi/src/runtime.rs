//! The [`Runtime`]: one wasmtime engine with its epoch ticker, the WASI linker, and the caches of
//! prepared modules (in memory and on disk).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, InstancePre, Linker, Module,
    PoolingAllocationConfig,
};

use crate::cache::{DiskCache, Lookup};
use crate::error::{PrepareError, RuntimeError, boxed};
use crate::store::StoreState;
use crate::{exit, net, open, poll};

/// How a [`Runtime`] allocates the memories, tables and instance state of commands.
///
/// Chosen by measurement, on this project's 2-core machine with the runner bench
/// (`benches/runner.rs`: a trivial echo module, warm caches, one whole [`Runtime::run`], median
/// of criterion's samples): **pooling 16 µs, on-demand 36 µs** per command, against 1.07 ms for
/// spawning native `/bin/echo` in the same run (32 and 76 µs against 1.8 ms in a run with other
/// builds competing for the cores: the ratio holds). Pooling pays with a
/// virtual-memory reservation made when the runtime is built (about 258 GiB of address space with
/// the defaults, 2 MB more resident, 0.5 ms instead of 0.1 ms for [`Runtime::new`]) and a fixed
/// number of slots, [`RuntimeConfig::max_instances`]. It is the default; prefer
/// [`InstanceAllocator::OnDemand`] where address space is limited (`ulimit -v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstanceAllocator {
    /// wasmtime's pooling allocator with [`RuntimeConfig::max_instances`] slots, each able to hold
    /// a memory of [`RuntimeConfig::max_memory_bytes`] and a table of
    /// [`RuntimeConfig::max_table_elements`]. A command that finds every slot taken fails with
    /// [`crate::RunError::Busy`].
    #[default]
    Pooling,
    /// Allocate each command's memory with `mmap` when it starts and free it when it ends. No
    /// slot limit; about twice the per-command cost of pooling.
    OnDemand,
}

/// Configuration of a [`Runtime`].
///
/// Defaults ([`RuntimeConfig::default`]): no disk cache (modules are compiled in memory once per
/// runtime), the pooling allocator with 64 instance slots, at most 4 GiB of linear memory and
/// 1 Mi table elements per command, a 10 ms epoch tick, no fuel metering.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeConfig {
    /// Directory for compiled modules, created with mode 0700 if missing; refused if another
    /// user owns it or group or others may write to it, and each file in it is read only if
    /// this user owns it and no one else may write it (otherwise it is recompiled and
    /// rewritten). `None` (the default) compiles every module once per runtime.
    pub cache_dir: Option<PathBuf>,
    /// The instance allocator; [`InstanceAllocator::Pooling`] by default.
    pub allocator: InstanceAllocator,
    /// Most commands that may run at once with the pooling allocator (each pipeline stage is
    /// one); 64 by default. Ignored by [`InstanceAllocator::OnDemand`].
    pub max_instances: u32,
    /// Largest [`crate::Limits::memory_bytes`] a command may ask for: the size of a pooling slot's
    /// memory reservation (virtual address space, not resident memory). 4 GiB, all a wasm32
    /// memory can address, by default.
    pub max_memory_bytes: usize,
    /// Largest [`crate::Limits::table_elements`] a command may ask for; 1 Mi (1 048 576) by
    /// default.
    pub max_table_elements: usize,
    /// How often the epoch ticker thread advances the engine's epoch: the resolution of the
    /// wall-time limit (a guest in a loop stops within one tick after its limit). 10 ms by
    /// default; a shorter tick than 1 ms is raised to 1 ms.
    pub epoch_tick: Duration,
    /// Meter fuel so [`crate::Limits::fuel`] can be used. Off by default: fuel instruments every
    /// compiled function (and so changes the cache key), and the wall-time limit already bounds
    /// CPU.
    pub consume_fuel: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            cache_dir: None,
            allocator: InstanceAllocator::Pooling,
            max_instances: 64,
            max_memory_bytes: 4 << 30,
            max_table_elements: 1 << 20,
            epoch_tick: Duration::from_millis(10),
            consume_fuel: false,
        }
    }
}

impl RuntimeConfig {
    /// Sets [`RuntimeConfig::cache_dir`].
    #[must_use]
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Sets [`RuntimeConfig::allocator`].
    #[must_use]
    pub fn with_allocator(mut self, allocator: InstanceAllocator) -> Self {
        self.allocator = allocator;
        self
    }

    /// Sets [`RuntimeConfig::max_instances`].
    #[must_use]
    pub fn with_max_instances(mut self, max_instances: u32) -> Self {
        self.max_instances = max_instances;
        self
    }

    /// Sets [`RuntimeConfig::epoch_tick`].
    #[must_use]
    pub fn with_epoch_tick(mut self, tick: Duration) -> Self {
        self.epoch_tick = tick;
        self
    }

    /// Sets [`RuntimeConfig::consume_fuel`].
    #[must_use]
    pub fn with_consume_fuel(mut self, consume_fuel: bool) -> Self {
        self.consume_fuel = consume_fuel;
        self
    }

    fn wasmtime_config(&self) -> Config {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.parallel_compilation(true);
        config.consume_fuel(self.consume_fuel);
        if self.allocator == InstanceAllocator::Pooling {
            let mut pool = PoolingAllocationConfig::new();
            pool.total_core_instances(self.max_instances)
                .total_memories(self.max_instances)
                .total_tables(self.max_instances)
                .max_memories_per_module(1)
                .max_tables_per_module(1)
                .max_memory_size(self.max_memory_bytes)
                .table_elements(self.max_table_elements)
                // Commands are core modules run synchronously: no components, no fiber stacks.
                .total_component_instances(0)
                .total_stacks(0);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        config
    }
}

/// Where a [`PreparedModule`] came from ([`PreparedModule::cache_state`],
/// [`crate::CommandMeta::cache`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheState {
    /// Compiled from the wasm bytes by this call (and written to the disk cache, if any).
    Compiled,
    /// Loaded from the disk cache by this call, without compiling.
    Disk,
    /// Already prepared in this runtime: nothing was compiled or loaded.
    Memory,
}

/// A module ready to run: compiled, linked against WASI preview 1 (an `InstancePre`), and known
/// by its sha256. Cheap to clone; share it between threads freely.
#[derive(Clone)]
pub struct PreparedModule {
    pub(crate) inner: Arc<PreparedInner>,
    cache: CacheState,
}

pub(crate) struct PreparedInner {
    pub(crate) sha256: String,
    pub(crate) pre: InstancePre<StoreState>,
}

impl PreparedModule {
    /// The module's sha256, as 64 lowercase hex digits.
    pub fn sha256(&self) -> &str {
        &self.inner.sha256
    }

    /// How this handle was obtained: compiled, loaded from disk, or found in memory.
    pub fn cache_state(&self) -> CacheState {
        self.cache
    }
}

impl std::fmt::Debug for PreparedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedModule")
            .field("sha256", &self.inner.sha256)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// The in-process runner: one wasmtime [`Engine`] (a process normally makes one `Runtime`), the
/// thread that ticks its epoch, the WASI preview 1 linker, and the caches of prepared modules.
/// `Send + Sync`: share it (by reference or in an `Arc`) between the threads that run commands.
/// Dropping it stops the ticker thread.
pub struct Runtime {
    pub(crate) engine: Engine,
    linker: Linker<StoreState>,
    disk: Option<DiskCache>,
    modules: Mutex<HashMap<String, Arc<PreparedInner>>>,
    pub(crate) config: RuntimeConfig,
    _ticker: EpochTicker,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Builds the engine, starts the epoch ticker and opens the cache directory.
    ///
    /// # Errors
    ///
    /// [`RuntimeError`] when wasmtime refuses the configuration, the cache directory cannot be
    /// created, is owned by another user or is writable by group or others, or the ticker
    /// thread cannot start.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let mut config = config;
        config.epoch_tick = config.epoch_tick.max(Duration::from_millis(1));
        let engine = Engine::new(&config.wasmtime_config())
            .map_err(|err| RuntimeError::Engine { source: boxed(err) })?;
        let disk = match &config.cache_dir {
            Some(dir) => Some(DiskCache::open(dir, &engine)?),
            None => None,
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |state: &mut StoreState| {
            &mut state.wasi
        })
        .and_then(|()| poll::shadow_poll_oneoff(&mut linker))
        .and_then(|()| exit::shadow_proc_exit(&mut linker))
        .and_then(|()| open::shadow_path_open(&mut linker))
        .and_then(|()| net::add_to_linker(&mut linker))
        .map_err(|err| RuntimeError::Linker { source: boxed(err) })?;
        let ticker = EpochTicker::start(engine.clone(), config.epoch_tick)
            .map_err(|source| RuntimeError::Ticker { source })?;
        Ok(Self {
            engine,
            linker,
            disk,
            modules: Mutex::new(HashMap::new()),
            config,
            _ticker: ticker,
        })
    }

    /// The configuration this runtime was built with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Prepares a module from its bytes: checks that they hash to `sha256_hex` (the digest the
    /// caller verified against a signed manifest), then returns the prepared module from memory,
    /// from the disk cache, or by compiling it (and caching it on disk), in that order of
    /// preference. [`PreparedModule::cache_state`] says which.
    ///
    /// # Errors
    ///
    /// [`PrepareError`] when the digest is malformed or does not match, or the module cannot be
    /// compiled, is not a WASI command, or imports something beyond WASI preview 1.
    pub fn prepare(&self, wasm: &[u8], sha256_hex: &str) -> Result<PreparedModule, PrepareError> {
        let expected = normalize_digest(sha256_hex)?;
        let actual = agent_bundles::digest::sha256_hex(wasm);
        if actual != expected {
            return Err(PrepareError::DigestMismatch { expected, actual });
        }
        if let Some(module) = self.prepare_cached(&expected)? {
            return Ok(module);
        }
        let module = self.compile(wasm, &expected)?;
        self.keep(module, expected, CacheState::Compiled)
    }

    /// The module whose wasm hashes to `sha256_hex`, prepared from this runtime's memory or
    /// from its disk cache, without the wasm bytes; `None` when neither holds it (then
    /// [`Runtime::prepare`] with the bytes). Only code that [`Runtime::prepare`] compiled from
    /// bytes that hashed to a digest is ever cached under that digest, so a caller that has
    /// the digest from a verified, signed manifest can skip reading and hashing the module
    /// (8 MB for core-utils) when its compiled code is at hand: what a new `agent shell`
    /// process does.
    ///
    /// # Errors
    ///
    /// [`PrepareError`] when the digest is malformed, or the cached module is not a WASI command
    /// or imports something beyond WASI preview 1.
    pub fn prepare_cached(&self, sha256_hex: &str) -> Result<Option<PreparedModule>, PrepareError> {
        let expected = normalize_digest(sha256_hex)?;
        if let Some(module) = self.get(&expected) {
            return Ok(Some(module));
        }
        match self.load_cached(&expected) {
            Some(module) => self.keep(module, expected, CacheState::Disk).map(Some),
            None => Ok(None),
        }
    }

    /// Links a module and keeps it in memory under its digest.
    fn keep(
        &self,
        module: Module,
        sha256: String,
        cache: CacheState,
    ) -> Result<PreparedModule, PrepareError> {
        let inner = self.link(module, sha256)?;
        let inner = {
            let mut modules = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
            // Another thread may have prepared the same module meanwhile: keep the first.
            Arc::clone(
                modules
                    .entry(inner.sha256.clone())
                    .or_insert_with(|| Arc::new(inner)),
            )
        };
        Ok(PreparedModule { inner, cache })
    }

    /// [`Runtime::prepare`] on the contents of a file.
    ///
    /// # Errors
    ///
    /// [`PrepareError::Read`] when the file cannot be read, otherwise as [`Runtime::prepare`].
    pub fn prepare_file(
        &self,
        path: impl AsRef<Path>,
        sha256_hex: &str,
    ) -> Result<PreparedModule, PrepareError> {
        let path = path.as_ref();
        let wasm = std::fs::read(path).map_err(|source| PrepareError::Read {
            path: path.to_owned(),
            source,
        })?;
        self.prepare(&wasm, sha256_hex)
    }

    /// The module already prepared in this runtime under `sha256_hex`, if any, without reading
    /// or hashing its bytes ([`CacheState::Memory`]).
    pub fn get(&self, sha256_hex: &str) -> Option<PreparedModule> {
        let key = sha256_hex.to_ascii_lowercase();
        let modules = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        modules.get(&key).map(|inner| PreparedModule {
            inner: Arc::clone(inner),
            cache: CacheState::Memory,
        })
    }

    /// The compiled module cached on disk under `sha256`, if there is one that passes the
    /// checks (a rejected file is removed, with a warning).
    fn load_cached(&self, sha256: &str) -> Option<Module> {
        let disk = self.disk.as_ref()?;
        match disk.lookup(sha256) {
            Lookup::Hit(file) => match deserialize_cached(&self.engine, file) {
                Ok(module) => return Some(module),
                Err(err) => tracing::warn!(
                    module = sha256,
                    "agent-wasi: cached compiled module refused by wasmtime ({err}); recompiling"
                ),
            },
            Lookup::Rejected(reason) => tracing::warn!(
                module = sha256,
                "agent-wasi: cached compiled module rejected ({reason}); recompiling"
            ),
            Lookup::Miss => {}
        }
        None
    }

    /// Compiles verified wasm bytes, and writes the result to the disk cache, if any.
    fn compile(&self, wasm: &[u8], sha256: &str) -> Result<Module, PrepareError> {
        let module = Module::new(&self.engine, wasm).map_err(|err| PrepareError::Compile {
            sha256: sha256.to_owned(),
            source: boxed(err),
        })?;
        if let Some(disk) = &self.disk {
            let written = module
                .serialize()
                .map_err(|err| err.to_string())
                .and_then(|payload| disk.store(sha256, &payload).map_err(|err| err.to_string()));
            if let Err(err) = written {
                // The cache only saves time: run on, compile again next time.
                tracing::warn!(
                    module = sha256,
                    "agent-wasi: cannot write the compiled module to the cache: {err}"
                );
            }
        }
        Ok(module)
    }

    fn link(&self, module: Module, sha256: String) -> Result<PreparedInner, PrepareError> {
        let is_command = module
            .get_export("_start")
            .and_then(|export| export.func().cloned())
            .is_some_and(|ty| ty.params().len() == 0 && ty.results().len() == 0);
        if !is_command {
            return Err(PrepareError::NotACommand { sha256 });
        }
        match self.linker.instantiate_pre(&module) {
            Ok(pre) => Ok(PreparedInner { sha256, pre }),
            Err(err) => Err(PrepareError::Link {
                sha256,
                source: boxed(err),
            }),
        }
    }
}

/// Maps a compiled module that [`DiskCache::lookup`] returned.
#[allow(
    unsafe_code,
    reason = "Module::deserialize_open_file is unsafe; this is the crate's one unsafe call, argued below"
)]
fn deserialize_cached(engine: &Engine, file: std::fs::File) -> wasmtime::Result<Module> {
    // SAFETY: `Module::deserialize_open_file` requires a file holding what `Module::serialize`
    // (or `Engine::precompile_module`) of a compatible engine wrote, unchanged for as long as
    // the module lives (it is mapped, and pages are read lazily); arbitrary bytes could be
    // arbitrary machine code. This file was written by `Runtime::compile` of a runtime with
    // the same configuration: its name carries the digest of this engine's
    // `precompile_compatibility_hash` (wasmtime version and every code-affecting setting), so a
    // different engine never looks it up, and wasmtime checks its own version and flags header
    // again. `DiskCache::lookup` read this very handle's contents and checked the checksum in
    // its trailer (over the module's sha256, the engine hash and the payload), so a corrupted,
    // truncated, or swapped file is removed and recompiled, never mapped. Only this user can
    // have written it: the cache directory must be owned by this user and not writable by group
    // or others (refused at startup otherwise), and the file itself was checked on this open
    // handle (a regular file, owned by this user, mode without group or other write;
    // otherwise it is removed and recompiled). Nothing changes a cache file in place (a new one
    // is written under a temporary name and renamed over it, a new inode; the mapped one keeps
    // its bytes), so the bytes mapped are the bytes checked. The checksum is not a secret-keyed
    // MAC, and someone who can write this user's files could change the file after the check,
    // but they could equally replace this program.
    unsafe { Module::deserialize_open_file(engine, file) }
}

/// Accepts 64 hex digits in either case and returns them in lowercase.
fn normalize_digest(given: &str) -> Result<String, PrepareError> {
    if given.len() == 64 && given.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        Ok(given.to_ascii_lowercase())
    } else {
        Err(PrepareError::BadDigest {
            given: given.to_owned(),
        })
    }
}

/// The thread that advances the engine's epoch every tick, so running guests see their epoch
/// deadline. Stopped and joined on drop.
struct EpochTicker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine, tick: Duration) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("agent-wasi-epoch".to_owned())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(tick) {
                    engine.increment_epoch();
                }
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        // Dropping the sender disconnects the channel, which ends the thread's loop.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    #[test]
    fn digests_are_normalized_and_checked() {
        assert_eq!(normalize_digest(&"AB".repeat(32)).unwrap(), "ab".repeat(32));
        assert!(matches!(
            normalize_digest("abc"),
            Err(PrepareError::BadDigest { .. })
        ));
        assert!(matches!(
            normalize_digest(&"g".repeat(64)),
            Err(PrepareError::BadDigest { .. })
        ));
    }

    /// Dropping the ticker stops its thread (the drop joins it, so a thread that kept running
    /// would hang this test).
    #[test]
    fn the_epoch_ticker_stops_when_dropped() {
        let ticker = EpochTicker::start(Engine::default(), Duration::from_millis(1)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        drop(ticker);
    }

    #[test]
    fn runtime_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Runtime>();
        check::<PreparedModule>();
    }
}
