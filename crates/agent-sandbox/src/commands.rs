//! The command checker: a shell string is parsed once with `agent_core::shell` (the parser the
//! permission engine uses) and every simple command it can run, at every nesting level, is
//! checked: the name of every wrapper layer and of the innermost command, by basename, against
//! the allowlist and the denylist.
//!
//! Denied with a reason: anything that does not parse or has parts that cannot be analysed;
//! a command name only known at run time (`$cmd`, `{rm,x}`, globs); a shell that reads its
//! script from stdin or a file (`echo x | sh`, `bash script.sh`); inline interpreter code
//! (`python3 -c`, `node -e`, ...) while a denylist is in force; a program run from a writable
//! directory while an allowlist is in force; an argument or redirect naming a denied path.
//!
//! | command (with `rm` denied)     | verdict | why |
//! |--------------------------------|---------|-----|
//! | `ls; rm -rf /`                 | deny    | `rm` is the second command |
//! | `bash -lc 'rm x'`              | deny    | the `-c` string is parsed too |
//! | `x=$(rm y)`                    | deny    | substitutions are walked |
//! | `find . -exec rm {} +`         | deny    | `-exec` runs `rm` |
//! | `env rm x`, `command rm x`     | deny    | wrappers are seen through |
//! | `a=rm; $a x`                   | deny    | dynamic command name |
//! | `echo ok \| sh`                | deny    | a shell reading stdin |
//! | `git status && ls`             | allow   | |

use std::path::{Path, PathBuf};

use agent_core::shell::{self, ParsedScript, ShellError, SimpleCommand, wrappers};
use serde_json::Value;

use crate::paths::{Op, PathPolicy, absolute, lexical};
use crate::settings::SandboxSettings;
use crate::verdict::Verdict;

/// Shells: run without `-c` they read a script the checker cannot see.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "busybox",
];

/// Interpreters and the flags that make them run inline code.
pub const INLINE_CODE: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python2", &["-c"]),
    ("python3", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("awk", &[]),
    ("osascript", &["-e"]),
];

/// The result of checking a tool input (`{"command": ..., "dangerouslyDisableSandbox": ...}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputVerdict {
    /// The verdict on the command.
    pub verdict: Verdict,
    /// Whether the command may run outside the OS sandbox: only when the input asks and the
    /// settings allow unsandboxed commands.
    pub run_unsandboxed: bool,
}

/// Checks shell command strings.
#[derive(Clone, Debug)]
pub struct CommandChecker {
    allowed: Option<Vec<String>>,
    denied: Vec<String>,
    unrestricted: bool,
    allow_unsandboxed: bool,
    paths: PathPolicy,
    writable: Vec<PathBuf>,
    home: Option<PathBuf>,
    cwd: PathBuf,
    /// Allowlisted names refused at start-up, and why.
    refused: Vec<(String, String)>,
}

fn path_var_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// The first executable file named `name` on `PATH`, canonicalised.
pub fn which(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter().find_map(|d| {
        let p = d.join(name);
        let m = std::fs::metadata(&p).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if !m.is_file() || m.permissions().mode() & 0o111 == 0 {
                return None;
            }
        }
        #[cfg(not(unix))]
        if !m.is_file() {
            return None;
        }
        std::fs::canonicalize(&p).ok()
    })
}

impl CommandChecker {
    /// Compiles the command part of `settings`. Allowlisted names are resolved on `PATH` once:
    /// a name that is not found, or that resolves inside a writable directory (the agent could
    /// have written it), is refused (document 002).
    pub fn new(settings: &SandboxSettings) -> Self {
        Self::with_path(settings, &path_var_dirs())
    }

    /// [`Self::new`] with an explicit `PATH` (for tests and hosts that set their own).
    pub fn with_path(settings: &SandboxSettings, path: &[PathBuf]) -> Self {
        let mut writable: Vec<PathBuf> = settings.base_dir.iter().cloned().collect();
        writable.extend(settings.read_write_dirs.iter().cloned());
        writable.extend(settings.allowed_write_paths.iter().flatten().cloned());
        let writable: Vec<PathBuf> = writable
            .iter()
            .map(|p| {
                let l = lexical(p, Path::new("/"));
                crate::paths::resolve(&l).unwrap_or(l)
            })
            .collect();
        let mut refused = Vec::new();
        let allowed = settings.allowed_commands.as_ref().map(|names| {
            names
                .iter()
                .filter(|n| {
                    let n = n.as_str();
                    if n.contains('/') {
                        refused.push((
                            n.to_owned(),
                            "allowlist entries are command names, not paths".to_owned(),
                        ));
                        return false;
                    }
                    match which(n, path) {
                        None => {
                            refused.push((n.to_owned(), "not found on PATH".to_owned()));
                            false
                        }
                        Some(p) if writable.iter().any(|w| p.starts_with(w)) => {
                            refused.push((
                                n.to_owned(),
                                format!("resolves to {}, inside a writable directory", p.display()),
                            ));
                            false
                        }
                        Some(_) => true,
                    }
                })
                .cloned()
                .collect()
        });
        Self {
            allowed,
            denied: settings.denied_commands.clone(),
            unrestricted: settings.unrestricted,
            allow_unsandboxed: settings.allow_unsandboxed_commands,
            paths: PathPolicy::new(settings, None),
            writable,
            home: std::env::var_os("HOME").map(PathBuf::from),
            cwd: settings
                .base_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("/")),
            refused,
        }
    }

    /// Allowlisted names refused at start-up, with the reason.
    pub fn refused(&self) -> &[(String, String)] {
        &self.refused
    }

    /// Checks a tool input: its `command`, and whether a `dangerouslyDisableSandbox` flag takes
    /// effect (only when the settings allow unsandboxed commands).
    pub fn check_input(&self, input: &Value) -> InputVerdict {
        let command = input.get("command").and_then(Value::as_str);
        let asked = input
            .get("dangerouslyDisableSandbox")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let verdict = match command {
            Some(c) => self.check(c),
            None => Verdict::deny("the input has no `command` string", None),
        };
        InputVerdict {
            verdict,
            run_unsandboxed: asked && self.allow_unsandboxed,
        }
    }

    /// Checks one shell command string (parsed here; see [`Self::check_parsed`] to reuse a
    /// parse made for the permission engine).
    pub fn check(&self, command: &str) -> Verdict {
        if self.unrestricted {
            return Self::unrestricted_verdict();
        }
        self.check_parsed(&shell::parse(command))
    }

    /// Checks a command already parsed with [`agent_core::shell::parse`]: the permission
    /// engine's parse of the same call ([`agent_core::permissions::PreparedCall::shell_parse`]),
    /// so that a call is parsed once. A parse error is a denial.
    pub fn check_parsed(&self, parsed: &Result<ParsedScript, ShellError>) -> Verdict {
        if self.unrestricted {
            return Self::unrestricted_verdict();
        }
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => return Verdict::deny(e.to_string(), Some("built-in: unparseable".into())),
        };
        if let Some(issue) = parsed.issues.first() {
            return Verdict::deny(
                format!("part of the command cannot be analysed: {}", issue.detail),
                Some("built-in: unanalysable".into()),
            );
        }
        for cmd in &parsed.commands {
            if let Some(v) = self.check_simple(cmd) {
                return v;
            }
        }
        Verdict::allow(
            format!(
                "all {} command(s) are allowed",
                parsed
                    .commands
                    .iter()
                    .filter(|c| !c.words.is_empty())
                    .count()
            ),
            None,
        )
    }

    fn unrestricted_verdict() -> Verdict {
        Verdict::allow(
            "unrestricted mode: any command may run",
            Some("unrestricted".into()),
        )
    }

    fn check_simple(&self, cmd: &SimpleCommand) -> Option<Verdict> {
        // Shown in reasons; formatted only when a verdict needs it.
        let shown = cmd;
        if cmd.words.is_empty() {
            return self.check_redirects(cmd, shown);
        }
        // Every command-position word: the outer name and the name inside each wrapper layer.
        let mut positions = vec![0usize];
        positions.extend(cmd.layers.iter().map(|l| l.inner));
        for &i in &positions {
            let Some(w) = cmd.words.get(i) else { continue };
            if !w.is_static() {
                return Some(Verdict::deny(
                    format!(
                        "`{shown}`: the command name `{}` is only known at run time",
                        w.raw
                    ),
                    Some("built-in: dynamic command name".into()),
                ));
            }
            if let Some(v) = self.check_name(&w.text, shown) {
                return Some(v);
            }
        }
        let inner = cmd.effective_words();
        let name = wrappers::basename(inner.first().map_or("", |w| w.text.as_str()));
        if SHELLS.contains(&name) && !inner.iter().skip(1).any(|w| is_c_flag(&w.text)) {
            let reads = if inner.len() > 1 && !inner[1].text.starts_with('-') {
                "a script file"
            } else {
                "its standard input"
            };
            return Some(Verdict::deny(
                format!(
                    "`{shown}`: `{name}` would run commands from {reads}, which cannot be checked"
                ),
                Some("built-in: shell without -c".into()),
            ));
        }
        if SHELLS.contains(&name)
            && inner
                .iter()
                .skip(1)
                .take_while(|w| w.text.starts_with('-'))
                .any(|w| w.text == "--login" || (!w.text.starts_with("--") && w.text.contains('l')))
        {
            return Some(Verdict::deny(
                format!(
                    "`{shown}`: a login shell runs startup files (profile scripts) that cannot be checked"
                ),
                Some("built-in: login shell".into()),
            ));
        }
        if !self.denied.is_empty()
            && let Some((_, flags)) = INLINE_CODE.iter().find(|(n, _)| *n == name)
            && (flags.is_empty()
                || inner
                    .iter()
                    .skip(1)
                    .any(|w| flags.contains(&w.text.as_str())))
        {
            return Some(Verdict::deny(
                format!(
                    "`{shown}`: inline {name} code could run a denied command; the denylist cannot see inside it"
                ),
                Some("built-in: inline interpreter code".into()),
            ));
        }
        for w in cmd.words.iter().skip(1) {
            if let Some(v) = self.check_path_word(&w.text, w.is_static(), w.home, Op::Read, shown) {
                return Some(v);
            }
        }
        self.check_redirects(cmd, shown)
    }

    fn check_redirects(&self, cmd: &SimpleCommand, shown: &SimpleCommand) -> Option<Verdict> {
        for r in &cmd.redirects {
            if let Some(t) = r.written_file() {
                if !t.is_static() {
                    return Some(Verdict::deny(
                        format!(
                            "`{shown}`: writes to a file only known at run time ({})",
                            t.raw
                        ),
                        Some("built-in: dynamic redirect".into()),
                    ));
                }
                let p = self.expand(&t.text, t.home);
                if p.as_os_str() != "/dev/null" {
                    let v = self.paths.check(&p, Op::Write);
                    if !v.allowed {
                        return Some(Verdict::deny(
                            format!("`{shown}` writes {}: {}", p.display(), v.reason),
                            v.rule,
                        ));
                    }
                }
            }
            if let Some(t) = r.read_file()
                && let Some(v) =
                    self.check_path_word(&t.text, t.is_static(), t.home, Op::Read, shown)
            {
                return Some(v);
            }
        }
        None
    }

    /// The absolute, unnormalised path a word names (`~` expanded): resolve it with
    /// [`crate::paths::resolve`], which applies `..` after the symlinks before it.
    fn expand(&self, text: &str, home: bool) -> PathBuf {
        if home && let Some(h) = &self.home {
            let rest = text.trim_start_matches('~').trim_start_matches('/');
            return h.join(rest);
        }
        absolute(Path::new(text), &self.cwd)
    }

    /// An argument that looks like a path and names a denied path.
    fn check_path_word(
        &self,
        text: &str,
        is_static: bool,
        home: bool,
        op: Op,
        shown: &SimpleCommand,
    ) -> Option<Verdict> {
        if !is_static || !(text.contains('/') || home || text.starts_with('.')) {
            return None;
        }
        let p = self.expand(text.split_once('=').map_or(text, |(_, v)| v), home);
        let real = crate::paths::resolve(&p).unwrap_or_else(|_| lexical(&p, &self.cwd));
        self.paths.denied(&real, op).map(|v| {
            Verdict::deny(
                format!("`{shown}` names {}: {}", real.display(), v.reason),
                v.rule,
            )
        })
    }

    fn check_name(&self, word: &str, shown: &SimpleCommand) -> Option<Verdict> {
        let base = wrappers::basename(word);
        if base.is_empty() {
            return Some(Verdict::deny(
                format!("`{shown}`: empty command name"),
                None,
            ));
        }
        if let Some(d) = self.denied.iter().find(|d| d.as_str() == base) {
            return Some(Verdict::deny(
                format!("`{shown}` runs `{base}`, which is denied"),
                Some(format!("deniedCommands: {d}")),
            ));
        }
        if let Some(allowed) = &self.allowed {
            if !allowed.iter().any(|a| a == base) {
                let why = self
                    .refused
                    .iter()
                    .find(|(n, _)| n == base)
                    .map_or_else(String::new, |(_, r)| format!(" (refused at start-up: {r})"));
                return Some(Verdict::deny(
                    format!("`{shown}` runs `{base}`, which is not in the allowlist{why}"),
                    Some("allowedCommands".into()),
                ));
            }
            if word.contains('/') {
                let p = lexical(Path::new(word), &self.cwd);
                if self.writable.iter().any(|w| p.starts_with(w)) {
                    return Some(Verdict::deny(
                        format!(
                            "`{shown}` runs {}, a program inside a writable directory",
                            p.display()
                        ),
                        Some("built-in: program in a writable directory".into()),
                    ));
                }
            }
        }
        None
    }
}

fn is_c_flag(arg: &str) -> bool {
    arg == "-c"
        || (arg.starts_with('-')
            && !arg.starts_with("--")
            && arg.len() > 2
            && arg[1..].chars().all(|c| c.is_ascii_alphabetic())
            && arg.contains('c'))
}
