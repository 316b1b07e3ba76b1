//! Walks brush-parser's AST and collects every simple command at every nesting level.

use std::io::Cursor;

use brush_parser::ast::{self, AndOr, Command, CommandPrefixOrSuffixItem, CompoundCommand};
use brush_parser::{Parser, ParserOptions};

use super::words::{self, Analysis};
use super::wrappers::{self, basename};
use super::{
    Assignment, Issue, IssueKind, Origin, ParsedScript, Redirect, RedirectOp, ShellError,
    SimpleCommand, Word,
};
use super::{guards, plain, runtime_eval};

/// How deep scripts may nest (`bash -c "$(bash -c '...')"`) before the walker gives up and
/// reports [`IssueKind::TooDeep`]. Real commands rarely nest more than three levels.
pub const MAX_DEPTH: u32 = 16;

/// Shells whose `-c` argument, or stdin here-document, is a script to analyse.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh",
];

/// Parses `script` and walks it. `fast` lets plain scripts skip brush-parser (see
/// [`super::plain`]); turning it off is for differential tests.
pub(super) fn parse_top(script: &str, fast: bool) -> Result<ParsedScript, ShellError> {
    let opts = ParserOptions::default();
    let program = parse_program(script, &opts, fast).map_err(|message| ShellError { message })?;
    let mut walker = Walker {
        opts,
        fast,
        out: ParsedScript::default(),
        at: (Origin::TopLevel, 0),
    };
    walker.program(&program, Origin::TopLevel, 0);
    Ok(walker.out)
}

fn parse_program(text: &str, opts: &ParserOptions, fast: bool) -> Result<ast::Program, String> {
    if let Some(why) = guards::refuse(text) {
        return Err(why);
    }
    if fast && let Some(program) = plain::parse(text) {
        return Ok(program);
    }
    match guards::catch_panic(|| Parser::new(Cursor::new(text.as_bytes()), opts).parse_program()) {
        Some(Ok(program)) => Ok(program),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the shell parser failed on this input".to_owned()),
    }
}

struct Walker {
    opts: ParserOptions,
    fast: bool,
    out: ParsedScript,
    /// Where the command being walked was found (for the assignments its words make).
    at: (Origin, u32),
}

/// Scripts found inside words, walked after the command that holds them is recorded.
type Pending = Vec<(String, Origin)>;

impl Walker {
    fn issue(&mut self, kind: IssueKind, detail: String) {
        self.out.issues.push(Issue { kind, detail });
    }

    fn nested(&mut self, text: &str, origin: Origin, depth: u32) {
        if depth > MAX_DEPTH {
            self.issue(
                IssueKind::TooDeep,
                format!("scripts nested more than {MAX_DEPTH} levels deep"),
            );
            return;
        }
        match parse_program(text, &self.opts, self.fast) {
            Ok(program) => self.program(&program, origin, depth),
            Err(e) => self.issue(
                IssueKind::NestedParse,
                format!("cannot parse `{text}`: {e}"),
            ),
        }
    }

    fn drain(&mut self, pending: Pending, depth: u32) {
        for (text, origin) in pending {
            self.nested(&text, origin, depth + 1);
        }
    }

    fn program(&mut self, program: &ast::Program, origin: Origin, depth: u32) {
        for list in &program.complete_commands {
            self.compound_list(list, origin, depth);
        }
    }

    /// An and-or list's commands, each pipeline after `&&` marked as running only once the
    /// command before it exited 0, when that was one simple command in this shell
    /// ([`SimpleCommand::after_success_of`]): `cd d && cat x` runs `cat` in `d`. After a `||`
    /// nothing is known of what ran before.
    fn compound_list(&mut self, list: &ast::CompoundList, origin: Origin, depth: u32) {
        for item in &list.0 {
            let and_or = &item.0;
            let mut guard = self.pipeline(&and_or.first, origin, depth);
            for next in &and_or.additional {
                match next {
                    AndOr::And(p) => {
                        let from = self.out.commands.len();
                        let lone = self.pipeline(p, origin, depth);
                        if let Some(g) = guard {
                            for c in &mut self.out.commands[from..] {
                                c.after_success_of.get_or_insert(g);
                            }
                        }
                        guard = lone;
                    }
                    AndOr::Or(p) => {
                        self.pipeline(p, origin, depth);
                        guard = None;
                    }
                }
            }
        }
    }

    /// Walks a pipeline; the index of its command when it is one simple command run in this
    /// shell, its status not inverted or timed (`cd d`, not `! cd d`, `cd d | x`).
    fn pipeline(&mut self, pipeline: &ast::Pipeline, origin: Origin, depth: u32) -> Option<usize> {
        let mut lone = None;
        for command in &pipeline.seq {
            lone = self.command(command, origin, depth, &[]);
        }
        lone.filter(|_| pipeline.seq.len() == 1 && !pipeline.bang && pipeline.timed.is_none())
    }

    /// Walks a command; the index of its record when it is a simple command.
    fn command(
        &mut self,
        command: &Command,
        origin: Origin,
        depth: u32,
        outer: &[Redirect],
    ) -> Option<usize> {
        self.at = (origin, depth);
        match command {
            Command::Simple(simple) => return Some(self.simple(simple, origin, depth, outer)),
            Command::Compound(compound, redirects) => {
                let redirects = self.redirect_list(redirects.as_ref(), depth, outer);
                self.compound(compound, inner_origin(origin), depth, &redirects);
            }
            Command::Function(def) => {
                let redirects = self.redirect_list(def.body.1.as_ref(), depth, &[]);
                self.compound(&def.body.0, Origin::FunctionBody, depth, &redirects);
            }
            Command::ExtendedTest(test, redirects) => {
                let mut pending = Pending::new();
                self.extended_test(&test.expr, &mut pending);
                let redirects = self.redirect_list(redirects.as_ref(), depth, outer);
                self.record_redirect_only(redirects, origin, depth);
                self.drain(pending, depth);
            }
        }
        None
    }

    /// Redirects of a compound command apply to every command inside it; they are recorded on a
    /// command of their own (no words) so a policy checks them exactly once, and passed down.
    fn redirect_list(
        &mut self,
        list: Option<&ast::RedirectList>,
        depth: u32,
        outer: &[Redirect],
    ) -> Vec<Redirect> {
        let mut pending = Pending::new();
        let mut deferred = Vec::new();
        let mut redirects: Vec<Redirect> = outer.to_vec();
        if let Some(list) = list {
            for r in &list.0 {
                if let Some(r) = self.redirect(r, &mut deferred, &mut pending) {
                    redirects.push(r);
                }
            }
        }
        for list in deferred {
            self.compound_list(list, Origin::Substitution, depth);
        }
        self.drain(pending, depth);
        redirects
    }

    fn record_redirect_only(&mut self, redirects: Vec<Redirect>, origin: Origin, depth: u32) {
        if !redirects.is_empty() {
            self.out.commands.push(SimpleCommand {
                words: Vec::new(),
                assignments: Vec::new(),
                redirects,
                origin,
                depth,
                layers: Vec::new(),
                after_success_of: None,
            });
        }
    }

    /// A variable the shell assigns outside an assignment word (`for NAME in …`, `coproc
    /// NAME`, `${NAME:=value}`), recorded as a bare assignment so that policies judge it like
    /// `NAME=value`. Its value is only known at run time.
    fn record_assignment(&mut self, name: &str, shown: &str, origin: Origin, depth: u32) {
        self.out.commands.push(SimpleCommand {
            words: Vec::new(),
            assignments: vec![Assignment {
                name: name.to_owned(),
                value: Word {
                    text: shown.to_owned(),
                    raw: shown.to_owned(),
                    dynamic: true,
                    ..Word::default()
                },
                implicit: true,
            }],
            redirects: Vec::new(),
            origin,
            depth,
            layers: Vec::new(),
            after_success_of: None,
        });
    }

    fn compound(
        &mut self,
        compound: &CompoundCommand,
        origin: Origin,
        depth: u32,
        redirects: &[Redirect],
    ) {
        let mut pending = Pending::new();
        // Redirects of the compound: checked once, on a command of their own.
        self.record_redirect_only(redirects.to_vec(), origin, depth);
        match compound {
            CompoundCommand::Arithmetic(a) => {
                self.runtime(runtime_eval::arithmetic(
                    &a.expr.value,
                    "the arithmetic command",
                ));
                self.scan(&a.expr.value, &mut pending);
            }
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.runtime(runtime_eval::arithmetic(
                        &e.value,
                        "the arithmetic `for` clause",
                    ));
                    self.scan(&e.value, &mut pending);
                }
                self.compound_list(&f.body.list, origin, depth);
            }
            CompoundCommand::BraceGroup(b) => self.compound_list(&b.list, origin, depth),
            CompoundCommand::Subshell(s) => self.compound_list(&s.list, origin, depth),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value, &mut pending);
                }
                let shown = format!("for {} in …", f.variable_name);
                self.record_assignment(&f.variable_name, &shown, origin, depth);
                self.compound_list(&f.body.list, origin, depth);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, &mut pending);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value, &mut pending);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.compound_list(cmd, origin, depth);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.compound_list(&i.condition, origin, depth);
                self.compound_list(&i.then, origin, depth);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.compound_list(c, origin, depth);
                    }
                    self.compound_list(&e.body, origin, depth);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.compound_list(&w.0, origin, depth);
                self.compound_list(&w.1.list, origin, depth);
            }
            CompoundCommand::Coprocess(c) => {
                // `coproc NAME` assigns the array NAME and NAME_PID (bash's own COPROC when
                // unnamed).
                if let Some(name) = &c.name {
                    let name = self.word(&name.value, &mut pending);
                    for n in [name.text.clone(), format!("{}_PID", name.text)] {
                        self.record_assignment(&n, &format!("coproc {}", name.raw), origin, depth);
                    }
                }
                self.command(&c.body, origin, depth, &[]);
            }
        }
        self.drain(pending, depth);
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, pending: &mut Pending) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, pending);
                self.extended_test(b, pending);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a, pending),
            E::UnaryTest(op, w) => {
                let w = self.word(&w.value, pending);
                let names_variable = matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                );
                self.runtime(runtime_eval::extended_unary_name(names_variable, &w));
            }
            E::BinaryTest(op, a, b) => {
                let a = self.word(&a.value, pending);
                let b = self.word(&b.value, pending);
                use ast::BinaryPredicate as B;
                if matches!(
                    op,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                ) {
                    self.runtime(runtime_eval::extended_arithmetic_operand(&a));
                    self.runtime(runtime_eval::extended_arithmetic_operand(&b));
                }
            }
        }
    }

    fn runtime(&mut self, issue: Option<Issue>) {
        self.out.issues.extend(issue);
    }

    fn absorb(&mut self, analysis: Analysis, pending: &mut Pending) -> Word {
        pending.extend(
            analysis
                .nested
                .into_iter()
                .map(|s| (s, Origin::Substitution)),
        );
        self.out.issues.extend(analysis.issues);
        let (origin, depth) = self.at;
        for (name, shown) in &analysis.assigned {
            self.record_assignment(name, shown, origin, depth);
        }
        analysis.word
    }

    fn word(&mut self, raw: &str, pending: &mut Pending) -> Word {
        let analysis = words::analyze(raw, &self.opts);
        self.absorb(analysis, pending)
    }

    /// Text the shell evaluates (arithmetic): only its nested substitutions matter.
    fn scan(&mut self, text: &str, pending: &mut Pending) {
        if text.contains(['$', '`']) {
            self.word(text, pending);
        }
    }

    /// Records a simple command (and what it holds); the index of its record.
    fn simple(
        &mut self,
        simple: &ast::SimpleCommand,
        origin: Origin,
        depth: u32,
        outer: &[Redirect],
    ) -> usize {
        let mut pending = Pending::new();
        let mut deferred = Vec::new();
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut redirects = Vec::new();
        // Prefix items, then the name, then suffix items: source order.
        let items = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter().map(|i| Part::Item(i, true)))
            .chain(simple.word_or_name.iter().map(Part::Name))
            .chain(
                simple
                    .suffix
                    .iter()
                    .flat_map(|s| s.0.iter().map(|i| Part::Item(i, false))),
            );
        for part in items {
            let (item, in_prefix) = match part {
                Part::Name(name) => {
                    let w = self.word(&name.value, &mut pending);
                    words.push(w);
                    continue;
                }
                Part::Item(item, in_prefix) => (item, in_prefix),
            };
            match item {
                CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    if let Some(r) = self.redirect(r, &mut deferred, &mut pending) {
                        redirects.push(r);
                    }
                }
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, raw) if in_prefix => {
                    let a = self.assignment(assignment, raw, &mut pending);
                    assignments.push(a);
                }
                CommandPrefixOrSuffixItem::AssignmentWord(_, raw)
                | CommandPrefixOrSuffixItem::Word(raw) => {
                    let w = self.word(&raw.value, &mut pending);
                    words.push(w);
                }
                CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                    deferred.push(&sub.list);
                    let raw = format!("{kind}({})", sub.list);
                    words.push(Word {
                        text: raw.clone(),
                        raw,
                        dynamic: true,
                        ..Word::default()
                    });
                }
            }
        }
        // The enclosing compound command's redirects are in effect first, then the command's
        // own, in source order: the order bash applies them in.
        let redirects = [outer, &redirects[..]].concat();
        let layers = wrappers::unwrap(&words);
        let command = SimpleCommand {
            words,
            assignments,
            redirects,
            origin,
            depth,
            layers,
            after_success_of: None,
        };
        let mut strings = Pending::new();
        let extra = self.run_strings(&command, depth, &mut strings);
        let index = self.out.commands.len();
        self.out.commands.push(command);
        self.out.commands.extend(extra);
        self.drain(strings, depth);
        for list in deferred {
            self.compound_list(list, Origin::Substitution, depth);
        }
        self.drain(pending, depth);
        index
    }

    fn assignment(
        &mut self,
        assignment: &ast::Assignment,
        raw: &ast::Word,
        pending: &mut Pending,
    ) -> Assignment {
        let name = match &assignment.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, index) => {
                self.runtime(runtime_eval::subscript(index, &raw.value));
                self.scan(index, pending);
                n.clone()
            }
        };
        self.runtime(runtime_eval::code_variable(&name));
        let value = match &assignment.value {
            ast::AssignmentValue::Scalar(w) => self.word(&w.value, pending),
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.runtime(runtime_eval::subscript(&k.value, &raw.value));
                        self.scan(&k.value, pending);
                    }
                    self.word(&v.value, pending);
                }
                Word {
                    text: raw.value.clone(),
                    raw: raw.value.clone(),
                    dynamic: true,
                    ..Word::default()
                }
            }
        };
        Assignment {
            name,
            value,
            implicit: false,
        }
    }

    fn redirect<'a>(
        &mut self,
        r: &'a ast::IoRedirect,
        deferred: &mut Vec<&'a ast::CompoundList>,
        pending: &mut Pending,
    ) -> Option<Redirect> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        Some(match r {
            R::File(fd, kind, target) => {
                let op = match kind {
                    K::Read => RedirectOp::Read,
                    K::Write => RedirectOp::Write,
                    K::Append => RedirectOp::Append,
                    K::ReadAndWrite => RedirectOp::ReadWrite,
                    K::Clobber => RedirectOp::Clobber,
                    K::DuplicateInput => RedirectOp::DuplicateInput,
                    K::DuplicateOutput => RedirectOp::DuplicateOutput,
                };
                let target = match target {
                    T::Filename(w) | T::Duplicate(w) => Some(self.word(&w.value, pending)),
                    T::Fd(n) => Some(Word::literal(&n.to_string())),
                    T::ProcessSubstitution(_, sub) => {
                        deferred.push(&sub.list);
                        None
                    }
                };
                Redirect {
                    fd: *fd,
                    op,
                    target,
                }
            }
            R::HereDocument(fd, doc) => {
                let body = &doc.doc.value;
                let mut dynamic = false;
                if doc.requires_expansion && body.contains(['$', '`']) {
                    let analysis = words::analyze_heredoc(body, &self.opts);
                    dynamic = !analysis.nested.is_empty() || body.contains('$');
                    self.absorb(analysis, pending);
                }
                Redirect {
                    fd: *fd,
                    op: RedirectOp::HereDocument,
                    target: Some(Word {
                        text: body.clone(),
                        raw: body.clone(),
                        dynamic,
                        ..Word::default()
                    }),
                }
            }
            R::HereString(fd, w) => Redirect {
                fd: *fd,
                op: RedirectOp::HereString,
                target: Some(self.word(&w.value, pending)),
            },
            R::OutputAndError(w, append) => Redirect {
                fd: None,
                op: RedirectOp::OutputAndError { append: *append },
                target: Some(self.word(&w.value, pending)),
            },
        })
    }

    /// Commands that run a string or other arguments as commands: shells with `-c` or a script on
    /// stdin, `eval`, `env -S`, `flock -c`, `su -c`, `find -exec`. Returns the `find -exec`
    /// commands to record after `command`; string scripts are walked directly.
    fn run_strings(
        &mut self,
        command: &SimpleCommand,
        depth: u32,
        pending: &mut Pending,
    ) -> Vec<SimpleCommand> {
        let mut found = Vec::new();
        let mut starts = vec![0];
        starts.extend(command.layers.iter().map(|l| l.inner));
        for &start in &starts {
            if let Some(i) = wrappers::string_command_arg(&command.words, start) {
                self.string_script(&command.words[i], pending);
            }
            if let Some(words) = command.words.get(start..) {
                let found = runtime_eval::builtin(words);
                self.out.issues.extend(found);
            }
        }
        let words = command.effective_words();
        let Some(head) = words.first().filter(|w| w.is_static()) else {
            return found;
        };
        let name = basename(&head.text);
        if SHELLS.contains(&name) {
            match shell_invocation(words) {
                ShellInvocation::Command(i) => self.string_script(&words[i], pending),
                ShellInvocation::Stdin => {
                    for r in &command.redirects {
                        if matches!(r.op, RedirectOp::HereDocument | RedirectOp::HereString)
                            && let Some(t) = &r.target
                        {
                            self.string_script(t, pending);
                        }
                    }
                }
                ShellInvocation::ScriptFile => {}
            }
        } else if name == "eval" && words.len() > 1 {
            let args = &words[1..];
            if args.iter().any(|w| w.dynamic) {
                self.issue(
                    IssueKind::DynamicScript,
                    format!(
                        "`eval` of a value only known at run time: {}",
                        super::join(args)
                    ),
                );
            }
            pending.push((super::join(args), Origin::ShellString));
        } else if name == "trap" {
            if let Some(action) = trap_action(words) {
                self.string_script(action, pending);
            }
        } else if name == "find" {
            for segment in find_exec_segments(words) {
                if depth + 1 > MAX_DEPTH {
                    break;
                }
                let layers = wrappers::unwrap(&segment);
                let inner = SimpleCommand {
                    words: segment,
                    assignments: Vec::new(),
                    redirects: Vec::new(),
                    origin: Origin::FindExec,
                    depth: depth + 1,
                    layers,
                    after_success_of: None,
                };
                let more = self.run_strings(&inner, depth + 1, pending);
                found.push(inner);
                found.extend(more);
            }
        }
        found
    }

    fn string_script(&mut self, word: &Word, pending: &mut Pending) {
        if word.dynamic {
            self.issue(
                IssueKind::DynamicScript,
                format!("a shell runs a script only known at run time: {}", word.raw),
            );
        }
        pending.push((word.text.clone(), Origin::ShellString));
    }
}

/// One part of a simple command, in source order.
enum Part<'a> {
    /// A prefix (`true`) or suffix (`false`) item.
    Item(&'a CommandPrefixOrSuffixItem, bool),
    /// The command name.
    Name(&'a ast::Word),
}

/// The action of `trap ACTION SIGNAL...`: a script the shell runs when the signal arrives.
/// `trap -p`, `trap -l`, `trap SIGNAL` alone and `trap - SIGNAL` (reset) have none.
fn trap_action(words: &[Word]) -> Option<&Word> {
    let mut args = words.get(1..)?.iter().peekable();
    while let Some(w) = args.peek() {
        match w.text.as_str() {
            "--" => {
                args.next();
                break;
            }
            t if t.starts_with('-') && t.len() > 1 && !w.dynamic => {
                args.next();
            }
            _ => break,
        }
    }
    let rest: Vec<&Word> = args.collect();
    match rest.as_slice() {
        [] | [_] => None,
        [action, ..] if action.is_static() && (action.text == "-" || action.text.is_empty()) => {
            None
        }
        [action, ..] => Some(action),
    }
}

fn inner_origin(origin: Origin) -> Origin {
    match origin {
        Origin::TopLevel => Origin::Compound,
        other => other,
    }
}

enum ShellInvocation {
    /// `sh -c SCRIPT`: index of SCRIPT.
    Command(usize),
    /// `sh FILE`: runs a file.
    ScriptFile,
    /// `sh` alone: reads the script from stdin.
    Stdin,
}

fn shell_invocation(words: &[Word]) -> ShellInvocation {
    let mut c_flag = false;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let a = w.text.as_str();
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if a.starts_with("--") {
            i += if matches!(a, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            let flags = &a[1..];
            if a.starts_with('-') && flags.contains('c') {
                c_flag = true;
            }
            i += if flags.contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        break;
    }
    match (c_flag, i < words.len()) {
        (true, true) => ShellInvocation::Command(i),
        (false, true) => ShellInvocation::ScriptFile,
        (_, false) => ShellInvocation::Stdin,
    }
}

/// The command lines of `find ... -exec CMD ARGS ;` (and `-execdir`, `-ok`, `-okdir`, `+`).
fn find_exec_segments(words: &[Word]) -> Vec<Vec<Word>> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < words.len() {
        if matches!(
            words[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let mut end = start;
            while end < words.len() && !matches!(words[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            if end > start {
                out.push(words[start..end].to_vec());
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn names(script: &str) -> Vec<String> {
        parse(script)
            .unwrap()
            .commands
            .iter()
            .map(|c| c.text_from(0))
            .collect()
    }

    /// Variables the shell assigns outside an assignment word are recorded as bare
    /// assignments, so a policy judges `for PATH in .` like `PATH=.` (issue 24, class 1).
    #[test]
    fn implicit_assignments_are_recorded() {
        let assigned = |script: &str| -> Vec<(String, String, bool)> {
            parse(script)
                .unwrap()
                .commands
                .iter()
                .filter(|c| c.words.is_empty())
                .flat_map(|c| &c.assignments)
                .map(|a| (a.name.clone(), a.shown(), a.implicit))
                .collect()
        };
        let one =
            |n: &str, shown: &str, implicit: bool| vec![(n.to_owned(), shown.to_owned(), implicit)];
        assert_eq!(assigned("PATH=."), one("PATH", "PATH=.", false));
        assert_eq!(
            assigned("for PATH in .; do ls; done"),
            one("PATH", "for PATH in …", true)
        );
        assert_eq!(
            assigned(": ${CDPATH:=/}; cd tmp"),
            one("CDPATH", "${CDPATH:=/}", true)
        );
        assert_eq!(
            assigned("echo \"${GIT_DIR=x}\""),
            one("GIT_DIR", "${GIT_DIR=x}", true)
        );
        assert_eq!(
            assigned("echo ${a:-${HOME:=/tmp}}"),
            one("HOME", "${HOME:=/tmp}", true)
        );
        assert_eq!(
            assigned("coproc PATH { ls; }"),
            [
                ("PATH".to_owned(), "coproc PATH".to_owned(), true),
                ("PATH_PID".to_owned(), "coproc PATH".to_owned(), true)
            ]
        );
        assert_eq!(assigned("echo ${x:-y} ${#z}"), []);
    }

    /// Which command each runs only after (`&&` from one simple command of this shell).
    #[test]
    fn commands_after_an_and_know_what_ran_before_them() {
        let after = |script: &str| -> Vec<(String, Option<usize>)> {
            parse(script)
                .unwrap()
                .commands
                .iter()
                .map(|c| (c.text_from(0), c.after_success_of))
                .collect()
        };
        let one = |t: &str, g: Option<usize>| (t.to_owned(), g);
        assert_eq!(
            after("cd d && cat x && wc y; rm z"),
            [
                one("cd d", None),
                one("cat x", Some(0)),
                one("wc y", Some(1)),
                one("rm z", None)
            ]
        );
        // A pipeline after `&&`: every command of it; a `$( )` inside too.
        assert_eq!(
            after("cd d && cat x | wc $(ls)"),
            [
                one("cd d", None),
                one("cat x", Some(0)),
                one("wc $(ls)", Some(0)),
                one("ls", Some(0))
            ]
        );
        // Nothing is known after `||`, after a negated, timed or piped command, or a compound.
        for script in [
            "cd d || cat x",
            "cd d && true || cat x",
            "! cd d && cat x",
            "time cd d && cat x",
            "cd d | cat && cat x",
            "{ cd d; } && cat x",
        ] {
            let last = after(script).pop().unwrap();
            assert_eq!(last, one("cat x", None), "{script}");
        }
        // A nested list keeps its own, nearer guard.
        assert_eq!(
            after("cd a && { cd b && cat x; }"),
            [
                one("cd a", None),
                one("cd b", Some(0)),
                one("cat x", Some(1))
            ]
        );
    }

    #[test]
    fn every_separator_splits() {
        assert_eq!(
            names("a; b && c || d | e |& f & g\nh"),
            ["a", "b", "c", "d", "e", "f", "g", "h"]
        );
    }

    #[test]
    fn nesting_is_unfolded() {
        assert_eq!(names("echo $(rm x)"), ["echo $(rm x)", "rm x"]);
        assert_eq!(names("echo `rm x`"), ["echo `rm x`", "rm x"]);
        assert_eq!(names("cat <(ls) f"), ["cat <(ls) f", "ls"]);
        assert_eq!(names("(cd /; rm -rf x)"), ["cd /", "rm -rf x"]);
        assert_eq!(names("{ cat f; }"), ["cat f"]);
        assert_eq!(names("if a; then b; else c; fi"), ["a", "b", "c"]);
        assert_eq!(names("for i in $(ls); do rm $i; done"), ["", "rm $i", "ls"]);
        assert_eq!(names("while a; do b; done"), ["a", "b"]);
        assert_eq!(names("case $(x) in y) z;; esac"), ["z", "x"]);
        assert_eq!(names("f() { rm -rf /; }; f"), ["rm -rf /", "f"]);
        assert_eq!(names("[[ -f $(id) ]]"), ["id"]);
        assert_eq!(names("(( x[$(id)] ))"), ["id"]);
        assert_eq!(
            names("echo \"a $(echo \"b $(rm y)\")\""),
            ["echo a $(echo \"b $(rm y)\")", "echo b $(rm y)", "rm y"]
        );
    }

    #[test]
    fn shell_strings_are_parsed() {
        assert_eq!(
            names("bash -c 'rm -rf /'"),
            ["bash -c rm -rf /", "rm -rf /"]
        );
        assert_eq!(names("sh -lc \"a; b\""), ["sh -lc a; b", "a", "b"]);
        assert_eq!(
            names("sudo -u x bash -c 'rm'"),
            ["sudo -u x bash -c rm", "rm"]
        );
        assert_eq!(names("eval 'rm x'"), ["eval rm x", "rm x"]);
        assert_eq!(names("env -S 'rm x'"), ["env -S rm x", "rm x"]);
        assert_eq!(names("bash <<EOF\nrm -rf /\nEOF"), ["bash", "rm -rf /"]);
        assert_eq!(names("bash <<< 'rm x'"), ["bash", "rm x"]);
        assert_eq!(names("bash script.sh"), ["bash script.sh"]);
        assert_eq!(
            names("find . -name x -exec rm {} \\; -exec sh -c 'curl y' \\;"),
            [
                "find . -name x -exec rm {} ; -exec sh -c curl y ;",
                "rm {}",
                "sh -c curl y",
                "curl y"
            ]
        );
    }

    #[test]
    fn heredoc_substitutions_are_found() {
        assert_eq!(names("cat <<EOF\n$(rm x)\nEOF"), ["cat", "rm x"]);
        assert_eq!(names("cat <<'EOF'\n$(rm x)\nEOF"), ["cat"]);
    }

    #[test]
    fn redirects_are_recorded() {
        let s = parse("FOO=1 git status > out.txt 2>&1 < in &> both").unwrap();
        let c = &s.commands[0];
        assert_eq!(c.assignments[0].name, "FOO");
        let written: Vec<_> = c
            .redirects
            .iter()
            .filter_map(|r| r.written_file())
            .map(|w| w.text.as_str())
            .collect();
        assert_eq!(written, ["out.txt", "both"]);
        let read: Vec<_> = c
            .redirects
            .iter()
            .filter_map(|r| r.read_file())
            .map(|w| w.text.as_str())
            .collect();
        assert_eq!(read, ["in"]);
        let s = parse("{ echo x; } > f").unwrap();
        assert!(
            s.commands
                .iter()
                .any(|c| c.words.is_empty() && c.redirects[0].written_file().is_some())
        );
        let s = parse("echo x >&out").unwrap();
        assert_eq!(
            s.commands[0].redirects[0].written_file().unwrap().text,
            "out"
        );
    }

    #[test]
    fn issues_are_reported() {
        let s = parse("bash -c \"$X\"").unwrap();
        assert_eq!(s.issues[0].kind, IssueKind::DynamicScript);
        let s = parse("bash -c 'echo \"unterminated'").unwrap();
        assert_eq!(s.issues[0].kind, IssueKind::NestedParse);
        let s = parse("eval $X").unwrap();
        assert_eq!(s.issues[0].kind, IssueKind::DynamicScript);
        assert!(parse("echo \"unterminated").is_err());
        assert!(parse("a &&").is_err());
        // Twenty `$(` are refused before parsing (parentheses nest too deep); `eval` nests
        // scripts without parentheses.
        let deep = format!("{}rm x{}", "echo $(".repeat(20), ")".repeat(20));
        assert!(parse(&deep).unwrap_err().message.contains("levels deep"));
        let deep = format!("{}rm x", "eval ".repeat(20));
        let s = parse(&deep).unwrap();
        assert!(s.issues.iter().any(|i| i.kind == IssueKind::TooDeep));
    }

    #[test]
    fn wrappers_are_layered() {
        let s = parse("timeout 5 sudo rm -rf x").unwrap();
        let c = &s.commands[0];
        assert_eq!(c.effective_name(), Some("rm"));
        assert_eq!(c.allow_start(), 2);
        assert_eq!(c.text_from(c.allow_start()), "sudo rm -rf x");
    }

    /// Found by the sandbox's fuzz target: brush-parser looped forever on an empty here-doc
    /// delimiter inside `$( ( ... ) )`. Each input must be answered (refused) promptly.
    #[test]
    fn empty_heredoc_delimiters_fail_closed_without_hanging() {
        let inputs = [
            "echo $( (0<<\"\")",
            "echo $(rm (\u{1}0<<\"\")",
            "echo $( (0<<'')",
            "echo $( (cat <<-\"\")",
            "cat <<$''",
            "echo $(rm (z(<<\t)",
            "echo $( (cat <<EOF)",
            "echo $(rm $(`((`(<< ))",
            "echo $(rm |(J {} +@\t&3\t\\<<<\u{c}&)",
            "echo $(rm 0>>>(0>>>(cunit$$[Td(l((,]w$$$\u{4}<<\t\t\u{4})0|for x n i}||0co><([)",
        ];
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for i in inputs {
                let _ = tx.send((i, crate::shell::parse(i).is_err()));
            }
        });
        for _ in 0..inputs.len() {
            let (i, refused) = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .expect("the parser hung");
            assert!(refused, "{i:?} should be refused");
        }
    }

    /// Found by the sandbox's fuzz target: brush's word parser mis-split this word and no
    /// substitution was walked, so `rm` was invisible. The cross-check in `words.rs` now reports
    /// an unanalysed substitution, and callers fail closed.
    #[test]
    fn substitutions_the_word_parser_misses_are_issues() {
        for w in [
            "echo $(rm cur$((;($))4(J)($)))",
            "echo $(rm cur\u{0}$((;($))4(J)($)\u{0}))",
        ] {
            let p = crate::shell::parse(w).unwrap();
            let sees_rm = p.commands.iter().any(|c| c.name() == Some("rm"));
            assert!(sees_rm || !p.issues.is_empty(), "{w}: {p:?}");
        }
        for ok in ["echo '$(not run)'", "echo $'$(x)'", "echo $((1+2))"] {
            let p = crate::shell::parse(ok).unwrap();
            assert!(p.issues.is_empty(), "{ok}: {:?}", p.issues);
        }
    }
}
