//! The command checker: a shell string is parsed once with `agent_core::shell` (the parser the
//! permission engine uses) and every simple command it can run, at every nesting level, is
//! checked: the name of every wrapper layer and of the innermost command, by basename, against
//! the allowlist and the denylist.
//!
//! Denied with a reason: anything that does not parse or has parts that cannot be analysed;
//! a command name only known at run time (`$cmd`, `{rm,x}`, globs); a shell that reads its
//! script from stdin or a file (`echo x | sh`, `bash script.sh`); inline interpreter code
//! (`python3 -c`, `node -e`, ...) while a denylist is in force; a program run from a writable
//! directory while an allowlist is in force; an argument or redirect naming a denied path
//! (after its symlinks, a glob's matches (`agent_core::glob`) and `cd` are followed:
//! `arguments`, `workdirs`, `recursion`); a variable set outside the harmless list
//! (`environment`); a sed script that runs commands or writes where it may not
//! (`agent_core::programs::sed`).
//!
//! | command (with `rm` denied)     | verdict | why |
//! |--------------------------------|---------|-----|
//! | `PATH=.; ls`                   | deny    | `PATH` is not a harmless variable |
//! | `sed 's/x/y/e' f`              | deny    | sed's `e` flag runs a command |
//! | `ls; rm -rf /`                 | deny    | `rm` is the second command |
//! | `bash -lc 'rm x'`              | deny    | the `-c` string is parsed too |
//! | `x=$(rm y)`                    | deny    | substitutions are walked |
//! | `find . -exec rm {} +`         | deny    | `-exec` runs `rm` |
//! | `env rm x`, `command rm x`     | deny    | wrappers are seen through |
//! | `a=rm; $a x`                   | deny    | dynamic command name |
//! | `echo ok \| sh`                | deny    | a shell reading stdin |
//! | `git status && ls`             | allow   | |

mod arguments;
mod environment;
mod recursion;
mod workdirs;
mod writes;

use std::path::{Path, PathBuf};

use agent_core::programs::effects;
use agent_core::shell::{self, ParsedScript, ScriptParseError, SimpleCommand, wrappers};
use serde_json::Value;

use self::arguments::{Base, Candidate, Reading};
use self::workdirs::WorkDirs;
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
    /// Each allowlisted name with the executable it resolved to at start-up.
    allowed_exes: Vec<(String, PathBuf)>,
    denied: Vec<String>,
    unrestricted: bool,
    allow_unsandboxed: bool,
    paths: PathPolicy,
    writable: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// `CDPATH`'s directories, searched by `cd` for a relative name.
    cdpath: Vec<PathBuf>,
    cwd: PathBuf,
    /// `cwd` with its symlinks resolved (once).
    cwd_real: PathBuf,
    /// Set (with the reason) while checking a script whose working directory is only known at
    /// run time (`cd "$d"`): relative paths could then be anywhere.
    cwd_unknown: Option<String>,
    /// Set while checking a script that runs `shopt` with `globstar` (or with an argument only
    /// known at run time): `**` then spans directories.
    globstar: bool,
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
        let mut allowed_exes = Vec::new();
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
                        Some(p) => {
                            allowed_exes.push((n.to_owned(), p));
                            true
                        }
                    }
                })
                .cloned()
                .collect()
        });
        let cwd = settings
            .base_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("/"));
        Self {
            allowed,
            allowed_exes,
            denied: settings.denied_commands.clone(),
            unrestricted: settings.unrestricted,
            allow_unsandboxed: settings.allow_unsandboxed_commands,
            paths: PathPolicy::new(settings, None),
            writable,
            home: std::env::var_os("HOME").map(PathBuf::from),
            cdpath: std::env::var_os("CDPATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            cwd_unknown: None,
            globstar: false,
            cwd_real: crate::paths::resolve(&cwd).unwrap_or_else(|_| cwd.clone()),
            cwd,
            refused,
        }
    }

    /// Anchors relative paths (in arguments, redirects and command names) at `cwd`, the
    /// session's current directory (default: the base directory, else `/`).
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        self.paths = self.paths.with_cwd(&cwd);
        self.cwd_real = crate::paths::resolve(&cwd).unwrap_or_else(|_| cwd.clone());
        self.cwd = cwd;
        self
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
    pub fn check_parsed(&self, parsed: &Result<ParsedScript, ScriptParseError>) -> Verdict {
        self.check_result(parsed.as_ref())
    }

    /// Checks a command with the parse a permission decision carries
    /// ([`agent_core::shell::Prepared`]), when it is the parse of `command`; else parses
    /// `command` (a hook or the user changed it after the decision).
    pub fn check_prepared(
        &self,
        command: &str,
        prepared: Option<&agent_core::shell::Prepared>,
    ) -> Verdict {
        match prepared.filter(|p| p.text == command) {
            Some(p) => self.check_result(p.script()),
            None => self.check(command),
        }
    }

    fn check_result(&self, parsed: Result<&ParsedScript, &ScriptParseError>) -> Verdict {
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
        let globstar = parsed.commands.iter().any(|c| {
            c.effective_name() == Some("shopt")
                && c.effective_words()
                    .iter()
                    .skip(1)
                    .any(|w| !w.is_static() || w.text.contains("globstar"))
        });
        if globstar && !self.globstar {
            let mut with = self.clone();
            with.globstar = true;
            return with.check_script(parsed);
        }
        self.check_script(parsed)
    }

    /// Checks every command of a parsed script from every working directory it can reach.
    fn check_script(&self, parsed: &ParsedScript) -> Verdict {
        match workdirs::of(parsed, &self.cwd, self.home.as_deref(), &self.cdpath) {
            WorkDirs::Known(dirs) if dirs.len() == 1 => {
                if let Some(v) = self.check_commands(parsed) {
                    return v;
                }
            }
            WorkDirs::Known(dirs) => {
                for dir in dirs {
                    let from = self.clone().with_cwd(&dir);
                    if let Some(mut v) = from.check_commands(parsed) {
                        if dir != self.cwd {
                            v.reason = format!(
                                "{} (with {} as the working directory, which the script can `cd` to)",
                                v.reason,
                                dir.display()
                            );
                        }
                        return v;
                    }
                }
            }
            WorkDirs::Unknown(why) => {
                let mut from = self.clone();
                from.cwd_unknown = Some(why);
                if let Some(v) = from.check_commands(parsed) {
                    return v;
                }
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

    fn check_commands(&self, parsed: &ParsedScript) -> Option<Verdict> {
        parsed
            .commands
            .iter()
            .find_map(|cmd| self.check_simple(cmd))
    }

    /// Whether anything is bounded: commands (an allowlist or a denylist) or paths.
    fn restricts(&self) -> bool {
        self.allowed.is_some() || !self.denied.is_empty() || self.paths.restricts()
    }

    /// Where relative paths and tilde forms resolve.
    fn base(&self) -> Base<'_> {
        Base {
            cwd: self.cwd_unknown.is_none().then_some(self.cwd.as_path()),
            home: self.home.as_deref(),
        }
    }

    fn cwd_real(&self) -> Option<&Path> {
        self.cwd_unknown
            .is_none()
            .then_some(self.cwd_real.as_path())
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
        if self.restricts()
            && let Some(why) = environment::refusal(cmd)
        {
            return Some(Verdict::deny(why, Some("built-in: environment".into())));
        }
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
        if matches!(name, "source" | ".") {
            return Some(Verdict::deny(
                format!(
                    "`{shown}`: `{name}` runs commands from a script file, which cannot be checked"
                ),
                Some("built-in: script file".into()),
            ));
        }
        let found = effects::of_command(cmd);
        if let Some(why) = &found.runs {
            return Some(Verdict::deny(
                format!("`{shown}`: {why}, out of the checker's sight"),
                Some("built-in: program-running option".into()),
            ));
        }
        for w in &found.writes {
            if let Some(v) = self.check_write_word(w, shown) {
                return Some(v);
            }
        }
        let mut reads = found.reads;
        // Whether `xargs` runs the command with more arguments, read from its input.
        let appended = cmd.layers.iter().any(|l| l.wrapper == "xargs");
        if matches!(name, "sed" | "gsed") {
            match self.check_sed(inner, appended, shown) {
                Err(v) => return Some(v),
                Ok(more) => reads.extend(more),
            }
        }
        if let Some(v) = self.check_git_location(inner, shown) {
            return Some(v);
        }
        // Bash lists directories to expand a pattern, whatever the command does with it.
        for w in cmd.words.iter().skip(1).filter(|w| w.glob) {
            let cands = arguments::candidates(w, self.base());
            if let Some((why, rule)) =
                arguments::listing_refusal(&self.paths, &cands, self.globstar)
            {
                return Some(Verdict::deny(format!("`{shown}` {why}"), rule));
            }
        }
        if !arguments::text_only(name) {
            let reading = Reading {
                recursion: recursion::of(inner),
                globstar: self.globstar,
            };
            let mut cands: Vec<Vec<Candidate>> = cmd
                .words
                .iter()
                .skip(1)
                .chain(&reads)
                .map(|w| arguments::candidates(w, self.base()))
                .collect();
            if appended {
                // `xargs` adds the words it reads from its input: paths only known at run time.
                cands.push(vec![Candidate::Unknown(format!(
                    "the arguments `xargs` adds to `{name}` from its input"
                ))]);
            }
            for c in &cands {
                if let Some((why, rule)) =
                    arguments::refusal(&self.paths, self.cwd_real(), c, Op::Read, reading)
                {
                    return Some(Verdict::deny(format!("`{shown}` {why}"), rule));
                }
            }
        }
        self.check_redirects(cmd, shown)
    }

    /// The absolute, unnormalised path a static word names (`~` expanded): resolve it with
    /// [`crate::paths::resolve`], which applies `..` after the symlinks before it. An error
    /// says why it is not known before run time (the home directory or, for a relative path,
    /// the working directory).
    fn expand(&self, text: &str, home: bool) -> Result<PathBuf, String> {
        if home {
            let rest = text.trim_start_matches('~').trim_start_matches('/');
            return self
                .home
                .as_ref()
                .map(|h| h.join(rest))
                .ok_or_else(|| "below a home directory that is not known".to_owned());
        }
        let p = Path::new(text);
        match &self.cwd_unknown {
            Some(why) if !p.is_absolute() => Err(format!("a relative path, and {why}")),
            _ => Ok(absolute(p, &self.cwd)),
        }
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
            if word.contains('/') || word.starts_with('~') {
                // A name with a slash is a path: it runs that file, whatever its basename.
                let p = match self.expand(word, word.starts_with('~')) {
                    Ok(p) => p,
                    Err(why) => {
                        return Some(Verdict::deny(
                            format!("`{shown}` runs {word}, {why}"),
                            Some("built-in: program named by a path".into()),
                        ));
                    }
                };
                let real = std::fs::canonicalize(&p).ok();
                let same = self
                    .allowed_exes
                    .iter()
                    .any(|(n, exe)| n == base && real.as_ref() == Some(exe));
                if !same {
                    return Some(Verdict::deny(
                        format!(
                            "`{shown}` runs {}, which is not the allowlisted `{base}`{}",
                            p.display(),
                            self.allowed_exes
                                .iter()
                                .find(|(n, _)| n == base)
                                .map_or_else(String::new, |(_, e)| format!(" ({})", e.display()))
                        ),
                        Some("built-in: program named by a path".into()),
                    ));
                }
                let l = lexical(&p, &self.cwd);
                if self.writable.iter().any(|w| l.starts_with(w)) {
                    return Some(Verdict::deny(
                        format!(
                            "`{shown}` runs {}, a program inside a writable directory",
                            l.display()
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
