//! Hook configuration: the `hooks` block of settings files and plugin `hooks/hooks.json` files
//! (claude-code.md §5.1), read into [`ConfiguredHook`]s that carry where they came from.
//!
//! ```json
//! { "hooks": { "PreToolUse": [ { "matcher": "Bash",
//!     "hooks": [ { "type": "command", "command": "./check.sh", "timeout": 10 } ] } ] } }
//! ```
//!
//! Rules: files are read in precedence order (user, project, local, `--settings`); handlers of
//! an untrusted project are skipped with a warning (claude-code.md §8 B18); `disableAllHooks`
//! from the highest-precedence trusted file that sets it wins; an unknown event name is skipped
//! with a warning (a newer Claude Code may know it); anything else malformed refuses the whole
//! configuration with the file and key at fault. `hookEnvironment` merges as its module
//! (`environment.rs`) says: the repository's files cannot turn secret scrubbing off.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::environment::HookEnvironment;
use super::event::HookEvent;
use super::protocol::OnFailure;
use crate::permissions::Scope;
use crate::settings::Settings;

/// Where a configured hook came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookSource {
    /// The settings or `hooks.json` file.
    pub file: PathBuf,
    /// Its scope, for settings files.
    pub scope: Option<Scope>,
    /// The key within it, e.g. `hooks.PreToolUse[0].hooks[1]`.
    pub key: String,
    /// The plugin root, for plugin hooks.
    pub plugin_root: Option<PathBuf>,
}

impl std::fmt::Display for HookSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.file.display(), self.key)
    }
}

/// The shell a shell-form command runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HookShell {
    /// `sh -c` (the default on macOS and Linux).
    #[default]
    Sh,
    /// `bash -c` (`"shell": "bash"`).
    Bash,
}

/// What runs.
#[derive(Clone, Debug, PartialEq)]
pub enum HandlerConfig {
    /// A command: shell form (`sh -c command`), or exec form when `args` is present.
    Command {
        /// The command line (shell form) or the program (exec form).
        command: String,
        /// Exec-form arguments.
        args: Option<Vec<String>>,
        /// The shell of the shell form.
        shell: HookShell,
    },
    /// An HTTP POST of the input JSON.
    Http {
        /// `http://` or `https://` URL.
        url: String,
        /// Headers; `$VAR` / `${VAR}` are interpolated for names in `allowed_env_vars` only.
        headers: Vec<(String, String)>,
        /// Environment variables headers may read.
        allowed_env_vars: Vec<String>,
    },
    /// A kind the host must supply (`prompt`, `agent`, `mcp_tool`), with its fields as given.
    Extension {
        /// The `type`.
        kind: String,
        /// Every field of the handler object.
        fields: Map<String, Value>,
    },
}

impl HandlerConfig {
    /// The `type` name.
    pub fn kind(&self) -> &str {
        match self {
            Self::Command { .. } => "command",
            Self::Http { .. } => "http",
            Self::Extension { kind, .. } => kind,
        }
    }

    /// A one-line label: the command line, the URL, or the kind and prompt.
    pub fn label(&self) -> String {
        match self {
            Self::Command {
                command,
                args: None,
                ..
            } => command.clone(),
            Self::Command {
                command,
                args: Some(args),
                ..
            } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Self::Http { url, .. } => format!("POST {url}"),
            Self::Extension { kind, fields } => {
                let text = fields
                    .get("prompt")
                    .or_else(|| fields.get("tool"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                format!("{kind}: {text}")
            }
        }
    }
}

/// One configured handler with its group's matcher.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfiguredHook {
    /// The event.
    pub event: HookEvent,
    /// The group's matcher, as written.
    pub matcher: Option<String>,
    /// What runs.
    pub handler: HandlerConfig,
    /// `timeout` (seconds in the file); `None` means the registry default (60 s).
    pub timeout: Option<Duration>,
    /// `if`: one permission rule (tool events only).
    pub condition: Option<String>,
    /// `async` (or `asyncRewake`): runs in the background and cannot block.
    pub is_async: bool,
    /// `statusMessage`.
    pub status_message: Option<String>,
    /// `onFailure`.
    pub on_failure: OnFailure,
    /// Where it came from.
    pub source: HookSource,
}

/// Every configured hook, in registration order, with what was skipped and why.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HooksConfig {
    /// The hooks that apply.
    pub hooks: Vec<ConfiguredHook>,
    /// The file whose `disableAllHooks: true` turns every hook off.
    pub disabled_by: Option<PathBuf>,
    /// What environment hooks see (`hookEnvironment`; see [`HookEnvironment`] for the merge).
    pub environment: HookEnvironment,
    /// Hooks and keys that were skipped, and why (untrusted folder, unknown event, ...).
    pub warnings: Vec<String>,
}

/// Occurs when a hooks block is malformed; names the file, the key and what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: `{key}` {problem}; no hooks are loaded until this is fixed", file.display())]
pub struct HookConfigError {
    /// The file.
    pub file: PathBuf,
    /// The key, e.g. `hooks.PreToolUse[0].hooks[1].timeout`.
    pub key: String,
    /// What is wrong.
    pub problem: String,
}

impl HooksConfig {
    /// The hooks of every settings file, in precedence order (see the module docs).
    ///
    /// # Errors
    /// [`HookConfigError`] for the first malformed handler.
    pub fn from_settings(settings: &Settings) -> Result<Self, HookConfigError> {
        let mut cfg = Self::default();
        let mut disabled: Option<(bool, PathBuf)> = None;
        for file in &settings.files {
            if !file.trusted {
                if file.value.contains_key("hooks") || file.dropped.iter().any(|k| k == "hooks") {
                    cfg.warnings.push(format!(
                        "{}: hooks skipped because this folder is not trusted; trust it with `agent trust` or pass --trust",
                        file.path.display()
                    ));
                }
                continue;
            }
            if let Some(Value::Bool(b)) = file.value.get("disableAllHooks") {
                disabled = Some((*b, file.path.clone()));
            }
            if let Some(block) = file.value.get("hooks") {
                cfg.add_block(block, &file.path, Some(file.scope), None, "hooks")?;
            }
        }
        if let Some((true, path)) = disabled {
            cfg.disabled_by = Some(path);
        }
        cfg.environment = HookEnvironment::from_files(&settings.files, &mut cfg.warnings);
        Ok(cfg)
    }

    /// Adds the hooks of a plugin: `<root>/hooks/hooks.json`, with or without the outer
    /// `"hooks"` key (an optional `description` is ignored). A plugin without the file adds
    /// nothing.
    ///
    /// # Errors
    /// [`HookConfigError`] when the file cannot be read or is malformed.
    pub fn add_plugin(&mut self, root: &Path) -> Result<(), HookConfigError> {
        let file = root.join("hooks").join("hooks.json");
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(HookConfigError {
                    file,
                    key: "(file)".into(),
                    problem: format!("cannot be read: {e}"),
                });
            }
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| HookConfigError {
            file: file.clone(),
            key: format!("(line {}, column {})", e.line(), e.column()),
            problem: format!("is not valid JSON: {e}"),
        })?;
        let Value::Object(mut map) = value else {
            return Err(HookConfigError {
                file,
                key: "(top level)".into(),
                problem: "must be a JSON object".into(),
            });
        };
        map.remove("description");
        let (block, prefix) = match map.remove("hooks") {
            Some(inner) => (inner, "hooks"),
            None => (Value::Object(map), ""),
        };
        self.add_block(&block, &file, None, Some(root), prefix)
    }

    /// Adds one `hooks` block read from `file`.
    ///
    /// # Errors
    /// [`HookConfigError`] for the first malformed key.
    pub fn add_block(
        &mut self,
        block: &Value,
        file: &Path,
        scope: Option<Scope>,
        plugin_root: Option<&Path>,
        prefix: &str,
    ) -> Result<(), HookConfigError> {
        let err = |key: String, problem: &str| HookConfigError {
            file: file.to_path_buf(),
            key,
            problem: problem.to_owned(),
        };
        let dot = if prefix.is_empty() { "" } else { "." };
        let Value::Object(events) = block else {
            return Err(err(
                prefix.to_owned(),
                "must be an object mapping event names to matcher groups",
            ));
        };
        for (name, groups) in events {
            let key = format!("{prefix}{dot}{name}");
            let event = match name.parse::<HookEvent>() {
                Ok(e) => e,
                Err(e) => {
                    self.warnings
                        .push(format!("{}: `{key}` skipped: {e}", file.display()));
                    continue;
                }
            };
            let Value::Array(groups) = groups else {
                return Err(err(key, "must be an array of matcher groups"));
            };
            for (gi, group) in groups.iter().enumerate() {
                let gkey = format!("{key}[{gi}]");
                let Value::Object(group) = group else {
                    return Err(err(gkey, "must be an object with `matcher` and `hooks`"));
                };
                let matcher = match group.get("matcher") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(err(format!("{gkey}.matcher"), "must be a string")),
                };
                if let Some(m) = &matcher
                    && event.matcher_field().is_none()
                    && !m.trim().is_empty()
                    && m.trim() != "*"
                {
                    self.warnings.push(format!(
                        "{}: `{gkey}.matcher` is ignored: {event} hooks always fire",
                        file.display()
                    ));
                }
                let Some(Value::Array(handlers)) = group.get("hooks") else {
                    return Err(err(
                        format!("{gkey}.hooks"),
                        "must be an array of hook handlers",
                    ));
                };
                for (hi, h) in handlers.iter().enumerate() {
                    let hkey = format!("{gkey}.hooks[{hi}]");
                    let source = HookSource {
                        file: file.to_path_buf(),
                        scope,
                        key: hkey.clone(),
                        plugin_root: plugin_root.map(Path::to_path_buf),
                    };
                    let hook = parse_handler(h, event, matcher.clone(), source)
                        .map_err(|(k, p)| err(format!("{hkey}{k}"), &p))?;
                    self.hooks.push(hook);
                }
            }
        }
        Ok(())
    }
}

/// A field's key (after the handler's own, e.g. `.timeout`) and what is wrong with it.
type FieldError = (String, String);

/// The error for the handler field `key`.
fn field_error(key: &str, problem: &str) -> FieldError {
    (format!(".{key}"), problem.to_owned())
}

/// One hook handler's fields, read with the error a wrong type gets.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    /// An optional string field.
    fn string(&self, k: &str) -> Result<Option<String>, FieldError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(field_error(k, "must be a string")),
        }
    }

    /// An optional boolean field, false when absent.
    fn boolean(&self, k: &str) -> Result<bool, FieldError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(field_error(k, "must be true or false")),
        }
    }

    /// An optional array of strings.
    fn strings(&self, k: &str) -> Result<Option<Vec<String>>, FieldError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    a.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| field_error(&format!("{k}[{i}]"), "must be a string"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(field_error(k, "must be an array of strings")),
        }
    }
}

/// One hook handler object: the fields of its `type`, then those every handler has.
fn parse_handler(
    v: &Value,
    event: HookEvent,
    matcher: Option<String>,
    source: HookSource,
) -> Result<ConfiguredHook, FieldError> {
    let Value::Object(h) = v else {
        return Err((String::new(), "must be an object with `type`".into()));
    };
    let fields = Fields(h);
    let kind = fields.string("type")?.ok_or_else(|| {
        field_error(
            "type",
            "is missing; use \"command\", \"http\", \"prompt\", \"agent\" or \"mcp_tool\"",
        )
    })?;
    let handler = match kind.as_str() {
        "command" => command_handler(&fields)?,
        "http" => http_handler(&fields)?,
        "prompt" | "agent" | "mcp_tool" => HandlerConfig::Extension {
            kind: kind.clone(),
            fields: h.clone(),
        },
        other => {
            return Err(field_error(
                "type",
                &format!(
                    "is {other:?}; use \"command\", \"http\", \"prompt\", \"agent\" or \"mcp_tool\""
                ),
            ));
        }
    };
    let timeout = handler_timeout(&fields)?;
    let on_failure = match fields.string("onFailure")?.as_deref() {
        None | Some("continue" | "ignore") => OnFailure::Continue,
        Some("block") => OnFailure::Block,
        Some(other) => {
            return Err(field_error(
                "onFailure",
                &format!("is {other:?}; use \"block\" or \"continue\""),
            ));
        }
    };
    let is_async = fields.boolean("async")? || fields.boolean("asyncRewake")?;
    if is_async && kind != "command" {
        return Err(field_error("async", "applies to command hooks only"));
    }
    Ok(ConfiguredHook {
        event,
        matcher,
        handler,
        timeout,
        condition: fields.string("if")?,
        is_async,
        status_message: fields.string("statusMessage")?,
        on_failure,
        source,
    })
}

/// A `"type": "command"` handler: the command, its optional `args` and the shell that runs it.
fn command_handler(fields: &Fields<'_>) -> Result<HandlerConfig, FieldError> {
    let command = fields
        .string("command")?
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| field_error("command", "is missing or empty"))?;
    let args = fields.strings("args")?;
    let shell = match fields.string("shell")?.as_deref() {
        None | Some("sh") => HookShell::Sh,
        Some("bash") => HookShell::Bash,
        Some("powershell") => {
            return Err(field_error(
                "shell",
                "is \"powershell\", which is not supported by this host; use \"bash\" or omit it",
            ));
        }
        Some(other) => {
            return Err(field_error(
                "shell",
                &format!("is {other:?}; use \"bash\" or omit it (sh)"),
            ));
        }
    };
    Ok(HandlerConfig::Command {
        command,
        args,
        shell,
    })
}

/// A `"type": "http"` handler: an http(s) URL, its headers and the variables they may name.
fn http_handler(fields: &Fields<'_>) -> Result<HandlerConfig, FieldError> {
    let url = fields
        .string("url")?
        .ok_or_else(|| field_error("url", "is missing"))?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(field_error("url", "must start with http:// or https://"));
    }
    let headers = match fields.0.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_owned()))
                    .ok_or_else(|| field_error(&format!("headers.{k}"), "must be a string"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(field_error("headers", "must be an object of strings")),
    };
    let allowed_env_vars = fields.strings("allowedEnvVars")?.unwrap_or_default();
    Ok(HandlerConfig::Http {
        url,
        headers,
        allowed_env_vars,
    })
}

/// The handler's `timeout`: seconds above 0 and at most a day, or none for the default.
fn handler_timeout(fields: &Fields<'_>) -> Result<Option<Duration>, FieldError> {
    match fields.0.get("timeout") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() && s <= 86_400.0 => {
                Ok(Some(Duration::from_secs_f64(s)))
            }
            _ => Err(field_error(
                "timeout",
                "must be a number of seconds above 0 and at most 86400",
            )),
        },
        Some(_) => Err(field_error("timeout", "must be a number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<HooksConfig, HookConfigError> {
        let mut c = HooksConfig::default();
        c.add_block(&v, Path::new("/s.json"), Some(Scope::User), None, "hooks")?;
        Ok(c)
    }

    #[test]
    fn reads_every_handler_field() {
        let c = parse(json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "./a.sh", "timeout": 5, "if": "Bash(rm *)",
                 "statusMessage": "checking", "onFailure": "block", "shell": "bash"},
                {"type": "command", "command": "node", "args": ["x.js", "${CLAUDE_PROJECT_DIR}"], "async": true},
                {"type": "http", "url": "http://127.0.0.1:9/h", "headers": {"Authorization": "Bearer $TOKEN"},
                 "allowedEnvVars": ["TOKEN"], "timeout": 0.5}
            ]}],
            "stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}],
            "NoSuchEvent": []
        }))
        .unwrap();
        assert_eq!(c.hooks.len(), 4);
        let a = &c.hooks[0];
        assert_eq!(a.timeout, Some(Duration::from_secs(5)));
        assert_eq!(a.on_failure, OnFailure::Block);
        assert_eq!(a.condition.as_deref(), Some("Bash(rm *)"));
        assert_eq!(a.source.to_string(), "/s.json#hooks.PreToolUse[0].hooks[0]");
        assert!(c.hooks[1].is_async);
        assert_eq!(
            c.hooks[1].handler.label(),
            "node x.js ${CLAUDE_PROJECT_DIR}"
        );
        assert_eq!(c.hooks[2].timeout, Some(Duration::from_millis(500)));
        assert_eq!(c.hooks[3].event, HookEvent::Stop);
        assert_eq!(c.hooks[3].handler.kind(), "prompt");
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    }

    #[test]
    fn malformed_handlers_name_file_and_key() {
        let cases = [
            (
                json!({"PreToolUse": [{"hooks": [{"command": "x"}]}]}),
                "hooks.PreToolUse[0].hooks[0].type",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}),
                "hooks.PreToolUse[0].hooks[0].timeout",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}),
                "hooks.PreToolUse[0].hooks[0].timeout",
            ),
            (
                json!({"PreToolUse": [{"hooks": [{"type": "http", "url": "ftp://x"}]}]}),
                "hooks.PreToolUse[0].hooks[0].url",
            ),
            (
                json!({"PreToolUse": [{"matcher": 3, "hooks": []}]}),
                "hooks.PreToolUse[0].matcher",
            ),
            (json!({"PreToolUse": {}}), "hooks.PreToolUse"),
            (
                json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "onFailure": "explode"}]}]}),
                "hooks.Stop[0].hooks[0].onFailure",
            ),
            (
                json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "shell": "powershell"}]}]}),
                "hooks.Stop[0].hooks[0].shell",
            ),
            (
                json!({"Stop": [{"hooks": [{"type": "webhook"}]}]}),
                "hooks.Stop[0].hooks[0].type",
            ),
        ];
        for (v, key) in cases {
            let e = parse(v).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(e.to_string().starts_with("/s.json: `"), "{e}");
        }
    }
}
