//! The session's slash commands: what a line starting with `/` asks for, each with its help.
//!
//! Parsing is separate from doing (`chat.rs` does), so every command's syntax and refusal is
//! tested here without a terminal.

/// One slash command, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slash {
    /// `/help [COMMAND]`.
    Help(Option<String>),
    /// `/status`: the change set.
    Status,
    /// `/diff [PATH]`.
    Diff(Option<String>),
    /// `/commit`: review, ask, commit exactly that review.
    Commit,
    /// `/discard`: drop every change in the shadow (asks).
    Discard,
    /// `/mode MODE`.
    Mode(String),
    /// `/model NAME`.
    Model(String),
    /// `/compact [INSTRUCTIONS]`.
    Compact(Option<String>),
    /// `/cost`.
    Cost,
    /// `/resume [ID]`: list the folder's sessions, or resume one.
    Resume(Option<String>),
    /// `/clear`.
    Clear,
    /// `/add-dir DIR`.
    AddDir(String),
    /// `/exit`.
    Exit,
}

/// Every command: name, arguments, what it does.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "help",
        "[COMMAND]",
        "list the commands, or say what one does",
    ),
    (
        "status",
        "",
        "the change set: what the agent changed in the shadow workspace",
    ),
    (
        "diff",
        "[PATH]",
        "the changes as unified diffs, all or those at or under PATH",
    ),
    (
        "commit",
        "",
        "review the change set, ask, and apply exactly that review to the real folder",
    ),
    (
        "discard",
        "",
        "drop every change in the shadow workspace (asks first)",
    ),
    (
        "mode",
        "MODE",
        "the permission mode from now on: default, acceptEdits, plan, auto, dontAsk, bypassPermissions",
    ),
    ("model", "NAME", "the model from now on (the same provider)"),
    (
        "compact",
        "[INSTRUCTIONS]",
        "summarise the conversation now, optionally saying what to keep",
    ),
    (
        "cost",
        "",
        "tokens in, out and cached in this session, and an estimate in US dollars",
    ),
    (
        "resume",
        "[ID]",
        "list this folder's recent sessions, or leave this one and resume session ID",
    ),
    ("clear", "", "start a new session (the change set stays)"),
    ("add-dir", "DIR", "let the agent work in one more directory"),
    (
        "exit",
        "",
        "leave the session (so do Ctrl-D and Ctrl-C twice)",
    ),
];

/// Parses a line that starts with `/`.
///
/// # Errors
/// One line saying what was wrong and what to type instead (an unknown command names the
/// closest one; a missing argument shows the syntax).
pub fn parse(line: &str) -> Result<Slash, String> {
    let body = line.trim().trim_start_matches('/');
    let (name, rest) = match body.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (body, ""),
    };
    let arg = (!rest.is_empty()).then(|| rest.to_owned());
    let needs = |what: &str| -> Result<String, String> {
        arg.clone()
            .ok_or_else(|| format!("/{name} needs {what}: /{name} {what}"))
    };
    let none = |slash: Slash| -> Result<Slash, String> {
        match &arg {
            None => Ok(slash),
            Some(a) => Err(format!("/{name} takes no argument (got `{a}`)")),
        }
    };
    match name {
        "help" | "?" => Ok(Slash::Help(
            arg.map(|a| a.trim_start_matches('/').to_owned()),
        )),
        "status" => none(Slash::Status),
        "diff" => Ok(Slash::Diff(arg)),
        "commit" => none(Slash::Commit),
        "discard" => none(Slash::Discard),
        "mode" => needs("MODE").map(Slash::Mode),
        "model" => needs("NAME").map(Slash::Model),
        "compact" => Ok(Slash::Compact(arg)),
        "cost" => none(Slash::Cost),
        "resume" => Ok(Slash::Resume(arg)),
        "clear" => none(Slash::Clear),
        "add-dir" => needs("DIR").map(Slash::AddDir),
        "exit" | "quit" => none(Slash::Exit),
        "" => Err("a command's name goes after the `/`: /help lists them".into()),
        other => Err(match closest(other) {
            Some(c) => format!("no command /{other}; did you mean /{c}? (/help lists them)"),
            None => format!("no command /{other}; /help lists them"),
        }),
    }
}

/// The help text: every command, or one.
pub fn help(command: Option<&str>) -> String {
    let line = |(name, args, what): &(&str, &str, &str)| {
        let usage = if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        };
        format!("  {usage:<24} {what}")
    };
    match command {
        Some(c) => match COMMANDS.iter().find(|(n, _, _)| *n == c) {
            Some(entry) => line(entry),
            None => format!("no command /{c}; /help lists them"),
        },
        None => {
            let mut text = String::from(
                "Type a prompt for the agent (end a line with \\ to go on on the next). Commands:\n",
            );
            for entry in COMMANDS {
                text.push_str(&line(entry));
                text.push('\n');
            }
            text.push_str(
                "Ctrl-C stops what runs; Ctrl-C twice at an empty prompt, or Ctrl-D, leaves.",
            );
            text
        }
    }
}

/// The command nearest to `name` by edit distance (at most two edits, or a prefix of it).
fn closest(name: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|(n, _, _)| {
            (
                if n.starts_with(name) {
                    0
                } else {
                    agent_core::spelling::edit_distance(n, name)
                },
                *n,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_parses_with_its_arguments() {
        assert_eq!(parse("/status"), Ok(Slash::Status));
        assert_eq!(
            parse("  /diff src/lib.rs "),
            Ok(Slash::Diff(Some("src/lib.rs".into())))
        );
        assert_eq!(parse("/diff"), Ok(Slash::Diff(None)));
        assert_eq!(
            parse("/mode acceptEdits"),
            Ok(Slash::Mode("acceptEdits".into()))
        );
        assert_eq!(parse("/model gpt-4.1"), Ok(Slash::Model("gpt-4.1".into())));
        assert_eq!(
            parse("/compact keep the test names"),
            Ok(Slash::Compact(Some("keep the test names".into())))
        );
        assert_eq!(
            parse("/help commit"),
            Ok(Slash::Help(Some("commit".into())))
        );
        assert_eq!(parse("/help /diff"), Ok(Slash::Help(Some("diff".into()))));
        assert_eq!(parse("/exit"), Ok(Slash::Exit));
        assert_eq!(parse("/add-dir ../lib"), Ok(Slash::AddDir("../lib".into())));
        assert_eq!(parse("/resume"), Ok(Slash::Resume(None)));
        assert_eq!(
            parse("/resume 0190c2d4"),
            Ok(Slash::Resume(Some("0190c2d4".into())))
        );
    }

    #[test]
    fn a_wrong_command_says_what_to_type() {
        assert_eq!(parse("/mode"), Err("/mode needs MODE: /mode MODE".into()));
        assert_eq!(
            parse("/commit now"),
            Err("/commit takes no argument (got `now`)".into())
        );
        assert_eq!(
            parse("/comit"),
            Err("no command /comit; did you mean /commit? (/help lists them)".into())
        );
        assert_eq!(
            parse("/xyz"),
            Err("no command /xyz; /help lists them".into())
        );
        assert_eq!(
            parse("/stat"),
            Err("no command /stat; did you mean /status? (/help lists them)".into())
        );
        assert_eq!(
            parse("/modle x"),
            Err("no command /modle; did you mean /mode? (/help lists them)".into())
        );
    }

    #[test]
    fn every_command_has_its_help_line() {
        let all = help(None);
        for (name, _, _) in COMMANDS {
            assert!(
                all.contains(&format!("/{name}")),
                "{name} missing from /help"
            );
            let parsed = parse(&format!("/{name}"));
            // Every listed name parses (maybe asking for its argument), never "no command".
            assert!(
                parsed.is_ok() || parsed.as_ref().is_err_and(|e| e.contains("needs")),
                "{name}: {parsed:?}"
            );
        }
        assert!(help(Some("cost")).contains("US dollars"));
    }
}
