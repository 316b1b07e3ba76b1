//! The `wasi` backend: the command runs as agent-wasi's `Shell(script)` inside this process,
//! each external command a verified module from the installed bundles, the workspace mounted at
//! its own absolute path (so paths agree with the other tools) and nothing else reachable. Same
//! semantics on every host; no host process per command.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_core::tools::ToolError;
use agent_wasi::shell::{Plan, ShellContext, ShellError};
use agent_wasi::toolbox::Toolbox;
use serde_json::json;

use agent_core::permissions::WriteScope;

use super::backend::{BashBackend, BashOutcome, BashRequest, enforced_words};

/// Most bytes kept of a command's stdout and of its stderr (the tool then cuts inline output
/// and spills the rest, as for the native backend).
const OUTPUT_LIMIT: usize = 4 << 20;

/// Runs Bash commands with the WASI shell over a [`Toolbox`].
#[derive(Debug)]
pub struct WasiBackend {
    toolbox: Arc<Toolbox>,
}

impl WasiBackend {
    /// A backend running commands from `toolbox`.
    pub fn new(toolbox: Arc<Toolbox>) -> Self {
        Self { toolbox }
    }

    /// `Ok` when the WASI shell can run all of `command` (every program a bundle command or a
    /// builtin, the syntax inside the portable subset), else why not.
    pub fn route(&self, command: &str) -> Result<(), String> {
        match self.toolbox.route(command) {
            agent_wasi::toolbox::Route::Wasi => Ok(()),
            agent_wasi::toolbox::Route::Host { reason } => Err(reason),
        }
    }
}

impl BashBackend for WasiBackend {
    fn name(&self) -> &'static str {
        "wasi"
    }

    fn describe(&self) -> String {
        format!(
            "Scripts whose every program is a shell builtin or one of these bundle commands run in-process in a portable WASI shell (pipelines, redirects, && || ;, if/for/while/case, globs, $((..)); no $(..), subshells, here-documents or functions): {}.",
            self.toolbox.commands().join(" ")
        )
    }

    fn placement(&self) -> String {
        let network = if self.toolbox.network().is_some() {
            "its `fetch` reaches only the domains the settings allow (sandbox.network.allowedDomains)"
        } else {
            "no network"
        };
        format!(
            "the in-process WASI shell ({} bundle commands, listed in the Bash tool's description; only the workspace is visible; {network})",
            self.toolbox.commands().len()
        )
    }

    fn run(&self, request: &BashRequest) -> Result<BashOutcome, ToolError> {
        match self.compile(request) {
            Ok(plan) => self.run_plan(request, &plan),
            Err(e) => Err(refused(e)),
        }
    }
}

/// The tool's error for a script the WASI shell refuses to compile.
pub(super) fn refused(e: ShellError) -> ToolError {
    match e {
        e @ (ShellError::Parse { .. } | ShellError::Unsupported { .. }) => {
            ToolError::invalid_input(format!(
                "{e} (the `wasi` Bash backend runs a portable subset of bash: see docs/shell.md)"
            ))
        }
        e => ToolError::Execution(e.to_string()),
    }
}

impl WasiBackend {
    /// The request's script compiled: from the parse the permission decision was made on when
    /// the request carries it for this very text, else from the text.
    ///
    /// # Errors
    /// What the compiler refuses.
    pub fn compile(&self, request: &BashRequest) -> Result<Plan, ShellError> {
        match request
            .prepared
            .as_ref()
            .and_then(|p| p.of(&request.command))
        {
            Some(parsed) => Plan::from_parsed(parsed),
            None => Plan::parse(&request.command),
        }
    }

    /// Where a compiled script can run: `Ok` when every program it names is a builtin or a
    /// bundle command.
    pub fn route_compiled(&self, plan: &Result<Plan, ShellError>) -> Result<(), String> {
        match self.toolbox.route_compiled(plan) {
            agent_wasi::toolbox::Route::Wasi => Ok(()),
            agent_wasi::toolbox::Route::Host { reason } => Err(reason),
        }
    }

    /// Runs a compiled script: exactly the tree that was decided.
    ///
    /// # Errors
    /// As [`BashBackend::run`].
    pub fn run_plan(&self, request: &BashRequest, plan: &Plan) -> Result<BashOutcome, ToolError> {
        let cancel = Arc::new(AtomicBool::new(false));
        // The workspace at its own real path, so every path agrees with the other tools'; a
        // shadow workspace at the real folder's path (the whole shadow, the command starting
        // where it was asked to), so the paths the script prints and takes are the user's.
        let (workspace, shown, start) = match &request.view {
            Some(v) if request.cwd.starts_with(v.actual()) => (
                v.actual().to_path_buf(),
                v.shown().to_path_buf(),
                Some(v.shown_path(&request.cwd)),
            ),
            _ => (request.cwd.clone(), request.cwd.clone(), None),
        };
        let mount = agent_wasi::host_mount(&shown).map_err(|e| {
            ToolError::Execution(format!(
                "cannot mount the workspace {} in the WASI shell: {e}",
                shown.display()
            ))
        })?;
        let mut ctx = ShellContext::new(&workspace).with_mount(mount.clone());
        if let Some(start) = start.filter(|s| *s != shown) {
            ctx = ctx.with_cwd(start.display().to_string());
        }
        let mut ctx = ctx
            .with_env([("HOME", mount.as_str())])
            .with_output_limits(OUTPUT_LIMIT, OUTPUT_LIMIT)
            .with_cancel(Arc::clone(&cancel));
        let mut enforced = Vec::new();
        if let Some(c) = &request.containment {
            if c.writes == WriteScope::None {
                ctx = ctx.read_only();
            }
            if !c.network {
                ctx = ctx.offline();
            }
            ctx = ctx.with_programs(
                c.programs.clone(),
                format!(
                    "this command was approved as {} for the programs it names ({}) only; ask for the command to be approved as written",
                    c.approved_as,
                    c.programs.join(", ")
                ),
            );
            enforced = enforced_words(c, true);
        }
        // The whole script has the request's time: each command is limited by the toolbox,
        // and the script stops before its next command once the time is up.
        // A person's cancellation stops it the same way, at once (the command running is
        // stopped by agent-wasi, and no other starts).
        let started = Instant::now();
        let deadline = started + request.timeout;
        let done = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (cancel, done) = (Arc::clone(&cancel), Arc::clone(&done));
            let by_user = request.cancellation.clone();
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if now >= deadline || by_user.is_cancelled() {
                        cancel.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
                }
            })
        };
        let run = self.toolbox.run_plan_until(plan, &ctx, Some(deadline));
        done.store(true, Ordering::Relaxed);
        let _ = watcher.join();
        let run = run.map_err(refused)?;
        let limit_hit = run.commands.iter().find_map(|c| c.limit);
        let cancelled = run.output.cancelled && request.cancellation.is_cancelled();
        let (interrupted, stopped_by) = if cancelled {
            (
                true,
                Some(format!(
                    "cancelled by the user after {} ms; the script and the command it was running were stopped",
                    started.elapsed().as_millis()
                )),
            )
        } else if run.output.cancelled {
            (
                true,
                Some(format!(
                    "timed out after {} ms; the script was stopped",
                    request.timeout.as_millis()
                )),
            )
        } else if let Some(limit) = limit_hit {
            (
                true,
                Some(format!("a command was stopped by its {limit} limit")),
            )
        } else if run.output.stdout_truncated || run.output.stderr_truncated {
            (
                true,
                Some(format!("stopped keeping output after {OUTPUT_LIMIT} bytes")),
            )
        } else {
            (false, None)
        };
        Ok(BashOutcome {
            stdout: String::from_utf8_lossy(&run.output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&run.output.stderr).into_owned(),
            exit_code: Some(run.output.exit_code),
            interrupted,
            stopped_by,
            cancelled,
            commands: run.commands.iter().map(|c| json!(c)).collect(),
            backend: "wasi".to_owned(),
            notes: Vec::new(),
            enforced,
        })
    }
}
