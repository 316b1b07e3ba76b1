//! Commands that run another command given in their arguments (`timeout 5 rm x`, `sudo rm x`,
//! `xargs rm`), and how to find the command they wrap: each wrapper's arguments are read with
//! its own complete option table ([`crate::programs::wrappers`]), as the program reads them.
//!
//! Two classes, as in Claude Code (claude-code.md §3.2):
//! - **transparent** wrappers are stripped for allow and deny matching alike: `timeout`, `time`,
//!   `nice`, `nohup`, `stdbuf`, `command` (not `command -v`), `builtin`, `noglob`, `exec` and
//!   `xargs` without options;
//! - **deny-only** wrappers are seen through by deny and ask rules but not by allow rules: `env`,
//!   `sudo`, `doas`, `watch`, `ionice`, `setsid`, `flock`, `chrt`, `taskset`, `nocorrect` and
//!   `xargs` with options. An allow rule must name them. `watch`, `setsid`, `ionice` and `flock`
//!   are exec wrappers: only an exact-string allow rule approves them.
//!
//! A wrapper whose arguments do not parse as the program parses them (an unknown or ambiguous
//! option, a word only known at run time where an option or the command may stand) is not
//! seen through: [`Unwrapped::unknown`] says why, and the parse reports it as an
//! [`super::IssueKind::Wrapper`] issue, so the command is never auto-approved.

use super::Word;
use crate::programs::wrappers::{self as tables, Peel};

/// How one wrapper layer was recognised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The wrapper's name, e.g. `timeout`.
    pub wrapper: &'static str,
    /// Index (into the command's words) of the first word of the wrapped command; the number
    /// of words when the wrapper runs a command line given as a string ([`Layer::script`]).
    pub inner: usize,
    /// Whether allow rules see through this wrapper.
    pub transparent: bool,
    /// Whether the wrapped command gets more arguments at run time, after its own: the items
    /// `xargs` reads (without `-I`). They can be anything, options included.
    pub appends_input: bool,
    /// The command line the wrapper runs through a shell or splits into words (`flock F -c
    /// STRING`, `env -S STRING`, `watch` without `-x`), parsed as a nested script. The last
    /// layer then.
    pub script: Option<Word>,
    /// Files the wrapper itself writes (`time -o FILE`, `flock FILE`, `watch -s DIR`).
    pub writes: Vec<Word>,
    /// Files the wrapper itself reads (`xargs -a FILE`, `env --env0-from=FILE`).
    pub reads: Vec<Word>,
}

/// Every wrapper layer at the head of a command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unwrapped {
    /// The layers, outermost first.
    pub layers: Vec<Layer>,
    /// Why the command the innermost wrapper runs is not known, if it is not.
    pub unknown: Option<String>,
}

/// Wrappers that execute their arguments in a way a prefix rule cannot vouch for: only an
/// exact-string allow rule approves them (claude-code.md §3.2 item 5).
pub(crate) fn is_exec_wrapper(name: &str) -> bool {
    tables::is_exec_wrapper(name)
}

/// The basename of a command word (`/usr/bin/rm` → `rm`, `./rm` → `rm`).
pub fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The most layers peeled (each consumes at least its own name, so peeling ends anyway).
const MAX_LAYERS: usize = 32;

/// Peels every wrapper layer off `words`, outermost first. Words that `xargs -I R` fills from
/// its input (those holding `R`) are marked [`Word::dynamic`]: their text is only known at
/// run time.
pub fn unwrap(words: &mut [Word]) -> Unwrapped {
    let mut out = Unwrapped::default();
    let mut start = 0;
    while start < words.len() && out.layers.len() < MAX_LAYERS {
        match tables::peel(words, start) {
            Peel::None => break,
            Peel::Unknown(why) => {
                out.unknown = Some(why);
                break;
            }
            Peel::Layer(layer, filled) => {
                for i in filled {
                    if let Some(w) = words.get_mut(i) {
                        w.dynamic = true;
                    }
                }
                let last = layer.script.is_some();
                start = layer.inner;
                out.layers.push(layer);
                if last {
                    break;
                }
            }
        }
    }
    out
}

/// The word that stands for the items `xargs` appends: any number of words, each possibly an
/// option, only known at run time.
pub(super) fn input_items() -> Word {
    let text = "(the items xargs reads)";
    Word {
        text: text.to_owned(),
        raw: text.to_owned(),
        dynamic: true,
        splits: true,
        ..Word::default()
    }
}

/// `NAME=value` with a valid shell identifier before `=`.
pub(crate) fn is_assignment(arg: &str) -> bool {
    match arg.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    fn inner(s: &str) -> Vec<(&'static str, usize, bool)> {
        unwrap(&mut words(s))
            .layers
            .into_iter()
            .map(|l| (l.wrapper, l.inner, l.transparent))
            .collect()
    }

    #[test]
    fn layers() {
        assert_eq!(inner("timeout 5 rm x"), [("timeout", 2, true)]);
        assert_eq!(inner("timeout -s KILL 5 rm x"), [("timeout", 4, true)]);
        assert_eq!(inner("timeout --signal=KILL 5 rm"), [("timeout", 3, true)]);
        assert_eq!(inner("timeout --sig KILL 5 rm"), [("timeout", 4, true)]);
        assert_eq!(inner("nice -n 10 rm"), [("nice", 3, true)]);
        assert_eq!(inner("nice -10 rm"), [("nice", 2, true)]);
        assert_eq!(
            inner("sudo -u root env A=1 rm"),
            [("sudo", 3, false), ("env", 5, false)]
        );
        assert_eq!(
            inner("nohup time rm"),
            [("nohup", 1, true), ("time", 2, true)]
        );
        assert_eq!(inner("xargs rm"), [("xargs", 1, true)]);
        assert_eq!(inner("xargs -0 rm"), [("xargs", 2, false)]);
        assert_eq!(inner("xargs -I {} rm {}"), [("xargs", 3, false)]);
        assert_eq!(inner("xargs --replace rm x"), [("xargs", 2, false)]);
        assert_eq!(inner("xargs --max-a 1 rm x"), [("xargs", 3, false)]);
        assert_eq!(inner("env --u X rm x"), [("env", 3, false)]);
        assert_eq!(inner("/usr/bin/sudo rm"), [("sudo", 1, false)]);
        assert_eq!(inner("flock /tmp/l rm"), [("flock", 2, false)]);
        assert_eq!(inner("stdbuf -oL rm"), [("stdbuf", 2, true)]);
    }

    #[test]
    fn not_wrappers() {
        assert!(inner("command -v rm").is_empty());
        assert!(inner("sudo -s").is_empty());
        assert!(inner("xargs").is_empty());
        assert!(inner("git status").is_empty());
        assert!(inner("timeout 5").is_empty());
    }

    #[test]
    fn a_bad_option_stops_the_peeling_with_a_reason() {
        for (s, layers, why) in [
            ("xargs --max 1 rm", 0, "option '--max' is ambiguous"),
            (
                "timeout 5 env --bogus rm",
                1,
                "unrecognized option '--bogus'",
            ),
            (
                "nice -n 1 xargs $OPTS rm",
                1,
                "`$OPTS` is only known at run time",
            ),
        ] {
            let mut w = crate::shell::parse(s).unwrap().commands.remove(0).words;
            let u = unwrap(&mut w);
            assert_eq!(u.layers.len(), layers, "{s}");
            assert!(
                u.unknown.as_deref().is_some_and(|u| u.contains(why)),
                "{s}: {u:?}"
            );
        }
    }

    #[test]
    fn xargs_replace_marks_the_words_it_fills() {
        let mut w = words("xargs -I% cp % dest/%.bak x");
        let u = unwrap(&mut w);
        assert_eq!(u.layers[0].inner, 2);
        assert!(!u.layers[0].appends_input);
        let dynamic: Vec<bool> = w.iter().map(|w| w.dynamic).collect();
        assert_eq!(dynamic, [false, false, false, true, true, false]);
        let mut w = words("xargs -I% -n 2 cp %");
        assert!(
            unwrap(&mut w).layers[0].appends_input,
            "-n after -I may turn it off"
        );
    }

    #[test]
    fn assignments() {
        assert!(is_assignment("A=1"));
        assert!(is_assignment("_a9="));
        assert!(!is_assignment("9a=1"));
        assert!(!is_assignment("--x=1"));
        assert!(!is_assignment("a-b=1"));
    }
}
