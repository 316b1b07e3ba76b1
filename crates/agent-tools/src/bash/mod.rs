//! `Bash`: runs a shell command in the workspace. Every command first goes through
//! agent-sandbox's command checker (the same parse as the permission engine; a refused
//! command never starts), then through a [`BashBackend`]: the host's shell under the outer
//! sandbox ([`NativeBackend`]) or the WASI shell over the installed bundles ([`WasiBackend`],
//! feature `wasi`).
//! Output beyond 10 KB is cut inline and saved whole to a spill file the agent can Read: by
//! default in the workspace's reserved `.agent/output/` (never imported or committed).
//! A foreground command stops at once when its call is cancelled (`ToolContext::cancellation`,
//! Ctrl-C): every process it started is ended and the result says `cancelled`. A background
//! command (`run_in_background`) is not stopped by that.

mod backend;
mod native;
mod policy;
mod route;
#[cfg(feature = "wasi")]
mod wasi;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use agent_core::tools::{CancellationFlag, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_sandbox::caps::OutputCaps;
use agent_sandbox::commands::CommandChecker;
use agent_sandbox::settings::SandboxSettings;
use serde_json::{Value, json};

pub use backend::{BashBackend, BashOutcome, BashRequest};
pub use native::{DEFAULT_TIMEOUT, MAX_TIMEOUT, NativeBackend, Unsandboxed};
pub use policy::HostCommandPolicy;
pub use route::{Choice, Route, RoutedBackend};
#[cfg(feature = "wasi")]
pub use wasi::WasiBackend;

use super::input::{object, opt_bool, opt_usize, str_field};

/// The `Bash` tool.
pub struct Bash {
    backend: Arc<dyn BashBackend>,
    description: String,
    sandbox: SandboxSettings,
    caps: Option<OutputCaps>,
    background: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

/// Where spill files go by default, relative to the workspace root: inside it, so the Read
/// tool can page through them, and under the reserved `.agent/`, so the workspace never
/// imports or commits them.
pub const SPILL_DIR: &str = ".agent/output";

impl std::fmt::Debug for Bash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bash")
            .field("backend", &self.backend.name())
            .finish_non_exhaustive()
    }
}

impl Bash {
    /// A Bash tool running commands through `backend`, checked against `sandbox` (its
    /// allowed/denied commands and paths) first.
    pub fn new(backend: Arc<dyn BashBackend>, sandbox: SandboxSettings) -> Self {
        let mut description = "Runs a shell command in the workspace (timeout in ms, default 120000, at most 600000). \
             Output over 10 KB is cut; the whole of it is saved to a file named in the result. \
             Paths are the workspace's real absolute paths, the same the other tools take."
            .to_owned();
        let more = backend.describe();
        if !more.is_empty() {
            description.push(' ');
            description.push_str(&more);
        }
        Self {
            description,
            backend,
            sandbox,
            caps: None,
            background: Arc::default(),
        }
    }

    /// How many background commands this tool started are still running.
    pub fn background_running(&self) -> usize {
        let count =
            |handles: &Vec<JoinHandle<()>>| handles.iter().filter(|h| !h.is_finished()).count();
        match self.background.lock() {
            Ok(g) => count(&g),
            Err(poisoned) => count(&poisoned.into_inner()),
        }
    }

    /// Waits for every background command this tool started (a process that started them
    /// calls this before it exits, so their result files are complete).
    pub fn wait_background(&self) {
        let handles = match self.background.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for h in handles {
            let _ = h.join();
        }
    }

    /// Starts `request` on its own thread; its result is written to a JSON file in `dir`.
    fn start_background(&self, request: BashRequest, dir: &Path) -> Result<ToolOutput, ToolError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let id = id[..12].to_owned();
        std::fs::create_dir_all(dir)
            .map_err(|e| ToolError::Execution(format!("cannot create {}: {e}", dir.display())))?;
        let file = dir.join(format!("bash-{id}.json"));
        write_json(
            &file,
            &json!({"status": "running", "command": request.command}),
        )?;
        let backend = Arc::clone(&self.backend);
        let out = file.clone();
        let handle = std::thread::spawn(move || {
            let result = match backend.run(&request) {
                Ok(o) => json!({
                    "status": "completed",
                    "command": request.command,
                    "backend": o.backend,
                    "exitCode": o.exit_code,
                    "stdout": o.stdout,
                    "stderr": o.stderr,
                    "interrupted": o.interrupted,
                    "stoppedBy": o.stopped_by,
                    "containment": request.containment.as_ref().map(|c| {
                        let mut record = json!(c);
                        record["enforced"] = json!(o.enforced);
                        record
                    }),
                }),
                Err(e) => json!({
                    "status": "failed",
                    "command": request.command,
                    "errorType": e.error_type(),
                    "errorMessage": e.to_string(),
                }),
            };
            if let Err(e) = write_json(&out, &result) {
                tracing::warn!(error = %e, "cannot write a background command's result");
            }
        });
        match self.background.lock() {
            Ok(mut g) => g.push(handle),
            Err(poisoned) => poisoned.into_inner().push(handle),
        }
        Ok(ToolOutput::json(json!({
            "backgroundTaskId": id,
            "outputFile": file,
            "status": "running",
        })))
    }

    /// Sets the output caps (where spill files go, how much stays inline); by default they
    /// are agent-sandbox's, spilling into the workspace's [`SPILL_DIR`].
    pub fn with_caps(mut self, caps: OutputCaps) -> Self {
        self.caps = Some(caps);
        self
    }

    /// Where `command` would run, in a few words for a person approving it.
    pub fn where_it_runs(&self, command: &str) -> Option<String> {
        self.backend.where_it_runs(command)
    }

    /// Where commands run, in a sentence or two for the system prompt
    /// ([`BashBackend::placement`]): which scripts go to the WASI shell, which to the host's
    /// bash and under which sandbox, with which network.
    pub fn placement(&self) -> String {
        self.backend.placement()
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// The policy that makes the permission engine ask before a command runs on the host
    /// without the OS sandbox; install it in the engine (`PermissionEngineBuilder::policy`)
    /// whenever the backend may run commands unsandboxed after approval
    /// ([`Unsandboxed::AfterApproval`]).
    pub fn host_policy(&self) -> HostCommandPolicy {
        HostCommandPolicy::new(Arc::clone(&self.backend))
    }
}

#[async_trait::async_trait]
impl Tool for Bash {
    fn name(&self) -> &str {
        "Bash"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "description": {"type": "string"},
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600_000},
                "run_in_background": {"type": "boolean"},
                "dangerouslyDisableSandbox": {"type": "boolean"}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let command = str_field(&input, "command")?;
        if command.trim().is_empty() {
            return Err(ToolError::invalid_input("`command` is empty"));
        }
        if opt_bool(&input, "dangerouslyDisableSandbox")? {
            return Err(ToolError::Sandbox(
                "`dangerouslyDisableSandbox` is not honoured: commands always run under the sandbox".into(),
            ));
        }
        let background = opt_bool(&input, "run_in_background")?;
        let timeout = match opt_usize(&input, "timeout")? {
            None => DEFAULT_TIMEOUT,
            Some(ms) if ms == 0 || ms as u128 > MAX_TIMEOUT.as_millis() => {
                return Err(ToolError::invalid_input(format!(
                    "`timeout` is {ms} ms; give 1 to {} ms",
                    MAX_TIMEOUT.as_millis()
                )));
            }
            Some(ms) => Duration::from_millis(ms as u64),
        };
        // The parse the decision was made on, when it is this command's; else one made here,
        // which the checker and the WASI shell then share.
        let prepared = match &ctx.prepared {
            Some(p) if p.text == command => Arc::clone(p),
            _ => Arc::new(agent_core::shell::Prepared::new(command)),
        };
        let verdict = CommandChecker::new(&self.sandbox)
            .with_cwd(&ctx.cwd)
            .check_prepared(command, Some(&prepared));
        if !verdict.allowed {
            return Err(ToolError::Sandbox(format!(
                "the sandbox refused the command: {}",
                verdict.reason
            )));
        }
        let request = BashRequest {
            command: command.to_owned(),
            cwd: ctx.cwd.clone(),
            timeout,
            containment: ctx.containment.clone(),
            prepared: Some(prepared),
            view: ctx.view.clone(),
            // Ctrl-C of the turn stops a foreground command; a background one runs on.
            cancellation: if background {
                CancellationFlag::new()
            } else {
                ctx.cancellation.clone()
            },
        };
        let caps = self.caps.clone().unwrap_or_else(|| OutputCaps {
            spill_dir: ctx.cwd.join(SPILL_DIR),
            ..OutputCaps::default()
        });
        if background {
            return self.start_background(request, &caps.spill_dir);
        }
        let backend = Arc::clone(&self.backend);
        let outcome = tokio::task::spawn_blocking(move || backend.run(&request))
            .await
            .map_err(|e| ToolError::Execution(format!("the command's thread failed: {e}")))??;
        let stdout = caps.command_output(&outcome.stdout);
        let stderr = caps.command_output(&outcome.stderr);
        let mut out = json!({
            "stdout": stdout.inline,
            "stderr": stderr.inline,
            "interrupted": outcome.interrupted,
            "isImage": false,
            "exitCode": outcome.exit_code,
            "backend": outcome.backend,
        });
        if !outcome.notes.is_empty() {
            out["notes"] = json!(outcome.notes);
        }
        if let Some(c) = &ctx.containment {
            let mut record = json!(c);
            record["enforced"] = json!(outcome.enforced);
            out["containment"] = record;
        }
        if let Some(p) = &stdout.spilled {
            out["stdoutFile"] = json!(p);
        }
        if let Some(p) = &stderr.spilled {
            out["stderrFile"] = json!(p);
        }
        if let Some(why) = &outcome.stopped_by {
            out["stoppedBy"] = json!(why);
        }
        if outcome.cancelled {
            out["cancelled"] = json!(true);
        }
        if !outcome.commands.is_empty() {
            out["commands"] = Value::Array(outcome.commands);
        }
        Ok(ToolOutput {
            output: out,
            is_error: outcome.exit_code != Some(0),
        })
    }
}

/// Writes `value` to `path` whole (temporary file, then rename).
fn write_json(path: &Path, value: &Value) -> Result<(), ToolError> {
    let tmp: PathBuf = path.with_extension("json.tmp");
    std::fs::write(&tmp, value.to_string())
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| ToolError::Execution(format!("cannot write {}: {e}", path.display())))
}
