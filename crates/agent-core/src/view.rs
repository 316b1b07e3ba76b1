//! The user's own paths over a shadow workspace.
//!
//! Tools work in a shadow copy of the user's folder (`~/.agent/workspaces/<id>/tree`), but the
//! model, the user and the transcript should see the folder they know. A [`PathView`] pairs
//! the two roots: the **shown** root (the real folder) and the **actual** root (the shadow).
//! Going in, a tool's path argument that names the real folder is moved onto the shadow
//! ([`PathView::to_actual`]); coming out, every mention of the shadow in a tool's result is
//! shown as the real folder ([`PathView::to_shown`]). Only whole path components are
//! replaced: `/work/app2` is not under `/work/app`.
//!
//! ```
//! use agent_core::view::PathView;
//! let view = PathView::new("/home/me/app", "/home/me/.agent/workspaces/1f2e/tree");
//! assert_eq!(
//!     view.to_actual("/home/me/app/src/x.py").as_deref(),
//!     Some("/home/me/.agent/workspaces/1f2e/tree/src/x.py")
//! );
//! assert_eq!(view.to_actual("/home/me/app2/x"), None);
//! assert_eq!(
//!     view.to_shown("found /home/me/.agent/workspaces/1f2e/tree/src/x.py:3"),
//!     "found /home/me/app/src/x.py:3"
//! );
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The real folder a shadow stands for (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathView {
    shown: PathBuf,
    actual: PathBuf,
}

/// The input fields of the built-in tools that hold a path (Read, Write, Edit, NotebookEdit,
/// Glob, Grep): only these are moved onto the shadow, never free text such as an edit's
/// `old_string`.
pub const PATH_FIELDS: &[&str] = &["file_path", "notebook_path", "path"];

impl PathView {
    /// A view showing `actual` (the shadow) as `shown` (the real folder). Both should be
    /// absolute and canonical.
    pub fn new(shown: impl Into<PathBuf>, actual: impl Into<PathBuf>) -> Self {
        Self {
            shown: shown.into(),
            actual: actual.into(),
        }
    }

    /// The real folder.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// The shadow.
    pub fn actual(&self) -> &Path {
        &self.actual
    }

    /// `path` moved from the real folder onto the shadow, when it names the real folder or a
    /// path beneath it; `None` otherwise.
    pub fn to_actual(&self, path: &str) -> Option<String> {
        self.actual_path(Path::new(path))
            .map(|p| p.display().to_string())
    }

    /// [`PathView::to_actual`] for a path.
    pub fn actual_path(&self, path: &Path) -> Option<PathBuf> {
        let rest = path.strip_prefix(&self.shown).ok()?;
        Some(if rest.as_os_str().is_empty() {
            self.actual.clone()
        } else {
            self.actual.join(rest)
        })
    }

    /// A path of the shadow as the user knows it (the real folder's path), or `path` itself.
    pub fn shown_path(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.actual) {
            Ok(rest) if rest.as_os_str().is_empty() => self.shown.clone(),
            Ok(rest) => self.shown.join(rest),
            Err(_) => path.to_path_buf(),
        }
    }

    /// `text` with every mention of the shadow's root (as a whole path component) replaced
    /// by the real folder's.
    pub fn to_shown(&self, text: &str) -> String {
        let from = self.actual.display().to_string();
        let to = self.shown.display().to_string();
        if from.is_empty() || !text.contains(&from) {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(&from) {
            let after = &rest[i + from.len()..];
            let whole = after
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')));
            out.push_str(&rest[..i]);
            out.push_str(if whole { &to } else { &from });
            rest = after;
        }
        out.push_str(rest);
        out
    }

    /// Every string inside `value` shown with [`PathView::to_shown`] (object keys too).
    pub fn value_to_shown(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                let shown = self.to_shown(s);
                if shown != *s {
                    *s = shown;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value_to_shown(v)),
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    let shown = self.to_shown(&k);
                    if let Some(mut v) = map.remove(&k) {
                        self.value_to_shown(&mut v);
                        map.insert(shown, v);
                    }
                }
            }
            _ => {}
        }
    }

    /// A tool's input with its path fields ([`PATH_FIELDS`]) moved onto the shadow; `None`
    /// when none names the real folder.
    pub fn input_to_actual(&self, input: &Value) -> Option<Value> {
        let Value::Object(map) = input else {
            return None;
        };
        let mut out = map.clone();
        let mut changed = false;
        for field in PATH_FIELDS {
            if let Some(Value::String(p)) = map.get(*field)
                && let Some(actual) = self.to_actual(p)
            {
                out.insert((*field).to_owned(), Value::String(actual));
                changed = true;
            }
        }
        changed.then_some(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view() -> PathView {
        PathView::new("/r/app", "/s/ws/tree")
    }

    #[test]
    fn a_path_of_the_real_folder_moves_onto_the_shadow() {
        let v = view();
        assert_eq!(v.to_actual("/r/app").as_deref(), Some("/s/ws/tree"));
        assert_eq!(v.to_actual("/r/app/").as_deref(), Some("/s/ws/tree"));
        assert_eq!(v.to_actual("/r/app/a/b").as_deref(), Some("/s/ws/tree/a/b"));
        assert_eq!(v.to_actual("/r/apple/a"), None);
        assert_eq!(v.to_actual("src/a"), None);
        assert_eq!(v.to_actual("/elsewhere"), None);
    }

    #[test]
    fn only_whole_components_of_the_shadow_are_shown_as_the_real_folder() {
        let v = view();
        assert_eq!(v.to_shown("/s/ws/tree"), "/r/app");
        assert_eq!(v.to_shown("at /s/ws/tree/x.rs:1\n"), "at /r/app/x.rs:1\n");
        assert_eq!(v.to_shown("/s/ws/tree2/x"), "/s/ws/tree2/x");
        assert_eq!(v.to_shown("/s/ws/tree.bak"), "/s/ws/tree.bak");
        assert_eq!(
            v.to_shown("/s/ws/tree /s/ws/tree/a"),
            "/r/app /r/app/a",
            "every mention"
        );
    }

    #[test]
    fn only_the_path_fields_of_an_input_move() {
        let v = view();
        let input =
            json!({"file_path": "/r/app/a.py", "old_string": "/r/app/a.py", "new_string": "x"});
        let moved = v.input_to_actual(&input).unwrap();
        assert_eq!(moved["file_path"], "/s/ws/tree/a.py");
        assert_eq!(moved["old_string"], "/r/app/a.py");
        assert_eq!(v.input_to_actual(&json!({"file_path": "a.py"})), None);
        assert_eq!(v.input_to_actual(&json!({"command": "cat /r/app/a"})), None);
    }

    #[test]
    fn a_result_shows_the_real_folder_everywhere() {
        let v = view();
        let mut out =
            json!({"filenames": ["/s/ws/tree/a", "/s/ws/tree/b"], "n": 2, "/s/ws/tree": true});
        v.value_to_shown(&mut out);
        assert_eq!(
            out,
            json!({"filenames": ["/r/app/a", "/r/app/b"], "n": 2, "/r/app": true})
        );
    }
}
