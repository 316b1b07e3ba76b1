//! Read-only `git`: the global options that change nothing (`--no-pager`, `-P`,
//! `--no-optional-locks`), then one listed subcommand with its listed options. git's
//! parse-options clusters short options, takes attached values and accepts abbreviated long
//! options, so the same parser as for GNU programs applies ([`super::getopt`]); revision
//! options end at the first operand only for a few subcommands, so options after operands
//! are parsed as options everywhere.
//!
//! Operands (revisions and pathspecs) are text, since git refuses paths outside the
//! repository, except for `diff`, which compares any two files when one is outside the work
//! tree (`git diff /etc/passwd x` is `git diff --no-index`), and the `log` family sharing its
//! pathspecs: their operands are checked like files read.

use std::sync::OnceLock;

use super::getopt::{Arg, OptTable, ValueKind, parse_args};
use crate::shell::Word;

/// Options of the diff machinery shared by `diff`, `log`, `show`, `stash show` (never
/// `--output`, `--ext-diff`, `--textconv` or `-O<orderfile>`).
const DIFF: &str = "p|u|--patch s|--no-patch U=|--unified= --output-indicator-new= \
    --output-indicator-old= --output-indicator-context= --raw --patch-with-raw -t \
    --indent-heuristic --no-indent-heuristic --minimal --patience --histogram --anchored= \
    --diff-algorithm= --stat? --compact-summary --numstat --shortstat X?|--dirstat? \
    --cumulative --dirstat-by-file? --summary --patch-with-stat z --name-only --name-status \
    --submodule? --color? --no-color --color-moved? --no-color-moved --color-moved-ws= \
    --no-color-moved-ws --word-diff? --word-diff-regex= --color-words? --no-renames \
    --rename-empty --no-rename-empty --check --ws-error-highlight= --full-index --binary \
    --abbrev? B?|--break-rewrites? M?|--find-renames? C?|--find-copies? \
    --find-copies-harder D|--irreversible-delete l= --diff-filter= S= G= --find-object= \
    --pickaxe-all --pickaxe-regex R --relative? --no-relative a|--text \
    --ignore-cr-at-eol --ignore-space-at-eol b|--ignore-space-change w|--ignore-all-space \
    --ignore-blank-lines I=|--ignore-matching-lines= --inter-hunk-context= W|--function-context \
    --exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules? --src-prefix= \
    --dst-prefix= --no-prefix --default-prefix --line-prefix= --ita-invisible-in-index \
    --ita-visible-in-index";

/// Options of the revision walk shared by `log`, `show`, `shortlog`, `rev-list`, `reflog`.
const REVS: &str = "n=|--max-count= --skip= --since= --after= --since-as-filter= \
    --until= --before= --author= --committer= --grep-reflog= --grep= --all-match \
    --invert-grep i|--regexp-ignore-case --basic-regexp E|--extended-regexp \
    F|--fixed-strings P|--perl-regexp --remove-empty --merges --no-merges --min-parents= \
    --max-parents= --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only \
    --not --all --branches? --tags? --remotes? --glob= --exclude= --exclude-hidden= --reflog \
    --alternate-refs --single-worktree --ignore-missing --bisect --cherry-mark --cherry-pick \
    --left-only --right-only --cherry --merge --boundary --simplify-by-decoration \
    --show-pulls --full-history --dense --sparse --simplify-merges --ancestry-path? \
    --date-order --author-date-order --topo-order --reverse --no-walk? --do-walk \
    --pretty? --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= \
    --expand-tabs? --no-expand-tabs --notes? --no-notes --show-notes? --show-signature \
    --relative-date --date= --parents --children --left-right --graph --show-linear-break? \
    --decorate? --no-decorate --decorate-refs= --decorate-refs-exclude= --source \
    --use-mailmap --mailmap --no-use-mailmap --no-mailmap --full-diff --log-size \
    L= --follow --count -c --cc --dd m --diff-merges= --no-diff-merges --combined-all-paths \
    --no-abbrev --stdin? --in-commit-order";

struct Sub {
    names: &'static [&'static str],
    options: &'static [&'static str],
    numeric: bool,
    /// Operands allowed only together with one of these options (`branch --list PATTERN`).
    operands_need: &'static [&'static str],
    /// Its operands may be files it reads: `git diff` given a path outside the work tree
    /// switches to `--no-index` by itself and compares any two files, so its operands (and
    /// those of `log`, `show` and `whatchanged`, which share its pathspecs) are checked like
    /// every file a read-only command reads; a revision (`HEAD~1`, `main..x`) resolves inside.
    operands_read: bool,
}

const SUBS: &[Sub] = &[
    Sub {
        names: &["status"],
        options: &[
            "s|--short b|--branch --show-stash --porcelain? --long v|--verbose \
            u?|--untracked-files? --ignore-submodules? --ignored? z --column? --no-column \
            --ahead-behind --no-ahead-behind --renames --no-renames --find-renames?",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["diff"],
        options: &[
            DIFF,
            "--cached --staged --merge-base 1|--base 2|--ours 3|--theirs 0",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: true,
    },
    Sub {
        names: &["log", "show", "whatchanged"],
        options: &[DIFF, REVS],
        numeric: true,
        operands_need: &[],
        operands_read: true,
    },
    Sub {
        names: &["shortlog"],
        options: &[REVS, "s|--summary e|--email --group= w?"],
        numeric: true,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["rev-list"],
        options: &[
            REVS,
            "--objects --objects-edge --no-object-names --header \
            --timestamp --quiet --disk-usage?",
        ],
        numeric: true,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["blame"],
        options: &[
            "b --root --show-stats --score-debug f|--show-name n|--show-number \
            s e|--show-email w --abbrev? l t S=P --reverse= --first-parent \
            p|--porcelain --line-porcelain --incremental --encoding= --contents=P --date= \
            --progress --no-progress M? C? L= --ignore-rev= --ignore-revs-file=P \
            --color-lines --color-by-age c",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["grep"],
        options: &[
            "--cached --untracked --exclude-standard --no-exclude-standard \
            --recurse-submodules a|--text --no-textconv I i|--ignore-case \
            --max-depth= r|--recursive --no-recursive w|--word-regexp v|--invert-match \
            h H --full-name E|--extended-regexp G|--basic-regexp P|--perl-regexp \
            F|--fixed-strings n|--line-number --column l|--files-with-matches|--name-only \
            L|--files-without-match z|--null o|--only-matching c|--count --color? --no-color \
            --break --heading p|--show-function A=|--after-context= B=|--before-context= \
            C=|--context= W|--function-context m=|--max-count= --threads= f=P e= --and --or \
            --not --all-match q|--quiet",
        ],
        numeric: true,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["ls-files"],
        options: &[
            "c|--cached d|--deleted m|--modified o|--others i|--ignored s|--stage \
            u|--unmerged k|--killed z t v f --full-name --exclude-standard x=|--exclude= \
            X=P|--exclude-from=P --exclude-per-directory= --directory --no-empty-directory \
            --error-unmatch --abbrev? --debug --eol --deduplicate --recurse-submodules \
            --sparse --format=",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["ls-tree"],
        options: &[
            "d r t l|--long z --name-only|--name-status --object-only --full-name \
            --full-tree --abbrev? --format=",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["rev-parse"],
        options: &["--verify q|--quiet --short? --abbrev-ref? --symbolic \
            --symbolic-full-name --show-toplevel --show-prefix --show-cdup --git-dir \
            --git-common-dir --absolute-git-dir --is-inside-work-tree --is-inside-git-dir \
            --is-bare-repository --is-shallow-repository --show-superproject-working-tree \
            --show-object-format? --show-ref-format --all --branches? --tags? --remotes? \
            --glob= --exclude= --sq --not --default= --prefix= --revs-only --no-revs --flags \
            --no-flags --local-env-vars --since= --after= --until= --before= --path-format= \
            --disambiguate="],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["describe"],
        options: &[
            "--all --tags --contains --abbrev= --candidates= --exact-match --debug \
            --long --match= --exclude= --always --first-parent --dirty? --broken?",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["cat-file"],
        options: &[
            "t s e p --allow-unknown-type --use-mailmap --mailmap --batch? \
            --batch-check? --batch-command? --batch-all-objects --buffer --unordered \
            --follow-symlinks Z z",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["show-ref"],
        options: &[
            "--head --branches --heads --tags d|--dereference s|--hash? --verify \
            --abbrev? q|--quiet --exists",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["merge-base"],
        options: &["a|--all --octopus --independent --is-ancestor --fork-point"],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["for-each-ref"],
        options: &[
            "--count= s|--shell p|--perl --python --tcl --sort= --format= \
            --points-at= --merged? --no-merged? --contains? --no-contains? --exclude= \
            --ignore-case --omit-empty --color?",
        ],
        numeric: false,
        operands_need: &[],
        operands_read: false,
    },
    Sub {
        names: &["branch"],
        options: &[
            "a|--all r|--remotes l|--list v|--verbose q|--quiet --show-current \
            --contains? --no-contains? --merged? --no-merged? --sort= --format= --points-at= \
            --column? --no-column --color? --no-color i|--ignore-case --abbrev= --no-abbrev \
            --omit-empty",
        ],
        numeric: false,
        operands_need: &["list"],
        operands_read: false,
    },
    Sub {
        names: &["tag"],
        options: &[
            "l|--list n? --sort= --contains? --no-contains? --merged? --no-merged? \
            --points-at= --format= --column? --no-column --color? i|--ignore-case \
            --omit-empty",
        ],
        numeric: false,
        operands_need: &["list"],
        operands_read: false,
    },
    Sub {
        names: &["count-objects"],
        options: &["v|--verbose H|--human-readable"],
        numeric: false,
        operands_need: &["-"],
        operands_read: false,
    },
];

fn tables() -> &'static [OptTable] {
    static T: OnceLock<Vec<OptTable>> = OnceLock::new();
    T.get_or_init(|| {
        SUBS.iter()
            .map(|s| {
                let text: &'static str = Box::leak(s.options.join(" ").into_boxed_str());
                OptTable::parse(text, s.numeric)
            })
            .collect()
    })
}

/// Every long option name the read-only tables list for git (exact spellings, which the
/// effects scan must not mistake for abbreviations of dangerous options: `--text` is not
/// `--textconv`).
pub(crate) fn known_long_names() -> &'static [&'static str] {
    static N: OnceLock<Vec<&'static str>> = OnceLock::new();
    N.get_or_init(|| {
        tables()
            .iter()
            .flat_map(|t| t.options.iter().flat_map(|o| o.long.iter().copied()))
            .collect()
    })
}

/// Every subcommand name of the read-only set with its option text (for the docs).
pub fn subcommands() -> impl Iterator<Item = (&'static [&'static str], String)> {
    SUBS.iter().map(|s| (s.names, s.options.join(" ")))
}

/// Whether the read-only subcommand `name` reads its operands as files (see
/// `Sub::operands_read`).
pub(crate) fn reads_operands(name: &str) -> bool {
    SUBS.iter()
        .any(|s| s.operands_read && s.names.contains(&name))
}

/// The files the command reads through options, or why it is not read-only. `args` are the
/// words after `git`.
pub(crate) fn classify(args: &[Word]) -> Result<Vec<Word>, String> {
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        if first.is_static()
            && matches!(
                first.text.as_str(),
                "--no-pager" | "-P" | "--no-optional-locks"
            )
        {
            rest = tail;
        } else {
            break;
        }
    }
    let Some((sub, sub_args)) = rest.split_first() else {
        return Err("`git` without a subcommand".to_owned());
    };
    if !sub.is_static() {
        return Err("`git`'s subcommand is only known at run time".to_owned());
    }
    let name = sub.text.as_str();
    match name {
        "--version" | "version" if sub_args.is_empty() => return Ok(Vec::new()),
        "remote" => return remote(sub_args),
        "stash" => return stash(sub_args),
        "config" => return config(sub_args),
        "reflog" => {
            return match sub_args.split_first() {
                None => Ok(Vec::new()),
                Some((s, more)) if s.is_static() && s.text == "show" => classify_sub("log", more),
                Some(_) => classify_sub("log", sub_args),
            };
        }
        _ => {}
    }
    if name.starts_with('-') {
        return Err(format!(
            "git's global option `{}` is not read-only (`-c` and `--config-env` can set programs to run, `-C`, `--git-dir` and `--work-tree` change the repository)",
            sub.raw
        ));
    }
    classify_sub(name, sub_args)
}

fn classify_sub(name: &str, args: &[Word]) -> Result<Vec<Word>, String> {
    let Some(i) = SUBS.iter().position(|s| s.names.contains(&name)) else {
        return Err(format!("`git {name}` is not in the read-only set"));
    };
    let sub = &SUBS[i];
    let table = &tables()[i];
    let parsed = parse_args(table, args).map_err(|e| format!("`git {name}`: {e}"))?;
    let mut reads = Vec::new();
    let mut has_operands = false;
    let mut listed = false;
    for a in parsed {
        match a {
            Arg::Opt(o, v) => {
                if o.long.contains(&"list") {
                    listed = true;
                }
                if o.value == ValueKind::ReadPath
                    && let Some(v) = v
                {
                    reads.push(v);
                }
            }
            Arg::Operand(w) => {
                has_operands = true;
                if sub.operands_read {
                    reads.push(w.clone());
                }
            }
        }
    }
    if has_operands && !sub.operands_need.is_empty() && !(listed && sub.operands_need == ["list"]) {
        return Err(format!(
            "`git {name}` with an operand changes something (it creates or deletes)"
        ));
    }
    Ok(reads)
}

fn remote(args: &[Word]) -> Result<Vec<Word>, String> {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    if args.iter().any(|w| !w.is_static()) {
        return Err("`git remote` with a value only known at run time".to_owned());
    }
    match texts.as_slice() {
        [] | ["-v"] | ["--verbose"] => Ok(Vec::new()),
        ["get-url", rest @ ..]
            if rest.iter().filter(|t| !t.starts_with('-')).count() == 1
                && rest
                    .iter()
                    .filter(|t| t.starts_with('-'))
                    .all(|t| matches!(*t, "--push" | "--all")) =>
        {
            Ok(Vec::new())
        }
        ["show", "-n", name] if !name.starts_with('-') && !name.contains(':') => Ok(Vec::new()),
        ["show", ..] => Err(
            "`git remote show` contacts the remote unless given `-n` and a remote name".to_owned(),
        ),
        _ => Err("this `git remote` form changes the configuration".to_owned()),
    }
}

fn stash(args: &[Word]) -> Result<Vec<Word>, String> {
    match args.split_first() {
        Some((s, more)) if s.is_static() && s.text == "list" => classify_sub("log", more),
        Some((s, more)) if s.is_static() && s.text == "show" => classify_sub("diff", more),
        _ => Err("only `git stash list` and `git stash show` are read-only".to_owned()),
    }
}

/// `git config` reading forms: `--get`, `--get-all`, `--get-regexp`, `--list`, or the newer
/// `git config get` / `git config list`.
fn config(args: &[Word]) -> Result<Vec<Word>, String> {
    const FLAGS: &[&str] = &[
        "--local",
        "--global",
        "--system",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-z",
        "--null",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
        "--includes",
        "--no-includes",
        "--all",
    ];
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "get",
        "list",
    ];
    let mut reading = false;
    for (i, w) in args.iter().enumerate() {
        if !w.is_static() {
            if reading {
                continue; // a name or pattern
            }
            return Err("`git config` with a value only known at run time".to_owned());
        }
        let t = w.text.as_str();
        if READS.contains(&t) && (i == 0 || t.starts_with('-')) {
            reading = true;
        } else if FLAGS.contains(&t) || t.starts_with("--type=") || t.starts_with("--default=") {
        } else if t.starts_with('-') {
            return Err(format!("`git config {t}` is not on the read-only list"));
        } else if !reading {
            return Err("`git config NAME VALUE` writes the configuration".to_owned());
        }
    }
    if reading {
        Ok(Vec::new())
    } else {
        Err("`git config` without a reading option".to_owned())
    }
}
