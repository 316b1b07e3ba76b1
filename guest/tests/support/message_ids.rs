//! Leaked Fluent message ids: uutils prints every message through uucore's Fluent bundles, and a
//! message whose locale file was not embedded prints as its id (`ls-total 12`,
//! `ls: ls-error-cannot-access-no-such-file`; docs/guest-coreutils.md, "Locales on a fresh
//! registry"). Shared by the guest's oracle test and the wasm runner's test
//! (crates/agent-wasi/tests/all/coreutils_wasm.rs includes this file by path), so both flag the same
//! words.

use std::collections::BTreeSet;

/// Id prefixes of the utilities' locale files that are not a command name: base32 and base64
/// share `base-` / `basenc-` ids, the checksum commands `ck-` ones, wc has `decoder-` ones.
const SHARED_PREFIXES: [&str; 4] = ["base", "basenc", "ck", "decoder"];

/// Words of the utilities' own messages (their `--help`) that are shaped like an id but are
/// English: `cksum --help` says "base64-encoded", `fold --help` "cut-off".
const HYPHENATED_WORDS: [&str; 2] = ["base64-encoded", "cut-off"];

/// The words of `text`: maximal runs of ASCII letters, digits, `-` and `_`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Whether `word` is shaped like a uutils message id: `<prefix>-<lowercase words joined by ->`
/// with a prefix from `commands` or [`SHARED_PREFIXES`], the first word after it starting with
/// a letter. An option (`--truncate-set1`) starts with `-` and is no id, nor is one of the
/// [`HYPHENATED_WORDS`].
pub fn is_message_id(word: &str, commands: &[&str]) -> bool {
    if HYPHENATED_WORDS.contains(&word) {
        return false;
    }
    let prefixes = commands.iter().copied().chain(SHARED_PREFIXES);
    for prefix in prefixes {
        let Some(rest) = word.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
            continue;
        };
        let starts_with_letter = rest.starts_with(|c: char| c.is_ascii_lowercase());
        let lowercase_words = rest.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
        if starts_with_letter && lowercase_words {
            return true;
        }
    }
    false
}

/// The words of `output` shaped like a message id ([`is_message_id`]) that `allowed` does not
/// contain as a word (the reference's output for the same case and the case's own inputs, so a
/// file named `sort-me` that GNU prints too is no leak), sorted and without duplicates.
pub fn leaked_message_ids(output: &str, allowed: &str, commands: &[&str]) -> Vec<String> {
    let allowed: BTreeSet<&str> = words(allowed).collect();
    let leaked: BTreeSet<&str> = words(output)
        .filter(|w| is_message_id(w, commands) && !allowed.contains(w))
        .collect();
    leaked.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod message_id_tests {
    use super::{is_message_id, leaked_message_ids};

    const COMMANDS: [&str; 6] = ["ls", "cp", "tr", "sha256sum", "base32", "base64"];

    #[test]
    fn ids_of_commands_and_shared_prefixes_are_flagged() {
        for id in [
            "ls-total",
            "ls-error-cannot-access-no-such-file",
            "cp-error-missing-file-operand",
            "sha256sum-about",
            "basenc-help-base2lsbf",
            "ck-error-no-properly-formatted",
        ] {
            assert!(is_message_id(id, &COMMANDS), "{id}");
        }
    }

    #[test]
    fn ordinary_words_are_not_flagged() {
        for word in [
            "ls",
            "total",
            "--truncate-set1",
            "-ls-x",
            "lsx-total",
            "ls-",
            "ls--total",
            "ls-Total",
            "ls-1",
            "ls-a_b",
            "base64-encoded",
            "mv-error-x",
        ] {
            assert!(!is_message_id(word, &COMMANDS), "{word}");
        }
    }

    #[test]
    fn leaks_are_the_id_words_the_reference_lacks() {
        let ours = "ls-total 12\nls: ls-error-cannot-access-no-such-file 'cp-me'\nls-total\n";
        assert_eq!(
            leaked_message_ids(ours, "ls: cannot access 'cp-me': No such file", &COMMANDS),
            ["ls-error-cannot-access-no-such-file", "ls-total"]
        );
        assert!(leaked_message_ids("total 12\ncp-me\n", "cp-me", &COMMANDS).is_empty());
    }
}
