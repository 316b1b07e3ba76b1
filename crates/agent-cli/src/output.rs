//! Printing: JSON to stdout, one-line errors and warnings to stderr, untrusted text sanitised.

use std::io::Write;

use crate::colour::{Ink, Palette};
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
    let label = Palette::for_stderr().paint(Ink::Bad, "error:");
    let _ = writeln!(
        std::io::stderr().lock(),
        "agent: {label} {}",
        one_line(&sanitize(message))
    );
}

/// Prints `agent: warning: MESSAGE` to stderr.
pub fn warning(message: &str) {
    let label = Palette::for_stderr().paint(Ink::Warn, "warning:");
    let _ = writeln!(
        std::io::stderr().lock(),
        "agent: {label} {}",
        one_line(&sanitize(message))
    );
}

/// Reports a clap error: help and version go to stdout with exit 0 (clap prints them, in
/// colour when the colour rules say so); anything else is one line on stderr with exit 2,
/// keeping what clap says besides the usage: the tips (a similar subcommand, value or flag),
/// the possible values, and which verb's `--help` to read (`verb`, e.g. `agent run`).
pub fn clap_error(e: &clap::Error, verb: &str) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                Exit::Usage.into()
            } else {
                Exit::Success.into()
            }
        }
        _ => {
            error(&clap_line(&e.render().to_string(), verb));
            Exit::Usage.into()
        }
    }
}

/// The verb `args` name (`agent workspace diff`): the subcommands of `command` found in
/// order among the arguments before `--`.
pub fn verb(command: &clap::Command, args: &[std::ffi::OsString]) -> String {
    let mut path = vec![command.get_name().to_owned()];
    let mut current = command;
    for arg in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if arg == "--" {
            break;
        }
        if let Some(sub) = current
            .get_subcommands()
            .find(|c| c.get_name() == arg || c.get_all_aliases().any(|a| a == arg))
        {
            path.push(sub.get_name().to_owned());
            current = sub;
        }
    }
    path.join(" ")
}

/// clap's rendered error on one line: the message, then its possible values and tips, then
/// which `--help` to read.
fn clap_line(rendered: &str, verb: &str) -> String {
    let mut text = String::new();
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if text.is_empty() {
            text = line.to_owned();
        } else if text.ends_with(':') || line.starts_with('[') {
            // "were not provided:" is followed by the names; "[possible values: ...]" belongs
            // to the message before it.
            text = format!("{text} {line}");
        } else {
            text = format!("{text}; {line}");
        }
    }
    if text.is_empty() {
        text = "invalid arguments".into();
    }
    format!("{text} (see `{verb} --help`)")
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
    use super::{clap_line, sanitize, verb};

    #[test]
    fn the_verb_is_the_subcommands_named_before_a_double_dash() {
        use clap::CommandFactory as _;
        let cmd = crate::cli::Cli::command();
        let v = |a: &[&str]| {
            let args: Vec<std::ffi::OsString> = std::iter::once("agent")
                .chain(a.iter().copied())
                .map(Into::into)
                .collect();
            verb(&cmd, &args)
        };
        assert_eq!(v(&["run", "x", "--mode", "plann"]), "agent run");
        assert_eq!(
            v(&["--color", "never", "workspace", "diff", "--bogus"]),
            "agent workspace diff"
        );
        assert_eq!(v(&["workspce"]), "agent");
        assert_eq!(v(&["exec", "--", "run"]), "agent exec");
    }

    #[test]
    fn a_clap_error_keeps_its_tips_values_and_the_verbs_help_on_one_line() {
        let rendered = "error: unrecognized subcommand 'workspce'\n\n  tip: a similar subcommand exists: 'workspace'\n\nUsage: agent [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_line(rendered, "agent"),
            "unrecognized subcommand 'workspce'; tip: a similar subcommand exists: 'workspace' (see `agent --help`)"
        );
        let rendered = "error: invalid value 'foo' for '--mode <MODE>'\n  [possible values: default, plan]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_line(rendered, "agent run"),
            "invalid value 'foo' for '--mode <MODE>' [possible values: default, plan] (see `agent run --help`)"
        );
        let rendered = "error: the following required arguments were not provided:\n  <PROMPT>\n\nUsage: agent run --color <WHEN> <PROMPT>\n";
        assert_eq!(
            clap_line(rendered, "agent run"),
            "the following required arguments were not provided: <PROMPT> (see `agent run --help`)"
        );
    }

    #[test]
    fn escapes_terminal_tricks() {
        assert_eq!(sanitize("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(sanitize("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(sanitize("plain"), "plain");
    }
}
