//! `Command(argv)`: one run of a prepared module, with its stdio, environment and limits.

use std::path::{Component, Path};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use wasmtime::{PoolConcurrencyLimitError, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{FsPerms, I32Exit, ResourceTableError, WasiCtxBuilder, WasiView};

use crate::error::{RunError, boxed};
use crate::limits::{BASE_HANDLES, EXIT_TRAP, LimitExceeded, LimitKind, Limiter, Limits};
use crate::net::state::NetState;
use crate::net::{NetAudit, NetGrant};
use crate::poll::RunClock;
use crate::runtime::{CacheState, PreparedModule, Runtime};
use crate::stdio::{Input, InputSource, Output, OutputSink};
use crate::store::StoreState;

/// The guest path the workspace is preopened at unless [`CommandInput::with_mount`] says
/// otherwise: the guest's `/`.
pub const WORKSPACE_GUEST_PATH: &str = "/";

/// The guest path that makes a workspace look the same inside and outside: its canonical
/// (absolute, symlink-free) host path, as text. Mounted there ([`CommandInput::with_mount`],
/// [`crate::shell::ShellContext::with_mount`]), `pwd` in the guest prints the path the host's
/// tools use, and a path copied from a guest's output names the same file on the host.
///
/// # Errors
/// The I/O error of canonicalizing `workspace` (it does not exist, a component is not a
/// directory, a permission is missing), or [`std::io::ErrorKind::InvalidData`] when the path
/// is not UTF-8 (a guest path is text; mount such a workspace at `/` instead).
pub fn host_mount(workspace: &Path) -> std::io::Result<String> {
    let real = std::fs::canonicalize(workspace)?;
    let text = real.to_str().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "the workspace's real path {} is not UTF-8, so it cannot be a guest path; mount the workspace at \"/\" instead",
                real.display()
            ),
        )
    })?;
    // A canonical path is absolute and normalized; check anyway (a Windows verbatim prefix,
    // say, is no guest path).
    normalize_mount(text).map_err(|reason| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the workspace's real path {text:?} cannot be a guest path: {reason}"),
        )
    })
}

/// Checks that `mount` can be the guest path of a preopened directory: absolute, no `.` or `..`
/// segments, no NUL. Returns it without repeated or trailing slashes (`/` stays `/`).
pub(crate) fn normalize_mount(mount: &str) -> Result<String, String> {
    if !mount.starts_with('/') {
        return Err("it is not absolute".to_owned());
    }
    if mount.contains('\0') {
        return Err("it contains NUL".to_owned());
    }
    let mut out = String::new();
    for segment in mount.split('/') {
        match segment {
            "" => {}
            "." | ".." => return Err(format!("it has a `{segment}` segment")),
            name => {
                out.push('/');
                out.push_str(name);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// Whether the guest path `path` (absolute, as given) is `mount` or below it, lexically; `..`
/// segments are not allowed in `path`.
fn inside_mount(path: &str, mount: &str) -> bool {
    let path = Path::new(path);
    if path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return false;
    }
    path.starts_with(mount)
}

/// What to run: the input of `Command(argv)`.
///
/// [`CommandInput::new`] gives the defaults: the workspace mounted at `/`, cwd `/`, an empty
/// environment, no stdin, stdout and stderr captured up to 1 MiB each, [`Limits::default`], no
/// network.
#[derive(Debug)]
#[non_exhaustive]
pub struct CommandInput {
    /// The arguments, `argv[0]` included and passed as given: the guests are multicall binaries
    /// that choose the tool by `argv[0]` (`cat`, `ls`…). Must not be empty.
    pub argv: Vec<String>,
    /// The guest path the workspace directory is preopened at: [`WORKSPACE_GUEST_PATH`] (`/`)
    /// by default, or an absolute path such as the workspace's own host path ([`host_mount`]).
    /// The guest reaches nothing outside it.
    pub mount: String,
    /// The working directory, as a guest path: [`CommandInput::mount`] or a directory below
    /// it. WASI preview 1 has no working directory, so it reaches the guest as the `PWD`
    /// environment variable (replacing any `PWD` in `env`); the project's guests `chdir` to
    /// `$PWD` when they start.
    pub cwd: String,
    /// The guest's whole environment: nothing of the host's is inherited. Names must be
    /// non-empty and contain neither `=` nor NUL; values must not contain NUL.
    pub env: Vec<(String, String)>,
    /// Standard input.
    pub stdin: Input,
    /// Standard output.
    pub stdout: Output,
    /// Standard error. Limit and trap messages are appended here.
    pub stderr: Output,
    /// Time, memory, fuel and open-file limits.
    pub limits: Limits,
    /// Network access through the `agent_net` import ([`crate::net`]); `None` (the default):
    /// every request fails with [`crate::net::ERR_NOT_GRANTED`].
    pub net: Option<NetGrant>,
    /// The workspace is preopened read-only: the guest reads it, and every write fails
    /// (`EPERM`/`ENOTCAPABLE`, which guests print as "Operation not permitted" or
    /// "Permission denied"). Default `false`.
    pub read_only: bool,
    /// Set by the caller to stop the command (Ctrl-C): it is stopped within a few
    /// milliseconds, running or sleeping, with [`crate::EXIT_CANCELLED`]. Default none.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl CommandInput {
    /// A command with these arguments and the defaults above.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            mount: WORKSPACE_GUEST_PATH.to_owned(),
            cwd: WORKSPACE_GUEST_PATH.to_owned(),
            env: Vec::new(),
            stdin: Input::Null,
            stdout: Output::capture(),
            stderr: Output::capture(),
            limits: Limits::default(),
            net: None,
            read_only: false,
            cancel: None,
        }
    }

    /// Sets [`CommandInput::cancel`].
    #[must_use]
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Sets [`CommandInput::mount`], the guest path the workspace appears at, and the working
    /// directory to it (set [`CommandInput::cwd`] afterwards for another one).
    #[must_use]
    pub fn with_mount(mut self, mount: impl Into<String>) -> Self {
        self.mount = mount.into();
        self.cwd.clone_from(&self.mount);
        self
    }

    /// Sets [`CommandInput::cwd`].
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = cwd.into();
        self
    }

    /// Adds one variable to [`CommandInput::env`].
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Sets [`CommandInput::stdin`].
    #[must_use]
    pub fn with_stdin(mut self, stdin: Input) -> Self {
        self.stdin = stdin;
        self
    }

    /// Sets [`CommandInput::stdout`].
    #[must_use]
    pub fn with_stdout(mut self, stdout: Output) -> Self {
        self.stdout = stdout;
        self
    }

    /// Sets [`CommandInput::stderr`].
    #[must_use]
    pub fn with_stderr(mut self, stderr: Output) -> Self {
        self.stderr = stderr;
        self
    }

    /// Sets [`CommandInput::limits`].
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`CommandInput::net`]: the command may fetch what `grant` allows.
    #[must_use]
    pub fn with_net(mut self, grant: NetGrant) -> Self {
        self.net = Some(grant);
        self
    }

    /// Checks the input against the runtime; the mount, normalized.
    fn validate(&self, runtime: &Runtime) -> Result<String, RunError> {
        let problem = |problem: String| Err(RunError::InvalidInput { problem });
        if self.argv.is_empty() {
            return problem("argv is empty; argv[0] names the tool to run".to_owned());
        }
        if let Some(arg) = self.argv.iter().find(|arg| arg.contains('\0')) {
            return problem(format!("argument {arg:?} contains NUL"));
        }
        let mount = match normalize_mount(&self.mount) {
            Ok(mount) => mount,
            Err(reason) => {
                return problem(format!(
                    "mount {:?} cannot be a guest path ({reason}); use \"/\" or an absolute path such as the workspace's own",
                    self.mount
                ));
            }
        };
        if self.cwd.contains('\0') || !inside_mount(&self.cwd, &mount) {
            return problem(format!(
                "cwd {:?} is not an absolute guest path inside the workspace; use {mount:?} (where the workspace is mounted) or a directory below it, without `.` or `..`",
                self.cwd
            ));
        }
        for (name, value) in &self.env {
            if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
                return problem(format!(
                    "environment variable {name:?} is malformed; names need at least one character and no '=' or NUL, values no NUL"
                ));
            }
        }
        let config = runtime.config();
        if self.limits.memory_bytes > config.max_memory_bytes {
            return problem(format!(
                "Limits::memory_bytes {} exceeds RuntimeConfig::max_memory_bytes {}; lower the limit or build the runtime with a larger maximum",
                self.limits.memory_bytes, config.max_memory_bytes
            ));
        }
        if self.limits.table_elements > config.max_table_elements {
            return problem(format!(
                "Limits::table_elements {} exceeds RuntimeConfig::max_table_elements {}; lower the limit or build the runtime with a larger maximum",
                self.limits.table_elements, config.max_table_elements
            ));
        }
        if self.limits.fuel.is_some() && !config.consume_fuel {
            return Err(RunError::FuelDisabled);
        }
        Ok(mount)
    }
}

/// What a command did: the output of `Command(argv)`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandOutput {
    /// The exit status: the guest's `proc_exit` code (0 when `_start` returns), or one of the
    /// host's statuses ([`crate::EXIT_WALL_TIME`], [`crate::EXIT_TRAP`], [`crate::EXIT_MEMORY`],
    /// [`crate::EXIT_CPU`], [`crate::EXIT_OUTPUT`], [`crate::EXIT_OPEN_FILES`]).
    pub exit_code: i32,
    /// Captured stdout ([`Output::Capture`]); empty for [`Output::Null`] and [`Output::Writer`].
    pub stdout: Vec<u8>,
    /// Captured stderr, with any limit or trap message appended as a last line starting with
    /// `agent-wasi:`.
    pub stderr: Vec<u8>,
    /// Whether stdout hit its capture limit (the guest was then stopped with
    /// [`crate::EXIT_OUTPUT`]).
    pub stdout_truncated: bool,
    /// Whether stderr hit its capture limit.
    pub stderr_truncated: bool,
    /// Time from the call to [`Runtime::run`] to its return.
    pub duration: Duration,
    /// How the command ran.
    pub meta: CommandMeta,
}

/// How a command ran ([`CommandOutput::meta`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandMeta {
    /// sha256 of the module that ran.
    pub module_sha256: String,
    /// How the module had been prepared (compiled, loaded from disk, or found in memory).
    pub cache: CacheState,
    /// The limit that stopped the command, if one did; the exit status is then
    /// [`LimitKind::exit_code`].
    pub limit_hit: Option<LimitKind>,
    /// The trap message when the guest trapped ([`crate::EXIT_TRAP`]).
    pub trap: Option<String>,
    /// Epoch ticks seen while the guest ran wasm code (one per
    /// [`crate::RuntimeConfig::epoch_tick`]).
    pub epoch_ticks: u64,
    /// Fuel consumed, when the runtime meters fuel.
    pub fuel_consumed: Option<u64>,
    /// Largest linear-memory size the guest reached, in bytes.
    pub peak_memory_bytes: usize,
    /// Bytes the guest read from stdin.
    pub stdin_bytes: u64,
    /// Bytes of stdout accepted from the guest (kept, discarded or passed on).
    pub stdout_bytes: u64,
    /// Bytes of stderr accepted from the guest.
    pub stderr_bytes: u64,
    /// One audit record per `agent_net` request, in order ([`crate::net`]).
    pub net_requests: Vec<NetAudit>,
}

/// How the guest ended.
struct Ending {
    exit_code: i32,
    limit_hit: Option<LimitKind>,
    trap: Option<String>,
    /// A line for stderr.
    message: Option<String>,
}

impl Runtime {
    /// Runs `module` as a command: `argv` and `env` as given (nothing inherited), the workspace
    /// preopened read-write at guest path [`CommandInput::mount`] (`/` by default; no other host
    /// path), the stdio of `input`, and its limits. Returns when the guest has ended, however it ended.
    ///
    /// Blocks the calling thread for the whole command. From async code, call it inside
    /// `tokio::task::spawn_blocking` (or on a thread of your own), never directly in an async
    /// task: wasmtime-wasi's synchronous host calls enter the ambient tokio runtime with
    /// `block_on`, which panics on an async worker thread.
    ///
    /// # Errors
    ///
    /// [`RunError`] only for host-side failures: a malformed input, a workspace that cannot be
    /// opened, fuel limits on a runtime without fuel, no free pooling slot. A guest that fails,
    /// traps or exceeds a limit is an [`Ok`] with its exit status.
    pub fn run(
        &self,
        module: &PreparedModule,
        input: CommandInput,
        workspace: &Path,
    ) -> Result<CommandOutput, RunError> {
        let started = Instant::now();
        let mount = input.validate(self)?;
        let CommandInput {
            argv,
            mount: _,
            cwd,
            env,
            stdin,
            stdout,
            stderr,
            limits,
            net,
            read_only,
            cancel,
        } = input;
        let stdin = InputSource::new(stdin);
        let stdout = OutputSink::new(stdout, LimitKind::Stdout);
        let stderr = OutputSink::new(stderr, LimitKind::Stderr);

        let mut builder = WasiCtxBuilder::new();
        // Set before the preopen: the directory remembers whether it may block this thread.
        builder.allow_blocking_current_thread(true);
        builder.args(&argv);
        for (name, value) in env.iter().filter(|(name, _)| name != "PWD") {
            builder.env(name, value);
        }
        builder
            .env("PWD", &cwd)
            .stdin(stdin.clone())
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .monotonic_clock(RunClock { base: started });
        builder
            .preopened_dir(
                workspace,
                &mount,
                if read_only {
                    FsPerms::ReadOnly
                } else {
                    FsPerms::ReadWrite
                },
            )
            .map_err(|err| RunError::Workspace {
                path: workspace.to_owned(),
                source: boxed(err),
            })?;
        // Above a mount below `/`: its ancestors, empty and read-only (see `ancestors.rs`).
        let mut ancestors = 0;
        if let Some(empty) = crate::ancestors::empty_dir() {
            for ancestor in crate::ancestors::of(&mount) {
                builder
                    .preopened_dir(empty, &ancestor, FsPerms::ReadOnly)
                    .map_err(|err| RunError::Workspace {
                        path: empty.clone(),
                        source: boxed(err),
                    })?;
                ancestors += 1;
            }
        }
        let mut wasi = builder.build_p1();
        let capacity = usize::try_from(limits.open_files)
            .unwrap_or(usize::MAX)
            .saturating_add(BASE_HANDLES)
            .saturating_add(ancestors);
        wasi.ctx().table.set_max_capacity(capacity);

        let mut store = Store::new(
            &self.engine,
            StoreState {
                wasi,
                limiter: Limiter::new(&limits),
                deadline: deadline(started, limits.wall_time),
                wall_time: limits.wall_time,
                cancel,
                clock_base: started,
                epoch_ticks: 0,
                net: NetState::new(net),
            },
        );
        store.limiter(|state| &mut state.limiter);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut context| {
            let state = context.data_mut();
            state.epoch_ticks += 1;
            if crate::cancel::is_set(state.cancel.as_deref()) {
                Err(wasmtime::Error::new(crate::cancel::Cancelled))
            } else if Instant::now() >= state.deadline {
                Err(wasmtime::Error::new(LimitExceeded::wall_time(
                    state.wall_time,
                )))
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        let initial_fuel = if self.config.consume_fuel {
            let fuel = limits.fuel.unwrap_or(u64::MAX);
            // Cannot fail: the engine meters fuel.
            let _ = store.set_fuel(fuel);
            Some(fuel)
        } else {
            None
        };

        let result = match module.inner.pre.instantiate(&mut store) {
            Ok(instance) => instance
                .get_typed_func::<(), ()>(&mut store, "_start")
                .and_then(|start| start.call(&mut store, ())),
            Err(err) => {
                if let Some(host_side) = self.instantiate_failure(module, &err) {
                    return Err(host_side);
                }
                Err(err)
            }
        };
        let ending = match result {
            Ok(()) => Ending {
                exit_code: 0,
                limit_hit: None,
                trap: None,
                message: None,
            },
            Err(err) => classify(&err, &limits),
        };

        let fuel_consumed =
            initial_fuel.map(|initial| initial.saturating_sub(store.get_fuel().unwrap_or(initial)));
        let epoch_ticks = store.data().epoch_ticks;
        let peak_memory_bytes = store.data().limiter.peak_memory;
        let net_requests = std::mem::take(&mut store.data_mut().net.records);
        // Drop the store (the guest's open files, its clones of the stdio objects) before
        // collecting the output.
        drop(store);

        if let Some(message) = &ending.message {
            stderr.append_host_line(&format!("agent-wasi: {message}"));
        }
        let out = stdout.finish();
        let err = stderr.finish();
        Ok(CommandOutput {
            exit_code: ending.exit_code,
            stdout: out.captured,
            stderr: err.captured,
            stdout_truncated: out.truncated,
            stderr_truncated: err.truncated,
            duration: started.elapsed(),
            meta: CommandMeta {
                module_sha256: module.sha256().to_owned(),
                cache: module.cache_state(),
                limit_hit: ending.limit_hit,
                trap: ending.trap,
                epoch_ticks,
                fuel_consumed,
                peak_memory_bytes,
                stdin_bytes: stdin.bytes_read(),
                stdout_bytes: out.written,
                stderr_bytes: err.written,
                net_requests,
            },
        })
    }

    /// The host-side reason an instantiation failed, if it was not the guest's doing (the
    /// guest's own failures, like a memory limit or a trap in its start function, are
    /// classified as any other ending).
    fn instantiate_failure(
        &self,
        module: &PreparedModule,
        err: &wasmtime::Error,
    ) -> Option<RunError> {
        if err.downcast_ref::<PoolConcurrencyLimitError>().is_some() {
            return Some(RunError::Busy {
                max_instances: self.config.max_instances,
            });
        }
        if err.downcast_ref::<LimitExceeded>().is_some() || err.downcast_ref::<Trap>().is_some() {
            return None;
        }
        Some(RunError::Instantiate {
            sha256: module.sha256().to_owned(),
            source: format!("{err:#}").into(),
        })
    }
}

/// `start + wall_time`, or a deadline centuries away when that overflows `Instant`
/// (`Duration::MAX` means no practical limit).
fn deadline(start: Instant, wall_time: Duration) -> Instant {
    start
        .checked_add(wall_time)
        .or_else(|| start.checked_add(Duration::from_secs(1 << 32)))
        .unwrap_or(start)
}

/// Turns the error that ended the guest into its exit status.
fn classify(err: &wasmtime::Error, limits: &Limits) -> Ending {
    if let Some(exit) = err.downcast_ref::<I32Exit>() {
        return Ending {
            exit_code: exit.0,
            limit_hit: None,
            trap: None,
            message: None,
        };
    }
    if err.downcast_ref::<crate::cancel::Cancelled>().is_some() {
        return Ending {
            exit_code: crate::cancel::EXIT_CANCELLED,
            limit_hit: None,
            trap: None,
            message: Some(crate::cancel::Cancelled.to_string()),
        };
    }
    let limit = |exceeded: LimitExceeded| Ending {
        exit_code: exceeded.kind.exit_code(),
        limit_hit: Some(exceeded.kind),
        trap: None,
        message: Some(exceeded.message),
    };
    if let Some(exceeded) = err.downcast_ref::<LimitExceeded>() {
        return limit(LimitExceeded {
            kind: exceeded.kind,
            message: exceeded.message.clone(),
        });
    }
    if let Some(trap) = err.downcast_ref::<Trap>() {
        match trap {
            Trap::OutOfFuel => return limit(LimitExceeded::fuel(limits.fuel.unwrap_or(0))),
            // Only raised if the epoch callback were missing; it is still the wall-time limit.
            Trap::Interrupt => return limit(LimitExceeded::wall_time(limits.wall_time)),
            _ => {}
        }
    }
    if let Some(ResourceTableError::Full) = err.downcast_ref::<ResourceTableError>() {
        return limit(LimitExceeded::open_files(limits.open_files));
    }
    // A trap, or a host function's error (a proc_exit status above 255, for instance). The
    // root cause, not the outer error: that one is the multi-line wasm backtrace.
    let description = match err.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => err.root_cause().to_string(),
    };
    Ending {
        exit_code: EXIT_TRAP,
        limit_hit: None,
        message: Some(format!("the command trapped: {description}")),
        trap: Some(description),
    }
}
