//! Which of the variables a command sets may be set.
//!
//! A variable can change which program runs (`PATH=.; git status` runs `./git`), what a program
//! reads or runs (`HOME=dot git status` reads `dot/.gitconfig`; `GIT_EXTERNAL_DIFF`, `PAGER`,
//! `LD_PRELOAD`, `BASH_ENV`), where `cd` goes (`CDPATH`), how words split (`IFS`), or what the
//! checker took `~` to be. The variables a command sets are found by the permission engine's
//! finder ([`agent_core::permissions::environment::settings`]: assignments, `env`/`sudo`
//! assignments and `env -u`, and the builtins that assign); which are harmless is an
//! allowlist:
//! - exported to a program (`X=1 cmd`, `env X=1 cmd`, `export X`, `declare -x X`, `env -u X`):
//!   only [`SAFE_ENV_VARS`];
//! - set in the shell only (`x=1`, `read x`, `printf -v x`, `mapfile x`, `getopts o x`,
//!   `declare x`, `local x`, `unset x`): also a name with a lower-case letter, since bash's own
//!   variables and those the standard utilities read are upper-case (POSIX leaves lower-case
//!   names to applications). Not inside a string another shell runs (`zsh -c '…'`), where
//!   lower-case names can be special (zsh's `path`, `cdpath`), and not a name only known at
//!   run time (`declare $v`, `read $v`).
//!
//! `IFS` assigned before `read`, `mapfile` or `readarray` (`while IFS= read -r line`) only sets
//! how that builtin splits its input. Names set by `getopts` itself (`OPTARG`, `OPTIND`) are
//! bash's own bookkeeping.

use agent_core::permissions::SAFE_ENV_VARS;
use agent_core::permissions::environment::{Form, Setting, settings};
use agent_core::shell::runtime_eval::is_identifier;
use agent_core::shell::{Origin, SimpleCommand};

/// The builtins that read lines into variables: `IFS` given to one of them (`IFS= read -r
/// line`) only sets how that builtin splits its input.
const LINE_READERS: &[&str] = &["read", "mapfile", "readarray"];

/// Whether setting `s` in `cmd` is harmless.
fn is_harmless(s: &Setting, cmd: &SimpleCommand) -> bool {
    let splits_input = s.form == Form::Assignment
        && s.name == "IFS"
        && cmd.effective_start() == 0
        && cmd
            .effective_name()
            .is_some_and(|n| LINE_READERS.contains(&n));
    splits_input
        || SAFE_ENV_VARS.contains(&s.name.as_str())
        || (!s.exported
            && cmd.origin != Origin::ShellString
            && is_identifier(&s.name)
            && s.name.bytes().any(|b| b.is_ascii_lowercase()))
}

/// The first variable `cmd` sets that is not harmless, with why it is refused.
pub(crate) fn refusal(cmd: &SimpleCommand) -> Option<String> {
    let s = settings(cmd).into_iter().find(|s| !is_harmless(s, cmd))?;
    let how = if s.exported { "exports" } else { "sets" };
    Some(format!(
        "`{cmd}` {how} `{}`, which can change which program runs or which files it reads; only {} may be set{}",
        s.name,
        SAFE_ENV_VARS.join(", "),
        if cmd.origin == Origin::ShellString {
            ""
        } else {
            ", and shell variables with a lower-case name that are not exported (`x=1`)"
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(script: &str) -> bool {
        agent_core::shell::parse(script)
            .unwrap()
            .commands
            .iter()
            .any(|c| refusal(c).is_some())
    }

    #[test]
    fn only_listed_names_and_lower_case_shell_variables_are_harmless() {
        for s in [
            "LANG=C ls",
            "x=1",
            "my_dir=x",
            "myDir=x",
            "IFS= read -r line",
            "IFS=: mapfile -t a",
            "env -u LANG ls",
            "read -r line",
        ] {
            assert!(!refused(s), "{s}");
        }
        for s in [
            "x=1 ls",
            "export x=1",
            "PATH=.",
            "X1=2",
            "IFS=/",
            "IFS=/ cat x",
            "IFS= read -r IFS",
            "env IFS= read -r line",
            "zsh -c 'path=x'",
            "declare $v",
            "read $v",
            "env -u PATH ls",
            "export -f f",
        ] {
            assert!(refused(s), "{s}");
        }
    }
}
