//! Walks the lowered shell tree ([`super::tree`]) and collects every simple command at every
//! nesting level.

use super::tree::{self, Command, CommandItem, Compound};
use super::words::{self, Analysis};
use super::wrappers::{self, basename};
use super::{
    Assignment, Issue, IssueKind, Origin, ParsedScript, Redirect, RedirectOp, ScriptParseError,
    SimpleCommand, Word,
};
use super::{lower, runtime_eval};

/// How deep scripts may nest (`bash -c "$(bash -c '...')"`) before the walker gives up and
/// reports [`IssueKind::TooDeep`]. Real commands rarely nest more than three levels.
pub const MAX_DEPTH: u32 = 16;

/// Shells whose `-c` argument, or stdin here-document, is a script to analyse.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh",
];

/// Parses `script` and walks it. `fast` lets plain scripts skip brush-parser (see
/// [`super::plain`]); turning it off is for differential tests.
pub(super) fn parse_top(script: &str, fast: bool) -> Result<ParsedScript, ScriptParseError> {
    let tree = lower::parse(script, fast).map_err(|message| ScriptParseError { message })?;
    Ok(walk_script(&tree, fast))
}

/// Walks a lowered top-level script (nested scripts are lowered as they are found; `fast` as
/// in [`parse_top`]).
pub(super) fn walk_script(script: &tree::Script, fast: bool) -> ParsedScript {
    let mut walker = Walker {
        fast,
        out: ParsedScript::default(),
        at: (Origin::TopLevel, 0),
    };
    walker.list(&script.items, Origin::TopLevel, 0);
    walker.out
}

struct Walker {
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

    /// The wrapper layers of a command's words; a wrapper that cannot be seen through is an
    /// issue.
    fn unwrap(&mut self, words: &mut [Word]) -> Vec<wrappers::Layer> {
        let unwrapped = wrappers::unwrap(words);
        if let Some(why) = unwrapped.unknown {
            self.issue(IssueKind::Wrapper, why);
        }
        unwrapped.layers
    }

    fn nested(&mut self, text: &str, origin: Origin, depth: u32) {
        if depth > MAX_DEPTH {
            self.issue(
                IssueKind::TooDeep,
                format!("scripts nested more than {MAX_DEPTH} levels deep"),
            );
            return;
        }
        match lower::parse(text, self.fast) {
            Ok(script) => self.list(&script.items, origin, depth),
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

    /// An and-or list's commands, each pipeline after `&&` marked as running only once the
    /// command before it exited 0, when that was one simple command in this shell
    /// ([`SimpleCommand::after_success_of`]): `cd d && cat x` runs `cat` in `d`. After a `||`
    /// nothing is known of what ran before.
    fn list(&mut self, items: &[tree::Item], origin: Origin, depth: u32) {
        for item in items {
            let and_or = &item.and_or;
            let mut guard = self.pipeline(&and_or.first, origin, depth);
            for (connector, next) in &and_or.rest {
                match connector {
                    tree::Connector::And => {
                        let from = self.out.commands.len();
                        let lone = self.pipeline(next, origin, depth);
                        if let Some(g) = guard {
                            for c in &mut self.out.commands[from..] {
                                c.after_success_of.get_or_insert(g);
                            }
                        }
                        guard = lone;
                    }
                    tree::Connector::Or => {
                        self.pipeline(next, origin, depth);
                        guard = None;
                    }
                }
            }
        }
    }

    /// Walks a pipeline; the index of its command when it is one simple command run in this
    /// shell, its status not inverted or timed (`cd d`, not `! cd d`, `cd d | x`).
    fn pipeline(&mut self, pipeline: &tree::Pipeline, origin: Origin, depth: u32) -> Option<usize> {
        let mut lone = None;
        for command in &pipeline.commands {
            lone = self.command(command, origin, depth, &[]);
        }
        lone.filter(|_| {
            pipeline.commands.len() == 1 && !pipeline.negated && pipeline.timed.is_none()
        })
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
            Command::Compound(compound) => {
                let redirects = self.redirect_list(&compound.redirects, depth, outer);
                self.compound(&compound.body, inner_origin(origin), depth, &redirects);
            }
            Command::Function(def) => {
                let redirects = self.redirect_list(&def.body.redirects, depth, &[]);
                self.compound(&def.body.body, Origin::FunctionBody, depth, &redirects);
            }
            Command::Test(test) => {
                let mut pending = Pending::new();
                self.extended_test(&test.expr, &mut pending);
                let redirects = self.redirect_list(&test.redirects, depth, outer);
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
        list: &[tree::Redirect],
        depth: u32,
        outer: &[Redirect],
    ) -> Vec<Redirect> {
        let mut pending = Pending::new();
        let mut deferred = Vec::new();
        let mut redirects: Vec<Redirect> = outer.to_vec();
        for r in list {
            if let Some(r) = self.redirect(r, &mut deferred, &mut pending) {
                redirects.push(r);
            }
        }
        for list in deferred {
            self.list(list, Origin::Substitution, depth);
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
        compound: &Compound,
        origin: Origin,
        depth: u32,
        redirects: &[Redirect],
    ) {
        let mut pending = Pending::new();
        // Redirects of the compound: checked once, on a command of their own.
        self.record_redirect_only(redirects.to_vec(), origin, depth);
        match compound {
            Compound::Arithmetic(text) => {
                self.runtime(runtime_eval::arithmetic(text, "the arithmetic command"));
                self.scan(text, &mut pending);
            }
            Compound::ArithmeticFor {
                init,
                condition,
                update,
                body,
            } => {
                for e in [init, condition, update].into_iter().flatten() {
                    self.runtime(runtime_eval::arithmetic(e, "the arithmetic `for` clause"));
                    self.scan(e, &mut pending);
                }
                self.list(body, origin, depth);
            }
            Compound::BraceGroup(list) | Compound::Subshell(list) => {
                self.list(list, origin, depth);
            }
            Compound::For { name, values, body } => {
                for w in values.iter().flatten() {
                    self.word(w, &mut pending);
                }
                let shown = format!("for {name} in …");
                self.record_assignment(name, &shown, origin, depth);
                self.list(body, origin, depth);
            }
            Compound::Case { subject, arms } => {
                self.word(subject, &mut pending);
                for arm in arms {
                    for p in &arm.patterns {
                        self.word(p, &mut pending);
                    }
                    self.list(&arm.body, origin, depth);
                }
            }
            Compound::If {
                condition,
                then,
                elses,
            } => {
                self.list(condition, origin, depth);
                self.list(then, origin, depth);
                for e in elses {
                    if let Some(c) = &e.condition {
                        self.list(c, origin, depth);
                    }
                    self.list(&e.body, origin, depth);
                }
            }
            Compound::While {
                condition, body, ..
            } => {
                self.list(condition, origin, depth);
                self.list(body, origin, depth);
            }
            Compound::Coprocess { name, body } => {
                // `coproc NAME` assigns the array NAME and NAME_PID (bash's own COPROC when
                // unnamed).
                if let Some(name) = name {
                    let name = self.word(name, &mut pending);
                    for n in [name.text.clone(), format!("{}_PID", name.text)] {
                        self.record_assignment(&n, &format!("coproc {}", name.raw), origin, depth);
                    }
                }
                self.command(body, origin, depth, &[]);
            }
        }
        self.drain(pending, depth);
    }

    fn extended_test(&mut self, expr: &tree::TestExpr, pending: &mut Pending) {
        use tree::TestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, pending);
                self.extended_test(b, pending);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a, pending),
            E::Unary(op, w) => {
                let w = self.word(w, pending);
                let names_variable =
                    matches!(op, tree::UnaryTest::VariableSet | tree::UnaryTest::NameRef);
                self.runtime(runtime_eval::extended_unary_name(names_variable, &w));
            }
            E::Binary(op, a, b) => {
                let a = self.word(a, pending);
                let b = self.word(b, pending);
                if op.is_arithmetic() {
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

    fn word(&mut self, word: &tree::Word, pending: &mut Pending) -> Word {
        let analysis = words::analyze(word);
        self.absorb(analysis, pending)
    }

    /// Text the shell evaluates (arithmetic, a subscript): only its nested substitutions
    /// matter.
    fn scan(&mut self, text: &str, pending: &mut Pending) {
        if text.contains(['$', '`']) {
            let analysis = words::analyze_text(text);
            self.absorb(analysis, pending);
        }
    }

    /// Records a simple command (and what it holds); the index of its record.
    fn simple(
        &mut self,
        simple: &tree::SimpleCommand,
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
            .map(|i| Part::Item(i, true))
            .chain(simple.name.iter().map(Part::Name))
            .chain(simple.suffix.iter().map(|i| Part::Item(i, false)));
        for part in items {
            let (item, in_prefix) = match part {
                Part::Name(name) => {
                    let w = self.word(name, &mut pending);
                    words.push(w);
                    continue;
                }
                Part::Item(item, in_prefix) => (item, in_prefix),
            };
            match item {
                CommandItem::Redirect(r) => {
                    if let Some(r) = self.redirect(r, &mut deferred, &mut pending) {
                        redirects.push(r);
                    }
                }
                CommandItem::Assignment(assignment) if in_prefix => {
                    let a = self.assignment(assignment, &mut pending);
                    assignments.push(a);
                }
                CommandItem::Assignment(tree::Assignment { word: raw, .. })
                | CommandItem::Word(raw) => {
                    let w = self.word(raw, &mut pending);
                    words.push(w);
                }
                CommandItem::ProcessSubstitution(sub) => {
                    deferred.push(&sub.body);
                    words.push(Word {
                        text: sub.shown.clone(),
                        raw: sub.shown.clone(),
                        dynamic: true,
                        ..Word::default()
                    });
                }
            }
        }
        // The enclosing compound command's redirects are in effect first, then the command's
        // own, in source order: the order bash applies them in.
        let redirects = [outer, &redirects[..]].concat();
        let layers = self.unwrap(&mut words);
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
            self.list(list, Origin::Substitution, depth);
        }
        self.drain(pending, depth);
        index
    }

    fn assignment(&mut self, assignment: &tree::Assignment, pending: &mut Pending) -> Assignment {
        let raw = &assignment.word.raw;
        if let Some(index) = &assignment.index {
            self.runtime(runtime_eval::subscript(index, raw));
            self.scan(index, pending);
        }
        self.runtime(runtime_eval::code_variable(&assignment.name));
        let value = match &assignment.value {
            tree::AssignmentValue::Scalar(w) => self.word(w, pending),
            tree::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.runtime(runtime_eval::subscript(k, raw));
                        self.scan(k, pending);
                    }
                    self.word(v, pending);
                }
                Word {
                    text: raw.clone(),
                    raw: raw.clone(),
                    dynamic: true,
                    ..Word::default()
                }
            }
        };
        Assignment {
            name: assignment.name.clone(),
            value,
            implicit: false,
        }
    }

    fn redirect<'a>(
        &mut self,
        r: &'a tree::Redirect,
        deferred: &mut Vec<&'a [tree::Item]>,
        pending: &mut Pending,
    ) -> Option<Redirect> {
        use tree::{FileOp as K, RedirectKind as R, RedirectTarget as T};
        Some(match &r.kind {
            R::File { op, target } => {
                let op = match op {
                    K::Read => RedirectOp::Read,
                    K::Write => RedirectOp::Write,
                    K::Append => RedirectOp::Append,
                    K::ReadWrite => RedirectOp::ReadWrite,
                    K::Clobber => RedirectOp::Clobber,
                    K::DuplicateInput => RedirectOp::DuplicateInput,
                    K::DuplicateOutput => RedirectOp::DuplicateOutput,
                };
                let target = match target {
                    T::File(w) | T::Duplicate(w) => Some(self.word(w, pending)),
                    T::Fd(n) => Some(Word::literal(&n.to_string())),
                    T::Process(sub) => {
                        deferred.push(&sub.body);
                        None
                    }
                };
                Redirect {
                    fd: r.fd,
                    op,
                    target,
                }
            }
            R::HereDocument(doc) => {
                let body = &doc.body.raw;
                let mut dynamic = false;
                if doc.expands && body.contains(['$', '`']) {
                    let analysis = words::analyze_heredoc(&doc.body);
                    dynamic = !analysis.nested.is_empty() || body.contains('$');
                    self.absorb(analysis, pending);
                }
                Redirect {
                    fd: r.fd,
                    op: RedirectOp::HereDocument,
                    target: Some(Word {
                        text: body.clone(),
                        raw: body.clone(),
                        dynamic,
                        ..Word::default()
                    }),
                }
            }
            R::HereString(w) => Redirect {
                fd: r.fd,
                op: RedirectOp::HereString,
                target: Some(self.word(w, pending)),
            },
            R::OutputAndError { target, append } => Redirect {
                fd: None,
                op: RedirectOp::OutputAndError { append: *append },
                target: Some(self.word(target, pending)),
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
        // `env -S`, `flock -c`, `watch`: the command line the last wrapper runs.
        if let Some(script) = command.layers.last().and_then(|l| l.script.as_ref()) {
            self.string_script(script, pending);
        }
        let mut starts = vec![0];
        starts.extend(command.layers.iter().map(|l| l.inner));
        for &start in &starts {
            if let Some(words) = command.words.get(start..) {
                let found = runtime_eval::builtin(words);
                self.out.issues.extend(found);
            }
        }
        // As bash passes the words, with the items `xargs` appends (`xargs sh -c` takes its
        // script from the input): `sh {-c,'rm x'}` runs `rm x`, `find . {-exec,} rm x +` runs
        // `rm`.
        let argv = command.effective_argv();
        let Ok(words) = super::braces::expand_words(&argv) else {
            self.issue(
                IssueKind::DynamicScript,
                format!(
                    "braces making more than {} words, too many to find the commands they run",
                    super::braces::MAX_CHECKED_WORDS
                ),
            );
            return found;
        };
        let words = &words[..];
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
            for mut segment in find_exec_segments(words) {
                if depth + 1 > MAX_DEPTH {
                    break;
                }
                let layers = self.unwrap(&mut segment);
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
    Item(&'a CommandItem, bool),
    /// The command name.
    Name(&'a tree::Word),
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
mod tests;
