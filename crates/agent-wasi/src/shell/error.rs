//! Why a script is refused before it runs, and where.

use std::io;
use std::path::PathBuf;

/// A place in the script text: 1-based line and column, columns counted in characters. The
/// positions of agent-core's lowered shell tree, which the plan is compiled from.
pub use agent_core::shell::tree::Position;

/// Why `Shell(script)` refused a script. Nothing has run when one of these is returned.
///
/// Failures while the script runs (a missing file, a command that is not found, a redirect
/// outside the workspace) are not errors: like bash, the shell prints a message on the
/// script's stderr and the command's exit status says what happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    /// Occurs when the script is not valid shell syntax (unterminated quote, stray operator,
    /// or text the project's shell parser refuses to analyse, such as very deep nesting).
    #[error("{}", parse_message(message, position.as_ref()))]
    Parse {
        /// The parser's message.
        message: String,
        /// Where the parser stopped, when it says.
        position: Option<Position>,
    },
    /// Occurs when the script uses syntax outside the supported subset (see `docs/shell.md`).
    #[error(
        "unsupported shell syntax at {position}: {construct} is not supported by the agent's \
         shell{}",
        hint_suffix(construct)
    )]
    Unsupported {
        /// The construct, e.g. `command substitution $(..)`.
        construct: &'static str,
        /// Where it starts.
        position: Position,
    },
    /// Occurs when the workspace root given in the context cannot be opened.
    #[error("cannot open the shell's workspace root {path:?}: {source}")]
    Workspace {
        /// The host path of the workspace root.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: io::Error,
    },
    /// Occurs when the context's environment does not fit in the shell's variables.
    #[error(
        "the shell's environment holds more than {limit} bytes of values; pass fewer or \
         smaller variables"
    )]
    Environment {
        /// The limit on all variable values together, in bytes.
        limit: usize,
    },
    /// Occurs when the context's working directory is not a directory inside the workspace.
    #[error(
        "the shell's working directory {cwd:?} is not a directory inside the workspace ({reason}); \
         give the workspace's mount or a directory below it, such as {mount:?}"
    )]
    Cwd {
        /// The guest path given.
        cwd: String,
        /// What is wrong with it.
        reason: String,
        /// Where the workspace is mounted.
        mount: String,
    },
    /// Occurs when the context's mount (`ShellContext::with_mount`) cannot be a guest path.
    #[error(
        "cannot mount the workspace at {mount:?}: {reason}; give an absolute path without `.` \
         or `..`, such as \"/\" or the workspace's own path"
    )]
    Mount {
        /// The mount given.
        mount: String,
        /// What is wrong with it.
        reason: String,
    },
}

fn parse_message(message: &str, position: Option<&Position>) -> String {
    match position {
        Some(p) => format!("cannot parse the shell script at {p}: {message}"),
        None => format!("cannot parse the shell script: {message}"),
    }
}

fn hint_suffix(construct: &str) -> String {
    hint(construct).map_or_else(String::new, |h| format!("; {h}"))
}

/// What to write instead of a rejected construct, when there is a short answer.
fn hint(construct: &str) -> Option<&'static str> {
    let hint = if construct.starts_with("command substitution") {
        "run the inner command on its own and use its output in a second call"
    } else if construct.starts_with("here-document") || construct.starts_with("here-string") {
        "write the text to a file first (printf '...' > file) and redirect from it (< file)"
    } else if construct.starts_with("subshell") {
        "group with `{ ..; }` instead (it runs in the same shell), or join the commands with `;`, `&&` or `||`"
    } else if construct.starts_with("brace expansion") {
        "write each word out"
    } else if construct.starts_with("tilde expansion") {
        "write $HOME or the full path instead (`pwd` prints where the workspace is)"
    } else if construct.starts_with("background job") {
        "commands run one at a time; drop the `&`"
    } else if construct.starts_with("parameter expansion operator")
        || construct.starts_with("parameter length")
    {
        "only $NAME, ${NAME} and $? expand"
    } else {
        return None;
    };
    Some(hint)
}

/// Reads the `line L col C` that brush-parser writes into its syntax-error messages.
pub(crate) fn position_in_message(message: &str) -> Option<Position> {
    let at = message.find("line ")?;
    let rest = &message[at + 5..];
    let line_end = rest.find(|c: char| !c.is_ascii_digit())?;
    let line = rest[..line_end].parse().ok()?;
    let rest = rest[line_end..].strip_prefix(" col ")?;
    let col_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let column = rest[..col_end].parse().ok()?;
    Some(Position { line, column })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_read_from_parser_messages() {
        assert_eq!(
            position_in_message("syntax error at line 2 col 7"),
            Some(Position::new(2, 7))
        );
        assert_eq!(
            position_in_message("unterminated quote (detected near line 1 col 6)"),
            Some(Position::new(1, 6))
        );
        assert_eq!(position_in_message("syntax error at end of input"), None);
    }

    #[test]
    fn messages_name_the_construct_and_the_fix() {
        let e = ShellError::Unsupported {
            construct: "command substitution $(..)",
            position: Position::new(1, 6),
        };
        assert_eq!(
            e.to_string(),
            "unsupported shell syntax at line 1, column 6: command substitution $(..) is not \
             supported by the agent's shell; run the inner command on its own and use its \
             output in a second call"
        );
    }
}
