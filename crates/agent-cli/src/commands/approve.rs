//! Inline approvals: what a permission question shows before the person answers (what will
//! happen), the choices, and what each answer does.
//!
//! - Edit / MultiEdit: a unified diff of each replacement; Write: a diff against the file as it
//!   is in the shadow, or the head of a new file; Bash: the command (and its description);
//!   WebFetch: the URL; anything else: its input in a line.
//! - `y` once; `a` for this session (the suggested rule, granted now); `A` always (the rule is
//!   also written to the project's `.agent/settings.local.json`, named in the question, as an
//!   allow rule the next session reads; a path rule is written anchored at the project, `/…`,
//!   never at the shadow); `n` no; `d` no and tell the model why (a line of text).

use std::path::{Path, PathBuf};

use agent_core::permissions::{GrantScope, PermissionRequest, PromptAnswer};
use serde_json::{Value, json};

use super::transcript::Paths;
use crate::colour::{Ink, Palette};
use crate::output;

/// Lines of a diff or a new file shown at most.
const PREVIEW_LINES: usize = 40;
/// Bytes of a file read for a Write's diff at most.
const PREVIEW_BYTES: u64 = 1 << 20;

/// The lines that show what a call will do; `runs_where`: for a Bash call, where its command
/// would run (the Bash tool's routing), when known.
pub fn preview(
    request: &PermissionRequest,
    paths: &Paths,
    palette: Palette,
    runs_where: Option<String>,
) -> Vec<String> {
    let input = &request.input;
    let field = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut lines = Vec::new();
    match request.tool_name.as_str() {
        "Edit" => lines.extend(edit_diff(field("old_string"), field("new_string"), palette)),
        "MultiEdit" => {
            for e in input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let get = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
                lines.extend(edit_diff(get("old_string"), get("new_string"), palette));
            }
        }
        "Write" => {
            let content = field("content");
            let on_disk = Path::new(&paths.actual(field("file_path"))).to_path_buf();
            match read_bounded(&on_disk) {
                Some(old) => lines.extend(edit_diff(&old, content, palette)),
                None => {
                    lines.push(palette.paint(
                        Ink::Dim,
                        &format!(
                            "new file, {} line(s), {} bytes",
                            content.lines().count(),
                            content.len()
                        ),
                    ));
                    lines.extend(
                        content.lines().take(PREVIEW_LINES).map(|l| {
                            palette.paint(Ink::Added, &format!("+{}", output::sanitize(l)))
                        }),
                    );
                }
            }
        }
        "Bash" => {
            lines.push(format!(
                "$ {}",
                output::sanitize(&paths.text(field("command")))
            ));
            if !field("description").is_empty() {
                lines.push(palette.paint(Ink::Dim, &output::sanitize(field("description"))));
            }
            lines.push(palette.paint(
                Ink::Dim,
                &match runs_where {
                    Some(w) => format!("runs {}", output::sanitize(&w)),
                    None => "runs in the WASI shell when every program it names is a bundle command, else in the host's bash inside the OS sandbox".to_owned(),
                },
            ));
        }
        "WebFetch" => {
            lines.push(format!("GET {}", output::sanitize(field("url"))));
            if !field("prompt").is_empty() {
                lines.push(palette.paint(Ink::Dim, &output::sanitize(field("prompt"))));
            }
        }
        _ => lines.push(output::sanitize(&paths.brief(input))),
    }
    lines
}

/// A unified diff of `old` → `new`, cut to [`PREVIEW_LINES`], coloured.
fn edit_diff(old: &str, new: &str, palette: Palette) -> Vec<String> {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(2).to_string();
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| palette.diff(&output::sanitize(l)))
        .collect();
    if lines.len() > PREVIEW_LINES {
        let more = lines.len() - PREVIEW_LINES;
        lines.truncate(PREVIEW_LINES);
        lines.push(palette.paint(Ink::Dim, &format!("… {more} more line(s)")));
    }
    lines
}

/// A regular file's text, when it is at most [`PREVIEW_BYTES`].
fn read_bounded(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > PREVIEW_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The choices offered and what the answers do.
pub struct Choices {
    /// The rule a session or "always" answer grants (the first suggestion), as the engine
    /// knows it (it may name the shadow).
    rule: Option<String>,
    /// The same rule as written to the project's local settings.
    project_rule: Option<String>,
    /// The project's local settings file.
    settings_file: PathBuf,
}

impl Choices {
    /// The choices for `request`, for a project at `project_dir` (the real folder whose
    /// `.agent/settings.local.json` "always" writes), showing paths through `paths`.
    pub fn new(request: &PermissionRequest, paths: &Paths, project_dir: &Path) -> Self {
        let rule = request.suggestions.first().cloned();
        let project_rule = rule.as_deref().map(|r| anchored(r, paths, project_dir));
        Self {
            rule,
            project_rule,
            settings_file: project_dir.join(".agent").join("settings.local.json"),
        }
    }

    /// The line listing the choices.
    pub fn line(&self) -> String {
        match &self.project_rule {
            Some(r) => format!(
                "[y] once · [a] this session ({r}) · [A] always (adds it to {}) · [n] no · [d] no, and say why: ",
                self.settings_file.display()
            ),
            None => "[y] once · [n] no · [d] no, and say why: ".to_owned(),
        }
    }

    /// What `answer` asks for; `why` reads the line of a `d` answer.
    pub fn answer(&self, answer: &str, why: impl FnOnce() -> Option<String>) -> PromptAnswer {
        let grant = |rule: &String| PromptAnswer::AllowForSession {
            scope: if rule.contains('(') {
                GrantScope::Rule(rule.clone())
            } else {
                GrantScope::Tool(rule.clone())
            },
            updated_input: None,
        };
        match (answer.trim(), &self.rule, &self.project_rule) {
            ("y" | "Y" | "yes", _, _) => PromptAnswer::AllowOnce {
                updated_input: None,
            },
            ("a" | "session", Some(rule), _) => grant(rule),
            ("A" | "always", Some(rule), Some(project_rule)) => {
                match remember(&self.settings_file, project_rule) {
                    Ok(()) => output::warning(&format!(
                        "{project_rule} added to {}",
                        self.settings_file.display()
                    )),
                    Err(e) => output::warning(&format!(
                        "{project_rule} is allowed for this session only: {e:#}"
                    )),
                }
                grant(rule)
            }
            ("d" | "D", _, _) => {
                let reason = why().unwrap_or_default();
                let reason = reason.trim();
                PromptAnswer::Deny {
                    message: if reason.is_empty() {
                        "the user said no".into()
                    } else {
                        format!("the user said no: {reason}")
                    },
                    interrupt: false,
                }
            }
            _ => PromptAnswer::Deny {
                message: "the user said no".into(),
                interrupt: false,
            },
        }
    }
}

/// `rule` as written in the project's settings: a path rule naming the shadow names the real
/// folder, and one beneath the project is anchored at it (`Edit(/src/**)`).
fn anchored(rule: &str, paths: &Paths, project_dir: &Path) -> String {
    let shown = paths.real(rule);
    let prefix = format!("(/{}/", project_dir.display());
    match shown.split_once(&prefix) {
        Some((tool, rest)) if !tool.contains('(') => format!("{tool}(/{rest}"),
        _ => shown,
    }
}

/// Adds `rule` to the `permissions.allow` list of the settings file at `file` (created when
/// missing; other keys kept), written whole through a temporary file.
fn remember(file: &Path, rule: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let mut value: Value = match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON; fix it first", file.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let Some(root) = value.as_object_mut() else {
        anyhow::bail!("{} does not hold a JSON object", file.display());
    };
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .with_context(|| format!("{}: `permissions` is not an object", file.display()))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .with_context(|| format!("{}: `permissions.allow` is not a list", file.display()))?;
    if !allow.iter().any(|r| r.as_str() == Some(rule)) {
        allow.push(json!(rule));
    }
    let dir = file
        .parent()
        .context("the settings file has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&value)? + "\n")
        .and_then(|()| std::fs::rename(&tmp, file))
        .with_context(|| format!("cannot write {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::permissions::PermissionMode;
    use agent_core::view::PathView;

    fn request(tool: &str, input: Value, suggestion: &str) -> PermissionRequest {
        PermissionRequest {
            tool_name: tool.into(),
            input,
            reason: "no allow rule covers it".into(),
            suggestions: vec![suggestion.into()],
            tool_use_id: None,
            mode: PermissionMode::Default,
        }
    }

    fn paths() -> Paths {
        Paths::new(
            Path::new("/r/app"),
            Some(PathView::new("/r/app", "/s/ws/tree")),
        )
    }

    #[test]
    fn an_edit_shows_its_diff_and_a_bash_call_its_command() {
        let r = request(
            "Edit",
            json!({"file_path": "/r/app/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}),
            "Edit(//s/ws/tree/**)",
        );
        let lines = preview(&r, &paths(), Palette::new(false), None);
        assert!(lines.contains(&"-x = 1".to_owned()), "{lines:?}");
        assert!(lines.contains(&"+x = 2".to_owned()), "{lines:?}");
        let b = request(
            "Bash",
            json!({"command": "cd /r/app/src && make test"}),
            "Bash(make test *)",
        );
        let lines = preview(
            &b,
            &paths(),
            Palette::new(false),
            Some("in the WASI shell".into()),
        );
        assert_eq!(lines[0], "$ cd src && make test");
        assert_eq!(lines[1], "runs in the WASI shell");
    }

    #[test]
    fn a_write_over_an_existing_file_shows_the_diff_and_a_new_file_its_head() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        let shadow = t.path().join("shadow");
        std::fs::create_dir_all(&shadow).unwrap();
        std::fs::write(shadow.join("a.txt"), "one\n").unwrap();
        let paths = Paths::new(&real, Some(PathView::new(&real, &shadow)));
        let over = request(
            "Write",
            json!({"file_path": real.join("a.txt"), "content": "two\n"}),
            "Edit(//x/**)",
        );
        let lines = preview(&over, &paths, Palette::new(false), None);
        assert!(
            lines.contains(&"-one".to_owned()) && lines.contains(&"+two".to_owned()),
            "{lines:?}"
        );
        let new = request(
            "Write",
            json!({"file_path": real.join("b.txt"), "content": "l1\nl2\n"}),
            "Edit(//x/**)",
        );
        let lines = preview(&new, &paths, Palette::new(false), None);
        assert_eq!(lines[0], "new file, 2 line(s), 6 bytes");
        assert_eq!(lines[1..], ["+l1".to_owned(), "+l2".to_owned()]);
    }

    #[test]
    fn always_writes_the_rule_anchored_at_the_project_and_grants_it_now() {
        let t = tempfile::tempdir().unwrap();
        let project = t.path().join("app");
        let shadow = t.path().join("tree");
        std::fs::create_dir_all(project.join(".agent")).unwrap();
        std::fs::write(
            project.join(".agent/settings.local.json"),
            r#"{"model": "m", "permissions": {"allow": ["Read"]}}"#,
        )
        .unwrap();
        let paths = Paths::new(&project, Some(PathView::new(&project, &shadow)));
        let r = request(
            "Edit",
            json!({}),
            &format!("Edit(/{}/src/**)", shadow.display()),
        );
        let choices = Choices::new(&r, &paths, &project);
        assert!(
            choices.line().contains("Edit(/src/**)"),
            "{}",
            choices.line()
        );
        let answer = choices.answer("A", || None);
        assert_eq!(
            answer,
            PromptAnswer::AllowForSession {
                scope: GrantScope::Rule(format!("Edit(/{}/src/**)", shadow.display())),
                updated_input: None
            }
        );
        let written: Value = serde_json::from_str(
            &std::fs::read_to_string(project.join(".agent/settings.local.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            written["permissions"]["allow"],
            json!(["Read", "Edit(/src/**)"])
        );
        assert_eq!(written["model"], "m", "other keys stay");
    }

    #[test]
    fn no_with_a_reason_tells_the_model_why() {
        let r = request("Bash", json!({"command": "rm -rf build"}), "Bash(rm *)");
        let choices = Choices::new(&r, &paths(), Path::new("/r/app"));
        assert_eq!(
            choices.answer("d", || Some("use make clean".into())),
            PromptAnswer::Deny {
                message: "the user said no: use make clean".into(),
                interrupt: false
            }
        );
        assert!(matches!(
            choices.answer("", || None),
            PromptAnswer::Deny { .. }
        ));
        assert!(matches!(
            choices.answer("y", || None),
            PromptAnswer::AllowOnce { .. }
        ));
    }
}
