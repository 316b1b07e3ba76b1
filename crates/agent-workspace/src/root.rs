//! Which folder a run imports: the repository a directory belongs to, not the directory alone.
//!
//! `agent run` started in `repo/src` imports `repo/` (the Git top level: the nearest ancestor
//! holding a `.git` directory or `.git` file), so the build files and tests beside `src/` are
//! in the shadow too, and starts the agent in `src/` inside the shadow. A directory in no
//! repository is imported as it is.

use std::path::{Path, PathBuf};

/// The folder to import for work started in `dir` (canonical), and `dir`'s place inside it
/// (empty when they are the same).
///
/// ```
/// # let repo = tempfile::tempdir().unwrap();
/// let repo = std::fs::canonicalize(repo.path())?;
/// std::fs::create_dir_all(repo.join(".git"))?;
/// std::fs::create_dir_all(repo.join("src/app"))?;
/// let (root, inside) = agent_workspace::import_root(&repo.join("src/app"));
/// assert_eq!(root, repo);
/// assert_eq!(inside, std::path::Path::new("src/app"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn import_root(dir: &Path) -> (PathBuf, PathBuf) {
    let mut at = Some(dir);
    while let Some(d) = at {
        if std::fs::symlink_metadata(d.join(".git")).is_ok() {
            let inside = dir
                .strip_prefix(d)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            return (d.to_path_buf(), inside);
        }
        at = d.parent();
    }
    (dir.to_path_buf(), PathBuf::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_inside_a_repository_imports_the_repository() {
        let t = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(t.path()).unwrap();
        std::fs::write(repo.join(".git"), "gitdir: /elsewhere\n").unwrap();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        assert_eq!(
            import_root(&repo.join("a/b")),
            (repo.clone(), PathBuf::from("a/b"))
        );
        assert_eq!(import_root(&repo), (repo.clone(), PathBuf::new()));
    }

    #[test]
    fn a_directory_in_no_repository_is_imported_as_it_is() {
        let t = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(t.path()).unwrap().join("plain");
        std::fs::create_dir_all(&dir).unwrap();
        // The temporary directory itself may sit inside a repository on some machines.
        let (root, inside) = import_root(&dir);
        if root == dir {
            assert_eq!(inside, PathBuf::new());
        } else {
            assert!(dir.starts_with(&root) && root.join(".git").exists());
        }
    }
}
