//! Text → brush-parser (behind the guards, or the fast path for plain scripts) → the owned
//! [`super::tree`]: positions converted, every word lowered into its pieces once (through the
//! word guards, panics caught). The one place agent-core's shell parse meets brush-parser.

use std::io::Cursor;

use brush_parser::ast::{self, SourceLocation};
use brush_parser::word::{self as bw, WordPiece as BrushPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions, SourcePosition};

use super::tree::{
    AndOr, Assignment, AssignmentValue, BinaryTest, CaseArm, CaseNext, Command, CommandItem,
    Compound, CompoundCommand, Connector, ElseClause, FileOp, FunctionDefinition, HereDocument,
    Item, Piece, Pipeline, Position, ProcessKind, ProcessSubstitution, Redirect, RedirectKind,
    RedirectTarget, Script, SimpleCommand, TestCommand, TestExpr, Tilde, UnaryTest, Word,
    WordPiece,
};
use super::{guards, plain};

mod parameter;

/// How deep operand words of parameter expansions are lowered (`${a:-${b:-${c:-..}}}`). Real
/// words nest two or three; deeper operands keep a refusal instead of pieces (fail closed), so
/// lowering never recurses without bound.
pub(crate) const MAX_OPERAND_NESTING: usize = 16;

/// Parses and lowers `text` behind the guards: the fast path for plain scripts when `fast`,
/// else brush-parser (its panics caught). The error is the reason.
pub(super) fn parse(text: &str, fast: bool) -> Result<Script, String> {
    if let Some(why) = guards::refuse(text) {
        return Err(why);
    }
    if fast && let Some(script) = plain::parse(text) {
        return Ok(script);
    }
    let opts = ParserOptions::default();
    match guards::catch_panic(|| Parser::new(Cursor::new(text.as_bytes()), &opts).parse_program()) {
        Some(Ok(program)) => Ok(self::program(&program, text)),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the shell parser failed on this input".to_owned()),
    }
}

/// Lowers a whole program; `text` is the script it was parsed from (for the positions brush
/// does not record, such as a `&` separator).
fn program(program: &ast::Program, text: &str) -> Script {
    let lowering = Lowering { text };
    Script {
        items: program
            .complete_commands
            .iter()
            .flat_map(|list| lowering.list(list))
            .collect(),
    }
}

/// Lowers one word's text (behind the word guards).
pub(super) fn word(raw: &str, at: Option<Position>) -> Word {
    Word {
        raw: raw.to_owned(),
        at,
        pieces: pieces(raw, false, 0),
    }
}

/// Characters that never start an expansion, a quote or a glob: a word made only of these is
/// one text piece, and brush's word parser need not run (the common case).
pub(super) fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b'=' | b':' | b',' | b'+' | b'%' | b'@' | b'^'
                )
        })
}

/// The pieces of `text` (`heredoc`: read as an expanding here-document body), or why not.
fn pieces(text: &str, heredoc: bool, depth: usize) -> Result<Vec<WordPiece>, String> {
    if !heredoc && (is_plain(text) || text == "[") {
        return Ok(vec![WordPiece {
            piece: Piece::Text(text.to_owned()),
            start: 0,
            end: text.len(),
        }]);
    }
    if depth > MAX_OPERAND_NESTING {
        return Err(format!(
            "parameter expansions nested more than {MAX_OPERAND_NESTING} deep are not accepted"
        ));
    }
    if let Some(why) = guards::refuse_word(text) {
        return Err(why);
    }
    let opts = ParserOptions::default();
    let parsed = guards::catch_panic(|| {
        if heredoc {
            bw::parse_heredoc(text, &opts)
        } else {
            bw::parse(text, &opts)
        }
    });
    match parsed {
        Some(Ok(pieces)) => Ok(lower_pieces(&pieces, depth)),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the word parser failed on this input".to_owned()),
    }
}

/// The pieces brush's word parser gives `text`, lowered, without the word guards (tests of
/// what the guards and cross-checks protect against).
#[cfg(test)]
pub(super) fn pieces_unguarded(text: &str) -> Vec<WordPiece> {
    match bw::parse(text, &ParserOptions::default()) {
        Ok(pieces) => lower_pieces(&pieces, 0),
        Err(e) => panic!("{text}: {e}"),
    }
}

fn lower_pieces(pieces: &[WordPieceWithSource], depth: usize) -> Vec<WordPiece> {
    pieces
        .iter()
        .map(|p| WordPiece {
            piece: lower_piece(&p.piece, depth),
            start: p.start_index,
            end: p.end_index,
        })
        .collect()
}

fn lower_piece(piece: &BrushPiece, depth: usize) -> Piece {
    match piece {
        BrushPiece::Text(s) => Piece::Text(s.clone()),
        BrushPiece::SingleQuotedText(s) => Piece::SingleQuoted(s.clone()),
        BrushPiece::AnsiCQuotedText(s) => Piece::AnsiC(s.clone()),
        BrushPiece::DoubleQuotedSequence(inner) => Piece::DoubleQuoted(lower_pieces(inner, depth)),
        BrushPiece::GettextDoubleQuotedSequence(inner) => {
            Piece::GettextDoubleQuoted(lower_pieces(inner, depth))
        }
        BrushPiece::TildeExpansion(t) => Piece::Tilde(match t {
            bw::TildeExpr::Home => Tilde::Home,
            bw::TildeExpr::UserHome(user) => Tilde::User(user.clone()),
            bw::TildeExpr::WorkingDir => Tilde::WorkingDirectory,
            bw::TildeExpr::OldWorkingDir => Tilde::OldWorkingDirectory,
            bw::TildeExpr::NthDirFromTopOfDirStack { n, plus_used } => Tilde::DirStackFromTop {
                n: *n,
                plus: *plus_used,
            },
            bw::TildeExpr::NthDirFromBottomOfDirStack { n } => Tilde::DirStackFromBottom { n: *n },
        }),
        BrushPiece::ParameterExpansion(expr) => Piece::Parameter(parameter::expansion(expr, depth)),
        BrushPiece::CommandSubstitution(body) => Piece::CommandSubstitution(body.clone()),
        BrushPiece::BackquotedCommandSubstitution(body) => {
            Piece::BackquotedSubstitution(body.clone())
        }
        BrushPiece::EscapeSequence(s) => Piece::Escape(s.clone()),
        BrushPiece::ArithmeticExpression(expr) => Piece::Arithmetic(expr.value.clone()),
    }
}

fn position(p: &SourcePosition) -> Position {
    Position::new(p.line, p.column)
}

fn start_of(node: &impl SourceLocation) -> Option<Position> {
    node.location().map(|span| position(&span.start))
}

struct Lowering<'a> {
    /// The text the AST was parsed from.
    text: &'a str,
}

impl Lowering<'_> {
    fn list(&self, list: &ast::CompoundList) -> Vec<Item> {
        list.0
            .iter()
            .map(|ast::CompoundListItem(and_or, separator)| Item {
                and_or: self.and_or(and_or),
                background: matches!(separator, ast::SeparatorOperator::Async)
                    .then(|| self.ampersand_after(and_or)),
            })
            .collect()
    }

    /// The position of the `&` that ends `and_or` (brush records none for separators): the
    /// first `&` after the list's end.
    fn ampersand_after(&self, and_or: &ast::AndOrList) -> Position {
        let end = and_or
            .location()
            .map_or(0, |span| char_to_byte(self.text, span.end.index));
        let end = end.min(self.text.len());
        let byte = self.text[end..].find('&').map_or(end, |i| end + i);
        Position::new(1, 1).advance(self.text.get(..byte).unwrap_or(self.text))
    }

    fn and_or(&self, list: &ast::AndOrList) -> AndOr {
        AndOr {
            first: self.pipeline(&list.first),
            rest: list
                .additional
                .iter()
                .map(|next| match next {
                    ast::AndOr::And(p) => (Connector::And, self.pipeline(p)),
                    ast::AndOr::Or(p) => (Connector::Or, self.pipeline(p)),
                })
                .collect(),
        }
    }

    fn pipeline(&self, pipeline: &ast::Pipeline) -> Pipeline {
        Pipeline {
            timed: pipeline
                .timed
                .as_ref()
                .map(|t| start_of(t).unwrap_or_default()),
            negated: pipeline.bang,
            commands: pipeline.seq.iter().map(|c| self.command(c)).collect(),
        }
    }

    fn command(&self, command: &ast::Command) -> Command {
        match command {
            ast::Command::Simple(simple) => Command::Simple(self.simple(simple)),
            ast::Command::Compound(compound, redirects) => {
                Command::Compound(self.compound_command(compound, redirects.as_ref()))
            }
            ast::Command::Function(f) => Command::Function(FunctionDefinition {
                name: self.word(&f.fname),
                body: self.compound_command(&f.body.0, f.body.1.as_ref()),
                at: start_of(&f.fname),
            }),
            ast::Command::ExtendedTest(test, redirects) => Command::Test(TestCommand {
                expr: self.test(&test.expr),
                redirects: self.redirects(redirects.as_ref()),
                at: position(&test.loc.start),
            }),
        }
    }

    fn redirects(&self, list: Option<&ast::RedirectList>) -> Vec<Redirect> {
        list.map(|l| l.0.iter().map(|r| self.redirect(r)).collect())
            .unwrap_or_default()
    }

    fn compound_command(
        &self,
        compound: &ast::CompoundCommand,
        redirects: Option<&ast::RedirectList>,
    ) -> CompoundCommand {
        CompoundCommand {
            body: self.compound(compound),
            redirects: self.redirects(redirects),
            at: start_of(compound),
        }
    }

    fn compound(&self, compound: &ast::CompoundCommand) -> Compound {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => Compound::Arithmetic(a.expr.value.clone()),
            C::ArithmeticForClause(f) => Compound::ArithmeticFor {
                init: f.initializer.as_ref().map(|e| e.value.clone()),
                condition: f.condition.as_ref().map(|e| e.value.clone()),
                update: f.updater.as_ref().map(|e| e.value.clone()),
                body: self.list(&f.body.list),
            },
            C::BraceGroup(b) => Compound::BraceGroup(self.list(&b.list)),
            C::Subshell(s) => Compound::Subshell(self.list(&s.list)),
            C::ForClause(f) => Compound::For {
                name: f.variable_name.clone(),
                values: f
                    .values
                    .as_ref()
                    .map(|values| values.iter().map(|w| self.word(w)).collect()),
                body: self.list(&f.body.list),
            },
            C::CaseClause(c) => Compound::Case {
                subject: self.word(&c.value),
                arms: c
                    .cases
                    .iter()
                    .map(|item| CaseArm {
                        patterns: item.patterns.iter().map(|w| self.word(w)).collect(),
                        body: item.cmd.as_ref().map(|l| self.list(l)).unwrap_or_default(),
                        next: match item.post_action {
                            ast::CaseItemPostAction::ExitCase => CaseNext::Stop,
                            ast::CaseItemPostAction::UnconditionallyExecuteNextCaseItem => {
                                CaseNext::FallThrough
                            }
                            ast::CaseItemPostAction::ContinueEvaluatingCases => CaseNext::TestNext,
                        },
                    })
                    .collect(),
            },
            C::IfClause(i) => Compound::If {
                condition: self.list(&i.condition),
                then: self.list(&i.then),
                elses: i
                    .elses
                    .iter()
                    .flatten()
                    .map(|e| ElseClause {
                        condition: e.condition.as_ref().map(|c| self.list(c)),
                        body: self.list(&e.body),
                    })
                    .collect(),
            },
            C::WhileClause(w) | C::UntilClause(w) => Compound::While {
                until: matches!(compound, C::UntilClause(_)),
                condition: self.list(&w.0),
                body: self.list(&w.1.list),
            },
            C::Coprocess(c) => Compound::Coprocess {
                name: c.name.as_ref().map(|w| self.word(w)),
                body: Box::new(self.command(&c.body)),
            },
        }
    }

    fn test(&self, expr: &ast::ExtendedTestExpr) -> TestExpr {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) => TestExpr::And(Box::new(self.test(a)), Box::new(self.test(b))),
            E::Or(a, b) => TestExpr::Or(Box::new(self.test(a)), Box::new(self.test(b))),
            E::Not(a) => TestExpr::Not(Box::new(self.test(a))),
            E::Parenthesized(a) => TestExpr::Parenthesized(Box::new(self.test(a))),
            E::UnaryTest(op, w) => TestExpr::Unary(unary_test(op), self.word(w)),
            E::BinaryTest(op, a, b) => {
                TestExpr::Binary(binary_test(op), self.word(a), self.word(b))
            }
        }
    }

    fn word(&self, w: &ast::Word) -> Word {
        word(&w.value, start_of(w))
    }

    fn simple(&self, simple: &ast::SimpleCommand) -> SimpleCommand {
        let items = |list: Option<&Vec<ast::CommandPrefixOrSuffixItem>>| -> Vec<CommandItem> {
            list.into_iter()
                .flatten()
                .map(|item| self.item(item))
                .collect()
        };
        SimpleCommand {
            prefix: items(simple.prefix.as_ref().map(|p| &p.0)),
            name: simple.word_or_name.as_ref().map(|w| self.word(w)),
            suffix: items(simple.suffix.as_ref().map(|s| &s.0)),
            at: start_of(simple),
        }
    }

    fn item(&self, item: &ast::CommandPrefixOrSuffixItem) -> CommandItem {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => CommandItem::Redirect(self.redirect(r)),
            I::Word(w) => CommandItem::Word(self.word(w)),
            I::AssignmentWord(assignment, w) => {
                CommandItem::Assignment(self.assignment(assignment, w))
            }
            I::ProcessSubstitution(kind, sub) => {
                CommandItem::ProcessSubstitution(self.process_substitution(kind, sub))
            }
        }
    }

    fn assignment(&self, assignment: &ast::Assignment, w: &ast::Word) -> Assignment {
        let whole = self.word(w);
        let (name, index) = match &assignment.name {
            ast::AssignmentName::VariableName(n) => (n.clone(), None),
            ast::AssignmentName::ArrayElementName(n, index) => (n.clone(), Some(index.clone())),
        };
        let value = match &assignment.value {
            ast::AssignmentValue::Scalar(value) => {
                // The value's own word has no location: it starts after the first `=` of the
                // whole word.
                let raw = w.value.as_str();
                let value_at = raw.find('=').map_or(raw.len(), |i| i + 1);
                let at = whole
                    .at
                    .map(|start| start.advance(raw.get(..value_at).unwrap_or(raw)));
                AssignmentValue::Scalar(word(&value.value, at))
            }
            ast::AssignmentValue::Array(items) => AssignmentValue::Array(
                items
                    .iter()
                    .map(|(k, v)| (k.as_ref().map(|k| k.value.clone()), self.word(v)))
                    .collect(),
            ),
        };
        Assignment {
            name,
            index,
            append: assignment.append,
            value,
            word: whole,
            at: position(&assignment.loc.start),
        }
    }

    fn process_substitution(
        &self,
        kind: &ast::ProcessSubstitutionKind,
        sub: &ast::SubshellCommand,
    ) -> ProcessSubstitution {
        // brush records where the `(` is; the construct starts at the `<` or `>` before it.
        let open = position(&sub.loc.start);
        ProcessSubstitution {
            kind: match kind {
                ast::ProcessSubstitutionKind::Read => ProcessKind::Read,
                ast::ProcessSubstitutionKind::Write => ProcessKind::Write,
            },
            body: self.list(&sub.list),
            shown: format!("{kind}({})", sub.list),
            at: Position::new(open.line, open.column.saturating_sub(1).max(1)),
        }
    }

    fn redirect(&self, r: &ast::IoRedirect) -> Redirect {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match r {
            R::File(fd, kind, target) => Redirect {
                fd: *fd,
                kind: RedirectKind::File {
                    op: match kind {
                        K::Read => FileOp::Read,
                        K::Write => FileOp::Write,
                        K::Append => FileOp::Append,
                        K::ReadAndWrite => FileOp::ReadWrite,
                        K::Clobber => FileOp::Clobber,
                        K::DuplicateInput => FileOp::DuplicateInput,
                        K::DuplicateOutput => FileOp::DuplicateOutput,
                    },
                    target: match target {
                        T::Filename(w) => RedirectTarget::File(self.word(w)),
                        T::Fd(n) => RedirectTarget::Fd(*n),
                        T::Duplicate(w) => RedirectTarget::Duplicate(self.word(w)),
                        T::ProcessSubstitution(kind, sub) => {
                            RedirectTarget::Process(self.process_substitution(kind, sub))
                        }
                    },
                },
            },
            R::HereDocument(fd, doc) => {
                let body = &doc.doc.value;
                let expanded = doc.requires_expansion && body.contains(['$', '`']);
                let pieces = if expanded {
                    pieces(body, true, 0)
                } else {
                    Ok(vec![WordPiece {
                        piece: Piece::Text(body.clone()),
                        start: 0,
                        end: body.len(),
                    }])
                };
                Redirect {
                    fd: *fd,
                    kind: RedirectKind::HereDocument(HereDocument {
                        remove_tabs: doc.remove_tabs,
                        expands: doc.requires_expansion,
                        delimiter: self.word(&doc.here_end),
                        body: Word {
                            raw: body.clone(),
                            at: start_of(&doc.doc),
                            pieces,
                        },
                    }),
                }
            }
            R::HereString(fd, w) => Redirect {
                fd: *fd,
                kind: RedirectKind::HereString(self.word(w)),
            },
            R::OutputAndError(w, append) => Redirect {
                fd: None,
                kind: RedirectKind::OutputAndError {
                    target: self.word(w),
                    append: *append,
                },
            },
        }
    }
}

fn unary_test(op: &ast::UnaryPredicate) -> UnaryTest {
    use ast::UnaryPredicate as U;
    match op {
        U::FileExists => UnaryTest::Exists,
        U::FileExistsAndIsBlockSpecialFile => UnaryTest::BlockSpecial,
        U::FileExistsAndIsCharSpecialFile => UnaryTest::CharSpecial,
        U::FileExistsAndIsDir => UnaryTest::Directory,
        U::FileExistsAndIsRegularFile => UnaryTest::RegularFile,
        U::FileExistsAndIsSetgid => UnaryTest::Setgid,
        U::FileExistsAndIsSymlink => UnaryTest::Symlink,
        U::FileExistsAndHasStickyBit => UnaryTest::Sticky,
        U::FileExistsAndIsFifo => UnaryTest::Fifo,
        U::FileExistsAndIsReadable => UnaryTest::Readable,
        U::FileExistsAndIsNotZeroLength => UnaryTest::NonEmptyFile,
        U::FdIsOpenTerminal => UnaryTest::Terminal,
        U::FileExistsAndIsSetuid => UnaryTest::Setuid,
        U::FileExistsAndIsWritable => UnaryTest::Writable,
        U::FileExistsAndIsExecutable => UnaryTest::Executable,
        U::FileExistsAndOwnedByEffectiveGroupId => UnaryTest::OwnedByGroup,
        U::FileExistsAndModifiedSinceLastRead => UnaryTest::ModifiedSinceRead,
        U::FileExistsAndOwnedByEffectiveUserId => UnaryTest::OwnedByUser,
        U::FileExistsAndIsSocket => UnaryTest::Socket,
        U::ShellOptionEnabled => UnaryTest::OptionEnabled,
        U::ShellVariableIsSetAndAssigned => UnaryTest::VariableSet,
        U::ShellVariableIsSetAndNameRef => UnaryTest::NameRef,
        U::StringHasZeroLength => UnaryTest::EmptyString,
        U::StringHasNonZeroLength => UnaryTest::NonEmptyString,
    }
}

fn binary_test(op: &ast::BinaryPredicate) -> BinaryTest {
    use ast::BinaryPredicate as B;
    match op {
        B::FilesReferToSameDeviceAndInodeNumbers => BinaryTest::SameFile,
        B::LeftFileIsNewerOrExistsWhenRightDoesNot => BinaryTest::Newer,
        B::LeftFileIsOlderOrDoesNotExistWhenRightDoes => BinaryTest::Older,
        B::StringExactlyMatchesPattern => BinaryTest::MatchesPattern,
        B::StringDoesNotExactlyMatchPattern => BinaryTest::DoesNotMatchPattern,
        B::StringMatchesRegex => BinaryTest::MatchesRegex,
        B::StringExactlyMatchesString => BinaryTest::EqualStrings,
        B::StringDoesNotExactlyMatchString => BinaryTest::NotEqualStrings,
        B::StringContainsSubstring => BinaryTest::ContainsSubstring,
        B::LeftSortsBeforeRight => BinaryTest::Before,
        B::LeftSortsAfterRight => BinaryTest::After,
        B::ArithmeticEqualTo => BinaryTest::ArithmeticEq,
        B::ArithmeticNotEqualTo => BinaryTest::ArithmeticNe,
        B::ArithmeticLessThan => BinaryTest::ArithmeticLt,
        B::ArithmeticLessThanOrEqualTo => BinaryTest::ArithmeticLe,
        B::ArithmeticGreaterThan => BinaryTest::ArithmeticGt,
        B::ArithmeticGreaterThanOrEqualTo => BinaryTest::ArithmeticGe,
    }
}

/// The byte offset of character `index` of `text` (its length when past the end).
fn char_to_byte(text: &str, index: usize) -> usize {
    text.char_indices()
        .nth(index)
        .map_or(text.len(), |(b, _)| b)
}

#[cfg(test)]
mod tests;
