use super::*;

/// Whether `text` parses on a thread with a 1 MiB stack (a deep parse aborts the process).
fn parses_in_one_mib(text: String) -> bool {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || super::super::parse(&text).is_ok())
        .unwrap()
        .join()
        .unwrap()
}

fn nested(open: &str, close: &str, levels: usize) -> String {
    format!("{}echo deep; {}", open.repeat(levels), close.repeat(levels))
}

#[test]
fn compound_depth_counts_real_nesting_and_only_over_counts() {
    assert_eq!(compound_depth(&nested("{ ", "}; ", 5)), 5);
    assert_eq!(compound_depth(&nested("if true; then ", "fi; ", 4)), 4);
    assert_eq!(compound_depth(&nested("while true; do ", "done; ", 3)), 3);
    assert_eq!(
        compound_depth("for f in a; do case $f in a) echo;; esac; done"),
        2
    );
    // Flat scripts stay shallow, however long.
    let flat = "if a; then b; fi; for x in y; do z; done\n".repeat(200);
    assert_eq!(compound_depth(&flat), 1);
    // Closers that do not close: quoted, escaped, in a comment, an argument, a case
    // pattern, in a here-document.
    for (text, depth) in [
        ("{ echo '}'; { echo \"}\"; { echo \\}; {", 4),
        ("{ # }\n{ # fi\n{", 3),
        ("{ echo } fi done; {", 2),
        ("{ \"echo\" }; { \\echo }; { 'echo' }; {", 4),
        ("{ case x in fi) ;; done | esac) ;; esac; {", 2),
        ("{ cat <<E\n}\nE\n{", 2),
        ("{ x=$'\\'}'; {", 2),
    ] {
        assert!(
            compound_depth(text) >= depth,
            "{text:?}: {}",
            compound_depth(text)
        );
    }
    // Openers count wherever they stand (over-counting is safe).
    assert_eq!(compound_depth("echo if for while"), 3);
}

#[test]
fn deep_compound_nesting_is_refused_before_it_overflows_the_parser() {
    for (open, close) in [
        ("{ ", "}; "),
        ("if true; then ", "fi; "),
        ("while true; do ", "done; "),
        ("case x in x) ", ";; esac; "),
    ] {
        let deep = nested(open, close, 3000);
        let why = refuse(&deep).expect("refused");
        assert!(why.contains("nest 3000 levels deep"), "{why}");
        assert!(refuse(&nested(open, close, MAX_COMPOUND_DEPTH)).is_none());
    }
    // The deepest accepted nesting parses in a 1 MiB stack.
    let worst = nested(
        "if true; then { while true; do ",
        "done; }; fi; ",
        MAX_COMPOUND_DEPTH / 3,
    );
    assert!(parses_in_one_mib(worst));
}

#[test]
fn long_conditional_commands_are_refused_before_they_overflow_the_parser() {
    for op in ["! ", "x && ", "x || ", "! x && "] {
        let long = format!("[[ {}x ]]", op.repeat(3000));
        let why = refuse(&long).expect("refused");
        assert!(why.contains("operators"), "{why}");
    }
    // Quoted operators do not count; a `]]` ends the span; each `[[ ]]` counts alone.
    let quoted = format!("[[ \"{}\" == x ]]", "!&&||".repeat(500));
    assert_eq!(refuse(&quoted), None);
    let many = "[[ ! -f a && -d b || x ]] && ".repeat(100) + "true";
    assert_eq!(cond_operators(&many), 3);
    assert_eq!(refuse(&many), None);
    // `[[` as an argument is counted too: it can only over-count.
    assert_eq!(cond_operators("echo [[ ! x"), 1);
    assert_eq!(cond_operators("a[[ ! x"), 0);
    // The most accepted, in its worst shape, parses in a 1 MiB stack.
    let worst = format!("[[ {}x ]]", "! ".repeat(MAX_COND_OPERATORS));
    assert_eq!(refuse(&worst), None);
    assert!(parses_in_one_mib(worst));
    let worst = format!("[[ {}x ]]", "x && ".repeat(MAX_COND_OPERATORS));
    assert!(parses_in_one_mib(worst));
}

#[test]
fn a_heredoc_inside_a_substitution_is_refused() {
    // brush read the word of the first as `$(())`, hiding `rm` (command_checker fuzz target).
    for text in [
        "echo $(rm <<}<$((x))\n\n\n}\n)",
        "echo $(rm <<E <$((x))\nE\n)",
        "echo `cat <<E\nx\nE\n`",
    ] {
        assert!(refuse(text).is_some(), "{text:?}");
    }
    for text in [
        "cat <<E\n$(date)\nE\n",
        "x=$((1<<2))",
        "echo $(cat f) <<E\nx\nE\n",
    ] {
        assert_eq!(refuse(text), None, "{text:?}");
    }
}

#[test]
fn heredoc_shapes() {
    assert_eq!(unsafe_heredoc("cat <<EOF\nx\nEOF"), None);
    assert_eq!(
        unsafe_heredoc("cat <<-'EOF' > f\n\tx\n\tEOF\necho done"),
        None
    );
    assert_eq!(unsafe_heredoc("cat <<<\"\""), None);
    assert_eq!(unsafe_heredoc("echo $((1<<2)) $[3<<1]"), None);
    assert_eq!(unsafe_heredoc("((x<<=1)); cat <<E\nE"), None);
    assert!(unsafe_heredoc("cat <<EOF\nx").is_some());
    // Found by the command_checker fuzz target: `((` before an empty delimiter must not
    // exempt it (brush-parser hung).
    assert!(unsafe_heredoc("$(`((`(<< )").is_some());
    assert!(unsafe_heredoc("echo $(( (1<< ) ))").is_some());
    // Found by the command_checker fuzz target: an escaped `<` before `<<` is not `<<<`.
    assert!(unsafe_heredoc("$(|(\\<<<\u{c})").is_some());
    assert!(unsafe_heredoc("0>>>(cunit$$[Td(l((,]w$$$\u{4}<<\t\t\u{4})0|for x").is_some());
    assert_eq!(unsafe_heredoc("dd bs=$((1 << 20)) x=$((y<<=2))"), None);
    assert_eq!(
        unsafe_heredoc("cat \\<<<x"),
        Some("a here-document that is never closed")
    );
}

#[test]
fn depth_and_size_bounds() {
    assert_eq!(paren_depth("a (b (c) (d)) e"), 2);
    assert_eq!(paren_depth(")))((("), 3);
    let deep = format!(
        "{}x{}",
        "(".repeat(MAX_PAREN_DEPTH),
        ")".repeat(MAX_PAREN_DEPTH)
    );
    assert_eq!(refuse(&deep), None);
    let deeper = format!("{}x{}", "(".repeat(9), ")".repeat(9));
    assert!(refuse(&deeper).unwrap().contains("8 levels"));
    let long = "a".repeat(MAX_SCRIPT_BYTES + 1);
    assert!(refuse(&long).unwrap().contains("byte limit"));
    assert_eq!(refuse(&"a".repeat(MAX_SCRIPT_BYTES)), None);
}

/// Found by the sandbox's fuzz target (a libFuzzer slow unit): 34 unclosed parentheses took
/// brush-parser seconds. Such text is refused at once, at the top level and nested.
#[test]
fn deep_unclosed_parentheses_are_refused_promptly() {
    for text in [
        format!("c4$l;{}$l;Y", "(".repeat(34)),
        format!("echo ok; bash -c '{}x'", "(".repeat(40)),
        "+(\"())$($[((((((((((\0\0((((w $] $$$<)".to_owned(),
    ] {
        let result = crate::shell::parse(&text);
        let refused = match &result {
            Err(e) => e.message.contains("levels deep"),
            Ok(p) => p.issues.iter().any(|i| i.detail.contains("levels deep")),
        };
        assert!(refused, "{text}: {result:?}");
    }
}

#[test]
fn unclosed_subscripts() {
    for bad in [
        "${W[}",
        "${W[${W[}${W[}}${[[U$<W[}[",
        "${W[}${W[}${W[}${W[}]]]]",
        "]]]]${W[}",
        "${!a[}",
        "${a[x",
    ] {
        assert!(unclosed_subscript(bad), "{bad}");
    }
    for ok in [
        "${a[0]}",
        "${a[$i]}/${b[@]}",
        "${a[${i}]}",
        "${a[b[1]]}",
        "${#a[@]}",
        "${W:-[}",
        "$W[}",
        "[${x}",
        "${a}[",
    ] {
        assert!(!unclosed_subscript(ok), "{ok}");
    }
}

/// Found by the fuzz targets: nested unclosed `${` and many unclosed `[` around expansions
/// took brush's word parser from 0.1 s to minutes.
#[test]
fn unclosed_braces_and_brackets() {
    assert!(unclosed_dollar_brace("${o[${e,]x}"));
    assert!(!unclosed_dollar_brace("${a}${b:-${c}}{x"));
    assert_eq!(unclosed_brackets("a[b]c[d[e"), 2);
    for bad in [
        "Z[$0".repeat(16),
        "*(${o[${e,${o[${e,o[${e,]${,]lc\"`c${]6\"````)".to_owned(),
    ] {
        assert!(refuse_word(&bad).is_some(), "{bad}");
        let p = crate::shell::parse(&format!("echo {bad}"));
        assert!(p.is_err() || !p.unwrap().is_fully_analysed());
    }
    for ok in ["[x", "'^\\[INFO'", "${a[0]}[", "a[1][2][3]"] {
        assert_eq!(refuse_word(ok), None, "{ok}");
    }
}

#[test]
fn unclosed_dollar_brackets() {
    for bad in [
        "$[",
        "$[s[1]",
        "$[1]$[s[",
        "x$[s[)!($[\"{AmA$[s[\"$!r$[s[\")",
    ] {
        assert!(unclosed_dollar_bracket(bad), "{bad}");
    }
    for ok in ["$[1+2]", "$[a[1]+b[2]]", "[x", "$x[", "a]$[1]"] {
        assert!(!unclosed_dollar_bracket(ok), "{ok}");
    }
    let p = crate::shell::parse("echo $()!($\\&$z$Amr$[s[)!($[\"{AmA$[s[\"$!r$[s[\")");
    assert!(p.unwrap_err().message.contains("`$[`"));
}

/// Found by the `shell_differential` fuzz target: `${W[}` repeated took brush's word parser
/// seconds (five) to forever (eight). Such words are issues, answered at once.
#[test]
fn unclosed_subscripts_are_refused_promptly() {
    let shape = "${a[(]i}".repeat(8);
    let started = std::time::Instant::now();
    assert!(super::super::parse(&format!("echo {shape}")).is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert!(super::super::parse("echo ${a[(1+2)]} ${a[i]}").is_ok());
    let text = format!(
        "echo {}; cat <<E\n{}\nE",
        "${W[}".repeat(12),
        "${W[}".repeat(12)
    );
    let e = crate::shell::parse(&text).unwrap_err();
    assert!(e.message.contains("unclosed `[` subscript"), "{e}");
    // Text that only becomes such a word once decoded (`$'\x24'` is `$`) is refused where
    // it is parsed: as a nested script, an issue.
    let nested = format!("bash -c $'echo {}'", "\\x24{W[}".repeat(2));
    let p = crate::shell::parse(&nested).unwrap();
    assert!(
        p.issues
            .iter()
            .any(|i| i.detail.contains("unclosed `[` subscript")),
        "{p:?}"
    );
}

/// Found by the `shell_differential` fuzz target: brush's word parser unwraps a failed
/// integer parse on `~` followed by a huge number. The panic is caught: the word is an
/// issue, and the command is never auto-approved.
#[test]
fn word_parser_panics_fail_closed() {
    let p = crate::shell::parse("ls ~ ~99999999999999999999999; rm x").unwrap();
    assert!(
        p.issues
            .iter()
            .any(|i| i.detail.contains("word parser failed")),
        "{p:?}"
    );
    assert!(p.commands.iter().any(|c| c.name() == Some("rm")));
    let fd = crate::shell::parse("echo 11111111111>f");
    assert!(fd.is_err() || !fd.unwrap().is_fully_analysed());
}
