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
    // env -S: the string's words are env's own arguments again (options included).
    assert_eq!(names("env -S 'rm x'"), ["env -S rm x", "env rm x"]);
    assert_eq!(
        names("env -S'-u X rm' y"),
        ["env -S-u X rm y", "env -u X rm y"]
    );
    assert_eq!(names("flock f -c 'rm x'"), ["flock f -c rm x", "rm x"]);
    assert_eq!(names("watch -n1 'a; b'"), ["watch -n1 a; b", "a", "b"]);
    // The script `xargs sh -c` runs comes from its input; with -I, from the input too.
    for s in [
        "xargs sh -c",
        "xargs -I{} sh -c 'echo {}'",
        "xargs -0 bash -c",
    ] {
        let kinds: Vec<_> = parse(s)
            .unwrap()
            .issues
            .into_iter()
            .map(|i| i.kind)
            .collect();
        assert_eq!(kinds, [IssueKind::DynamicScript], "{s}");
    }
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
    // Braces are expanded first, as bash does.
    assert_eq!(names("sh {-c,'rm x'}"), ["sh {-c,rm x}", "rm x"]);
    assert_eq!(names("eval {rm,x}"), ["eval {rm,x}", "rm x"]);
    assert_eq!(
        names("find . -name x {-exec,} rm -rf {} + ; find . {-execdir,} {id,-u} \\;"),
        [
            "find . -name x {-exec,} rm -rf {} +",
            "rm -rf {}",
            "find . {-execdir,} {id,-u} ;",
            "id -u"
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
