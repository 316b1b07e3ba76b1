//! Tests of `parse.rs`.

use super::*;
use crate::shell::plan::Part;

fn refused(script: &str) -> (&'static str, Position) {
    match Plan::parse(script) {
        Err(ShellError::Unsupported {
            construct,
            position,
        }) => (construct, position),
        other => panic!("{script:?}: {other:?}"),
    }
}

fn lit(text: &str) -> Word {
    Word {
        source: text.to_owned(),
        parts: vec![Part::Text {
            text: text.to_owned(),
            quoted: false,
        }],
        assignment_like: false,
        braced: false,
    }
}

fn cmd(words: &[&str]) -> Command {
    Command {
        assignments: vec![],
        words: words.iter().map(|w| lit(w)).collect(),
        redirects: vec![],
    }
}

fn single(script: &str) -> Command {
    let plan = Plan::parse(script).unwrap();
    assert_eq!(plan.items.len(), 1, "{script}");
    assert!(plan.items[0].rest.is_empty(), "{script}");
    assert_eq!(plan.items[0].first.stages.len(), 1, "{script}");
    simple(&plan.items[0].first.stages[0])
}

fn simple(node: &Node) -> Command {
    match node {
        Node::Simple(c) => c.clone(),
        Node::Compound(..) => panic!("{node:?} is not a simple command"),
    }
}

#[test]
fn lists_and_pipelines() {
    let plan = Plan::parse("a | b && c || d; e\nf").unwrap();
    assert_eq!(plan.items.len(), 3);
    assert_eq!(
        plan.items[0],
        AndOr {
            first: Pipeline {
                negated: false,
                stages: vec![Node::Simple(cmd(&["a"])), Node::Simple(cmd(&["b"]))]
            },
            rest: vec![
                (
                    Connector::And,
                    Pipeline {
                        negated: false,
                        stages: vec![Node::Simple(cmd(&["c"]))]
                    }
                ),
                (
                    Connector::Or,
                    Pipeline {
                        negated: false,
                        stages: vec![Node::Simple(cmd(&["d"]))]
                    }
                ),
            ]
        }
    );
    assert_eq!(plan.command_count(), 6);
    let negated = Plan::parse("! a | b").unwrap();
    assert!(negated.items[0].first.negated);
}

#[test]
fn redirects() {
    let c = single("a <in >out 2>>err 2>&1 >&2 1>&2 &>both &>>both2 >|clob");
    assert_eq!(
        c.redirects,
        vec![
            Redirect::Read { target: lit("in") },
            Redirect::Write {
                fd: Fd::Stdout,
                target: lit("out"),
                append: false
            },
            Redirect::Write {
                fd: Fd::Stderr,
                target: lit("err"),
                append: true
            },
            Redirect::Dup {
                fd: Fd::Stderr,
                to: Fd::Stdout
            },
            Redirect::Dup {
                fd: Fd::Stdout,
                to: Fd::Stderr
            },
            Redirect::Dup {
                fd: Fd::Stdout,
                to: Fd::Stderr
            },
            Redirect::Both {
                target: lit("both"),
                append: false
            },
            Redirect::Both {
                target: lit("both2"),
                append: true
            },
            Redirect::Write {
                fd: Fd::Stdout,
                target: lit("clob"),
                append: false
            },
        ]
    );
    let piped = Plan::parse("a |& b").unwrap();
    assert_eq!(
        simple(&piped.items[0].first.stages[0]).redirects,
        vec![Redirect::Dup {
            fd: Fd::Stderr,
            to: Fd::Stdout
        }]
    );
}

#[test]
fn assignments() {
    let c = single("A=1 B+=x\"y\" env");
    assert_eq!(c.assignments.len(), 2);
    assert_eq!(c.assignments[0].name, "A");
    assert!(!c.assignments[0].append);
    assert!(c.assignments[0].value.assignment_like);
    assert!(c.assignments[1].append);
    assert_eq!(c.words, vec![lit("env")]);
    let bare = single("A=1");
    assert!(bare.words.is_empty());
    let export = single("export A=$X B");
    assert!(export.words[1].assignment_like);
    assert!(!export.words[2].assignment_like);
    let echo = single("echo A=$X");
    assert!(!echo.words[1].assignment_like);
}

#[test]
fn rejected_constructs_are_named_with_their_position() {
    for (script, construct, line, column) in [
        ("cat <<EOF\nx\nEOF", "here-document (<<)", 1, 7),
        ("cat <<< x", "here-string (<<<)", 1, 9),
        ("echo a; (cd x; ls)", "subshell ( .. )", 1, 9),
        ("echo $(ls)", "command substitution $(..)", 1, 6),
        ("echo `ls`", "command substitution `..` (backquotes)", 1, 6),
        ("f() { ls; }", "function definition", 1, 1),
        ("sleep 1 &", "background job (&)", 1, 9),
        ("a=(1 2)", "array", 1, 1),
        ("a[0]=1", "array", 1, 1),
        ("diff <(ls) x", "process substitution <(..) / >(..)", 1, 6),
        ("cat < <(ls)", "process substitution <(..) / >(..)", 1, 7),
        ("ls > >(cat)", "process substitution <(..) / >(..)", 1, 6),
        ("((a[1]=2))", crate::shell::arith::REFUSED, 1, 1),
        (
            "echo $((i++))",
            "assignment in arithmetic expansion $((..)) (write NAME=$((..)) instead of $((NAME=..)) or $((NAME++)), or use the command ((NAME++)))",
            1,
            6,
        ),
        ("echo > {a,b}", "brace expansion {a,b}", 1, 8),
        (
            "echo {1..200000}",
            "brace expansion making more than 100000 words or 64 groups",
            1,
            6,
        ),
        (
            "echo ${x:=y}",
            "assigning a default ${NAME:=..} (write [ -n \"$NAME\" ] || NAME=.. first)",
            1,
            6,
        ),
        ("coproc ls", "coprocess (coproc)", 1, 1),
        (
            "[[ a =~ b ]]",
            "regular expression match [[ .. =~ .. ]] (use grep -E or a case pattern)",
            1,
            1,
        ),
        ("time ls", "the `time` keyword", 1, 1),
        ("ls\neval x", "the `eval` builtin", 2, 1),
        (
            "ls 3>f",
            "an output redirect of a file descriptor other than 1 and 2",
            1,
            6,
        ),
        (
            "ls 2>&3",
            "duplicating a file descriptor other than 1 and 2",
            1,
            7,
        ),
        ("ls <>f", "a read-write redirect (<>)", 1, 6),
        ("ls >&-", "closing a file descriptor (>&-)", 1, 6),
        ("ls <&0", "input duplication (<&)", 1, 6),
        (
            "ls >&f",
            "duplicating output to a file name (>&FILE; write &>FILE)",
            1,
            6,
        ),
        ("echo ~", "tilde expansion (~)", 1, 6),
        ("echo é; ls &", "background job (&)", 1, 12),
    ] {
        assert_eq!(
            refused(script),
            (construct, Position::new(line, column)),
            "{script:?}"
        );
    }
}

#[test]
fn parse_errors_have_positions() {
    match Plan::parse("echo 'unterminated") {
        Err(ShellError::Parse { .. }) => {}
        other => panic!("{other:?}"),
    }
    match Plan::parse("echo a;;") {
        Err(ShellError::Parse { position, .. }) => assert!(position.is_some()),
        other => panic!("{other:?}"),
    }
    let long = "a".repeat(agent_core::shell::MAX_SCRIPT_BYTES + 1);
    assert!(matches!(Plan::parse(&long), Err(ShellError::Parse { .. })));
    let deep = format!(
        "echo {}",
        "(".repeat(agent_core::shell::MAX_PAREN_DEPTH + 1)
    );
    assert!(matches!(Plan::parse(&deep), Err(ShellError::Parse { .. })));
}

/// 50 copies of `true {1..99999}` made 5 million words while compiling (2.4 GB, outside
/// every time limit); the script's braces share one budget.
#[test]
fn brace_expansion_has_one_budget_per_script() {
    let bomb = ["true {1..99999}"; 50].join("; ");
    let (construct, _) = refused(&bomb);
    assert!(construct.contains("in one script"), "{construct}");
    // Under the budget, spread over words, it compiles.
    let ok = ["true {1..20000}"; 5].join("; ");
    assert!(Plan::parse(&ok).is_ok());
    let over = ["true {1..20000}"; 6].join("; ");
    assert!(refused(&over).0.contains("in one script"));
    // Words without a brace expansion do not count.
    let plain = vec!["echo {a}"; 200_000 / 9].join("; ");
    assert!(Plan::parse(&plain).is_ok());
}

#[test]
fn long_pipelines_are_refused() {
    let ok = vec!["cat"; MAX_PIPELINE_STAGES].join(" | ");
    assert!(Plan::parse(&ok).is_ok());
    let long = format!("{ok} | cat");
    assert_eq!(refused(&long).0, "a pipeline of more than 64 commands");
}

/// Random shell-ish text never panics the compiler and is answered promptly (brush-parser
/// is guarded by agent-core's checks and this crate's word checks).
#[test]
fn hostile_text_is_answered_promptly() {
    const ALPHABET: &[&str] = &[
        "a", "1", " ", "\n", "$", "{", "}", "(", ")", "[", "]", "'", "\"", "\\", "`", "|", "&",
        ";", "<", ">", "*", "?", "!", "#", "~", "=", ":", "-", "@", "${", "$(", "<<", "x[", "$[",
        "%", ",", "..", "\t",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let started = std::time::Instant::now();
    for _ in 0..3000 {
        let len = next() % 40;
        let text: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        let _ = Plan::parse(&text);
    }
    let hostile = [
        "echo ".to_owned() + &"Z[$X".repeat(16),
        "echo ".to_owned() + &"${a[(]i}".repeat(8),
        "echo ".to_owned() + &"$[".repeat(20),
        format!("c;{}x", "(".repeat(34)),
    ];
    for text in &hostile {
        assert!(Plan::parse(text).is_err(), "{text}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}
