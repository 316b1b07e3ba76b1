//! The backends: none, bubblewrap, sandbox-exec.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::{ExecError, ExecRequest, OuterSandbox, Unavailable, Wrapped};
use crate::commands::which;
use crate::profile::{bwrap, sbpl};

/// No OS sandbox: the command runs as is, with the limits only.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoneBackend;

impl OuterSandbox for NoneBackend {
    fn name(&self) -> &'static str {
        "none"
    }

    fn probe(&self) -> Result<(), Unavailable> {
        Ok(())
    }

    fn wrap(&self, request: &ExecRequest) -> Result<Wrapped, ExecError> {
        let (program, args) = request
            .command
            .split_first()
            .ok_or_else(|| ExecError::Invalid("no command to run".into()))?;
        Ok(Wrapped {
            program: program.clone(),
            args: args.to_vec(),
            mounts: Vec::new(),
            network: true,
            policy_file: None,
        })
    }
}

/// Linux bubblewrap, rendered by [`bwrap::render`].
#[derive(Debug, Default)]
pub struct BwrapBackend {
    /// The `bwrap` program (found on `PATH` when `None`).
    pub program: Option<PathBuf>,
    probed: OnceLock<Result<PathBuf, Unavailable>>,
}

impl BwrapBackend {
    /// A backend using `program` (or `bwrap` from `PATH`).
    pub fn new(program: Option<PathBuf>) -> Self {
        Self {
            program,
            probed: OnceLock::new(),
        }
    }

    fn found(&self) -> Result<PathBuf, Unavailable> {
        self.probed
            .get_or_init(|| {
                let program = match &self.program {
                    Some(p) => p.clone(),
                    None => which("bwrap", &path_dirs()).ok_or_else(|| Unavailable {
                        backend: "bwrap",
                        missing: "bwrap (bubblewrap) is not installed or not on PATH".into(),
                        fix: "install it (`apt install bubblewrap`, `dnf install bubblewrap`)".into(),
                    })?,
                };
                // A real start: bwrap may be installed where namespaces are not allowed
                // (containers, hardened kernels).
                let out = Command::new(&program)
                    .args(["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--as-pid-1", "--unshare-net"])
                    .args(["--die-with-parent", "--", "true"])
                    .stdin(Stdio::null())
                    .output()
                    .map_err(|e| Unavailable {
                        backend: "bwrap",
                        missing: format!("{} cannot be started: {e}", program.display()),
                        fix: "check the bwrap installation".into(),
                    })?;
                if out.status.success() {
                    Ok(program)
                } else {
                    Err(Unavailable {
                        backend: "bwrap",
                        missing: format!(
                            "bwrap cannot create namespaces here ({})",
                            String::from_utf8_lossy(&out.stderr).trim()
                        ),
                        fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor userns policy), or run where they are allowed".into(),
                    })
                }
            })
            .clone()
    }
}

impl OuterSandbox for BwrapBackend {
    fn name(&self) -> &'static str {
        "bwrap"
    }

    fn probe(&self) -> Result<(), Unavailable> {
        self.found().map(|_| ())
    }

    fn wrap(&self, request: &ExecRequest) -> Result<Wrapped, ExecError> {
        if request.command.is_empty() {
            return Err(ExecError::Invalid("no command to run".into()));
        }
        let program = self.found()?;
        // bubblewrap refuses to start when a bind source is missing; say which, and why it
        // matters, before it does.
        let plan = &request.plan;
        let dirs = plan
            .add_dirs_ro
            .iter()
            .map(|g| ("--add-dirs-ro", g))
            .chain(plan.add_dirs.iter().map(|g| ("--add-dirs", g)))
            .chain(plan.workdir.iter().map(|(g, _)| ("the workdir", g)));
        for (what, g) in dirs {
            if !g.path.is_dir() {
                return Err(ExecError::Invalid(format!(
                    "{what} {} is not an existing directory; create it or leave it out",
                    g.path.display()
                )));
            }
        }
        let rendered = bwrap::render(&request.plan, &request.env);
        let mut args = rendered.args;
        args.extend(request.command.iter().cloned());
        Ok(Wrapped {
            program: program.to_string_lossy().into_owned(),
            args,
            mounts: rendered.mounts,
            network: rendered.network,
            policy_file: None,
        })
    }
}

/// macOS `sandbox-exec` with the policy of [`sbpl::render`] in a 0600 temporary file.
#[derive(Clone, Copy, Debug, Default)]
pub struct SandboxExecBackend;

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

impl OuterSandbox for SandboxExecBackend {
    fn name(&self) -> &'static str {
        "sandbox-exec"
    }

    fn probe(&self) -> Result<(), Unavailable> {
        if cfg!(target_os = "macos") && Path::new(SANDBOX_EXEC).exists() {
            Ok(())
        } else {
            Err(Unavailable {
                backend: "sandbox-exec",
                missing: format!("{SANDBOX_EXEC} (Seatbelt) exists only on macOS"),
                fix: "use `--backend bwrap` on Linux".into(),
            })
        }
    }

    fn wrap(&self, request: &ExecRequest) -> Result<Wrapped, ExecError> {
        if request.command.is_empty() {
            return Err(ExecError::Invalid("no command to run".into()));
        }
        let policy = sbpl::render(&request.plan);
        let file = std::env::temp_dir().join(format!("agent-sandbox-{}.sb", uuid::Uuid::new_v4()));
        write_private(&file, policy.as_bytes())?;
        let mut args = vec!["-f".to_owned(), file.to_string_lossy().into_owned()];
        args.extend(request.command.iter().cloned());
        Ok(Wrapped {
            program: SANDBOX_EXEC.to_owned(),
            args,
            mounts: Vec::new(),
            network: request.plan.network(),
            policy_file: Some(file),
        })
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// The backend called `name` (`none`, `bwrap`, `sandbox-exec`).
///
/// # Errors
/// An unknown name, with the valid ones.
pub fn backend_named(name: &str) -> Result<Box<dyn OuterSandbox>, String> {
    match name {
        "none" => Ok(Box::new(NoneBackend)),
        "bwrap" => Ok(Box::new(BwrapBackend::new(None))),
        "sandbox-exec" => Ok(Box::new(SandboxExecBackend)),
        other => Err(format!(
            "unknown sandbox backend `{other}`; valid: none, bwrap, sandbox-exec"
        )),
    }
}
