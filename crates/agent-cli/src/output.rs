//! Printing: JSON to stdout, one-line errors and warnings to stderr, untrusted text sanitised.

use std::io::Write;

use crate::exit::Exit;

/// Writes `text` and a newline to stdout. A closed pipe (`agent ... | head`) is not an error.
pub fn stdout_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// Writes `text` as is to stdout. A closed pipe is not an error.
pub fn stdout_text(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Prints `agent: error: MESSAGE` (one line) to stderr.
pub fn error(message: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "agent: error: {}",
        one_line(&sanitize(message))
    );
}

/// Prints `agent: warning: MESSAGE` to stderr.
pub fn warning(message: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "agent: warning: {}",
        one_line(&sanitize(message))
    );
}

/// Reports a clap error: help and version go to stdout with exit 0; anything else is one
/// line on stderr with exit 2.
pub fn clap_error(e: &clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(std::io::stdout().lock(), "{}", e.render());
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                Exit::Usage.into()
            } else {
                Exit::Success.into()
            }
        }
        _ => {
            let rendered = e.render().to_string();
            let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
            let mut first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_owned();
            // "the following required arguments were not provided:" is followed by their names.
            if first.ends_with(':')
                && let Some(next) = lines.next()
            {
                first = format!("{first} {next}");
            }
            error(&format!("{first} (see `agent --help`)"));
            Exit::Usage.into()
        }
    }
}

/// An error and its causes on one line, each cause once (library errors often repeat their
/// source in their own message).
pub fn chain(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

/// Escapes control, bidi-override and zero-width characters so untrusted text (rule texts,
/// file names) cannot rewrite the terminal.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let hidden =
            matches!(c as u32, 0x200B..=0x200F | 0x202A..=0x202E | 0x2066..=0x2069 | 0xFEFF);
        if (c.is_control() && c != '\n') || hidden {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn escapes_terminal_tricks() {
        assert_eq!(sanitize("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(sanitize("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(sanitize("plain"), "plain");
    }
}
