//! File access for the built-in tools: every path goes through agent-sandbox's
//! [`SandboxedFs`], granted only the workspace root (the call's `cwd`) and the session's
//! additional directories, so no tool reads or writes outside them through `..`, an absolute
//! path or a symlink (including one swapped in after a check: the capability handle resolves
//! beneath the root).

use std::path::{Path, PathBuf};

use agent_core::tools::{ToolContext, ToolError};
use agent_sandbox::paths::{FsError, SandboxedFs};
use agent_sandbox::settings::SandboxSettings;

/// A call's view of the file system.
pub struct Confined {
    fs: SandboxedFs,
    cwd: PathBuf,
}

impl Confined {
    /// The view for one call: `ctx.cwd` and `ctx.additional_dirs`, read-write (the permission
    /// engine's deny rules were applied before the call was let through).
    ///
    /// # Errors
    /// [`ToolError::Sandbox`] when a root cannot be opened.
    pub fn for_call(ctx: &ToolContext) -> Result<Self, ToolError> {
        let mut roots = vec![ctx.cwd.clone()];
        roots.extend(ctx.additional_dirs.iter().cloned());
        let settings = SandboxSettings {
            base_dir: Some(ctx.cwd.clone()),
            read_write_dirs: roots.clone(),
            allowed_read_paths: Some(roots.clone()),
            allowed_write_paths: Some(roots),
            ..SandboxSettings::default()
        };
        let fs = SandboxedFs::new(&settings)
            .map_err(|e| ToolError::Sandbox(format!("cannot open the workspace: {e}")))?;
        Ok(Self {
            fs,
            cwd: ctx.cwd.clone(),
        })
    }

    /// `input` made absolute against the workspace root (Claude Code's tools take absolute
    /// paths; relative ones are accepted and resolved against the root).
    pub fn path(&self, input: &str) -> PathBuf {
        let p = Path::new(input);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// The workspace root.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Reads a whole file.
    ///
    /// # Errors
    /// [`ToolError`] saying why (outside the workspace, missing, a directory, ...).
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, ToolError> {
        self.fs.read(path).map_err(|e| fs_error(path, e))
    }

    /// Opens a file for reading.
    ///
    /// # Errors
    /// [`ToolError`] saying why (outside the workspace, missing, a directory, ...).
    pub fn open(&self, path: &Path) -> Result<std::fs::File, ToolError> {
        self.fs
            .open(path)
            .map(|f| f.into_std())
            .map_err(|e| fs_error(path, e))
    }

    /// The sandboxed file system under the call's view (for reading a whole tree once,
    /// [`SandboxedFs::read_tree`]).
    pub fn sandbox(&self) -> &SandboxedFs {
        &self.fs
    }

    /// Writes a file, creating its parent directories.
    ///
    /// # Errors
    /// [`ToolError`] saying why.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
        if let Some(parent) = path.parent()
            && !parent.is_dir()
        {
            self.fs
                .create_dir_all(parent)
                .map_err(|e| fs_error(parent, e))?;
        }
        self.fs.write(path, bytes).map_err(|e| fs_error(path, e))
    }

    /// Refuses a `path` the tools may not write (outside the workspace, denied), before
    /// anything about the file is looked at.
    ///
    /// # Errors
    /// [`ToolError::Sandbox`] naming the path.
    pub fn check_write(&self, path: &Path) -> Result<(), ToolError> {
        let v = self
            .fs
            .policy()
            .check(path, agent_sandbox::paths::Op::Write);
        let resolved_inside = agent_sandbox::paths::resolve(path)
            .map(|real| {
                self.fs
                    .policy()
                    .check(&real, agent_sandbox::paths::Op::Write)
                    .allowed
            })
            .unwrap_or(true);
        if v.allowed && resolved_inside {
            Ok(())
        } else {
            Err(ToolError::Sandbox(format!(
                "{} is outside the workspace or denied ({}); tools work only inside the workspace",
                path.display(),
                v.reason
            )))
        }
    }

    /// Whether `path` may be read (the policy's verdict, without touching the file).
    pub fn readable(&self, path: &Path) -> bool {
        self.fs
            .policy()
            .check(path, agent_sandbox::paths::Op::Read)
            .allowed
    }
}

/// A sandbox refusal or an I/O error as the model should read it.
pub fn fs_error(path: &Path, e: FsError) -> ToolError {
    match e {
        FsError::Denied(v) => ToolError::Sandbox(format!(
            "{} is outside the workspace or denied ({}); tools work only inside the workspace",
            path.display(),
            v.reason
        )),
        FsError::NotUnderRoot(p) => ToolError::Sandbox(format!(
            "{} is outside the workspace; tools work only inside it",
            p.display()
        )),
        FsError::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => ToolError::Execution(format!(
                "{} does not exist; check the path (Glob finds files)",
                path.display()
            )),
            std::io::ErrorKind::IsADirectory => ToolError::Execution(format!(
                "{} is a directory, not a file; Glob lists its files",
                path.display()
            )),
            _ if source.raw_os_error() == Some(40)
                || source.to_string().contains("outside of the filesystem") =>
            {
                ToolError::Sandbox(format!(
                    "{} leads outside the workspace through a symlink; refused",
                    path.display()
                ))
            }
            _ => ToolError::Execution(format!("{}: {source}", path.display())),
        },
        other => ToolError::Execution(other.to_string()),
    }
}
