//! The shell's view of the workspace: guest paths (`/` is the workspace root) resolved
//! lexically and kept inside it, and every file operation done through a capability handle on
//! the root (`cap_std`, `openat2(RESOLVE_BENEATH)` on Linux), so a symlink cannot lead out.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// A path inside the workspace after lexical resolution: its components from the root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GuestPath {
    components: Vec<String>,
}

/// The path climbs above the workspace root (`../x` from `/`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Escape;

impl GuestPath {
    /// The root, `/`.
    pub fn root() -> Self {
        Self::default()
    }

    /// Resolves `path` against the directory `cwd`: an absolute `path` starts at the root,
    /// `.` and empty segments are dropped, `..` removes the previous segment. Climbing above
    /// the root is an [`Escape`], never clamped.
    pub fn resolve(cwd: &Self, path: &str) -> Result<Self, Escape> {
        let mut components = if path.starts_with('/') {
            Vec::new()
        } else {
            cwd.components.clone()
        };
        for segment in path.split('/') {
            match segment {
                "" | "." => {}
                ".." => {
                    components.pop().ok_or(Escape)?;
                }
                name => components.push(name.to_owned()),
            }
        }
        Ok(Self { components })
    }

    /// The path as the guest sees it: `/`, `/src`, `/src/lib`.
    pub fn guest(&self) -> String {
        if self.components.is_empty() {
            return "/".to_owned();
        }
        let mut out = String::new();
        for c in &self.components {
            out.push('/');
            out.push_str(c);
        }
        out
    }

    /// The path relative to the workspace root on the host (`.` for the root).
    pub fn relative(&self) -> PathBuf {
        if self.components.is_empty() {
            return PathBuf::from(".");
        }
        self.components.iter().collect()
    }

    /// The path one segment deeper.
    pub fn join(&self, name: &str) -> Self {
        let mut components = self.components.clone();
        components.push(name.to_owned());
        Self { components }
    }

    /// The path one segment up, or [`Escape`] at the root.
    pub fn parent(&self) -> Result<Self, Escape> {
        let mut components = self.components.clone();
        components.pop().ok_or(Escape)?;
        Ok(Self { components })
    }
}

/// A handle on the workspace root.
#[derive(Debug)]
pub(crate) struct Workspace {
    dir: Dir,
}

impl Workspace {
    /// Opens the host directory `root`.
    pub fn open(root: &Path) -> io::Result<Self> {
        Ok(Self {
            dir: Dir::open_ambient_dir(root, ambient_authority())?,
        })
    }

    /// Opens a file for reading (`< file`).
    pub fn open_read(&self, path: &GuestPath) -> io::Result<File> {
        let file = self.dir.open(path.relative())?;
        if file.metadata()?.is_dir() {
            // bash opens a directory without complaint and the command fails reading it; a
            // clear error at the redirect is kinder and changes no exit status (both are 1).
            return Err(io::Error::from(io::ErrorKind::IsADirectory));
        }
        Ok(file.into_std())
    }

    /// Opens a file for writing (`> file`, `>> file`), creating it.
    pub fn open_write(&self, path: &GuestPath, append: bool) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options.write(true).create(true);
        if append {
            options.append(true);
        } else {
            options.truncate(true);
        }
        Ok(self.dir.open_with(path.relative(), &options)?.into_std())
    }

    /// Whether `path` is a directory (symlinks inside the workspace followed).
    pub fn is_dir(&self, path: &GuestPath) -> io::Result<bool> {
        Ok(self.dir.metadata(path.relative())?.is_dir())
    }

    /// The metadata of what `path` names (symlinks inside the workspace followed).
    pub fn metadata(&self, path: &GuestPath) -> io::Result<cap_std::fs::Metadata> {
        self.dir.metadata(path.relative())
    }

    /// The metadata of `path` itself (a symlink is not followed).
    pub fn symlink_metadata(&self, path: &GuestPath) -> io::Result<cap_std::fs::Metadata> {
        self.dir.symlink_metadata(path.relative())
    }

    /// Whether the existing file at `path` opens for writing (nothing created or truncated).
    pub fn can_write(&self, path: &GuestPath) -> bool {
        let mut options = OpenOptions::new();
        options.write(true);
        self.dir.open_with(path.relative(), &options).is_ok()
    }

    /// Whether `a` and `b` are the same file (device and inode).
    pub fn same_file(&self, a: &GuestPath, b: &GuestPath) -> bool {
        use cap_std::fs::MetadataExt;
        match (self.metadata(a), self.metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }

    /// Whether something (a dangling symlink included) exists at `path`.
    pub fn exists(&self, path: &GuestPath) -> bool {
        self.dir.symlink_metadata(path.relative()).is_ok()
    }

    /// The names in directory `path` that are UTF-8 (others cannot become arguments), in no
    /// particular order. An unreadable directory has no names.
    pub fn names(&self, path: &GuestPath) -> Vec<String> {
        let Ok(entries) = self.dir.read_dir(path.relative()) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect()
    }
}

/// The C library's text for an I/O error, as bash prints it (`No such file or directory`).
pub(crate) fn strerror(e: &io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        let text = io::Error::from_raw_os_error(code).to_string();
        return match text.rfind(" (os error") {
            Some(i) => text[..i].to_owned(),
            None => text,
        };
    }
    match e.kind() {
        io::ErrorKind::NotFound => "No such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        io::ErrorKind::IsADirectory => "Is a directory".to_owned(),
        io::ErrorKind::NotADirectory => "Not a directory".to_owned(),
        io::ErrorKind::AlreadyExists => "File exists".to_owned(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(cwd: &str, path: &str) -> Result<String, Escape> {
        let cwd = GuestPath::resolve(&GuestPath::root(), cwd)?;
        GuestPath::resolve(&cwd, path).map(|p| p.guest())
    }

    #[test]
    fn guest_paths_resolve_lexically_inside_the_root() {
        assert_eq!(resolve("/", "a/b"), Ok("/a/b".to_owned()));
        assert_eq!(resolve("/a", "../b/./c//"), Ok("/b/c".to_owned()));
        assert_eq!(resolve("/a", "/etc/x"), Ok("/etc/x".to_owned()));
        assert_eq!(resolve("/a", ".."), Ok("/".to_owned()));
        assert_eq!(resolve("/", "../x"), Err(Escape));
        assert_eq!(resolve("/a", "../../x"), Err(Escape));
        assert_eq!(resolve("/", "/.."), Err(Escape));
        assert_eq!(
            GuestPath::resolve(&GuestPath::root(), "a/b").map(|p| p.relative()),
            Ok(PathBuf::from("a/b"))
        );
        assert_eq!(GuestPath::root().relative(), PathBuf::from("."));
    }

    #[test]
    fn errors_read_like_bash() {
        assert_eq!(
            strerror(&io::Error::from_raw_os_error(2)),
            "No such file or directory"
        );
        assert_eq!(
            strerror(&io::Error::new(io::ErrorKind::PermissionDenied, "escape")),
            "Permission denied"
        );
    }

    #[test]
    fn symlinks_do_not_lead_out() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let ws = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        let path = GuestPath::resolve(&GuestPath::root(), "out/secret").unwrap();
        #[cfg(unix)]
        {
            let e = w.open_read(&path).unwrap_err();
            assert_eq!(strerror(&e), "Permission denied");
            let e = w.open_write(&path, false).unwrap_err();
            assert_eq!(strerror(&e), "Permission denied");
            assert!(w.names(&path.parent().unwrap()).is_empty());
        }
    }
}
