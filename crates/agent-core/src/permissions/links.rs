//! Commands that make links, and the files a link makes writable under another name.
//!
//! A link is another name for its source: after `cp -l .git/config cfg`, `cp -s …`, `ln …`,
//! `ln -s …` or `link …`, writing `cfg` writes `.git/config`, and the later write (`echo x >
//! cfg`, an ordinary file in the working directory when the command is checked) cannot be
//! told apart from any other. So a command that links is checked as writing its sources too:
//! a protected source, or one inside a protected directory (`cp -al .git g2`), asks like any
//! protected write, and an `Edit` deny rule on a source fires. A symbolic link's target is
//! read relative to the link's directory, so a relative source is also checked from there.

use crate::shell::Word;

/// The kind of link a command makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// A hard link: the same file under a second name.
    Hard,
    /// A symbolic link, whose target is resolved from the link's directory.
    Symbolic,
}

/// The kind of link `name` (a basename; `words` from the command name) makes, if it makes one:
/// `ln` (hard, or symbolic with `-s` / `--symbolic`), `link`, and `cp` with `-l` / `--link`
/// or `-s` / `--symbolic-link`. Options are read without their values, clusters and
/// abbreviations included, so a value that looks like a link option counts as one (the strict
/// side); a word only known at run time where an option may stand may be one.
pub(crate) fn made_by(name: &str, words: &[Word]) -> Option<LinkKind> {
    let (hard_letter, hard_long, symbolic_long) = match name {
        "link" => return Some(LinkKind::Hard),
        "ln" => (None, None, "symbolic"),
        "cp" => (Some('l'), Some("link"), "symbolic-link"),
        _ => return None,
    };
    let mut kind = (name == "ln").then_some(LinkKind::Hard);
    for w in words.iter().skip(1) {
        if w.text == "--" {
            break;
        }
        if !w.is_static() {
            return Some(LinkKind::Symbolic);
        }
        if let Some(long) = w.text.strip_prefix("--") {
            let long = long.split_once('=').map_or(long, |(n, _)| n);
            if long.is_empty() {
                continue;
            }
            if symbolic_long.starts_with(long) {
                return Some(LinkKind::Symbolic);
            }
            if hard_long.is_some_and(|h| h.starts_with(long)) {
                kind = Some(LinkKind::Hard);
            }
        } else if let Some(cluster) = w.text.strip_prefix('-') {
            if cluster.contains('s') {
                return Some(LinkKind::Symbolic);
            }
            if hard_letter.is_some_and(|l| cluster.contains(l)) {
                kind = Some(LinkKind::Hard);
            }
        }
    }
    kind
}

/// The files a link to `sources` at `dest` makes writable: each source, and for a symbolic
/// link a relative source read from the link's directory (`dest`'s parent, or `dest` itself
/// when it is a directory the link goes into).
pub(crate) fn aliased(kind: LinkKind, sources: &[&Word], dest: &Word) -> Vec<Word> {
    let mut out: Vec<Word> = sources.iter().map(|w| (*w).clone()).collect();
    if kind == LinkKind::Hard || !dest.is_static() {
        return out;
    }
    let parent = dest.text.rsplit_once('/').map(|(dir, _)| dir);
    for source in sources {
        if source.text.starts_with('/') || source.text.starts_with('~') {
            continue;
        }
        for dir in parent.into_iter().chain([dest.text.as_str()]) {
            let dir = if dir.is_empty() { "/" } else { dir };
            out.push(Word {
                text: format!("{}/{}", dir.trim_end_matches('/'), source.text),
                ..(*source).clone()
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn kind(script: &str) -> Option<LinkKind> {
        let cmd = parse(script).unwrap().commands.remove(0);
        made_by(cmd.name().unwrap_or(""), &cmd.words)
    }

    #[test]
    fn every_spelling_of_a_link_is_found() {
        use LinkKind::{Hard, Symbolic};
        for (s, k) in [
            ("ln a b", Some(Hard)),
            ("ln -f a b", Some(Hard)),
            ("ln -s a b", Some(Symbolic)),
            ("ln -sf a b", Some(Symbolic)),
            ("ln --symbolic a b", Some(Symbolic)),
            ("ln --sym a b", Some(Symbolic)),
            ("link a b", Some(Hard)),
            ("cp -l a b", Some(Hard)),
            ("cp -al a b", Some(Hard)),
            ("cp --link a b", Some(Hard)),
            ("cp --li a b", Some(Hard)),
            ("cp -s a b", Some(Symbolic)),
            ("cp -rs a b", Some(Symbolic)),
            ("cp --symbolic-link a b", Some(Symbolic)),
            ("cp --sym a b", Some(Symbolic)),
            ("cp $opt a b", Some(Symbolic)),
            ("cp a b", None),
            ("cp -a a b", None),
            ("cp -r --preserve=links a b", None),
            ("cp -- -l b", None),
            ("mv a b", None),
        ] {
            assert_eq!(kind(s), k, "{s}");
        }
    }

    #[test]
    fn a_symbolic_links_relative_target_is_read_from_the_links_directory() {
        let w = Word::literal;
        let texts = |v: Vec<Word>| v.into_iter().map(|w| w.text).collect::<Vec<_>>();
        assert_eq!(
            texts(aliased(LinkKind::Symbolic, &[&w("config")], &w("sub/cfg"))),
            ["config", "sub/config", "sub/cfg/config"]
        );
        assert_eq!(
            texts(aliased(LinkKind::Symbolic, &[&w("/etc/x")], &w("sub/cfg"))),
            ["/etc/x"]
        );
        assert_eq!(
            texts(aliased(LinkKind::Hard, &[&w("a"), &w("b")], &w("d/"))),
            ["a", "b"]
        );
    }
}
