//! GNU `getopt_long` over a program's **complete** option table, as the programs that run
//! another program read their arguments ([`super::wrappers`]: `xargs`, `env`, `timeout`,
//! `nice`, `sudo`, ...). The permission checker and the WASI shell's own `xargs`, `env` and
//! `timeout` parse with this one function, so they cannot disagree about which word is the
//! command (`xargs --replace rm x` runs `rm`: `--replace` takes an optional value, only ever
//! attached).
//!
//! What glibc's `getopt_long` does with an option string that starts with `+`:
//! - options end at the first operand (the command the program runs), or after `--`; a lone
//!   `-` is an operand;
//! - short options cluster (`-0rn2`); one that takes a value takes the rest of its word
//!   (`-n2`, `-I{}`) or, when that is empty and the value is required, the next word;
//!   an optional value is only ever attached (`-i`, `-i{}`);
//! - a long option takes `--name=VALUE`, or `--name VALUE` when the value is required; an
//!   optional value only with `=` (`--replace` takes none, `--replace=R` takes `R`);
//! - a long option may be **abbreviated** to any prefix that names one option (`--max-a` is
//!   `--max-args`, `--sig` is `--signal`); a prefix of several options is ambiguous and an
//!   error, unless they are spellings of the same option (flock's `--nb` and
//!   `--nonblocking`); an exact name wins over the longer names it is a prefix of;
//! - errors carry glibc's wording (`option '--max' is ambiguous; possibilities: ...`), and the
//!   program then prints `Try 'PROGRAM --help' for more information.` and runs nothing.
//!
//! The parse is [`super::getopt::scan`] over a [`TableKind::Complete`] table; the allowlists
//! of the read-only set are read by the same parser as [`TableKind::Allowlist`]: they list
//! only the options they allow, so they cannot resolve an abbreviation, and refuse it.

pub use super::getopt::GetoptError;
use super::getopt::{Arity, Event, OptionEntry, Stop, TableKind, scan};

/// What an option means for the command the program runs, for the permission checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionRole {
    /// Nothing the checker needs: a flag, or a value that is text (a duration, a signal, a
    /// user name).
    Plain,
    /// Its value names a file the program reads (`xargs -a FILE`, `env --env0-from=FILE`).
    ReadsFile,
    /// Its value names a file the program writes (`time -o FILE`, `watch -s DIR`).
    WritesFile,
    /// With it, the program runs no command: it prints help, a version, a setting, or looks a
    /// name up (`--help`, `command -v`, `taskset -p`, `sudo -l`).
    RunsNothing,
    /// Its value is a command line the program runs through a shell (`flock -c STRING`).
    RunsString,
    /// Its value is split into words that take its place among the program's own arguments,
    /// options included (`env -S STRING`).
    SplitString,
    /// The command runs in another directory (`env -C DIR`, `sudo -D DIR`, `sudo -i`), so its
    /// relative paths name other files than those the checker resolves from the session's.
    Chdir,
    /// `xargs -I R` / `--replace[=R]`: the words of the command that hold `R` are filled in
    /// from xargs' input (the value, `{}` when an optional value is not given).
    Replace,
}

/// One option of a program's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opt {
    /// The name the program's code knows it by: its long name, or for a short option with no
    /// long form a descriptive one (xargs' `-I` is `replace-strict`). Several entries may share
    /// a name when their spellings take their values differently (sudo's `-E` and
    /// `--preserve-env[=LIST]`).
    pub name: &'static str,
    /// Its short letter, if any.
    pub short: Option<char>,
    /// Its long spellings, without `--` (several for aliases: flock's `timeout` and `wait`).
    pub long: &'static [&'static str],
    /// Whether it takes a value.
    pub arity: Arity,
    /// What it means for the command run.
    pub role: OptionRole,
}

impl Opt {
    /// A flag.
    pub const fn flag(
        name: &'static str,
        short: Option<char>,
        long: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            short,
            long,
            arity: Arity::None,
            role: OptionRole::Plain,
        }
    }

    /// An option with a required value.
    pub const fn value(
        name: &'static str,
        short: Option<char>,
        long: &'static [&'static str],
    ) -> Self {
        Self {
            arity: Arity::Required,
            ..Self::flag(name, short, long)
        }
    }

    /// An option with an optional value, only ever attached.
    pub const fn optional(
        name: &'static str,
        short: Option<char>,
        long: &'static [&'static str],
    ) -> Self {
        Self {
            arity: Arity::Optional,
            ..Self::flag(name, short, long)
        }
    }

    /// The same option with `role`.
    pub const fn role(self, role: OptionRole) -> Self {
        Self { role, ..self }
    }
}

impl OptionEntry for Opt {
    fn short(&self) -> Option<char> {
        self.short
    }
    fn long(&self) -> &[&'static str] {
        self.long
    }
    fn arity(&self) -> Arity {
        self.arity
    }
}

/// A program's complete option table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The program's name, for messages (`xargs: invalid option -- 'z'`).
    pub program: &'static str,
    /// Every option it takes.
    pub opts: &'static [Opt],
    /// `nice`: a word `-N`, `--N` or `-+N` (N a digit) is the option of this name with the
    /// value after the dash, wherever an option may stand (`nice -10 cmd`).
    pub numeric: Option<&'static str>,
}

/// One option found in the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given<'o> {
    /// Its table entry.
    pub opt: &'o Opt,
    /// Its value, if it has one.
    pub value: Option<String>,
    /// Index of the argument the option is written in.
    pub at: usize,
    /// Index of the argument that holds the value: `at` when it is attached (`-n2`,
    /// `--max-args=2`), `at + 1` when it is the next argument.
    pub value_at: Option<usize>,
}

/// The options at the start of a command's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed<'o> {
    /// The options, in order (up to the error, if there is one).
    pub given: Vec<Given<'o>>,
    /// Index of the first operand; the arguments' length when there is none.
    pub operands: usize,
    /// Whether `--` ended the options (the first operand may then start with `-`).
    pub dashdash: bool,
    /// Why the arguments do not parse: the program prints this and runs nothing.
    pub error: Option<GetoptError>,
}

impl Options {
    /// A usage error as the program prints it: `message`, then the `Try 'PROGRAM --help'` hint.
    pub fn usage(&self, message: String) -> Vec<String> {
        vec![
            message,
            format!("Try '{} --help' for more information.", self.program),
        ]
    }

    /// Parses the options at the start of `args` (the arguments after the program's name).
    pub fn parse<S: AsRef<str>>(&self, args: &[S]) -> Parsed<'_> {
        let numeric = |arg: &str| {
            self.numeric_option(arg)
                .map(|opt| (opt, arg.trim_start_matches('-').to_owned()))
        };
        let scanned = scan(self.opts, TableKind::Complete, args, numeric, |_, _| {
            Ok::<(), std::convert::Infallible>(())
        });
        let given = scanned
            .events
            .into_iter()
            .filter_map(|e| match e {
                Event::Opt(opt, at, value) => Some(Given {
                    opt,
                    value_at: value.as_ref().map(|v| v.at),
                    value: value.map(|v| v.text),
                    at,
                }),
                Event::Operand(_) => None,
            })
            .collect();
        let error = scanned.stop.map(|stop| match stop {
            Stop::Getopt(e) => e,
            Stop::Abbreviated(name) => GetoptError::UnknownLong(name),
            Stop::Guard(never) => match never {},
        });
        Parsed {
            given,
            operands: scanned.operands,
            dashdash: scanned.dashdash,
            error,
        }
    }

    /// Parses as [`Options::parse`], calling `apply(name, value)` for each option in order, as
    /// the program's `while (getopt_long (...))` loop would; the index of the first operand.
    /// The error is the lines the program prints: `apply`'s own, or getopt's followed by the
    /// `Try` hint, whichever comes first in the arguments.
    ///
    /// # Errors
    /// The first error, as the lines to print.
    pub fn parse_with<S: AsRef<str>>(
        &self,
        args: &[S],
        mut apply: impl FnMut(&'static str, Option<String>) -> Result<(), Vec<String>>,
    ) -> Result<usize, Vec<String>> {
        let parsed = self.parse(args);
        for g in parsed.given {
            apply(g.opt.name, g.value)?;
        }
        match parsed.error {
            Some(e) => Err(self.usage(e.message(self.program))),
            None => Ok(parsed.operands),
        }
    }

    /// The option a numeric word (`-10`, `--10`, `-+10`) stands for, when the table has one.
    fn numeric_option(&self, arg: &str) -> Option<&'static Opt> {
        let name = self.numeric?;
        let bytes = arg.as_bytes();
        let digit_at = 1 + usize::from(matches!(bytes.get(1), Some(b'-' | b'+')));
        (bytes.first() == Some(&b'-') && bytes.get(digit_at).is_some_and(u8::is_ascii_digit))
            .then(|| self.opts.iter().find(|o| o.name == name))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEMO: Options = Options {
        program: "demo",
        opts: &[
            Opt::flag("all", Some('a'), &["all"]),
            Opt::value("number", Some('n'), &["number"]),
            Opt::optional("eof", Some('e'), &["eof"]),
            Opt::flag("every", None, &["every"]),
            Opt::flag("nonblocking", Some('b'), &["nonblocking", "nb"]),
            Opt::value("max-args", None, &["max-args"]),
            Opt::value("max-chars", None, &["max-chars"]),
            Opt::flag("max", None, &["max"]),
        ],
        numeric: None,
    };

    /// The options seen, by name with their values, and where the operands start.
    type Seen = (Vec<(&'static str, Option<String>)>, usize);

    fn parse(args: &[&str]) -> Result<Seen, GetoptError> {
        let p = DEMO.parse(args);
        match p.error {
            Some(e) => Err(e),
            None => Ok((
                p.given.into_iter().map(|g| (g.opt.name, g.value)).collect(),
                p.operands,
            )),
        }
    }

    fn opt(name: &'static str, value: Option<&str>) -> (&'static str, Option<String>) {
        (name, value.map(str::to_owned))
    }

    #[test]
    fn options_end_at_the_first_operand_or_after_dashdash() {
        assert_eq!(
            parse(&["-an", "3", "cmd", "-a"]).unwrap(),
            (vec![opt("all", None), opt("number", Some("3"))], 2)
        );
        assert_eq!(
            parse(&["-n3", "--", "-a"]).unwrap(),
            (vec![opt("number", Some("3"))], 2)
        );
        assert_eq!(parse(&["-", "x"]).unwrap(), (vec![], 0));
        assert_eq!(parse(&["-a"]).unwrap(), (vec![opt("all", None)], 1));
        assert!(DEMO.parse(&["--", "x"]).dashdash);
    }

    #[test]
    fn long_options_take_unique_prefixes_and_their_values() {
        assert_eq!(
            parse(&["--num=4", "--al", "--number", "5", "x"]).unwrap(),
            (
                vec![
                    opt("number", Some("4")),
                    opt("all", None),
                    opt("number", Some("5"))
                ],
                4
            )
        );
        assert_eq!(
            parse(&["--eof", "x"]).unwrap(),
            (vec![opt("eof", None)], 1),
            "an optional value only with ="
        );
        assert_eq!(parse(&["-eX"]).unwrap(), (vec![opt("eof", Some("X"))], 1));
        assert_eq!(
            parse(&["--max-a=1"]).unwrap(),
            (vec![opt("max-args", Some("1"))], 1)
        );
        assert_eq!(
            parse(&["--max", "x"]).unwrap(),
            (vec![opt("max", None)], 1),
            "an exact name wins over the longer names it begins"
        );
        assert_eq!(
            parse(&["--n"]).unwrap_err(),
            GetoptError::Ambiguous {
                given: "n".into(),
                candidates: vec!["number", "nonblocking", "nb"]
            },
            "glibc lists every spelling that is not the first option's"
        );
        assert_eq!(
            parse(&["--no"]).unwrap(),
            (vec![opt("nonblocking", None)], 1)
        );
    }

    #[test]
    fn values_say_where_they_are() {
        let p = DEMO.parse(&["-an5", "--number", "6", "--number=7", "-e", "x"]);
        let at: Vec<_> = p.given.iter().map(|g| (g.at, g.value_at)).collect();
        assert_eq!(
            at,
            [
                (0, None),
                (0, Some(0)),
                (1, Some(2)),
                (3, Some(3)),
                (4, None)
            ]
        );
        assert_eq!(p.operands, 5);
    }

    #[test]
    fn numeric_words_are_the_numeric_option() {
        const NICE: Options = Options {
            program: "nice",
            opts: &[Opt::value("adjustment", Some('n'), &["adjustment"])],
            numeric: Some("adjustment"),
        };
        for (args, value, operands) in [
            (&["-10", "x"][..], "10", 1),
            (&["--5", "x"][..], "5", 1),
            (&["-+5", "x"][..], "+5", 1),
            (&["-n", "-5", "x"][..], "-5", 2),
        ] {
            let p = NICE.parse(args);
            assert_eq!(p.error, None, "{args:?}");
            assert_eq!(p.given[0].value.as_deref(), Some(value), "{args:?}");
            assert_eq!(p.operands, operands, "{args:?}");
        }
        assert_eq!(
            NICE.parse(&["-x5"]).error,
            Some(GetoptError::UnknownShort('x'))
        );
    }

    #[test]
    fn errors_use_glibc_wording() {
        let first = |args: &[&str]| parse(args).unwrap_err().message("demo");
        assert_eq!(first(&["--x=1"]), "demo: unrecognized option '--x=1'");
        assert_eq!(first(&["-z"]), "demo: invalid option -- 'z'");
        assert_eq!(first(&["-n"]), "demo: option requires an argument -- 'n'");
        assert_eq!(
            first(&["--numb"]),
            "demo: option '--number' requires an argument"
        );
        assert_eq!(
            first(&["--al=1"]),
            "demo: option '--all' doesn't allow an argument"
        );
        assert_eq!(
            first(&["--e"]),
            "demo: option '--e' is ambiguous; possibilities: '--eof' '--every'"
        );
        assert_eq!(
            first(&["--max-=2"]),
            "demo: option '--max-=2' is ambiguous; possibilities: '--max-args' '--max-chars'"
        );
        assert_eq!(
            DEMO.usage("demo: x".into())[1],
            "Try 'demo --help' for more information."
        );
    }

    #[test]
    fn parse_with_applies_in_order_then_reports_the_error() {
        let mut seen = Vec::new();
        let r = DEMO.parse_with(&["-a", "-z"], |name, _| {
            seen.push(name);
            Ok(())
        });
        assert_eq!(seen, ["all"]);
        assert_eq!(r.unwrap_err()[0], "demo: invalid option -- 'z'");
        let r = DEMO.parse_with(&["-n", "x", "-z"], |_, v| Err(vec![format!("bad {v:?}")]));
        assert_eq!(
            r.unwrap_err(),
            ["bad Some(\"x\")"],
            "apply's error comes first"
        );
    }
}
