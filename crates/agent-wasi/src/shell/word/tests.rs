//! Tests of `word.rs`.

use super::*;

fn parts(raw: &str) -> Vec<Part> {
    let origin = WordOrigin {
        raw,
        start: Position::new(1, 1),
    };
    compile(origin, &TreeWord::parse(raw, None).pieces, WordKind::Plain)
        .unwrap()
        .parts
        .into_iter()
        .filter(|p| !matches!(p, Part::Text { text, quoted: true } if text.is_empty()))
        .collect()
}

fn refused(raw: &str) -> (&'static str, Position) {
    let origin = WordOrigin {
        raw,
        start: Position::new(1, 1),
    };
    match compile(origin, &TreeWord::parse(raw, None).pieces, WordKind::Plain) {
        Err(ShellError::Unsupported {
            construct,
            position,
        }) => (construct, position),
        other => panic!("{raw}: {other:?}"),
    }
}

fn text(t: &str, quoted: bool) -> Part {
    Part::Text {
        text: t.to_owned(),
        quoted,
    }
}

#[test]
fn quoting() {
    assert_eq!(parts("abc"), [text("abc", false)]);
    assert_eq!(parts("'a b'"), [text("a b", true)]);
    assert_eq!(
        parts(r#""a\$b\"c\\d\ze""#),
        [
            text("a", true),
            text("$", true),
            text("b", true),
            text("\"", true),
            text("c", true),
            text("\\", true),
            text("d\\ze", true)
        ]
    );
    assert_eq!(
        parts("a\\ b"),
        [text("a", false), text(" ", true), text("b", false)]
    );
    assert_eq!(parts("$'a\\tb\\x41\\101'"), [text("a\tbAA", true)]);
    assert_eq!(parts("\"a\\\nb\""), [text("ab", true)]);
    assert_eq!(parts("$\"x\""), [text("x", true)]);
}

#[test]
fn globs_inside_quotes_are_literal() {
    assert_eq!(parts("*.txt"), [text("*.txt", false)]);
    assert_eq!(parts("\"*\".txt"), [text("*", true), text(".txt", false)]);
    assert_eq!(parts("'?'"), [text("?", true)]);
    assert_eq!(parts("\\*"), [text("*", true)]);
}

#[test]
fn variables() {
    let var = |name: &str, quoted| Part::Var {
        name: name.to_owned(),
        quoted,
    };
    assert_eq!(parts("$HOME"), [var("HOME", false)]);
    assert_eq!(parts("${A}b"), [var("A", false), text("b", false)]);
    assert_eq!(parts("\"$A\""), [var("A", true)]);
    assert_eq!(parts("$?"), [Part::Status { quoted: false }]);
    assert_eq!(parts("'$A'"), [text("$A", true)]);
    assert_eq!(parts("a$"), [text("a", false), text("$", false)]);
}

#[test]
fn refused_expansions_are_named_with_their_position() {
    for (raw, construct, column) in [
        ("a$(id)", "command substitution $(..)", 2),
        ("\"x `id`\"", "command substitution `..` (backquotes)", 4),
        (
            "$((x=1))",
            "assignment in arithmetic expansion $((..)) (write NAME=$((..)) instead of $((NAME=..)) or $((NAME++)), or use the command ((NAME++)))",
            1,
        ),
        ("a$(('1'))", super::arith::REFUSED, 2),
        ("$((1+$(ls)))", super::arith::REFUSED, 1),
        ("$[1+2]", "arithmetic expansion $[..]", 1),
        ("${x:-$(ls)}", "command substitution $(..)", 1),
        ("${x#`ls`}", "command substitution `..` (backquotes)", 1),
        ("${x:-${y:-$1}}", "positional parameter $1", 1),
        (
            "${x:-${a:-${a:-${a:-${a:-${a:-${a:-${a:-${a:-${a:-x}}}}}}}}}}",
            "parameter expansion nested more than 8 deep",
            1,
        ),
        ("${x:-~}", "tilde expansion (~)", 1),
        (
            "\"${x:-'a'}\"",
            "single quotes inside a double-quoted ${..}",
            2,
        ),
        (
            "${x^^[a]}",
            "case conversion of matching characters ${NAME^^PATTERN}",
            1,
        ),
        (
            "${x@Q}",
            "parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)",
            1,
        ),
        (
            "${?:-x}",
            "parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)",
            1,
        ),
        (
            "${x:-unclosed",
            "parameter expansion operator (${NAME:-..}, ${NAME#..}, ...)",
            1,
        ),
        ("${!x}", "indirect expansion ${!NAME}", 1),
        ("${a[1]}", "array", 1),
        ("x$1", "positional parameter $1", 2),
        ("$@", "positional parameters $@ / $*", 1),
        ("$$", "process id $$", 1),
        ("$#", "parameter count $#", 1),
        ("~/x", "tilde expansion (~)", 1),
        ("x=~", "tilde expansion (~)", 3),
        ("PATH=a:~/bin", "tilde expansion (~)", 8),
        ("a{b,c}", "brace expansion {a,b}", 2),
        ("{1..3}", "brace expansion {a,b}", 1),
        ("@(a|b)", "extended glob pattern (@(..), !(..), ...)", 2),
        (
            "$'\\xff'",
            "ANSI-C escape outside ASCII, \\0 or \\cX in $'..'",
            1,
        ),
    ] {
        assert_eq!(refused(raw), (construct, Position::new(1, column)), "{raw}");
    }
}

#[test]
fn literal_braces_and_dollars_stay() {
    assert_eq!(parts("{}"), [text("{}", false)]);
    assert_eq!(parts("{a}"), [text("{a}", false)]);
    assert_eq!(parts("'{a,b}'"), [text("{a,b}", true)]);
    assert_eq!(
        parts("{a\",\"b}"),
        [text("{a", false), text(",", true), text("b}", false)]
    );
    assert_eq!(parts("'$(id)'"), [text("$(id)", true)]);
}

#[test]
fn tildes_bash_leaves_alone_stay() {
    assert_eq!(parts("a~b"), [text("a~b", false)]);
    assert_eq!(parts("1x=~"), [text("1x=~", false)]);
    assert_eq!(parts("x='~'"), [text("x=", false), text("~", true)]);
    assert_eq!(parts("a:~"), [text("a:~", false)]);
    let origin = WordOrigin {
        raw: "a:~",
        start: Position::new(1, 1),
    };
    assert!(
        compile(
            origin,
            &TreeWord::parse(origin.raw, None).pieces,
            WordKind::Value
        )
        .is_err()
    );
}

#[test]
fn positions_follow_newlines() {
    let origin = WordOrigin {
        raw: "\"a\nbc$(x)\"",
        start: Position::new(3, 5),
    };
    assert_eq!(origin.at(5), Position::new(4, 3));
}
