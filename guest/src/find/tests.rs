//! Tests of `find.rs` and `find/`.

use super::expr::{Cmp, Expr};
use super::parse::{PResult, emacs_to_bre, parse_expression};
use super::*;
use std::fs;

fn parse(args: &[&str]) -> PResult<(Expr, bool)> {
    let toks: Vec<OsString> = args.iter().map(OsString::from).collect();
    let p = parse_expression(&toks, Follow::Never)?;
    Ok((p.expr, p.has_action))
}

/// Renders the tree shape for precedence checks.
fn shape(e: &Expr) -> String {
    match e {
        Expr::And(a, b) => format!("(and {} {})", shape(a), shape(b)),
        Expr::Or(a, b) => format!("(or {} {})", shape(a), shape(b)),
        Expr::Comma(a, b) => format!("(, {} {})", shape(a), shape(b)),
        Expr::Not(a) => format!("(not {})", shape(a)),
        Expr::Name(p, _) => String::from_utf8_lossy(p).into_owned(),
        Expr::Print => "print".into(),
        Expr::Prune => "prune".into(),
        Expr::Type(t) => format!("type:{}", String::from_utf8_lossy(t)),
        Expr::True => "true".into(),
        Expr::False => "false".into(),
        _ => "?".into(),
    }
}

#[test]
fn precedence() {
    let (e, _) = parse(&["-name", "a", "-o", "-name", "b", "-type", "f"]).unwrap();
    assert_eq!(shape(&e), "(or a (and b type:f))");
    let (e, _) = parse(&["!", "-name", "a", "-name", "b"]).unwrap();
    assert_eq!(shape(&e), "(and (not a) b)");
    let (e, _) = parse(&["(", "-name", "a", "-o", "-name", "b", ")", "-type", "d"]).unwrap();
    assert_eq!(shape(&e), "(and (or a b) type:d)");
    let (e, _) = parse(&["-name", "a", ",", "-name", "b", "-o", "-name", "c"]).unwrap();
    assert_eq!(shape(&e), "(, a (or b c))");
    let (e, has) = parse(&["-name", "x", "-prune", "-o", "-print"]).unwrap();
    assert_eq!(shape(&e), "(or (and x prune) print)");
    assert!(has);
    let (e, _) = parse(&["-not", "-not", "-name", "a", "-a", "-name", "b"]).unwrap();
    assert_eq!(shape(&e), "(and (not (not a)) b)");
    let (_, has) = parse(&["-name", "x", "-prune"]).unwrap();
    assert!(!has);
}

#[test]
fn parse_errors() {
    assert!(parse(&["-name"]).is_err());
    assert!(parse(&["-bogus"]).is_err());
    assert!(parse(&["(", "-name", "a"]).is_err());
    assert!(parse(&["-name", "a", ")"]).is_err());
    assert!(parse(&["-name", "a", "-o"]).is_err());
    assert!(parse(&["!"]).is_err());
    assert!(parse(&["-type", "q"]).is_err());
    assert!(parse(&["-exec", "rm", "{}", ";"]).is_err());
    assert!(parse(&["-maxdepth", "x"]).is_err());
    assert!(parse(&["-name", "a", "b"]).is_err());
}

#[test]
fn comparisons() {
    assert_eq!(Cmp::parse("+3"), Some(Cmp::More(3)));
    assert_eq!(Cmp::parse("-3"), Some(Cmp::Less(3)));
    assert_eq!(Cmp::parse("3"), Some(Cmp::Exactly(3)));
    assert_eq!(Cmp::parse("x"), None);
    assert_eq!(Cmp::parse("+"), None);
}

#[test]
fn emacs_regex() {
    assert_eq!(emacs_to_bre(br".*\.\(c\|h\)"), br".*\.\(c\|h\)".to_vec());
    assert_eq!(emacs_to_bre(b"a+b?"), br"a\+b\?".to_vec());
    assert_eq!(emacs_to_bre(br"a\+"), b"a+".to_vec());
    assert_eq!(emacs_to_bre(b"[+?]"), b"[+?]".to_vec());
}

fn exists(p: &std::path::Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

#[cfg(unix)]
#[test]
fn symlinks_are_type_l_and_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("d")).unwrap();
    fs::write(root.join("d/f"), "").unwrap();
    std::os::unix::fs::symlink("d", root.join("ln")).unwrap();
    let run_in = |args: &[&str]| {
        let mut full: Vec<OsString> = args.iter().map(OsString::from).collect();
        full[0] = root.join(args[0]).into_os_string();
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = run(&full, &mut out, &mut err);
        let prefix = root.to_string_lossy().into_owned();
        (String::from_utf8_lossy(&out).replace(&prefix, "R"), code)
    };
    assert_eq!(run_in(&["ln", "-type", "l"]), ("R/ln\n".into(), 0));
    assert_eq!(run_in(&["ln", "-type", "d"]).0, "");
    let mut args = vec!["-L"];
    args.extend(["ln", "-type", "f"]);
    let mut full: Vec<OsString> = args.iter().map(OsString::from).collect();
    full[1] = root.join("ln").into_os_string();
    let mut out = Vec::new();
    assert_eq!(run(&full, &mut out, &mut Vec::new()), 0);
    assert!(String::from_utf8_lossy(&out).ends_with("ln/f\n"));
}

#[test]
fn walk_sorted_with_depths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("b/c")).unwrap();
    fs::write(root.join("a.txt"), "x").unwrap();
    fs::write(root.join("b/c/d.txt"), "").unwrap();
    fs::write(root.join("b/e.log"), "").unwrap();
    let run_in = |args: &[&str]| {
        let mut full: Vec<OsString> = vec![root.as_os_str().to_owned()];
        full.extend(args.iter().map(OsString::from));
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = run(&full, &mut out, &mut err);
        let prefix = root.to_string_lossy().into_owned();
        (String::from_utf8_lossy(&out).replace(&prefix, "R"), code)
    };
    assert_eq!(
        run_in(&[]),
        ("R\nR/a.txt\nR/b\nR/b/c\nR/b/c/d.txt\nR/b/e.log\n".into(), 0)
    );
    assert_eq!(run_in(&["-name", "*.txt"]).0, "R/a.txt\nR/b/c/d.txt\n");
    assert_eq!(run_in(&["-maxdepth", "1", "-type", "f"]).0, "R/a.txt\n");
    assert_eq!(run_in(&["-mindepth", "2", "-type", "d"]).0, "R/b/c\n");
    assert_eq!(
        run_in(&["-empty", "-type", "f"]).0,
        "R/b/c/d.txt\nR/b/e.log\n"
    );
    assert_eq!(
        run_in(&["-name", "b", "-prune", "-o", "-type", "f", "-print"]).0,
        "R/a.txt\n"
    );
    assert_eq!(
        run_in(&["-depth", "-path", "*/b*"]).0,
        "R/b/c/d.txt\nR/b/c\nR/b/e.log\nR/b\n"
    );
    assert_eq!(run_in(&["-name", "*.txt", "-quit"]).0, "");
    assert_eq!(
        run_in(&["-name", "*.txt", "-print", "-quit"]).0,
        "R/a.txt\n"
    );
    assert_eq!(
        run_in(&["-name", "a.txt", "-printf", "%f %s %d %y\\n"]).0,
        "a.txt 1 1 f\n"
    );
    assert!(exists(&root.join("b/e.log")));
    assert_eq!(run_in(&["-name", "*.log", "-delete"]).1, 0);
    assert!(!exists(&root.join("b/e.log")));
}
