//! Commands that run another command given in their arguments (`timeout 5 rm x`, `sudo rm x`,
//! `xargs rm`), and how to find the command they wrap.
//!
//! Two classes, as in Claude Code (claude-code.md §3.2):
//! - **transparent** wrappers are stripped for allow and deny matching alike: `timeout`, `time`,
//!   `nice`, `nohup`, `stdbuf`, `command` (not `command -v`), `builtin`, `noglob`, `exec` and
//!   `xargs` without flags;
//! - **deny-only** wrappers are seen through by deny and ask rules but not by allow rules: `env`,
//!   `sudo`, `doas`, `watch`, `ionice`, `setsid`, `flock`, `chrt`, `taskset`, `nocorrect` and
//!   `xargs` with flags. An allow rule must name them. `watch`, `setsid`, `ionice` and `flock`
//!   are exec wrappers: only an exact-string allow rule approves them.

use super::Word;

/// How one wrapper layer was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The wrapper's name, e.g. `timeout`.
    pub wrapper: &'static str,
    /// Index (into the command's words) of the first word of the wrapped command.
    pub inner: usize,
    /// Whether allow rules see through this wrapper.
    pub transparent: bool,
}

/// Static description of one wrapper's command line.
struct Spec {
    name: &'static str,
    /// Short options that take an argument (`-n 5` or `-n5`).
    short_with_arg: &'static str,
    /// Long options that take a separate argument when written without `=`.
    long_with_arg: &'static [&'static str],
    /// Positional arguments before the wrapped command (`timeout DURATION`, `flock FILE`).
    positionals: usize,
    /// Whether `NAME=value` arguments may appear before the command (`env`, `sudo`).
    assignments: bool,
    /// Whether allow rules see through it.
    transparent: bool,
    /// Whether `-5`-style numeric options are accepted (`nice -10`).
    numeric_flags: bool,
}

const SPECS: &[Spec] = &[
    spec(
        "timeout",
        "sk",
        &["--signal", "--kill-after"],
        1,
        false,
        true,
    ),
    spec("time", "fo", &["--format", "--output"], 0, false, true),
    Spec {
        numeric_flags: true,
        ..spec("nice", "n", &["--adjustment"], 0, false, true)
    },
    spec("nohup", "", &[], 0, false, true),
    spec(
        "stdbuf",
        "ioe",
        &["--input", "--output", "--error"],
        0,
        false,
        true,
    ),
    spec("command", "", &[], 0, false, true),
    spec("builtin", "", &[], 0, false, true),
    spec("noglob", "", &[], 0, false, true),
    spec("exec", "a", &[], 0, false, true),
    spec(
        "xargs",
        "InPLsdEa",
        &[
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
        0,
        false,
        true,
    ),
    spec(
        "env",
        "uCS",
        &["--unset", "--chdir", "--split-string"],
        0,
        true,
        false,
    ),
    spec(
        "sudo",
        "ugpCDrtTUh",
        &[
            "--user",
            "--group",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--host",
        ],
        0,
        true,
        false,
    ),
    spec("doas", "uC", &[], 0, false, false),
    spec(
        "watch",
        "nd",
        &["--interval", "--differences"],
        0,
        false,
        false,
    ),
    spec(
        "ionice",
        "cnp",
        &["--class", "--classdata", "--pid"],
        0,
        false,
        false,
    ),
    spec("setsid", "", &[], 0, false, false),
    spec(
        "flock",
        "wEc",
        &["--timeout", "--conflict-exit-code", "--command"],
        1,
        false,
        false,
    ),
    spec("chrt", "", &[], 1, false, false),
    spec("taskset", "", &[], 1, false, false),
    spec("nocorrect", "", &[], 0, false, false),
];

const fn spec(
    name: &'static str,
    short_with_arg: &'static str,
    long_with_arg: &'static [&'static str],
    positionals: usize,
    assignments: bool,
    transparent: bool,
) -> Spec {
    Spec {
        name,
        short_with_arg,
        long_with_arg,
        positionals,
        assignments,
        transparent,
        numeric_flags: false,
    }
}

/// Wrappers that execute their arguments in a way a prefix rule cannot vouch for: only an
/// exact-string allow rule approves them (claude-code.md §3.2 item 5).
pub const EXEC_WRAPPERS: &[&str] = &["watch", "setsid", "ionice", "flock"];

/// The basename of a command word (`/usr/bin/rm` → `rm`, `./rm` → `rm`).
pub fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Peels every wrapper layer off `words`, outermost first.
pub fn unwrap(words: &[Word]) -> Vec<Layer> {
    let mut layers = Vec::new();
    let mut start = 0;
    // Each layer consumes at least its own name, so this ends; the bound is a belt and braces.
    while start < words.len() && layers.len() < 32 {
        let Some(layer) = peel(words, start) else {
            break;
        };
        start = layer.inner;
        layers.push(layer);
    }
    layers
}

/// Recognises one wrapper at `words[start]`.
fn peel(words: &[Word], start: usize) -> Option<Layer> {
    let head = words.get(start)?;
    if head.dynamic || head.glob {
        return None;
    }
    let name = basename(&head.text);
    let spec = SPECS.iter().find(|s| s.name == name)?;
    let mut i = start + 1;
    let mut saw_option = false;
    while let Some(w) = words.get(i) {
        let arg = w.text.as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            saw_option = true;
            let name_part = long.split('=').next().unwrap_or(long);
            let needs_arg = !long.contains('=')
                && spec
                    .long_with_arg
                    .iter()
                    .any(|l| l.trim_start_matches("--") == name_part);
            i += if needs_arg { 2 } else { 1 };
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            saw_option = true;
            let flags = &arg[1..];
            if spec.numeric_flags && flags.bytes().all(|b| b.is_ascii_digit()) {
                i += 1;
                continue;
            }
            if spec.name == "command" && flags.contains(['v', 'V']) {
                return None; // `command -v x` looks `x` up; it does not run it
            }
            let mut consumed = 1;
            for (pos, c) in flags.char_indices() {
                if spec.short_with_arg.contains(c) {
                    if pos + c.len_utf8() == flags.len() {
                        consumed = 2; // the argument is the next word
                    }
                    break;
                }
            }
            i += consumed;
            continue;
        }
        if spec.assignments && is_assignment(arg) {
            i += 1;
            continue;
        }
        break;
    }
    let inner = i + spec.positionals;
    if inner >= words.len() {
        return None; // nothing wrapped: `sudo -s`, `xargs` alone (runs echo), `flock 9`
    }
    let transparent = spec.transparent && !(spec.name == "xargs" && saw_option);
    Some(Layer {
        wrapper: spec.name,
        inner,
        transparent,
    })
}

/// `NAME=value` with a valid shell identifier before `=`.
pub fn is_assignment(arg: &str) -> bool {
    match arg.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Where `env -S STRING` / `flock -c STRING` keep a command line to be split or run by a shell.
pub fn string_command_arg(words: &[Word], start: usize) -> Option<usize> {
    let head = words.get(start)?;
    let flag = match basename(&head.text) {
        "env" => ["-S", "--split-string"],
        "flock" => ["-c", "--command"],
        _ => return None,
    };
    words
        .iter()
        .enumerate()
        .skip(start + 1)
        .find(|(_, w)| flag.contains(&w.text.as_str()))
        .map(|(i, _)| i + 1)
        .filter(|&i| i < words.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    fn inner(s: &str) -> Vec<(&'static str, usize, bool)> {
        unwrap(&words(s))
            .into_iter()
            .map(|l| (l.wrapper, l.inner, l.transparent))
            .collect()
    }

    #[test]
    fn layers() {
        assert_eq!(inner("timeout 5 rm x"), [("timeout", 2, true)]);
        assert_eq!(inner("timeout -s KILL 5 rm x"), [("timeout", 4, true)]);
        assert_eq!(inner("timeout --signal=KILL 5 rm"), [("timeout", 3, true)]);
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
    fn string_commands() {
        assert_eq!(string_command_arg(&words("env -S rm"), 0), Some(2));
        assert_eq!(string_command_arg(&words("flock f -c rm"), 0), Some(3));
        assert_eq!(string_command_arg(&words("env rm"), 0), None);
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
