//! The shell options `set` changes, as bash 5.2: `-e` / `errexit`, `-u` / `nounset`, `-x` /
//! `xtrace`, `-o pipefail`; `+e`, `+o NAME` turn them off. `set -euo pipefail` at the top of a
//! script works as in bash.
//!
//! - errexit: a pipeline that fails ends the script with its status, except where bash lets it
//!   fail: the condition of `if` / `elif` / `while` / `until`, any pipeline of a `&&` / `||`
//!   list but the last, a pipeline negated with `!`, and everything inside those.
//! - nounset: expanding an unset variable (`$X`, `${X}`, `${#X}`, `${X#..}`, ...; not
//!   `${X:-..}` and its relatives) prints `X: unbound variable` and ends the script with 127.
//! - xtrace: each simple command is printed on stderr after expansion, `+ ` then its words,
//!   quoted as bash quotes them (`+ echo 'a b'`).
//! - pipefail: a pipeline's status is that of its last stage that failed, 0 when none did.
//!
//! `set` alone prints the shell's variables (`NAME='value'`); `set -o` / `set +o` print the
//! options. Other options (`-f`, `-v`, `-a`, `-C`, ...) and positional parameters (`set --
//! a b`) are refused with status 2.

use std::io::Write;

use super::stream::Fds;
use super::vars::Vars;

/// The options in force.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ShellOptions {
    pub errexit: bool,
    pub nounset: bool,
    pub xtrace: bool,
    pub pipefail: bool,
}

impl ShellOptions {
    fn by_name(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "errexit" => &mut self.errexit,
            "nounset" => &mut self.nounset,
            "xtrace" => &mut self.xtrace,
            "pipefail" => &mut self.pipefail,
            _ => return None,
        })
    }

    fn by_letter(&mut self, letter: char) -> Option<&mut bool> {
        Some(match letter {
            'e' => &mut self.errexit,
            'u' => &mut self.nounset,
            'x' => &mut self.xtrace,
            _ => return None,
        })
    }
}

/// Runs `set ARGS...` on the shell's `options` (`set` alone lists `vars`); the exit status.
pub(crate) fn set(
    args: &[String],
    vars: &Vars,
    shell_options: &mut ShellOptions,
    fds: &mut Fds,
) -> i32 {
    if args.is_empty() {
        let mut out = String::new();
        for (name, value) in vars.all() {
            out.push_str(&format!("{name}={}\n", quote(value)));
        }
        return write(&out, fds);
    }
    let mut options = *shell_options;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let (on, cluster) = match arg.as_bytes().first() {
            Some(b'-') if arg != "-" && arg != "--" => (true, &arg[1..]),
            Some(b'+') if arg != "+" => (false, &arg[1..]),
            _ => {
                fds.diagnose("set: positional parameters are not supported by the agent's shell");
                return 2;
            }
        };
        for letter in cluster.chars() {
            if letter == 'o' {
                i += 1;
                let Some(name) = args.get(i) else {
                    let listing = list(&options, on);
                    return write(&listing, fds);
                };
                match options.by_name(name) {
                    Some(flag) => *flag = on,
                    None => {
                        fds.diagnose(&format!(
                            "set: {name}: invalid option name (the agent's shell has errexit, nounset, xtrace and pipefail)"
                        ));
                        return 2;
                    }
                }
                continue;
            }
            match options.by_letter(letter) {
                Some(flag) => *flag = on,
                None => {
                    fds.diagnose(&format!(
                        "set: -{letter}: invalid option (the agent's shell has -e, -u, -x and -o pipefail)"
                    ));
                    return 2;
                }
            }
        }
        i += 1;
    }
    *shell_options = options;
    0
}

/// `set -o` (a table) or `set +o` (commands that restore the options).
fn list(options: &ShellOptions, table: bool) -> String {
    let rows = [
        ("errexit", options.errexit),
        ("nounset", options.nounset),
        ("pipefail", options.pipefail),
        ("xtrace", options.xtrace),
    ];
    rows.iter()
        .map(|(name, on)| {
            if table {
                format!("{name:<15}\t{}\n", if *on { "on" } else { "off" })
            } else {
                format!("set {}o {name}\n", if *on { '-' } else { '+' })
            }
        })
        .collect()
}

fn write(text: &str, fds: &mut Fds) -> i32 {
    match fds.stdout.write_all(text.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// A word as bash's xtrace and `set` show it: as is when it has only harmless characters,
/// else single-quoted (`'` written `'\''`).
pub(crate) fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_as_xtrace_shows_words() {
        assert_eq!(quote("abc"), "abc");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("x=1"), "x=1");
        assert_eq!(quote("*.txt"), "'*.txt'");
    }

    #[test]
    fn letters_and_names() {
        let mut o = ShellOptions::default();
        *o.by_letter('e').unwrap() = true;
        *o.by_name("pipefail").unwrap() = true;
        assert!(o.errexit && o.pipefail && !o.nounset);
        assert!(o.by_letter('f').is_none());
        assert!(o.by_name("noclobber").is_none());
        assert!(list(&o, true).contains("errexit        \ton"));
        assert!(list(&o, false).contains("set +o nounset"));
    }
}
