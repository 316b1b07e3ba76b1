//! Where a workspace keeps its state: `<state root>/<id>/state.json` (the real folder, the
//! shadow, options and the base snapshot), with the shadow tree in `<state root>/<id>/tree/`
//! unless placed elsewhere. The id is derived from the real folder's canonical path, so the
//! same folder always finds its workspace. The default state root is
//! `$AGENT_HOME/workspaces` (default `~/.agent/workspaces`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{WorkspaceError, io};
use super::snapshot::{Snapshot, sha256};

/// The state file's name inside a workspace's directory.
pub const STATE_FILE: &str = "state.json";

/// What is saved of a workspace.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// Format version (1).
    pub version: u32,
    /// The real folder (canonical).
    pub real: PathBuf,
    /// The shadow tree (canonical).
    pub shadow: PathBuf,
    /// The base snapshot: the real folder at import, advanced by each commit and refresh.
    pub base: Snapshot,
}

/// The directory of the workspace of `real` (canonical) under `root`.
pub fn dir_for(root: &Path, real: &Path) -> PathBuf {
    let id = sha256(real.as_os_str().as_encoded_bytes());
    root.join(&id[..16])
}

impl State {
    /// Reads `dir/state.json`.
    pub fn load(dir: &Path) -> Result<Self, WorkspaceError> {
        let path = dir.join(STATE_FILE);
        let text = std::fs::read(&path).map_err(io(&path))?;
        let state: Self = serde_json::from_slice(&text).map_err(|e| WorkspaceError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        if state.version != 1 {
            return Err(WorkspaceError::State {
                path,
                why: format!(
                    "format version {} is not known to this build",
                    state.version
                ),
            });
        }
        Ok(state)
    }

    /// Writes `dir/state.json` atomically and durably (temporary file, synced, then rename).
    pub fn save(&self, dir: &Path) -> Result<(), WorkspaceError> {
        let path = dir.join(STATE_FILE);
        let tmp = dir.join(format!(".{STATE_FILE}.tmp"));
        let bytes = serde_json::to_vec(self).map_err(|e| WorkspaceError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        std::io::Write::write_all(&mut f, &bytes).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))
    }
}

/// Every workspace directory under `root` whose shadow is `shadow` (canonical).
pub fn find_by_shadow(root: &Path, shadow: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(root).ok()?;
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|dir| State::load(dir).is_ok_and(|s| s.shadow == shadow))
}
