//! Showing untrusted names and file content to a person: the review (`status`, `diff`, the
//! closing review of `agent run`) prints file names and diff lines written by the agent, and a
//! terminal obeys control characters in them (an escape sequence can hide a line, a carriage
//! return can overwrite one, a newline in a name can forge a `status` line).
//!
//! Two rules, both allowlists of what is printed as is:
//!
//! - [`quote_path`]: a name made only of printable ASCII other than `"` and `\` is printed as
//!   is; any other name is quoted as Git quotes it with `core.quotePath` on: in double quotes,
//!   `\a \b \t \n \v \f \r \" \\` for those characters, every other byte outside printable ASCII
//!   (controls, DEL, each byte of a non-ASCII character) as three octal digits (`\303\251`
//!   for `é`).
//! - [`visible`]: text keeps every character except the controls (C0 but TAB and newline,
//!   DEL, C1) and the Unicode format characters (category Cf: bidi controls, zero-width
//!   characters, invisible tags, ...) and the line and paragraph separators; each of those is
//!   shown as `\u{HEX}` (ESC as `\u{1b}`, CR as `\u{d}`), the notation the CLI uses for any
//!   untrusted text.

use std::borrow::Cow;

/// `name` as the review prints it: as is when it is printable ASCII without `"` or `\`, else
/// quoted as Git does (see the module docs).
///
/// ```
/// use agent_workspace::quote_path;
/// assert_eq!(quote_path("src/lib.rs"), "src/lib.rs");
/// assert_eq!(quote_path("a\nM  b"), r#""a\nM  b""#);
/// assert_eq!(quote_path("café"), r#""caf\303\251""#);
/// ```
pub fn quote_path(name: &str) -> Cow<'_, str> {
    if name.bytes().all(plain_byte) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for b in name.bytes() {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if plain_byte(b) => out.push(char::from(b)),
            b => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// Printable ASCII other than the quote and the backslash.
fn plain_byte(b: u8) -> bool {
    (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\'
}

/// `text` with every character a terminal would obey or hide shown as `\u{HEX}` (see the
/// module docs); TAB and newline stay.
///
/// ```
/// use agent_workspace::visible;
/// assert_eq!(visible("ok\tthen\n"), "ok\tthen\n");
/// assert_eq!(visible("a\x1b[2Kb\r"), "a\\u{1b}[2Kb\\u{d}");
/// ```
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `c` must not reach a terminal as is: a control other than TAB and newline, a
/// format character, or a line or paragraph separator.
fn hidden(c: char) -> bool {
    if c == '\t' || c == '\n' {
        return false;
    }
    c.is_control() || c == '\u{2028}' || c == '\u{2029}' || is_format(c)
}

/// Unicode general category Cf (format characters), Unicode 15.1.
const FORMAT: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

fn is_format(c: char) -> bool {
    let c = u32::from(c);
    FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::{quote_path, visible};

    #[test]
    fn plain_names_are_printed_as_they_are() {
        assert_eq!(quote_path("src/main.rs"), "src/main.rs");
        assert_eq!(quote_path("with space/x-y_z.txt"), "with space/x-y_z.txt");
    }

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quote_path("a\nb"), r#""a\nb""#);
        assert_eq!(quote_path("tab\there"), r#""tab\there""#);
        assert_eq!(quote_path("q\"uote"), r#""q\"uote""#);
        assert_eq!(quote_path("back\\slash"), r#""back\\slash""#);
        assert_eq!(quote_path("esc\x1b[31m"), r#""esc\033[31m""#);
        assert_eq!(quote_path("del\x7f"), r#""del\177""#);
        assert_eq!(quote_path("cr\r"), r#""cr\r""#);
        assert_eq!(quote_path("é"), r#""\303\251""#);
        assert_eq!(quote_path("rtl\u{202e}txt"), r#""rtl\342\200\256txt""#);
    }

    #[test]
    fn a_newline_in_a_name_cannot_make_a_second_line() {
        let forged = "notes.txt\nM  src/trusted.rs";
        assert!(!quote_path(forged).contains('\n'));
        assert_eq!(quote_path(forged).lines().count(), 1);
    }

    #[test]
    fn text_keeps_tabs_newlines_and_printable_unicode() {
        let text = "fn main() {\n\tprintln!(\"héllo 世界 ✓\");\n}\n";
        assert_eq!(visible(text), text);
    }

    #[test]
    fn controls_and_format_characters_are_shown_escaped() {
        assert_eq!(visible("\x1b[8mhidden"), "\\u{1b}[8mhidden");
        assert_eq!(visible("a\rb"), "a\\u{d}b");
        assert_eq!(visible("a\x08b"), "a\\u{8}b");
        assert_eq!(visible("\x7f"), "\\u{7f}");
        assert_eq!(visible("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(visible("\x00"), "\\u{0}");
        assert_eq!(visible("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(visible("zero\u{200b}width"), "zero\\u{200b}width");
        assert_eq!(visible("tag\u{e0041}"), "tag\\u{e0041}");
        assert_eq!(visible("line\u{2028}sep"), "line\\u{2028}sep");
    }

    #[test]
    fn no_escape_byte_survives_any_control() {
        for b in (0u8..0x20).chain([0x7f]) {
            let c = char::from(b);
            let out = visible(&c.to_string()).into_owned();
            if c == '\t' || c == '\n' {
                assert_eq!(out, c.to_string());
            } else {
                assert!(
                    out.bytes().all(|b| (0x20..0x7f).contains(&b)),
                    "{b:#x}: {out:?}"
                );
            }
        }
        for c in '\u{80}'..='\u{9f}' {
            assert!(visible(&c.to_string()).starts_with("\\u{"), "{c:?}");
        }
    }
}
