//! brush-parser's AST → [`Plan`], refusing everything outside the supported subset.
//!
//! The script goes through `agent_core::shell::parse` first: the parse the permission checker
//! uses, with its guards (script size, parenthesis depth, here-document shapes, brush panics).
//! Only text it accepts reaches brush-parser here, with the same [`ParserOptions`], so the
//! checker and the interpreter read the same commands out of the same string.

use std::io::Cursor;

use brush_parser::ast::{
    self, AndOr as AstAndOr, AssignmentName, AssignmentValue, CommandPrefixOrSuffixItem,
    CompoundCommand, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, SeparatorOperator,
    SourceLocation,
};
use brush_parser::{Parser, ParserOptions, SourcePosition};

use super::error::{Position, ShellError, position_in_message};
use super::plan::{
    AndOr, Assignment, CaseArm, CaseNext, Command, Compound, Connector, Fd, Node, Pipeline, Plan,
    Redirect, Word,
};
use super::word::{self, WordKind, WordOrigin};

/// The parser options: brush-parser's defaults, exactly what `agent_core::shell` parses with.
fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// The most commands one pipeline may have (each runs on its own thread): far more than a
/// real pipeline needs, few enough that a script cannot start thousands of threads at once.
pub(crate) const MAX_PIPELINE_STAGES: usize = 64;

/// Bash builtins the shell does not implement, refused when a command names them literally
/// (a name only known at run time goes to the stage runner, which does not know them either:
/// `command not found`).
const UNSUPPORTED_BUILTINS: &[(&str, &str)] = &[
    (".", "the `.` (source) builtin"),
    ("source", "the `source` builtin"),
    ("eval", "the `eval` builtin"),
    ("exec", "the `exec` builtin"),
    ("shopt", "the `shopt` builtin"),
    ("mapfile", "the `mapfile` builtin"),
    ("readarray", "the `readarray` builtin"),
    ("alias", "the `alias` builtin"),
    ("unalias", "the `unalias` builtin"),
    ("declare", "the `declare` builtin"),
    ("typeset", "the `typeset` builtin"),
    ("local", "the `local` builtin"),
    ("readonly", "the `readonly` builtin"),
    ("let", "the `let` builtin"),
    ("shift", "the `shift` builtin"),
    ("return", "the `return` builtin"),
    ("trap", "the `trap` builtin"),
    ("wait", "job control (`wait`)"),
    ("jobs", "job control (`jobs`)"),
    ("fg", "job control (`fg`)"),
    ("bg", "job control (`bg`)"),
    ("disown", "job control (`disown`)"),
    ("suspend", "job control (`suspend`)"),
    ("builtin", "the `builtin` builtin"),
    ("type", "the `type` builtin"),
    ("hash", "the `hash` builtin"),
    ("enable", "the `enable` builtin"),
    ("getopts", "the `getopts` builtin"),
    ("pushd", "the `pushd` builtin"),
    ("popd", "the `popd` builtin"),
    ("dirs", "the `dirs` builtin"),
    ("ulimit", "the `ulimit` builtin"),
    ("umask", "the `umask` builtin"),
    ("times", "the `times` builtin"),
    ("logout", "the `logout` builtin"),
    ("history", "the `history` builtin"),
    ("fc", "the `fc` builtin"),
    ("caller", "the `caller` builtin"),
    ("compgen", "the `compgen` builtin"),
    ("complete", "the `complete` builtin"),
    ("compopt", "the `compopt` builtin"),
    ("bind", "the `bind` builtin"),
    ("help", "the `help` builtin"),
];

/// Compiles `script` into a [`Plan`].
pub(crate) fn compile(script: &str) -> Result<Plan, ShellError> {
    let checked = agent_core::shell::parse(script).map_err(|e| ShellError::Parse {
        position: position_in_message(&e.message),
        message: e.message,
    })?;
    let opts = parser_options();
    let program = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Parser::new(Cursor::new(script.as_bytes()), &opts).parse_program()
    }))
    .map_err(|_| ShellError::Parse {
        message: "the shell parser failed on this input".to_owned(),
        position: None,
    })?
    .map_err(|e| {
        let message = e.to_string();
        ShellError::Parse {
            position: position_in_message(&message),
            message,
        }
    })?;
    let compiler = Compiler {
        script,
        opts: &opts,
        brace_words: std::cell::Cell::new(0),
    };
    let plan = compiler.program(&program)?;
    // agent-core analysed every word too; a word its guards or brush's word parser refused
    // must not run here either (fail closed even if the checks above missed it).
    if let Some(issue) = checked
        .issues
        .iter()
        .find(|i| i.kind == agent_core::shell::IssueKind::WordParse)
    {
        return Err(ShellError::Parse {
            message: issue.detail.clone(),
            position: None,
        });
    }
    Ok(plan)
}

struct Compiler<'a> {
    script: &'a str,
    opts: &'a ParserOptions,
    /// Words brace expansion has made so far in this script (see [`MAX_SCRIPT_BRACE_WORDS`]).
    brace_words: std::cell::Cell<usize>,
}

/// The most words brace expansion may make in one script, all words together. Each word's
/// expansion is bounded too (`agent_core::shell::braces`), but 50 copies of `true {1..99999}`
/// (807 bytes) made 5 million words when the script was compiled, before any time limit
/// applied, and took 2.4 GB (issue 24); a script needing more should loop with `seq` instead.
pub(crate) const MAX_SCRIPT_BRACE_WORDS: usize = 100_000;

fn at(p: &SourcePosition) -> Position {
    Position::new(p.line, p.column)
}

fn unsupported(construct: &'static str, position: Position) -> ShellError {
    ShellError::Unsupported {
        construct,
        position,
    }
}

fn start_of(node: &impl SourceLocation) -> Option<Position> {
    node.location().map(|span| at(&span.start))
}

impl Compiler<'_> {
    fn program(&self, program: &ast::Program) -> Result<Plan, ShellError> {
        let mut items = Vec::new();
        for list in &program.complete_commands {
            items.extend(self.list(list)?);
        }
        Ok(Plan { items })
    }

    /// The and-or lists of a compound list (`a; b && c`), refusing `&`.
    fn list(&self, list: &ast::CompoundList) -> Result<Vec<AndOr>, ShellError> {
        let mut items = Vec::with_capacity(list.0.len());
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            items.push(self.and_or(and_or)?);
            if matches!(separator, SeparatorOperator::Async) {
                return Err(unsupported(
                    "background job (&)",
                    self.ampersand_after(and_or),
                ));
            }
        }
        Ok(items)
    }

    /// The position of the `&` that ends `and_or` (brush records none for separators).
    fn ampersand_after(&self, and_or: &ast::AndOrList) -> Position {
        let end = and_or
            .location()
            .map_or(0, |span| char_to_byte(self.script, span.end.index));
        let byte = self.script[end.min(self.script.len())..]
            .find('&')
            .map_or(end, |i| end + i);
        byte_position(self.script, byte)
    }

    fn and_or(&self, list: &ast::AndOrList) -> Result<AndOr, ShellError> {
        let first = self.pipeline(&list.first)?;
        let mut rest = Vec::with_capacity(list.additional.len());
        for next in &list.additional {
            let (connector, pipeline) = match next {
                AstAndOr::And(p) => (Connector::And, p),
                AstAndOr::Or(p) => (Connector::Or, p),
            };
            rest.push((connector, self.pipeline(pipeline)?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&self, pipeline: &ast::Pipeline) -> Result<Pipeline, ShellError> {
        if let Some(timed) = &pipeline.timed {
            let position = start_of(timed).unwrap_or_default();
            return Err(unsupported("the `time` keyword", position));
        }
        let stages = pipeline
            .seq
            .iter()
            .map(|c| self.command(c))
            .collect::<Result<Vec<_>, _>>()?;
        if stages.len() > MAX_PIPELINE_STAGES {
            let position = pipeline
                .seq
                .get(MAX_PIPELINE_STAGES)
                .and_then(start_of)
                .unwrap_or_default();
            return Err(unsupported("a pipeline of more than 64 commands", position));
        }
        Ok(Pipeline {
            negated: pipeline.bang,
            stages,
        })
    }

    fn command(&self, command: &ast::Command) -> Result<Node, ShellError> {
        match command {
            ast::Command::Simple(simple) => Ok(Node::Simple(self.simple(simple)?)),
            ast::Command::Compound(compound, redirects) => {
                let here = start_of(compound).unwrap_or_default();
                let body = self.compound(compound, here)?;
                let redirects = redirects
                    .iter()
                    .flat_map(|list| &list.0)
                    .map(|r| self.redirect(r, here))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Node::Compound(Box::new(body), redirects))
            }
            ast::Command::Function(f) => Err(unsupported(
                "function definition",
                start_of(&f.fname).unwrap_or_default(),
            )),
            ast::Command::ExtendedTest(test, redirects) => {
                let here = start_of(test).unwrap_or_default();
                let cond = super::cond::compile(
                    &test.expr,
                    &mut |w| self.word(w, here, WordKind::Plain),
                    &|construct| unsupported(construct, here),
                )?;
                let redirects = redirects
                    .iter()
                    .flat_map(|list| &list.0)
                    .map(|r| self.redirect(r, here))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Node::Compound(Box::new(Compound::Test(cond)), redirects))
            }
        }
    }

    fn compound(&self, compound: &CompoundCommand, here: Position) -> Result<Compound, ShellError> {
        let refused = match compound {
            CompoundCommand::BraceGroup(group) => {
                return Ok(Compound::Group(self.list(&group.list)?));
            }
            CompoundCommand::IfClause(clause) => {
                let mut branches = vec![(self.list(&clause.condition)?, self.list(&clause.then)?)];
                let mut otherwise = None;
                for other in clause.elses.iter().flatten() {
                    match &other.condition {
                        Some(condition) => {
                            branches.push((self.list(condition)?, self.list(&other.body)?));
                        }
                        None => otherwise = Some(self.list(&other.body)?),
                    }
                }
                return Ok(Compound::If {
                    branches,
                    otherwise,
                });
            }
            CompoundCommand::ForClause(clause) => {
                if !super::vars::is_name(&clause.variable_name) {
                    return Err(unsupported(
                        "a for loop over a name that is not a variable",
                        here,
                    ));
                }
                let mut words = Vec::new();
                for w in clause.values.iter().flatten() {
                    words.extend(self.words(w, here)?);
                }
                return Ok(Compound::For {
                    name: clause.variable_name.clone(),
                    words,
                    body: self.list(&clause.body.list)?,
                });
            }
            CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
                return Ok(Compound::Loop {
                    until: matches!(compound, CompoundCommand::UntilClause(_)),
                    condition: self.list(&clause.0)?,
                    body: self.list(&clause.1.list)?,
                });
            }
            CompoundCommand::CaseClause(clause) => {
                let subject = self.word(&clause.value, here, WordKind::Plain)?;
                let mut arms = Vec::with_capacity(clause.cases.len());
                for item in &clause.cases {
                    let patterns = item
                        .patterns
                        .iter()
                        .map(|w| self.word(w, here, WordKind::Plain))
                        .collect::<Result<Vec<_>, _>>()?;
                    let body = match &item.cmd {
                        Some(list) => self.list(list)?,
                        None => Vec::new(),
                    };
                    let then = match item.post_action {
                        ast::CaseItemPostAction::ExitCase => CaseNext::Stop,
                        ast::CaseItemPostAction::UnconditionallyExecuteNextCaseItem => {
                            CaseNext::FallThrough
                        }
                        ast::CaseItemPostAction::ContinueEvaluatingCases => CaseNext::TestNext,
                    };
                    arms.push(CaseArm {
                        patterns,
                        body,
                        then,
                    });
                }
                return Ok(Compound::Case { subject, arms });
            }
            CompoundCommand::Arithmetic(command) => {
                let text = &command.expr.value;
                super::arith::check_command(text).map_err(|c| unsupported(c, here))?;
                return Ok(Compound::Arith(text.clone()));
            }
            CompoundCommand::ArithmeticForClause(clause) => {
                let part = |p: &Option<ast::UnexpandedArithmeticExpr>| -> Result<Option<String>, ShellError> {
                    match p {
                        // An empty part is absent (an empty condition is true, as in bash).
                        Some(expr) if expr.value.trim().is_empty() => Ok(None),
                        Some(expr) => {
                            super::arith::check_command(&expr.value)
                                .map_err(|c| unsupported(c, here))?;
                            Ok(Some(expr.value.clone()))
                        }
                        None => Ok(None),
                    }
                };
                return Ok(Compound::ArithFor {
                    init: part(&clause.initializer)?,
                    condition: part(&clause.condition)?,
                    update: part(&clause.updater)?,
                    body: self.list(&clause.body.list)?,
                });
            }
            CompoundCommand::Subshell(_) => "subshell ( .. )",
            CompoundCommand::Coprocess(_) => "coprocess (coproc)",
        };
        Err(unsupported(refused, here))
    }

    fn simple(&self, simple: &ast::SimpleCommand) -> Result<Command, ShellError> {
        let here = start_of(simple).unwrap_or_default();
        let mut out = Command {
            assignments: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
        };
        let export = simple
            .word_or_name
            .as_ref()
            .is_some_and(|w| w.value == "export");
        for item in simple.prefix.iter().flat_map(|p| &p.0) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    out.assignments
                        .push(self.assignment(assignment, word, here)?);
                }
                CommandPrefixOrSuffixItem::Word(word) => {
                    out.words.extend(self.words(word, here)?);
                }
                CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    out.redirects.push(self.redirect(r, here)?);
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    return Err(process_substitution(sub, here));
                }
            }
        }
        if let Some(name) = &simple.word_or_name {
            let words = self.words(name, here)?;
            // The name as it will run: `{eval,x}` is `eval x`.
            if let Some(literal) = words.first().and_then(Word::literal)
                && let Some((_, construct)) =
                    UNSUPPORTED_BUILTINS.iter().find(|(n, _)| *n == literal)
            {
                return Err(unsupported(construct, start_of(name).unwrap_or(here)));
            }
            out.words.extend(words);
        }
        for item in simple.suffix.iter().flat_map(|s| &s.0) {
            match item {
                CommandPrefixOrSuffixItem::Word(word) => {
                    out.words.extend(self.words(word, here)?);
                }
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    if matches!(assignment.name, AssignmentName::ArrayElementName(..))
                        || matches!(assignment.value, AssignmentValue::Array(_))
                    {
                        return Err(unsupported("array", start_of(word).unwrap_or(here)));
                    }
                    if export {
                        out.words
                            .push(self.word(word, here, WordKind::Declaration)?);
                    } else {
                        out.words.extend(self.words(word, here)?);
                    }
                }
                CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    out.redirects.push(self.redirect(r, here)?);
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    return Err(process_substitution(sub, here));
                }
            }
        }
        Ok(out)
    }

    /// A command's argument (or a `for` loop's value) after brace expansion
    /// (`agent_core::shell::braces`): one word, or the words its braces make.
    fn words(&self, word: &ast::Word, fallback: Position) -> Result<Vec<Word>, ShellError> {
        let start = start_of(word).unwrap_or(fallback);
        let raws = agent_core::shell::braces::expand(&word.value, super::expand::MAX_ARGS)
            .map_err(|_| {
                unsupported(
                    "brace expansion making more than 100000 words or 64 groups",
                    start,
                )
            })?;
        let braced = raws.len() > 1;
        if braced {
            let made = self.brace_words.get().saturating_add(raws.len());
            if made > MAX_SCRIPT_BRACE_WORDS {
                return Err(unsupported(
                    "brace expansions making more than 100000 words in one script",
                    start,
                ));
            }
            self.brace_words.set(made);
        }
        raws.iter()
            .map(|raw| {
                let origin = WordOrigin { raw, start };
                let mut word = word::compile(origin, self.opts, WordKind::Plain)?;
                word.braced = braced;
                Ok(word)
            })
            .collect()
    }

    fn word(
        &self,
        word: &ast::Word,
        fallback: Position,
        kind: WordKind,
    ) -> Result<Word, ShellError> {
        let origin = WordOrigin {
            raw: &word.value,
            start: start_of(word).unwrap_or(fallback),
        };
        word::compile(origin, self.opts, kind)
    }

    fn assignment(
        &self,
        assignment: &ast::Assignment,
        word: &ast::Word,
        fallback: Position,
    ) -> Result<Assignment, ShellError> {
        let position = at(&assignment.loc.start);
        let name = match &assignment.name {
            AssignmentName::VariableName(name) => name.clone(),
            AssignmentName::ArrayElementName(..) => return Err(unsupported("array", position)),
        };
        if matches!(assignment.value, AssignmentValue::Array(_)) {
            return Err(unsupported("array", position));
        }
        // The value's own word has no location; take it from the whole `NAME=value` word.
        let raw = word.value.as_str();
        let value_at = raw.find('=').map_or(raw.len(), |i| i + 1);
        let whole = WordOrigin {
            raw,
            start: start_of(word).unwrap_or(fallback),
        };
        let origin = WordOrigin {
            raw: &raw[value_at..],
            start: whole.at(value_at),
        };
        Ok(Assignment {
            name,
            append: assignment.append,
            value: word::compile(origin, self.opts, WordKind::Value)?,
        })
    }

    fn redirect(&self, redirect: &IoRedirect, fallback: Position) -> Result<Redirect, ShellError> {
        match redirect {
            IoRedirect::HereDocument(_, doc) => Err(unsupported(
                "here-document (<<)",
                start_of(&doc.here_end).unwrap_or(fallback),
            )),
            IoRedirect::HereString(_, word) => Err(unsupported(
                "here-string (<<<)",
                start_of(word).unwrap_or(fallback),
            )),
            IoRedirect::OutputAndError(target, append) => Ok(Redirect::Both {
                target: self.word(target, fallback, WordKind::Plain)?,
                append: *append,
            }),
            IoRedirect::File(fd, kind, target) => self.file_redirect(*fd, kind, target, fallback),
        }
    }

    fn file_redirect(
        &self,
        fd: Option<i32>,
        kind: &IoFileRedirectKind,
        target: &IoFileRedirectTarget,
        fallback: Position,
    ) -> Result<Redirect, ShellError> {
        let position = match target {
            IoFileRedirectTarget::Filename(w) | IoFileRedirectTarget::Duplicate(w) => {
                start_of(w).unwrap_or(fallback)
            }
            IoFileRedirectTarget::ProcessSubstitution(_, sub) => process_position(sub, fallback),
            IoFileRedirectTarget::Fd(_) => fallback,
        };
        let file = |this: &Self| match target {
            IoFileRedirectTarget::Filename(w) => this.word(w, fallback, WordKind::Plain),
            IoFileRedirectTarget::ProcessSubstitution(..) => {
                Err(unsupported("process substitution <(..) / >(..)", position))
            }
            IoFileRedirectTarget::Fd(_) | IoFileRedirectTarget::Duplicate(_) => {
                Err(unsupported("this redirect form", position))
            }
        };
        let output_fd = |fd: Option<i32>| match fd {
            None | Some(1) => Ok(Fd::Stdout),
            Some(2) => Ok(Fd::Stderr),
            Some(_) => Err(unsupported(
                "an output redirect of a file descriptor other than 1 and 2",
                position,
            )),
        };
        match kind {
            IoFileRedirectKind::Read => match fd {
                None | Some(0) => Ok(Redirect::Read {
                    target: file(self)?,
                }),
                Some(_) => Err(unsupported(
                    "an input redirect of a file descriptor other than 0",
                    position,
                )),
            },
            IoFileRedirectKind::Write | IoFileRedirectKind::Clobber => Ok(Redirect::Write {
                fd: output_fd(fd)?,
                target: file(self)?,
                append: false,
            }),
            IoFileRedirectKind::Append => Ok(Redirect::Write {
                fd: output_fd(fd)?,
                target: file(self)?,
                append: true,
            }),
            IoFileRedirectKind::ReadAndWrite => {
                Err(unsupported("a read-write redirect (<>)", position))
            }
            IoFileRedirectKind::DuplicateInput => {
                Err(unsupported("input duplication (<&)", position))
            }
            IoFileRedirectKind::DuplicateOutput => {
                let fd = output_fd(fd)?;
                let to = match target {
                    IoFileRedirectTarget::Fd(n) => *n,
                    IoFileRedirectTarget::Duplicate(w) => match w.value.as_str() {
                        "1" => 1,
                        "2" => 2,
                        "-" => {
                            return Err(unsupported("closing a file descriptor (>&-)", position));
                        }
                        v if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => -1,
                        v if v.ends_with('-') => {
                            return Err(unsupported("moving a file descriptor (>&N-)", position));
                        }
                        _ => {
                            return Err(unsupported(
                                "duplicating output to a file name (>&FILE; write &>FILE)",
                                position,
                            ));
                        }
                    },
                    IoFileRedirectTarget::Filename(_)
                    | IoFileRedirectTarget::ProcessSubstitution(..) => -1,
                };
                let to = match to {
                    1 => Fd::Stdout,
                    2 => Fd::Stderr,
                    _ => {
                        return Err(unsupported(
                            "duplicating a file descriptor other than 1 and 2",
                            position,
                        ));
                    }
                };
                Ok(Redirect::Dup { fd, to })
            }
        }
    }
}

/// The position of a process substitution: brush records where its `(` is; the `<` or `>`
/// just before it is where the construct starts.
fn process_position(sub: &ast::SubshellCommand, fallback: Position) -> Position {
    start_of(sub).map_or(fallback, |p| {
        Position::new(p.line, p.column.saturating_sub(1).max(1))
    })
}

fn process_substitution(sub: &ast::SubshellCommand, fallback: Position) -> ShellError {
    unsupported(
        "process substitution <(..) / >(..)",
        process_position(sub, fallback),
    )
}

/// The byte offset of character `index` of `text` (its length when past the end).
fn char_to_byte(text: &str, index: usize) -> usize {
    text.char_indices()
        .nth(index)
        .map_or(text.len(), |(b, _)| b)
}

/// The line and column of byte `byte` of `text`.
fn byte_position(text: &str, byte: usize) -> Position {
    let before = text.get(..byte).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position::new(line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::plan::Part;

    fn refused(script: &str) -> (&'static str, Position) {
        match Plan::parse(script) {
            Err(ShellError::Unsupported {
                construct,
                position,
            }) => (construct, position),
            other => panic!("{script:?}: {other:?}"),
        }
    }

    fn lit(text: &str) -> Word {
        Word {
            source: text.to_owned(),
            parts: vec![Part::Text {
                text: text.to_owned(),
                quoted: false,
            }],
            assignment_like: false,
            braced: false,
        }
    }

    fn cmd(words: &[&str]) -> Command {
        Command {
            assignments: vec![],
            words: words.iter().map(|w| lit(w)).collect(),
            redirects: vec![],
        }
    }

    fn single(script: &str) -> Command {
        let plan = Plan::parse(script).unwrap();
        assert_eq!(plan.items.len(), 1, "{script}");
        assert!(plan.items[0].rest.is_empty(), "{script}");
        assert_eq!(plan.items[0].first.stages.len(), 1, "{script}");
        simple(&plan.items[0].first.stages[0])
    }

    fn simple(node: &Node) -> Command {
        match node {
            Node::Simple(c) => c.clone(),
            Node::Compound(..) => panic!("{node:?} is not a simple command"),
        }
    }

    #[test]
    fn lists_and_pipelines() {
        let plan = Plan::parse("a | b && c || d; e\nf").unwrap();
        assert_eq!(plan.items.len(), 3);
        assert_eq!(
            plan.items[0],
            AndOr {
                first: Pipeline {
                    negated: false,
                    stages: vec![Node::Simple(cmd(&["a"])), Node::Simple(cmd(&["b"]))]
                },
                rest: vec![
                    (
                        Connector::And,
                        Pipeline {
                            negated: false,
                            stages: vec![Node::Simple(cmd(&["c"]))]
                        }
                    ),
                    (
                        Connector::Or,
                        Pipeline {
                            negated: false,
                            stages: vec![Node::Simple(cmd(&["d"]))]
                        }
                    ),
                ]
            }
        );
        assert_eq!(plan.command_count(), 6);
        let negated = Plan::parse("! a | b").unwrap();
        assert!(negated.items[0].first.negated);
    }

    #[test]
    fn redirects() {
        let c = single("a <in >out 2>>err 2>&1 >&2 1>&2 &>both &>>both2 >|clob");
        assert_eq!(
            c.redirects,
            vec![
                Redirect::Read { target: lit("in") },
                Redirect::Write {
                    fd: Fd::Stdout,
                    target: lit("out"),
                    append: false
                },
                Redirect::Write {
                    fd: Fd::Stderr,
                    target: lit("err"),
                    append: true
                },
                Redirect::Dup {
                    fd: Fd::Stderr,
                    to: Fd::Stdout
                },
                Redirect::Dup {
                    fd: Fd::Stdout,
                    to: Fd::Stderr
                },
                Redirect::Dup {
                    fd: Fd::Stdout,
                    to: Fd::Stderr
                },
                Redirect::Both {
                    target: lit("both"),
                    append: false
                },
                Redirect::Both {
                    target: lit("both2"),
                    append: true
                },
                Redirect::Write {
                    fd: Fd::Stdout,
                    target: lit("clob"),
                    append: false
                },
            ]
        );
        let piped = Plan::parse("a |& b").unwrap();
        assert_eq!(
            simple(&piped.items[0].first.stages[0]).redirects,
            vec![Redirect::Dup {
                fd: Fd::Stderr,
                to: Fd::Stdout
            }]
        );
    }

    #[test]
    fn assignments() {
        let c = single("A=1 B+=x\"y\" env");
        assert_eq!(c.assignments.len(), 2);
        assert_eq!(c.assignments[0].name, "A");
        assert!(!c.assignments[0].append);
        assert!(c.assignments[0].value.assignment_like);
        assert!(c.assignments[1].append);
        assert_eq!(c.words, vec![lit("env")]);
        let bare = single("A=1");
        assert!(bare.words.is_empty());
        let export = single("export A=$X B");
        assert!(export.words[1].assignment_like);
        assert!(!export.words[2].assignment_like);
        let echo = single("echo A=$X");
        assert!(!echo.words[1].assignment_like);
    }

    #[test]
    fn rejected_constructs_are_named_with_their_position() {
        for (script, construct, line, column) in [
            ("cat <<EOF\nx\nEOF", "here-document (<<)", 1, 7),
            ("cat <<< x", "here-string (<<<)", 1, 9),
            ("echo a; (cd x; ls)", "subshell ( .. )", 1, 9),
            ("echo $(ls)", "command substitution $(..)", 1, 6),
            ("echo `ls`", "command substitution `..` (backquotes)", 1, 6),
            ("f() { ls; }", "function definition", 1, 1),
            ("sleep 1 &", "background job (&)", 1, 9),
            ("a=(1 2)", "array", 1, 1),
            ("a[0]=1", "array", 1, 1),
            ("diff <(ls) x", "process substitution <(..) / >(..)", 1, 6),
            ("cat < <(ls)", "process substitution <(..) / >(..)", 1, 7),
            ("ls > >(cat)", "process substitution <(..) / >(..)", 1, 6),
            ("((a[1]=2))", crate::shell::arith::REFUSED, 1, 1),
            (
                "echo $((i++))",
                "assignment in arithmetic expansion $((..)) (write NAME=$((..)) instead of $((NAME=..)) or $((NAME++)), or use the command ((NAME++)))",
                1,
                6,
            ),
            ("echo > {a,b}", "brace expansion {a,b}", 1, 8),
            (
                "echo {1..200000}",
                "brace expansion making more than 100000 words or 64 groups",
                1,
                6,
            ),
            (
                "echo ${x:=y}",
                "assigning a default ${NAME:=..} (write [ -n \"$NAME\" ] || NAME=.. first)",
                1,
                6,
            ),
            ("coproc ls", "coprocess (coproc)", 1, 1),
            (
                "[[ a =~ b ]]",
                "regular expression match [[ .. =~ .. ]] (use grep -E or a case pattern)",
                1,
                1,
            ),
            ("time ls", "the `time` keyword", 1, 1),
            ("ls\neval x", "the `eval` builtin", 2, 1),
            (
                "ls 3>f",
                "an output redirect of a file descriptor other than 1 and 2",
                1,
                6,
            ),
            (
                "ls 2>&3",
                "duplicating a file descriptor other than 1 and 2",
                1,
                7,
            ),
            ("ls <>f", "a read-write redirect (<>)", 1, 6),
            ("ls >&-", "closing a file descriptor (>&-)", 1, 6),
            ("ls <&0", "input duplication (<&)", 1, 6),
            (
                "ls >&f",
                "duplicating output to a file name (>&FILE; write &>FILE)",
                1,
                6,
            ),
            ("echo ~", "tilde expansion (~)", 1, 6),
            ("echo é; ls &", "background job (&)", 1, 12),
        ] {
            assert_eq!(
                refused(script),
                (construct, Position::new(line, column)),
                "{script:?}"
            );
        }
    }

    #[test]
    fn parse_errors_have_positions() {
        match Plan::parse("echo 'unterminated") {
            Err(ShellError::Parse { .. }) => {}
            other => panic!("{other:?}"),
        }
        match Plan::parse("echo a;;") {
            Err(ShellError::Parse { position, .. }) => assert!(position.is_some()),
            other => panic!("{other:?}"),
        }
        let long = "a".repeat(agent_core::shell::MAX_SCRIPT_BYTES + 1);
        assert!(matches!(Plan::parse(&long), Err(ShellError::Parse { .. })));
        let deep = format!(
            "echo {}",
            "(".repeat(agent_core::shell::MAX_PAREN_DEPTH + 1)
        );
        assert!(matches!(Plan::parse(&deep), Err(ShellError::Parse { .. })));
    }

    /// 50 copies of `true {1..99999}` made 5 million words while compiling (2.4 GB, outside
    /// every time limit); the script's braces share one budget.
    #[test]
    fn brace_expansion_has_one_budget_per_script() {
        let bomb = ["true {1..99999}"; 50].join("; ");
        let (construct, _) = refused(&bomb);
        assert!(construct.contains("in one script"), "{construct}");
        // Under the budget, spread over words, it compiles.
        let ok = ["true {1..20000}"; 5].join("; ");
        assert!(Plan::parse(&ok).is_ok());
        let over = ["true {1..20000}"; 6].join("; ");
        assert!(refused(&over).0.contains("in one script"));
        // Words without a brace expansion do not count.
        let plain = vec!["echo {a}"; 200_000 / 9].join("; ");
        assert!(Plan::parse(&plain).is_ok());
    }

    #[test]
    fn long_pipelines_are_refused() {
        let ok = vec!["cat"; MAX_PIPELINE_STAGES].join(" | ");
        assert!(Plan::parse(&ok).is_ok());
        let long = format!("{ok} | cat");
        assert_eq!(refused(&long).0, "a pipeline of more than 64 commands");
    }

    /// Random shell-ish text never panics the compiler and is answered promptly (brush-parser
    /// is guarded by agent-core's checks and this crate's word checks).
    #[test]
    fn hostile_text_is_answered_promptly() {
        const ALPHABET: &[&str] = &[
            "a", "1", " ", "\n", "$", "{", "}", "(", ")", "[", "]", "'", "\"", "\\", "`", "|", "&",
            ";", "<", ">", "*", "?", "!", "#", "~", "=", ":", "-", "@", "${", "$(", "<<", "x[",
            "$[", "%", ",", "..", "\t",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let started = std::time::Instant::now();
        for _ in 0..3000 {
            let len = next() % 40;
            let text: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            let _ = Plan::parse(&text);
        }
        let hostile = [
            "echo ".to_owned() + &"Z[$X".repeat(16),
            "echo ".to_owned() + &"${a[(]i}".repeat(8),
            "echo ".to_owned() + &"$[".repeat(20),
            format!("c;{}x", "(".repeat(34)),
        ];
        for text in &hostile {
            assert!(Plan::parse(text).is_err(), "{text}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }

    #[test]
    fn positions_of_bytes() {
        assert_eq!(byte_position("ab\ncé&", 6), Position::new(2, 3));
        assert_eq!(char_to_byte("éa", 1), 2);
    }
}
