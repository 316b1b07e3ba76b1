//! Inputs brush-parser must not see: text it cannot answer in bounded time.
//!
//! brush-parser is a PEG grammar with backtracking. Its running time is linear in the length of
//! ordinary scripts (about 1 µs per byte for the worst shapes measured: many short commands), but
//! the sandbox's fuzz targets found malformed shapes whose cost multiplies with each repetition,
//! from a few dozen bytes:
//!
//! - unclosed parentheses nested deeply (`c;((((((((((((((((((((x`, `$($[((((((((((((((w`):
//!   each extra level doubles the time (22 levels take 0.3 s, 34 took seconds) because `((` may
//!   open an arithmetic command or two subshells and every split is tried;
//! - here-documents with an empty or never-closing delimiter inside `$( ( ... ) )`: brush 0.4
//!   loops without end, allocating;
//! - unclosed `${name[` subscripts, `$[`, `${`, and many unclosed `[` around expansions (see
//!   [`refuse_word`]).
//!
//! Every text is checked here before brush sees it: the whole command, every nested script and
//! every word. A refusal is a parse error (or an issue, for nested text), and both fail closed:
//! the command is never auto-approved. The checks are textual and conservative; they bound the
//! shapes found so far, and fuzzing keeps looking for others.

/// Runs a brush-parser call, turning a panic into `None`. brush-parser is not written to be
/// panic-free on hostile input (found by fuzzing: `11111111111>` overflows an fd number, and
/// `~99999999999999999999` unwraps a failed integer parse in the word parser); a panic is a
/// parse failure here, and parse failures fail closed. The process's panic hook still runs.
pub(super) fn catch_panic<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

/// The longest script accepted, in bytes (1 MiB). Parsing is linear up to here (about one
/// second at the limit for the slowest shape); longer text belongs in a file, not a command.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// The deepest nesting of parentheses accepted (counted textually, quotes included, which can
/// only over-count). Real commands stay below it (`$(( (a+b) * (c+d) ))` is 3 deep); each level
/// can double brush-parser's time on malformed text (`$($[((((...`: 8 levels 1.6 ms, 15 levels
/// 0.2 s), so the bound is low.
pub const MAX_PAREN_DEPTH: usize = 8;

/// The deepest nesting of compound commands accepted. brush-parser descends recursively into
/// each `{ }`, `if`, loop and `case`, and a few thousand levels overflowed the stack (an abort,
/// not a panic that could be caught: `{ ` x 3000 killed the process; found while testing the
/// WASI shell's compound commands). Real scripts nest a handful of levels; 32 parse in well under
/// a 1 MiB stack (tested), leaving room on the 2 MiB threads of an async runtime.
pub(crate) const MAX_COMPOUND_DEPTH: usize = 32;

/// The most operators (`!`, `&&`, `||`) one conditional command `[[ .. ]]` may hold. brush-parser
/// descends recursively into each, and 3000 `!` (6 KB) overflowed the stack, an abort that no
/// caller can catch: `agent sandbox check-command`, the permission engine and the WASI shell all
/// died. Real conditions combine a handful of tests; the most accepted parse in a 1 MiB stack
/// (tested).
pub(crate) const MAX_COND_OPERATORS: usize = 64;

/// Why `text` must not be parsed, or `None` when it is safe to hand to brush-parser.
pub(super) fn refuse(text: &str) -> Option<String> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Some(format!(
            "the command is {} bytes long, over the {MAX_SCRIPT_BYTES}-byte limit; write long \
             scripts to a file and run the file",
            text.len()
        ));
    }
    if paren_depth(text) > MAX_PAREN_DEPTH {
        return Some(format!(
            "parentheses nest more than {MAX_PAREN_DEPTH} levels deep, which is not accepted"
        ));
    }
    let depth = compound_depth(text);
    if depth > MAX_COMPOUND_DEPTH {
        return Some(format!(
            "compound commands (`{{ }}`, if, for, while, until, case, select) nest {depth} levels \
             deep, more than the {MAX_COMPOUND_DEPTH} accepted"
        ));
    }
    let operators = cond_operators(text);
    if operators > MAX_COND_OPERATORS {
        return Some(format!(
            "a conditional command `[[ .. ]]` holds {operators} operators (`!`, `&&`, `||`), more \
             than the {MAX_COND_OPERATORS} accepted; split the test"
        ));
    }
    if let Some(what) = unsafe_heredoc(text) {
        return Some(format!("{what} is not accepted"));
    }
    // The word shapes are slow in brush's tokenizer and grammar too (an unclosed `${x[` inside
    // `$( )`, found by fuzzing), so the whole text is checked before any of it is parsed.
    refuse_word(text)
}

/// Why brush's word parser must not see `text` (a word, or an expanding here-document body),
/// or `None` when it is safe.
///
/// A parameter expansion whose subscript is never closed (`${W[}`) is not valid bash ("bad
/// substitution"), and brush's word parser backtracks on it at a cost that multiplies with each
/// occurrence: four take 0.15 s, five 3 s, eight did not finish (found by the
/// `shell_differential` fuzz target from a 25-byte input). Any such subscript is refused.
///
/// The same holds for the old arithmetic form `$[ ... ]` left unclosed (`$[s[` repeated; found
/// by the `command_checker` target): bash rejects it, brush backtracks on it.
pub(super) fn refuse_word(text: &str) -> Option<String> {
    if unclosed_subscript(text) {
        return Some(
            "a parameter expansion with an unclosed `[` subscript (`${name[...}`) or unbalanced parentheses in it is not accepted"
                .to_owned(),
        );
    }
    if unclosed_dollar_bracket(text) {
        return Some(
            "an arithmetic expansion `$[` without its closing `]` is not accepted".to_owned(),
        );
    }
    if unclosed_dollar_brace(text) {
        return Some(
            "a parameter expansion `${` without its closing `}` is not accepted".to_owned(),
        );
    }
    let open = unclosed_brackets(text);
    (open > MAX_UNCLOSED_BRACKETS).then(|| {
        format!(
            "a word with {open} unclosed `[` (more than {MAX_UNCLOSED_BRACKETS}) is not accepted"
        )
    })
}

/// How many `[` a word may leave unclosed. Each one can double the word parser's time when
/// something expands between them (`Z[$0` repeated: 8 take 0.5 ms, 16 take 0.1 s, 32 did not
/// finish); real words leave at most one or two (`grep '\[INFO'`).
pub(crate) const MAX_UNCLOSED_BRACKETS: usize = 6;

/// Whether some `${` has no matching `}` (nested `${ }` followed). Unclosed, bash rejects it;
/// brush backtracks on nested unclosed ones (`${o[${e,` repeated, found by fuzzing).
fn unclosed_dollar_brace(text: &str) -> bool {
    let b = text.as_bytes();
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' if i > 0 && b[i - 1] == b'$' => depth += 1,
            b'}' if depth > 0 => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// The number of `[` never closed by a later `]`.
fn unclosed_brackets(text: &str) -> usize {
    let mut depth = 0usize;
    for c in text.bytes() {
        match c {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Whether some `$[` has no matching `]` (nested `[ ]` followed) before the end of the text.
fn unclosed_dollar_bracket(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find("$[") {
        let start = from + pos + 2;
        from = start;
        let mut depth = 1usize;
        for &c in &b[start..] {
            match c {
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if depth > 0 {
            return true;
        }
    }
    false
}

/// Whether some `${name[` (or `${!name[`, `${#name[`) has no `]` closing its subscript before
/// the `}` that closes the expansion. Nested `${ }` and `[ ]` inside the subscript are
/// followed; quotes are not interpreted (a `}` in a quoted subscript counts, which can only
/// refuse more).
fn unclosed_subscript(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find("${") {
        let mut j = from + pos + 2;
        from = j;
        if matches!(b.get(j), Some(b'!' | b'#')) {
            j += 1;
        }
        let name_start = j;
        while b
            .get(j)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            j += 1;
        }
        if j == name_start || b.get(j) != Some(&b'[') {
            continue;
        }
        let (mut brackets, mut braces, mut parens) = (0usize, 0usize, 0isize);
        let mut closed = false;
        let mut k = j;
        while let Some(&c) = b.get(k) {
            match c {
                b'(' => parens += 1,
                b')' => parens -= 1,
                b'[' => brackets += 1,
                b']' => {
                    brackets = brackets.saturating_sub(1);
                    if brackets == 0 {
                        closed = true;
                        break;
                    }
                }
                b'{' if k > 0 && b[k - 1] == b'$' => braces += 1,
                b'}' if braces > 0 => braces -= 1,
                b'}' => break,
                _ => {}
            }
            k += 1;
        }
        // A subscript is arithmetic: unbalanced parentheses in it (`${a[(]i}`) are not valid
        // bash, and brush's word parser backtracks on them (each occurrence multiplied the
        // time by about 20: five took 1.2 s; found by the `shell_differential` target).
        if !closed || parens != 0 {
            return true;
        }
    }
    false
}

/// The deepest point of `(` minus `)`, counted over the raw text. Quotes and escapes are not
/// interpreted: a parenthesis inside quotes still counts, so the figure is never lower than the
/// nesting the parser will see.
fn paren_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    for b in text.bytes() {
        match b {
            b'(' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// How deeply compound commands nest in `text`, counted so that it can only over-count:
/// every opening word (`{`, `if`, `for`, `while`, `until`, `case`, `select`) outside quotes and
/// comments counts, wherever it stands; a closing word (`}`, `fi`, `done`, `esac`) counts only
/// as a whole word outside quotes and comments in command position (first in the text, or right
/// after `;`, `&`, `|`, a newline or another closing word), not when the next thing after it is
/// `)` or `|` (a `case` pattern such as `fi)`), and not at all when the text holds `<<` (a
/// here-document body may hold any word). Quoted text is skipped: a command substitution inside
/// double quotes is a nested script, checked again before it is parsed.
fn compound_depth(text: &str) -> usize {
    let b = text.as_bytes();
    let closers_count = !text.contains("<<");
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    let mut word_start = true;
    // Whether a closing word here would be in command position.
    let mut command_position = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' => {
                i += 2;
                word_start = false;
                command_position = false;
                continue;
            }
            b'\'' => {
                let ansi = i > 0 && b[i - 1] == b'$';
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += if ansi && b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                word_start = false;
                command_position = false;
                continue;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                word_start = false;
                command_position = false;
                continue;
            }
            b'#' if word_start => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        if is_word_break(c) {
            word_start = true;
            if matches!(c, b';' | b'&' | b'|' | b'\n') {
                command_position = true;
            } else if !matches!(c, b' ' | b'\t' | b'\r') {
                command_position = false;
            }
            i += 1;
            continue;
        }
        if !word_start {
            i += 1;
            continue;
        }
        word_start = false;
        let closer_allowed = std::mem::replace(&mut command_position, false);
        let end = b[i..]
            .iter()
            .position(|&x| is_word_break(x) || matches!(x, b'\'' | b'"' | b'\\'))
            .map_or(b.len(), |n| i + n);
        let word = &b[i..end];
        if matches!(
            word,
            b"{" | b"if" | b"for" | b"while" | b"until" | b"case" | b"select"
        ) {
            depth += 1;
            max = max.max(depth);
        } else if closers_count
            && closer_allowed
            && matches!(word, b"}" | b"fi" | b"done" | b"esac")
        {
            let j = b[end..]
                .iter()
                .position(|x| !matches!(x, b' ' | b'\t'))
                .map_or(b.len(), |n| end + n);
            let pattern = match b.get(j) {
                Some(b')') => true,
                Some(b'|') => b.get(j + 1) != Some(&b'|'),
                _ => false,
            };
            if !pattern {
                depth = depth.saturating_sub(1);
                command_position = true;
            }
        }
        i = end;
    }
    max
}

/// Bytes that end a word for [`compound_depth`].
/// The most operators (`!`, `&&`, `||`) counted in one `[[ .. ]]` of `text`. A span starts at a
/// `[[` that begins a word and ends at the next `]]` outside quotes (or at the end of the text);
/// inside it every `!` and every `&&` / `||` pair outside quotes counts, which can only
/// over-count (a `!` in an unquoted pattern counts too).
fn cond_operators(text: &str) -> usize {
    let b = text.as_bytes();
    let mut most = 0;
    let mut i = 0;
    while i + 1 < b.len() {
        let starts = b[i] == b'[' && b[i + 1] == b'[' && (i == 0 || is_word_break(b[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let mut count = 0usize;
        let mut j = i + 2;
        let mut quote: Option<u8> = None;
        while j < b.len() {
            let c = b[j];
            match quote {
                Some(q) => {
                    if c == b'\\' && q == b'"' {
                        j += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'\\' => j += 1,
                    b'\'' | b'"' => quote = Some(c),
                    b'!' => count += 1,
                    b'&' | b'|' if b.get(j + 1) == Some(&c) => {
                        count += 1;
                        j += 1;
                    }
                    b']' if b.get(j + 1) == Some(&b']') => break,
                    _ => {}
                },
            }
            j += 1;
        }
        most = most.max(count);
        i = j.max(i + 2);
    }
    most
}

fn is_word_break(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'`'
    )
}

/// A here-document brush-parser must not see: one whose delimiter is empty (`<<""`, `<<-''`,
/// `<< )`) or never appears as a closing line. brush-parser 0.4 loops without end, allocating,
/// on such here-documents inside `$( ( ... ) )` (found by the sandbox's fuzz target), so they
/// are refused before it sees them. `<<` inside arithmetic (`$((1<<2))`) and `<<<` are not
/// here-documents. The check is textual and may refuse such text inside quotes: refusing fails
/// closed.
fn unsafe_heredoc(text: &str) -> Option<&'static str> {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(at) = next_redirect_shift(b, i) {
        let mut j = at + 2;
        i = j;
        if b.get(j) == Some(&b'<') {
            i = j + 1;
            continue;
        }
        let strip_tabs = b.get(j) == Some(&b'-');
        if strip_tabs {
            j += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let start = j;
        while !matches!(
            b.get(j),
            None | Some(b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>')
        ) {
            j += 1;
        }
        let delimiter: String = text[start..j]
            .chars()
            .filter(|c| !matches!(c, '"' | '\'' | '\\' | '$'))
            .collect();
        if delimiter.is_empty() {
            // Refused even where `<<` may be an arithmetic shift: `1<< )` is not arithmetic
            // either, and `((` before it must not switch this check off (fuzzing found
            // `$(`((`(<< )` hanging brush-parser that way).
            return Some("a here-document with an empty delimiter");
        }
        let before = &text[..at];
        let open = before.matches("((").count() + before.matches("$[").count();
        let close = before.matches("))").count() + before.matches(']').count();
        // Inside `(( ))` / `$(( ))` / `$[ ]`: a shift (`$((1<<2))`), not a here-document, when
        // its operand can start an arithmetic term and the arithmetic is closed after it (a `((`
        // alone before `<<` must not switch the check off: fuzzing found brush hanging on
        // `(l((,]w <<\t\x04)`).
        let operand = text[at + 2..].trim_start_matches([' ', '\t', '=']);
        let term = operand
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'('));
        let after = &text[at + 2..];
        if open > close && term && (after.contains("))") || after.contains(']')) {
            continue;
        }
        if inside_substitution(before) {
            // brush 0.4's tokenizer mis-reads a here-document inside `$( )` when an arithmetic
            // expansion follows it: `echo $(rm <<E <$((x))` + `\nE\n)` came back as the word
            // `$(())`, hiding `rm` (found by the command_checker fuzz target).
            return Some("a here-document inside a command substitution");
        }
        let closed = text[j..].lines().skip(1).any(|line| {
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            line == delimiter
        });
        if !closed {
            return Some("a here-document that is never closed");
        }
    }
    None
}

/// Whether the end of `before` is inside a `$( )` or a backquoted command substitution, counted
/// textually (quotes are not followed, which can only make more text look inside one: the
/// caller refuses, so that fails closed).
fn inside_substitution(before: &str) -> bool {
    let b = before.as_bytes();
    let mut stack: Vec<bool> = Vec::new();
    let mut backquote = false;
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 1,
            b'$' if b.get(k + 1) == Some(&b'(') => {
                stack.push(true);
                k += 1;
            }
            b'(' => stack.push(false),
            b')' => {
                stack.pop();
            }
            b'`' => backquote = !backquote,
            _ => {}
        }
        k += 1;
    }
    backquote || stack.contains(&true)
}

/// The index of the next `<<` from `from` whose first `<` is not escaped by a backslash
/// (`\<<<x` is an escaped `<` then a here-document, not a here-string; fuzzing found brush
/// looping on it).
fn next_redirect_shift(b: &[u8], from: usize) -> Option<usize> {
    let mut k = from;
    while k + 1 < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'<' if b[k + 1] == b'<' => return Some(k),
            _ => k += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
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
}
