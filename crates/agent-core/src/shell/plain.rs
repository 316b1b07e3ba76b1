//! The fast path for plain scripts: simple commands joined by `;`, `&&`, `||` and `|`, whose
//! words are plain characters and quoted strings that expand nothing.
//!
//! Most commands an agent runs look like `git status && cargo build --release | grep warning`.
//! brush-parser spends about 20 µs on such a line (a backtracking PEG over its tokens, trying
//! every word as an assignment); this lexer builds the same lowered tree (positions included)
//! in about 1 µs, and the walker and the WASI shell then treat it exactly like brush's own. It accepts a deliberately small language and
//! returns `None` for anything else, which then goes to brush-parser:
//!
//! - unquoted bytes: ASCII letters, digits and `- _ . / = : , + % @ ^`;
//! - `'...'` and `"..."` holding printable ASCII only, and for `"..."` none of `$`, `` ` ``, `\`
//!   and `!` (nothing that expands or escapes);
//! - separators: spaces, tabs, `;`, `&&`, `||`, `|` (not `&`, `;;`, `|&`, newlines);
//! - no empty command, no reserved word anywhere (`if`, `done`, `time`, `in`, ...), and no `=`
//!   in a command name (so there are no assignments).
//!
//! A differential property test (`plain_scripts_match_brush` below) and the `shell_differential`
//! fuzz target check that every script accepted here gives the same [`super::ParsedScript`]
//! and the same [`super::tree::Script`] as brush-parser.

use super::lower;
use super::tree::{
    AndOr, Assignment, AssignmentValue, Command, CommandItem, Connector, Item, Pipeline, Position,
    Script, SimpleCommand,
};

/// Reserved words of bash (as command names they change the grammar; they are refused in any
/// position, which costs nothing but speed).
const RESERVED: &[&str] = &[
    "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while", "{", "}", "[[", "]]",
];

#[derive(Clone, Copy)]
enum Token<'a> {
    /// A word and the byte offset where it starts (a plain script is one line of ASCII, so
    /// the offset is also its column, less one, and its character index).
    Word(&'a str, usize),
    Semi,
    And,
    Or,
    Pipe,
}

/// The lowered tree of `text` when it is a plain script, or `None` to let brush-parser decide.
pub(super) fn parse(text: &str) -> Option<Script> {
    let tokens = tokenize(text)?;
    let mut items = Vec::new();
    let mut words: Vec<(&str, usize)> = Vec::new();
    let mut pipeline: Vec<Command> = Vec::new();
    let mut first: Option<Pipeline> = None;
    let mut rest: Vec<(Connector, Pipeline)> = Vec::new();
    let mut joiner = Token::Semi;
    let connector = |joiner: Token<'_>| match joiner {
        Token::Or => Connector::Or,
        _ => Connector::And,
    };
    for token in tokens {
        match token {
            Token::Word(w, at) => {
                words.push((w, at));
                continue;
            }
            Token::Pipe => pipeline.push(simple(&mut words)?),
            Token::And | Token::Or | Token::Semi => {
                pipeline.push(simple(&mut words)?);
                let p = plain_pipeline(std::mem::take(&mut pipeline));
                match &first {
                    None => first = Some(p),
                    Some(_) => rest.push((connector(joiner), p)),
                }
                if matches!(token, Token::Semi) {
                    let first = first.take()?;
                    items.push(Item {
                        and_or: AndOr {
                            first,
                            rest: std::mem::take(&mut rest),
                        },
                        background: None,
                    });
                }
                joiner = token;
            }
        }
    }
    if words.is_empty() {
        // Only `cmd;` may end without a command.
        if !matches!(joiner, Token::Semi) || !pipeline.is_empty() || items.is_empty() {
            return None;
        }
    } else {
        pipeline.push(simple(&mut words)?);
        let p = plain_pipeline(pipeline);
        let and_or = match first {
            None => AndOr { first: p, rest },
            Some(first) => {
                rest.push((connector(joiner), p));
                AndOr { first, rest }
            }
        };
        items.push(Item {
            and_or,
            background: None,
        });
    }
    Some(Script { items })
}

fn plain_pipeline(commands: Vec<Command>) -> Pipeline {
    Pipeline {
        timed: None,
        negated: false,
        commands,
    }
}

/// One simple command from the words collected so far (which are taken).
fn simple(words: &mut Vec<(&str, usize)>) -> Option<Command> {
    let (name, rest) = words.split_first()?;
    if name.0.contains('=') || words.iter().any(|(w, _)| is_reserved(w)) {
        return None;
    }
    // A plain script is one line of ASCII: a byte offset is a column, less one.
    let position = |at: usize| Position::new(1, at + 1);
    let word = |&(w, at): &(&str, usize)| lower::word(w, Some(position(at)));
    // An argument shaped `NAME=value` / `NAME+=value` is an assignment word to brush (`env
    // A=1`, `make CC=cc`), as in bash's grammar.
    let item = |w: &(&str, usize)| match assignment_shape(w.0) {
        Some((name, append, value)) => {
            let value_at = w.0.len() - value.len();
            CommandItem::Assignment(Assignment {
                name: name.to_owned(),
                index: None,
                append,
                value: AssignmentValue::Scalar(lower::word(value, Some(position(w.1 + value_at)))),
                word: word(w),
                at: position(w.1),
            })
        }
        None => CommandItem::Word(word(w)),
    };
    let command = SimpleCommand {
        prefix: Vec::new(),
        name: Some(word(name)),
        suffix: rest.iter().map(item).collect(),
        at: Some(position(name.1)),
    };
    words.clear();
    Some(Command::Simple(command))
}

/// `NAME=value` or `NAME+=value` with an unquoted name: the name, whether it appends, and the
/// value as written.
fn assignment_shape(raw: &str) -> Option<(&str, bool, &str)> {
    let eq = raw.find('=')?;
    let (name, append) = match raw[..eq].strip_suffix('+') {
        Some(name) => (name, true),
        None => (&raw[..eq], false),
    };
    super::runtime_eval::is_identifier(name).then(|| (name, append, &raw[eq + 1..]))
}

/// Whether `raw`, quotes removed, is a reserved word (a quoted one is not reserved in bash, but
/// this path leaves every such case to brush-parser).
fn is_reserved(raw: &str) -> bool {
    if raw.contains(['\'', '"']) {
        let bare: String = raw.chars().filter(|c| !matches!(c, '\'' | '"')).collect();
        RESERVED.contains(&bare.as_str())
    } else {
        RESERVED.contains(&raw)
    }
}

fn is_plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_' | b'.' | b'/' | b'=' | b':' | b',' | b'+' | b'%' | b'@' | b'^'
        )
}

fn tokenize(text: &str) -> Option<Vec<Token<'_>>> {
    let b = text.as_bytes();
    let mut tokens = Vec::with_capacity(16);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' => i += 1,
            b';' => {
                if matches!(b.get(i + 1), Some(b';' | b'&')) {
                    return None;
                }
                tokens.push(Token::Semi);
                i += 1;
            }
            b'&' => {
                if b.get(i + 1) != Some(&b'&') {
                    return None;
                }
                tokens.push(Token::And);
                i += 2;
            }
            b'|' => match b.get(i + 1) {
                Some(b'|') => {
                    tokens.push(Token::Or);
                    i += 2;
                }
                Some(b'&') => return None,
                _ => {
                    tokens.push(Token::Pipe);
                    i += 1;
                }
            },
            _ => {
                let start = i;
                while i < b.len() {
                    match b[i] {
                        b' ' | b'\t' | b';' | b'&' | b'|' => break,
                        b'\'' => {
                            i = closing(b, i, b'\'', |c| c == b'\t' || (b' '..=b'~').contains(&c))?
                        }
                        b'"' => {
                            i = closing(b, i, b'"', |c| {
                                (c == b'\t' || (b' '..=b'~').contains(&c))
                                    && !matches!(c, b'$' | b'`' | b'\\' | b'!')
                            })?;
                        }
                        c if is_plain_byte(c) => i += 1,
                        _ => return None,
                    }
                }
                tokens.push(Token::Word(text.get(start..i)?, start));
            }
        }
    }
    Some(tokens)
}

/// The index after the quote that closes the one at `open`, if every byte between passes `ok`.
fn closing(b: &[u8], open: usize, quote: u8, ok: impl Fn(u8) -> bool) -> Option<usize> {
    let mut j = open + 1;
    loop {
        let c = *b.get(j)?;
        if c == quote {
            return Some(j + 1);
        }
        if !ok(c) {
            return None;
        }
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(text: &str) -> bool {
        parse(text).is_some()
    }

    #[test]
    fn accepts_the_common_shapes() {
        for t in [
            "git status",
            "git status && cargo build --release | grep warning; npm run lint && ls -la src",
            "a||b",
            "a;b;",
            "git commit -m \"fix the parser (again)\"",
            "grep -n 'fn main' src/main.rs",
            "cargo test -p agent-core -- --nocapture",
            "ls a\"b c\"d",
            "echo x=y",
        ] {
            assert!(accepted(t), "{t}");
        }
    }

    #[test]
    fn leaves_everything_else_to_brush() {
        for t in [
            "",
            " ",
            ";",
            "a;;b",
            "a &",
            "a |& b",
            "a &&",
            "| a",
            "a\nb",
            "x=1 cmd",
            "if true",
            "echo done",
            "echo \"$HOME\"",
            "echo \"a\\b\"",
            "echo 'unclosed",
            "echo $(x)",
            "echo `x`",
            "ls *.rs",
            "ls ~",
            "cat < f",
            "echo > f",
            "(a)",
            "{ a; }",
            "echo # c",
            "echo 'é'",
            "echo \"hi!\"",
            "a; ; b",
        ] {
            assert!(!accepted(t), "{t:?} should go to brush-parser");
        }
    }

    use proptest::prelude::*;

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z][a-z0-9_.-]{0,6}",
            2 => "-{1,2}[a-z]{1,5}(=[a-z0-9/]{1,4})?",
            1 => "[./~]{0,2}[a-z/]{1,8}",
            1 => "'[ -&(-~]{0,8}'",
            1 => "\"[ -~]{0,8}\"",
            1 => "[a-z]{1,3}\"[a-z ]{0,4}\"[a-z]{0,3}",
            1 => prop::sample::select(vec![
                "rm", "bash", "sh", "-c", "-lc", "sudo", "env", "xargs", "find", "-exec", "eval",
                "exec", "command", "nohup", "timeout", "10", "x=1", "if", "done", "in", "time",
                "!", "{", "}", "'rm x'", "\"rm -rf /\"", "'ls; rm y'", "'a && b | c'", "%1", "^x",
                "@a", "a,b", "+x", ":", ".", "--",
            ]).prop_map(str::to_owned),
        ]
    }

    fn separator() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            " ", " ", " ", " ", " ", " ", "  ", "\t", ";", " ; ", "&&", " && ", "||", " || ", "|",
            " | ", ";;", " & ", "|&", "\n", "; ;",
        ])
    }

    fn script() -> impl Strategy<Value = String> {
        (
            word(),
            prop::collection::vec((separator(), word()), 0..10),
            prop::option::of(separator()),
        )
            .prop_map(|(first, rest, end)| {
                let mut s = first;
                for (sep, w) in rest {
                    s.push_str(sep);
                    s.push_str(&w);
                }
                s.push_str(end.unwrap_or(""));
                s
            })
    }

    fn check_same(text: &str) -> Result<(), TestCaseError> {
        if parse(text).is_some() {
            let fast = crate::shell::parse(text);
            let brush = crate::shell::parse_with_brush_only(text);
            prop_assert_eq!(fast, brush, "{:?}", text);
            // The lowered tree too, positions included.
            let fast = crate::shell::parse_script(text);
            let brush = crate::shell::parse_script_with_brush_only(text);
            prop_assert_eq!(fast, brush, "{:?}", text);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Every script the fast path accepts parses to exactly what brush-parser gives.
        #[test]
        fn plain_scripts_match_brush(text in script()) {
            check_same(&text)?;
        }

        /// The same over arbitrary text from the characters that matter to a shell.
        #[test]
        fn shell_characters_match_brush(text in "[a-c=;&| '\"$`\\\\!#~*(){}<>\t\n^%@,.:+/-]{0,24}") {
            check_same(&text)?;
        }
    }

    /// The property above is not vacuous: scripts of plain words and operators take the fast
    /// path, nested shell strings included.
    #[test]
    fn the_fast_path_is_taken_and_agrees() {
        for t in [
            "ls -la && git status | head -n 5; echo done-ish",
            "bash -c 'rm -rf x && ls' || sudo rm y",
            "find . -name x -exec rm -f x ';' | xargs rm",
            "env A=1 rm x; command rm y; nohup rm z",
            "git commit -m \"a (b) 'c'\" && echo ok",
        ] {
            assert!(accepted(t), "{t}");
            assert_eq!(
                crate::shell::parse(t),
                crate::shell::parse_with_brush_only(t),
                "{t}"
            );
            assert_eq!(
                crate::shell::parse_script(t),
                crate::shell::parse_script_with_brush_only(t),
                "{t}"
            );
        }
    }
}
