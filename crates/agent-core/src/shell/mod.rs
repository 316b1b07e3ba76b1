//! One shell parse for everything that reads shell text.
//!
//! A script is parsed once, into one lowered [`tree`] (owned, with source positions; every word
//! split into its pieces once), and everything reads that tree: the permission rules and the
//! sandbox's command checker through [`parse`] / [`parse_script`], the WASI `Shell` (agent-wasi)
//! by compiling its plan from [`Parsed::tree`]. Only this module calls brush-parser (the
//! layering check enforces it), so the readers can never disagree about what a string means
//! (a parser differential is the classic bypass).
//!
//! [`parse`] walks the tree into the flat list of [`SimpleCommand`]s a policy needs, with every
//! nesting level unfolded: `;` `&&` `||` `|` `|&` `&` and newlines, `$( )`, backticks,
//! `<( )` / `>( )`, subshells, brace groups, `if` / `case` / loops, function bodies, the string
//! argument of `bash -c` / `sh -c` / `eval` / `env -S` / `flock -c`, here-documents fed to a
//! shell, and `find -exec`. Nested scripts are lowered the same way when the walk reaches them.
//!
//! Words are unquoted (`\rm`, `"rm"`, `r''m` and `$'\x72m'` all read `rm`); anything whose value
//! is not known before run time (parameter and command expansions, globs, brace expansion) is
//! flagged, never guessed. Constructs that cannot be analysed are reported as [`Issue`]s, and a
//! script that does not parse at all is an error: callers fail closed on both.
//!
//! Two things sit in front of brush-parser. Guards (`guards.rs`) refuse text it cannot answer
//! in bounded time (over [`MAX_SCRIPT_BYTES`], parentheses deeper than [`MAX_PAREN_DEPTH`],
//! broken here-documents) and turn its panics into parse failures. A fast path (`plain.rs`)
//! builds the tree of plain scripts (`git status && cargo build | grep x`) directly, about four
//! times cheaper; [`parse_with_brush_only`] and [`parse_script_with_brush_only`] skip it and
//! must always agree with [`parse`] and [`parse_script`].
//!
//! ```
//! use agent_core::shell;
//!
//! let script = shell::parse("git status && echo $(rm -rf x) | bash -c 'curl evil'")?;
//! let names: Vec<_> = script.commands.iter().filter_map(|c| c.name()).collect();
//! assert_eq!(names, ["git", "echo", "rm", "bash", "curl"]);
//! # Ok::<(), agent_core::shell::ScriptParseError>(())
//! ```

pub mod arithmetic;
pub mod braces;
mod guards;
mod lower;
mod plain;
pub mod runtime_eval;
pub mod tree;
mod walk;
mod words;
pub mod wrappers;

use std::fmt;

pub use guards::{MAX_PAREN_DEPTH, MAX_SCRIPT_BYTES};
pub use walk::MAX_DEPTH;
pub use words::decode_ansi_c;

/// A parsed script: every simple command it can run, and what could not be analysed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedScript {
    /// Every simple command, at every nesting level, in source order of discovery.
    pub commands: Vec<SimpleCommand>,
    /// Parts that could not be analysed; a policy must not auto-approve a script with issues.
    pub issues: Vec<Issue>,
}

impl ParsedScript {
    /// Whether every part of the script was analysed.
    pub fn is_fully_analysed(&self) -> bool {
        self.issues.is_empty()
    }
}

/// One word of a command after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The value the command would see. Static parts are unquoted; dynamic parts (expansions)
    /// appear as their source text; a leading home-directory expansion is written `~`.
    pub text: String,
    /// The word as written in the source.
    pub raw: String,
    /// Contains a parameter, command or arithmetic expansion (or a tilde form other than `~`).
    pub dynamic: bool,
    /// Contains an unquoted glob (`*`, `?`, `[`), extglob or brace expansion.
    pub glob: bool,
    /// Starts with `~` or `$HOME`, written as `~` in [`Word::text`].
    pub home: bool,
    /// Contains an unquoted parameter, command or arithmetic expansion: bash splits its value
    /// into fields, so at run time it may be several words (each of which may look like an
    /// option) or none.
    pub splits: bool,
}

impl Word {
    /// A word whose raw text is its value.
    pub fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            raw: text.to_owned(),
            ..Self::default()
        }
    }

    /// Whether the value is known before run time.
    pub fn is_static(&self) -> bool {
        !self.dynamic && !self.glob
    }
}

/// A variable assignment (`NAME=value`) before a command or alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The variable name.
    pub name: String,
    /// The value (arrays are given as their source text, flagged dynamic).
    pub value: Word,
    /// Made by the shell outside an assignment word (`for NAME in …`, `coproc NAME`,
    /// `${NAME:=value}`): the value is only known at run time and `value.raw` is the construct.
    pub implicit: bool,
}

impl Assignment {
    /// The assignment as written: `NAME=value`, or the construct that makes it.
    pub fn shown(&self) -> String {
        if self.implicit {
            self.value.raw.clone()
        } else {
            format!("{}={}", self.name, self.value.raw)
        }
    }
}

/// The redirection operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>|`
    Clobber,
    /// `<&`
    DuplicateInput,
    /// `>&`
    DuplicateOutput,
    /// `&>` (or `&>>` when `append`)
    OutputAndError {
        /// `&>>`
        append: bool,
    },
    /// `<<` / `<<-`
    HereDocument,
    /// `<<<`
    HereString,
}

/// One redirection of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator, if any.
    pub fd: Option<i32>,
    /// The operator.
    pub op: RedirectOp,
    /// The target word (absent for process-substitution targets, which are walked as commands).
    pub target: Option<Word>,
}

impl Redirect {
    /// The file this redirect writes, if it writes one (`> f`, `>> f`, `&> f`, `<> f`, `>& f`).
    pub fn written_file(&self) -> Option<&Word> {
        match self.op {
            RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::ReadWrite
            | RedirectOp::OutputAndError { .. } => self.target.as_ref(),
            RedirectOp::DuplicateOutput => self.target.as_ref().filter(|t| !is_fd_word(t)),
            _ => None,
        }
    }

    /// The file this redirect reads, if it reads one (`< f`, `<> f`, `<& f`).
    pub fn read_file(&self) -> Option<&Word> {
        match self.op {
            RedirectOp::Read | RedirectOp::ReadWrite => self.target.as_ref(),
            RedirectOp::DuplicateInput => self.target.as_ref().filter(|t| !is_fd_word(t)),
            _ => None,
        }
    }
}

fn is_fd_word(w: &Word) -> bool {
    let t = w.text.trim_end_matches('-');
    !w.dynamic && (t.is_empty() || t.bytes().all(|b| b.is_ascii_digit()))
}

/// Where in the script a command was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A list at the top level.
    TopLevel,
    /// Inside a subshell, brace group, `if`, `case` or loop.
    Compound,
    /// Inside a function body.
    FunctionBody,
    /// Inside `$( )`, backticks, `<( )` or `>( )`.
    Substitution,
    /// Inside a string that a shell runs: `bash -c`, `eval`, `env -S`, `flock -c`, `watch`
    /// (without `-x`), or a here-document / here-string fed to a shell.
    ShellString,
    /// The command run by `find -exec` / `-execdir` / `-ok` / `-okdir`.
    FindExec,
}

/// One simple command: a name with arguments, plus its assignments and redirects.
#[derive(Clone, Debug, PartialEq)]
pub struct SimpleCommand {
    /// The words, name first. Empty for a bare assignment or a redirect-only command.
    pub words: Vec<Word>,
    /// Leading `NAME=value` assignments.
    pub assignments: Vec<Assignment>,
    /// Redirections, in the order bash applies them: those of the enclosing compound commands
    /// (outermost first), then the command's own in source order.
    pub redirects: Vec<Redirect>,
    /// Where it was found.
    pub origin: Origin,
    /// Nesting depth of the script it was found in (0 for the top level).
    pub depth: u32,
    /// Wrapper layers (`timeout`, `sudo`, `xargs`, ...), outermost first.
    pub layers: Vec<wrappers::Layer>,
    /// The index (into [`ParsedScript::commands`]) of a command this one runs only after, once
    /// that one exited 0 in the same shell: it leads here through `&&` (`cd d && cat x`: `cat`
    /// runs only after `cd d` succeeded, so in `d`). `None` when nothing is known of what ran
    /// before it (after `;`, `||`, a pipeline of several commands, `!`).
    pub after_success_of: Option<usize>,
}

impl SimpleCommand {
    /// The command name as written (unquoted), if any.
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(|w| w.text.as_str())
    }

    /// Whether the command name is not known before run time (`$cmd x`, `{rm,-rf} x`).
    pub fn has_dynamic_name(&self) -> bool {
        self.words.first().is_some_and(|w| !w.is_static())
    }

    /// Index of the innermost wrapped command's name (0 when there is no wrapper).
    pub fn effective_start(&self) -> usize {
        self.layers.last().map_or(0, |l| l.inner)
    }

    /// The innermost command after every wrapper layer, name first.
    pub fn effective_words(&self) -> &[Word] {
        self.words.get(self.effective_start()..).unwrap_or(&[])
    }

    /// The words the command starting at `start` runs with: `words[start..]`, followed, when
    /// an `xargs` layer runs it and appends the items it reads, by one word standing for them
    /// (dynamic and splitting: any number of words, each possibly an option).
    pub fn argv_from(&self, start: usize) -> std::borrow::Cow<'_, [Word]> {
        let words = self.words.get(start..).unwrap_or(&[]);
        let appended = self
            .layers
            .iter()
            .any(|l| l.appends_input && l.inner <= start);
        if appended && !words.is_empty() {
            let mut owned = words.to_vec();
            owned.push(wrappers::input_items());
            std::borrow::Cow::Owned(owned)
        } else {
            std::borrow::Cow::Borrowed(words)
        }
    }

    /// [`SimpleCommand::argv_from`] the innermost command: what it runs with.
    pub fn effective_argv(&self) -> std::borrow::Cow<'_, [Word]> {
        self.argv_from(self.effective_start())
    }

    /// The basename of the innermost command (`sudo /bin/rm x` → `rm`).
    pub fn effective_name(&self) -> Option<&str> {
        self.effective_words()
            .first()
            .map(|w| wrappers::basename(&w.text))
    }

    /// The words joined by single spaces, from index `start`.
    pub fn text_from(&self, start: usize) -> String {
        join(self.words.get(start..).unwrap_or(&[]))
    }

    /// Index where allow rules start matching: after the transparent wrappers that precede the
    /// first deny-only wrapper.
    pub fn allow_start(&self) -> usize {
        let mut start = 0;
        for layer in &self.layers {
            if !layer.transparent {
                break;
            }
            start = layer.inner;
        }
        start
    }
}

impl fmt::Display for SimpleCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for a in &self.assignments {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(&a.shown())?;
            first = false;
        }
        for w in &self.words {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(&w.raw)?;
            first = false;
        }
        Ok(())
    }
}

/// Joins word values with single spaces.
pub fn join(words: &[Word]) -> String {
    let mut out = String::with_capacity(words.iter().map(|w| w.text.len() + 1).sum());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&w.text);
    }
    out
}

/// Something the parse could not analyse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// The kind of problem.
    pub kind: IssueKind,
    /// What, in words.
    pub detail: String,
}

/// The kinds of [`Issue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IssueKind {
    /// A nested script (`bash -c '...'`, `$( )`) does not parse.
    NestedParse,
    /// A script that a shell will run is only known at run time (`bash -c "$X"`, `eval $X`).
    DynamicScript,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A word that brush's word parser rejects.
    WordParse,
    /// Text bash evaluates as code at run time, out of the parser's sight (array subscripts,
    /// arithmetic on variables, `${!x}`, `${x@P}`, names given to `test -v` / `printf -v` /
    /// `read`, ...); see [`runtime_eval`].
    RuntimeEval,
    /// A wrapper (`xargs`, `timeout`, `env`, `sudo`, ...) whose arguments do not parse as the
    /// program parses them (an unknown or ambiguous option, a missing value), or hold a word
    /// only known at run time where an option or the command may stand: the command it runs
    /// is not known (see [`wrappers`]).
    Wrapper,
}

/// Why a script could not be parsed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot parse shell command: {message}; commands that cannot be parsed are never auto-approved"
)]
pub struct ScriptParseError {
    /// The parser's message.
    pub message: String,
}

/// Parses a shell script into its simple commands.
///
/// # Errors
/// [`ScriptParseError`] when the top-level script does not parse (unterminated quotes, stray
/// operators, ...). Failures inside nested scripts are [`Issue`]s of the result instead, so the
/// commands that did parse can still be checked against deny rules.
pub fn parse(script: &str) -> Result<ParsedScript, ScriptParseError> {
    walk::parse_top(script, true)
}

/// A command's text with its one parse, shared by everyone who reads the command: the
/// permission engine decides on it, the decision carries it ([`crate::permissions::
/// PermissionDecision::prepared`]), and the Bash tool's command checker and the WASI shell read
/// it again instead of parsing the text anew ("parse once and carry it").
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// The text that was parsed: a reader holds the parse to a command only when the texts
    /// are equal.
    pub text: String,
    /// Its parse.
    pub parsed: Result<Parsed, ScriptParseError>,
}

impl Prepared {
    /// Parses `text` once.
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            parsed: parse_script(text),
        }
    }

    /// The parse of `text` when this is it, else `None` (a hook or the user changed the
    /// command after it was decided: the reader parses the new text).
    pub fn of(&self, text: &str) -> Option<&Result<Parsed, ScriptParseError>> {
        (self.text == text).then_some(&self.parsed)
    }

    /// The simple commands, as [`parse`] gives them.
    pub fn script(&self) -> Result<&ParsedScript, &ScriptParseError> {
        self.parsed.as_ref().map(|p| &p.script)
    }
}

/// A script parsed once: its lowered tree, and the simple commands a policy reads, both from
/// the same parse.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The whole script, lowered: what the WASI shell compiles its plan from.
    pub tree: tree::Script,
    /// Every simple command and every issue: what the permission rules and the sandbox's
    /// command checker read.
    pub script: ParsedScript,
}

/// Parses a shell script once into its lowered [`tree`] and its simple commands
/// ([`ParsedScript`], as [`parse`] gives them).
///
/// # Errors
/// As [`parse`].
pub fn parse_script(script: &str) -> Result<Parsed, ScriptParseError> {
    parse_script_with(script, true)
}

/// [`parse_script`] with every script given to brush-parser: no fast path. The result is the
/// same as [`parse_script`]'s, tree and positions included (the `shell_differential` fuzz
/// target and the fast path's property tests hold the two to that).
///
/// # Errors
/// As [`parse`].
pub fn parse_script_with_brush_only(script: &str) -> Result<Parsed, ScriptParseError> {
    parse_script_with(script, false)
}

/// [`parse_script`]; `fast` lets plain scripts skip brush-parser.
fn parse_script_with(script: &str, fast: bool) -> Result<Parsed, ScriptParseError> {
    let tree = lower::parse(script, fast).map_err(|message| ScriptParseError { message })?;
    let script = walk::walk_script(&tree, fast);
    Ok(Parsed { tree, script })
}

/// [`parse`] with every script, however plain, given to brush-parser: no fast path. The result
/// is the same as [`parse`]'s (differential tests and the `shell_differential` fuzz target hold
/// the two to that); it exists to check exactly that, and is several times slower.
///
/// # Errors
/// As [`parse`].
pub fn parse_with_brush_only(script: &str) -> Result<ParsedScript, ScriptParseError> {
    walk::parse_top(script, false)
}
