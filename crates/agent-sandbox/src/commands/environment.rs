//! The variables a command sets, and which of them may be set.
//!
//! A variable can change which program runs (`PATH=.; git status` runs `./git`), what a program
//! reads or runs (`HOME=dot git status` reads `dot/.gitconfig`; `GIT_EXTERNAL_DIFF`, `PAGER`,
//! `LD_PRELOAD`, `BASH_ENV`), where `cd` goes (`CDPATH`), how words split (`IFS`), or what the
//! checker took `~` to be. Which variables are harmless is an allowlist:
//! - exported to a program (`X=1 cmd`, `env X=1 cmd`, `export X`, `declare -x X`, `env -u X`):
//!   only [`SAFE_ENV_VARS`];
//! - set in the shell only (`x=1`, `read x`, `printf -v x`, `mapfile x`, `getopts o x`,
//!   `declare x`, `local x`, `unset x`): also a name with a lower-case letter, since bash's own
//!   variables and those the standard utilities read are upper-case (POSIX leaves lower-case
//!   names to applications). Not inside a string another shell runs (`zsh -c '…'`), where
//!   lower-case names can be special (zsh's `path`, `cdpath`).
//!
//! `IFS` given to `read`, `mapfile` or `readarray` (`while IFS= read -r line`) only sets how
//! that builtin splits its input. Names set by `getopts` itself (`OPTARG`, `OPTIND`) are bash's
//! own bookkeeping. A `for NAME
//! in …` loop variable is not in the parse this checker reads (see docs/sandbox.md).

use agent_core::permissions::SAFE_ENV_VARS;
use agent_core::shell::wrappers::{basename, is_assignment};
use agent_core::shell::{Origin, SimpleCommand, Word};

/// One variable a command sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Setting {
    /// Its name.
    pub name: String,
    /// Whether programs the command runs see it.
    pub exported: bool,
}

impl Setting {
    fn new(name: &str, exported: bool) -> Self {
        Self {
            name: name.to_owned(),
            exported,
        }
    }
}

/// Whether setting `s` in a command found at `origin` is harmless.
pub(crate) fn is_harmless(s: &Setting, origin: Origin) -> bool {
    SAFE_ENV_VARS.contains(&s.name.as_str())
        || (!s.exported
            && origin != Origin::ShellString
            && s.name.bytes().any(|b| b.is_ascii_lowercase()))
}

/// The first variable `cmd` sets that is not harmless, with why it is refused.
pub(crate) fn refusal(cmd: &SimpleCommand) -> Option<String> {
    let s = settings(cmd)
        .into_iter()
        .find(|s| !is_harmless(s, cmd.origin))?;
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

/// The builtins that read lines into variables: `IFS` given to one of them (`IFS= read -r
/// line`) only sets how that builtin splits its input.
const LINE_READERS: &[&str] = &["read", "mapfile", "readarray"];

/// Every variable `cmd` sets.
pub(crate) fn settings(cmd: &SimpleCommand) -> Vec<Setting> {
    let bare = cmd.words.is_empty();
    let reads_lines = cmd
        .effective_name()
        .is_some_and(|n| LINE_READERS.contains(&n) && cmd.effective_start() == 0);
    let mut out: Vec<Setting> = cmd
        .assignments
        .iter()
        .filter(|a| !(reads_lines && a.name == "IFS"))
        .map(|a| Setting::new(&a.name, !bare))
        .collect();
    // Wrapper layers: `env X=1 cmd`, `env -u X cmd`, `sudo X=1 cmd`.
    let mut start = 0;
    for layer in &cmd.layers {
        let words = cmd.words.get(start + 1..layer.inner).unwrap_or(&[]);
        let mut i = 0;
        while let Some(w) = words.get(i) {
            i += 1;
            let t = w.text.as_str();
            if let Some((n, _)) = t.split_once('=')
                && is_assignment(t)
            {
                out.push(Setting::new(n, true));
            } else if layer.wrapper == "env" {
                if let Some(n) = t.strip_prefix("--unset=").or_else(|| {
                    t.strip_prefix("-u")
                        .filter(|n| !n.is_empty() && !t.starts_with("--"))
                }) {
                    out.push(Setting::new(n, true));
                } else if (t == "-u" || agent_core::programs::getopt::long_matches(t, "unset"))
                    && let Some(n) = words.get(i)
                {
                    i += 1;
                    out.push(Setting::new(&n.text, true));
                }
            }
        }
        start = layer.inner;
    }
    let words = cmd.effective_words();
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return out;
    };
    let args = &words[1..];
    let name = basename(&head.text);
    match name {
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            let (flags, operands) = declaration(args);
            if !flags.contains(['f', 'F']) {
                let exported = name == "export" || flags.contains('x');
                for w in operands {
                    let n = w.text.split_once('=').map_or(w.text.as_str(), |(n, _)| n);
                    out.push(Setting::new(n.strip_suffix('+').unwrap_or(n), exported));
                }
            }
        }
        "unset" => {
            let (flags, operands) = declaration(args);
            if !flags.contains('f') {
                out.extend(operands.iter().map(|w| Setting::new(&w.text, false)));
            }
        }
        "read" => {
            let (values, operands) = options(args, "adinNptu");
            out.extend(
                values
                    .iter()
                    .filter(|(o, _)| *o == 'a')
                    .map(|(_, v)| Setting::new(v, false)),
            );
            out.extend(operands.iter().map(|w| Setting::new(&w.text, false)));
        }
        "mapfile" | "readarray" => {
            let (_, operands) = options(args, "dnOsuCc");
            out.extend(operands.iter().map(|w| Setting::new(&w.text, false)));
        }
        "getopts" => {
            if let Some(w) = args.get(1) {
                out.push(Setting::new(&w.text, false));
            }
        }
        "printf" => {
            let (values, _) = options(args, "v");
            out.extend(values.iter().map(|(_, v)| Setting::new(v, false)));
        }
        "wait" => {
            let (values, _) = options(args, "p");
            out.extend(values.iter().map(|(_, v)| Setting::new(v, false)));
        }
        _ => {}
    }
    out
}

/// A declaration builtin's flags (`-x`, `+x`, clustered) and its operands.
fn declaration(args: &[Word]) -> (String, &[Word]) {
    let mut flags = String::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t.len() < 2 || !t.starts_with(['-', '+']) {
            break;
        }
        if let Some(f) = t.strip_prefix('-') {
            flags.push_str(f);
        }
        i += 1;
    }
    (flags, args.get(i..).unwrap_or(&[]))
}

/// A builtin's options as bash's `internal_getopt` reads them: clustered letters, those in
/// `with_value` taking the rest of the word or the next word. Returns the option values and
/// the operands.
fn options<'a>(args: &'a [Word], with_value: &str) -> (Vec<(char, String)>, &'a [Word]) {
    let mut values = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t.len() < 2 || !t.starts_with('-') {
            break;
        }
        i += 1;
        for (at, c) in t.char_indices().skip(1) {
            if with_value.contains(c) {
                let rest = &t[at + c.len_utf8()..];
                if rest.is_empty() {
                    if let Some(v) = args.get(i) {
                        values.push((c, v.text.clone()));
                        i += 1;
                    }
                } else {
                    values.push((c, rest.to_owned()));
                }
                break;
            }
        }
    }
    (values, args.get(i..).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(script: &str) -> Vec<(String, bool)> {
        agent_core::shell::parse(script)
            .unwrap()
            .commands
            .iter()
            .flat_map(settings)
            .map(|s| (s.name, s.exported))
            .collect()
    }

    #[test]
    fn every_way_of_setting_a_variable_is_seen() {
        let cases: &[(&str, &str, bool)] = &[
            ("PATH=.", "PATH", false),
            ("PATH=. ls", "PATH", true),
            ("env PATH=. ls", "PATH", true),
            ("env -u GIT_DIR ls", "GIT_DIR", true),
            ("env -uGIT_DIR ls", "GIT_DIR", true),
            ("env --unset=GIT_DIR ls", "GIT_DIR", true),
            ("export PATH=.", "PATH", true),
            ("export PATH", "PATH", true),
            ("declare -x HOME=/x", "HOME", true),
            ("declare HOME=/x", "HOME", false),
            ("local -r IFS=/", "IFS", false),
            ("readonly CDPATH=/", "CDPATH", false),
            ("read -r PATH", "PATH", false),
            ("read -a PATH", "PATH", false),
            ("read -p prompt PATH", "PATH", false),
            ("mapfile -t PATH", "PATH", false),
            ("getopts ab PATH", "PATH", false),
            ("printf -v PATH %s .", "PATH", false),
            ("printf -vPATH %s .", "PATH", false),
            ("unset HOME", "HOME", false),
            ("wait -p PATH", "PATH", false),
        ];
        for (script, name, exported) in cases {
            assert!(
                names(script).contains(&((*name).to_owned(), *exported)),
                "{script}: {:?}",
                names(script)
            );
        }
        assert!(names("export -f f").is_empty());
        assert!(names("IFS= read -r line").iter().all(|(n, _)| n != "IFS"));
        assert!(names("IFS=/").iter().any(|(n, _)| n == "IFS"));
        assert!(names("IFS=/ cat x").iter().any(|(n, _)| n == "IFS"));
        assert!(names("ls -la").is_empty());
    }

    #[test]
    fn only_listed_names_and_lower_case_shell_variables_are_harmless() {
        let top = Origin::TopLevel;
        assert!(is_harmless(&Setting::new("LANG", true), top));
        assert!(is_harmless(&Setting::new("x", false), top));
        assert!(is_harmless(&Setting::new("my_dir", false), top));
        assert!(!is_harmless(&Setting::new("x", true), top));
        assert!(!is_harmless(&Setting::new("PATH", false), top));
        assert!(!is_harmless(&Setting::new("X1", false), top));
        assert!(!is_harmless(
            &Setting::new("path", false),
            Origin::ShellString
        ));
    }
}
