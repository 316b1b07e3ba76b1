//! The commands of the installed bundles, verified and ready to run: what `agent exec`,
//! `agent shell` and the Bash tool's `wasi` backend use.
//!
//! A [`Toolbox`] joins the three parts: `agent-bundles` finds a command in the installed
//! bundles (in the configured order) and verifies its module (the manifest's signature under
//! the trust store's policy, the module's size and sha256; a changed cache file is re-fetched,
//! never run), the [`Runtime`] prepares it once (compiled, or loaded from the disk cache next to
//! the bundles; when the disk cache holds the code compiled from the sha256 the verified
//! manifest names, the module file is not read at all), and every run is a [`Runtime::run`]
//! with the toolbox's limits, tightened by the manifest's recommended ones. A command no bundle
//! provides is `command not found` (exit 127), as in bash; one whose module fails verification
//! cannot run (exit 126, the reason on stderr).
//!
//! Every command run is recorded ([`CommandRecord`]: argv, exit status, duration, bytes in and
//! out, the bundle it came from, the limit that stopped it) and emitted as a `tracing` event on
//! the `agent_wasi::audit` target.
//!
//! Commands have no network unless the toolbox was given a grant ([`Toolbox::with_network`]);
//! with one, every command it runs may fetch what the grant allows (`agent_net`, see
//! [`crate::net`]), each request audited.
//!
//! [`Toolbox::route`] decides, without running anything, whether a script is for
//! [`Toolbox::shell`] ([`Route::Wasi`]) or for the host's bash ([`Route::Host`], with the
//! reason); [`Toolbox::commands`] lists the names it counts as bundle commands.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_bundles::manifest::CommandLimits;
use agent_bundles::store::{BundleError, BundleStore, Resolver};
use agent_bundles::trust::TrustStore;
use serde::Serialize;

pub use crate::shell::Route;
use crate::shell::{Plan, ShellContext, ShellError, ShellOutput, Stage, StageRunner};
use crate::{
    CommandInput, CommandOutput, Input, LimitKind, Limits, NetAudit, NetGrant, Output,
    PreparedModule, Runtime,
};

/// Exit status of a command that no bundle provides (as bash).
pub const EXIT_NOT_FOUND: i32 = 127;
/// Exit status of a command whose module could not be verified or prepared (as bash for a file
/// it cannot execute).
pub const EXIT_CANNOT_RUN: i32 = 126;

/// A toolbox that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ToolboxError {
    /// The bundle cache could not be read.
    #[error(transparent)]
    Bundles(#[from] BundleError),
    /// No bundle is installed.
    #[error(
        "no WASI bundle is installed in {0}; build and install the core-utils bundle: `cargo xtask bundles && agent bundles install core-utils --registry target/bundles/registry`"
    )]
    Empty(PathBuf),
}

/// One command run, for the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRecord {
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// Its exit status.
    pub exit_code: i32,
    /// How long it ran, in microseconds.
    pub duration_us: u64,
    /// Bytes it read from stdin.
    pub stdin_bytes: u64,
    /// Bytes it wrote to stdout.
    pub stdout_bytes: u64,
    /// Bytes it wrote to stderr.
    pub stderr_bytes: u64,
    /// `name@version` of the bundle that provided it (empty when none did).
    pub bundle: String,
    /// The limit that stopped it, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<&'static str>,
    /// Its network requests through `agent_net`, in order (only with a grant; see
    /// [`Toolbox::with_network`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub net_requests: Vec<NetAudit>,
}

/// What [`Toolbox::exec`] returns: the command's output and its record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecOutput {
    /// The exit status (127 not found, 126 cannot run, else as [`CommandOutput::exit_code`]).
    pub exit_code: i32,
    /// Captured stdout.
    pub stdout: Vec<u8>,
    /// Captured stderr (with the runner's or the toolbox's message, if any).
    pub stderr: Vec<u8>,
    /// Whether stdout hit its cap.
    pub stdout_truncated: bool,
    /// Whether stderr hit its cap.
    pub stderr_truncated: bool,
    /// The runner's account of the run, when the command ran.
    pub meta: Option<crate::CommandMeta>,
    /// The audit record.
    pub record: CommandRecord,
}

/// A script run through the toolbox.
#[derive(Clone, Debug)]
pub struct ShellRun {
    /// What the script produced.
    pub output: ShellOutput,
    /// Every external command it ran, in the order they ended.
    pub commands: Vec<CommandRecord>,
}

struct Tool {
    module: PreparedModule,
    bundle: String,
    limits: Option<CommandLimits>,
}

/// The installed bundles' commands, ready to run.
pub struct Toolbox {
    runtime: Arc<Runtime>,
    resolver: Resolver,
    trust: TrustStore,
    require_signature: bool,
    limits: Limits,
    net: Option<NetGrant>,
    tools: Mutex<HashMap<String, Arc<Tool>>>,
    /// Modules verified and prepared, by their file in the cache: a module is read, hashed and
    /// prepared once however many commands it holds.
    modules: Mutex<HashMap<PathBuf, (PreparedModule, String)>>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("bundles", &self.resolver.bundles().len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Toolbox {
    /// Opens the bundles installed in `store`, searched in `order` (bundle names first, then
    /// the others by name), verified against `trust`. Modules are verified and prepared on
    /// first use.
    ///
    /// # Errors
    /// [`ToolboxError::Empty`] when nothing is installed, or the cache cannot be read.
    pub fn open(
        runtime: Arc<Runtime>,
        store: &BundleStore,
        trust: TrustStore,
        order: &[String],
    ) -> Result<Self, ToolboxError> {
        let resolver = store.resolver(order)?;
        if resolver.bundles().is_empty() {
            return Err(ToolboxError::Empty(store.root().to_path_buf()));
        }
        Ok(Self {
            runtime,
            resolver,
            trust,
            require_signature: false,
            limits: Limits::default(),
            net: None,
            tools: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// Requires every module to be signed by a trusted key, whatever its registry's policy.
    /// Default off (the registry's policy decides).
    #[must_use]
    pub fn require_signature(mut self, yes: bool) -> Self {
        self.require_signature = yes;
        self
    }

    /// The limits every command runs with (a manifest's recommended limits may only tighten
    /// them). Default [`Limits::default`].
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Lets every command this toolbox runs ([`Toolbox::exec`], each stage of
    /// [`Toolbox::shell`]) fetch what `grant` allows through `agent_net`; its concurrency limit
    /// is shared by all of them. Default: no network.
    #[must_use]
    pub fn with_network(mut self, grant: NetGrant) -> Self {
        self.net = Some(grant);
        self
    }

    /// The network grant, if any.
    pub fn network(&self) -> Option<&NetGrant> {
        self.net.as_ref()
    }

    /// The runtime it runs on.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// Every command name the installed bundles provide, in resolution order (for a tool's
    /// description: with the shell's built-ins, what [`Toolbox::route`] sends to the WASI
    /// shell).
    pub fn commands(&self) -> Vec<String> {
        self.resolver.commands()
    }

    /// Where `script` should run: [`Route::Wasi`] when [`Toolbox::shell`] can run all of it
    /// (the syntax inside the portable subset, every program it can start a built-in or a
    /// command of these bundles, with a name the script's text tells), else [`Route::Host`]
    /// with the reason. Compiles the script as [`Toolbox::shell`] would and runs nothing: a
    /// parse and a walk of the plan, with no I/O (see [`crate::shell::route`]).
    pub fn route(&self, script: &str) -> Route {
        crate::shell::route(script, &|name| self.has(name))
    }

    /// Whether a bundle provides `name` (a bare name: no `/`).
    pub fn has(&self, name: &str) -> bool {
        !name.contains('/') && self.resolver.which(name).is_ok()
    }

    /// The verified, prepared module of `name`.
    fn tool(&self, name: &str) -> Result<Arc<Tool>, String> {
        if let Some(t) = self
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
        {
            return Ok(Arc::clone(t));
        }
        let resolved = self.resolver.which(name).map_err(|e| e.to_string())?;
        let file = resolved.bundle.dir.join(&resolved.entry.module_path);
        let limits = resolved.entry.limits;
        let shared = self
            .modules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&file)
            .cloned();
        let (module, bundle) = match shared {
            Some(found) => found,
            None => {
                let bundle = format!(
                    "{}@{}",
                    resolved.bundle.manifest.name, resolved.bundle.manifest.version
                );
                let module = match self.compiled(name)? {
                    Some(module) => module,
                    None => {
                        let loaded = self
                            .resolver
                            .load(name, &self.trust, self.require_signature)
                            .map_err(|e| e.to_string())?;
                        self.runtime
                            .prepare(&loaded.bytes, &loaded.sha256)
                            .map_err(|e| e.to_string())?
                    }
                };
                self.modules
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(file, (module.clone(), bundle.clone()));
                (module, bundle)
            }
        };
        let tool = Arc::new(Tool {
            module,
            bundle,
            limits,
        });
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_string(), Arc::clone(&tool));
        Ok(tool)
    }

    /// The module of `name` from the runtime's memory or disk cache, found by the sha256 its
    /// verified manifest gives, without reading the module: the compiled code there was made
    /// from bytes that hashed to that sha256, so it is the module the manifest signs. `None`
    /// when it is not cached (then the module is read, verified and prepared). This spares a
    /// new process reading and hashing the 8 MB core-utils module on every start.
    fn compiled(&self, name: &str) -> Result<Option<PreparedModule>, String> {
        let sha256 = self
            .resolver
            .module_sha256(name, &self.trust, self.require_signature)
            .map_err(|e| e.to_string())?;
        self.runtime
            .prepare_cached(&sha256)
            .map_err(|e| e.to_string())
    }

    /// Verifies and prepares every command's module now rather than on first use; the
    /// commands that failed, with why.
    pub fn warm_up(&self) -> Vec<(String, String)> {
        let mut failed = Vec::new();
        for name in self.commands() {
            if let Err(e) = self.tool(&name) {
                failed.push((name, e));
            }
        }
        failed
    }

    fn limits_for(&self, tool: &Tool) -> Limits {
        let mut limits = self.limits.clone();
        if let Some(rec) = tool.limits {
            if let Some(ms) = rec.wall_ms {
                limits.wall_time = limits.wall_time.min(Duration::from_millis(ms));
            }
            if let Some(bytes) = rec.memory_bytes {
                limits.memory_bytes = limits
                    .memory_bytes
                    .min(usize::try_from(bytes).unwrap_or(usize::MAX));
            }
        }
        limits
    }

    /// Runs one command, `Command(argv)`: `argv[0]` is looked up in the bundles. The workspace
    /// is mounted at `/` and `cwd` is a guest path under it; stdout and stderr are captured up
    /// to `output_limit` bytes each. [`Toolbox::exec_input`] mounts it elsewhere (at its own
    /// host path, say).
    ///
    /// # Errors
    /// Host-side failures only ([`crate::RunError`] as text); a command not found is exit 127
    /// and a module that fails verification exit 126, each with a message on stderr.
    pub fn exec(
        &self,
        argv: Vec<String>,
        cwd: &str,
        env: Vec<(String, String)>,
        stdin: Input,
        output_limit: usize,
        workspace: &Path,
    ) -> Result<ExecOutput, crate::RunError> {
        let mut input = CommandInput::new(argv)
            .with_cwd(cwd)
            .with_stdin(stdin)
            .with_stdout(Output::Capture {
                limit: output_limit,
            })
            .with_stderr(Output::Capture {
                limit: output_limit,
            });
        input.env = env;
        self.exec_input(input, workspace)
    }

    /// Runs the command `input` describes (`argv`, mount, working directory, environment,
    /// stdio), `argv[0]` looked up in the bundles, on the host directory `workspace`. The
    /// toolbox decides the rest: `input.limits` and `input.net` are replaced by its limits
    /// (tightened by the manifest's) and its network grant. [`ExecOutput::stdout`] and
    /// [`ExecOutput::stderr`] hold what an [`Output::Capture`] kept (empty for other outputs); a
    /// "not found" or "cannot run" message goes to the command's stderr, whatever it is.
    ///
    /// # Errors
    /// As [`Toolbox::exec`]; [`crate::RunError::InvalidInput`] for a mount or working directory
    /// that is not a guest path inside the workspace.
    pub fn exec_input(
        &self,
        mut input: CommandInput,
        workspace: &Path,
    ) -> Result<ExecOutput, crate::RunError> {
        let argv = input.argv.clone();
        let name = argv.first().cloned().unwrap_or_default();
        let started = Instant::now();
        let refuse = |code: i32, message: String, bundle: String, stderr: Output| {
            let record = CommandRecord {
                argv: argv.clone(),
                exit_code: code,
                duration_us: micros(started.elapsed()),
                stdin_bytes: 0,
                stdout_bytes: 0,
                stderr_bytes: message.len() as u64,
                bundle,
                limit: None,
                net_requests: Vec::new(),
            };
            audit(&record);
            let (stderr, stderr_truncated) = match stderr {
                Output::Capture { limit } => {
                    let mut bytes = message.into_bytes();
                    let truncated = bytes.len() > limit;
                    bytes.truncate(limit);
                    (bytes, truncated)
                }
                Output::Writer(mut writer) => {
                    let _ignored = writer
                        .write_all(message.as_bytes())
                        .and_then(|()| writer.flush());
                    (Vec::new(), false)
                }
                Output::Null => (Vec::new(), false),
            };
            ExecOutput {
                exit_code: code,
                stdout: Vec::new(),
                stderr,
                stdout_truncated: false,
                stderr_truncated,
                meta: None,
                record,
            }
        };
        if !self.has(&name) {
            // The commands that start commands are the shell's (a guest cannot start any).
            let hint = if matches!(name.as_str(), "xargs" | "timeout") {
                format!(" ({name} is run by the agent's shell: `agent shell '{name} ...'`)")
            } else {
                String::new()
            };
            return Ok(refuse(
                EXIT_NOT_FOUND,
                format!("{name}: command not found{hint}\n"),
                String::new(),
                input.stderr,
            ));
        }
        let tool = match self.tool(&name) {
            Ok(t) => t,
            Err(e) => {
                return Ok(refuse(
                    EXIT_CANNOT_RUN,
                    format!("{name}: cannot run: {e}\n"),
                    String::new(),
                    input.stderr,
                ));
            }
        };
        input.limits = self.limits_for(&tool);
        input.net = self.net.clone();
        let output: CommandOutput = self.runtime.run(&tool.module, input, workspace)?;
        let record = CommandRecord {
            argv,
            exit_code: output.exit_code,
            duration_us: micros(output.duration),
            stdin_bytes: output.meta.stdin_bytes,
            stdout_bytes: output.meta.stdout_bytes,
            stderr_bytes: output.meta.stderr_bytes,
            bundle: tool.bundle.clone(),
            limit: output.meta.limit_hit.map(LimitKind::name),
            net_requests: output.meta.net_requests.clone(),
        };
        audit(&record);
        Ok(ExecOutput {
            exit_code: output.exit_code,
            stdout: output.stdout,
            stderr: output.stderr,
            stdout_truncated: output.stdout_truncated,
            stderr_truncated: output.stderr_truncated,
            meta: Some(output.meta),
            record,
        })
    }

    /// Runs `script` with `Shell(script)`, each external command through this toolbox.
    ///
    /// # Errors
    /// [`ShellError`] when the script is refused before anything runs (unsupported syntax, a
    /// parse error) or the context is unusable.
    pub fn shell(&self, script: &str, ctx: &ShellContext) -> Result<ShellRun, ShellError> {
        self.shell_until(script, ctx, None)
    }

    /// [`Toolbox::shell`] with a deadline for the whole script: each command's wall time is
    /// cut to what is left (a command started after it gets none and stops at once with
    /// [`crate::EXIT_WALL_TIME`]). Setting [`ShellContext::cancel`] stops the script: the
    /// command running is stopped at once ([`crate::EXIT_CANCELLED`]) and no other starts.
    ///
    /// # Errors
    /// As [`Toolbox::shell`].
    pub fn shell_until(
        &self,
        script: &str,
        ctx: &ShellContext,
        deadline: Option<Instant>,
    ) -> Result<ShellRun, ShellError> {
        self.run_plan_until(&Plan::parse(script)?, ctx, deadline)
    }

    /// [`Toolbox::shell_until`] for a plan already compiled ([`Plan::from_parsed`]: the
    /// parse the permission decision was made on), so the script that runs is exactly the
    /// tree that was decided.
    ///
    /// # Errors
    /// As [`Toolbox::shell`], for the context.
    pub fn run_plan_until(
        &self,
        plan: &Plan,
        ctx: &ShellContext,
        deadline: Option<Instant>,
    ) -> Result<ShellRun, ShellError> {
        let runner = Recording {
            toolbox: self,
            workspace: ctx.workspace.clone(),
            records: Mutex::new(Vec::new()),
            deadline,
            cancel: ctx.cancel.clone(),
        };
        let output = plan.run(ctx, &runner)?;
        Ok(runner.finish(output))
    }

    /// Where a compiled plan can run (see [`Toolbox::route`]).
    pub fn route_compiled(&self, compiled: &Result<Plan, ShellError>) -> Route {
        crate::shell::route_compiled(compiled, &|name| self.has(name))
    }
}

impl Recording<'_> {
    /// The run's output with the records of every command it ran.
    fn finish(self, output: ShellOutput) -> ShellRun {
        let commands = self
            .records
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        ShellRun { output, commands }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn audit(record: &CommandRecord) {
    tracing::info!(
        target: "agent_wasi::audit",
        argv = ?record.argv,
        exit_code = record.exit_code,
        duration_us = record.duration_us,
        stdin_bytes = record.stdin_bytes,
        stdout_bytes = record.stdout_bytes,
        stderr_bytes = record.stderr_bytes,
        bundle = %record.bundle,
        limit = record.limit.unwrap_or(""),
        "command"
    );
}

/// A writer that counts what passes through it.
struct Counting {
    inner: Box<dyn Write + Send>,
    count: Arc<AtomicU64>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The toolbox as the shell's [`StageRunner`] for one script, recording each command.
struct Recording<'a> {
    toolbox: &'a Toolbox,
    workspace: PathBuf,
    records: Mutex<Vec<CommandRecord>>,
    deadline: Option<Instant>,
    /// The script's cancellation ([`ShellContext::cancel`]), which also stops the command
    /// running when it is set.
    cancel: Option<Arc<AtomicBool>>,
}

impl Recording<'_> {
    fn push(&self, record: CommandRecord) {
        audit(&record);
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
    }
}

impl StageRunner for Recording<'_> {
    fn has_command(&self, name: &str) -> bool {
        self.toolbox.has(name)
    }

    fn run_stage(&self, stage: Stage) -> i32 {
        let started = Instant::now();
        let Stage {
            argv,
            mount,
            cwd,
            env,
            stdin,
            stdout,
            mut stderr,
            wall_time,
            read_only,
            network,
            ..
        } = stage;
        let name = argv.first().cloned().unwrap_or_default();
        let tool = match self.toolbox.tool(&name) {
            Ok(t) => t,
            Err(e) => {
                let message = format!("bash: {name}: cannot run: {e}\n");
                let _ = stderr.write_all(message.as_bytes());
                self.push(CommandRecord {
                    argv,
                    exit_code: EXIT_CANNOT_RUN,
                    duration_us: micros(started.elapsed()),
                    stdin_bytes: 0,
                    stdout_bytes: 0,
                    stderr_bytes: message.len() as u64,
                    bundle: String::new(),
                    limit: None,
                    net_requests: Vec::new(),
                });
                return EXIT_CANNOT_RUN;
            }
        };
        let mut limits = self.toolbox.limits_for(&tool);
        if let Some(cap) = wall_time {
            limits.wall_time = limits.wall_time.min(cap.max(Duration::from_millis(1)));
        }
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            limits.wall_time = limits.wall_time.min(left.max(Duration::from_millis(1)));
        }
        let out_count = Arc::new(AtomicU64::new(0));
        let err_count = Arc::new(AtomicU64::new(0));
        let input = CommandInput {
            argv: argv.clone(),
            mount,
            cwd,
            env,
            stdin: Input::Reader(stdin),
            stdout: Output::Writer(Box::new(Counting {
                inner: stdout,
                count: Arc::clone(&out_count),
            })),
            stderr: Output::Writer(Box::new(Counting {
                inner: stderr,
                count: Arc::clone(&err_count),
            })),
            limits,
            net: self.toolbox.net.clone().filter(|_| network),
            read_only,
            cancel: self.cancel.clone(),
        };
        let (code, stdin_bytes, limit, net_requests) =
            match self
                .toolbox
                .runtime
                .run(&tool.module, input, &self.workspace)
            {
                Ok(out) => (
                    out.exit_code,
                    out.meta.stdin_bytes,
                    out.meta.limit_hit.map(LimitKind::name),
                    out.meta.net_requests,
                ),
                Err(e) => {
                    tracing::warn!(command = %name, error = %e, "the runner failed");
                    (EXIT_CANNOT_RUN, 0, None, Vec::new())
                }
            };
        self.push(CommandRecord {
            argv,
            exit_code: code,
            duration_us: micros(started.elapsed()),
            stdin_bytes,
            stdout_bytes: out_count.load(Ordering::Relaxed),
            stderr_bytes: err_count.load(Ordering::Relaxed),
            bundle: tool.bundle.clone(),
            limit,
            net_requests,
        });
        code
    }
}
