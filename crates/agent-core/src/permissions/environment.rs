//! Variables a command sets, and which of them keep it approvable.
//!
//! The shell and the programs it runs read variables to decide what to run and where: `PATH`
//! (`PATH=.; ls` runs `./ls`), `CDPATH` (`cd tmp` goes to `/tmp`), `HOME` (git reads
//! `$HOME/.gitconfig`, `~` expands to it), `IFS`, `GIT_DIR`, `GIT_EXTERNAL_DIFF`, `PAGER`,
//! `LD_PRELOAD`, `npm_config_*`, and any number of others. A list of dangerous names would
//! never be complete, so the rule is an allowlist of what is known to be harmless:
//!
//! - a variable put into a program's environment (`NAME=v cmd`, `env NAME=v cmd`, `sudo
//!   NAME=v cmd`, `export NAME[=v]`, `declare -x`) is harmless only when it is one of
//!   [`SAFE_ENV_VARS`] with a plain static value ([`is_safe_env_assignment`]);
//! - a shell variable (`NAME=v` alone, `read NAME`, `for NAME in …`, `${NAME:=v}`, `printf -v
//!   NAME`, `declare NAME`, `unset NAME`, `coproc NAME`) is harmless when it is one of those,
//!   or when its name is all lowercase (`is_shell_local`): bash reads no lowercase variable
//!   specially in a script, and POSIX reserves lowercase names for applications, so no
//!   standard utility reads one. A shell variable only reaches a program when it is exported,
//!   so uppercase names (which the environment may already export: `PATH`, `HOME`) are not
//!   harmless, and neither is any name once the script turns on `set -a` (everything is then
//!   exported) or `set -k` (assignments anywhere on a command line go to its environment).
//!
//! Every other setting is an environment finding of the safety step (step 4): it
//! asks whatever rule or hook allowed the command (as `git -c core.pager=…` does), except in
//! `bypassPermissions`. So do shell options the checker does not model (`set -P`, `shopt -s
//! cdable_vars`, …) and `hash -p`, which change what later commands run or where `cd` goes.

use crate::programs::getopt::long_matches;
use crate::shell::runtime_eval::is_identifier;
use crate::shell::wrappers::is_assignment;
use crate::shell::{SimpleCommand, Word};

/// Variables an allow rule matches past (`NODE_ENV=test npm test`), and that may be set before
/// a command that stays auto-approvable, when their value is plain ([`is_safe_env_assignment`]).
/// Any other assignment before a command means allow rules do not match it (claude-code.md
/// §3.2 item 3), and step 4 asks.
pub const SAFE_ENV_VARS: &[&str] = &[
    "NODE_ENV",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_ADDRESS",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NAME",
    "LC_NUMERIC",
    "LC_PAPER",
    "LC_TELEPHONE",
    "LC_TIME",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "TERM",
    "TZ",
    "CI",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
];

/// Whether `NAME=value` is known harmless in a program's environment: `NAME` is one of
/// [`SAFE_ENV_VARS`] and the value is static and plain (letters, digits and `_ . , : = @ + -`;
/// `TZ` may also hold `/` between zone names). A locale, `TERM` or `TZ` value with a `/` names
/// a file to load (`LANG=/tmp/x`, `TZ=/etc/x`): a crafted locale or message catalog is code
/// and format strings for every program that reads it.
pub fn is_safe_env_assignment(name: &str, value: &Word) -> bool {
    if !SAFE_ENV_VARS.contains(&name) || !value.is_static() {
        return false;
    }
    let plain = |c: char| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ',' | ':' | '=' | '@' | '+' | '-')
    };
    let text = value.text.as_str();
    if name == "TZ" {
        return text.chars().all(|c| plain(c) || c == '/')
            && !text.starts_with(['/', ':'])
            && !text.split('/').any(|part| part == ".." || part == ".");
    }
    text.chars().all(plain)
}

/// Whether `name` is an ordinary shell variable's name: lowercase letters, digits and `_`.
pub(crate) fn is_shell_local(name: &str) -> bool {
    is_identifier(name)
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// How a command sets a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// An assignment before a command or alone (`NAME=v cmd`, `NAME=v`).
    Assignment,
    /// An assignment or removal a wrapper makes before the command it runs (`env NAME=v cmd`,
    /// `sudo NAME=v cmd`, `env -u NAME cmd`).
    Wrapper,
    /// A name given to a builtin that assigns, declares or unsets it (`read NAME`, `export
    /// NAME`, `unset NAME`, ...).
    Builtin,
}

/// One variable a command sets (or removes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The variable's name, as written (a name only known at run time stays as its text).
    pub name: String,
    /// The value, when the command gives one (`None` for `read NAME`, `unset NAME`,
    /// `env -u NAME`, ...).
    pub value: Option<Word>,
    /// Whether the value goes into (or, removed, out of) a program's environment.
    pub exported: bool,
    /// How the command sets it.
    pub form: Form,
    /// How the command wrote it, for a reason.
    pub shown: String,
}

impl Setting {
    /// Whether this setting leaves the command approvable (see the module doc); `exporting`
    /// is set when the script turns on `set -a` or `set -k`. Removing one of
    /// [`SAFE_ENV_VARS`] from a program's environment (`env -u LANG`) is harmless too.
    pub(crate) fn is_harmless(&self, exporting: bool) -> bool {
        let safe = match &self.value {
            Some(v) => is_safe_env_assignment(&self.name, v),
            None => self.form == Form::Wrapper && SAFE_ENV_VARS.contains(&self.name.as_str()),
        };
        safe || (!self.exported && !exporting && is_shell_local(&self.name))
    }
}

/// Every variable `cmd` sets: its assignments; those of every wrapper before the command it
/// runs (`env NAME=v`, `sudo NAME=v`) and the names `env -u` / `--unset` removes; and the
/// names given to the builtins that assign (`export`, `declare`, `typeset`, `local`,
/// `readonly`, `read`, `mapfile`, `readarray`, `printf -v`, `wait -p`, `getopts`, `unset`).
/// Bash's implicit targets (`REPLY`, `MAPFILE`, `OPTARG`, `OPTIND`) are its own and are not
/// listed. The permission engine and the sandbox's command checker both read a command's
/// variables here, each with its own rule for which are harmless.
pub fn settings(cmd: &SimpleCommand) -> Vec<Setting> {
    let exported = !cmd.words.is_empty();
    let mut out: Vec<Setting> = cmd
        .assignments
        .iter()
        .map(|a| Setting {
            name: a.name.clone(),
            value: Some(a.value.clone()),
            exported,
            form: Form::Assignment,
            shown: a.shown(),
        })
        .collect();
    let mut start = 0;
    for layer in &cmd.layers {
        let words = cmd.words.get(start + 1..layer.inner).unwrap_or(&[]);
        let wrapper = |name: &str, value: Option<Word>, shown: String| Setting {
            name: name.to_owned(),
            value,
            exported: true,
            form: Form::Wrapper,
            shown,
        };
        let mut i = 0;
        while let Some(w) = words.get(i) {
            i += 1;
            let t = w.text.as_str();
            if let Some((name, value)) = t.split_once('=')
                && is_assignment(t)
            {
                let value = Word {
                    text: value.to_owned(),
                    ..w.clone()
                };
                out.push(wrapper(name, Some(value), w.raw.clone()));
            } else if layer.wrapper == "env" {
                if let Some(n) = t.strip_prefix("--unset=").or_else(|| {
                    t.strip_prefix("-u")
                        .filter(|n| !n.is_empty() && !t.starts_with("--"))
                }) {
                    out.push(wrapper(n, None, w.raw.clone()));
                } else if (t == "-u" || long_matches(t, "unset"))
                    && let Some(n) = words.get(i)
                {
                    i += 1;
                    out.push(wrapper(&n.text, None, format!("{} {}", w.raw, n.raw)));
                }
            }
        }
        start = layer.inner;
    }
    out.extend(builtin_settings(cmd.effective_words()));
    out
}

/// The variables an assigning builtin names (`words` starts at its name).
fn builtin_settings(words: &[Word]) -> Vec<Setting> {
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return Vec::new();
    };
    let name = head.text.as_str();
    let args = &words[1..];
    let (flags, operands) = split_options(args, value_letters(name));
    let has = |c: char| flags.iter().any(|(f, _)| *f == c);
    let named = |w: &Word, exported: bool| {
        let (n, value) = match w.text.split_once('=') {
            Some((n, v)) => (
                n.strip_suffix('+').unwrap_or(n),
                Some(Word {
                    text: v.to_owned(),
                    ..w.clone()
                }),
            ),
            None => (w.text.as_str(), None),
        };
        Setting {
            name: n.to_owned(),
            value,
            exported,
            form: Form::Builtin,
            shown: format!("{name} {}", w.raw),
        }
    };
    let unvalued = |w: &Word| Setting {
        value: None,
        ..named(w, false)
    };
    let option_value = |letter: char| {
        flags
            .iter()
            .filter(move |(f, _)| *f == letter)
            .filter_map(|(_, v)| v.clone())
    };
    match name {
        "export" => operands.iter().map(|w| named(w, true)).collect(),
        "declare" | "typeset" | "local" | "readonly" => {
            // `-p` prints and `-f` / `-F` name functions; neither assigns a variable.
            if has('p') || has('f') || has('F') {
                return Vec::new();
            }
            let exported = has('x');
            operands.iter().map(|w| named(w, exported)).collect()
        }
        "read" => option_value('a')
            .chain(operands.iter().map(|w| (*w).clone()))
            .map(|w| unvalued(&w))
            .collect(),
        "mapfile" | "readarray" | "unset" => {
            if name == "unset" && has('f') {
                return Vec::new();
            }
            operands.iter().map(|w| unvalued(w)).collect()
        }
        "printf" => option_value('v').map(|w| unvalued(&w)).collect(),
        "wait" => option_value('p').map(|w| unvalued(&w)).collect(),
        // The name is the second argument (bash reads no options but `--` there); after
        // `--`, the second operand.
        "getopts" => {
            let mut names: Vec<&Word> = args.get(1).into_iter().collect();
            if let Some(w) = operands.get(1)
                && !names.iter().any(|n| std::ptr::eq(*n, *w))
            {
                names.push(w);
            }
            names.into_iter().map(unvalued).collect()
        }
        _ => Vec::new(),
    }
}

/// The option letters of an assigning builtin that take a value (bash's `internal_getopt`).
fn value_letters(builtin: &str) -> &'static str {
    match builtin {
        "read" => "adinNptu",
        "mapfile" | "readarray" => "dnOsuCc",
        "printf" => "v",
        "wait" => "p",
        _ => "",
    }
}

/// A builtin's options (clustered flags; a value attached or in the next word for the letters
/// in `with_value`) and its operands. Options end at `--` or at the first word that is not
/// one; a word only known at run time ends them too.
fn split_options<'a>(
    args: &'a [Word],
    with_value: &str,
) -> (Vec<(char, Option<Word>)>, Vec<&'a Word>) {
    let mut flags = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        let is_option = t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) && w.is_static();
        if !is_option {
            break;
        }
        i += 1;
        for (at, c) in t.char_indices().skip(1) {
            if with_value.contains(c) {
                let rest = &t[at + c.len_utf8()..];
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned()
                } else {
                    Some(Word {
                        text: rest.to_owned(),
                        ..w.clone()
                    })
                };
                flags.push((c, value));
                break;
            }
            flags.push((c, None));
        }
    }
    (flags, args.get(i..).unwrap_or(&[]).iter().collect())
}

/// `set` options known not to change what a command runs, where it runs, what it reads or
/// which variables reach programs (single letters, and the long names of `set -o`).
const HARMLESS_SET_OPTIONS: &[&str] = &[
    "e",
    "u",
    "x",
    "v",
    "E",
    "T",
    "C",
    "f",
    "B",
    "h",
    "errexit",
    "nounset",
    "xtrace",
    "verbose",
    "errtrace",
    "functrace",
    "noclobber",
    "noglob",
    "braceexpand",
    "hashall",
    "pipefail",
];

/// `shopt` options known not to change what a command runs or reads: the file checks judge
/// every glob match with hidden files included, so `dotglob` adds nothing they miss.
const HARMLESS_SHOPT_OPTIONS: &[&str] = &[
    "nullglob",
    "failglob",
    "dotglob",
    "inherit_errexit",
    "lastpipe",
    "globskipdots",
];

/// How a command changes the shell for the commands after it, beyond variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ShellChange {
    /// Every later assignment is exported (`set -a`) or taken from anywhere on a command line
    /// (`set -k`): a shell variable then reaches programs.
    Exporting(String),
    /// An option or table the checker does not model (`set -P`, `shopt -s cdable_vars`,
    /// `hash -p FILE NAME`).
    Unmodelled(String),
}

/// What `cmd` changes in the shell besides variables, if anything.
pub(crate) fn shell_change(cmd: &SimpleCommand) -> Option<ShellChange> {
    let words = cmd.effective_words();
    let head = words.first().filter(|w| w.is_static())?;
    let args = &words[1..];
    let shown = || crate::shell::join(words);
    match head.text.as_str() {
        "set" => {
            let mut options = Vec::new();
            let mut i = 0;
            while let Some(w) = args.get(i) {
                i += 1;
                let t = w.text.as_str();
                if !w.is_static() {
                    return Some(ShellChange::Unmodelled(shown()));
                }
                if t == "--" || t == "-" || !(t.starts_with('-') || t.starts_with('+')) {
                    break;
                }
                for c in t.chars().skip(1) {
                    if c != 'o' {
                        options.push(c.to_string());
                        continue;
                    }
                    // `-o NAME` (also at the end of a cluster: `-euo pipefail`); `set -o`
                    // alone prints the options.
                    match args.get(i) {
                        Some(o) if o.is_static() => {
                            options.push(o.text.clone());
                            i += 1;
                        }
                        Some(_) => return Some(ShellChange::Unmodelled(shown())),
                        None => {}
                    }
                }
            }
            if options
                .iter()
                .any(|o| matches!(o.as_str(), "a" | "k" | "allexport" | "keyword"))
            {
                return Some(ShellChange::Exporting(shown()));
            }
            options
                .iter()
                .any(|o| !HARMLESS_SET_OPTIONS.contains(&o.as_str()))
                .then(|| ShellChange::Unmodelled(shown()))
        }
        "shopt" => {
            let (flags, names) = split_options(args, "");
            let changes = flags.iter().any(|(f, _)| matches!(f, 's' | 'u'));
            let setting_o = flags.iter().any(|(f, _)| *f == 'o');
            let unknown = names
                .iter()
                .any(|n| !n.is_static() || !HARMLESS_SHOPT_OPTIONS.contains(&n.text.as_str()));
            (changes && (unknown || setting_o)).then(|| ShellChange::Unmodelled(shown()))
        }
        "hash" => {
            let (flags, _) = split_options(args, "pt");
            flags
                .iter()
                .any(|(f, _)| *f == 'p')
                .then(|| ShellChange::Unmodelled(shown()))
        }
        _ => None,
    }
}

/// The known-harmless variables in short (`LC_*` for the locale categories).
fn safe_names() -> String {
    let mut names: Vec<&str> = SAFE_ENV_VARS
        .iter()
        .copied()
        .filter(|n| !n.starts_with("LC_"))
        .collect();
    names.insert(2, "LC_*");
    names.join(", ")
}

/// The reason step 4 gives for a setting that is not harmless.
pub(crate) fn setting_reason(s: &Setting, exporting: bool) -> String {
    if s.exported || exporting {
        format!(
            "`{}` puts `{}` into a program's environment, where only {} with plain values are known harmless (PATH, LD_PRELOAD, GIT_DIR, GIT_EXTERNAL_DIFF, PAGER, npm_config_* and many others change what a program runs)",
            s.shown,
            s.name,
            safe_names()
        )
    } else {
        format!(
            "`{}` sets the shell variable `{}`, which the shell, or programs when the environment already exports it, may read (PATH, HOME, IFS, CDPATH, GIT_DIR, ...); a shell variable is known harmless with a lowercase name, or as one of {} with a plain value",
            s.shown,
            s.name,
            safe_names()
        )
    }
}

/// The reason step 4 gives for a shell change.
pub(crate) fn change_reason(c: &ShellChange) -> String {
    match c {
        ShellChange::Exporting(shown) => format!(
            "`{shown}` exports every later shell variable to programs (`set -a`) or takes assignments from anywhere on a command line (`set -k`)"
        ),
        ShellChange::Unmodelled(shown) => format!(
            "`{shown}` changes how the shell finds commands, expands words or changes directory, which the checker does not model"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn all_settings(script: &str) -> Vec<(String, bool)> {
        parse(script)
            .unwrap()
            .commands
            .iter()
            .flat_map(settings)
            .map(|s| (s.name, s.exported))
            .collect()
    }

    #[test]
    fn every_form_that_sets_a_variable_is_found() {
        let n = |v: &[(&str, bool)]| {
            v.iter()
                .map(|(a, b)| ((*a).to_owned(), *b))
                .collect::<Vec<_>>()
        };
        assert_eq!(all_settings("PATH=."), n(&[("PATH", false)]));
        assert_eq!(all_settings("X=1 Y=2 ls"), n(&[("X", true), ("Y", true)]));
        assert_eq!(all_settings("env A=1 git diff"), n(&[("A", true)]));
        assert_eq!(all_settings("sudo -u x B=1 ls"), n(&[("B", true)]));
        assert_eq!(
            all_settings("export A B=1 c"),
            n(&[("A", true), ("B", true), ("c", true)])
        );
        assert_eq!(
            all_settings("declare -rx A=1; local b; readonly C"),
            n(&[("A", true), ("b", false), ("C", false)])
        );
        assert_eq!(all_settings("declare -p PATH; declare -f ls"), n(&[]));
        assert_eq!(
            all_settings("read -r -a ARR x PATH"),
            n(&[("ARR", false), ("x", false), ("PATH", false)])
        );
        assert_eq!(all_settings("read -r; mapfile < f"), n(&[]));
        assert_eq!(all_settings("printf -v IFS %s x"), n(&[("IFS", false)]));
        assert_eq!(all_settings("getopts ab HOME"), n(&[("HOME", false)]));
        assert_eq!(
            all_settings("unset CDPATH; unset -f ls"),
            n(&[("CDPATH", false)])
        );
        assert_eq!(all_settings("mapfile -t LINES < f"), n(&[("LINES", false)]));
        assert_eq!(all_settings("x+=1"), n(&[("x", false)]));
        // Forms the sandbox's command checker found on its own before it used this finder.
        for (script, name, exported) in [
            ("PATH=. ls", "PATH", true),
            ("env -u GIT_DIR ls", "GIT_DIR", true),
            ("env -uGIT_DIR ls", "GIT_DIR", true),
            ("env --unset=GIT_DIR ls", "GIT_DIR", true),
            ("env --uns GIT_DIR ls", "GIT_DIR", true),
            ("export PATH", "PATH", true),
            ("declare HOME=/x", "HOME", false),
            ("local -r IFS=/", "IFS", false),
            ("read -a PATH", "PATH", false),
            ("read -p prompt PATH", "PATH", false),
            ("printf -vPATH %s .", "PATH", false),
            ("wait -p PATH", "PATH", false),
            ("getopts -- ab PATH", "PATH", false),
            ("export -f f", "f", true),
            ("IFS= read -r line", "IFS", true),
        ] {
            assert!(
                all_settings(script).contains(&(name.to_owned(), exported)),
                "{script}: {:?}",
                all_settings(script)
            );
        }
        assert!(all_settings("ls -la").is_empty());
    }

    #[test]
    fn known_harmless_settings() {
        let harmless = |script: &str| {
            parse(script)
                .unwrap()
                .commands
                .iter()
                .flat_map(settings)
                .all(|s| s.is_harmless(false))
        };
        for s in [
            "x=1",
            "dir=build; f=$(ls)",
            "read -r line",
            "LANG=C ls",
            "LC_ALL=C.UTF-8 sort x",
            "TZ=Europe/Paris date",
            "export NO_COLOR=1",
            "env RUST_LOG=info,my_crate=debug cargo test",
            "for f in *; do echo $f; done",
            "env -u LANG ls",
        ] {
            assert!(harmless(s), "{s}");
        }
        for s in [
            "PATH=.",
            "HOME=/tmp",
            "IFS=/",
            "CDPATH=/",
            "GIT_DIR=x git status",
            "GIT_EXTERNAL_DIFF=rm git diff",
            "x=1 ls",
            "npm_config_script_shell=/tmp/x npm test",
            "export x=1",
            "declare -x y=1",
            "LANG=/tmp/evil ls",
            "LANGUAGE=../../tmp/x ls",
            "TZ=/etc/shadow date",
            "TZ=:/etc/x date",
            "TZ=../../etc/x date",
            "TERM=../x ls",
            "LANG=$X ls",
            "env LD_PRELOAD=./x.so ls",
            "read PATH",
            "for PATH in .; do ls; done",
            "unset IFS",
            ": ${CDPATH:=/}",
            "coproc PATH { ls; }",
            "env -u PATH ls",
            "declare $v",
            "read $v",
        ] {
            assert!(!harmless(s), "{s}");
        }
    }

    #[test]
    fn shell_changes() {
        let change = |script: &str| {
            parse(script)
                .unwrap()
                .commands
                .iter()
                .find_map(shell_change)
        };
        for s in [
            "set -e",
            "set -euo pipefail",
            "set +x",
            "set -- a b",
            "set",
            "shopt -s nullglob dotglob",
            "shopt -q extglob",
            "hash -r",
            "hash",
        ] {
            assert_eq!(change(s), None, "{s}");
        }
        for s in ["set -a", "set -o allexport", "set -ek", "set -o keyword"] {
            assert!(matches!(change(s), Some(ShellChange::Exporting(_))), "{s}");
        }
        for s in [
            "set -P",
            "set -o physical",
            "set -o posix",
            "set $opts",
            "shopt -s cdable_vars",
            "shopt -s expand_aliases",
            "shopt -s globstar",
            "shopt -s -o allexport",
            "hash -p ./evil ls",
        ] {
            assert!(matches!(change(s), Some(ShellChange::Unmodelled(_))), "{s}");
        }
    }
}
