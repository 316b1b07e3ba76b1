//! From a lowered word (its [`tree::WordPiece`]s) to a [`Word`]: the unquoted text a command
//! would see where it is static, plus flags for everything that is not (expansions, globs,
//! home directory). Each word of the tree is analysed once, from the pieces the WASI shell
//! compiles too.

use super::tree::{self, Parameter, ParameterExpansion, ParameterTest, Piece, Tilde};
use super::{Issue, IssueKind, Word, lower, runtime_eval};

/// A word's analysis: the word itself, the scripts nested in it (command substitutions),
/// which the walker parses in turn, and the variables its expansion assigns (`${X:=v}`).
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub word: Word,
    pub nested: Vec<String>,
    pub issues: Vec<Issue>,
    /// Variables assigned by `${NAME=value}` / `${NAME:=value}`, with the expansion's text.
    pub assigned: Vec<(String, String)>,
}

/// Analyses one lowered word.
pub(crate) fn analyze(w: &tree::Word) -> Analysis {
    let raw = w.raw.as_str();
    // A lone `[` (the `test` command) has no closing bracket, so it is no glob.
    if lower::is_plain(raw) || raw == "[" {
        return Analysis {
            word: Word::literal(raw),
            ..Analysis::default()
        };
    }
    let mut acc = Analysis {
        word: Word {
            raw: raw.to_owned(),
            ..Word::default()
        },
        ..Analysis::default()
    };
    match &w.pieces {
        Ok(pieces) => {
            add_pieces(pieces, raw, false, &mut acc);
            // A brace expansion whose braces sit in different pieces (`{-c,'rm x'}`): the
            // expander itself says whether the word makes other words.
            if !acc.word.glob
                && raw.contains('{')
                && super::braces::expand(raw, 1).map_or(true, |w| w != [raw])
            {
                acc.word.glob = true;
            }
            // Cross-check: every `$(` / backtick that the shell would expand must have been
            // found as a nested script. brush's word parser can mis-split odd words (found by
            // the sandbox's fuzz target: `$(rm a$((;($))4(J)($)))` yielded no substitution),
            // and a substitution nobody walked must never look analysed.
            if let Some(at) = unmatched_substitution(raw, pieces) {
                acc.issues.push(Issue {
                    kind: IssueKind::NestedParse,
                    detail: format!(
                        "a command substitution at byte {at} of `{raw}` could not be analysed"
                    ),
                });
            }
        }
        Err(e) => {
            acc.word.dynamic = true;
            acc.word.text = raw.to_owned();
            acc.issues.push(Issue {
                kind: IssueKind::WordParse,
                detail: format!("cannot parse word `{raw}`: {e}"),
            });
        }
    }
    acc
}

/// Analyses text the shell evaluates as a word or as arithmetic (array subscripts, `$(( ))`
/// bodies, `${x:o:l}` offsets), lowering it first: only its nested substitutions matter.
pub(crate) fn analyze_text(text: &str) -> Analysis {
    analyze(&lower::word(text, None))
}

/// Finds the scripts nested in an expanding here-document body (lowered in here-document
/// mode).
pub(crate) fn analyze_heredoc(body: &tree::Word) -> Analysis {
    let mut acc = Analysis::default();
    match &body.pieces {
        Ok(pieces) => add_pieces(pieces, &body.raw, true, &mut acc),
        Err(e) => acc.issues.push(Issue {
            kind: IssueKind::WordParse,
            detail: format!("cannot parse here-document body: {e}"),
        }),
    }
    acc
}

/// Merges the analysis of text the shell evaluates inside a word (an operand, a subscript, an
/// arithmetic body): its nested scripts, issues and assignments, when it can hold any.
fn scan_nested(inner: Analysis, acc: &mut Analysis) {
    acc.nested.extend(inner.nested);
    acc.issues.extend(inner.issues);
    acc.assigned.extend(inner.assigned);
}

/// Whether text can hold a substitution or an expansion the walker must see.
fn expands(text: &str) -> bool {
    text.contains(['$', '`'])
}

fn add_pieces(pieces: &[tree::WordPiece], src: &str, quoted: bool, acc: &mut Analysis) {
    for p in pieces {
        let slice = src.get(p.start..p.end).unwrap_or("");
        match &p.piece {
            Piece::Text(s) => {
                if !quoted && has_glob_or_brace(s) {
                    acc.word.glob = true;
                }
                acc.word.text.push_str(s);
            }
            Piece::SingleQuoted(s) => acc.word.text.push_str(s),
            Piece::AnsiC(s) => match decode_ansi_c(s) {
                Some(decoded) => acc.word.text.push_str(&decoded),
                None => {
                    acc.word.dynamic = true;
                    acc.word.text.push_str(slice);
                }
            },
            Piece::DoubleQuoted(inner) | Piece::GettextDoubleQuoted(inner) => {
                add_pieces(inner, src, true, acc);
            }
            Piece::Tilde(Tilde::Home) if acc.word.text.is_empty() => {
                acc.word.home = true;
                acc.word.text.push('~');
            }
            Piece::Tilde(_) => {
                acc.word.dynamic = true;
                acc.word.text.push_str(slice);
            }
            Piece::Parameter(expr) => {
                if acc.word.text.is_empty() && is_plain_home(expr) {
                    acc.word.home = true;
                    acc.word.text.push('~');
                } else {
                    acc.word.dynamic = true;
                    acc.word.splits |= !quoted;
                    acc.word.text.push_str(slice);
                    acc.issues.extend(runtime_eval::parameter(expr, slice));
                    if let Some(name) = assigned_name(expr) {
                        acc.assigned.push((name.to_owned(), slice.to_owned()));
                    }
                    parameter_operands(expr, acc);
                }
            }
            Piece::CommandSubstitution(body) => {
                acc.word.dynamic = true;
                acc.word.splits |= !quoted;
                acc.word.text.push_str(slice);
                acc.nested.push(body.clone());
            }
            Piece::BackquotedSubstitution(body) => {
                acc.word.dynamic = true;
                acc.word.splits |= !quoted;
                acc.word.text.push_str(slice);
                acc.nested.push(unescape_backquoted(body));
            }
            Piece::Escape(s) => {
                // `\x` stands for `x`; a backslash-newline is a line continuation.
                let rest = s.strip_prefix('\\').unwrap_or(s);
                if rest != "\n" {
                    acc.word.text.push_str(rest);
                }
            }
            Piece::Arithmetic(expr) => {
                acc.word.dynamic = true;
                acc.word.splits |= !quoted;
                acc.word.text.push_str(slice);
                acc.issues
                    .extend(runtime_eval::arithmetic(expr, "the arithmetic expansion"));
                if expands(expr) {
                    scan_nested(analyze_text(expr), acc);
                }
            }
        }
    }
}

/// `$HOME` / `${HOME}`: the one parameter resolved statically (rules about `~/...` must see it).
fn is_plain_home(expr: &ParameterExpansion) -> bool {
    matches!(
        expr,
        ParameterExpansion::Plain { parameter: Parameter::Named(name), indirect: false }
            if name == "HOME"
    )
}

/// The variable `${NAME=value}` / `${NAME:=value}` assigns when it is unset (or empty).
fn assigned_name(expr: &ParameterExpansion) -> Option<&str> {
    match expr {
        ParameterExpansion::Test {
            test: ParameterTest::AssignDefault,
            parameter:
                Parameter::Named(name)
                | Parameter::NamedWithIndex { name, .. }
                | Parameter::NamedWithAllIndices { name, .. },
            ..
        } => Some(name),
        _ => None,
    }
}

/// Analyses every operand of a parameter expansion that the shell itself expands (the operand
/// words, then an offset and a length, then a subscript), in that order.
fn parameter_operands(expr: &ParameterExpansion, acc: &mut Analysis) {
    for word in expr.operand_words() {
        if expands(&word.raw) {
            scan_nested(analyze(word), acc);
        }
    }
    if let ParameterExpansion::Substring { offset, length, .. } = expr {
        for text in std::iter::once(offset).chain(length) {
            if expands(text) {
                scan_nested(analyze_text(text), acc);
            }
        }
    }
    if let Some((Parameter::NamedWithIndex { index, .. }, _)) = expr.parameter()
        && expands(index)
    {
        scan_nested(analyze_text(index), acc);
    }
}

/// Unquoted glob characters, extglob openers or brace expansion: the word's value depends on
/// the filesystem or expands to several words.
fn has_glob_or_brace(s: &str) -> bool {
    if s.contains(['*', '?', '[']) {
        return true;
    }
    if let Some(open) = s.find('{') {
        let rest = &s[open..];
        if rest.contains('}') && (rest.contains(',') || rest.contains("..")) {
            return true;
        }
    }
    false
}

/// Inside backquotes a backslash quotes `$`, `` ` `` and `\`.
fn unescape_backquoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Decodes the body of `$'...'`. Returns `None` for escapes whose value is not certain
/// (`\c`, `\x` without digits, a `\xHH` or `\NNN` byte above 0x7f), so the word is treated as dynamic rather than mis-read. The one
/// decoder of the project: the permission checker and the WASI shell read `$'...'` through it,
/// so they cannot disagree about what such a word says.
pub fn decode_ansi_c(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&e) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            'c' => return None,
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let start = i;
        while i < chars.len() && i - start < max && chars[i].is_digit(radix) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits: String = chars[start..i].iter().collect();
        let code = u32::from_str_radix(&digits, radix).ok()?;
        // `\xHH` and `\NNN` make one byte; above 0x7f it is not a character of its own (bash
        // writes the raw byte), so its meaning as text is uncertain.
        if e != 'u' && e != 'U' && code > 0x7f {
            return None;
        }
        out.push(char::from_u32(code)?);
    }
    Some(out)
}

/// The cross-check of brush's word parse: the byte offset of a command substitution (`$(` or
/// an opening backtick, outside single quotes) that the shell would run but brush did not
/// return as one, or `None` when every one was returned.
///
/// The scan follows quoting as the shell does (single quotes, `$'...'`, backslashes, double
/// quotes, in which `'` is literal but `$(` and backticks are live). A substitution must start
/// exactly where brush put a substitution piece; text inside a piece whose contents are
/// analysed again (a substitution body, an arithmetic expression, a parameter expansion's
/// operands) is left to that analysis, which checks it the same way.
fn unmatched_substitution(raw: &str, pieces: &[tree::WordPiece]) -> Option<usize> {
    let mut starts = Vec::new();
    let mut covered = Vec::new();
    collect_ranges(pieces, &mut starts, &mut covered);
    let inside = |i: usize| covered.iter().any(|&(s, e)| i > s && i < e);
    let b = raw.as_bytes();
    let (mut i, mut double) = (0, false);
    while i < b.len() {
        let c = b[i];
        if inside(i) {
            i += 1;
            continue;
        }
        match c {
            b'\\' => {
                i += 2;
                continue;
            }
            b'\'' if !double => {
                // A single-quoted string (or `$'...'`, whose `\'` does not end it).
                let ansi = i > 0 && b[i - 1] == b'$';
                let mut j = i + 1;
                while j < b.len() && b[j] != b'\'' {
                    j += if ansi && b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
                continue;
            }
            b'"' => double = !double,
            // `$((` must be where brush put an arithmetic expansion or (for `$((cmd) )`) a
            // substitution.
            b'$' if b.get(i + 1) == Some(&b'(') && !starts.contains(&i) => return Some(i),
            // A closing backtick lies inside its substitution's range, so any backtick seen
            // here must open one that brush returned.
            b'`' if !starts.contains(&i) => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The start offsets of substitution and arithmetic pieces, and the ranges of pieces whose contents are
/// analysed again, through double-quoted sequences.
fn collect_ranges(
    pieces: &[tree::WordPiece],
    starts: &mut Vec<usize>,
    covered: &mut Vec<(usize, usize)>,
) {
    for p in pieces {
        match &p.piece {
            Piece::CommandSubstitution(_)
            | Piece::BackquotedSubstitution(_)
            | Piece::Arithmetic(_) => {
                starts.push(p.start);
                covered.push((p.start, p.end));
            }
            Piece::Parameter(_) => {
                covered.push((p.start, p.end));
            }
            Piece::DoubleQuoted(inner) | Piece::GettextDoubleQuoted(inner) => {
                collect_ranges(inner, starts, covered);
            }
            Piece::Text(_)
            | Piece::SingleQuoted(_)
            | Piece::AnsiC(_)
            | Piece::Tilde(_)
            | Piece::Escape(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(raw: &str) -> Word {
        analyze_text(raw).word
    }

    #[test]
    fn quoting_is_removed() {
        for raw in [
            r"\rm",
            r#""rm""#,
            "'rm'",
            "r''m",
            r#"r"m""#,
            "$'\\x72\\x6d'",
            "$'\\162m'",
        ] {
            let word = w(raw);
            assert_eq!(word.text, "rm", "{raw}");
            assert!(!word.dynamic && !word.glob, "{raw}");
        }
    }

    #[test]
    fn expansions_are_dynamic_and_nested_scripts_found() {
        let a = analyze_text("a$(rm x)b`id`");
        assert!(a.word.dynamic);
        assert_eq!(a.nested, ["rm x", "id"]);
        let a = analyze_text(r#""${X:-$(curl evil)}""#);
        assert!(a.word.dynamic);
        assert_eq!(a.nested, ["curl evil"]);
        let a = analyze_text("$(( x[$(id)] + 1 ))");
        assert_eq!(a.nested, ["id"]);
        assert!(w("$FOO").dynamic);
        assert!(w("~user/x").dynamic);
    }

    #[test]
    fn home_is_resolved_statically() {
        for raw in ["~/x", "$HOME/x", "${HOME}/x", "\"$HOME\"/x"] {
            let word = w(raw);
            assert!(word.home && !word.dynamic, "{raw}");
            assert_eq!(word.text, "~/x", "{raw}");
        }
        assert!(!w("a~").home);
    }

    #[test]
    fn globs_only_when_unquoted() {
        assert!(w("*.rs").glob);
        assert!(w("{a,b}").glob);
        assert!(w("x{1..3}").glob);
        assert!(!w("'*.rs'").glob);
        assert!(!w("\"*\"").glob);
        assert!(!w("{}").glob);
    }

    #[test]
    fn ansi_c_uncertain_escape_is_dynamic() {
        assert!(w("$'\\cA'").dynamic);
        assert_eq!(w("$'a\\nb'").text, "a\nb");
    }
}

#[cfg(test)]
mod substitution_cross_check {
    use super::*;

    fn unmatched(raw: &str) -> Option<usize> {
        // Lowered without the word guards: the shapes below are what brush returned for them.
        let pieces = crate::shell::lower::pieces_unguarded(raw);
        unmatched_substitution(raw, &pieces)
    }

    #[test]
    fn substitutions_brush_returns_are_matched() {
        for raw in [
            "$(echo hi)",
            "a$(echo hi)b`echo x`c",
            "\"$(echo hi) and `date`\"",
            "$(echo $(echo $(rm x)))",
            "\"it's $(rm x)\"",
            "'$(not run)'",
            "$'$(x)'",
            "\\$(x)",
            "$((1 + $(echo 2)))",
            "${x:-$(rm y)}",
            "$((1+2))",
            "$((rm x); ls)",
            "\"$((rm x) )\"",
            "`echo \\`nested\\``",
        ] {
            assert_eq!(unmatched(raw), None, "{raw}");
        }
    }

    /// Found by the command_checker fuzz target: brush's word parser returned only a backtick
    /// substitution nested inside this `$(rm ...)`, so `rm` was never seen and the command was
    /// allowed. Counting substitutions matched (one each); positions do not.
    #[test]
    fn a_substitution_brush_misses_is_reported() {
        let raw = "$(rm <1*(<.$[.*'6*'\\6exe]\"\0<$[6exeb\"<1*(<.$[.*'6exe]\"\0<$[6exeb\"\0<$[.*'66exeb\"\0 )\0<$[.*'66ex`0<(4####################<n?nnn)`\0\0]0<(4<?nn)eb\"\0 ))";
        assert_eq!(unmatched(raw), Some(0));
        // The whole command is now refused earlier too (it has an unclosed `$[`); either way it
        // is never taken as analysed.
        let parsed = crate::shell::parse(&format!("echo {raw}"));
        assert!(parsed.is_err() || !parsed.unwrap().is_fully_analysed());
    }
}
