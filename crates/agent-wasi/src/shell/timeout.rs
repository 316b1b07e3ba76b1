//! `timeout [OPTION]... DURATION COMMAND [ARG]...`, run by the shell itself: a WASI guest
//! cannot start another program, so the shell runs the command with a wall-time cap of
//! DURATION on top of its own limits (the runner stops it at whichever comes first).
//!
//! GNU coreutils' options and statuses: DURATION is a non-negative number (decimal, with an
//! optional fraction and exponent, `inf`) with an optional unit `s`, `m`, `h` or `d`; 0 means
//! no cap. `-s SIGNAL` / `--signal`, `-k DURATION` / `--kill-after`, `-f` / `--foreground`
//! and `-p` / `--preserve-status` are accepted (read with agent-core's table of GNU timeout,
//! [`agent_core::programs::wrappers::TIMEOUT`], the one the permission checker reads); `-v` / `--verbose` says which signal was "sent". A command
//! stopped by the cap is not signalled (it is stopped, as by SIGKILL), but the status is what
//! GNU reports: 124, or 128 + the signal with `--preserve-status`, or 137 for `-s KILL`. 125
//! when timeout itself fails, 126 when the command cannot run, 127 when it is not found.

use std::time::Duration;

use agent_core::programs::getopt_long::Options;
use agent_core::programs::wrappers::TIMEOUT;

/// timeout's own failures.
pub(crate) const EXIT_FAILURE: i32 = 125;
/// The status of a command stopped at DURATION.
pub(crate) const EXIT_TIMED_OUT: i32 = 124;

/// timeout's options: GNU coreutils' table, the one the permission checker reads timeout with.
const SPEC: Options = TIMEOUT.options;

/// Linux signal numbers by name, as `kill -l` lists them.
const SIGNALS: &[(&str, i32)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("IOT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("STKFLT", 16),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("POLL", 29),
    ("PWR", 30),
    ("SYS", 31),
];

const SIGKILL: i32 = 9;

/// What `timeout ARGS...` asks of the shell.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TimeoutRun {
    /// The cap; `None` for `0` (no cap).
    pub duration: Option<Duration>,
    /// The signal GNU would send (its number).
    pub signal: i32,
    preserve_status: bool,
    /// `-v`: say so when the cap stops the command.
    pub verbose: bool,
    /// The command and its arguments (never empty).
    pub argv: Vec<String>,
}

/// Parses `timeout`'s arguments (without `timeout` itself); the error is the lines for stderr
/// (timeout exits 125).
pub(crate) fn parse(args: &[String]) -> Result<TimeoutRun, Vec<String>> {
    let mut signal = 15;
    let mut preserve_status = false;
    let mut verbose = false;
    let at = SPEC.parse_with(args, |name, value| {
        let value = value.unwrap_or_default();
        match name {
            "signal" => {
                signal = signal_number(&value)
                    .ok_or_else(|| SPEC.usage(format!("timeout: '{value}': invalid signal")))?;
            }
            "kill-after" => {
                duration(&value).ok_or_else(|| {
                    SPEC.usage(format!("timeout: invalid time interval '{value}'"))
                })?;
            }
            "preserve-status" => preserve_status = true,
            "verbose" => verbose = true,
            "help" | "version" => {
                return Err(vec![format!(
                    "timeout: --{name}: see docs/shell.md (timeout) for what this timeout does"
                )]);
            }
            // --foreground: there is no terminal or process group to leave.
            _ => {}
        }
        Ok(())
    })?;
    let Some(spec) = args.get(at) else {
        return Err(SPEC.usage("timeout: missing operand".to_owned()));
    };
    let cap = duration(spec)
        .ok_or_else(|| SPEC.usage(format!("timeout: invalid time interval '{spec}'")))?;
    let argv = args[at + 1..].to_vec();
    if argv.is_empty() {
        return Err(SPEC.usage(format!("timeout: missing operand after '{spec}'")));
    }
    Ok(TimeoutRun {
        duration: (!cap.is_zero()).then_some(cap),
        signal,
        preserve_status,
        verbose,
        argv,
    })
}

impl TimeoutRun {
    /// timeout's status for a command that ended with `status`, `timed_out` when the cap
    /// stopped it.
    pub fn status(&self, status: i32, timed_out: bool) -> i32 {
        if !timed_out {
            status
        } else if self.preserve_status {
            128 + self.signal
        } else if self.signal == SIGKILL {
            // GNU sends KILL to its own process group too, and dies of it.
            128 + SIGKILL
        } else {
            EXIT_TIMED_OUT
        }
    }

    /// The signal's name, as `-v` prints it.
    pub fn signal_name(&self) -> String {
        SIGNALS
            .iter()
            .find(|(_, n)| *n == self.signal)
            .map_or_else(|| self.signal.to_string(), |(name, _)| (*name).to_owned())
    }
}

/// A signal given by name (`TERM`, `SIGTERM`, any case) or number.
fn signal_number(spec: &str) -> Option<i32> {
    if let Ok(n) = spec.parse::<i32>() {
        return (0..=64).contains(&n).then_some(n);
    }
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    SIGNALS.iter().find(|(s, _)| *s == name).map(|(_, n)| *n)
}

/// A GNU time interval: a non-negative number with an optional `s`/`m`/`h`/`d` unit; very
/// large values (and `inf`) are capped at a year, which is no cap in practice.
fn duration(spec: &str) -> Option<Duration> {
    let (number, unit) = match spec.char_indices().last() {
        Some((at, c @ ('s' | 'm' | 'h' | 'd'))) => (&spec[..at], c),
        _ => (spec, 's'),
    };
    // Rust's float syntax, without a sign or leading/trailing space (GNU's strtod takes
    // leading space and hex, rarely written here).
    if number.is_empty()
        || number.starts_with(['+', '-'])
        || number.trim() != number
        || number.eq_ignore_ascii_case("nan")
    {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let seconds = value
        * match unit {
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86400.0,
            _ => 1.0,
        };
    const YEAR: f64 = 365.0 * 86400.0;
    if seconds.is_nan() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(seconds.min(YEAR)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(args: &[&str]) -> Result<TimeoutRun, Vec<String>> {
        parse(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn durations_as_gnu_reads_them() {
        let ms = |s: &str| duration(s).map(|d| d.as_millis());
        assert_eq!(ms("1"), Some(1000));
        assert_eq!(ms("0.2"), Some(200));
        assert_eq!(ms(".5m"), Some(30_000));
        assert_eq!(ms("1e-1"), Some(100));
        assert_eq!(ms("2h"), Some(7_200_000));
        assert_eq!(ms("1d"), Some(86_400_000));
        assert_eq!(ms("0"), Some(0));
        assert_eq!(ms("inf"), Some(365 * 86_400_000));
        for bad in ["", "-1", "1ss", "0.2x", "s", "nan", " 1x", "+1"] {
            assert_eq!(duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn options_operands_and_statuses() {
        let t = parse_words(&["-s", "KILL", "-v", "0.5", "sleep", "9"]).unwrap();
        assert_eq!(t.duration, Some(Duration::from_millis(500)));
        assert_eq!((t.signal, t.verbose), (9, true));
        assert_eq!(t.argv, ["sleep", "9"]);
        assert_eq!(t.status(3, false), 3);
        assert_eq!(t.status(124, true), 137);
        let t = parse_words(&["--preserve-status", "-s", "sigint", "1", "x"]).unwrap();
        assert_eq!(
            (t.status(124, true), t.signal_name()),
            (130, "INT".to_owned())
        );
        let t = parse_words(&["0", "x"]).unwrap();
        assert_eq!(t.duration, None);
        assert_eq!(parse_words(&["1", "x"]).unwrap().status(124, true), 124);
        let first = |args: &[&str]| parse_words(args).unwrap_err().remove(0);
        assert_eq!(first(&[]), "timeout: missing operand");
        assert_eq!(first(&["1"]), "timeout: missing operand after '1'");
        assert_eq!(
            first(&["1x", "true"]),
            "timeout: invalid time interval '1x'"
        );
        assert_eq!(
            first(&["-s", "FOO", "1", "true"]),
            "timeout: 'FOO': invalid signal"
        );
        assert_eq!(first(&["-1", "true"]), "timeout: invalid option -- '1'");
        assert!(parse_words(&["--foreground", "-k", "1", "--", "1", "true"]).is_ok());
    }

    #[test]
    fn long_options_abbreviate_as_in_gnu() {
        let t = parse_words(&["--sig", "KILL", "--pres", "-fp", "5", "rm", "x"]).unwrap();
        assert_eq!(t.signal, 9);
        assert_eq!(t.argv, ["rm", "x"]);
        let err = parse_words(&["--ver", "5", "true"]).unwrap_err();
        assert_eq!(
            err,
            [
                "timeout: option '--ver' is ambiguous; possibilities: '--verbose' '--version'",
                "Try 'timeout --help' for more information."
            ]
        );
    }
}
