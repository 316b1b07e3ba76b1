//! Tests of `grep.rs` and `grep/`.

use super::*;

fn grep(args: &[&str], input: &str) -> (String, i32) {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run(&args, &mut input.as_bytes(), &mut out, &mut err);
    (String::from_utf8_lossy(&out).into_owned(), code)
}

#[test]
fn basic_flags() {
    let input = "apple\nBanana\ncherry\n";
    assert_eq!(grep(&["an"], input), ("Banana\n".into(), 0));
    assert_eq!(grep(&["-i", "b"], input), ("Banana\n".into(), 0));
    assert_eq!(grep(&["-v", "an"], input), ("apple\ncherry\n".into(), 0));
    assert_eq!(grep(&["-c", "a"], input), ("2\n".into(), 0));
    assert_eq!(grep(&["-n", "rr"], input), ("3:cherry\n".into(), 0));
    assert_eq!(grep(&["zz"], input), (String::new(), 1));
    assert_eq!(grep(&["-q", "a"], input), (String::new(), 0));
    assert_eq!(grep(&["-x", "apple"], input), ("apple\n".into(), 0));
    assert_eq!(grep(&["-x", "appl"], input), (String::new(), 1));
}

#[test]
fn patterns_and_dialects() {
    let input = "a+b\naab\nab\n";
    assert_eq!(grep(&["a+b"], input), ("a+b\n".into(), 0));
    assert_eq!(grep(&["-E", "^a+b$"], input), ("aab\nab\n".into(), 0));
    assert_eq!(grep(&["-F", "a+b"], input), ("a+b\n".into(), 0));
    assert_eq!(
        grep(&["-e", "a+", "-e", "aa"], input),
        ("a+b\naab\n".into(), 0)
    );
    assert_eq!(grep(&["-o", "-E", "a+"], "xaay\n"), ("aa\n".into(), 0));
    assert_eq!(grep(&["a\\{2\\}"], input), ("aab\n".into(), 0));
}

#[test]
fn words() {
    assert_eq!(grep(&["-w", "is"], "this\nis it\n"), ("is it\n".into(), 0));
    assert_eq!(grep(&["-w", "-o", "ab"], "abc ab\n"), ("ab\n".into(), 0));
    assert_eq!(grep(&["-w", "@a"], "x@a b\n"), (String::new(), 1));
    assert_eq!(grep(&["-w", "@a"], "x @a b\n"), ("x @a b\n".into(), 0));
}

#[test]
fn context() {
    let input = "a\nb\nc\nd\ne\nf\ng\n";
    assert_eq!(
        grep(&["-n", "-C1", "-e", "b", "-e", "f"], input).0,
        "1-a\n2:b\n3-c\n--\n5-e\n6:f\n7-g\n"
    );
    assert_eq!(grep(&["-A1", "-e", "b", "-e", "c"], input).0, "b\nc\nd\n");
    assert_eq!(grep(&["-m1", "-A2", "b"], input).0, "b\nc\nd\n");
    assert_eq!(
        grep(&["-n", "-m1", "-A2", "a"], "a\na\nb\nc\n").0,
        "1:a\n2-a\n3-b\n"
    );
    assert_eq!(grep(&["-b", "c"], "ab\ncd\n").0, "3:cd\n");
    assert_eq!(grep(&["-ob", "b"], "ab\n").0, "1:b\n");
    assert_eq!(grep(&["-B1", "d"], input).0, "c\nd\n");
}

#[test]
fn errors_and_usage() {
    assert_eq!(grep(&[], "").1, 2);
    assert_eq!(grep(&["-k", "x"], "").1, 2);
    assert_eq!(grep(&["\\(x"], "").1, 2);
    assert_eq!(grep(&["x", "/nonexistent/file"], "").1, 2);
    assert_eq!(grep(&["-s", "-q", "x", "-", "/nonexistent"], "x\n").1, 0);
}

#[test]
fn no_trailing_newline_and_empty() {
    assert_eq!(grep(&["b"], "a\nb"), ("b\n".into(), 0));
    assert_eq!(grep(&["-c", "x"], ""), ("0\n".into(), 1));
    assert_eq!(grep(&[""], "a\n\n"), ("a\n\n".into(), 0));
}
