use super::*;
use crate::shell::{IssueKind, Origin, parse};

/// What the checker's parse sees in `command`, in [`Expect`]'s words.
fn seen(command: &str) -> String {
    let script = parse(command).unwrap_or_else(|e| panic!("{command}: {e}"));
    if script.issues.iter().any(|i| i.kind == IssueKind::Wrapper) {
        return Expect::Unknown.to_string();
    }
    let nested: Vec<String> = script
        .commands
        .iter()
        .filter(|c| c.origin == Origin::ShellString && c.depth == 1)
        .map(ToString::to_string)
        .collect();
    if !nested.is_empty() {
        return format!("runs the command line `{}`", nested.join("; "));
    }
    let first = &script.commands[0];
    if first.layers.is_empty() {
        return Expect::Nothing.to_string();
    }
    let name = first.effective_name().unwrap_or_default();
    let writes: Vec<&str> = first
        .layers
        .iter()
        .flat_map(|l| &l.writes)
        .map(|w| w.text.as_str())
        .collect();
    match writes.as_slice() {
        [] => format!("runs `{name}`"),
        [file] => format!("runs `{name}`, writes `{file}`"),
        more => format!("runs `{name}`, writes {more:?}"),
    }
}

#[test]
fn every_example_row_is_what_the_checker_sees() {
    let mut failures = Vec::new();
    for w in WRAPPERS {
        assert!(!w.examples.is_empty(), "{} has no example rows", w.name);
        for (command, expect) in w.examples {
            let got = seen(command);
            if got != expect.to_string() {
                failures.push(format!("{command}: expected {expect}, got {got}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_table_is_consistent() {
    for w in WRAPPERS {
        assert_eq!(w.options.program, w.name);
        let mut shorts = Vec::new();
        let mut longs = Vec::new();
        for o in w.options.opts {
            assert!(o.short.is_some() || !o.long.is_empty(), "{}: {o:?}", w.name);
            if let Some(c) = o.short {
                assert!(!shorts.contains(&c), "{}: -{c} twice", w.name);
                shorts.push(c);
            }
            for l in o.long {
                assert!(!longs.contains(l), "{}: --{l} twice", w.name);
                longs.push(*l);
            }
        }
        if let Some(n) = w.options.numeric {
            assert!(w.options.opts.iter().any(|o| o.name == n), "{}", w.name);
        }
    }
    let names: Vec<&str> = WRAPPERS.iter().map(|w| w.name).collect();
    for (i, n) in names.iter().enumerate() {
        assert!(!names[i + 1..].contains(n), "{n} twice");
    }
}
