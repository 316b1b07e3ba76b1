//! One settings model for documents 000 and 002 and Claude Code's `sandbox` block.
//!
//! | model field | document 000 key | Claude Code key | document 002 |
//! |---|---|---|---|
//! | `base_dir` | — | — | `--base-dir` |
//! | `read_write_dirs` | — | — | `--allow-dir` |
//! | `read_only_dirs` | — | — | (read-only extra dirs) |
//! | `allowed_read_paths` | `allowedReadPaths` | `filesystem.allowRead` | |
//! | `allowed_write_paths` | `allowedWritePaths` | `filesystem.allowWrite` | |
//! | `denied_paths` | `deniedPaths` | — | |
//! | `denied_read_paths` | — | `filesystem.denyRead` | |
//! | `denied_write_paths` | — | `filesystem.denyWrite` | |
//! | `allowed_commands` | `allowedCommands` | — | `--allowed-commands` |
//! | `denied_commands` | `deniedCommands` | — | |
//! | `excluded_commands` | — | `excludedCommands` | |
//! | `network.allowed_domains` | `network.allowedDomains` | `network.allowedDomains` | |
//! | `network.denied_domains` | `network.deniedDomains` | `network.deniedDomains` | |
//! | `unrestricted` | — | — | `--yolo` |
//!
//! Absent lists mean "no list"; an empty `allowedCommands` allows nothing. The filesystem root
//! can never be granted (an allow entry of `/` is an error), even with `unrestricted`.

use std::path::{Path, PathBuf};

use agent_core::permissions::Scope;
use agent_core::settings::Settings;
use serde_json::{Map, Value};

/// Network settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkSettings {
    /// Hosts that may be fetched (`example.com`, `*.example.com`); `None` = any public host.
    pub allowed_domains: Option<Vec<String>>,
    /// Hosts that may never be fetched; wins over `allowed_domains`.
    pub denied_domains: Vec<String>,
    /// Binding local ports (recorded for the OS sandbox).
    pub allow_local_binding: bool,
}

/// The sandbox settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Whether the OS sandbox is on (`enabled`); the application checks always run.
    pub enabled: bool,
    /// Document 002's base directory: readable and writable.
    pub base_dir: Option<PathBuf>,
    /// Extra read-write directories.
    pub read_write_dirs: Vec<PathBuf>,
    /// Extra read-only directories.
    pub read_only_dirs: Vec<PathBuf>,
    /// Read allowlist (`None`: reads are not limited to a list).
    pub allowed_read_paths: Option<Vec<PathBuf>>,
    /// Write allowlist (`None`: writes are not limited to a list, unless a base directory is set).
    pub allowed_write_paths: Option<Vec<PathBuf>>,
    /// Paths neither read nor written; wins over every allow.
    pub denied_paths: Vec<PathBuf>,
    /// Paths never read.
    pub denied_read_paths: Vec<PathBuf>,
    /// Paths never written.
    pub denied_write_paths: Vec<PathBuf>,
    /// Command allowlist of basenames (`None`: no allowlist; empty: nothing runs).
    pub allowed_commands: Option<Vec<String>>,
    /// Command denylist of basenames.
    pub denied_commands: Vec<String>,
    /// Claude Code's `excludedCommands` (run outside the OS sandbox; still checked here).
    pub excluded_commands: Vec<String>,
    /// Network settings.
    pub network: NetworkSettings,
    /// `allowNestedSandbox`.
    pub allow_nested_sandbox: bool,
    /// `autoAllowBashIfSandboxed`.
    pub auto_allow_bash_if_sandboxed: bool,
    /// `allowUnsandboxedCommands`: whether a `dangerouslyDisableSandbox` flag may take effect.
    pub allow_unsandboxed_commands: bool,
    /// `enableWeakerNestedSandbox`.
    pub enable_weaker_nested_sandbox: bool,
    /// `failIfUnavailable`: `None` when no settings file sets it. This runtime then fails
    /// (document 000's SDK default, and safe by default); only an explicit `false` lets a
    /// command run without the OS sandbox when it cannot start (see [`Self::fails_if_unavailable`]).
    pub fail_if_unavailable: Option<bool>,
    /// Document 002's YOLO mode: no path or command limits, but the root stays ungrantable and
    /// denied paths stay denied.
    pub unrestricted: bool,
}

/// Occurs when sandbox settings are malformed; names the file and key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: `sandbox.{key}` {problem}")]
pub struct SandboxSettingsError {
    /// The settings file (or `code`).
    pub file: String,
    /// The key, e.g. `filesystem.allowWrite[2]`.
    pub key: String,
    /// What is wrong and what to do.
    pub problem: String,
}

impl SandboxSettings {
    /// The same settings for a session working in a shadow copy (`view`: the real folder and
    /// its shadow): every path list entry naming the real folder or a path beneath it also
    /// names the same path beneath the shadow (the originals stay), so a project's `denyRead`
    /// of `./secrets` still hides the copied secrets.
    ///
    /// ```
    /// use agent_core::view::PathView;
    /// use agent_sandbox::settings::SandboxSettings;
    /// let s = SandboxSettings { denied_read_paths: vec!["/r/app/secrets".into()], ..SandboxSettings::default() };
    /// let s = s.shadow_of(&PathView::new("/r/app", "/s/tree"));
    /// assert!(s.denied_read_paths.contains(&"/s/tree/secrets".into()));
    /// assert!(s.denied_read_paths.contains(&"/r/app/secrets".into()));
    /// ```
    #[must_use]
    pub fn shadow_of(mut self, view: &agent_core::view::PathView) -> Self {
        let copy = |list: &mut Vec<PathBuf>| {
            let moved: Vec<PathBuf> = list
                .iter()
                .filter_map(|p| view.actual_path(p))
                .filter(|p| !list.contains(p))
                .collect();
            list.extend(moved);
        };
        copy(&mut self.read_write_dirs);
        copy(&mut self.read_only_dirs);
        copy(&mut self.denied_paths);
        copy(&mut self.denied_read_paths);
        copy(&mut self.denied_write_paths);
        if let Some(l) = self.allowed_read_paths.as_mut() {
            copy(l);
        }
        if let Some(l) = self.allowed_write_paths.as_mut() {
            copy(l);
        }
        self
    }

    /// Whether an OS sandbox that cannot start is an error (`true` unless settings say
    /// `failIfUnavailable: false`).
    pub fn fails_if_unavailable(&self) -> bool {
        self.fail_if_unavailable.unwrap_or(true)
    }

    /// Document 002's model: everything inside `base_dir` may be read and written, nothing
    /// outside it, and no command runs until some are allowed.
    pub fn with_base_dir(base_dir: impl Into<PathBuf>) -> Self {
        Self {
            base_dir: Some(base_dir.into()),
            allowed_commands: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Checks what settings given in code cannot be: relative paths, a granted root, and
    /// domain-list entries that cannot be normalised as hosts (see
    /// [`crate::urls::normalize_domain_entry`]).
    ///
    /// # Errors
    /// [`SandboxSettingsError`] naming the field (and, for a list, the entry's index).
    pub fn validate(&self) -> Result<(), SandboxSettingsError> {
        let err = |key: &str, problem: String| SandboxSettingsError {
            file: "code".into(),
            key: key.into(),
            problem,
        };
        check_domain_entries(
            "network.denied_domains",
            &self.network.denied_domains,
            |key, problem| err(key, problem),
        )?;
        if let Some(allowed) = &self.network.allowed_domains {
            check_domain_entries("network.allowed_domains", allowed, |key, problem| {
                err(key, problem)
            })?;
        }
        let grants = [
            ("base_dir", self.base_dir.iter().collect::<Vec<_>>()),
            ("read_write_dirs", self.read_write_dirs.iter().collect()),
            ("read_only_dirs", self.read_only_dirs.iter().collect()),
            (
                "allowed_read_paths",
                self.allowed_read_paths.iter().flatten().collect(),
            ),
            (
                "allowed_write_paths",
                self.allowed_write_paths.iter().flatten().collect(),
            ),
        ];
        for (key, paths) in grants {
            for p in paths {
                if !p.is_absolute() {
                    return Err(err(
                        key,
                        format!("{} must be an absolute path", p.display()),
                    ));
                }
                if is_root(p) {
                    return Err(err(
                        key,
                        "grants the filesystem root, which is never grantable; name a directory"
                            .into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The merged `sandbox` blocks of every settings file, in precedence order: lists
    /// concatenate, scalars follow precedence. An untrusted project's file may only restrict
    /// (its deny lists apply; its allow lists, `unrestricted` and `allowUnsandboxedCommands` are
    /// ignored).
    ///
    /// # Errors
    /// [`SandboxSettingsError`] naming the file and key of the first malformed entry.
    pub fn from_settings(settings: &Settings, home: &Path) -> Result<Self, SandboxSettingsError> {
        let mut out = Self {
            allow_unsandboxed_commands: true,
            ..Self::default()
        };
        for file in &settings.files {
            let Some(block) = file.value.get("sandbox") else {
                continue;
            };
            let label = file.path.display().to_string();
            let Value::Object(block) = block else {
                return Err(SandboxSettingsError {
                    file: label,
                    key: "(block)".into(),
                    problem: "must be an object".into(),
                });
            };
            let untrusted = !file.trusted && matches!(file.scope, Scope::Project | Scope::Local);
            out.merge_block(block, &label, &file.root, home, !untrusted)?;
        }
        Ok(out)
    }

    /// Merges one `sandbox` block (see [`Self::from_settings`]); `root` anchors relative paths.
    ///
    /// # Errors
    /// [`SandboxSettingsError`] for the first malformed key.
    pub fn merge_block(
        &mut self,
        block: &Map<String, Value>,
        file: &str,
        root: &Path,
        home: &Path,
        may_grant: bool,
    ) -> Result<(), SandboxSettingsError> {
        let r = Reader { file, root, home };
        let fs = match block.get("filesystem") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err(r.err("filesystem", "must be an object")),
        };
        let net = match block.get("network") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err(r.err("network", "must be an object")),
        };
        for (key, slot) in [
            ("deniedPaths", &mut self.denied_paths),
            ("deniedReadPaths", &mut self.denied_read_paths),
            ("deniedWritePaths", &mut self.denied_write_paths),
        ] {
            slot.extend(r.paths(block, key, "")?.unwrap_or_default());
        }
        if let Some(fs) = fs {
            self.denied_read_paths
                .extend(r.paths(fs, "denyRead", "filesystem.")?.unwrap_or_default());
            self.denied_write_paths
                .extend(r.paths(fs, "denyWrite", "filesystem.")?.unwrap_or_default());
        }
        self.denied_commands
            .extend(r.strings(block, "deniedCommands", "")?.unwrap_or_default());
        self.excluded_commands.extend(
            r.strings(block, "excludedCommands", "")?
                .unwrap_or_default(),
        );
        if let Some(net) = net {
            self.network
                .denied_domains
                .extend(r.domains(net, "deniedDomains")?.unwrap_or_default());
        }
        if !may_grant {
            return Ok(());
        }
        let extend = |slot: &mut Option<Vec<PathBuf>>, more: Option<Vec<PathBuf>>| {
            if let Some(more) = more {
                slot.get_or_insert_with(Vec::new).extend(more);
            }
        };
        extend(
            &mut self.allowed_read_paths,
            r.paths(block, "allowedReadPaths", "")?,
        );
        extend(
            &mut self.allowed_write_paths,
            r.paths(block, "allowedWritePaths", "")?,
        );
        if let Some(fs) = fs {
            extend(
                &mut self.allowed_read_paths,
                r.paths(fs, "allowRead", "filesystem.")?,
            );
            extend(
                &mut self.allowed_write_paths,
                r.paths(fs, "allowWrite", "filesystem.")?,
            );
        }
        if let Some(dir) = r.paths(block, "baseDir", "")? {
            self.base_dir = dir.into_iter().last();
        }
        self.read_write_dirs
            .extend(r.paths(block, "allowDirs", "")?.unwrap_or_default());
        self.read_only_dirs
            .extend(r.paths(block, "allowDirsReadOnly", "")?.unwrap_or_default());
        if let Some(cmds) = r.strings(block, "allowedCommands", "")? {
            self.allowed_commands
                .get_or_insert_with(Vec::new)
                .extend(cmds);
        }
        if let Some(net) = net {
            if let Some(d) = r.domains(net, "allowedDomains")? {
                self.network
                    .allowed_domains
                    .get_or_insert_with(Vec::new)
                    .extend(d);
            }
            if let Some(b) = r.boolean(net, "allowLocalBinding", "network.")? {
                self.network.allow_local_binding = b;
            }
        }
        for (key, slot) in [
            ("enabled", &mut self.enabled),
            ("allowNestedSandbox", &mut self.allow_nested_sandbox),
            (
                "autoAllowBashIfSandboxed",
                &mut self.auto_allow_bash_if_sandboxed,
            ),
            (
                "allowUnsandboxedCommands",
                &mut self.allow_unsandboxed_commands,
            ),
            (
                "enableWeakerNestedSandbox",
                &mut self.enable_weaker_nested_sandbox,
            ),
            ("unrestricted", &mut self.unrestricted),
        ] {
            if let Some(b) = r.boolean(block, key, "")? {
                *slot = b;
            }
        }
        if let Some(b) = r.boolean(block, "failIfUnavailable", "")? {
            self.fail_if_unavailable = Some(b);
        }
        Ok(())
    }
}

/// Checks that every domain-list entry can be normalised as a host; `err` builds the error from
/// the entry's key (`{key}[i]`) and the problem.
fn check_domain_entries(
    key: &str,
    entries: &[String],
    err: impl Fn(&str, String) -> SandboxSettingsError,
) -> Result<(), SandboxSettingsError> {
    for (i, entry) in entries.iter().enumerate() {
        if let Err(why) = crate::urls::normalize_domain_entry(entry) {
            return Err(err(
                &format!("{key}[{i}]"),
                crate::urls::entry_problem(entry, &why),
            ));
        }
    }
    Ok(())
}

/// Whether `p` names the filesystem root (`/`, `//`, `/.`, `/..`).
pub fn is_root(p: &Path) -> bool {
    p.is_absolute()
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir
                    | std::path::Component::CurDir
                    | std::path::Component::ParentDir
            )
        })
}

struct Reader<'a> {
    file: &'a str,
    root: &'a Path,
    home: &'a Path,
}

impl Reader<'_> {
    fn err(&self, key: &str, problem: &str) -> SandboxSettingsError {
        SandboxSettingsError {
            file: self.file.into(),
            key: key.into(),
            problem: problem.into(),
        }
    }

    fn strings(
        &self,
        m: &Map<String, Value>,
        key: &str,
        prefix: &str,
    ) -> Result<Option<Vec<String>>, SandboxSettingsError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v.as_str() {
                    Some(s) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
                    _ => {
                        Err(self.err(&format!("{prefix}{key}[{i}]"), "must be a non-empty string"))
                    }
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(self.err(&format!("{prefix}{key}"), "must be an array of strings")),
        }
    }

    /// A `network.*Domains` list: strings that can be normalised as hosts.
    fn domains(
        &self,
        m: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<Vec<String>>, SandboxSettingsError> {
        let list = self.strings(m, key, "network.")?;
        if let Some(entries) = &list {
            check_domain_entries(&format!("network.{key}"), entries, |key, problem| {
                SandboxSettingsError {
                    file: self.file.into(),
                    key: key.into(),
                    problem,
                }
            })?;
        }
        Ok(list)
    }

    fn boolean(
        &self,
        m: &Map<String, Value>,
        key: &str,
        prefix: &str,
    ) -> Result<Option<bool>, SandboxSettingsError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.err(&format!("{prefix}{key}"), "must be true or false")),
        }
    }

    /// Paths: `~/x` is home, `//x` and `/x` absolute, anything else relative to the file's root.
    fn paths(
        &self,
        m: &Map<String, Value>,
        key: &str,
        prefix: &str,
    ) -> Result<Option<Vec<PathBuf>>, SandboxSettingsError> {
        let single = match m.get(key) {
            Some(Value::String(s)) => Some(vec![s.clone()]),
            _ => None,
        };
        let Some(items) = (match single {
            Some(v) => Some(v),
            None => self.strings(m, key, prefix)?,
        }) else {
            return Ok(None);
        };
        let grants = !key.starts_with("deny") && !key.starts_with("denied");
        let mut out = Vec::with_capacity(items.len());
        for (i, s) in items.iter().enumerate() {
            let s = s.trim_end_matches("/**");
            let p = if s == "~" {
                self.home.to_path_buf()
            } else if let Some(rest) = s.strip_prefix("~/") {
                self.home.join(rest)
            } else if let Some(rest) = s.strip_prefix("//") {
                Path::new("/").join(rest)
            } else if s.starts_with('/') {
                PathBuf::from(s)
            } else {
                self.root.join(s.trim_start_matches("./"))
            };
            if grants && is_root(&p) {
                return Err(self.err(
                    &format!("{prefix}{key}[{i}]"),
                    "grants the filesystem root, which is never grantable; name a directory",
                ));
            }
            out.push(p);
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merged(v: Value, may_grant: bool) -> Result<SandboxSettings, SandboxSettingsError> {
        let mut s = SandboxSettings::default();
        let Value::Object(m) = v else { unreachable!() };
        s.merge_block(
            &m,
            "s.json",
            Path::new("/proj"),
            Path::new("/home/me"),
            may_grant,
        )?;
        Ok(s)
    }

    #[test]
    fn both_key_styles_map_onto_one_model() {
        let s = merged(
            json!({"allowedReadPaths": ["/project/"], "allowedWritePaths": ["build"],
                   "deniedPaths": ["/etc/", "~/.ssh"], "deniedCommands": ["rm", "sudo"],
                   "filesystem": {"allowWrite": ["//tmp/x/**"], "denyRead": ["./secrets"]},
                   "network": {"allowedDomains": ["*.example.com"], "deniedDomains": ["evil.com"],
                               "allowLocalBinding": true},
                   "excludedCommands": ["docker *"], "unrestricted": false}),
            true,
        )
        .unwrap();
        assert_eq!(s.allowed_read_paths, Some(vec![PathBuf::from("/project/")]));
        assert_eq!(
            s.allowed_write_paths,
            Some(vec![PathBuf::from("/proj/build"), PathBuf::from("/tmp/x")])
        );
        assert_eq!(
            s.denied_paths,
            vec![PathBuf::from("/etc/"), PathBuf::from("/home/me/.ssh")]
        );
        assert_eq!(s.denied_read_paths, vec![PathBuf::from("/proj/secrets")]);
        assert_eq!(s.denied_commands, vec!["rm", "sudo"]);
        assert_eq!(s.allowed_commands, None);
        assert!(s.network.allow_local_binding);
        assert_eq!(s.excluded_commands, vec!["docker *"]);
    }

    #[test]
    fn absent_versus_empty_allowlist() {
        assert_eq!(merged(json!({}), true).unwrap().allowed_commands, None);
        assert_eq!(
            merged(json!({"allowedCommands": []}), true)
                .unwrap()
                .allowed_commands,
            Some(vec![])
        );
    }

    #[test]
    fn root_is_never_grantable_and_untrusted_files_only_restrict() {
        for v in [
            json!({"allowedWritePaths": ["/"]}),
            json!({"filesystem": {"allowRead": ["//"]}}),
            json!({"allowDirs": ["/.."]}),
        ] {
            let e = merged(v, true).unwrap_err();
            assert!(e.to_string().contains("never grantable"), "{e}");
        }
        let s = merged(
            json!({"allowedWritePaths": ["/x"], "unrestricted": true, "deniedCommands": ["rm"]}),
            false,
        )
        .unwrap();
        assert_eq!(s.allowed_write_paths, None);
        assert!(!s.unrestricted);
        assert_eq!(s.denied_commands, vec!["rm"]);
        let e = merged(json!({"deniedCommands": "rm"}), true).unwrap_err();
        assert_eq!(e.key, "deniedCommands");
    }
}
