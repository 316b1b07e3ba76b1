//! The built-in read-only command set: an allowlist of options per command.
//!
//! Each command lists the options it may be given and still only read (taken from its manual:
//! GNU coreutils 9, GNU grep 3, GNU diffutils 3, file 5, tree 2, git 2.47). Each option has an
//! arity and says whether its value is a file the command reads (checked like the command's
//! file operands). Options are parsed as the program parses them ([`super::getopt`]): clustered
//! and attached short options, `--long=value` and `--long value`, options after operands. Any
//! option that is not listed, any long option that is not spelled out, and any word only known
//! at run time where an option may stand makes the command not read-only; it then falls
//! through to the allow rules and the mode like any other command.
//!
//! Words are read after brace expansion, as bash passes them. Left out on purpose (they
//! write, run programs, read files named elsewhere, follow symbolic links out of the tree while
//! they walk it, or change state): `ls -L`, `grep -R`, `du -L`, `tree -l`, `rg -L`, `find -L
//! -follow`, `diff` of a directory without `--no-dereference` (the options that follow links are
//! those of [`super::recursion::LINKS`]), the checksum tools' `-c/--check` (it reads every
//! file its list names), `sort -o/--output -T --compress-program --files0-from`, `wc/du
//! --files0-from`, `date -s/--set -f/--file` and operands other than `+FORMAT`, `file -m -C -f
//! -z -Z -S -p`,
//! `diff --from-file --to-file -l`, `grep`'s `--pre`-like features (none in GNU grep), `tree
//! -o -R --fromfile`, `find -exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls`,
//! and for git every global option but `--no-pager` / `-P` / `--no-optional-locks` (`-c` can
//! set `core.pager` or `core.fsmonitor` to any program, `-C` and `--git-dir` change the
//! repository), `--output`, `--ext-diff`, `--textconv`, `-O<orderfile>`, `--no-index`,
//! `git grep -O/--open-files-in-pager`, `git remote show` without `-n` (it contacts the
//! remote), and every subcommand not listed.

use std::sync::OnceLock;

use super::getopt::{Arg, OptTable, ValueKind, parse_args};
use crate::shell::Word;

/// What a command's operands are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// None may be given.
    None,
    /// Text, never opened (`basename`, `seq`).
    Text,
    /// Files the command reads.
    Paths,
    /// A pattern, then files read (`grep`); no pattern operand when `-e` / `-f` gave one.
    PatternThenPaths,
    /// Only `+FORMAT` (`date`).
    Format,
}

/// One command of the read-only set.
#[derive(Clone, Debug)]
pub struct ReadOnlyCommand {
    /// The names it is known by.
    pub names: &'static [&'static str],
    /// The allowed options, in [`OptTable::parse`]'s compact form.
    pub options: &'static str,
    /// Whether `-NUM` is an option.
    pub numeric: bool,
    /// Whether every option of the program is harmless (see [`OptTable::glob_safe`]).
    pub glob_safe: bool,
    /// Its operands.
    pub operands: Operands,
}

/// What a read-only command reads, as [`classify`] finds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// The files it reads (operands and option values), to be checked against the working
    /// directories.
    pub files: Vec<Word>,
    /// It reads what the symbolic links inside a directory among [`Reads::files`] point to, so
    /// none of them may be a directory: `diff a b` of two directories compares the files their
    /// links lead to, wherever that is, unless `--no-dereference` ([`super::recursion::LINKS`]
    /// lists the programs that follow links by default, and the option that stops them).
    pub follows_links_in_directories: bool,
}

impl Reads {
    fn of_files(files: Vec<Word>) -> Self {
        Self {
            files,
            follows_links_in_directories: false,
        }
    }
}

const fn cmd(
    names: &'static [&'static str],
    options: &'static str,
    operands: Operands,
) -> ReadOnlyCommand {
    ReadOnlyCommand {
        names,
        options,
        numeric: false,
        glob_safe: false,
        operands,
    }
}

const SUMS: &str = "b|--binary --tag t|--text z|--zero";

/// The `*sum` digest tools of GNU coreutils in the read-only set.
pub(crate) const DIGEST_TOOLS: &[&str] = &[
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
];

/// The table (git, `find`, `test`, `cd`, `echo` and `printf` have rules of their own below).
pub const COMMANDS: &[ReadOnlyCommand] = &[
    cmd(
        &["ls"],
        "a|--all A|--almost-all --author b|--escape B|--ignore-backups c C d|--directory f \
         F|--classify? --file-type --format= --full-time g --group-directories-first \
         G|--no-group h|--human-readable --si H|--dereference-command-line \
         --dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style= \
         i|--inode I=|--ignore= k|--kibibytes l m n|--numeric-uid-gid \
         N|--literal o p q|--hide-control-chars --show-control-chars Q|--quote-name \
         --quoting-style= r|--reverse R|--recursive s|--size S --sort= --time= --time-style= \
         t T=|--tabsize= u U v w=|--width= x X Z|--context --zero 1 --color? \
         --block-size=",
        Operands::Paths,
    ),
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["cat"],
            "A|--show-all b|--number-nonblank e E|--show-ends n|--number s|--squeeze-blank t \
             T|--show-tabs u v|--show-nonprinting",
            Operands::Paths,
        )
    },
    ReadOnlyCommand {
        glob_safe: true,
        numeric: true,
        ..cmd(
            &["head"],
            "c=|--bytes= n=|--lines= q|--quiet|--silent v|--verbose z|--zero-terminated",
            Operands::Paths,
        )
    },
    ReadOnlyCommand {
        glob_safe: true,
        numeric: true,
        ..cmd(
            &["tail"],
            "c=|--bytes= f|--follow? F n=|--lines= --max-unchanged-stats= --pid= \
             q|--quiet|--silent --retry s=|--sleep-interval= v|--verbose z|--zero-terminated",
            Operands::Paths,
        )
    },
    cmd(
        &["wc"],
        "c|--bytes m|--chars l|--lines L|--max-line-length w|--words --total=",
        Operands::Paths,
    ),
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["stat"],
            "L|--dereference f|--file-system c=|--format= --printf= t|--terse --cached=",
            Operands::Paths,
        )
    },
    cmd(
        &["du"],
        "0|--null a|--all --apparent-size B=|--block-size= b|--bytes c|--total \
         D|H|--dereference-args d=|--max-depth= h|--human-readable --inodes k \
         l|--count-links m P|--no-dereference S|--separate-dirs --si s|--summarize \
         t=|--threshold= --time? --time-style= X=P|--exclude-from=P --exclude= \
         x|--one-file-system",
        Operands::Paths,
    ),
    cmd(
        &["diff"],
        "--normal q|--brief s|--report-identical-files c C= u U=|--unified? e|--ed n|--rcs \
         y|--side-by-side W=|--width= --left-column --suppress-common-lines \
         p|--show-c-function F=|--show-function-line= --label= t|--expand-tabs \
         T|--initial-tab --tabsize= --suppress-blank-empty r|--recursive --no-dereference \
         N|--new-file --unidirectional-new-file --ignore-file-name-case \
         --no-ignore-file-name-case x=|--exclude= X=P|--exclude-from=P S=|--starting-file= \
         i|--ignore-case E|--ignore-tab-expansion Z|--ignore-trailing-space \
         b|--ignore-space-change w|--ignore-all-space B|--ignore-blank-lines \
         I=|--ignore-matching-lines= a|--text --strip-trailing-cr d|--minimal \
         --horizon-lines= --speed-large-files --color? --palette=",
        Operands::Paths,
    ),
    ReadOnlyCommand {
        numeric: true,
        ..cmd(
            &["grep", "egrep", "fgrep"],
            "E|--extended-regexp F|--fixed-strings G|--basic-regexp P|--perl-regexp \
             e=|--regexp= f=P|--file=P i|y|--ignore-case --no-ignore-case v|--invert-match \
             w|--word-regexp x|--line-regexp c|--count --color?|--colour? \
             L|--files-without-match l|--files-with-matches m=|--max-count= o|--only-matching \
             q|--quiet|--silent s|--no-messages b|--byte-offset H|--with-filename \
             h|--no-filename --label= n|--line-number --line-buffered T|--initial-tab Z|--null \
             z|--null-data A=|--after-context= B=|--before-context= C=|--context= a|--text \
             --binary-files= I D=|--devices= d=|--directories= --exclude= --exclude-from=P \
             --exclude-dir= --include= r|--recursive U|--binary",
            Operands::PatternThenPaths,
        )
    },
    ReadOnlyCommand {
        glob_safe: false,
        ..cmd(
            &["rg"],
            "e=|--regexp= f=P|--file=P i|--ignore-case s|--case-sensitive S|--smart-case \
             F|--fixed-strings w|--word-regexp x|--line-regexp v|--invert-match c|--count \
             --count-matches l|--files-with-matches --files-without-match --files \
             n|--line-number N|--no-line-number H|--with-filename I|--no-filename --no-heading \
             --heading --column --no-column o|--only-matching r=|--replace= \
             A=|--after-context= B=|--before-context= C=|--context= m=|--max-count= g=|--glob= \
             --iglob= t=|--type= T=|--type-not= .|--hidden u|--unrestricted --no-ignore \
             --no-ignore-vcs --no-ignore-parent --no-ignore-dot d=|--max-depth= \
             --max-filesize= j=|--threads= --sort= --sortr= --json --vimgrep U|--multiline \
             --multiline-dotall P|--pcre2 --color= --colors= p|--pretty q|--quiet a|--text \
             --binary 0|--null --null-data --trim M=|--max-columns= --stats --type-list \
             --no-messages --passthru --debug",
            Operands::PatternThenPaths,
        )
    },
    cmd(
        &["sort"],
        "b|--ignore-leading-blanks d|--dictionary-order f|--ignore-case \
         g|--general-numeric-sort i|--ignore-nonprinting M|--month-sort \
         h|--human-numeric-sort n|--numeric-sort R|--random-sort --random-source=P r|--reverse \
         V|--version-sort --sort= k=|--key= m|--merge c C --check? s|--stable \
         t=|--field-separator= u|--unique z|--zero-terminated --debug S=|--buffer-size= \
         --parallel=",
        Operands::Paths,
    ),
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["cut"],
            "b=|--bytes= c=|--characters= d=|--delimiter= f=|--fields= n --complement \
             s|--only-delimited --output-delimiter= z|--zero-terminated",
            Operands::Paths,
        )
    },
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["nl"],
            "b=|--body-numbering= d=|--section-delimiter= f=|--footer-numbering= \
             h=|--header-numbering= i=|--line-increment= l=|--join-blank-lines= \
             n=|--number-format= p|--no-renumber s=|--number-separator= \
             v=|--starting-line-number= w=|--number-width=",
            Operands::Paths,
        )
    },
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["tac"],
            "b|--before r|--regex s=|--separator=",
            Operands::Paths,
        )
    },
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["realpath"],
            "e|--canonicalize-existing m|--canonicalize-missing L|--logical P|--physical \
             q|--quiet --relative-to=P --relative-base=P s|--strip|--no-symlinks z|--zero",
            Operands::Paths,
        )
    },
    ReadOnlyCommand {
        glob_safe: true,
        ..cmd(
            &["readlink"],
            "f|--canonicalize e|--canonicalize-existing m|--canonicalize-missing \
             n|--no-newline q|--quiet s|--silent v|--verbose z|--zero",
            Operands::Paths,
        )
    },
    cmd(DIGEST_TOOLS, SUMS, Operands::Paths),
    cmd(
        &["cksum"],
        "a=|--algorithm= --base64 l=|--length= --raw --tag --untagged z|--zero",
        Operands::Paths,
    ),
    cmd(
        &["file"],
        "b|--brief i|--mime --mime-type --mime-encoding L|--dereference h|--no-dereference \
         N|--no-pad 0|--print0 r|--raw s|--special-files E k|--keep-going e=|--exclude= \
         --exclude-quiet= --extension --apple F=|--separator= P=|--parameter=",
        Operands::Paths,
    ),
    ReadOnlyCommand {
        ..cmd(
            &["tree"],
            "a d f x L= P= I= --gitignore --ignore-case --matchdirs --metafirst --prune \
             --info --noreport --charset= --filelimit= q N Q p u g s h --si --du D --timefmt= \
             F --inodes --device v t c U r --dirsfirst --filesfirst --sort= i A S n C X J \
             --nolinks",
            Operands::Paths,
        )
    },
    cmd(
        &["date"],
        "d=|--date= I?|--iso-8601? R|--rfc-email --rfc-3339= r=P|--reference=P \
         u|--utc|--universal --debug",
        Operands::Format,
    ),
    cmd(
        &["uname"],
        "a|--all s|--kernel-name n|--nodename r|--kernel-release v|--kernel-version \
         m|--machine p|--processor i|--hardware-platform o|--operating-system",
        Operands::None,
    ),
    cmd(
        &["basename"],
        "a|--multiple s=|--suffix= z|--zero",
        Operands::Text,
    ),
    cmd(&["dirname"], "z|--zero", Operands::Text),
    cmd(
        &["id"],
        "a Z|--context g|--group G|--groups n|--name r|--real u|--user z|--zero",
        Operands::Text,
    ),
    cmd(&["whoami"], "", Operands::None),
    cmd(&["nproc"], "--all --ignore=", Operands::None),
    cmd(&["pwd"], "L P", Operands::None),
    cmd(&["true", "false", ":"], "", Operands::Text),
    cmd(
        &["seq"],
        "f=|--format= s=|--separator= w|--equal-width",
        Operands::Text,
    ),
    cmd(&["which"], "a s", Operands::Text),
];

fn tables() -> &'static [(&'static ReadOnlyCommand, OptTable)] {
    static TABLES: OnceLock<Vec<(&'static ReadOnlyCommand, OptTable)>> = OnceLock::new();
    TABLES.get_or_init(|| {
        COMMANDS
            .iter()
            .map(|c| {
                let t = OptTable::parse(c.options, c.numeric);
                (c, if c.glob_safe { t.glob_safe() } else { t })
            })
            .collect()
    })
}

/// The table entry of `name`, if it is in the set.
pub fn lookup(name: &str) -> Option<(&'static ReadOnlyCommand, &'static OptTable)> {
    tables()
        .iter()
        .find(|(c, _)| c.names.contains(&name))
        .map(|(c, t)| (*c, t))
}

/// What a read-only command reads (its files to be checked against the working directories),
/// or why it is not read-only. `words` starts at the command name; they are read after brace
/// expansion, as bash passes them ([`crate::shell::braces::expand_words`]).
///
/// # Errors
/// A sentence saying which word makes the command not read-only.
pub fn classify(words: &[Word]) -> Result<Reads, String> {
    let words = crate::shell::braces::expand_words(words).map_err(|_| {
        format!(
            "its braces make more than {} words, too many to check one by one",
            crate::shell::braces::MAX_CHECKED_WORDS
        )
    })?;
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return Err("the command name is only known at run time".to_owned());
    };
    // A path-qualified name (`./ls`) may be any program.
    let name = head.text.as_str();
    let args = &words[1..];
    let files = match name {
        "echo" => Ok(Vec::new()),
        "printf" => printf(args),
        "test" | "[" => super::test::classify(name, args),
        "cd" => cd(args),
        "find" => super::find::classify(args),
        "git" => super::git::classify(args),
        _ => return table_command(name, args),
    };
    files.map(Reads::of_files)
}

/// A command of [`COMMANDS`].
fn table_command(name: &str, args: &[Word]) -> Result<Reads, String> {
    let (spec, table) =
        lookup(name).ok_or_else(|| format!("`{name}` is not in the read-only set"))?;
    let parsed = parse_args(table, args).map_err(|e| format!("`{name}`: {e}"))?;
    let mut reads = Vec::new();
    let mut operands = Vec::new();
    let mut pattern_given = false;
    let follows = super::recursion::link_options(name).is_some_and(|l| l.follows(args));
    for a in parsed {
        match a {
            Arg::Opt(o, Some(v)) => {
                if o.value == ValueKind::ReadPath {
                    reads.push(v);
                }
                if matches!(o.short, Some('e' | 'f')) || o.long.contains(&"regexp") {
                    pattern_given = true;
                }
            }
            Arg::Opt(_, None) => {}
            Arg::Operand(w) => operands.push(w.clone()),
        }
    }
    let files = match spec.operands {
        Operands::None if !operands.is_empty() => {
            return Err(format!("`{name}` takes no operands here"));
        }
        Operands::None | Operands::Text => reads,
        Operands::Format => match operands.as_slice() {
            [] => reads,
            [f] if f.text.starts_with('+') => reads,
            _ => {
                return Err(format!(
                    "`{name}` with an operand other than +FORMAT sets the clock"
                ));
            }
        },
        Operands::Paths => {
            reads.extend(operands);
            reads
        }
        Operands::PatternThenPaths => {
            let skip = usize::from(!pattern_given);
            reads.extend(operands.into_iter().skip(skip));
            reads
        }
    };
    Ok(Reads {
        files,
        follows_links_in_directories: follows,
    })
}

/// `printf FORMAT [ARG...]`: the format may not be an option (`-v` assigns a variable), so it
/// is static, or anything after `--`; the arguments are text.
fn printf(args: &[Word]) -> Result<Vec<Word>, String> {
    match args {
        [dd, ..] if dd.is_static() && dd.text == "--" => Ok(Vec::new()),
        [f, ..] if f.is_static() && f.text.starts_with('-') => {
            Err("`printf` with an option (`-v` assigns a variable)".to_owned())
        }
        [f, ..] if !f.is_static() => {
            Err("`printf`'s format is only known at run time and could be an option".to_owned())
        }
        _ => Ok(Vec::new()),
    }
}

/// `cd DIR` with one static directory (checked like a read), `-L` / `-P` allowed. `cd` alone
/// (home) and `cd -` (the previous directory) go somewhere the parse cannot check.
fn cd(args: &[Word]) -> Result<Vec<Word>, String> {
    let mut operands = Vec::new();
    let mut done = false;
    for w in args {
        if !done && w.is_static() && matches!(w.text.as_str(), "-L" | "-P" | "-e" | "-@") {
            continue;
        }
        if !done && w.text == "--" {
            done = true;
            continue;
        }
        operands.push(w.clone());
    }
    match operands.as_slice() {
        [d] if d.is_static() && d.text != "-" => Ok(operands),
        [d] if d.text == "-" => Err("`cd -` goes to a directory only known at run time".into()),
        [] => Err("`cd` alone goes to the home directory".into()),
        _ => Err("`cd` needs one static directory".into()),
    }
}

/// The read-only set as a Markdown table (docs/permissions.md holds it; a test keeps the two
/// equal): each command, its allowed options in [`OptTable::parse`]'s compact form, and what
/// its operands are.
pub fn markdown_table() -> String {
    let mut out = String::from("| command | allowed options | operands |\n|---|---|---|\n");
    let operands = |o: Operands| match o {
        Operands::None => "none",
        Operands::Text => "text",
        Operands::Paths => "files read",
        Operands::PatternThenPaths => "a pattern (unless `-e`/`-f`), then files read",
        Operands::Format => "`+FORMAT` only",
    };
    // Pipes inside a table cell are escaped (GitHub renders `\|` in a code span as `|`).
    let squash = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace('|', "\\|")
    };
    for c in COMMANDS {
        let opts = squash(c.options);
        let opts = if opts.is_empty() {
            "none".to_owned()
        } else {
            format!("`{opts}`")
        };
        let numeric = if c.numeric { " and `-NUM`" } else { "" };
        let links = c
            .names
            .first()
            .and_then(|n| super::recursion::link_options(n))
            .filter(|l| l.follows_by_default)
            .and_then(|l| l.unless.first())
            .map(|o| format!(" (no directory without `--{o}`)"))
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{}` | {opts}{numeric} | {}{links} |\n",
            c.names.join("`, `"),
            operands(c.operands)
        ));
    }
    for (names, text) in super::git::subcommands() {
        let operands = if names.iter().any(|n| super::git::reads_operands(n)) {
            "revisions and pathspecs, checked as files read"
        } else {
            "revisions and pathspecs (text)"
        };
        out.push_str(&format!(
            "| `git {}` | `{}` | {operands} |\n",
            names.join("`, `git "),
            squash(&text)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_parses() {
        for (c, t) in tables() {
            let listed: usize = c
                .options
                .split_whitespace()
                .map(|e| {
                    let shorts = e.split('|').filter(|n| !n.starts_with("--")).count();
                    shorts.max(1)
                })
                .sum();
            assert_eq!(t.options.len(), listed, "{:?}", c.names);
            for o in &t.options {
                assert!(o.short.is_some() || !o.long.is_empty(), "{:?}", c.names);
            }
        }
    }
}
