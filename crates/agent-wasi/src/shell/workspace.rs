//! The shell's view of the workspace: guest paths resolved lexically and kept inside it, and
//! every file operation done through a capability handle on the root (`cap_std`,
//! `openat2(RESOLVE_BENEATH)` on Linux), so a symlink cannot lead out.
//!
//! The workspace root appears at its [`Mount`]: `/`, or an absolute path such as the
//! workspace's own host path (`/home/me/proj`). Guest paths are absolute paths in that space:
//! `/home/me/proj/src` is the workspace's `src`, `/etc/passwd` is outside it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// Where the workspace root appears in the guest's path space: `/` or a longer absolute path,
/// as its segments.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    segments: Vec<String>,
}

impl Mount {
    /// The mount at `path`, an absolute path without `.` or `..` segments (checked by
    /// `crate::command::normalize_mount`); the error says what is wrong with it.
    pub fn new(path: &str) -> Result<Arc<Self>, String> {
        let normal = crate::command::normalize_mount(path)?;
        Ok(Arc::new(Self {
            segments: normal
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        }))
    }

    /// The workspace at `/`.
    #[cfg(test)]
    pub fn root() -> Arc<Self> {
        Arc::new(Self {
            segments: Vec::new(),
        })
    }

    /// The mount's segments from `/` (none for `/`).
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The mount as a guest path: `/`, `/home/me/proj`.
    pub fn path(&self) -> String {
        if self.segments.is_empty() {
            return "/".to_owned();
        }
        let mut out = String::new();
        for s in &self.segments {
            out.push('/');
            out.push_str(s);
        }
        out
    }
}

/// A path inside the workspace after lexical resolution: its mount, and its components below
/// the workspace root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GuestPath {
    mount: Arc<Mount>,
    components: Vec<String>,
}

/// Why a path names nothing in the workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathError {
    /// `..` climbs above the workspace root (`../x` from the root).
    Escape,
    /// An absolute path that is not the mount or below it (`/etc/passwd` with the workspace at
    /// `/home/me/proj`).
    Outside,
}

impl PathError {
    /// The reason a command prints: `Permission denied` for a climb above the root (as
    /// before mounts existed), `outside the workspace` for an absolute path elsewhere.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Escape => "Permission denied",
            Self::Outside => "outside the workspace",
        }
    }
}

impl GuestPath {
    /// The workspace root, at `mount`.
    pub fn root(mount: &Arc<Mount>) -> Self {
        Self {
            mount: Arc::clone(mount),
            components: Vec::new(),
        }
    }

    /// Resolves `path` against the directory `cwd`, lexically: `.` and empty segments are
    /// dropped, `..` removes the previous segment. A relative `path` starts at `cwd` and may
    /// not climb above the workspace root ([`PathError::Escape`], never clamped). An absolute
    /// `path` is read from the guest's `/` and must end at the mount or below it
    /// ([`PathError::Outside`]; `..` above `/` is an [`PathError::Escape`]).
    pub fn resolve(cwd: &Self, path: &str) -> Result<Self, PathError> {
        if !path.starts_with('/') {
            let mut components = cwd.components.clone();
            push_segments(&mut components, path)?;
            return Ok(Self {
                mount: Arc::clone(&cwd.mount),
                components,
            });
        }
        let mut absolute = Vec::new();
        push_segments(&mut absolute, path)?;
        let mount = cwd.mount.segments();
        if !absolute.starts_with(mount) {
            return Err(PathError::Outside);
        }
        absolute.drain(..mount.len());
        Ok(Self {
            mount: Arc::clone(&cwd.mount),
            components: absolute,
        })
    }

    /// The mount this path lives under.
    pub fn mount(&self) -> &Arc<Mount> {
        &self.mount
    }

    /// Whether this is the workspace root.
    pub fn is_root(&self) -> bool {
        self.components.is_empty()
    }

    /// The path as the guest sees it: the mount, then the components (`/`, `/src` with the
    /// workspace at `/`; `/home/me/proj`, `/home/me/proj/src` with it there).
    pub fn guest(&self) -> String {
        let mut out = String::new();
        for c in self.mount.segments.iter().chain(&self.components) {
            out.push('/');
            out.push_str(c);
        }
        if out.is_empty() {
            out.push('/');
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
        Self {
            mount: Arc::clone(&self.mount),
            components,
        }
    }

    /// The path one segment up, or [`PathError::Escape`] at the root.
    pub fn parent(&self) -> Result<Self, PathError> {
        let mut components = self.components.clone();
        components.pop().ok_or(PathError::Escape)?;
        Ok(Self {
            mount: Arc::clone(&self.mount),
            components,
        })
    }
}

/// Applies the segments of `path` to `components`: `.` and empty ones dropped, `..` removing
/// the last (an [`PathError::Escape`] when there is none).
fn push_segments(components: &mut Vec<String>, path: &str) -> Result<(), PathError> {
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                components.pop().ok_or(PathError::Escape)?;
            }
            name => components.push(name.to_owned()),
        }
    }
    Ok(())
}

/// `path` made absolute against `cwd` and resolved lexically from the guest's `/` (`..` at `/`
/// stays there), whatever the mount: for names that mean the same everywhere, such as
/// `/dev/null`.
pub(crate) fn lexical(cwd: &GuestPath, path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let base = if path.starts_with('/') {
        String::new()
    } else {
        cwd.guest()
    };
    for segment in base.split('/').chain(path.split('/')) {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            name => segments.push(name),
        }
    }
    let mut out = String::new();
    for s in segments {
        out.push('/');
        out.push_str(s);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// A handle on the workspace root.
#[derive(Debug)]
pub(crate) struct Workspace {
    dir: Dir,
    read_only: bool,
}

impl Workspace {
    /// Opens the host directory `root`.
    pub fn open(root: &Path) -> io::Result<Self> {
        Ok(Self {
            dir: Dir::open_ambient_dir(root, ambient_authority())?,
            read_only: false,
        })
    }

    /// The same workspace, read-only: every write fails with `Read-only file system`.
    pub fn into_read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Opens a regular file for reading (`< file`); anything else is refused ([`regular`]).
    pub fn open_read(&self, path: &GuestPath) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options.read(true);
        self.open_regular(path, &mut options)
    }

    /// Opens a file for writing (`> file`, `>> file`), creating it; an existing file that is
    /// not a regular file is refused ([`regular`]).
    pub fn open_write(&self, path: &GuestPath, append: bool) -> io::Result<File> {
        if self.read_only {
            return Err(io::Error::from(io::ErrorKind::ReadOnlyFilesystem));
        }
        let mut options = OpenOptions::new();
        options.write(true).create(true);
        if append {
            options.append(true);
        } else {
            options.truncate(true);
        }
        self.open_regular(path, &mut options)
    }

    /// Opens `path` with `options` without ever blocking, and keeps it only when it is a
    /// regular file. Opening a FIFO blocks until its other end opens, outside every time
    /// limit and the cancellation check; so the open does not block (`O_NONBLOCK`: a FIFO
    /// opens at once for reading, fails with `ENXIO` for writing when nobody reads), and what
    /// it opened is checked on the open descriptor, so nothing can be swapped in between. The
    /// look before it only gives the refusal's words to a FIFO that the open fails on.
    fn open_regular(&self, path: &GuestPath, options: &mut OpenOptions) -> io::Result<File> {
        if let Ok(found) = self.dir.metadata(path.relative()) {
            regular(&found)?;
        }
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            // Has no effect on a regular file's reads and writes.
            options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
        }
        let file = self.dir.open_with(path.relative(), options)?;
        regular(&file.metadata()?)?;
        Ok(file.into_std())
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

    /// Whether the existing file at `path` may be read (`[[ -r ]]`): a directory always, a
    /// regular file when the kernel says so ([`Workspace::may_access`]), anything else never
    /// (as the bundle's `test -r`, whose open of it is refused).
    pub fn can_read(&self, path: &GuestPath) -> bool {
        match self.metadata(path) {
            Ok(m) if m.is_dir() => true,
            Ok(m) if m.is_file() => self.may_access(path, false),
            _ => false,
        }
    }

    /// Whether the existing file at `path` may be written (`[[ -w ]]`): as
    /// [`Workspace::can_read`], and never in a read-only workspace.
    pub fn can_write(&self, path: &GuestPath) -> bool {
        if self.read_only {
            return false;
        }
        match self.metadata(path) {
            Ok(m) if m.is_dir() => true,
            Ok(m) if m.is_file() => self.may_access(path, true),
            _ => false,
        }
    }

    /// Whether the regular file at `path` may be read (or written), asked without opening it
    /// for either: a file test is not a read, and the checker does not count it as one
    /// (docs/shell.md, The checker and the interpreter agree). On Linux the file is opened
    /// with `O_PATH` beneath the root (no symlink out, no data access, no open event) and the
    /// kernel asked through `/proc/self/fd` (`access(2)`); elsewhere, or without `/proc`, by
    /// opening it as the bundle's `test` does.
    fn may_access(&self, path: &GuestPath, write: bool) -> bool {
        #[cfg(target_os = "linux")]
        {
            use cap_std::fs::OpenOptionsExt;
            use std::os::fd::AsRawFd;
            let mut options = OpenOptions::new();
            options
                .read(true)
                .custom_flags(rustix::fs::OFlags::PATH.bits().cast_signed());
            let Ok(file) = self.dir.open_with(path.relative(), &options) else {
                return false;
            };
            let how = if write {
                rustix::fs::Access::WRITE_OK
            } else {
                rustix::fs::Access::READ_OK
            };
            match rustix::fs::access(format!("/proc/self/fd/{}", file.as_raw_fd()), how) {
                Ok(()) => return true,
                // No `/proc`: ask by opening, below.
                Err(rustix::io::Errno::NOENT) => {}
                Err(_) => return false,
            }
        }
        let mut options = OpenOptions::new();
        if write {
            options.write(true);
        } else {
            options.read(true);
        }
        self.open_regular(path, &mut options).is_ok()
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

/// Refuses what the shell does not open: a directory (bash opens one for reading without
/// complaint and the command fails reading it; a clear error at the redirect is kinder and
/// changes no exit status, both are 1), and anything that is not a regular file: FIFOs,
/// sockets, devices (docs/shell.md, Special files).
fn regular(metadata: &cap_std::fs::Metadata) -> io::Result<()> {
    if metadata.is_dir() {
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    }
    if !metadata.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "not a regular file (the shell opens no FIFOs, sockets or devices)",
        ));
    }
    Ok(())
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
        io::ErrorKind::ReadOnlyFilesystem => "Read-only file system".to_owned(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_at(mount: &str, cwd: &str, path: &str) -> Result<String, PathError> {
        let mount = Mount::new(mount).unwrap();
        let cwd = GuestPath::resolve(&GuestPath::root(&mount), cwd)?;
        GuestPath::resolve(&cwd, path).map(|p| p.guest())
    }

    fn resolve(cwd: &str, path: &str) -> Result<String, PathError> {
        resolve_at("/", cwd, path)
    }

    #[test]
    fn guest_paths_resolve_lexically_inside_the_root() {
        assert_eq!(resolve("/", "a/b"), Ok("/a/b".to_owned()));
        assert_eq!(resolve("/a", "../b/./c//"), Ok("/b/c".to_owned()));
        assert_eq!(resolve("/a", "/etc/x"), Ok("/etc/x".to_owned()));
        assert_eq!(resolve("/a", ".."), Ok("/".to_owned()));
        assert_eq!(resolve("/", "../x"), Err(PathError::Escape));
        assert_eq!(resolve("/a", "../../x"), Err(PathError::Escape));
        assert_eq!(resolve("/", "/.."), Err(PathError::Escape));
        let root = GuestPath::root(&Mount::root());
        assert_eq!(
            GuestPath::resolve(&root, "a/b").map(|p| p.relative()),
            Ok(PathBuf::from("a/b"))
        );
        assert_eq!(root.relative(), PathBuf::from("."));
    }

    #[test]
    fn with_a_mount_absolute_paths_must_lead_below_it() {
        let ws = "/abs/ws";
        // Inside: the mount itself, below it, relative paths, and detours that come back.
        assert_eq!(resolve_at(ws, ws, "."), Ok("/abs/ws".to_owned()));
        assert_eq!(resolve_at(ws, ws, "x"), Ok("/abs/ws/x".to_owned()));
        assert_eq!(
            resolve_at(ws, ws, "/abs/ws/src"),
            Ok("/abs/ws/src".to_owned())
        );
        assert_eq!(
            resolve_at(ws, "/abs/ws/src", ".."),
            Ok("/abs/ws".to_owned())
        );
        assert_eq!(
            resolve_at(ws, "/abs/ws/src", "/abs/ws//src/./a/../b"),
            Ok("/abs/ws/src/b".to_owned())
        );
        assert_eq!(
            resolve_at(ws, ws, "/abs/x/../ws/y"),
            Ok("/abs/ws/y".to_owned())
        );
        // `..` above the root stays an escape, as at `/`.
        assert_eq!(resolve_at(ws, ws, ".."), Err(PathError::Escape));
        assert_eq!(
            resolve_at(ws, "/abs/ws/src", "../../x"),
            Err(PathError::Escape)
        );
        assert_eq!(resolve_at(ws, ws, "/../.."), Err(PathError::Escape));
        // Absolute paths elsewhere are outside: `/`, a parent, a sibling, a prefix that is not
        // a whole segment, a climb out of the mount.
        for outside in [
            "/",
            "/etc/passwd",
            "/abs",
            "/abs/other",
            "/abs/wsx",
            "/abs/ws/..",
        ] {
            assert_eq!(
                resolve_at(ws, ws, outside),
                Err(PathError::Outside),
                "{outside}"
            );
        }
        // A working directory outside the mount cannot be had either.
        assert_eq!(resolve_at(ws, "/tmp", "x"), Err(PathError::Outside));
        // What the host sees is relative to the workspace root, whatever the mount.
        let mount = Mount::new("/abs/ws/").unwrap();
        assert_eq!(mount.path(), "/abs/ws");
        let p = GuestPath::resolve(&GuestPath::root(&mount), "/abs/ws/a/b").unwrap();
        assert_eq!(p.relative(), PathBuf::from("a/b"));
        assert_eq!(p.parent().unwrap().parent().unwrap().guest(), "/abs/ws");
        assert!(p.parent().unwrap().parent().unwrap().is_root());
        assert_eq!(GuestPath::root(&mount).parent(), Err(PathError::Escape));
        assert_eq!(PathError::Outside.reason(), "outside the workspace");
    }

    #[test]
    fn mounts_must_be_absolute_and_plain() {
        for bad in ["", "abs", "/abs/../x", "/abs/./x", "/a\0b"] {
            assert!(Mount::new(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Mount::new("//").unwrap().path(), "/");
    }

    #[test]
    fn lexical_paths_ignore_the_mount() {
        let mount = Mount::new("/abs/ws").unwrap();
        let root = GuestPath::root(&mount);
        assert_eq!(lexical(&root, "/dev/null"), "/dev/null");
        assert_eq!(lexical(&root, "../../../dev/./null"), "/dev/null");
        assert_eq!(lexical(&root, "x"), "/abs/ws/x");
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
        let path = GuestPath::resolve(&GuestPath::root(&Mount::root()), "out/secret").unwrap();
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
