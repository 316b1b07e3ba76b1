//! Recursive readers, and the options that make them follow the symbolic links below the
//! directories they are given.
//!
//! A reader that walks a directory and follows the links it meets reads wherever they lead
//! (`grep -R`, `find -L`, `du -L`, `tar -h`, `cp -rL`, `rsync -L`, ...). [`LINKS`] is the one
//! table of which programs keep links as links and which options make them follow them, or,
//! for those that follow them unless told not to (`diff` of two directories), which option
//! stops them. Two readers use it:
//! - the permission engine's read-only set ([`super::read_only`], `find.rs`): its
//!   allowlists leave out every option the table lists as following links (a test holds them
//!   to it), and a command that follows links by default is read-only only when none of its
//!   operands is a directory ([`super::read_only::Reads::follows_links_in_directories`]);
//! - the sandbox's command checker, through [`of`]: a recursive reader given a directory must
//!   not reach a denied path below it, and one that follows links has each link below checked
//!   too. A recursive program the table does not list is taken to follow them.
//!
//! | command (`./l -> /out`)                     | [`of`]                |
//! |---------------------------------------------|-----------------------|
//! | `grep -r x .`, `find . -name k`, `du .`     | [`Recursion::Tree`]   |
//! | `grep -R x .`, `grep --dereference-rec x .` | [`Recursion::FollowingLinks`] |
//! | `find -L .`, `find . -follow`, `du -L .`    | [`Recursion::FollowingLinks`] |
//! | `tar -hcf a.tar .`, `tar chf a.tar .`       | [`Recursion::FollowingLinks`] |
//! | `diff a b`, `diff -r a b`; `--no-dereference` | following; tree     |
//! | `zip -r a.zip .` (not in the table)         | [`Recursion::FollowingLinks`] |
//! | `ls .`, `cat x`                             | [`Recursion::No`]     |

use super::getopt::long_matches;
use crate::shell::Word;
use crate::shell::wrappers::basename;

/// How a program that recurses treats the symbolic links below the directories it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkOptions {
    /// The names it is known by.
    pub names: &'static [&'static str],
    /// Whether it follows them unless one of [`LinkOptions::unless`] is given (`diff`).
    pub follows_by_default: bool,
    /// The short letters that make it follow them (also inside a cluster: `-rL`).
    pub short: &'static str,
    /// The long options that make it follow them (without `--`; any abbreviation counts).
    pub long: &'static [&'static str],
    /// Words that make it follow them (`find`'s `-follow`).
    pub words: &'static [&'static str],
    /// For a program that follows them by default: the long options that keep links as
    /// links.
    pub unless: &'static [&'static str],
}

const fn keeps(
    names: &'static [&'static str],
    short: &'static str,
    long: &'static [&'static str],
) -> LinkOptions {
    LinkOptions {
        names,
        follows_by_default: false,
        short,
        long,
        words: &[],
        unless: &[],
    }
}

/// The programs known to keep links as links when they recurse, with the options that make
/// them follow links, and those that follow them by default, with the options that stop them.
pub const LINKS: &[LinkOptions] = &[
    keeps(
        &["grep", "egrep", "fgrep", "rgrep"],
        "R",
        &["dereference-recursive"],
    ),
    keeps(&["ls"], "L", &["dereference"]),
    keeps(&["du"], "L", &["dereference"]),
    LinkOptions {
        words: &["-follow"],
        ..keeps(&["find"], "L", &[])
    },
    keeps(&["tree"], "l", &[]),
    keeps(&["rg", "fd", "fdfind"], "L", &["follow"]),
    keeps(&["ag"], "f", &["follow"]),
    keeps(&["ack"], "", &["follow"]),
    keeps(&["tar", "gtar", "bsdtar"], "hL", &["dereference"]),
    keeps(&["cp"], "L", &["dereference"]),
    keeps(
        &["rsync"],
        "Lk",
        &["copy-links", "copy-dirlinks", "copy-unsafe-links"],
    ),
    LinkOptions {
        follows_by_default: true,
        unless: &["no-dereference"],
        ..keeps(&["diff"], "", &[])
    },
];

/// Programs that read directories recursively without being asked to.
pub(crate) const RECURSIVE_BY_DEFAULT: &[&str] = &[
    "find", "rg", "du", "tree", "tar", "zip", "rsync", "fd", "fdfind", "ag", "ack",
];

/// Words that make a program recurse (`grep -r`, `cp -a`, `ls -R`).
const RECURSIVE_FLAGS: &[&str] = &["-r", "-R", "--recursive", "-a", "--archive"];

/// Short letters that make a program recurse inside a cluster (`-rn`); `cp`'s `-a` too.
fn recursive_letters(name: &str) -> &'static [char] {
    if name == "cp" {
        &['r', 'R', 'a']
    } else {
        &['r', 'R']
    }
}

/// The table's entry for the program `name` (a basename).
pub(crate) fn link_options(name: &str) -> Option<&'static LinkOptions> {
    LINKS.iter().find(|l| l.names.contains(&name))
}

impl LinkOptions {
    /// Whether the program, given the static words `args` (the words after its name), follows
    /// the links below the directories it reads. A word only known at run time is not read
    /// here: a caller that cannot tell what it is decides for itself.
    pub fn follows(&self, args: &[Word]) -> bool {
        let given = |w: &Word| {
            let t = w.text.as_str();
            w.is_static()
                && (self.words.contains(&t)
                    || self.long.iter().any(|l| long_matches(t, l))
                    || (is_short_cluster(t) && t[1..].contains(|c| self.short.contains(c))))
        };
        // tar's first word may be a cluster without a dash (`tar chf a.tar .`).
        let old_tar = self.names.contains(&"tar")
            && args.first().is_some_and(|w| {
                !w.text.starts_with('-') && w.text.contains(|c| self.short.contains(c))
            });
        if self.follows_by_default {
            !args
                .iter()
                .any(|w| w.is_static() && self.unless.iter().any(|l| long_matches(&w.text, l)))
        } else {
            old_tar || args.iter().any(given)
        }
    }
}

/// How a command reads the directories it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recursion {
    /// Not recursively.
    No,
    /// Recursively, keeping links below them as links.
    Tree,
    /// Recursively, following links below them.
    FollowingLinks,
}

impl Recursion {
    /// Whether the command reads below the directories it is given.
    pub fn is_recursive(self) -> bool {
        self != Self::No
    }
}

/// How the command `words` (name first, after wrappers) reads directories: recursively when
/// the program does so by default, follows links by default (`diff a b` reads the files inside
/// its directory operands), or is given `-r`, `-R`, `--recursive`, `-a`, `--archive` (any
/// abbreviation, or a letter in a cluster); following links when [`LINKS`] says so, when
/// a word only known at run time could be the option that makes it, or when the program is
/// not in the table.
pub fn of(words: &[Word]) -> Recursion {
    let Some(name) = words.first().map(|w| basename(&w.text)) else {
        return Recursion::No;
    };
    let args = words.get(1..).unwrap_or(&[]);
    let table = link_options(name);
    // A program that follows links by default reads inside the directories it is given
    // (`diff a b` compares their files): taken as recursive, which checks more.
    let recursive = RECURSIVE_BY_DEFAULT.contains(&name)
        || table.is_some_and(|t| t.follows_by_default)
        || args.iter().any(|w| {
            let t = w.text.as_str();
            RECURSIVE_FLAGS.contains(&t)
                || long_matches(t, "recursive")
                || long_matches(t, "dereference-recursive")
                || (is_short_cluster(t) && t[1..].contains(recursive_letters(name)))
        });
    if !recursive {
        return Recursion::No;
    }
    let Some(table) = table else {
        return Recursion::FollowingLinks;
    };
    let unknown = args.iter().any(|w| !w.is_static());
    if (unknown && !table.follows_by_default) || table.follows(args) {
        Recursion::FollowingLinks
    } else {
        Recursion::Tree
    }
}

fn is_short_cluster(t: &str) -> bool {
    t.len() > 1 && t.starts_with('-') && !t.starts_with("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn recursion_follows_links_unless_the_program_is_known_to_keep_them() {
        for c in [
            "grep -R x .",
            "grep -rR x .",
            "grep --dereference-recursive x .",
            "grep --deref x .",
            "ls -RL .",
            "ls -R --dereference .",
            "du -L .",
            "find -L .",
            "find . -follow",
            "tree -l .",
            "rg -L x",
            "rg --follow x",
            "tar -hcf a.tar .",
            "tar --dereference -cf a.tar .",
            "tar chf a.tar .",
            "cp -rL a b",
            "cp -aL a b",
            "rsync -aL a b",
            "rsync -r --copy-links a b",
            "zip -r a.zip .",
            "scp -r a h:b",
            "ag -f x",
            "diff -r a b",
            "diff a b",
        ] {
            assert_eq!(of(&words(c)), Recursion::FollowingLinks, "{c}");
        }
        for c in [
            "grep -r x .",
            "ls -R .",
            "du .",
            "find . -name x",
            "find -H . -name x",
            "tar -cf a.tar .",
            "cp -a a b",
            "rsync -a a b",
            "rg x",
            "diff -r --no-dereference a b",
        ] {
            assert_eq!(of(&words(c)), Recursion::Tree, "{c}");
        }
        for c in ["ls -L x", "cat x", "grep x f"] {
            assert_eq!(of(&words(c)), Recursion::No, "{c}");
        }
    }

    #[test]
    fn a_word_only_known_at_run_time_may_be_the_option_that_follows_links() {
        let mut w = words("grep -r x .");
        w[2] = Word {
            dynamic: true,
            ..Word::literal("$opt")
        };
        assert_eq!(of(&w), Recursion::FollowingLinks);
    }

    #[test]
    fn the_read_only_set_allows_no_option_the_table_lists_as_following_links() {
        for entry in LINKS {
            for name in entry.names {
                if super::super::read_only::lookup(name).is_none() && *name != "find" {
                    continue;
                }
                let spellings = entry
                    .short
                    .chars()
                    .map(|c| format!("-{c}"))
                    .chain(entry.long.iter().map(|l| format!("--{l}")))
                    .chain(entry.words.iter().map(|w| (*w).to_owned()));
                for option in spellings {
                    let cmd = if *name == "find" {
                        format!("{name} . {option}")
                    } else {
                        format!("{name} {option} .")
                    };
                    let cmd = if *name == "find" && option == "-L" {
                        format!("{name} -L .")
                    } else {
                        cmd
                    };
                    assert!(
                        super::super::read_only::classify(&words(&cmd)).is_err(),
                        "{cmd} is read-only"
                    );
                }
                if entry.follows_by_default {
                    let reads = super::super::read_only::classify(&words(&format!("{name} a b")));
                    assert!(
                        reads.is_ok_and(|r| r.follows_links_in_directories),
                        "{name}"
                    );
                }
            }
        }
    }
}
