//! Tests of `sed.rs` and `sed/`.

use super::parse::parse_script;
use super::script::{Addr, Addr2, Cmd};
use super::*;

fn sed(args: &[&str], input: &str) -> (String, i32) {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run(&args, &mut input.as_bytes(), &mut out, &mut err);
    (String::from_utf8_lossy(&out).into_owned(), code)
}

fn ok(args: &[&str], input: &str) -> String {
    let (o, c) = sed(args, input);
    assert_eq!(c, 0, "{args:?}");
    o
}

#[test]
fn substitute() {
    assert_eq!(ok(&["s/a/b/"], "aaa\n"), "baa\n");
    assert_eq!(ok(&["s/a/b/g"], "aaa\n"), "bbb\n");
    assert_eq!(ok(&["s/a/b/2"], "aaa\n"), "aba\n");
    assert_eq!(ok(&["s/a/b/2g"], "aaaa\n"), "abbb\n");
    assert_eq!(ok(&["s|/|:|g"], "/a/b\n"), ":a:b\n");
    assert_eq!(ok(&[r"s/\(a\)\(b\)/\2\1/"], "ab\n"), "ba\n");
    assert_eq!(ok(&["-E", r"s/(a)(b)/\2\1/"], "ab\n"), "ba\n");
    assert_eq!(ok(&["s/b/[&]/"], "abc\n"), "a[b]c\n");
    assert_eq!(ok(&[r"s/b/\&/"], "abc\n"), "a&c\n");
    assert_eq!(ok(&["s/x*/-/g"], "abc\n"), "-a-b-c-\n");
    assert_eq!(ok(&["s/b*/X/g"], "abc\n"), "XaXcX\n");
    assert_eq!(ok(&["s/A/x/I"], "a\n"), "x\n");
    assert_eq!(ok(&["-n", "s/a/x/p"], "a\nb\n"), "x\n");
    assert_eq!(ok(&[r"s/\(l\+\)/\U\1x\E!/"], "hello\n"), "heLLX!o\n");
    assert_eq!(ok(&[r"s/\w\+/\u&/g"], "ab cd\n"), "Ab Cd\n");
    assert_eq!(ok(&["s/[/]/X/"], "a/b\n"), "aXb\n");
    assert_eq!(ok(&[r"s/a/1\n2/"], "a\n"), "1\n2\n");
    assert_eq!(ok(&["N;s/a.b/X/"], "a\nb\n"), "X\n");
}

#[test]
fn addresses() {
    let five = "1\n2\n3\n4\n5\n";
    assert_eq!(ok(&["-n", "2p"], five), "2\n");
    assert_eq!(ok(&["-n", "$p"], five), "5\n");
    assert_eq!(ok(&["-n", "2,4p"], five), "2\n3\n4\n");
    assert_eq!(ok(&["-n", "2,1p"], five), "2\n");
    assert_eq!(ok(&["-n", "4,+1p"], five), "4\n5\n");
    assert_eq!(ok(&["-n", "/2/,/4/p"], five), "2\n3\n4\n");
    assert_eq!(ok(&["-n", "0~2p"], five), "2\n4\n");
    assert_eq!(ok(&["-n", "1~2p"], five), "1\n3\n5\n");
    assert_eq!(ok(&["2!d"], five), "2\n");
    assert_eq!(ok(&["2,4!d"], five), "2\n3\n4\n");
    assert_eq!(ok(&["0,/[0-9]/d"], five), "2\n3\n4\n5\n");
    assert_eq!(ok(&["1,/[0-9]/d"], five), "3\n4\n5\n");
    assert_eq!(ok(&["-n", "2,~4p"], five), "2\n3\n4\n");
    assert_eq!(ok(&["-n", r"\%3%p"], five), "3\n");
    assert_eq!(ok(&["-n", "/A/Ip"], "a\nb\n"), "a\n");
    assert_eq!(ok(&["/2/,$d"], five), "1\n");
}

#[test]
fn commands() {
    assert_eq!(ok(&["-n", "$="], "a\nb\n"), "2\n");
    assert_eq!(ok(&["="], "a\n"), "1\na\n");
    assert_eq!(ok(&["2q"], "a\nb\nc\n"), "a\nb\n");
    assert_eq!(sed(&["2q5"], "a\nb\nc\n"), ("a\nb\n".into(), 5));
    assert_eq!(ok(&["2Q"], "a\nb\nc\n"), "a\n");
    assert_eq!(ok(&["y/abc/xyz/"], "aabbcc\n"), "xxyyzz\n");
    assert_eq!(ok(&["$!N;P;D"], "a\nb\nc\n"), "a\nb\nc\n");
    assert_eq!(ok(&["n;d"], "a\n"), "a\n");
    assert_eq!(ok(&["n;d"], "1\n2\n3\n"), "1\n3\n");
    assert_eq!(ok(&["-n", "h;n;G;p"], "a\nb\n"), "b\na\n");
    assert_eq!(ok(&[":a;N;$!ba;s/\\n/,/g"], "a\nb\nc\n"), "a,b,c\n");
    assert_eq!(ok(&["-n", "/b/{p;p}"], "a\nb\n"), "b\nb\n");
    assert_eq!(ok(&["-n", "/b/{p;p;}"], "a\nb\n"), "b\nb\n");
    assert_eq!(ok(&["s/a/x/;ta;s/$/!/;:a"], "a\nb\n"), "x\nb!\n");
    assert_eq!(ok(&["s/a/x/;Ta;s/$/!/;:a"], "a\nb\n"), "x!\nb\n");
    assert_eq!(ok(&["-n", "l"], "a\tb\u{1}\n"), "a\\tb\\001$\n");
    assert_eq!(ok(&["z;s/^$/E/"], "abc\n"), "E\n");
    assert_eq!(ok(&["-n", ":a p"], "a\n"), "a\n");
    assert_eq!(ok(&[r"s/\x41/\x42\o103/"], "A\n"), "BC\n");
    assert_eq!(ok(&["c\\"], "a\n"), "");
    assert_eq!(sed(&["1{p}p"], "a\n").1, 1);
}

#[test]
fn text_commands() {
    assert_eq!(ok(&["a foo"], "x\n"), "x\nfoo\n");
    assert_eq!(ok(&["a\\  foo"], "x\n"), "x\n  foo\n");
    assert_eq!(ok(&["a\\\n  foo"], "x\n"), "x\n  foo\n");
    assert_eq!(ok(&["1i\\\nhead"], "x\ny\n"), "head\nx\ny\n");
    assert_eq!(ok(&["2c\\\nnew"], "x\ny\nz\n"), "x\nnew\nz\n");
    assert_eq!(ok(&["1,2c\\\nnew"], "x\ny\nz\n"), "new\nz\n");
    assert_eq!(ok(&["$a end"], "x\ny\n"), "x\ny\nend\n");
    assert_eq!(ok(&["-e", "a\\", "-e", "two"], "x\n"), "x\ntwo\n");
    assert_eq!(ok(&["a one\\\ntwo"], "x\n"), "x\none\ntwo\n");
}

#[test]
fn newline_handling() {
    assert_eq!(ok(&["p"], "a"), "a\na");
    assert_eq!(ok(&["s/a/b/"], "a"), "b");
    assert_eq!(ok(&["$a end"], "a"), "a\nend\n");
    assert_eq!(ok(&[""], ""), "");
}

#[test]
fn script_errors() {
    for bad in [
        "s/a/b",
        "k",
        "s/a/b/x",
        "p x",
        "{p",
        "}",
        "b nolabel",
        r"s/\(a\)/\2/",
        "y/ab/c/",
    ] {
        assert_eq!(sed(&[bad], "a\n").1, 1, "{bad}");
    }
    assert_eq!(sed(&[], "").1, 1);
}

#[test]
fn parse_addresses_and_negation() {
    let p = parse_script(b"1,/x/!{s/a/b/g;p}\n$d", Syntax::Basic, false).unwrap();
    assert_eq!(p.cmds.len(), 5);
    assert!(p.cmds[0].negate);
    assert!(matches!(p.cmds[0].a1, Some(Addr::Line(1))));
    assert!(matches!(p.cmds[0].a2, Some(Addr2::Re(Some(0)))));
    assert!(matches!(p.cmds[0].cmd, Cmd::Block(3)));
    assert!(matches!(p.cmds[4].a1, Some(Addr::Last)));
    assert!(parse_script(b"0p", Syntax::Basic, false).is_err());
    assert!(parse_script(b"1!!p", Syntax::Basic, false).is_err());
}
