//! A tool call as the permission engine sees it, and what rules are matched against: the
//! parsed command, the files read and written, the host fetched.

use serde_json::Value;

use std::path::{Path, PathBuf};

use super::arguments::{PATTERN_OPTIONS, Paths, positionals, positionals_with};
use super::commands::{AllowView, allow_view, deny_views, is_in_scope_fs_command, is_read_only};
use super::descriptors::{self, ScriptDescriptors};
use super::environment::{self, ShellChange, shell_change};
use super::links;
use super::rules::url_host;
use super::workdirs::{ResolvedPath, WorkingDirs};
use crate::programs::{effects, sed};
use crate::shell::{self, ParsedScript, ScriptParseError, SimpleCommand, Word, wrappers::basename};
use crate::tools::ToolKind;

/// One tool call to decide on.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name as the model used it (`Task` is treated as `Agent`).
    pub tool_name: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// Whether the tool never changes anything.
    pub read_only: bool,
    /// The input object.
    pub input: Value,
    /// The id of the `tool.use`, when there is one.
    pub tool_use_id: Option<String>,
    /// The tool needs a person to answer (an MCP tool marked
    /// `_meta["anthropic/requiresUserInteraction"]`); `AskUserQuestion` always does. No mode
    /// auto-approves such a call, and `dontAsk` denies it (claude-code.md §4.4).
    pub requires_user_interaction: bool,
}

impl ToolCall {
    /// A call of `tool_name`; kind and read-only flag come from the built-in tool table
    /// ([`ToolKind::of_builtin`]), and unknown tools are `Other`, not read-only.
    pub fn new(tool_name: impl Into<String>, input: Value) -> Self {
        let tool_name = tool_name.into();
        let requires_user_interaction = tool_name_needs_user(&tool_name);
        let kind = ToolKind::of_builtin(&tool_name).unwrap_or(ToolKind::Other);
        Self {
            tool_name,
            kind,
            read_only: kind == ToolKind::Read,
            input,
            tool_use_id: None,
            requires_user_interaction,
        }
    }

    /// Marks the call as needing a person to answer (see
    /// [`ToolCall::requires_user_interaction`]).
    pub fn with_user_interaction(mut self, required: bool) -> Self {
        self.requires_user_interaction = required || tool_name_needs_user(&self.tool_name);
        self
    }

    /// Sets the kind and read-only flag (for tools the built-in table does not know).
    pub fn with_kind(mut self, kind: ToolKind, read_only: bool) -> Self {
        self.kind = kind;
        self.read_only = read_only;
        self
    }

    /// A call described by a [`crate::tools::Tool`].
    pub fn for_tool(tool: &dyn crate::tools::Tool, input: Value) -> Self {
        Self::new(tool.name(), input).with_kind(tool.kind(), tool.is_read_only())
    }
}

/// Built-in tools that exist to ask the user something.
pub(crate) const USER_INTERACTION_TOOLS: &[&str] = &["AskUserQuestion"];

fn tool_name_needs_user(name: &str) -> bool {
    USER_INTERACTION_TOOLS.contains(&name)
}

/// Tools whose `Read(...)` rules and working-directory reads apply.
pub(crate) const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "NotebookRead", "LS"];
/// Tools covered by `Edit(...)` rules.
pub(crate) const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// A path named by a Bash command.
#[derive(Clone, Debug)]
pub(crate) struct PathArg {
    /// The word as written.
    pub word: Word,
    /// The resolved path; `None` when the word is only known at run time.
    pub path: Option<ResolvedPath>,
    /// Where the command names it.
    pub via: Via,
}

/// Where a command names a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// An operand (`rm f`).
    Operand,
    /// A redirect (`> f`, `< f`).
    Redirect,
    /// An option's value (`--output=f`, `-o f`), found by [`crate::programs::effects`].
    Option,
}

impl PathArg {
    /// Whether the path is fully known and names no glob or `~` form that needs approval.
    pub fn is_static(&self) -> bool {
        self.path.is_some() && self.word.is_static()
    }
}

/// What a Bash call does, as far as the parse can tell.
#[derive(Debug)]
pub(crate) struct BashSubject {
    pub text: String,
    pub parsed: Result<ParsedScript, ScriptParseError>,
    /// The text and its one parse (tree included), for the decision to carry to the tool.
    pub prepared: std::sync::Arc<shell::Prepared>,
    pub reads: Vec<PathArg>,
    pub writes: Vec<PathArg>,
    /// For each command of `parsed`, the texts deny and ask rules see.
    pub deny_views: Vec<Vec<String>>,
    /// For each command of `parsed`, the text allow rules see (`None`: no allow rule may).
    pub allow_views: Vec<Option<AllowView>>,
    /// For each command of `parsed`, whether it is in the built-in read-only set with every
    /// file it reads inside the working directories.
    pub read_only: Vec<bool>,
    /// For each command of `parsed`, whether it is a filesystem command `acceptEdits` runs.
    pub fs_in_scope: Vec<bool>,
    /// The first program-running option of a known program (`git -c core.pager=…`,
    /// `--ext-diff`, `--script-shell`), as a reason.
    pub runs_program: Option<String>,
    /// The first variable set that is not known harmless (`PATH=.`, `GIT_EXTERNAL_DIFF=rm
    /// git diff`), or shell option the checker does not model, as a reason
    /// ([`super::environment`]).
    pub environment: Option<String>,
    /// Why `~` and `$HOME` cannot be resolved: the script assigns `HOME` and uses them.
    pub home_unknown: Option<String>,
}

/// What rules are matched against, by tool family.
#[derive(Debug)]
pub(crate) enum Subject {
    Bash(Box<BashSubject>),
    /// Files a read tool reads.
    Read(Vec<ResolvedPath>),
    /// Files an edit tool writes.
    Edit(Vec<ResolvedPath>),
    /// The host a fetch goes to (`None` when the URL does not parse).
    Web(Option<String>),
    /// The input is not what the tool needs; the call is refused.
    Invalid(String),
    Other,
}

impl Subject {
    pub(crate) fn of(canonical: &str, input: &Value, wd: &WorkingDirs) -> Self {
        let field = |name: &str| input.get(name).and_then(Value::as_str);
        if canonical == "Bash" {
            return match field("command") {
                Some(cmd) => Self::Bash(Box::new(BashSubject::new(cmd, wd))),
                None => Self::Invalid("Bash input needs a string `command`".into()),
            };
        }
        if READ_TOOLS.contains(&canonical) {
            let path = field("file_path")
                .or_else(|| field("notebook_path"))
                .or_else(|| field("path"));
            return match (path, canonical) {
                (Some(p), _) => Self::Read(vec![wd.resolve(p)]),
                // Glob, Grep and LS search the current directory when no path is given.
                (None, "Glob" | "Grep" | "LS") => Self::Read(vec![wd.resolve(".")]),
                (None, _) => Self::Invalid(format!("{canonical} input needs a string `file_path`")),
            };
        }
        if EDIT_TOOLS.contains(&canonical) {
            return match field("file_path").or_else(|| field("notebook_path")) {
                Some(p) => Self::Edit(vec![wd.resolve(p)]),
                None => Self::Invalid(format!("{canonical} input needs a string `file_path`")),
            };
        }
        if canonical == "WebFetch" {
            return match field("url") {
                Some(url) => Self::Web(url_host(url)),
                None => Self::Invalid("WebFetch input needs a string `url`".into()),
            };
        }
        Self::Other
    }
}

/// The most directories a script's `cd`s may leave it in that relative paths are still
/// resolved from (each `cd` may fail, so each doubles them); past it, they are unknown.
const MAX_CD_BASES: usize = 8;

/// Commands whose positional arguments are files they write (`mv` also removes its sources).
const WRITE_COMMANDS: &[&str] = &[
    "rm", "rmdir", "unlink", "mv", "touch", "mkdir", "tee", "chmod", "chown", "chgrp", "truncate",
    "shred",
];
/// Commands whose last positional argument is the file they write; the others are read.
const COPY_COMMANDS: &[&str] = &["cp", "ln", "link", "install", "rsync", "scp"];
/// Commands whose positional arguments are files they read.
const READ_COMMANDS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "sort",
    "uniq",
    "wc",
    "cut",
    "diff",
    "cmp",
    "comm",
    "strings",
    "od",
    "xxd",
    "hexdump",
    "base64",
    "nl",
    "tac",
    "file",
    "stat",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "source",
    ".",
    "bat",
    "paste",
    "fold",
    "fmt",
    "column",
];
/// Commands whose first positional argument is a pattern or program, the rest files read
/// (`sed`'s files are read as sed reads them, in [`crate::programs::sed`]).
const PATTERN_COMMANDS: &[&str] = &["grep", "egrep", "fgrep", "rg", "awk", "jq"];

impl BashSubject {
    /// Parses `text` and reads, command by command, what it touches and how it may be judged.
    pub(crate) fn new(text: &str, wd: &WorkingDirs) -> Self {
        let prepared = std::sync::Arc::new(shell::Prepared::new(text));
        let parsed = prepared.script().cloned().map_err(Clone::clone);
        let mut subject = Self {
            text: text.to_owned(),
            parsed: Err(ScriptParseError {
                message: String::new(),
            }),
            prepared,
            reads: Vec::new(),
            writes: Vec::new(),
            deny_views: Vec::new(),
            allow_views: Vec::new(),
            read_only: Vec::new(),
            fs_in_scope: Vec::new(),
            runs_program: None,
            environment: None,
            home_unknown: None,
        };
        if let Ok(script) = &parsed {
            subject.read_script(script, wd);
        }
        subject.parsed = parsed;
        subject
    }

    /// Fills in, for each command of a parsed script, the files it reads and writes (from
    /// every directory it may start from), its rule views and verdicts, and the script's
    /// environment and `HOME` findings.
    fn read_script(&mut self, script: &ParsedScript, wd: &WorkingDirs) {
        let exporting = script
            .commands
            .iter()
            .any(|c| matches!(shell_change(c), Some(ShellChange::Exporting(_))));
        // Which descriptors each command points at files, for the commands around it
        // (relative targets are files wherever they resolve).
        let fds = ScriptDescriptors::of(
            script.commands.iter().map(|c| c.redirects.as_slice()),
            |t| {
                t.starts_with('/')
                    .then(|| crate::paths::normalize(Path::new(t)))
            },
        );
        let mut home_assigned = None;
        let mut starts = StartDirs::new(wd.cwd());
        for (index, cmd) in script.commands.iter().enumerate() {
            let dirs = starts.of(index, cmd);
            let views: Vec<Paths<'_>> = match &dirs {
                Some(dirs) => dirs
                    .iter()
                    .map(|dir| Paths {
                        wd,
                        base: Some(dir),
                    })
                    .collect(),
                None => vec![Paths { wd, base: None }],
            };
            for at in &views {
                collect_paths(cmd, at, &fds, &mut self.reads, &mut self.writes);
            }
            self.deny_views.push(deny_views(cmd));
            self.allow_views.push(allow_view(cmd));
            let settings = environment::settings(cmd);
            if self.environment.is_none() {
                self.environment = settings
                    .iter()
                    .find(|s| !s.is_harmless(exporting))
                    .map(|s| environment::setting_reason(s, exporting))
                    .or_else(|| shell_change(cmd).map(|c| environment::change_reason(&c)));
            }
            if home_assigned.is_none() {
                home_assigned = settings
                    .iter()
                    .find(|s| s.name == "HOME")
                    .map(|s| s.shown.clone());
            }
            // A bare assignment runs nothing: approvable when every variable it sets is
            // harmless. git run in another directory than the session's reads that
            // directory's repository (its config can name programs: `core.fsmonitor`),
            // which no protected path covers, so it is never read-only.
            let git_elsewhere = cmd.effective_name() == Some("git")
                && dirs.as_deref() != Some(&[wd.cwd().to_path_buf()][..]);
            self.read_only.push(if cmd.words.is_empty() {
                settings.iter().all(|s| s.is_harmless(exporting))
            } else {
                views.iter().all(|at| is_read_only(cmd, at)) && !git_elsewhere
            });
            self.fs_in_scope
                .push(views.iter().all(|at| is_in_scope_fs_command(cmd, at)));
            self.add_option_effects(cmd, &views);
            starts.after(cmd, dirs, wd);
        }
        // `~` and `$HOME` are resolved with the session's home directory; once the script
        // assigns HOME (anywhere: a loop or a function can run it first) they may name
        // another one, so no rule can be checked against them.
        if let Some(shown) = home_assigned
            && script.commands.iter().any(uses_home)
        {
            self.home_unknown = Some(format!(
                "`{shown}` assigns HOME, so `~` and `$HOME` in this command cannot be resolved"
            ));
        }
    }

    /// What a command's options show: the first program it runs, and the files its option
    /// values write and read, from each directory it may start from.
    fn add_option_effects(&mut self, cmd: &SimpleCommand, views: &[Paths<'_>]) {
        let found = effects::of_command(cmd);
        if self.runs_program.is_none() {
            self.runs_program = found.runs;
        }
        for at in views {
            for w in &found.writes {
                self.writes.push(path_arg(at, w, Via::Option));
            }
            for w in &found.reads {
                self.reads.push(path_arg(at, w, Via::Option));
            }
        }
    }
}

/// The directories each command of a script may start from, as `cd`s move them.
struct StartDirs {
    /// The directories relative paths may start from: the session's cwd until a `cd`; after
    /// `cd DIR`, DIR from each of them, and each of them still, since a `cd` that fails (no
    /// such directory, not a directory) leaves the shell where it was and the script goes on
    /// (`cd nope; cat ../x` reads the cwd's parent), and one in a subshell or a pipeline
    /// changes nothing after it. A command that runs only once a `cd` succeeded
    /// (`cd d && cat x`) starts from DIR alone. In discovery order, whatever the nesting.
    /// `None` once a `cd` went somewhere only known at run time (`cd -`, `cd "$D"`, `cd`
    /// alone) or the directories are too many to follow.
    bases: Option<Vec<PathBuf>>,
    /// For each command, the directories the commands it leads to through `&&` start from
    /// (`cd d && cat x`: `d` only, since `cat` runs once `cd d` succeeded).
    on_success: Vec<Option<Vec<PathBuf>>>,
    /// The depth of a `find` with `-execdir` / `-okdir` whose commands (recorded right after
    /// it, deeper) run in each found file's directory: unknown here.
    in_found_dirs: Option<u32>,
}

impl StartDirs {
    /// Before the script's first command: the session's cwd.
    fn new(cwd: &Path) -> Self {
        Self {
            bases: Some(vec![cwd.to_path_buf()]),
            on_success: Vec::new(),
            in_found_dirs: None,
        }
    }

    /// The directories command `index` may start from; `None` when only known at run time.
    fn of(&mut self, index: usize, cmd: &SimpleCommand) -> Option<Vec<PathBuf>> {
        let dirs = match cmd.after_success_of {
            Some(g) if g < index => self.on_success[g].clone(),
            _ => self.bases.clone(),
        };
        self.in_found_dirs = self.in_found_dirs.filter(|&depth| cmd.depth > depth);
        let dirs = if self.in_found_dirs.is_some() {
            None
        } else {
            dirs
        };
        if runs_in_found_dirs(cmd) {
            self.in_found_dirs = Some(cmd.depth);
        }
        dirs
    }

    /// Records where the commands `cmd` leads to through `&&` start (`dirs`, moved by a
    /// `cd`), and adds where a `cd` went to the directories later commands may start from.
    fn after(&mut self, cmd: &SimpleCommand, dirs: Option<Vec<PathBuf>>, wd: &WorkingDirs) {
        let success = match cd_target(cmd) {
            None => dirs,
            Some(next) => {
                let moved = match (next, dirs) {
                    (Some(dir), Some(from)) => {
                        let mut to: Vec<PathBuf> = Vec::new();
                        for b in &from {
                            let m = wd.resolve_from(b, &dir.text).lexical;
                            if !to.contains(&m) {
                                to.push(m);
                            }
                        }
                        Some(to)
                    }
                    _ => None,
                };
                // Where later commands may be: where they were, or moved.
                self.bases = match (self.bases.take(), &moved) {
                    (Some(mut all), Some(to)) => {
                        for m in to {
                            if !all.contains(m) {
                                all.push(m.clone());
                            }
                        }
                        Some(all).filter(|a| a.len() <= MAX_CD_BASES)
                    }
                    _ => None,
                };
                moved
            }
        };
        self.on_success.push(success);
    }
}

/// A path a command names, resolved from where the command runs.
fn path_arg(at: &Paths<'_>, word: &Word, via: Via) -> PathArg {
    let path = if word.dynamic {
        None
    } else {
        at.resolve(&word.text)
    };
    PathArg {
        word: word.clone(),
        path,
        via,
    }
}

/// Whether `cmd` is a `find` that runs commands in each found file's directory (`-execdir`,
/// `-okdir`).
fn runs_in_found_dirs(cmd: &SimpleCommand) -> bool {
    let words = cmd.effective_words();
    words.first().is_some_and(|w| basename(&w.text) == "find")
        && words
            .iter()
            .any(|w| matches!(w.text.as_str(), "-execdir" | "-okdir"))
}

/// For a `cd`, `pushd` or `popd`: `Some(Some(dir))` when it moves to a static directory,
/// `Some(None)` when it moves somewhere only known at run time; `None` for other commands.
fn cd_target(cmd: &SimpleCommand) -> Option<Option<&Word>> {
    let words = cmd.effective_words();
    let name = words
        .first()
        .filter(|w| w.is_static())
        .map(|w| w.text.as_str())?;
    if !matches!(name, "cd" | "pushd" | "popd" | "chdir") {
        return None;
    }
    let operands: Vec<&Word> = words[1..]
        .iter()
        .filter(|w| !(w.is_static() && w.text.starts_with('-') && w.text.len() > 1))
        .collect();
    Some(match (name, operands.as_slice()) {
        ("cd" | "pushd" | "chdir", [d])
            if d.is_static() && d.text != "-" && !d.text.starts_with('+') =>
        {
            Some(*d)
        }
        _ => None,
    })
}

/// Whether a word of the command (its words, redirect targets or assigned values) starts
/// with `~` or `$HOME`.
fn uses_home(cmd: &SimpleCommand) -> bool {
    cmd.words.iter().any(|w| w.home)
        || cmd
            .redirects
            .iter()
            .any(|r| r.target.as_ref().is_some_and(|t| t.home))
        || cmd.assignments.iter().any(|a| a.value.home)
}

fn collect_paths(
    cmd: &SimpleCommand,
    at: &Paths<'_>,
    fds: &ScriptDescriptors,
    reads: &mut Vec<PathArg>,
    writes: &mut Vec<PathArg>,
) {
    let path_arg = |w: &Word, via: Via| path_arg(at, w, via);
    let normalize = |text: &str| at.resolve(text).map(|r| r.lexical);
    for w in descriptors::written_files(&cmd.redirects, normalize, fds) {
        writes.push(path_arg(&w, Via::Redirect));
    }
    for r in &cmd.redirects {
        if let Some(t) = r.read_file() {
            reads.push(path_arg(t, Via::Redirect));
        }
    }
    // The words as bash passes them: `cat {.,/}/etc/x` reads `./etc/x` and `//etc/x`. Braces
    // making too many words to list leave the brace word itself, which is no static path.
    let expanded = shell::braces::expand_words(cmd.effective_words());
    let words: &[Word] = match &expanded {
        Ok(w) => w,
        Err(_) => cmd.effective_words(),
    };
    let Some(name) = words
        .first()
        .filter(|w| w.is_static())
        .map(|w| basename(&w.text))
    else {
        return;
    };
    let args = positionals(words);
    if WRITE_COMMANDS.contains(&name) {
        writes.extend(args.iter().map(|w| path_arg(w, Via::Operand)));
    } else if COPY_COMMANDS.contains(&name) {
        if let Some((dest, sources)) = args.split_last() {
            writes.push(path_arg(dest, Via::Operand));
            reads.extend(sources.iter().map(|w| path_arg(w, Via::Operand)));
            if let Some(kind) = links::made_by(name, words) {
                writes.extend(
                    links::aliased(kind, sources, dest)
                        .iter()
                        .map(|w| path_arg(w, Via::Operand)),
                );
            }
        }
    } else if READ_COMMANDS.contains(&name) {
        reads.extend(args.iter().map(|w| path_arg(w, Via::Operand)));
    } else if name == "sed" {
        // sed's files as sed reads its arguments (`-ni`, `--expression=…`); when they cannot
        // be read, every operand may be a file it edits in place.
        let (files, in_place) = match sed::read(&words[1..]) {
            Ok(call) => (call.files, call.in_place.is_some()),
            Err(_) => (positionals(words).into_iter().cloned().collect(), true),
        };
        let target = if in_place { &mut *writes } else { &mut *reads };
        target.extend(files.iter().map(|w| path_arg(w, Via::Operand)));
    } else if PATTERN_COMMANDS.contains(&name) {
        let explicit_pattern = words.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "-e" | "-f" | "--regexp" | "--file" | "--expression"
            )
        });
        let args = positionals_with(words, PATTERN_OPTIONS);
        let files = if explicit_pattern {
            &args[..]
        } else {
            args.get(1..).unwrap_or(&[])
        };
        reads.extend(files.iter().map(|w| path_arg(w, Via::Operand)));
    } else if name == "dd" {
        for w in &words[1..] {
            if let Some(f) = w.text.strip_prefix("of=") {
                writes.push(path_arg(
                    &Word {
                        text: f.to_owned(),
                        ..w.clone()
                    },
                    Via::Option,
                ));
            } else if let Some(f) = w.text.strip_prefix("if=") {
                reads.push(path_arg(
                    &Word {
                        text: f.to_owned(),
                        ..w.clone()
                    },
                    Via::Operand,
                ));
            }
        }
    } else if name == "git" && is_git_config_write(words) {
        writes.push(path_arg(&Word::literal(".git/config"), Via::Operand));
    }
}

/// `git config KEY VALUE` (or `--add`, `--unset`, `--replace-all`, ...) without `--global` or
/// `--system` writes the repository's `.git/config`.
fn is_git_config_write(words: &[Word]) -> bool {
    let Some(pos) = words.iter().position(|w| w.text == "config") else {
        return false;
    };
    let rest = &words[pos + 1..];
    let flags: Vec<&str> = rest
        .iter()
        .map(|w| w.text.as_str())
        .filter(|t| t.starts_with('-'))
        .collect();
    if flags
        .iter()
        .any(|f| matches!(*f, "--global" | "--system" | "--file" | "-f" | "--blob"))
    {
        return false;
    }
    let reading = flags.iter().any(|f| {
        matches!(
            *f,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--list"
                | "-l"
                | "--show-origin"
                | "--get-urlmatch"
        )
    });
    let writing_flag = flags.iter().any(|f| {
        matches!(
            *f,
            "--add"
                | "--unset"
                | "--unset-all"
                | "--replace-all"
                | "--rename-section"
                | "--remove-section"
                | "--edit"
                | "-e"
        )
    });
    let positional = rest.iter().filter(|w| !w.text.starts_with('-')).count();
    !reading && (writing_flag || positional >= 2)
        || rest.first().is_some_and(|w| {
            matches!(
                w.text.as_str(),
                "set" | "unset" | "edit" | "rename-section" | "remove-section"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn wd() -> WorkingDirs {
        WorkingDirs::new(Path::new("/w/p"), Path::new("/h"), &[])
    }

    fn io(cmd: &str) -> (Vec<String>, Vec<String>) {
        let s = BashSubject::new(cmd, &wd());
        let show = |v: &[PathArg]| {
            v.iter()
                .map(|p| {
                    p.path
                        .as_ref()
                        .map_or("?".to_owned(), |r| r.lexical.display().to_string())
                })
                .collect()
        };
        (show(&s.reads), show(&s.writes))
    }

    #[test]
    fn reads_and_writes() {
        assert_eq!(
            io("cat a b > c"),
            (
                vec!["/w/p/a".into(), "/w/p/b".into()],
                vec!["/w/p/c".into()]
            )
        );
        assert_eq!(io("echo x >/dev/null 2>&1"), (vec![], vec![]));
        assert_eq!(io("grep -r KEY .env"), (vec!["/w/p/.env".into()], vec![]));
        assert_eq!(io("grep -e KEY .env"), (vec!["/w/p/.env".into()], vec![]));
        assert_eq!(io("sed -i s/a/b/ f"), (vec![], vec!["/w/p/f".into()]));
        assert_eq!(
            io("cp ~/x dest"),
            (vec!["/h/x".into()], vec!["/w/p/dest".into()])
        );
        assert_eq!(io("sudo rm -rf $D"), (vec![], vec!["?".into()]));
        assert_eq!(
            io("dd if=/dev/zero of=/dev/sda"),
            (vec!["/dev/zero".into()], vec!["/dev/sda".into()])
        );
        assert_eq!(
            io("git config core.fsmonitor x"),
            (vec![], vec!["/w/p/.git/config".into()])
        );
        assert_eq!(io("git config --get user.name"), (vec![], vec![]));
        assert_eq!(io("cat < in.txt"), (vec!["/w/p/in.txt".into()], vec![]));
        assert_eq!(
            io("{ cat f; } > out"),
            (vec!["/w/p/f".into()], vec!["/w/p/out".into()])
        );
    }

    #[test]
    fn subjects() {
        let w = wd();
        let s = Subject::of("Glob", &serde_json::json!({"pattern":"*"}), &w);
        assert!(matches!(s, Subject::Read(ref p) if p[0].lexical == Path::new("/w/p")));
        let input = serde_json::json!({});
        assert!(matches!(
            Subject::of("Write", &input, &w),
            Subject::Invalid(_)
        ));
        let input = serde_json::json!({"url": "https://A.example.com./x"});
        assert!(
            matches!(Subject::of("WebFetch", &input, &w), Subject::Web(Some(ref h)) if h == "a.example.com")
        );
    }
}
