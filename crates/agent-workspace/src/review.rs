//! [`Review`]: the change set as it was shown to a person, pinned down path by path (what each
//! reviewed path held in the base, and the kind, content hash, mode or link target it will
//! hold), so that [`Workspace::commit_review`] applies exactly that and nothing else.

use serde::{Deserialize, Serialize};

use super::changes::{ChangeSet, looks_binary, prefix};
use super::error::WorkspaceError;
use super::shadow::Workspace;
use super::snapshot::{Entry, Snapshot};

/// One path a review touches (a rename touches two: the new path and the removed one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewedPath {
    /// The path, relative to the workspace root.
    pub path: String,
    /// What the base snapshot holds there (`None`: nothing; the commit adds it). The real
    /// folder must still hold this (or already hold `new`) for the commit to apply it.
    pub base: Option<Entry>,
    /// What the commit writes there: kind (file, or link with its target), sha256 and mode
    /// (`None`: the commit removes it).
    pub new: Option<Entry>,
}

/// A change set as reviewed: [`Review::changes`] is what is shown, [`Review::paths`] what a
/// commit of this review writes, hash for hash.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    changes: ChangeSet,
    paths: Vec<ReviewedPath>,
}

impl Review {
    /// The change set to show (kinds, renames, modes, binary).
    pub fn changes(&self) -> &ChangeSet {
        &self.changes
    }

    /// Every path the commit of this review writes or removes, sorted.
    pub fn paths(&self) -> &[ReviewedPath] {
        &self.paths
    }

    /// Whether there is nothing to commit.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The review of `set` between `base` and the shadow's snapshot `now`.
    pub(crate) fn of(set: ChangeSet, base: &Snapshot, now: &Snapshot) -> Self {
        let paths = set
            .touched()
            .into_iter()
            .map(|path| ReviewedPath {
                base: base.get(&path).cloned(),
                new: now.get(&path).cloned(),
                path,
            })
            .collect();
        Self {
            changes: set,
            paths,
        }
    }
}

impl Workspace {
    /// The change set of the shadow as a [`Review`]: show [`Review::changes`], ask, then
    /// [`Workspace::commit_review`] applies exactly what was shown.
    ///
    /// # Errors
    /// [`WorkspaceError::Io`] when the shadow cannot be read.
    pub fn review(&self) -> Result<Review, WorkspaceError> {
        let now = self.shadow_snapshot()?;
        let shadow = self.shadow().to_path_buf();
        let set = ChangeSet::between(self.base(), &now, &|rel| {
            prefix(&shadow, rel).is_some_and(|d| looks_binary(&d))
        });
        Ok(Review::of(set, self.base(), &now))
    }
}
