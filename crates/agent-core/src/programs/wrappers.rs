//! Programs that run another program given in their arguments (`timeout 5 rm x`, `sudo rm x`,
//! `xargs rm`): one complete option table per program, as the program itself defines it,
//! read with [`super::getopt_long`] (GNU `getopt_long` with `+`: abbreviations, optional
//! values only attached, options ending at the command). The permission checker
//! ([`crate::shell::wrappers::unwrap`]) and the WASI shell's own `xargs`, `env` and `timeout`
//! use these same tables, so they agree on which word is the command.
//!
//! Each table says what comes between the options and the command ([`Layout`]), what its
//! options mean for the checker ([`OptionRole`]: a file written or read, a command line run, no
//! command run at all), whether allow rules see through it (claude-code.md §3.2), and carries
//! example rows that a test runs through the checker's parse (as codex's execpolicy rules
//! carry `match` / `not_match` examples).
//!
//! When the arguments do not parse as the program parses them (an unknown or ambiguous option,
//! a missing value), or a word only known at run time stands where an option or the command
//! may stand, the checker does not guess which command runs: the command is not analysable
//! (an [`crate::shell::IssueKind::Wrapper`] issue), so it is never auto-approved and no prefix
//! rule approves it. The program itself would fail on a bad option; a different version of it
//! might not.

use super::getopt::Arity;
use super::getopt_long::{Given, Opt, OptionRole, Options, Parsed};
use crate::shell::wrappers::{Layer, basename, is_assignment};
use crate::shell::{Word, join};

/// What stands between a wrapper's options and the command it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Nothing: the first operand is the command (`nice`, `time`, `sudo`, ...).
    Command,
    /// `NAME=VALUE` assignments (`env`, after a lone `-` that empties the environment; `sudo`).
    Assignments {
        /// Whether a lone `-` before them empties the environment (`env -`).
        dash: bool,
        /// Whether every word holding a `=` is an assignment, whatever its name (GNU `env`
        /// tests `strchr (arg, '=')`: `env A:=1 rm` and `env 1=2 rm` run `rm`). Otherwise only
        /// a shell identifier's `NAME=VALUE` is one, and another word with a `=` is not
        /// analysable (which of the two the program takes is not known).
        any_word: bool,
    },
    /// One operand (`timeout DURATION`, `taskset MASK`).
    Operand,
    /// `chrt [PRIORITY] COMMAND`: a priority when the first operand is a number and more
    /// follow (util-linux 2.40; older versions require it).
    Priority,
    /// `flock FILE COMMAND`, `flock FILE -c STRING` (FILE is opened with `O_CREAT`: a write),
    /// or `flock --fd N COMMAND`; `flock NUMBER` alone locks a descriptor and runs nothing.
    LockFile,
    /// `watch COMMAND...`: without `-x` the words are joined with spaces and run by `sh -c`.
    Watch,
    /// `xargs COMMAND...`: the command gets the items xargs reads, appended to its arguments,
    /// or, with `-I R`, put in place of `R` in each argument (the name included).
    Xargs,
}

/// What the checker sees in an example row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Runs the command with this name.
    Runs(&'static str),
    /// Runs the command with this name and writes this file.
    RunsWriting(&'static str, &'static str),
    /// Runs this command line through a shell.
    Script(&'static str),
    /// Runs no command.
    Nothing,
    /// Not analysable: the checker does not see through it.
    Unknown,
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Runs(name) => write!(f, "runs `{name}`"),
            Self::RunsWriting(name, file) => write!(f, "runs `{name}`, writes `{file}`"),
            Self::Script(script) => write!(f, "runs the command line `{script}`"),
            Self::Nothing => f.write_str("runs nothing"),
            Self::Unknown => f.write_str("not analysable"),
        }
    }
}

/// One wrapper program.
#[derive(Clone, Copy, Debug)]
pub struct Wrapper {
    /// Its name (the command's basename).
    pub name: &'static str,
    /// Its complete option table.
    pub options: Options,
    /// What stands between the options and the command.
    pub layout: Layout,
    /// Whether allow rules (and the read-only set) see through it; `xargs` only without
    /// options.
    pub transparent: bool,
    /// Whether only an exact-string allow rule approves it (exec wrappers,
    /// claude-code.md §3.2 item 5).
    pub exact_only: bool,
    /// Where the table comes from.
    pub source: &'static str,
    /// Example commands and what the checker sees in them.
    pub examples: &'static [(&'static str, Expect)],
}

const fn w(
    name: &'static str,
    opts: &'static [Opt],
    layout: Layout,
    transparent: bool,
    source: &'static str,
    examples: &'static [(&'static str, Expect)],
) -> Wrapper {
    Wrapper {
        name,
        options: Options {
            program: name,
            opts,
            numeric: None,
        },
        layout,
        transparent,
        exact_only: false,
        source,
        examples,
    }
}

use Expect::{Nothing, Runs, RunsWriting, Script, Unknown};

const HELP: Opt = Opt::flag("help", None, &["help"]).role(OptionRole::RunsNothing);
const VERSION: Opt = Opt::flag("version", None, &["version"]).role(OptionRole::RunsNothing);

/// GNU findutils' `xargs` (the table of the WASI shell's `xargs` too).
pub const XARGS: Wrapper = w(
    "xargs",
    &[
        Opt::flag("null", Some('0'), &["null"]),
        Opt::value("arg-file", Some('a'), &["arg-file"]).role(OptionRole::ReadsFile),
        Opt::value("delimiter", Some('d'), &["delimiter"]),
        Opt::optional("eof", Some('e'), &["eof"]),
        Opt::value("eof-strict", Some('E'), &[]),
        Opt::optional("replace", Some('i'), &["replace"]).role(OptionRole::Replace),
        Opt::value("replace-strict", Some('I'), &[]).role(OptionRole::Replace),
        Opt::optional("max-lines", Some('l'), &["max-lines"]),
        Opt::value("max-lines-strict", Some('L'), &[]),
        Opt::value("max-args", Some('n'), &["max-args"]),
        Opt::flag("open-tty", Some('o'), &["open-tty"]),
        Opt::flag("interactive", Some('p'), &["interactive"]),
        Opt::flag("no-run-if-empty", Some('r'), &["no-run-if-empty"]),
        Opt::value("max-chars", Some('s'), &["max-chars"]),
        Opt::flag("verbose", Some('t'), &["verbose"]),
        Opt::flag("show-limits", None, &["show-limits"]),
        Opt::flag("exit", Some('x'), &["exit"]),
        Opt::value("max-procs", Some('P'), &["max-procs"]),
        Opt::value("process-slot-var", None, &["process-slot-var"]),
        VERSION,
        HELP,
    ],
    Layout::Xargs,
    true,
    "GNU findutils 4.10 xargs/xargs.c: \"+0a:E:e::i::I:l::L:n:oprs:txP:d:\"",
    &[
        ("xargs rm", Runs("rm")),
        ("xargs --replace rm x", Runs("rm")),
        ("xargs --replace sh -c 'rm x'", Script("rm x")),
        ("xargs --max-a 1 rm x", Runs("rm")),
        ("xargs -I{} rm {}", Runs("rm")),
        ("xargs -I {} rm {}", Runs("rm")),
        ("xargs -0rn2 rm", Runs("rm")),
        ("xargs -i rm {}", Runs("rm")),
        ("xargs -a list rm", Runs("rm")),
        ("xargs", Nothing),
        ("xargs --help rm", Nothing),
        ("xargs --max 1 rm", Unknown),
        ("xargs --e rm", Unknown),
        ("xargs --bogus rm", Unknown),
        ("xargs -z rm", Unknown),
        ("xargs -n", Unknown),
        ("xargs $OPTS rm", Unknown),
        ("xargs -n $N rm", Unknown),
        ("xargs -I{} {} x", Unknown),
        ("xargs -I '' rm", Unknown),
    ],
);

/// GNU coreutils' `env` (the table of the WASI shell's `env` too).
pub const ENV: Wrapper = Wrapper {
    exact_only: false,
    ..w(
        "env",
        &[
            Opt::value("argv0", Some('a'), &["argv0"]),
            Opt::flag("ignore-environment", Some('i'), &["ignore-environment"]),
            Opt::value("env0-from", None, &["env0-from"]).role(OptionRole::ReadsFile),
            Opt::flag("null", Some('0'), &["null"]),
            Opt::value("unset", Some('u'), &["unset"]),
            Opt::value("chdir", Some('C'), &["chdir"]).role(OptionRole::Chdir),
            Opt::optional("default-signal", None, &["default-signal"]),
            Opt::optional("ignore-signal", None, &["ignore-signal"]),
            Opt::optional("block-signal", None, &["block-signal"]),
            Opt::flag("list-signal-handling", None, &["list-signal-handling"]),
            Opt::flag("debug", Some('v'), &["debug"]),
            Opt::value("split-string", Some('S'), &["split-string"]).role(OptionRole::SplitString),
            HELP,
            VERSION,
        ],
        Layout::Assignments {
            dash: true,
            any_word: true,
        },
        false,
        "GNU coreutils 9.8 src/env.c: \"+a:C:iS:u:v0\"",
        &[
            ("env rm x", Runs("rm")),
            ("env --u X rm x", Runs("rm")),
            ("env -i A=1 B=2 rm", Runs("rm")),
            ("env - A=1 rm", Runs("rm")),
            ("env -uX -i rm", Runs("rm")),
            ("env -C /etc cat shadow", Unknown),
            ("env --ch=/ rm x", Unknown),
            ("env -S 'rm -rf x'", Script("env rm -rf x")),
            ("env -S'-u X rm' y", Script("env -u X rm y")),
            ("env --split=rm", Script("env rm")),
            ("env A=1", Nothing),
            ("env A:=1 rm x", Runs("rm")),
            ("env 1=2 rm x", Runs("rm")),
            ("env =x rm x", Runs("rm")),
            ("env - A.B=1 rm x", Runs("rm")),
            ("env --help rm", Nothing),
            ("env --bogus rm", Unknown),
            ("env --i rm", Unknown),
            ("env -u", Unknown),
            ("env \"$X\" rm", Unknown),
            ("env A=$V rm", Unknown),
        ],
    )
};

/// GNU coreutils' `timeout` (the table of the WASI shell's `timeout` too).
pub const TIMEOUT: Wrapper = w(
    "timeout",
    &[
        Opt::flag("foreground", Some('f'), &["foreground"]),
        Opt::value("kill-after", Some('k'), &["kill-after"]),
        Opt::flag("preserve-status", Some('p'), &["preserve-status"]),
        Opt::value("signal", Some('s'), &["signal"]),
        Opt::flag("verbose", Some('v'), &["verbose"]),
        HELP,
        VERSION,
    ],
    Layout::Operand,
    true,
    "GNU coreutils 9.8 src/timeout.c: \"+fk:ps:v\"",
    &[
        ("timeout 5 rm x", Runs("rm")),
        ("timeout --sig KILL 5 rm x", Runs("rm")),
        ("timeout -sKILL -k 1 5 rm", Runs("rm")),
        ("timeout --signal=KILL 5 rm", Runs("rm")),
        ("timeout -- 5 rm", Runs("rm")),
        ("timeout 5", Nothing),
        ("timeout --s KILL 5 rm", Runs("rm")),
        ("timeout --ver 5 rm", Unknown),
        ("timeout --kill 1 5 rm", Runs("rm")),
        ("timeout -x 5 rm", Unknown),
        ("timeout $T rm", Unknown),
        ("timeout \"$T\" rm", Unknown),
    ],
);

/// All the wrappers, by name.
pub(crate) const WRAPPERS: &[Wrapper] = &[
    XARGS,
    ENV,
    TIMEOUT,
    Wrapper {
        options: Options {
            program: "nice",
            opts: &[
                Opt::value("adjustment", Some('n'), &["adjustment"]),
                HELP,
                VERSION,
            ],
            numeric: Some("adjustment"),
        },
        ..w(
            "nice",
            &[],
            Layout::Command,
            true,
            "GNU coreutils 9.8 src/nice.c: \"+n:\", and -N, --N, -+N",
            &[
                ("nice rm", Runs("rm")),
                ("nice -n 5 rm", Runs("rm")),
                ("nice -10 rm", Runs("rm")),
                ("nice --adj=5 rm", Runs("rm")),
                ("nice -n -5 rm", Runs("rm")),
                ("nice", Nothing),
                ("nice -x rm", Unknown),
            ],
        )
    },
    w(
        "nohup",
        &[HELP, VERSION],
        Layout::Command,
        true,
        "GNU coreutils 9.8 src/nohup.c: --help and --version only",
        &[
            ("nohup rm x", Runs("rm")),
            ("nohup -- rm x", Runs("rm")),
            ("nohup --he", Nothing),
            ("nohup -n rm", Unknown),
        ],
    ),
    w(
        "stdbuf",
        &[
            Opt::value("input", Some('i'), &["input"]),
            Opt::value("output", Some('o'), &["output"]),
            Opt::value("error", Some('e'), &["error"]),
            HELP,
            VERSION,
        ],
        Layout::Command,
        true,
        "GNU coreutils 9.8 src/stdbuf.c: \"+i:o:e:\"",
        &[
            ("stdbuf -oL rm", Runs("rm")),
            ("stdbuf --out L -e0 rm", Runs("rm")),
            ("stdbuf -x rm", Unknown),
        ],
    ),
    w(
        "time",
        &[
            Opt::flag("append", Some('a'), &["append"]),
            Opt::value("format", Some('f'), &["format"]),
            HELP,
            Opt::value("output-file", Some('o'), &["output-file"]).role(OptionRole::WritesFile),
            Opt::flag("portability", Some('p'), &["portability"]),
            Opt::flag("quiet", Some('q'), &["quiet"]),
            Opt::flag("verbose", Some('v'), &["verbose"]),
            Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
        ],
        Layout::Command,
        true,
        "GNU time 1.9 src/time.c: \"+af:o:pqvV\"",
        &[
            ("\\time ls", Runs("ls")),
            ("\\time -o F ls", RunsWriting("ls", "F")),
            ("/usr/bin/time --output=F ls", RunsWriting("ls", "F")),
            ("command time --out F ls", RunsWriting("ls", "F")),
            ("nice \\time -aoF ls", RunsWriting("ls", "F")),
            (
                "timeout 5 time -o .git/config ls",
                RunsWriting("ls", ".git/config"),
            ),
            ("\\time -p -f %e ls", Runs("ls")),
            ("\\time -o F", Nothing),
            ("\\time -h ls", Unknown),
        ],
    ),
    w(
        "command",
        &[
            Opt::flag("path", Some('p'), &[]),
            Opt::flag("describe", Some('v'), &[]).role(OptionRole::RunsNothing),
            Opt::flag("describe-verbose", Some('V'), &[]).role(OptionRole::RunsNothing),
            HELP,
        ],
        Layout::Command,
        true,
        "bash 5.2 builtins/command.def: \"pvV\"",
        &[
            ("command rm", Runs("rm")),
            ("command -p rm", Runs("rm")),
            ("command -v rm", Nothing),
            ("command -pV rm", Nothing),
            ("command -x rm", Unknown),
        ],
    ),
    w(
        "builtin",
        &[HELP],
        Layout::Command,
        true,
        "bash 5.2 builtins/builtin.def: no options",
        &[("builtin cd x", Runs("cd")), ("builtin -x cd", Unknown)],
    ),
    w(
        "exec",
        &[
            Opt::flag("clear-environment", Some('c'), &[]),
            Opt::flag("login", Some('l'), &[]),
            Opt::value("argv0", Some('a'), &[]),
            HELP,
        ],
        Layout::Command,
        true,
        "bash 5.2 builtins/exec.def: \"cla:\"",
        &[
            ("exec rm x", Runs("rm")),
            ("exec -a name rm x", Runs("rm")),
            ("exec -cl rm", Runs("rm")),
            ("exec", Nothing),
            ("exec -x rm", Unknown),
        ],
    ),
    w(
        "noglob",
        &[],
        Layout::Command,
        true,
        "zsh precommand modifier: no options",
        &[("noglob rm *", Runs("rm")), ("noglob -x rm", Unknown)],
    ),
    w(
        "nocorrect",
        &[],
        Layout::Command,
        false,
        "zsh precommand modifier: no options",
        &[("nocorrect rm", Runs("rm"))],
    ),
    w(
        "sudo",
        &[
            Opt::flag("background", Some('b'), &["background"]),
            Opt::optional("preserve-env", None, &["preserve-env"]),
            Opt::flag("preserve-env", Some('E'), &[]),
            Opt::flag("edit", Some('e'), &["edit"]).role(OptionRole::RunsNothing),
            Opt::flag("set-home", Some('H'), &["set-home"]),
            Opt::flag("login", Some('i'), &["login"]).role(OptionRole::Chdir),
            Opt::flag("remove-timestamp", Some('K'), &["remove-timestamp"])
                .role(OptionRole::RunsNothing),
            Opt::flag("list", Some('l'), &["list"]).role(OptionRole::RunsNothing),
            Opt::flag("preserve-groups", Some('P'), &["preserve-groups"]),
            Opt::flag("shell", Some('s'), &["shell"]),
            Opt::value("other-user", Some('U'), &["other-user"]),
            Opt::flag("validate", Some('v'), &["validate"]).role(OptionRole::RunsNothing),
            Opt::flag("askpass", Some('A'), &["askpass"]),
            Opt::value("auth-type", Some('a'), &["auth-type"]),
            Opt::flag("bell", Some('B'), &["bell"]),
            Opt::value("close-from", Some('C'), &["close-from"]),
            Opt::value("login-class", Some('c'), &["login-class"]),
            Opt::value("chdir", Some('D'), &["chdir"]).role(OptionRole::Chdir),
            Opt::value("group", Some('g'), &["group"]),
            HELP,
            // `-h` alone is --help, `-hHOST` is --host: taken as a plain option, so the
            // command after it is still seen by deny rules.
            Opt::optional("host", Some('h'), &[]),
            Opt::value("host", None, &["host"]),
            Opt::flag("reset-timestamp", Some('k'), &["reset-timestamp"]),
            Opt::flag("no-update", Some('N'), &["no-update"]),
            Opt::flag("non-interactive", Some('n'), &["non-interactive"]),
            Opt::value("prompt", Some('p'), &["prompt"]),
            Opt::value("chroot", Some('R'), &["chroot"]).role(OptionRole::Chdir),
            Opt::value("role", Some('r'), &["role"]),
            Opt::flag("stdin", Some('S'), &["stdin"]),
            Opt::value("command-timeout", Some('T'), &["command-timeout"]),
            Opt::value("type", Some('t'), &["type"]),
            Opt::value("user", Some('u'), &["user"]),
            Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
        ],
        Layout::Assignments {
            dash: false,
            any_word: false,
        },
        false,
        "sudo 1.9.17 src/parse_args.c: \"+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv\"",
        &[
            ("sudo rm x", Runs("rm")),
            ("sudo -u root rm", Runs("rm")),
            ("sudo --us root rm", Runs("rm")),
            ("sudo -E A=1 rm", Runs("rm")),
            ("sudo A:=1 rm", Unknown),
            ("sudo -l rm", Nothing),
            ("sudo -D / rm x", Unknown),
            ("sudo -i rm x", Unknown),
            ("sudo -s", Nothing),
            ("sudo --pre rm", Unknown),
            ("sudo -y rm", Unknown),
        ],
    ),
    w(
        "doas",
        &[
            Opt::value("config", Some('C'), &[]).role(OptionRole::RunsNothing),
            Opt::flag("clear", Some('L'), &[]).role(OptionRole::RunsNothing),
            Opt::flag("non-interactive", Some('n'), &[]),
            Opt::flag("shell", Some('s'), &[]),
            Opt::value("user", Some('u'), &[]),
        ],
        Layout::Command,
        false,
        "OpenBSD doas.c: \"+C:Lnsu:\"",
        &[
            ("doas rm", Runs("rm")),
            ("doas -u root rm", Runs("rm")),
            ("doas -C conf rm", Nothing),
            ("doas --user root rm", Unknown),
        ],
    ),
    Wrapper {
        exact_only: true,
        ..w(
            "watch",
            &[
                Opt::flag("beep", Some('b'), &["beep"]),
                Opt::flag("no-color", Some('C'), &["no-color"]),
                Opt::flag("color", Some('c'), &["color"]),
                Opt::flag("errexit", Some('e'), &["errexit"]),
                Opt::flag("follow", Some('f'), &["follow"]),
                Opt::optional("differences", Some('d'), &["differences"]),
                Opt::flag("chgexit", Some('g'), &["chgexit"]),
                Opt::flag("help", Some('h'), &["help"]).role(OptionRole::RunsNothing),
                Opt::value("equexit", Some('q'), &["equexit"]),
                Opt::value("interval", Some('n'), &["interval"]),
                Opt::flag("precise", Some('p'), &["precise"]),
                Opt::flag("no-rerun", Some('r'), &["no-rerun"]),
                Opt::value("shotsdir", Some('s'), &["shotsdir"]).role(OptionRole::WritesFile),
                Opt::flag("no-title", Some('t'), &["no-title"]),
                Opt::flag("no-wrap", Some('w'), &["no-wrap"]),
                Opt::flag("version", Some('v'), &["version"]).role(OptionRole::RunsNothing),
                Opt::flag("exec", Some('x'), &["exec"]),
            ],
            Layout::Watch,
            false,
            "procps-ng 4.0.5 src/watch.c: \"+bCcefd::ghq:n:prs:twvx\"",
            &[
                ("watch -x rm x", Runs("rm")),
                ("watch -n 1 'ls; rm x'", Script("ls; rm x")),
                ("watch ls -l", Script("ls -l")),
                ("watch --inter 2 -x rm", Runs("rm")),
                ("watch -s shots -x ls", RunsWriting("ls", "shots")),
                ("watch --no rm", Unknown),
            ],
        )
    },
    Wrapper {
        exact_only: true,
        ..w(
            "ionice",
            &[
                Opt::value("classdata", Some('n'), &["classdata"]),
                Opt::value("class", Some('c'), &["class"]),
                Opt::flag("help", Some('h'), &["help"]).role(OptionRole::RunsNothing),
                Opt::flag("ignore", Some('t'), &["ignore"]),
                Opt::value("pid", Some('p'), &["pid"]).role(OptionRole::RunsNothing),
                Opt::value("pgid", Some('P'), &["pgid"]).role(OptionRole::RunsNothing),
                Opt::value("uid", Some('u'), &["uid"]).role(OptionRole::RunsNothing),
                Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
            ],
            Layout::Command,
            false,
            "util-linux 2.41 schedutils/ionice.c: \"+n:c:p:P:u:tVh\"",
            &[
                ("ionice -c 3 rm", Runs("rm")),
                ("ionice --classd 7 -t rm", Runs("rm")),
                ("ionice -p 1 2", Nothing),
                ("ionice --cl 3 rm", Unknown),
            ],
        )
    },
    Wrapper {
        exact_only: true,
        ..w(
            "setsid",
            &[
                Opt::flag("ctty", Some('c'), &["ctty"]),
                Opt::flag("fork", Some('f'), &["fork"]),
                Opt::flag("wait", Some('w'), &["wait"]),
                Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
                Opt::flag("help", Some('h'), &["help"]).role(OptionRole::RunsNothing),
            ],
            Layout::Command,
            false,
            "util-linux 2.41 sys-utils/setsid.c: \"+Vhcfw\"",
            &[
                ("setsid -w rm", Runs("rm")),
                ("setsid --f rm", Runs("rm")),
                ("setsid -x rm", Unknown),
            ],
        )
    },
    Wrapper {
        exact_only: true,
        ..w(
            "flock",
            &[
                Opt::flag("shared", Some('s'), &["shared"]),
                Opt::flag("exclusive", Some('x'), &["exclusive"]),
                Opt::flag("exclusive", Some('e'), &[]),
                Opt::flag("unlock", Some('u'), &["unlock"]),
                Opt::flag("nonblocking", Some('n'), &["nonblocking", "nb"]),
                Opt::value("timeout", Some('w'), &["timeout", "wait"]),
                Opt::value("conflict-exit-code", Some('E'), &["conflict-exit-code"]),
                Opt::flag("close", Some('o'), &["close"]),
                Opt::flag("no-fork", Some('F'), &["no-fork"]),
                Opt::flag("verbose", None, &["verbose"]),
                Opt::flag("fcntl", None, &["fcntl"]),
                Opt::value("start", None, &["start"]),
                Opt::value("length", None, &["length"]),
                Opt::value("fd", None, &["fd"]),
                Opt::flag("help", Some('h'), &["help"]).role(OptionRole::RunsNothing),
                Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
                // Not getopt options in flock.c (it recognises the exact words `-c` and
                // `--command`); taken here as options, so an abbreviation counts too.
                Opt::value("command", Some('c'), &["command"]).role(OptionRole::RunsString),
            ],
            Layout::LockFile,
            false,
            "util-linux 2.41 sys-utils/flock.c: \"+:sexnoFuw:E:hV?\", and -c/--command",
            &[
                ("flock /tmp/l rm x", RunsWriting("rm", "/tmp/l")),
                ("flock -n -w 5 l rm", RunsWriting("rm", "l")),
                ("flock --nb l rm", RunsWriting("rm", "l")),
                ("flock l -c 'rm x'", Script("rm x")),
                ("flock --fd 3 rm", Runs("rm")),
                ("flock 9", Nothing),
                ("flock --n l rm", Unknown),
                ("flock --co l rm", Unknown),
            ],
        )
    },
    w(
        "chrt",
        &[
            Opt::flag("all-tasks", Some('a'), &["all-tasks"]),
            Opt::flag("batch", Some('b'), &["batch"]),
            Opt::value("clamp-min", Some('U'), &["clamp-min"]),
            Opt::value("clamp-max", Some('X'), &["clamp-max"]),
            Opt::flag("deadline", Some('d'), &["deadline"]),
            Opt::flag("deadline-overrun", Some('O'), &["deadline-overrun"]),
            Opt::flag("ext", Some('e'), &["ext"]),
            Opt::flag("fifo", Some('f'), &["fifo"]),
            Opt::flag("idle", Some('i'), &["idle"]),
            Opt::flag("pid", Some('p'), &["pid"]).role(OptionRole::RunsNothing),
            Opt::flag("help", Some('h'), &["help"]).role(OptionRole::RunsNothing),
            Opt::flag("max", Some('m'), &["max"]).role(OptionRole::RunsNothing),
            Opt::flag("other", Some('o'), &["other"]),
            Opt::flag("rr", Some('r'), &["rr"]),
            Opt::value("sched-runtime", Some('T'), &["sched-runtime"]),
            Opt::value("sched-period", Some('P'), &["sched-period"]),
            Opt::value("sched-deadline", Some('D'), &["sched-deadline"]),
            Opt::flag("reset-on-fork", Some('R'), &["reset-on-fork"]),
            Opt::flag("reclaim-grub", Some('G'), &["reclaim-grub"]),
            Opt::flag("verbose", Some('v'), &["verbose"]),
            Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
        ],
        Layout::Priority,
        false,
        "util-linux 2.41 schedutils/chrt.c: \"+abdD:efiphmoOP:T:rRU:X:GvV\"",
        &[
            ("chrt 5 rm", Runs("rm")),
            ("chrt -f 10 rm x", Runs("rm")),
            ("chrt --other rm x", Runs("rm")),
            ("chrt -p 5 123", Nothing),
            ("chrt --sched rm", Unknown),
            ("chrt $P rm", Unknown),
        ],
    ),
    w(
        "taskset",
        &[
            Opt::flag("all-tasks", Some('a'), &["all-tasks"]),
            Opt::flag("pid", Some('p'), &["pid"]).role(OptionRole::RunsNothing),
            Opt::flag("cpu-list", Some('c'), &["cpu-list"]),
            Opt::flag("help", Some('h'), &["help"]).role(OptionRole::RunsNothing),
            Opt::flag("version", Some('V'), &["version"]).role(OptionRole::RunsNothing),
        ],
        Layout::Operand,
        false,
        "util-linux 2.41 schedutils/taskset.c: \"+apchV\"",
        &[
            ("taskset 0x3 rm", Runs("rm")),
            ("taskset -c 0-2 rm", Runs("rm")),
            ("taskset -p 0x3 123", Nothing),
            ("taskset --c 1 rm", Runs("rm")),
            ("taskset -x 1 rm", Unknown),
        ],
    ),
];

/// The wrapper named `name` (a basename), if it is one.
pub fn lookup(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.name == name)
}

/// Whether only an exact-string allow rule approves `name` (`watch`, `setsid`, `ionice`,
/// `flock`: claude-code.md §3.2 item 5).
pub(crate) fn is_exec_wrapper(name: &str) -> bool {
    lookup(name).is_some_and(|w| w.exact_only)
}

/// What one wrapper at the head of a command shows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Peel {
    /// The word is not a wrapper, or the wrapper runs no command here (`command -v x`,
    /// `sudo -l`, `xargs` alone, which runs `echo`).
    None,
    /// A layer, and the indices of the words xargs fills from its input (`xargs -I{}`).
    Layer(Layer, Vec<usize>),
    /// The command it runs cannot be known: why.
    Unknown(String),
}

/// A wrapper's arguments (the words after its name), as [`peel`] reads them.
struct Args<'a> {
    words: &'a [Word],
    /// Index (in the command's words) of the first argument.
    base: usize,
    /// The wrapper's name, for messages.
    name: &'static str,
}

impl Args<'_> {
    fn get(&self, i: usize) -> Option<&Word> {
        self.words.get(i)
    }

    fn len(&self) -> usize {
        self.words.len()
    }

    /// The value of an option as a word of its own (attached values keep their word's flags).
    fn value(&self, g: &Given<'_>) -> Option<Word> {
        let at = g.value_at?;
        let w = self.get(at)?;
        let text = g.value.clone()?;
        Some(Word { text, ..w.clone() })
    }

    fn unknown(&self, why: impl std::fmt::Display) -> Peel {
        Peel::Unknown(format!(
            "cannot tell which command `{}` runs: {why}",
            self.name
        ))
    }

    /// The word at `i` is only known at run time and could be an option or the command.
    fn dynamic(&self, i: usize) -> Peel {
        let raw = self.get(i).map_or("", |w| w.raw.as_str());
        self.unknown(format_args!(
            "`{raw}` is only known at run time and could be one of its options or the command"
        ))
    }

    /// The word at `i` may be several words or none at run time.
    fn splits(&self, i: usize) -> Peel {
        let raw = self.get(i).map_or("", |w| w.raw.as_str());
        self.unknown(format_args!(
            "`{raw}` may make any number of words at run time (quote the expansion)"
        ))
    }

    /// Whether the word at `i` may be several words or none.
    fn may_split(&self, i: usize) -> bool {
        self.get(i).is_some_and(|w| w.splits || w.glob)
    }
}

/// Recognises the wrapper at `words[start]`.
pub(crate) fn peel(words: &[Word], start: usize) -> Peel {
    let Some(head) = words.get(start).filter(|w| w.is_static()) else {
        return Peel::None;
    };
    let Some(wrapper) = lookup(basename(&head.text)) else {
        return Peel::None;
    };
    let args = Args {
        words: words.get(start + 1..).unwrap_or(&[]),
        base: start + 1,
        name: wrapper.name,
    };
    let texts: Vec<&str> = args.words.iter().map(|w| w.text.as_str()).collect();
    let parsed = wrapper.options.parse(&texts);
    if let Some(refusal) = unknown_words(&args, &parsed) {
        return refusal;
    }
    if let Some(e) = &parsed.error {
        let hint = match e {
            super::getopt_long::GetoptError::Ambiguous { .. } => "; spell the option out",
            _ => "",
        };
        return args.unknown(format_args!("{e}{hint}"));
    }
    if parsed
        .given
        .iter()
        .any(|g| g.opt.role == OptionRole::RunsNothing)
    {
        return Peel::None;
    }
    if let Some(g) = parsed
        .given
        .iter()
        .find(|g| g.opt.role == OptionRole::Chdir)
    {
        return args.unknown(format_args!(
            "`--{}` runs it in another directory, where its relative paths name other files \
             than those checked; write `cd DIR && …` instead",
            g.opt.name
        ));
    }
    let mut layer = Layer {
        wrapper: wrapper.name,
        inner: words.len(),
        // xargs only without options (claude-code.md §3.2 item 2).
        transparent: wrapper.transparent
            && (wrapper.layout != Layout::Xargs || parsed.given.is_empty()),
        appends_input: false,
        script: None,
        writes: Vec::new(),
        reads: Vec::new(),
    };
    for g in &parsed.given {
        match g.opt.role {
            OptionRole::WritesFile => layer.writes.extend(args.value(g)),
            OptionRole::ReadsFile => layer.reads.extend(args.value(g)),
            _ => {}
        }
    }
    if let Some(g) = parsed
        .given
        .iter()
        .find(|g| matches!(g.opt.role, OptionRole::RunsString | OptionRole::SplitString))
    {
        let Some(value) = args.value(g) else {
            return Peel::None;
        };
        layer.script = Some(if g.opt.role == OptionRole::SplitString {
            // `env -S STRING ARGS`: STRING's words, then ARGS, are env's arguments again.
            let rest = args
                .words
                .get(g.value_at.map_or(args.len(), |v| v + 1)..)
                .unwrap_or(&[]);
            script_word(wrapper.name, &value, rest)
        } else {
            value
        });
        return Peel::Layer(layer, Vec::new());
    }
    let k = parsed.operands;
    let inner_at = |mut layer: Layer, k: usize| {
        if k >= args.len() {
            return Peel::None;
        }
        layer.inner = args.base + k;
        Peel::Layer(layer, Vec::new())
    };
    match wrapper.layout {
        Layout::Command => inner_at(layer, k),
        Layout::Assignments { dash, any_word } => {
            let mut k = k;
            if dash && args.get(k).is_some_and(|w| w.is_static() && w.text == "-") {
                k += 1;
            }
            while let Some(a) = args.get(k).filter(|a| a.text.contains('=')) {
                if a.splits || a.glob {
                    return args.splits(k);
                }
                if !any_word && !is_assignment(&a.text) {
                    return args.unknown(format_args!(
                        "`{}` holds a `=` but is not a NAME=VALUE assignment",
                        a.raw
                    ));
                }
                k += 1;
            }
            inner_at(layer, k)
        }
        Layout::Operand => {
            if args.may_split(k) {
                return args.splits(k);
            }
            inner_at(layer, k + 1)
        }
        Layout::Priority => {
            let Some(first) = args.get(k) else {
                return Peel::None;
            };
            if !first.is_static() {
                return args.dynamic(k);
            }
            let priority = args.len() - k >= 2
                && !first.text.is_empty()
                && first.text.bytes().all(|b| b.is_ascii_digit());
            inner_at(layer, k + usize::from(priority))
        }
        Layout::LockFile => {
            if parsed.given.iter().any(|g| g.opt.name == "fd") {
                return inner_at(layer, k);
            }
            let Some(file) = args.get(k) else {
                return Peel::None;
            };
            if args.may_split(k) {
                return args.splits(k);
            }
            let Some(next) = args.get(k + 1) else {
                return Peel::None; // `flock NUMBER`: a descriptor, no command
            };
            layer.writes.push(file.clone());
            if next.is_static() && matches!(next.text.as_str(), "-c" | "--command") {
                let Some(script) = args.get(k + 2) else {
                    return Peel::None;
                };
                layer.script = Some(script.clone());
                return Peel::Layer(layer, Vec::new());
            }
            inner_at(layer, k + 1)
        }
        Layout::Watch => {
            if parsed.given.iter().any(|g| g.opt.name == "exec") {
                return inner_at(layer, k);
            }
            let command = args.words.get(k..).unwrap_or(&[]);
            if command.is_empty() {
                return Peel::None;
            }
            layer.script = Some(joined(command));
            Peel::Layer(layer, Vec::new())
        }
        Layout::Xargs => xargs(&args, &parsed, layer, k),
    }
}

/// Refuses words getopt reads (options, their values, and the first operand unless `--` came
/// before it) that are only known at run time.
fn unknown_words(args: &Args<'_>, parsed: &Parsed<'_>) -> Option<Peel> {
    for g in &parsed.given {
        if !args.get(g.at).is_some_and(Word::is_static) {
            return Some(args.dynamic(g.at));
        }
        if let Some(v) = g.value_at.filter(|&v| v != g.at) {
            if args.may_split(v) {
                return Some(args.splits(v));
            }
            if g.opt.role == OptionRole::Replace && !args.get(v).is_some_and(Word::is_static) {
                return Some(args.unknown(format_args!(
                    "its replace string `{}` is only known at run time",
                    args.get(v).map_or("", |w| w.raw.as_str())
                )));
            }
        }
    }
    let k = parsed.operands;
    if parsed.error.is_none() && !parsed.dashdash && args.get(k).is_some_and(may_be_option) {
        return Some(args.dynamic(k));
    }
    None
}

/// Whether a word only known at run time may begin with `-` (`$X`, `"$X"`, `*`, `{-a,b}`):
/// not when it begins with a letter, a digit, `_`, `/` or `.` written out (`A=$X`, `./$F`).
fn may_be_option(w: &Word) -> bool {
    !w.is_static()
        && !w
            .text
            .starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.'))
}

/// xargs: the command, and the items it gets (appended, or in place of the replace string).
fn xargs(args: &Args<'_>, parsed: &Parsed<'_>, mut layer: Layer, k: usize) -> Peel {
    if k >= args.len() {
        return Peel::None; // runs `echo` with the items
    }
    let replace = parsed
        .given
        .iter()
        .rfind(|g| g.opt.role == OptionRole::Replace)
        .map(|g| g.value.clone().unwrap_or_else(|| "{}".to_owned()));
    // GNU xargs: -n (but -n1), -L and -l after -I turn the replacement off; both ways are
    // assumed, so the items may be appended and replaced.
    let grouped = parsed
        .given
        .iter()
        .any(|g| matches!(g.opt.name, "max-args" | "max-lines" | "max-lines-strict"));
    layer.inner = args.base + k;
    layer.appends_input = replace.is_none() || grouped;
    let Some(r) = replace else {
        return Peel::Layer(layer, Vec::new());
    };
    if r.is_empty() {
        return args.unknown("its replace string is empty");
    }
    let filled: Vec<usize> = (k..args.len())
        .filter(|&i| args.get(i).is_some_and(|w| w.text.contains(r.as_str())))
        .collect();
    if filled.first() == Some(&k) {
        return args.unknown(format_args!(
            "the command's name `{}` holds the replace string `{r}`, so it comes from the input",
            args.get(k).map_or("", |w| w.raw.as_str())
        ));
    }
    Peel::Layer(layer, filled.into_iter().map(|i| args.base + i).collect())
}

/// `NAME` followed by the `rest` as written, as one command line (`env -S`).
fn script_word(name: &str, value: &Word, rest: &[Word]) -> Word {
    let mut text = format!("{name} {}", value.text);
    for w in rest {
        text.push(' ');
        text.push_str(&w.raw);
    }
    Word {
        raw: text.clone(),
        text,
        dynamic: value.dynamic || rest.iter().any(|w| w.dynamic),
        glob: false,
        home: false,
        splits: false,
    }
}

/// Words joined with spaces into one command line (`watch ls -l` runs `sh -c 'ls -l'`).
fn joined(words: &[Word]) -> Word {
    let text = join(words);
    Word {
        raw: text.clone(),
        text,
        dynamic: words.iter().any(|w| !w.is_static()),
        glob: false,
        home: false,
        splits: false,
    }
}

/// One option in the compact form of the read-only set's tables: `a|--arg-file=R`.
fn compact(o: &Opt) -> String {
    let mut names: Vec<String> = o.short.map(String::from).into_iter().collect();
    names.extend(o.long.iter().map(|l| format!("--{l}")));
    let mut s = names.join("|");
    let marker = match o.role {
        OptionRole::WritesFile => "W",
        OptionRole::ReadsFile => "R",
        OptionRole::RunsString | OptionRole::SplitString => "S",
        OptionRole::Replace => "X",
        OptionRole::Chdir => "D",
        OptionRole::Plain | OptionRole::RunsNothing => "",
    };
    match o.arity {
        Arity::None if !marker.is_empty() => {
            s.push(':');
            s.push_str(marker);
        }
        Arity::None => {}
        Arity::Required => {
            s.push('=');
            s.push_str(marker);
        }
        Arity::Optional => {
            s.push('?');
            s.push_str(marker);
        }
    }
    if o.role == OptionRole::RunsNothing {
        s.push('!');
    }
    s
}

fn layout_text(l: Layout) -> &'static str {
    match l {
        Layout::Command => "the command",
        Layout::Assignments { dash: true, .. } => "`-`, `NAME=VALUE`..., the command",
        Layout::Assignments { dash: false, .. } => "`NAME=VALUE`..., the command",
        Layout::Operand => "one operand, the command",
        Layout::Priority => "a priority (a number, when more follow), the command",
        Layout::LockFile => "FILE (written), the command or `-c STRING`; with `--fd`, the command",
        Layout::Watch => "the command (joined for `sh -c` unless `-x`)",
        Layout::Xargs => "the command, which gets the input's items",
    }
}

/// The wrapper tables as Markdown (docs/permissions.md holds them; a test keeps the two
/// equal): each wrapper with its options in the compact form, what follows them, whether allow
/// rules see through it, and its example rows.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| wrapper | options | after the options | allow rules | source |\n|---|---|---|---|---|\n",
    );
    for w in WRAPPERS {
        let opts: Vec<String> = w.options.opts.iter().map(compact).collect();
        let mut opts = if opts.is_empty() {
            "none".to_owned()
        } else {
            format!("`{}`", opts.join(" ").replace('|', "\\|"))
        };
        if w.options.numeric.is_some() {
            opts.push_str(" and `-NUM`");
        }
        let allow = match (w.transparent, w.exact_only) {
            (_, true) => "exact rule only",
            (true, _) if w.layout == Layout::Xargs => "see through (without options)",
            (true, _) => "see through",
            (false, _) => "must name it",
        };
        out.push_str(&format!(
            "| `{}` | {opts} | {} | {allow} | {} |\n",
            w.name,
            layout_text(w.layout),
            w.source.replace('|', "\\|")
        ));
    }
    out.push_str("\n| example | the checker sees |\n|---|---|\n");
    for w in WRAPPERS {
        for (command, expect) in w.examples {
            out.push_str(&format!(
                "| `{}` | {expect} |\n",
                command.replace('|', "\\|")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{IssueKind, Origin, parse};

    /// What the checker's parse sees in `command`, in [`Expect`]'s words.
    fn seen(command: &str) -> String {
        let script = parse(command).unwrap_or_else(|e| panic!("{command}: {e}"));
        if script.issues.iter().any(|i| i.kind == IssueKind::Wrapper) {
            return Expect::Unknown.to_string();
        }
        let nested: Vec<String> = script
            .commands
            .iter()
            .filter(|c| c.origin == Origin::ShellString && c.depth == 1)
            .map(ToString::to_string)
            .collect();
        if !nested.is_empty() {
            return format!("runs the command line `{}`", nested.join("; "));
        }
        let first = &script.commands[0];
        if first.layers.is_empty() {
            return Expect::Nothing.to_string();
        }
        let name = first.effective_name().unwrap_or_default();
        let writes: Vec<&str> = first
            .layers
            .iter()
            .flat_map(|l| &l.writes)
            .map(|w| w.text.as_str())
            .collect();
        match writes.as_slice() {
            [] => format!("runs `{name}`"),
            [file] => format!("runs `{name}`, writes `{file}`"),
            more => format!("runs `{name}`, writes {more:?}"),
        }
    }

    #[test]
    fn every_example_row_is_what_the_checker_sees() {
        let mut failures = Vec::new();
        for w in WRAPPERS {
            assert!(!w.examples.is_empty(), "{} has no example rows", w.name);
            for (command, expect) in w.examples {
                let got = seen(command);
                if got != expect.to_string() {
                    failures.push(format!("{command}: expected {expect}, got {got}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn every_table_is_consistent() {
        for w in WRAPPERS {
            assert_eq!(w.options.program, w.name);
            let mut shorts = Vec::new();
            let mut longs = Vec::new();
            for o in w.options.opts {
                assert!(o.short.is_some() || !o.long.is_empty(), "{}: {o:?}", w.name);
                if let Some(c) = o.short {
                    assert!(!shorts.contains(&c), "{}: -{c} twice", w.name);
                    shorts.push(c);
                }
                for l in o.long {
                    assert!(!longs.contains(l), "{}: --{l} twice", w.name);
                    longs.push(*l);
                }
            }
            if let Some(n) = w.options.numeric {
                assert!(w.options.opts.iter().any(|o| o.name == n), "{}", w.name);
            }
        }
        let names: Vec<&str> = WRAPPERS.iter().map(|w| w.name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(n), "{n} twice");
        }
    }
}
