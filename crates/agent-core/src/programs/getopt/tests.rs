use super::*;

fn words(s: &str) -> Vec<Word> {
    s.split_whitespace().map(Word::literal).collect()
}

#[test]
fn forms() {
    let t = OptTable::parse("u|--unique r n=|--lines= f=P|--file=P --color?", true);
    let ok = |s: &str| parse_args(&t, &words(s)).is_ok();
    for s in [
        "-u",
        "-ur",
        "-n5",
        "-n 5",
        "--lines=5",
        "--lines 5",
        "-un5",
        "-fX",
        "--color",
        "--color=never",
        "x -u",
        "-5",
        "-- -o",
    ] {
        assert!(ok(s), "{s}");
    }
    for s in [
        "-o",
        "-uo x",
        "--out",
        "--lin=5",
        "--unique=1",
        "-n",
        "--lines",
        "-x5",
    ] {
        assert!(!ok(s), "{s}");
    }
    assert!(matches!(
        parse_args(&t, &words("--uniq")),
        Err(ArgError::Abbreviated(_))
    ));
    assert!(matches!(
        parse_args(&t, &words("--colo")),
        Err(ArgError::Abbreviated(_))
    ));
    assert!(long_matches("--outp=x", "output"));
    assert!(long_matches("--output", "output"));
    assert!(!long_matches("--outputs", "output"));
    assert!(!long_matches("--", "output"));
}

#[test]
fn one_parser_reads_each_kind_of_table_as_it_knows_the_options() {
    let t = OptTable::parse("u|--unique n=|--lines= --lines-max=", false);
    let args = [
        "-xun5", "--lin", "a", "--lines", "6", "--zz=1", "b", "-n7", "--", "-u",
    ];
    let never = |_: usize, _: Place| Ok::<(), ()>(());
    let seen = |kind| {
        let s = scan(&t.options, kind, &args, |_| None, never);
        let found: Vec<(Option<char>, Option<String>)> = s
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Opt(o, _, v) => Some((o.short, v.as_ref().map(|v| v.text.clone()))),
                Event::Operand(_) => None,
            })
            .collect();
        (found, s.stop)
    };
    // A search takes `-x` and `--zz` as flags, `--lin` as the first option it begins.
    assert_eq!(
        seen(TableKind::Search { known: &[] }),
        (
            vec![
                (Some('u'), None),
                (Some('n'), Some("5".into())),
                (Some('n'), Some("a".into())),
                (Some('n'), Some("6".into())),
                (Some('n'), Some("7".into())),
            ],
            None
        )
    );
    // An allowlist stops at the option it does not list; a complete table too.
    assert_eq!(
        seen(TableKind::Allowlist),
        (vec![], Some(Stop::Getopt(GetoptError::UnknownShort('x'))))
    );
    assert_eq!(
        seen(TableKind::Complete).1,
        Some(Stop::Getopt(GetoptError::UnknownShort('x')))
    );
    // A complete table resolves `--lin` (ambiguous here) and ends at the first operand.
    let s = scan(
        &t.options,
        TableKind::Complete,
        &["--lin", "a"],
        |_| None,
        never,
    );
    assert!(matches!(
        s.stop,
        Some(Stop::Getopt(GetoptError::Ambiguous { .. }))
    ));
    let s = scan(
        &t.options,
        TableKind::Complete,
        &["-u", "a", "-u"],
        |_| None,
        never,
    );
    assert_eq!((s.events.len(), s.operands), (1, 1));
    let s = scan(
        &t.options,
        TableKind::Allowlist,
        &["-u", "a", "-u"],
        |_| None,
        never,
    );
    assert_eq!(s.events.len(), 3);
}
