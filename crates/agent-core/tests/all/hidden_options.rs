//! Issue 24, classes 9 and 16: a prefix allow rule approves a program with the words its `*`
//! stands for, and the option checks read those words. An option hidden where they cannot
//! read it (a variable, a substitution, a glob; a brace is expanded and read) is asked about,
//! unless an exact-string rule names the command; and a rule for a package script does not
//! extend to package-manager options that change what runs.

use agent_core::permissions::{PermissionMode, Step};
use serde_json::json;

use crate::support::{allowed_under as allowed, asked_under as asked, check, engine};

#[test]
fn options_hidden_in_variables_substitutions_or_globs_are_asked_under_a_prefix_rule() {
    for (rule, cmd) in [
        ("Bash(git log *)", "x=--output=F; git log $x"),
        ("Bash(git log *)", "x=--output=F; git log \"$x\""),
        ("Bash(git log *)", "git log --patch $(echo --ext-diff)"),
        ("Bash(git log *)", "git log -p \"$(echo --ext-diff)\""),
        ("Bash(git log *)", "git log *"),
        ("Bash(git log *)", "git log -$X"),
        ("Bash(git log *)", "git log --format=$F"),
        ("Bash(git *)", "git $X log"),
        ("Bash(find *)", "find . -name *"),
        ("Bash(find *)", "find . -name x $ACTION"),
        ("Bash(sort *)", "sort $OPTS in.txt"),
        ("Bash(sort *)", "sort -k * in.txt"),
        ("Bash(npm run test *)", "npm run test $X"),
    ] {
        asked(rule, cmd, Step::Prompt);
    }
    // sed's own reader cannot tell its script from its files then: the safety step asks.
    asked("Bash(sed *)", "sed -n $X in.txt", Step::Safety);
    // The reason says why the rule does not reach it.
    let e = engine(
        json!({"permissions": {"allow": ["Bash(git log *)"]}}),
        PermissionMode::Default,
    );
    let d = check(&e, "Bash", "git log $X");
    assert!(
        d.reason.contains("only an exact-string rule"),
        "{}",
        d.reason
    );
    assert!(
        d.suggestions.contains(&"Bash(git log $X)".to_owned()),
        "{:?}",
        d.suggestions
    );
}

#[test]
fn options_hidden_in_braces_are_read_after_expansion() {
    for (rule, cmd, step) in [
        ("Bash(git log *)", "git log {--output=F,}", Step::Prompt),
        (
            "Bash(git log *)",
            "git log {--output=.bashrc,}",
            Step::Safety,
        ),
        ("Bash(git log *)", "git log {--ext-diff,-p}", Step::Safety),
        (
            "Bash(git diff *)",
            "git diff --{ext-diff,stat}",
            Step::Safety,
        ),
        ("Bash(find *)", "find . {-delete,}", Step::Prompt),
        (
            "Bash(find *)",
            "find . -name x {-exec,} rm -rf {} +",
            Step::Prompt,
        ),
        ("Bash(sort *)", "sort {-o,} out.txt in.txt", Step::Prompt),
        (
            "Bash(npm run test *)",
            "npm run test {--script-shell=sh,}",
            Step::Safety,
        ),
    ] {
        asked(rule, cmd, step);
    }
    // A brace that makes harmless words is read as those words.
    allowed("Bash(git log *)", "git log {--oneline,--stat}");
    allowed("Bash(find *)", "find {src,tests} -name '*.rs'");
}

#[test]
fn words_that_cannot_be_options_pass_a_prefix_rule() {
    for (rule, cmd) in [
        ("Bash(git log *)", "git log -- $X"),
        ("Bash(git log *)", "git log -- *"),
        ("Bash(git log *)", "git log --format=\"$F\""),
        ("Bash(git log *)", "git log src/*.rs"),
        ("Bash(git commit *)", "git commit -m \"fix: $X\""),
        ("Bash(find *)", "find . -name '*.rs'"),
        ("Bash(cargo test *)", "cargo test $X"),
        // An exact rule names the command as written.
        ("Bash(git log $X)", "git log $X"),
    ] {
        allowed(rule, cmd);
    }
}

#[test]
fn a_rule_for_a_package_script_does_not_extend_to_options_that_change_what_runs() {
    let rule = "Bash(npm run test *)";
    for cmd in [
        "npm run test --userconfig=evil.rc",
        "npm run test --userconfig evil.rc",
        "npm run test --globalconfig=evil.rc",
        "npm run test --prefix=/tmp/other",
        "npm run test --pref /tmp/other",
        "npm run test -C /tmp/other",
        "npm run test --script-shell=/tmp/sh",
        "npm run test --node-options=--require=./x.js",
        "npm run test --call=id",
    ] {
        asked(rule, cmd, Step::Safety);
    }
    for cmd in [
        "npm run test --ignore-scripts=false",
        "npm run test --workspace=../other",
        "npm run test --watch",
        "npm run test -w x",
    ] {
        asked(rule, cmd, Step::Prompt);
    }
    for cmd in [
        "npm run test",
        "npm run test --silent",
        "npm run test --if-present -s",
        "npm run test -- --watch --prefix=x",
    ] {
        allowed(rule, cmd);
    }
    asked("Bash(npm test *)", "npm test --foo", Step::Prompt);
    asked("Bash(npx jest *)", "npx jest --bar", Step::Prompt);
    asked(
        "Bash(npm *)",
        "npm --prefix /tmp/other run test",
        Step::Safety,
    );
    asked(
        "Bash(npm install *)",
        "npm install --userconfig=x",
        Step::Safety,
    );
    asked(
        "Bash(pnpm test *)",
        "pnpm test --dir /tmp/other",
        Step::Safety,
    );
    asked(
        "Bash(yarn test *)",
        "yarn test --cwd /tmp/other",
        Step::Safety,
    );
    allowed("Bash(npm install *)", "npm install --save-dev left-pad");
}
