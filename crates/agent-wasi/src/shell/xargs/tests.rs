//! Tests of `xargs.rs`.

#![allow(clippy::unwrap_used, reason = "tests")]

use super::*;

/// Runs xargs over `input`; the command lines it ran and its status, its stderr.
fn run(
    args: &[&str],
    input: &str,
    status: impl Fn(&[String]) -> Ran,
) -> (Vec<Vec<String>>, i32, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let mut input = input.as_bytes();
    let mut stderr = Vec::new();
    let mut ran = Vec::new();
    let open = |path: &str| -> Result<Box<dyn Read>, String> {
        match path {
            "list" => Ok(Box::new(&b"f1 f2\n"[..])),
            _ => Err(format!(
                "Cannot open input file '{path}': No such file or directory"
            )),
        }
    };
    let mut runner = |argv: Vec<String>| {
        let s = status(&argv);
        ran.push(argv);
        s
    };
    let code = xargs(
        &args,
        Io {
            input: &mut input,
            stderr: &mut stderr,
            open: &open,
            run: &mut runner,
            cancelled: &|| false,
        },
    );
    (ran, code, String::from_utf8(stderr).unwrap())
}

fn ok(_: &[String]) -> Ran {
    Ran::Status(0)
}

fn lines(ran: &[Vec<String>]) -> Vec<String> {
    ran.iter().map(|a| a.join(" ")).collect()
}

#[test]
fn blanks_quotes_and_backslashes() {
    let (ran, code, _) = run(&["printf", "[%s]"], "'' a \"b c\" d\\ e\n f", ok);
    assert_eq!(code, 0);
    assert_eq!(
        ran,
        vec![vec!["printf", "[%s]", "", "a", "b c", "d e", "f"]]
    );
    let (ran, _, _) = run(&[], "a\\\\b \"c\\d\"", ok);
    assert_eq!(ran, vec![vec!["echo", "a\\b", "c\\d"]]);
}

#[test]
fn an_unmatched_quote_runs_what_came_before_then_fails() {
    let (ran, code, err) = run(&["echo"], "a 'b\n", ok);
    assert_eq!(ran, vec![vec!["echo", "a"]]);
    assert_eq!(code, 1);
    assert!(err.starts_with("xargs: unmatched single quote;"), "{err}");
}

#[test]
fn null_and_delimiter_items_are_literal() {
    let (ran, _, _) = run(&["-0", "p"], "a\0\0b 'c", ok);
    assert_eq!(ran, vec![vec!["p", "a", "", "b 'c"]]);
    let (ran, _, _) = run(&["-d,", "p"], "a,,b\n", ok);
    assert_eq!(ran, vec![vec!["p", "a", "", "b\n"]]);
    let (ran, _, _) = run(&["-d", "\\n", "p"], "a b\nc\n", ok);
    assert_eq!(ran, vec![vec!["p", "a b", "c"]]);
}

#[test]
fn max_args_lines_and_replace() {
    let (ran, _, _) = run(&["-n2", "echo"], "1 2 3 4 5", ok);
    assert_eq!(lines(&ran), ["echo 1 2", "echo 3 4", "echo 5"]);
    let (ran, _, _) = run(&["-L", "1", "p"], "a b\nc\n\n  \nd e f\n", ok);
    assert_eq!(lines(&ran), ["p a b", "p c", "p d e f"]);
    let (ran, _, _) = run(&["-L2", "p"], "a b\nc\nd\n", ok);
    assert_eq!(lines(&ran), ["p a b c", "p d"]);
    let (ran, _, _) = run(&["-I{}", "p", "[{}-{}]"], "  a b  \n\nc\n", ok);
    assert_eq!(ran, vec![vec!["p", "[a b  -a b  ]"], vec!["p", "[c-c]"]]);
    let (ran, _, _) = run(&["-i", "p", "<{}>"], "x\n", ok);
    assert_eq!(lines(&ran), ["p <x>"]);
    let (ran, _, _) = run(&["--max-args=1", "--", "p"], "x y", ok);
    assert_eq!(lines(&ran), ["p x", "p y"]);
}

#[test]
fn empty_input_runs_once_unless_r_or_replace() {
    let (ran, _, _) = run(&["echo", "x"], "", ok);
    assert_eq!(lines(&ran), ["echo x"]);
    let (ran, _, _) = run(&["-r", "echo", "x"], " \n", ok);
    assert!(ran.is_empty());
    let (ran, _, _) = run(&["-I", "{}", "echo", "{}"], "", ok);
    assert!(ran.is_empty());
}

#[test]
fn statuses_as_gnu() {
    let (_, code, _) = run(&["sh"], "x", |_| Ran::Status(3));
    assert_eq!(code, 123);
    let (ran, code, err) = run(&["-n1", "sh"], "x y", |_| Ran::Status(255));
    assert_eq!((ran.len(), code), (1, 124));
    assert_eq!(err, "xargs: sh: exited with status 255; aborting\n");
    let (_, code, err) = run(&["nosuch"], "x", |_| Ran::NotFound);
    assert_eq!(code, 127);
    assert_eq!(err, "xargs: nosuch: No such file or directory\n");
    let (ran, code, _) = run(&["-n1", "big"], "x y", |_| Ran::Status(137));
    assert_eq!((ran.len(), code), (1, 125));
    let (_, code, _) = run(&["-n1", "c"], "x y", |a| {
        Ran::Status(if a[1] == "x" { 1 } else { 0 })
    });
    assert_eq!(code, 123);
}

#[test]
fn eof_string_trace_and_arg_file() {
    let (ran, _, _) = run(&["-E", "END", "echo"], "a b END c", ok);
    assert_eq!(lines(&ran), ["echo a b"]);
    let (ran, _, _) = run(&["-E", "END", "echo"], "a 'END' c", ok);
    assert_eq!(lines(&ran), ["echo a END c"]);
    let (_, _, err) = run(&["-t", "echo"], "a b", ok);
    assert_eq!(err, "echo a b\n");
    let (ran, _, _) = run(&["-a", "list", "cat"], "ignored", ok);
    assert_eq!(lines(&ran), ["cat f1 f2"]);
    let (ran, code, err) = run(&["-a", "nope", "cat"], "", ok);
    assert!(ran.is_empty());
    assert_eq!(code, 1);
    assert!(err.contains("Cannot open input file 'nope'"), "{err}");
}

#[test]
fn max_chars_splits_and_x_refuses() {
    // "echo" + NUL = 5; each item 2.
    let (ran, _, _) = run(&["-s", "9", "echo"], "a b c d e", ok);
    assert_eq!(lines(&ran), ["echo a b", "echo c d", "echo e"]);
    let (ran, code, err) = run(&["-s", "6", "echo"], "abc", ok);
    assert!(ran.is_empty());
    assert_eq!(code, 1);
    assert_eq!(err, "xargs: argument line too long\n");
}

/// An item longer than any command line could hold ends xargs with GNU's message, before
/// it grows further (it was kept whole in the host's memory, of any size).
#[test]
fn an_item_too_long_for_any_command_line_stops_xargs() {
    let huge = "a".repeat(DEFAULT_MAX_CHARS + 10);
    let (ran, code, err) = run(&["echo"], &format!("x {huge} y"), ok);
    assert_eq!(lines(&ran), ["echo x"]);
    assert_eq!(code, 1);
    assert_eq!(err, "xargs: argument line too long\n");
    for args in [
        &["-0", "echo"][..],
        &["-d", ",", "echo"],
        &["-I", "{}", "echo", "{}"],
    ] {
        let (ran, code, err) = run(args, &huge, ok);
        assert!(ran.is_empty(), "{args:?}");
        assert_eq!((code, err.as_str()), (1, "xargs: argument line too long\n"));
    }
    // A larger -s lets a larger item through, up to the system's own limit.
    let s = (DEFAULT_MAX_CHARS + 100).to_string();
    let (ran, code, _) = run(&["-s", &s, "echo"], &huge, ok);
    assert_eq!((ran.len(), code), (1, 0));
    let big = "b".repeat(MAX_ITEM_BYTES + 1);
    let (ran, code, _) = run(&["-s", "99999999", "echo"], &big, ok);
    assert_eq!((ran.len(), code), (0, 1));
}

#[test]
fn long_options_abbreviate_and_optional_values_are_only_attached() {
    let (ran, code, _) = run(&["--max-a", "1", "echo"], "a b", ok);
    assert_eq!(lines(&ran), ["echo a", "echo b"]);
    assert_eq!(code, 0);
    // `--replace` takes no next word: `echo` is the command, `{}` the replace string.
    let (ran, _, _) = run(&["--replace", "echo", "<{}>"], "a\nb", ok);
    assert_eq!(lines(&ran), ["echo <a>", "echo <b>"]);
    let (ran, _, _) = run(&["--replace=%", "echo", "<%>"], "a", ok);
    assert_eq!(lines(&ran), ["echo <a>"]);
    // GNU: `-n1` after `-I` changes nothing; `-n2` turns the replacement off.
    let (ran, _, _) = run(&["-I{}", "-n1", "echo", "<{}>"], "a b", ok);
    assert_eq!(lines(&ran), ["echo <a b>"]);
    let (ran, _, _) = run(&["-I{}", "-n2", "echo", "<{}>"], "a b", ok);
    assert_eq!(lines(&ran), ["echo <{}> a b"]);
}

#[test]
fn bad_options_are_usage_errors() {
    for (args, message) in [
        (&["-z"][..], "xargs: invalid option -- 'z'"),
        (&["-n"][..], "xargs: option requires an argument -- 'n'"),
        (
            &["-n", "0"][..],
            "xargs: value 0 for -n option should be >= 1",
        ),
        (
            &["-n", "x"][..],
            "xargs: invalid number \"x\" for -n option",
        ),
        (&["--bogus"][..], "xargs: unrecognized option '--bogus'"),
        (
            &["--max", "1", "echo"][..],
            "xargs: option '--max' is ambiguous; possibilities: '--max-lines' '--max-args' '--max-chars' '--max-procs'\nTry 'xargs --help' for more information.",
        ),
        (
            &["--e", "echo"][..],
            "xargs: option '--e' is ambiguous; possibilities: '--eof' '--exit'",
        ),
        (
            &["-d", "ab"][..],
            "xargs: invalid input delimiter specification ab",
        ),
        (&["-p"][..], "xargs: --interactive is not supported here"),
    ] {
        let (ran, code, err) = run(args, "x", ok);
        assert!(ran.is_empty(), "{args:?}");
        assert_eq!(code, 1, "{args:?}");
        assert!(err.starts_with(message), "{args:?}: {err}");
    }
}

#[test]
fn delimiter_escapes() {
    assert_eq!(delimiter("\\n").unwrap(), b'\n');
    assert_eq!(delimiter("\\0").unwrap(), 0);
    assert_eq!(delimiter("\\x41").unwrap(), b'A');
    assert_eq!(delimiter("\\101").unwrap(), b'A');
    assert_eq!(delimiter(":").unwrap(), b':');
    assert!(delimiter("\\q").is_err());
}
