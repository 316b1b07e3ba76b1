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
mod tests;
