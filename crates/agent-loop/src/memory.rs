//! Project memory: the instruction files a user keeps for agents (`AGENTS.md`, Claude Code's
//! `CLAUDE.md`), found and read as codex and Claude Code find them, for the system prompt.
//!
//! [`MemoryLoader`] reads, in this order (lowest precedence first: a later file is nearer to
//! where the agent works and wins where two disagree):
//!
//! 1. the user's own files: `~/.claude/CLAUDE.md`, then `$AGENT_HOME/AGENTS.md`
//!    ([`MemoryLoader::user_defaults`]);
//! 2. each directory from the repository root down to the folder the session starts in (the
//!    root is what `agent_workspace::import_root` imports: the nearest ancestor with a
//!    `.git`, else the folder itself; nothing above it is read), and in each directory
//!    `AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, then `CLAUDE.local.md` (the user's private
//!    notes come last at their level, as in Claude Code).
//!
//! The Claude Code files (`CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`,
//! `~/.claude/CLAUDE.md`) are read unless [`MemoryLoader::claude`] turns them off. A file
//! reached twice (a `CLAUDE.md` that is a link to `AGENTS.md`) is read once. `@path` imports
//! are not expanded: the text is given as written.
//!
//! All files together may take [`MAX_MEMORY_BYTES`] (32 KiB, codex's
//! `project_doc_max_bytes`): the file that crosses the limit is cut at a line end with a
//! marker naming it, the files after it are left out, and [`Memory::warnings`] says which.
//! An unreadable file is skipped with a warning; a session never fails over memory.
//!
//! ```
//! use agent_loop::memory::MemoryLoader;
//!
//! let repo = tempfile::tempdir()?;
//! std::fs::create_dir_all(repo.path().join(".git"))?;
//! std::fs::create_dir_all(repo.path().join("app"))?;
//! std::fs::write(repo.path().join("AGENTS.md"), "Run `make test` before you finish.\n")?;
//! std::fs::write(repo.path().join("app/CLAUDE.md"), "The app uses 2-space indents.\n")?;
//!
//! let memory = MemoryLoader::new(repo.path(), repo.path().join("app")).load();
//! let names: Vec<_> = memory.files.iter().map(|f| f.path.strip_prefix(repo.path()).unwrap()).collect();
//! assert_eq!(names, [std::path::Path::new("AGENTS.md"), std::path::Path::new("app/CLAUDE.md")]);
//! assert!(memory.render().contains("make test"));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::path::{Path, PathBuf};

/// The most bytes all memory files together may take (codex's `project_doc_max_bytes`): a
/// system prompt is sent with every request, so a large one costs on every turn and crowds
/// out the conversation.
pub const MAX_MEMORY_BYTES: usize = 32 * 1024;

/// The file names read in each directory, in order, and whether each is Claude Code's.
const PER_DIRECTORY: &[(&str, bool)] = &[
    ("AGENTS.md", false),
    ("CLAUDE.md", true),
    (".claude/CLAUDE.md", true),
    ("CLAUDE.local.md", true),
];

/// Whose a memory file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryScope {
    /// The user's own, for every project (`~/.claude/CLAUDE.md`, `$AGENT_HOME/AGENTS.md`).
    User,
    /// The project's, shared through version control (`AGENTS.md`, `CLAUDE.md`).
    Project,
    /// The user's private notes for this project (`CLAUDE.local.md`).
    Local,
}

impl MemoryScope {
    /// A few words for the prompt.
    pub fn describe(self) -> &'static str {
        match self {
            Self::User => "the user's own instructions, for every project",
            Self::Project => "project instructions, checked into the codebase",
            Self::Local => "the user's private instructions for this project",
        }
    }
}

/// One memory file as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryFile {
    /// Where it is.
    pub path: PathBuf,
    /// Whose it is.
    pub scope: MemoryScope,
    /// Its text (cut when the limit was reached in it).
    pub text: String,
    /// Whether [`Self::text`] was cut.
    pub truncated: bool,
}

/// The memory files of a session, in order (lowest precedence first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The files read.
    pub files: Vec<MemoryFile>,
    /// What the user should know: unreadable files, the limit reached.
    pub warnings: Vec<String>,
}

impl Memory {
    /// Whether no file was found.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The files as prompt text: each under a heading naming its path and whose it is, in
    /// order; empty when there are none.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!(
                "Contents of {} ({}):\n\n{}",
                f.path.display(),
                f.scope.describe(),
                f.text.trim_end()
            ));
            out.push('\n');
        }
        out
    }
}

/// Finds and reads memory files (see the [module docs](self) for the order).
#[derive(Clone, Debug)]
pub struct MemoryLoader {
    user: Vec<PathBuf>,
    root: PathBuf,
    folder: PathBuf,
    claude: bool,
    max_bytes: usize,
}

impl MemoryLoader {
    /// A loader for a session started in `folder`, inside the repository (or folder) `root`.
    /// Defaults: no user files (add them with [`Self::user_defaults`] or [`Self::user_file`]),
    /// Claude Code's files read, [`MAX_MEMORY_BYTES`]. A `folder` outside `root` reads `folder`
    /// alone.
    pub fn new(root: impl Into<PathBuf>, folder: impl Into<PathBuf>) -> Self {
        Self {
            user: Vec::new(),
            root: root.into(),
            folder: folder.into(),
            claude: true,
            max_bytes: MAX_MEMORY_BYTES,
        }
    }

    /// Adds the user's standard files: `home/.claude/CLAUDE.md` (when Claude Code's files are
    /// read), then `agent_home/AGENTS.md`.
    pub fn user_defaults(mut self, home: &Path, agent_home: &Path) -> Self {
        self.user.push(home.join(".claude/CLAUDE.md"));
        self.user.push(agent_home.join("AGENTS.md"));
        self
    }

    /// Adds one user file (read before every project file).
    pub fn user_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.user.push(path.into());
        self
    }

    /// Reads Claude Code's files (`CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`,
    /// `~/.claude/CLAUDE.md`) or not (default: read).
    pub fn claude(mut self, read: bool) -> Self {
        self.claude = read;
        self
    }

    /// Sets the limit on all files together (default [`MAX_MEMORY_BYTES`]).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The files that would be read, in order, whether or not they exist.
    pub fn candidates(&self) -> Vec<(PathBuf, MemoryScope)> {
        let mut out = Vec::new();
        for p in &self.user {
            if self.claude || !is_claude_file(p) {
                out.push((p.clone(), MemoryScope::User));
            }
        }
        for dir in self.directories() {
            for (name, claude) in PER_DIRECTORY {
                if *claude && !self.claude {
                    continue;
                }
                let scope = if *name == "CLAUDE.local.md" {
                    MemoryScope::Local
                } else {
                    MemoryScope::Project
                };
                out.push((dir.join(name), scope));
            }
        }
        out
    }

    /// The directories read, from the root down to the folder.
    fn directories(&self) -> Vec<PathBuf> {
        let Ok(inside) = self.folder.strip_prefix(&self.root) else {
            return vec![self.folder.clone()];
        };
        let mut dirs = vec![self.root.clone()];
        let mut at = self.root.clone();
        for c in inside.components() {
            at.push(c);
            dirs.push(at.clone());
        }
        dirs
    }

    /// Reads every file that exists, within the limit.
    pub fn load(&self) -> Memory {
        let mut memory = Memory::default();
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut left = self.max_bytes;
        let mut cut_at: Option<PathBuf> = None;
        let mut left_out: Vec<String> = Vec::new();
        for (path, scope) in self.candidates() {
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    continue;
                }
                // A directory of that name is not a memory file.
                Err(_) if path.is_dir() => continue,
                Err(e) => {
                    memory.warnings.push(format!(
                        "{}: cannot read this memory file ({e}); it is left out of the system prompt",
                        path.display()
                    ));
                    continue;
                }
            };
            let identity = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&identity) {
                continue;
            }
            seen.push(identity);
            let text = match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(e) => {
                    memory.warnings.push(format!(
                        "{}: not UTF-8 text; invalid bytes are shown as \u{fffd}",
                        path.display()
                    ));
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            if cut_at.is_some() {
                left_out.push(path.display().to_string());
                continue;
            }
            if text.len() <= left {
                left -= text.len();
                memory.files.push(MemoryFile {
                    path,
                    scope,
                    text,
                    truncated: false,
                });
                continue;
            }
            let mut kept = cut(&text, left).to_owned();
            if !kept.is_empty() && !kept.ends_with('\n') {
                kept.push('\n');
            }
            let marker = format!(
                "[cut here: {} is {} bytes and the memory files may take {} bytes together; the rest of this file and any later memory file are left out]",
                path.display(),
                text.len(),
                self.max_bytes
            );
            memory.files.push(MemoryFile {
                path: path.clone(),
                scope,
                text: format!("{kept}{marker}"),
                truncated: true,
            });
            cut_at = Some(path);
        }
        if let Some(p) = cut_at {
            let mut w = format!(
                "memory files exceed {} bytes together: {} was cut",
                self.max_bytes,
                p.display()
            );
            if !left_out.is_empty() {
                w.push_str(&format!(" and {} left out", left_out.join(", ")));
            }
            w.push_str("; shorten them to give the model all of it");
            memory.warnings.push(w);
        }
        memory
    }
}

/// Whether `path` is one of Claude Code's memory files.
fn is_claude_file(path: &Path) -> bool {
    matches!(
        path.file_name().and_then(|n| n.to_str()),
        Some("CLAUDE.md" | "CLAUDE.local.md")
    )
}

/// The longest prefix of `text` of at most `limit` bytes that ends at a line end (or at a
/// character boundary when the first line is already longer).
fn cut(text: &str, limit: usize) -> &str {
    let mut end = limit.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    match head.rfind('\n') {
        Some(i) => &text[..=i],
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn names(memory: &Memory, base: &Path) -> Vec<String> {
        memory
            .files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(base)
                    .unwrap_or(&f.path)
                    .display()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn user_files_come_first_then_the_root_down_to_the_folder() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path();
        let repo = base.join("repo");
        for p in [
            "home/.claude/CLAUDE.md",
            "agent/AGENTS.md",
            "AGENTS.md", // above the root: never read
            "repo/CLAUDE.local.md",
            "repo/CLAUDE.md",
            "repo/AGENTS.md",
            "repo/a/.claude/CLAUDE.md",
            "repo/a/b/AGENTS.md",
            "repo/a/b/c/AGENTS.md", // below the folder: never read
        ] {
            write(&base.join(p), p);
        }
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let memory = MemoryLoader::new(&repo, repo.join("a/b"))
            .user_defaults(&base.join("home"), &base.join("agent"))
            .load();
        assert_eq!(
            names(&memory, base),
            [
                "home/.claude/CLAUDE.md",
                "agent/AGENTS.md",
                "repo/AGENTS.md",
                "repo/CLAUDE.md",
                "repo/CLAUDE.local.md",
                "repo/a/.claude/CLAUDE.md",
                "repo/a/b/AGENTS.md",
            ]
        );
        let scopes: Vec<MemoryScope> = memory.files.iter().map(|f| f.scope).collect();
        assert_eq!(
            scopes,
            [
                MemoryScope::User,
                MemoryScope::User,
                MemoryScope::Project,
                MemoryScope::Project,
                MemoryScope::Local,
                MemoryScope::Project,
                MemoryScope::Project,
            ]
        );
        assert!(memory.warnings.is_empty(), "{:?}", memory.warnings);
        let text = memory.render();
        assert!(
            text.find("repo/AGENTS.md").unwrap() < text.find("repo/a/b/AGENTS.md").unwrap(),
            "{text}"
        );
    }

    #[test]
    fn claude_files_are_left_out_when_turned_off() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path();
        write(&base.join("home/.claude/CLAUDE.md"), "x");
        write(&base.join("agent/AGENTS.md"), "x");
        write(&base.join("repo/CLAUDE.md"), "x");
        write(&base.join("repo/AGENTS.md"), "x");
        let memory = MemoryLoader::new(base.join("repo"), base.join("repo"))
            .user_defaults(&base.join("home"), &base.join("agent"))
            .claude(false)
            .load();
        assert_eq!(names(&memory, base), ["agent/AGENTS.md", "repo/AGENTS.md"]);
    }

    #[test]
    fn a_file_reached_twice_through_a_link_is_read_once() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path();
        write(&repo.join("AGENTS.md"), "shared instructions");
        std::os::unix::fs::symlink("AGENTS.md", repo.join("CLAUDE.md")).unwrap();
        let memory = MemoryLoader::new(repo, repo).load();
        assert_eq!(names(&memory, repo), ["AGENTS.md"]);
        assert_eq!(memory.render().matches("shared instructions").count(), 1);
    }

    #[test]
    fn the_file_crossing_the_limit_is_cut_at_a_line_with_a_marker_and_later_files_are_left_out_with_a_warning()
     {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path();
        write(&repo.join("AGENTS.md"), "first line\nsecond line\n");
        write(&repo.join("CLAUDE.md"), "alpha\nbeta\ngamma\n");
        write(&repo.join("CLAUDE.local.md"), "never seen\n");
        let limit = "first line\nsecond line\n".len() + "alpha\nbe".len();
        let memory = MemoryLoader::new(repo, repo).max_bytes(limit).load();
        assert_eq!(names(&memory, repo), ["AGENTS.md", "CLAUDE.md"]);
        assert!(!memory.files[0].truncated);
        let cut = &memory.files[1];
        assert!(cut.truncated);
        assert!(cut.text.starts_with("alpha\n[cut here: "), "{}", cut.text);
        assert!(!cut.text.contains("beta"), "{}", cut.text);
        assert_eq!(memory.warnings.len(), 1, "{:?}", memory.warnings);
        let w = &memory.warnings[0];
        assert!(w.contains("CLAUDE.md was cut"), "{w}");
        assert!(w.contains("CLAUDE.local.md left out"), "{w}");
        assert!(!memory.render().contains("never seen"));
    }

    #[test]
    fn the_default_limit_is_32_kib_in_total() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path();
        let line = "x".repeat(99) + "\n";
        write(&repo.join("AGENTS.md"), &line.repeat(200));
        write(&repo.join("CLAUDE.md"), &line.repeat(200));
        let memory = MemoryLoader::new(repo, repo).load();
        let kept: usize = memory
            .files
            .iter()
            .map(|f| f.text.lines().filter(|l| *l == line.trim_end()).count())
            .sum();
        assert_eq!(kept * 100, 32 * 1024 / 100 * 100);
        assert!(memory.files[1].truncated);
    }

    #[test]
    fn a_folder_outside_the_root_reads_the_folder_alone() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("b/AGENTS.md"), "b");
        write(&t.path().join("a/AGENTS.md"), "a");
        let memory = MemoryLoader::new(t.path().join("a"), t.path().join("b")).load();
        assert_eq!(names(&memory, t.path()), ["b/AGENTS.md"]);
    }

    #[test]
    fn empty_and_missing_files_are_skipped_quietly() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("AGENTS.md"), "  \n");
        std::fs::create_dir_all(t.path().join("CLAUDE.md")).unwrap();
        let memory = MemoryLoader::new(t.path(), t.path()).load();
        assert!(memory.is_empty());
        assert!(memory.warnings.is_empty(), "{:?}", memory.warnings);
        assert_eq!(memory.render(), "");
    }
}
