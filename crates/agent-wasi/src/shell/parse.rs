//! The lowered shell tree (`agent_core::shell::tree`) → [`Plan`], refusing everything outside
//! the supported subset.
//!
//! The script is parsed once, by `agent_core::shell::parse_script`: the parse the permission
//! checker uses, with its guards (script size, nesting, here-document shapes, brush panics). The
//! same parse gives the checker's commands and the tree compiled here, so the checker and the
//! interpreter read the same commands and the same words out of the same string.

use agent_core::shell::tree;

use super::error::{Position, ShellError, position_in_message};
use super::plan::{
    AndOr, Assignment, CaseArm, CaseNext, Command, Compound, Connector, Fd, Node, Pipeline, Plan,
    Redirect, Word,
};
use super::word::{self, WordKind, WordOrigin};

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

impl Plan {
    /// Parses `script` into a plan.
    ///
    /// # Errors
    /// [`ShellError::Parse`] when the script does not parse, [`ShellError::Unsupported`] when it
    /// uses syntax outside the supported subset (the error names the first such construct and
    /// its position).
    pub fn parse(script: &str) -> Result<Self, ShellError> {
        Self::from_parsed(&agent_core::shell::parse_script(script))
    }

    /// [`Plan::parse`] of a script agent-core has already parsed (`agent_core::shell::
    /// parse_script`, or the parse a permission decision carries): the plan is compiled from
    /// that very tree, with no second parse.
    ///
    /// # Errors
    /// As [`Plan::parse`].
    pub fn from_parsed(
        parsed: &Result<agent_core::shell::Parsed, agent_core::shell::ScriptParseError>,
    ) -> Result<Self, ShellError> {
        let parsed = parsed.as_ref().map_err(|e| ShellError::Parse {
            position: position_in_message(&e.message),
            message: e.message.clone(),
        })?;
        let compiler = Compiler {
            brace_words: std::cell::Cell::new(0),
        };
        let plan = compiler.program(&parsed.tree)?;
        // agent-core analysed every word too; a word its guards or brush's word parser refused
        // must not run here either (fail closed even if the checks above missed it).
        if let Some(issue) = parsed
            .script
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
}

struct Compiler {
    /// Words brace expansion has made so far in this script (see [`MAX_SCRIPT_BRACE_WORDS`]).
    brace_words: std::cell::Cell<usize>,
}

/// The most words brace expansion may make in one script, all words together. Each word's
/// expansion is bounded too (`agent_core::shell::braces`), but 50 copies of `true {1..99999}`
/// (807 bytes) made 5 million words when the script was compiled, before any time limit
/// applied, and took 2.4 GB (issue 24); a script needing more should loop with `seq` instead.
pub(crate) const MAX_SCRIPT_BRACE_WORDS: usize = 100_000;

fn unsupported(construct: &'static str, position: Position) -> ShellError {
    ShellError::Unsupported {
        construct,
        position,
    }
}

/// Where a node of the tree starts, or `fallback` where brush records no position.
fn at_or(p: Option<Position>, fallback: Position) -> Position {
    p.unwrap_or(fallback)
}

impl Compiler {
    fn program(&self, script: &tree::Script) -> Result<Plan, ShellError> {
        Ok(Plan {
            items: self.list(&script.items)?,
        })
    }

    /// The and-or lists of a list (`a; b && c`), refusing `&`.
    fn list(&self, list: &[tree::Item]) -> Result<Vec<AndOr>, ShellError> {
        let mut items = Vec::with_capacity(list.len());
        for item in list {
            items.push(self.and_or(&item.and_or)?);
            if let Some(ampersand) = item.background {
                return Err(unsupported("background job (&)", ampersand));
            }
        }
        Ok(items)
    }

    fn and_or(&self, list: &tree::AndOr) -> Result<AndOr, ShellError> {
        let first = self.pipeline(&list.first)?;
        let mut rest = Vec::with_capacity(list.rest.len());
        for (connector, pipeline) in &list.rest {
            let connector = match connector {
                tree::Connector::And => Connector::And,
                tree::Connector::Or => Connector::Or,
            };
            rest.push((connector, self.pipeline(pipeline)?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&self, pipeline: &tree::Pipeline) -> Result<Pipeline, ShellError> {
        if let Some(timed) = pipeline.timed {
            return Err(unsupported("the `time` keyword", timed));
        }
        let stages = pipeline
            .commands
            .iter()
            .map(|c| self.command(c))
            .collect::<Result<Vec<_>, _>>()?;
        if stages.len() > MAX_PIPELINE_STAGES {
            let position = pipeline
                .commands
                .get(MAX_PIPELINE_STAGES)
                .and_then(tree::Command::at)
                .unwrap_or_default();
            return Err(unsupported("a pipeline of more than 64 commands", position));
        }
        Ok(Pipeline {
            negated: pipeline.negated,
            stages,
        })
    }

    fn command(&self, command: &tree::Command) -> Result<Node, ShellError> {
        match command {
            tree::Command::Simple(simple) => Ok(Node::Simple(self.simple(simple)?)),
            tree::Command::Compound(compound) => {
                let here = at_or(compound.at, Position::default());
                let body = self.compound(&compound.body, here)?;
                let redirects = self.redirects(&compound.redirects, here)?;
                Ok(Node::Compound(Box::new(body), redirects))
            }
            tree::Command::Function(f) => Err(unsupported(
                "function definition",
                at_or(f.name.at, Position::default()),
            )),
            tree::Command::Test(test) => {
                let here = test.at;
                let cond = super::cond::compile(
                    &test.expr,
                    &mut |w| self.word(w, here, WordKind::Plain),
                    &|construct| unsupported(construct, here),
                )?;
                let redirects = self.redirects(&test.redirects, here)?;
                Ok(Node::Compound(Box::new(Compound::Test(cond)), redirects))
            }
        }
    }

    fn redirects(
        &self,
        redirects: &[tree::Redirect],
        here: Position,
    ) -> Result<Vec<Redirect>, ShellError> {
        redirects.iter().map(|r| self.redirect(r, here)).collect()
    }

    fn compound(&self, compound: &tree::Compound, here: Position) -> Result<Compound, ShellError> {
        let refused = match compound {
            tree::Compound::BraceGroup(list) => {
                return Ok(Compound::Group(self.list(list)?));
            }
            tree::Compound::If {
                condition,
                then,
                elses,
            } => {
                let mut branches = vec![(self.list(condition)?, self.list(then)?)];
                let mut otherwise = None;
                for other in elses {
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
            tree::Compound::For { name, values, body } => {
                if !super::vars::is_name(name) {
                    return Err(unsupported(
                        "a for loop over a name that is not a variable",
                        here,
                    ));
                }
                let mut words = Vec::new();
                for w in values.iter().flatten() {
                    words.extend(self.words(w, here)?);
                }
                return Ok(Compound::For {
                    name: name.clone(),
                    words,
                    body: self.list(body)?,
                });
            }
            tree::Compound::While {
                until,
                condition,
                body,
            } => {
                return Ok(Compound::Loop {
                    until: *until,
                    condition: self.list(condition)?,
                    body: self.list(body)?,
                });
            }
            tree::Compound::Case { subject, arms } => {
                let subject = self.word(subject, here, WordKind::Plain)?;
                let mut compiled = Vec::with_capacity(arms.len());
                for arm in arms {
                    let patterns = arm
                        .patterns
                        .iter()
                        .map(|w| self.word(w, here, WordKind::Plain))
                        .collect::<Result<Vec<_>, _>>()?;
                    let then = match arm.next {
                        tree::CaseNext::Stop => CaseNext::Stop,
                        tree::CaseNext::FallThrough => CaseNext::FallThrough,
                        tree::CaseNext::TestNext => CaseNext::TestNext,
                    };
                    compiled.push(CaseArm {
                        patterns,
                        body: self.list(&arm.body)?,
                        then,
                    });
                }
                return Ok(Compound::Case {
                    subject,
                    arms: compiled,
                });
            }
            tree::Compound::Arithmetic(text) => {
                super::arith::check_command(text).map_err(|c| unsupported(c, here))?;
                return Ok(Compound::Arith(text.clone()));
            }
            tree::Compound::ArithmeticFor {
                init,
                condition,
                update,
                body,
            } => {
                let part = |p: &Option<String>| -> Result<Option<String>, ShellError> {
                    match p {
                        // An empty part is absent (an empty condition is true, as in bash).
                        Some(text) if text.trim().is_empty() => Ok(None),
                        Some(text) => {
                            super::arith::check_command(text).map_err(|c| unsupported(c, here))?;
                            Ok(Some(text.clone()))
                        }
                        None => Ok(None),
                    }
                };
                return Ok(Compound::ArithFor {
                    init: part(init)?,
                    condition: part(condition)?,
                    update: part(update)?,
                    body: self.list(body)?,
                });
            }
            tree::Compound::Subshell(_) => "subshell ( .. )",
            tree::Compound::Coprocess { .. } => "coprocess (coproc)",
        };
        Err(unsupported(refused, here))
    }

    fn simple(&self, simple: &tree::SimpleCommand) -> Result<Command, ShellError> {
        let here = at_or(simple.at, Position::default());
        let mut out = Command {
            assignments: Vec::new(),
            words: Vec::new(),
            redirects: Vec::new(),
        };
        let export = simple.name.as_ref().is_some_and(|w| w.raw == "export");
        for item in &simple.prefix {
            match item {
                tree::CommandItem::Assignment(assignment) => {
                    out.assignments.push(self.assignment(assignment, here)?);
                }
                tree::CommandItem::Word(word) => {
                    out.words.extend(self.words(word, here)?);
                }
                tree::CommandItem::Redirect(r) => {
                    out.redirects.push(self.redirect(r, here)?);
                }
                tree::CommandItem::ProcessSubstitution(sub) => {
                    return Err(process_substitution(sub));
                }
            }
        }
        if let Some(name) = &simple.name {
            let words = self.words(name, here)?;
            // The name as it will run: `{eval,x}` is `eval x`.
            if let Some(literal) = words.first().and_then(Word::literal)
                && let Some((_, construct)) =
                    UNSUPPORTED_BUILTINS.iter().find(|(n, _)| *n == literal)
            {
                return Err(unsupported(construct, at_or(name.at, here)));
            }
            out.words.extend(words);
        }
        for item in &simple.suffix {
            match item {
                tree::CommandItem::Word(word) => {
                    out.words.extend(self.words(word, here)?);
                }
                tree::CommandItem::Assignment(assignment) => {
                    if assignment.index.is_some()
                        || matches!(assignment.value, tree::AssignmentValue::Array(_))
                    {
                        return Err(unsupported("array", at_or(assignment.word.at, here)));
                    }
                    if export {
                        out.words
                            .push(self.word(&assignment.word, here, WordKind::Declaration)?);
                    } else {
                        out.words.extend(self.words(&assignment.word, here)?);
                    }
                }
                tree::CommandItem::Redirect(r) => {
                    out.redirects.push(self.redirect(r, here)?);
                }
                tree::CommandItem::ProcessSubstitution(sub) => {
                    return Err(process_substitution(sub));
                }
            }
        }
        Ok(out)
    }

    /// A command's argument (or a `for` loop's value) after brace expansion
    /// (`agent_core::shell::braces`): one word, or the words its braces make (each lowered by
    /// agent-core in turn).
    fn words(&self, word: &tree::Word, fallback: Position) -> Result<Vec<Word>, ShellError> {
        let start = at_or(word.at, fallback);
        let raws = agent_core::shell::braces::expand(&word.raw, super::expand::MAX_ARGS).map_err(
            |_| {
                unsupported(
                    "brace expansion making more than 100000 words or 64 groups",
                    start,
                )
            },
        )?;
        if raws.len() <= 1 {
            let origin = WordOrigin {
                raw: &word.raw,
                start,
            };
            return Ok(vec![word::compile(origin, &word.pieces, WordKind::Plain)?]);
        }
        let made = self.brace_words.get().saturating_add(raws.len());
        if made > MAX_SCRIPT_BRACE_WORDS {
            return Err(unsupported(
                "brace expansions making more than 100000 words in one script",
                start,
            ));
        }
        self.brace_words.set(made);
        raws.iter()
            .map(|raw| {
                let lowered = tree::Word::parse(raw, word.at);
                let origin = WordOrigin { raw, start };
                let mut word = word::compile(origin, &lowered.pieces, WordKind::Plain)?;
                word.braced = true;
                Ok(word)
            })
            .collect()
    }

    fn word(
        &self,
        word: &tree::Word,
        fallback: Position,
        kind: WordKind,
    ) -> Result<Word, ShellError> {
        let origin = WordOrigin {
            raw: &word.raw,
            start: at_or(word.at, fallback),
        };
        word::compile(origin, &word.pieces, kind)
    }

    fn assignment(
        &self,
        assignment: &tree::Assignment,
        fallback: Position,
    ) -> Result<Assignment, ShellError> {
        let position = assignment.at;
        if assignment.index.is_some() {
            return Err(unsupported("array", position));
        }
        let tree::AssignmentValue::Scalar(value) = &assignment.value else {
            return Err(unsupported("array", position));
        };
        // The value starts after the first `=` of the whole `NAME=value` word.
        let raw = assignment.word.raw.as_str();
        let value_at = raw.find('=').map_or(raw.len(), |i| i + 1);
        let whole = WordOrigin {
            raw,
            start: at_or(assignment.word.at, fallback),
        };
        let origin = WordOrigin {
            raw: &value.raw,
            start: whole.at(value_at),
        };
        Ok(Assignment {
            name: assignment.name.clone(),
            append: assignment.append,
            value: word::compile(origin, &value.pieces, WordKind::Value)?,
        })
    }

    fn redirect(
        &self,
        redirect: &tree::Redirect,
        fallback: Position,
    ) -> Result<Redirect, ShellError> {
        match &redirect.kind {
            tree::RedirectKind::HereDocument(doc) => Err(unsupported(
                "here-document (<<)",
                at_or(doc.delimiter.at, fallback),
            )),
            tree::RedirectKind::HereString(word) => {
                Err(unsupported("here-string (<<<)", at_or(word.at, fallback)))
            }
            tree::RedirectKind::OutputAndError { target, append } => Ok(Redirect::Both {
                target: self.word(target, fallback, WordKind::Plain)?,
                append: *append,
            }),
            tree::RedirectKind::File { op, target } => {
                self.file_redirect(redirect.fd, *op, target, fallback)
            }
        }
    }

    fn file_redirect(
        &self,
        fd: Option<i32>,
        op: tree::FileOp,
        target: &tree::RedirectTarget,
        fallback: Position,
    ) -> Result<Redirect, ShellError> {
        use tree::RedirectTarget as T;
        let position = match target {
            T::File(w) | T::Duplicate(w) => at_or(w.at, fallback),
            T::Process(sub) => sub.at,
            T::Fd(_) => fallback,
        };
        let file = |this: &Self| match target {
            T::File(w) => this.word(w, fallback, WordKind::Plain),
            T::Process(_) => Err(unsupported("process substitution <(..) / >(..)", position)),
            T::Fd(_) | T::Duplicate(_) => Err(unsupported("this redirect form", position)),
        };
        let output_fd = |fd: Option<i32>| match fd {
            None | Some(1) => Ok(Fd::Stdout),
            Some(2) => Ok(Fd::Stderr),
            Some(_) => Err(unsupported(
                "an output redirect of a file descriptor other than 1 and 2",
                position,
            )),
        };
        match op {
            tree::FileOp::Read => match fd {
                None | Some(0) => Ok(Redirect::Read {
                    target: file(self)?,
                }),
                Some(_) => Err(unsupported(
                    "an input redirect of a file descriptor other than 0",
                    position,
                )),
            },
            tree::FileOp::Write | tree::FileOp::Clobber => Ok(Redirect::Write {
                fd: output_fd(fd)?,
                target: file(self)?,
                append: false,
            }),
            tree::FileOp::Append => Ok(Redirect::Write {
                fd: output_fd(fd)?,
                target: file(self)?,
                append: true,
            }),
            tree::FileOp::ReadWrite => Err(unsupported("a read-write redirect (<>)", position)),
            tree::FileOp::DuplicateInput => Err(unsupported("input duplication (<&)", position)),
            tree::FileOp::DuplicateOutput => {
                let fd = output_fd(fd)?;
                let to = match target {
                    T::Fd(n) => *n,
                    T::Duplicate(w) => match w.raw.as_str() {
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
                    T::File(_) | T::Process(_) => -1,
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

fn process_substitution(sub: &tree::ProcessSubstitution) -> ShellError {
    unsupported("process substitution <(..) / >(..)", sub.at)
}

#[cfg(test)]
mod tests;
