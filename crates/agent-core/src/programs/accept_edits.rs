//! The filesystem commands `acceptEdits` runs inside the working directories (claude-code.md
//! §4.4: `mkdir`, `touch`, `rm`, `rmdir`, `mv`, `cp`, `sed`), each with an allowlist of
//! options, parsed as the program parses them ([`super::getopt`]).
//!
//! Left off on purpose: `cp -L` / `--dereference` (copies what the links in a source tree
//! lead to, from anywhere), `cp -l` / `-s` (a link is an alias, not a copy), `--backup` /
//! `-b` / `-S` / `--suffix` of `cp` and `mv` (a backup written under another name), `-t` /
//! `--target-directory` (a write named by an option), `cp --copy-contents`, `mv`/`cp`
//! `--exchange` and `rm --no-preserve-root`; and for `sed`, everything [`super::sed`]
//! refuses (`-f`, `--posix`, `--follow-symlinks`, a script that writes, reads or runs, a `-i`
//! suffix with `/` or `*`).

use std::sync::OnceLock;

use super::getopt::{Arg, OptTable, ValueKind, parse_args};
use crate::shell::Word;

/// The commands and their allowed options, in [`OptTable::parse`]'s compact form.
const COMMANDS: &[(&str, &str)] = &[
    ("mkdir", "p|--parents v|--verbose m=|--mode= Z --context?"),
    (
        "touch",
        "a c|--no-create d=|--date= f h|--no-dereference m r=P|--reference=P t= --time=",
    ),
    (
        "rm",
        "f|--force i I --interactive? r|R|--recursive d|--dir v|--verbose --one-file-system \
         --preserve-root?",
    ),
    (
        "rmdir",
        "p|--parents v|--verbose --ignore-fail-on-non-empty",
    ),
    (
        "mv",
        "f|--force i|--interactive n|--no-clobber u|--update? v|--verbose \
         T|--no-target-directory --strip-trailing-slashes Z|--context",
    ),
    (
        "cp",
        "a|--archive d P|--no-dereference H r|R|--recursive f|--force i|--interactive \
         n|--no-clobber u|--update? v|--verbose p --preserve? --no-preserve= \
         T|--no-target-directory x|--one-file-system --parents --strip-trailing-slashes \
         --attributes-only --reflink? --sparse= --remove-destination \
         --keep-directory-symlink --debug Z|--context?",
    ),
];

fn table(name: &str) -> Option<&'static OptTable> {
    static TABLES: OnceLock<Vec<OptTable>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        COMMANDS
            .iter()
            .map(|(_, o)| OptTable::parse(o, false))
            .collect()
    });
    COMMANDS
        .iter()
        .position(|(n, _)| *n == name)
        .and_then(|i| tables.get(i))
}

/// The paths a filesystem command names (operands and file values of options), when
/// `acceptEdits` may run it once they are all inside the working directories. `words` starts
/// at the command name.
///
/// # Errors
/// Why the command is not one `acceptEdits` runs: another command, an option off its list,
/// no path at all.
pub(crate) fn paths(words: &[Word]) -> Result<Vec<Word>, String> {
    let Some((head, args)) = words.split_first().filter(|(h, _)| h.is_static()) else {
        return Err("the command name is only known at run time".to_owned());
    };
    let name = head.text.as_str();
    let paths = if name == "sed" {
        super::sed::accept_edits(args).map_err(|e| format!("`sed`: {e}"))?
    } else {
        let table = table(name)
            .ok_or_else(|| format!("`{name}` is not a filesystem command `acceptEdits` runs"))?;
        let parsed = parse_args(table, args).map_err(|e| format!("`{name}`: {e}"))?;
        let mut paths = Vec::new();
        for a in parsed {
            match a {
                Arg::Opt(o, Some(v)) if o.value == ValueKind::ReadPath => paths.push(v),
                Arg::Opt(..) => {}
                Arg::Operand(w) => paths.push(w.clone()),
            }
        }
        paths
    };
    if paths.is_empty() {
        return Err(format!("`{name}` names no path"));
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_parses() {
        for (name, _) in COMMANDS {
            let t = table(name).unwrap();
            assert!(!t.options.is_empty(), "{name}");
            for o in &t.options {
                assert!(o.short.is_some() || !o.long.is_empty(), "{name}");
            }
        }
    }
}
