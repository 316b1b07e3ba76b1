//! The trust store: folders whose project settings may grant capabilities.
//!
//! A project's `deny` and `ask` rules apply at once; its `allow` rules, additional directories
//! and default mode (and, later, its hooks) apply only once the user has trusted the folder, so
//! cloning a repository cannot pre-approve what it then asks the agent to run. Trust covers the
//! folder and everything below it. The store is `$AGENT_HOME/trust.json`:
//!
//! ```json
//! {"version": 1, "trusted": [{"path": "/home/me/src/app", "trustedAt": "2026-01-01T00:00:00Z"}]}
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One trusted folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustedFolder {
    /// The folder, canonical.
    pub path: PathBuf,
    /// When it was trusted (RFC 3339).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    #[serde(default)]
    trusted: Vec<TrustedFolder>,
}

/// Occurs when the trust store cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FolderTrustError {
    /// Occurs when the file exists but cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The store file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Occurs when the file is not a valid trust store.
    #[error("{path}: not a valid trust store ({source}); fix or delete the file")]
    Format {
        /// The store file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

/// The trusted folders, backed by a JSON file.
#[derive(Debug, Clone)]
pub struct TrustedFolders {
    path: PathBuf,
    folders: Vec<TrustedFolder>,
}

impl TrustedFolders {
    /// Loads the store at `path`; a missing file is an empty store.
    ///
    /// # Errors
    /// [`FolderTrustError`] when the file exists but cannot be read or parsed.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, FolderTrustError> {
        let path = path.into();
        let folders = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let file: TrustFile =
                    serde_json::from_str(&text).map_err(|source| FolderTrustError::Format {
                        path: path.clone(),
                        source,
                    })?;
                file.trusted
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => return Err(FolderTrustError::Io { path, source }),
        };
        Ok(Self { path, folders })
    }

    /// Whether `dir` (canonicalised) is a trusted folder or inside one.
    pub fn is_trusted(&self, dir: &Path) -> bool {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.folders.iter().any(|f| dir.starts_with(&f.path))
    }

    /// Trusts `dir` and saves the store.
    ///
    /// # Errors
    /// [`FolderTrustError::Io`] when the store cannot be written.
    pub fn trust(&mut self, dir: &Path) -> Result<(), FolderTrustError> {
        let dir = std::fs::canonicalize(dir).map_err(|source| FolderTrustError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        if !self.folders.iter().any(|f| f.path == dir) {
            self.folders.push(TrustedFolder {
                path: dir,
                trusted_at: crate::events::now_rfc3339(),
            });
        }
        self.save()
    }

    /// Removes `dir` from the store and saves it; returns whether it was there.
    ///
    /// # Errors
    /// [`FolderTrustError::Io`] when the store cannot be written.
    pub fn untrust(&mut self, dir: &Path) -> Result<bool, FolderTrustError> {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let before = self.folders.len();
        self.folders.retain(|f| f.path != dir);
        let removed = before != self.folders.len();
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    /// The trusted folders.
    pub fn folders(&self) -> &[TrustedFolder] {
        &self.folders
    }

    fn save(&self) -> Result<(), FolderTrustError> {
        let io = |source| FolderTrustError::Io {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = TrustFile {
            version: 1,
            trusted: self.folders.clone(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| io(std::io::Error::other(e)))?;
        // Write a sibling and rename it over the store, so a crash never leaves half a file.
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n").map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let store_path = tmp.path().join("home/trust.json");
        let proj = tmp.path().join("proj");
        std::fs::create_dir_all(proj.join("sub")).unwrap();
        let mut store = TrustedFolders::load(&store_path).unwrap();
        assert!(!store.is_trusted(&proj));
        store.trust(&proj).unwrap();
        let store2 = TrustedFolders::load(&store_path).unwrap();
        assert!(store2.is_trusted(&proj));
        assert!(store2.is_trusted(&proj.join("sub")));
        assert!(!store2.is_trusted(tmp.path()));
        let mut store3 = store2;
        assert!(store3.untrust(&proj).unwrap());
        assert!(!TrustedFolders::load(&store_path).unwrap().is_trusted(&proj));
    }

    #[test]
    fn malformed_store_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("trust.json");
        std::fs::write(&p, "{nope").unwrap();
        assert!(
            TrustedFolders::load(&p)
                .unwrap_err()
                .to_string()
                .contains("fix or delete")
        );
    }
}
