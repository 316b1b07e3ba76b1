//! One settings file's text to its [`SettingsFile`] and validated permissions: the trust table
//! applied first, then each key checked.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{SettingsError, SettingsFile, known_keys, trust_table};
use crate::modes::PermissionMode;
use crate::permissions::rules::{Parsed, parse_rule};
use crate::permissions::{RuleEntry, RuleList, RuleOrigin, Scope};

/// What one file's `permissions` and `sandbox` blocks say, validated.
#[derive(Debug, Default)]
pub(super) struct ParsedPermissions {
    pub(super) allow: Vec<RuleEntry>,
    pub(super) ask: Vec<RuleEntry>,
    pub(super) deny: Vec<RuleEntry>,
    pub(super) additional_directories: Vec<PathBuf>,
    pub(super) default_mode: Option<PermissionMode>,
    pub(super) disable_bypass: bool,
    pub(super) disable_auto: bool,
    pub(super) sandbox_enabled: Option<bool>,
    pub(super) auto_allow_bash: Option<bool>,
    pub(super) warnings: Vec<String>,
}

pub(super) fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

pub(super) fn parse_text(
    path: PathBuf,
    text: &str,
    scope: Scope,
    claude: bool,
    root: PathBuf,
    trusted: bool,
    home: &Path,
) -> Result<(SettingsFile, ParsedPermissions), SettingsError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SettingsError::Json {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    parse_file(path, value, scope, claude, root, trusted, home)
}

pub(super) fn parse_file(
    path: PathBuf,
    value: Value,
    scope: Scope,
    claude: bool,
    root: PathBuf,
    trusted: bool,
    home: &Path,
) -> Result<(SettingsFile, ParsedPermissions), SettingsError> {
    let Value::Object(map) = value else {
        return Err(SettingsError::Invalid {
            path,
            key: "(top level)".into(),
            problem: "must be a JSON object".into(),
        });
    };
    // The trust table decides, before anything reads the file, what this source may set; the
    // whole file is still validated, so a malformed file is refused whether or not its source
    // could have set the faulty key.
    let mut restricted = map.clone();
    let dropped = trust_table::restrict(&mut restricted, scope, trusted);
    if !dropped.is_empty() {
        parse_map(&path, &map, scope, &root, home)?;
    }
    let mut parsed = parse_map(&path, &restricted, scope, &root, home)?;
    // A key nothing reads has no effect whether dropped or not: the unknown-key warning
    // below covers a typo, and a key only Claude Code reads needs no word.
    parsed.warnings.extend(
        dropped
            .iter()
            .filter(|d| trust_table::spec(&d.path).is_some())
            .map(|d| format!("{}: {}", path.display(), d.message)),
    );
    let unknown = known_keys::unknown_keys(&map);
    if !unknown.is_empty() {
        let listed: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        parsed.warnings.push(format!(
            "{}: unknown settings key{} ignored: {}",
            path.display(),
            if unknown.len() == 1 { "" } else { "s" },
            listed.join(", ")
        ));
    }
    let file = SettingsFile {
        path,
        scope,
        claude,
        root,
        trusted,
        value: restricted,
        dropped: dropped.into_iter().map(|d| d.path).collect(),
    };
    Ok((file, parsed))
}

/// Validates one settings object and reads its `permissions` and `sandbox` blocks.
fn parse_map(
    path: &Path,
    map: &Map<String, Value>,
    scope: Scope,
    root: &Path,
    home: &Path,
) -> Result<ParsedPermissions, SettingsError> {
    let path = path.to_path_buf();
    let root = root.to_path_buf();
    let invalid = |key: &str, problem: &str| SettingsError::Invalid {
        path: path.clone(),
        key: key.to_owned(),
        problem: problem.to_owned(),
    };
    let mut parsed = ParsedPermissions::default();
    if let Some(perms) = map.get("permissions") {
        let Value::Object(perms) = perms else {
            return Err(invalid("permissions", "must be an object"));
        };
        for (key, list) in [
            ("deny", RuleList::Deny),
            ("ask", RuleList::Ask),
            ("allow", RuleList::Allow),
        ] {
            let Some(v) = perms.get(key) else { continue };
            let items = string_list(v, &format!("permissions.{key}"), &invalid)?;
            for (index, text) in items.into_iter().enumerate() {
                let origin = RuleOrigin {
                    scope,
                    file: Some(path.clone()),
                    list,
                    index,
                };
                match parse_rule(&text, list) {
                    Ok(Parsed::Rule(rule, note)) => {
                        if let Some(note) = note {
                            parsed.warnings.push(format!("{origin}: {note}"));
                        }
                        let entry = RuleEntry {
                            rule,
                            origin,
                            settings_root: root.clone(),
                        };
                        match list {
                            RuleList::Deny => parsed.deny.push(entry),
                            RuleList::Ask => parsed.ask.push(entry),
                            RuleList::Allow => parsed.allow.push(entry),
                        }
                    }
                    Ok(Parsed::Ignored(why)) => parsed.warnings.push(format!("{origin}: {why}")),
                    Err(reason) => {
                        return Err(SettingsError::Rule {
                            path: path.clone(),
                            list,
                            index,
                            rule: text,
                            reason,
                        });
                    }
                }
            }
        }
        if let Some(v) = perms.get("additionalDirectories") {
            for (i, d) in string_list(v, "permissions.additionalDirectories", &invalid)?
                .into_iter()
                .enumerate()
            {
                if d.trim().is_empty() {
                    return Err(invalid(
                        &format!("permissions.additionalDirectories[{i}]"),
                        "is empty",
                    ));
                }
                let p = if let Some(rest) = d.strip_prefix("~/") {
                    home.join(rest)
                } else {
                    absolute(&root, Path::new(&d))
                };
                parsed.additional_directories.push(p);
            }
        }
        if let Some(v) = perms.get("defaultMode") {
            let s = v
                .as_str()
                .ok_or_else(|| invalid("permissions.defaultMode", "must be a string"))?;
            parsed.default_mode = Some(
                s.parse::<PermissionMode>()
                    .map_err(|e| invalid("permissions.defaultMode", &e.to_string()))?,
            );
        }
        for (key, slot) in [
            ("disableBypassPermissionsMode", &mut parsed.disable_bypass),
            ("disableAutoMode", &mut parsed.disable_auto),
        ] {
            if let Some(v) = perms.get(key) {
                *slot = match v {
                    Value::String(s) if s == "disable" => true,
                    Value::Bool(b) => *b,
                    _ => {
                        return Err(invalid(
                            &format!("permissions.{key}"),
                            "must be \"disable\"",
                        ));
                    }
                };
            }
        }
    }
    if let Some(sandbox) = map.get("sandbox") {
        let Value::Object(sandbox) = sandbox else {
            return Err(invalid("sandbox", "must be an object"));
        };
        for (key, slot) in [
            ("enabled", &mut parsed.sandbox_enabled),
            ("autoAllowBashIfSandboxed", &mut parsed.auto_allow_bash),
        ] {
            if let Some(v) = sandbox.get(key) {
                *slot =
                    Some(v.as_bool().ok_or_else(|| {
                        invalid(&format!("sandbox.{key}"), "must be true or false")
                    })?);
            }
        }
    }
    if let Some(h) = map.get("hooks")
        && !h.is_object()
    {
        return Err(invalid(
            "hooks",
            "must be an object mapping event names to matcher groups",
        ));
    }
    if let Some(d) = map.get("disableAllHooks")
        && !d.is_boolean()
    {
        return Err(invalid("disableAllHooks", "must be true or false"));
    }
    if let Some(v) = map.get(super::SESSIONS_KEY) {
        super::sessions::parse(v).map_err(|(key, problem)| invalid(&key, &problem))?;
    }
    if let Some(h) = map.get(crate::hooks::HOOK_ENVIRONMENT_KEY) {
        crate::hooks::parse_hook_environment(h)
            .map_err(|(key, problem)| invalid(&key, &problem))?;
    }
    Ok(parsed)
}

fn string_list(
    v: &Value,
    key: &str,
    invalid: &dyn Fn(&str, &str) -> SettingsError,
) -> Result<Vec<String>, SettingsError> {
    let Value::Array(items) = v else {
        return Err(invalid(key, "must be an array of strings"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(&format!("{key}[{i}]"), "must be a string"))
        })
        .collect()
}
