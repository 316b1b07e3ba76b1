use super::*;
use crate::shell::parse_script;
use crate::shell::tree::{Parameter, ParameterExpansion, ParameterTest};

fn tree(text: &str) -> Script {
    parse_script(text).unwrap().tree
}

fn simple(command: &Command) -> &SimpleCommand {
    match command {
        Command::Simple(c) => c,
        other => panic!("not a simple command: {other:?}"),
    }
}

fn text(s: &str, start: usize, end: usize) -> WordPiece {
    WordPiece {
        piece: Piece::Text(s.to_owned()),
        start,
        end,
    }
}

/// Plain words skip brush's word parser; the pieces are what the parser gives.
#[test]
fn plain_words_lower_as_the_word_parser_does() {
    for raw in [
        "ls",
        "-la",
        "a=b",
        "x:y,z",
        "--opt=1",
        "/usr/bin/env",
        "^x@y%z+1",
        "[",
    ] {
        let opts = ParserOptions::default();
        let brush = lower_pieces(&bw::parse(raw, &opts).unwrap(), 0);
        assert_eq!(pieces(raw, false, 0), Ok(brush), "{raw}");
    }
}

#[test]
fn words_are_lowered_into_pieces_with_their_offsets() {
    let w = word("a'b'\"$X${Y:-~}\"$(id)`w`$((1+2))\\;~", None);
    let pieces = w.pieces.unwrap();
    let kinds: Vec<&Piece> = pieces.iter().map(|p| &p.piece).collect();
    assert_eq!(kinds[0], &Piece::Text("a".to_owned()));
    assert_eq!(kinds[1], &Piece::SingleQuoted("b".to_owned()));
    let Piece::DoubleQuoted(inner) = kinds[2] else {
        panic!("{kinds:?}")
    };
    assert!(matches!(
        &inner[0].piece,
        Piece::Parameter(ParameterExpansion::Plain { parameter: Parameter::Named(n), indirect: false }) if n == "X"
    ));
    let Piece::Parameter(ParameterExpansion::Test {
        test: ParameterTest::UseDefault,
        null_too: true,
        word: Some(operand),
        ..
    }) = &inner[1].piece
    else {
        panic!("{inner:?}")
    };
    // The operand is a word of its own, lowered too.
    assert_eq!(operand.raw, "~");
    assert_eq!(
        operand.pieces.as_ref().unwrap()[0].piece,
        Piece::Tilde(Tilde::Home)
    );
    assert_eq!(kinds[3], &Piece::CommandSubstitution("id".to_owned()));
    assert_eq!(kinds[4], &Piece::BackquotedSubstitution("w".to_owned()));
    assert_eq!(kinds[5], &Piece::Arithmetic("1+2".to_owned()));
    assert_eq!(kinds[6], &Piece::Escape("\\;".to_owned()));
    // Offsets are bytes of the word's text.
    assert_eq!((pieces[1].start, pieces[1].end), (1, 4));
}

/// A word the word parser or its guards refuse keeps the reason; the script still lowers,
/// and readers fail closed on that word.
#[test]
fn refused_words_keep_the_reason() {
    let script = tree("ls ~99999999999999999999 ok");
    let ls = simple(&script.items[0].and_or.first.commands[0]);
    let CommandItem::Word(bad) = &ls.suffix[0] else {
        panic!("{ls:?}")
    };
    assert!(
        bad.pieces
            .as_ref()
            .unwrap_err()
            .contains("word parser failed"),
        "{bad:?}"
    );
    let CommandItem::Word(ok) = &ls.suffix[1] else {
        panic!("{ls:?}")
    };
    assert_eq!(ok.pieces, Ok(vec![text("ok", 0, 2)]));
    // Operands nested past the bound are refused, not lowered without end.
    let deep = format!("{}x{}", "${a:-".repeat(20), "}".repeat(20));
    let mut w = word(&deep, None);
    let mut levels = 0;
    let reason = loop {
        match w.pieces {
            Err(reason) => break reason,
            Ok(mut pieces) => match pieces.remove(0).piece {
                Piece::Parameter(ParameterExpansion::Test {
                    word: Some(inner), ..
                }) => {
                    w = inner;
                    levels += 1;
                }
                other => panic!("{other:?}"),
            },
        }
    };
    assert_eq!(levels, MAX_OPERAND_NESTING + 1);
    assert!(reason.contains("nested more than"), "{reason}");
}

#[test]
fn lists_pipelines_and_positions() {
    let script = tree("a | b && ! c || d; e &\n  f x");
    assert_eq!(script.items.len(), 3);
    let first = &script.items[0];
    assert_eq!(first.background, None);
    assert_eq!(first.and_or.first.commands.len(), 2);
    assert_eq!(
        first
            .and_or
            .rest
            .iter()
            .map(|(c, p)| (*c, p.negated))
            .collect::<Vec<_>>(),
        [(Connector::And, true), (Connector::Or, false)]
    );
    assert_eq!(script.items[1].background, Some(Position::new(1, 22)));
    let f = simple(&script.items[2].and_or.first.commands[0]);
    assert_eq!(f.at, Some(Position::new(2, 3)));
    let CommandItem::Word(x) = &f.suffix[0] else {
        panic!("{f:?}")
    };
    assert_eq!(x.at, Some(Position::new(2, 5)));
}

#[test]
fn assignments_redirects_and_substitutions() {
    let script = tree("A=1 B+=x\"y\" c[2]=z cmd >out 2>&1 <<<s d=(1 [k]=2) <(ls)");
    let c = simple(&script.items[0].and_or.first.commands[0]);
    let names: Vec<_> = c
        .prefix
        .iter()
        .map(|i| match i {
            CommandItem::Assignment(a) => (a.name.as_str(), a.index.as_deref(), a.append),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        [
            ("A", None, false),
            ("B", None, true),
            ("c", Some("2"), false)
        ]
    );
    let CommandItem::Assignment(b) = &c.prefix[1] else {
        unreachable!()
    };
    let AssignmentValue::Scalar(value) = &b.value else {
        panic!("{b:?}")
    };
    assert_eq!(value.raw, "x\"y\"");
    assert_eq!(value.at, Some(Position::new(1, 8)));
    assert_eq!(b.at, Position::new(1, 5));
    assert!(matches!(
        &c.suffix[0],
        CommandItem::Redirect(Redirect {
            fd: None,
            kind: RedirectKind::File {
                op: FileOp::Write,
                target: RedirectTarget::File(w)
            }
        }) if w.raw == "out"
    ));
    assert!(matches!(
        &c.suffix[1],
        CommandItem::Redirect(Redirect {
            fd: Some(2),
            kind: RedirectKind::File {
                op: FileOp::DuplicateOutput,
                target: RedirectTarget::Duplicate(w)
            }
        }) if w.raw == "1"
    ));
    assert!(matches!(
        &c.suffix[2],
        CommandItem::Redirect(Redirect { kind: RedirectKind::HereString(w), .. }) if w.raw == "s"
    ));
    let CommandItem::Assignment(d) = &c.suffix[3] else {
        panic!("{c:?}")
    };
    assert!(
        matches!(&d.value, AssignmentValue::Array(items) if items.len() == 2 && items[1].0.as_deref() == Some("k"))
    );
    let CommandItem::ProcessSubstitution(p) = &c.suffix[4] else {
        panic!("{c:?}")
    };
    assert_eq!(p.kind, ProcessKind::Read);
    assert_eq!(p.shown, "<(ls)");
    assert_eq!(p.at.column, 51);
}

#[test]
fn here_documents_keep_their_body_and_its_pieces() {
    let script = tree("cat <<E >f\n$(id) 'x'\nE\ncat <<'Q'\n$(id)\nQ");
    let here = |i: usize| -> HereDocument {
        let c = simple(&script.items[i].and_or.first.commands[0]);
        c.suffix
            .iter()
            .find_map(|item| match item {
                CommandItem::Redirect(Redirect {
                    kind: RedirectKind::HereDocument(h),
                    ..
                }) => Some(h.clone()),
                _ => None,
            })
            .unwrap()
    };
    let expanding = here(0);
    assert!(expanding.expands);
    let pieces = expanding.body.pieces.unwrap();
    assert_eq!(pieces[0].piece, Piece::CommandSubstitution("id".to_owned()));
    // In a here-document body quotes are text.
    assert!(
        pieces
            .iter()
            .all(|p| !matches!(p.piece, Piece::SingleQuoted(_)))
    );
    let literal = here(1);
    assert!(!literal.expands);
    assert_eq!(literal.delimiter.raw, "'Q'");
    assert_eq!(literal.body.pieces, Ok(vec![text("$(id)\n", 0, 6)]));
}

#[test]
fn compound_commands() {
    let script = tree(
        "if a; then b; elif c; then d; else e; fi\n\
         for i in x y; do :; done\n\
         for ((i=0; i<3; i++)); do :; done\n\
         while a; do b; done; until a; do b; done\n\
         case $x in a|b) y;; c) z;& *) ;;& esac\n\
         f() { g; } >log\n\
         [[ -f x && ! a == b* ]] 2>e\n\
         (( n += 1 )); (sub); { grp; }; coproc named { cat; }\n\
         time x",
    );
    let commands: Vec<&Command> = script
        .items
        .iter()
        .map(|i| &i.and_or.first.commands[0])
        .collect();
    let Command::Compound(CompoundCommand {
        body: Compound::If { elses, .. },
        at,
        ..
    }) = commands[0]
    else {
        panic!("{:?}", commands[0])
    };
    assert_eq!(*at, Some(Position::new(1, 1)));
    assert_eq!(elses.len(), 2);
    assert!(elses[0].condition.is_some() && elses[1].condition.is_none());
    assert!(matches!(
        commands[1],
        Command::Compound(CompoundCommand { body: Compound::For { name, values: Some(v), .. }, .. })
            if name == "i" && v.len() == 2
    ));
    assert!(matches!(
        commands[2],
        Command::Compound(CompoundCommand { body: Compound::ArithmeticFor { init: Some(i), condition: Some(c), update: Some(u), .. }, .. })
            if i == "i=0" && c.trim() == "i<3" && u.trim() == "i++"
    ));
    assert!(matches!(
        commands[3],
        Command::Compound(CompoundCommand {
            body: Compound::While { until: false, .. },
            ..
        })
    ));
    assert!(matches!(
        commands[4],
        Command::Compound(CompoundCommand {
            body: Compound::While { until: true, .. },
            ..
        })
    ));
    let Command::Compound(CompoundCommand {
        body: Compound::Case { subject, arms },
        ..
    }) = commands[5]
    else {
        panic!("{:?}", commands[5])
    };
    assert_eq!(subject.raw, "$x");
    assert_eq!(
        arms.iter()
            .map(|a| (a.patterns.len(), a.next))
            .collect::<Vec<_>>(),
        [
            (2, CaseNext::Stop),
            (1, CaseNext::FallThrough),
            (1, CaseNext::TestNext)
        ]
    );
    let Command::Function(f) = commands[6] else {
        panic!("{:?}", commands[6])
    };
    assert_eq!(f.name.raw, "f");
    assert_eq!(f.at, Some(Position::new(6, 1)));
    assert_eq!(f.body.redirects.len(), 1);
    let Command::Test(t) = commands[7] else {
        panic!("{:?}", commands[7])
    };
    assert_eq!(t.at, Position::new(7, 1));
    assert_eq!(t.redirects.len(), 1);
    let TestExpr::And(left, right) = &t.expr else {
        panic!("{:?}", t.expr)
    };
    assert!(matches!(&**left, TestExpr::Unary(UnaryTest::RegularFile, w) if w.raw == "x"));
    assert!(matches!(
        &**right,
        TestExpr::Not(inner) if matches!(&**inner, TestExpr::Binary(BinaryTest::MatchesPattern, a, b) if a.raw == "a" && b.raw == "b*")
    ));
    assert!(matches!(
        commands[8],
        Command::Compound(CompoundCommand { body: Compound::Arithmetic(e), .. }) if e.trim() == "n += 1"
    ));
    let rest: Vec<&Command> = script.items[9..12]
        .iter()
        .map(|i| &i.and_or.first.commands[0])
        .collect();
    assert!(matches!(
        rest[0],
        Command::Compound(CompoundCommand {
            body: Compound::Subshell(_),
            ..
        })
    ));
    assert!(matches!(
        rest[1],
        Command::Compound(CompoundCommand {
            body: Compound::BraceGroup(_),
            ..
        })
    ));
    assert!(matches!(
        rest[2],
        Command::Compound(CompoundCommand { body: Compound::Coprocess { name: Some(n), .. }, .. }) if n.raw == "named"
    ));
    assert_eq!(
        script.items.last().unwrap().and_or.first.timed,
        Some(Position::new(9, 1))
    );
}
