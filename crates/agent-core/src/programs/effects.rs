//! What known programs write or run through their options, whatever rule allowed them.
//!
//! The permission engine's safety step (protected paths, out-of-scope writes) applies to the
//! files found here as it does to redirects, even when an allow rule matches the command
//! (`Bash(git log *)` does not approve `git log --output=~/.bashrc`), and a program-running
//! option (`--ext-diff`, `--script-shell=…`, `git -c core.pager=…`) makes the call ask. This
//! goes beyond Claude Code, which checks redirects only.
//!
//! This side is a list of known dangers, so it errs towards finding them: a long option is
//! matched by any prefix (`--outp` is `--output`, as `getopt_long` and git would read it; an
//! ambiguous prefix the program would refuse is treated as the option), and a short option is
//! found anywhere in a cluster. What is *allowed* without asking is decided elsewhere, by
//! allowlists ([`super::read_only`]), and a word these checks cannot read (an expansion or a
//! glob that could be an option) keeps a prefix allow rule from approving the command
//! (`rule_scope.rs`). The words are read after brace expansion; sed's scripts are read
//! by the `sed` module's parser.

use super::getopt::{Event, TableKind, long_matches, scan};
use super::getopt_long::Opt;
use crate::shell::{SimpleCommand, Word};

/// What a command does through its options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Files (or directories) it writes.
    pub writes: Vec<Word>,
    /// Files it reads through options (outside its operands), or through operands that are
    /// not plainly files (`git diff`'s, which may be any file outside the work tree).
    pub reads: Vec<Word>,
    /// Why it runs another program, if it does.
    pub runs: Option<String>,
}

/// An option looked for (only its letter, long names and arity count here).
type ValueOpt = Opt;

const fn v(short: Option<char>, long: &'static [&'static str]) -> ValueOpt {
    Opt::value("", short, long)
}

/// The options of `opts` found in `args`, in order, read as a search
/// ([`TableKind::Search`]: any prefix of a long name, a short letter anywhere in a cluster,
/// other options taken as flags, options after operands too, up to `--`); `known` are other
/// long options of the program spelled out exactly, never abbreviations of those looked for.
fn search<'o>(args: &[Word], opts: &'o [Opt], known: &[&str]) -> Vec<(&'o Opt, Option<Word>)> {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let scanned = scan(
        opts,
        TableKind::Search { known },
        &texts,
        |_| None,
        |_, _| Ok::<(), std::convert::Infallible>(()),
    );
    scanned
        .events
        .into_iter()
        .filter_map(|e| match e {
            Event::Opt(opt, _, value) => Some((
                opt,
                value.map(|v| {
                    if v.attached {
                        Word {
                            text: v.text,
                            ..args[v.at].clone()
                        }
                    } else {
                        args[v.at].clone()
                    }
                }),
            )),
            Event::Operand(_) => None,
        })
        .collect()
}

/// Values of the options in `opts`, in every spelling (attached, separate, `=`, abbreviated,
/// clustered).
fn values(args: &[Word], opts: &[ValueOpt]) -> Vec<Word> {
    values_known(args, opts, &[])
}

/// [`values`], where the long names in `known` are other options of the program spelled out
/// exactly, never abbreviations of the ones looked for.
fn values_known(args: &[Word], opts: &[ValueOpt], known: &[&str]) -> Vec<Word> {
    search(args, opts, known)
        .into_iter()
        .filter_map(|(_, value)| value)
        .collect()
}

/// The first option of `shorts` / `longs` present in any spelling.
fn present(args: &[Word], shorts: &str, longs: &'static [&'static str]) -> Option<String> {
    present_known(args, shorts, longs, &[])
}

/// [`present`] with the program's exactly spelled other options (see [`values_known`]).
fn present_known(
    args: &[Word],
    shorts: &str,
    longs: &'static [&'static str],
    known: &[&str],
) -> Option<String> {
    let opts: Vec<Opt> = shorts
        .chars()
        .map(|c| Opt::flag("", Some(c), &[]))
        .chain(
            longs
                .iter()
                .map(|l| Opt::flag("", None, std::slice::from_ref(l))),
        )
        .collect();
    let (found, _) = search(args, &opts, known).into_iter().next()?;
    Some(match (found.short, found.long.first()) {
        (Some(c), _) => format!("-{c}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => String::new(),
    })
}

fn runs(name: &str, option: &str, what: &str) -> Option<String> {
    Some(format!("`{name} {option}` {what}"))
}

/// Keys `git -c` may set without the call asking: display settings that run nothing.
const SAFE_GIT_CONFIG: &[&str] = &[
    "color.",
    "core.quotepath",
    "core.abbrev",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "i18n.logoutputencoding",
    "column.",
    "advice.",
];

/// What one program does through its options: its names, and the reader of its arguments.
type Reader = fn(&str, &[Word], &mut Effects);

/// The programs whose options are read here, by name (the first word's basename).
const PROGRAMS: &[(&[&str], Reader)] = &[
    (&["git"], |_, args, e| git(args, e)),
    (&["sort"], sort),
    (&["wc", "du"], |_, args, e| {
        e.reads = values(args, &[v(None, &["files0-from"])]);
    }),
    (&["tree"], |_, args, e| {
        e.writes = values(args, &[v(Some('o'), &[])])
    }),
    (&["date"], date),
    (&["file"], file),
    (&["cp", "mv", "install", "ln"], |_, args, e| {
        e.writes = values(args, &[v(Some('t'), &["target-directory"])]);
    }),
    (&["tee"], |_, args, e| tee(args, e)),
    (&["tar"], |_, args, e| tar(args, e)),
    (&["curl"], curl),
    (&["wget"], wget),
    (&["npm", "npx", "pnpm", "yarn"], package_manager),
    (&["rg"], |name, args, e| {
        e.runs = present(args, "z", &["pre", "hostname-bin", "search-zip"])
            .and_then(|o| runs(name, &o, "runs a preprocessor or decompressor program"));
    }),
    (&["rsync"], |name, args, e| {
        e.runs = present(args, "e", &["rsh", "rsync-path"])
            .and_then(|o| runs(name, &o, "runs the given program"));
    }),
    (&["scp", "sftp"], |name, args, e| {
        e.runs =
            present(args, "S", &[]).and_then(|o| runs(name, &o, "runs the given program as ssh"));
    }),
    (&["ssh"], ssh),
    (&["find"], |_, args, e| find(args, e)),
    (&["sed"], |_, args, e| sed(args, e)),
    (super::read_only::DIGEST_TOOLS, checksums),
    (&["b2sum", "cksum"], checksums),
];

/// Whether [`of`] reads the options of the program `name` (a basename): a program whose
/// options it checks, so that an argument it cannot read (a word only known at run time where
/// an option may stand) leaves those checks undone.
pub(crate) fn inspects_options(name: &str) -> bool {
    PROGRAMS.iter().any(|(names, _)| names.contains(&name))
}

/// The effects of `cmd`: those of the innermost command, run with the words it gets
/// ([`SimpleCommand::effective_argv`]: `xargs`' items included), and the files its wrappers
/// write and read themselves (`time -o FILE`, `flock FILE`, `xargs -a FILE`), at any depth of
/// wrapping.
pub fn of_command(cmd: &SimpleCommand) -> Effects {
    let mut e = of(&cmd.effective_argv());
    for layer in &cmd.layers {
        e.writes.extend(layer.writes.iter().cloned());
        e.reads.extend(layer.reads.iter().cloned());
    }
    e
}

/// The effects of the command `words` (name first, after any wrapper), read after brace
/// expansion as bash passes them (`git log {--output=F,}` writes `F`).
pub fn of(words: &[Word]) -> Effects {
    let mut e = Effects::default();
    let Ok(words) = crate::shell::braces::expand_words(words) else {
        e.runs = Some(format!(
            "its braces make more than {} words, too many to check for options that write or run programs",
            crate::shell::braces::MAX_CHECKED_WORDS
        ));
        return e;
    };
    let Some(name) = words
        .first()
        .filter(|w| w.is_static())
        .map(|w| crate::shell::wrappers::basename(&w.text))
    else {
        return e;
    };
    if let Some((_, reader)) = PROGRAMS.iter().find(|(names, _)| names.contains(&name)) {
        reader(name, &words[1..], &mut e);
    }
    e
}

fn sort(name: &str, args: &[Word], e: &mut Effects) {
    e.writes = values(args, &[v(Some('o'), &["output"])]);
    e.writes
        .extend(values(args, &[v(Some('T'), &["temporary-directory"])]));
    e.reads = values(args, &[v(None, &["files0-from", "random-source"])]);
    e.runs = present(args, "", &["compress-program"])
        .and_then(|o| runs(name, &o, "runs a compression program"));
}

fn date(name: &str, args: &[Word], e: &mut Effects) {
    e.reads = values(args, &[v(Some('f'), &["file"])]);
    e.runs = present(args, "s", &["set"]).and_then(|o| runs(name, &o, "sets the system clock"));
}

fn file(_: &str, args: &[Word], e: &mut Effects) {
    e.reads = values(
        args,
        &[v(Some('m'), &["magic-file"]), v(Some('f'), &["files-from"])],
    );
    if present(args, "C", &["compile"]).is_some() {
        e.writes.push(Word::literal("magic.mgc"));
    }
}

/// `tee` exists to write files: its operands are checked like redirect targets.
fn tee(args: &[Word], e: &mut Effects) {
    let mut options_done = false;
    for w in args {
        if !options_done && w.text == "--" {
            options_done = true;
        } else if options_done || !w.text.starts_with('-') || w.text == "-" {
            e.writes.push(w.clone());
        }
    }
}

fn curl(name: &str, args: &[Word], e: &mut Effects) {
    e.writes = values(
        args,
        &[
            v(Some('o'), &["output"]),
            v(Some('D'), &["dump-header"]),
            v(Some('c'), &["cookie-jar"]),
            v(
                None,
                &[
                    "trace",
                    "trace-ascii",
                    "stderr",
                    "libcurl",
                    "etag-save",
                    "hsts",
                    "alt-svc",
                    "output-dir",
                ],
            ),
        ],
    );
    if present(args, "O", &["remote-name", "remote-name-all"]).is_some() {
        e.writes.push(dynamic_target("the remote file name"));
    }
    e.runs = present(args, "K", &["config"])
        .and_then(|o| runs(name, &o, "reads options (outputs included) from a file"));
}

fn wget(name: &str, args: &[Word], e: &mut Effects) {
    e.writes = values(
        args,
        &[
            v(Some('O'), &["output-document"]),
            v(Some('o'), &["output-file"]),
            v(Some('a'), &["append-output"]),
            v(Some('P'), &["directory-prefix"]),
            v(None, &["save-cookies", "warc-file"]),
        ],
    );
    e.runs = present(args, "e", &["execute", "use-askpass"])
        .and_then(|o| runs(name, &o, "runs commands or a program"));
}

/// Options of npm, pnpm and yarn that choose the program a script runs with (`--script-shell`,
/// `--shell`, `--node-options`, `--node-gyp`, `--editor`, ...), the configuration that can
/// (`--userconfig`, `--globalconfig`, yarn's `--use-yarnrc`), or the package whose scripts run
/// (`--prefix` / npm's `-C`, pnpm's `--dir` / `-C`, yarn's `--cwd`); npm's `-c` / `--call` is
/// a command of its own. npm reads abbreviations, so any prefix counts.
const PACKAGE_MANAGER_RUNNERS: &[&str] = &[
    "script-shell",
    "shell",
    "node-options",
    "node-gyp",
    "userconfig",
    "globalconfig",
    "use-yarnrc",
    "prefix",
    "dir",
    "cwd",
    "call",
    "editor",
    "browser",
    "viewer",
    "git",
    "init-module",
    "onload-script",
];

fn package_manager(name: &str, args: &[Word], e: &mut Effects) {
    e.runs = present(args, "Cc", PACKAGE_MANAGER_RUNNERS).and_then(|o| {
        runs(
            name,
            &o,
            "chooses the shell, program, configuration or package its scripts run with",
        )
    });
}

fn ssh(name: &str, args: &[Word], e: &mut Effects) {
    if args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        t.contains("proxycommand") || t.contains("localcommand")
    }) {
        e.runs = runs(name, "-o ProxyCommand/LocalCommand", "runs a local command");
    }
}

fn find(args: &[Word], e: &mut Effects) {
    let mut it = args.iter();
    while let Some(w) = it.next() {
        if matches!(
            w.text.as_str(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls"
        ) && let Some(f) = it.next()
        {
            e.writes.push(f.clone());
        }
    }
}

/// sed's script writes (`w`, `s///w`), reads (`r`, `R`) and runs (`e`, `s///e`); `-i` with a
/// suffix writes a backup of every file. A script that cannot be read (from `-f`, only known
/// at run time, or not parsing) counts as running a program.
fn sed(args: &[Word], e: &mut Effects) {
    use super::sed::Command;
    let call = match super::sed::read(args) {
        Ok(call) => call,
        Err(why) => {
            e.runs = Some(format!(
                "{why}; a sed script can write files and run commands"
            ));
            return;
        }
    };
    for c in &call.commands {
        match c {
            Command::Substitute {
                execute: true,
                write,
            } => {
                e.runs = runs("sed", "s///e", "runs the result as a command");
                e.writes.extend(write.as_deref().map(Word::literal));
            }
            Command::Substitute {
                execute: false,
                write,
            } => e.writes.extend(write.as_deref().map(Word::literal)),
            Command::Execute => e.runs = runs("sed", "e", "runs a command from its script"),
            Command::Write(f) => e.writes.push(Word::literal(f)),
            Command::Read(f) => e.reads.push(Word::literal(f)),
            Command::Other(_) => {}
        }
    }
    e.writes
        .extend(call.files.iter().filter_map(|f| call.backup_of(f)));
}

/// `--check` reads every file its checksum list names: files the command line never shows.
fn checksums(name: &str, args: &[Word], e: &mut Effects) {
    if let Some(o) = present(args, "c", &["check"]) {
        e.reads.push(dynamic_target(&format!(
            "the files `{name} {o}` reads from its checksum list"
        )));
    }
}

/// A write whose target is only known at run time.
fn dynamic_target(what: &str) -> Word {
    Word {
        text: what.to_owned(),
        raw: what.to_owned(),
        dynamic: true,
        ..Word::default()
    }
}

fn git(args: &[Word], e: &mut Effects) {
    // Global options, before the subcommand.
    let mut i = 0;
    let mut moved = false;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        i += 1;
        let (opt, value) = match t.split_once('=') {
            Some((o, v)) => (o, Some(v.to_owned())),
            None => (t, None),
        };
        let takes = |long: &str| long_matches(opt, long) || opt == long;
        if opt == "-c" || opt.starts_with("-c") && opt.len() > 2 {
            let setting = if opt.len() > 2 {
                Some(opt[2..].to_owned())
            } else {
                let v = args.get(i).map(|w| w.text.clone());
                i += 1;
                v
            };
            let key = setting.as_deref().unwrap_or("").to_ascii_lowercase();
            if !SAFE_GIT_CONFIG.iter().any(|k| key.starts_with(k)) || !w.is_static() {
                e.runs = runs(
                    "git",
                    &format!("-c {}", setting.unwrap_or_default()),
                    "sets configuration that can name programs to run (core.pager, core.fsmonitor, alias.*, ...)",
                );
            }
        } else if takes("config-env") || takes("exec-path") {
            e.runs = runs("git", t, "chooses programs git runs");
        } else if opt == "-C"
            || takes("git-dir")
            || takes("work-tree")
            || takes("namespace")
            || takes("super-prefix")
        {
            moved |= opt == "-C" || takes("git-dir") || takes("work-tree");
            if value.is_none() {
                i += 1; // the option's value
            }
        }
    }
    let Some(sub) = args.get(i) else { return };
    let sub_args = &args[i + 1..];
    let sub_name = sub.text.as_str();
    let known = super::git::known_long_names();
    e.writes
        .extend(values_known(sub_args, &[v(None, &["output"])], known));
    if matches!(sub_name, "format-patch" | "archive") {
        e.writes.extend(values(
            sub_args,
            &[v(Some('o'), &["output-directory", "output"])],
        ));
    }
    if e.runs.is_none() {
        let runner = present_known(
            sub_args,
            "",
            &[
                "ext-diff",
                "textconv",
                "upload-pack",
                "receive-pack",
                "exec",
                "extcmd",
                "open-files-in-pager",
                "tool",
                "sequence-editor",
            ],
            known,
        );
        let short = match sub_name {
            "grep" => present(sub_args, "O", &[]),
            "rebase" => present(sub_args, "x", &[]),
            "difftool" | "mergetool" => present(sub_args, "xt", &[]),
            "clone" | "fetch" | "pull" | "ls-remote" | "archive" => present(sub_args, "u", &[]),
            _ => None,
        };
        if let Some(o) = runner.or(short) {
            e.runs = runs("git", &o, "runs a program");
        } else if matches!(sub_name, "bisect") && sub_args.first().is_some_and(|w| w.text == "run")
        {
            e.runs = runs("git", "bisect run", "runs a program");
        } else if sub_name == "submodule" && sub_args.iter().any(|w| w.text == "foreach") {
            e.runs = runs(
                "git",
                "submodule foreach",
                "runs a command in every submodule",
            );
        } else if matches!(sub_name, "filter-branch") {
            e.runs = runs("git", "filter-branch", "runs filter commands");
        }
    }
    // Positional directories written.
    let operands: Vec<&Word> = sub_args
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .collect();
    // `git diff` given a path outside the work tree (or run outside one) compares files with
    // `--no-index` by itself: every operand may be a file it reads, from the directory `-C`
    // names when there is one.
    if sub_name == "diff" {
        if moved {
            e.reads
                .push(dynamic_target("the files `git -C … diff` compares"));
        } else {
            e.reads.extend(operands.iter().map(|w| (*w).clone()));
        }
    }
    match sub_name {
        "init" => e.writes.extend(operands.first().map(|w| (*w).clone())),
        "clone" => {
            if let Some(dir) = operands.get(1) {
                e.writes.push((*dir).clone());
            } else {
                e.writes
                    .push(dynamic_target("the directory named after the repository"));
            }
        }
        "worktree" if operands.first().is_some_and(|w| w.text == "add") => {
            e.writes.extend(operands.get(1).map(|w| (*w).clone()));
        }
        _ => {}
    }
}

fn tar(args: &[Word], e: &mut Effects) {
    // Old-style `tar cf FILE ...`: the first word is a cluster without its dash.
    let mut owned: Vec<Word> = args.to_vec();
    if let Some(first) = owned.first_mut()
        && !first.text.starts_with('-')
        && !first.text.is_empty()
        && first.text.chars().all(|c| c.is_ascii_alphabetic())
    {
        first.text.insert(0, '-');
    }
    let args = owned.as_slice();
    let creating = present(
        args,
        "cruA",
        &["create", "append", "update", "catenate", "concatenate"],
    )
    .is_some();
    let files = values(args, &[v(Some('f'), &["file"])]);
    if creating {
        e.writes.extend(files);
    } else {
        e.reads.extend(files);
        if present(args, "x", &["extract", "get"]).is_some() {
            let dirs = values(args, &[v(Some('C'), &["directory"])]);
            if dirs.is_empty() {
                e.writes.push(Word::literal("."));
            }
            e.writes.extend(dirs);
        }
    }
    e.runs = present(
        args,
        "IF",
        &[
            "to-command",
            "use-compress-program",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
        ],
    )
    .and_then(|o| runs("tar", &o, "runs a program"));
}
