//! `find` in the read-only set: start points, then an expression of allowed tests and
//! actions. Anything that runs a program or writes a file (`-exec`, `-execdir`, `-ok`,
//! `-okdir`, `-delete`, `-fprint`, `-fprint0`, `-fprintf`, `-fls`), follows symbolic links
//! while it descends (`-L`, `-follow`: a link to `/` walks the whole disk) or is not listed is
//! not read-only. `-H` follows only the start points, which are checked like every file read.
//!
//! Every word of the expression must be known before run time: a word with an expansion or an
//! unquoted glob, as a test or as a test's argument (`-name *`), can become several words or
//! an action such as `-delete` once expanded.

use crate::shell::Word;

/// Leading options (`find -H .`); `-L` is left out, it follows every link below.
const LEADING: &[&str] = &["-H", "-P"];
/// Tests and actions without an argument.
const FLAGS: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-daystart",
    "-mount",
    "-xdev",
    "-noleaf",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-not",
    "-a",
    "-o",
    "-and",
    "-or",
    "!",
    "(",
    ")",
    ",",
];
/// Tests and actions that take one text argument.
const WITH_TEXT: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-lname",
    "-ilname",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-maxdepth",
    "-mindepth",
    "-printf",
    "-fstype",
    "-context",
];
/// Tests whose argument is a file they look at.
const WITH_PATH: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile"];

/// The start points and the files the expression looks at, or why it is not read-only.
pub(crate) fn classify(args: &[Word]) -> Result<Vec<Word>, String> {
    let mut files = Vec::new();
    let mut i = 0;
    while args
        .get(i)
        .is_some_and(|w| w.is_static() && LEADING.contains(&w.text.as_str()))
    {
        i += 1;
    }
    // Start points: everything before the first word that begins an expression.
    while let Some(w) = args.get(i) {
        if w.is_static() && (w.text.starts_with('-') || matches!(w.text.as_str(), "!" | "(")) {
            break;
        }
        if w.splits || (w.glob && w.text.starts_with(['*', '?', '[', '{', '-'])) {
            return Err(format!(
                "`find`: `{}` could expand to an expression word",
                w.raw
            ));
        }
        files.push(w.clone());
        i += 1;
    }
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.is_static() {
            return Err(format!(
                "`find`: `{}` is only known at run time where an expression word stands",
                w.raw
            ));
        }
        let t = w.text.as_str();
        if FLAGS.contains(&t) {
            continue;
        }
        if WITH_TEXT.contains(&t) || WITH_PATH.contains(&t) {
            let Some(v) = args.get(i) else {
                return Err(format!("`find`: `{t}` needs an argument"));
            };
            if v.splits || v.glob {
                return Err(format!(
                    "`find`: `{}` could expand to several words (quote a pattern: `{t} '*.rs'`)",
                    v.raw
                ));
            }
            if WITH_PATH.contains(&t) {
                files.push(v.clone());
            }
            i += 1;
            continue;
        }
        return Err(format!(
            "`find {t}` is not on the read-only list (it may run a program, write a file, or is unknown)"
        ));
    }
    if files.is_empty() {
        files.push(Word::literal("."));
    }
    Ok(files)
}
