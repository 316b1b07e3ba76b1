use super::*;

fn dangers(script: &str) -> Vec<Command> {
    parse_script(script)
        .unwrap()
        .into_iter()
        .filter(|c| !is_harmless(c))
        .collect()
}

#[test]
fn scripts_that_only_edit_text() {
    for s in [
        "s/a/b/g",
        "s/a/b/",
        "s|a|b|2p",
        "s/a\\/b/c/",
        "s/[/]/x/g",
        "s/[[:alpha:]/]/x/",
        "s/[]/]/x/",
        "s/a/\\n/;s/b/c/I",
        "1d",
        "$d",
        "/re/d",
        "\\,re,Id",
        "1,5p",
        "0~2d",
        "2,+3d",
        "/a/,/b/{s/x/y/;p}",
        "/x/!d",
        ":a;N;$!ba;s/\\n/ /g",
        "y/abc/xyz/",
        "1i\\\nheader",
        "$a footer; w x",
        "q5",
        "l 40",
        "# w comment\np",
        "b end; s/a/b/; :end",
    ] {
        assert_eq!(dangers(s), [], "{s:?}");
    }
}

#[test]
fn scripts_that_write_read_or_run() {
    for (s, want) in [
        (
            "s/a/b/w out",
            Command::Substitute {
                execute: false,
                write: Some("out".into()),
            },
        ),
        (
            "s/a/b/gw /tmp/x; p",
            Command::Substitute {
                execute: false,
                write: Some("/tmp/x; p".into()),
            },
        ),
        (
            "s/[/]/b/w f",
            Command::Substitute {
                execute: false,
                write: Some("f".into()),
            },
        ),
        (
            "s/a/b/e",
            Command::Substitute {
                execute: true,
                write: None,
            },
        ),
        (
            "s/x/id/ge",
            Command::Substitute {
                execute: true,
                write: None,
            },
        ),
        ("w ~/.bashrc", Command::Write("~/.bashrc".into())),
        ("1W out", Command::Write("out".into())),
        ("r /etc/passwd", Command::Read("/etc/passwd".into())),
        ("$R /etc/shadow", Command::Read("/etc/shadow".into())),
        ("e", Command::Execute),
        ("1e rm -rf x", Command::Execute),
        ("/a/{\ne id\n}", Command::Execute),
        ("p;w f", Command::Write("f".into())),
        ("b x;w f", Command::Write("f".into())),
        ("a\\\ntext\nw f", Command::Write("f".into())),
    ] {
        assert_eq!(dangers(s), [want], "{s:?}");
    }
}

#[test]
fn scripts_sed_would_read_another_way_are_errors() {
    for s in [
        "s/a/b",
        "s/[/b/",
        "s/a/b/x",
        "s/a/b/ q",
        "w",
        "k",
        "{p",
        "}",
        "p x",
        "s\\a\\b\\",
    ] {
        assert!(parse_script(s).is_err(), "{s:?}");
    }
}

fn words(s: &str) -> Vec<Word> {
    crate::shell::parse(&format!("sed {s}")).unwrap().commands[0].words[1..].to_vec()
}

#[test]
fn the_script_is_every_expression_or_else_the_first_operand() {
    let call = read(&words("-e s/a/b/ -e 'w out' f")).unwrap();
    assert_eq!(call.commands[1], Command::Write("out".into()));
    assert_eq!(call.files[0].text, "f");
    let call = read(&words("--expression='1e id' f")).unwrap();
    assert_eq!(call.commands, [Command::Execute]);
    let call = read(&words("-n -i.bak 's/a/b/w x' f g")).unwrap();
    assert_eq!(call.in_place.as_deref(), Some(".bak"));
    assert_eq!(call.files.len(), 2);
    // `-ie` is `-i` with the suffix `e`, and the script is the first operand.
    let call = read(&words("-ie s/a/b/ f")).unwrap();
    assert_eq!(call.in_place.as_deref(), Some("e"));
    assert_eq!(call.files[0].text, "f");
    // A text started by one expression goes on into the next.
    let call = read(&words("-e 'a\\' -e 'w x' f")).unwrap();
    assert!(call.commands.iter().all(is_harmless));
    assert_eq!(read(&words("--version")), Ok(Call::default()));
    for refused in [
        "-f s.sed f",
        "--file=s.sed f",
        "--posix s/a/b/ f",
        "\"s/a/$X/\" f",
    ] {
        assert!(read(&words(refused)).is_err(), "{refused}");
    }
}

#[test]
fn backups_follow_the_suffix() {
    let backup = |args: &str, file: &str| {
        let call = read(&words(args)).unwrap();
        call.backup_of(&Word::literal(file)).map(|w| w.text)
    };
    assert_eq!(backup("-i.bak s/a/b/ f", "d/f").as_deref(), Some("d/f.bak"));
    assert_eq!(backup("-i s/a/b/ f", "d/f"), None);
    assert_eq!(
        backup("--in-place=rc s/a/b/ f", ".bash").as_deref(),
        Some(".bashrc")
    );
    // GNU sed 4.9 puts the whole file name, directories included, in place of `*`.
    assert_eq!(
        backup("'-i/tmp/*' s/a/b/ f", "d/f").as_deref(),
        Some("/tmp/d/f")
    );
    assert_eq!(
        backup("'-iold_*' s/a/b/ f", "d/f").as_deref(),
        Some("old_d/f")
    );
    assert_eq!(
        backup("'-i../*' s/a/b/ f", "x/f").as_deref(),
        Some("../x/f")
    );
    assert_eq!(
        backup("'-ibak/*.orig' s/a/b/ f", "f").as_deref(),
        Some("bak/f.orig")
    );
}

#[test]
fn the_script_is_found_in_every_place_sed_reads_it() {
    for c in [
        "'e id' f",
        "-n '1e id' f",
        "'s/a/b/e' f",
        "-e 's/a/b/ge' f",
        "--expression='1e id' f",
        "-ne '$e id' f",
        "-n -e p -e '/x/e id' f",
        "'/a/,/b/{e id\n}' f",
        "'y/a/b/;e' f",
    ] {
        assert!(read(&words(c)).unwrap().runs().is_some(), "{c}");
    }
    // An abbreviated long option is refused: sed would complete it, this table may not.
    assert!(read(&words("--expr '1e id' f")).is_err());
    let call = read(&words("-e 's/a/b/w out' -e 'w /etc/x' -e '2W two' f")).unwrap();
    assert_eq!(call.writes().collect::<Vec<_>>(), ["out", "/etc/x", "two"]);
    let call = read(&words("'r /etc/passwd' f")).unwrap();
    assert_eq!(call.reads().collect::<Vec<_>>(), ["/etc/passwd"]);
    let call = read(&words("-i.bak s/a/b/ f g")).unwrap();
    assert_eq!(
        (call.in_place.as_deref(), call.files.len()),
        (Some(".bak"), 2)
    );
    let call = read(&words("-si'/tmp/*' s/a/b/ f")).unwrap();
    assert_eq!(call.in_place.as_deref(), Some("/tmp/*"));
    let call = read(&words("'--in-place=bak/*' s/a/b/ f")).unwrap();
    assert_eq!(call.in_place.as_deref(), Some("bak/*"));
    assert_eq!(backup_name("f", ".bak"), "f.bak");
    for refused in [
        "-n p *.txt",
        "-f s.sed f",
        "--file=s.sed f",
        "-n k f",
        "\"$s\" f",
        "--nope f",
        "--posix -s p f",
    ] {
        assert!(read(&words(refused)).is_err(), "{refused}");
    }
    assert!(read(&words("-n p ./*.txt")).is_ok());
}

#[test]
fn plain_scripts_run_write_and_read_nothing() {
    for c in [
        "-n 's/a/b/p' f",
        "'s|/etc|/usr|g' f",
        "-E 's/(w)(e)/\\2\\1/2' f",
        "'s/we/ew/' f",
        "-e 1d -e '$d' f",
        "-n '/start/,/end/{p;q}' f",
        "'1i\\\nheader' f",
        "'a tail with w and e' f",
        "':a;N;$!ba;s/\\n/ /g' f",
        "'y/abc/xyz/' f",
        "-n '$=' f",
        "'0~3d' f",
        "'\\,x,d' f",
        "'s/e/w/;# e comment' f",
        "-s -u -z -l 5 p f",
    ] {
        let call = read(&words(c)).unwrap();
        assert!(call.commands.iter().all(is_harmless), "{c}");
        assert_eq!(call.in_place, None, "{c}");
    }
}

#[test]
fn help_or_version_with_a_script_still_has_the_script_read() {
    assert_eq!(read(&words("--help")), Ok(Call::default()));
    let call = read(&words("--version 's/a/b/e' f")).unwrap();
    assert!(call.runs().is_some());
    let call = read(&words("--help 'w out' f")).unwrap();
    assert_eq!(call.writes().collect::<Vec<_>>(), ["out"]);
}
