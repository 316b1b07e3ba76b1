//! Symlinked paths in profiles, resolved when the policy is assembled (as Agent Safehouse's
//! generator does): Seatbelt matches the path the kernel reports, which is the symlink's
//! target, so a profile granting `/bin` on a machine where `/bin` → `/usr/bin` also needs a
//! rule for `/usr/bin`.
//!
//! Two scans of a profile's text, each reading it exactly as the generator does (so the same
//! tree gives the same extra rules):
//! - [`builtin_candidates`]: in `(allow file-read* …` blocks that do not also grant
//!   `file-write*`, each line after the opening one that holds `(literal "/…")` or
//!   `(subpath "/…")` (the first on the line), until a line starting with `)`;
//! - [`home_candidates`]: in any `(allow OPS …` block, the `(home-literal "/…")`,
//!   `(home-subpath "/…")` and `(home-prefix "/…")` lines, relative to the home directory.
//!
//! The base profile and appended profiles are not scanned.

/// The read grants of `(literal|subpath "/abs")` form in `text`: `(matcher, path)` in order.
pub fn builtin_candidates(text: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if !in_block {
            if opens_allow(line)
                && line.contains("(allow file-read*")
                && !line.contains("file-write*")
            {
                in_block = true;
            }
            continue;
        }
        if line.trim_start().starts_with(')') {
            in_block = false;
            continue;
        }
        if let Some((matcher, path)) = first_matcher(line, &["literal", "subpath"]) {
            out.push((matcher, path));
        }
    }
    out
}

/// The home-relative grants in `text`: `(operations, matcher, relative path)` in order, where
/// `matcher` is `literal`, `subpath` or `prefix` and the path starts with `/`.
pub fn home_candidates(text: &str) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    let mut ops: Option<String> = None;
    for line in text.lines() {
        let Some(current) = &ops else {
            if opens_allow(line)
                && let Some((_, rest)) = line.split_once("(allow ")
            {
                ops = Some(rest.trim().to_owned());
            }
            continue;
        };
        if line.trim_start().starts_with(')') {
            ops = None;
            continue;
        }
        if let Some((matcher, path)) =
            first_matcher(line, &["home-literal", "home-subpath", "home-prefix"])
        {
            let matcher = match matcher {
                "home-literal" => "literal",
                "home-subpath" => "subpath",
                _ => "prefix",
            };
            out.push((current.clone(), matcher, path));
        }
    }
    out
}

/// A line that opens an allow form: `(allow` then whitespace, after leading whitespace.
fn opens_allow(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("(allow")
        .is_some_and(|rest| rest.starts_with(char::is_whitespace))
}

/// The first `(NAME "/path")` on `line` (NAME one of `names`, one or more blanks before the
/// quote, a path starting with `/` and free of `"`).
fn first_matcher(line: &str, names: &[&'static str]) -> Option<(&'static str, String)> {
    let mut best: Option<(usize, &'static str, String)> = None;
    for &name in names {
        let open = format!("({name}");
        let mut from = 0;
        while let Some(i) = line[from..].find(&open) {
            let at = from + i;
            from = at + open.len();
            let rest = &line[from..];
            let trimmed = rest.trim_start_matches([' ', '\t']);
            if trimmed.len() == rest.len() {
                continue;
            }
            let Some(body) = trimmed.strip_prefix("\"/") else {
                continue;
            };
            let Some(end) = body.find('"') else { continue };
            if !body[end + 1..].starts_with(')') {
                continue;
            }
            if best.as_ref().is_none_or(|(b, _, _)| at < *b) {
                best = Some((at, name, format!("/{}", &body[..end])));
            }
            break;
        }
    }
    best.map(|(_, n, p)| (n, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_blocks_only_and_from_the_line_after_the_opening() {
        let text = "(allow file-read*\n    (subpath \"/bin\")\n    (literal \"/etc/x\") ; c\n)\n\
                    (allow file-read* file-write*\n    (subpath \"/tmp\")\n)\n\
                    (allow file-read* (subpath \"/skipped\"))\n    (subpath \"/taken\")\n)\n\
                    (allow file-read-metadata\n    (subpath \"/meta\")\n)\n";
        assert_eq!(
            builtin_candidates(text),
            [
                ("subpath", "/bin".to_owned()),
                ("literal", "/etc/x".to_owned()),
                ("subpath", "/taken".to_owned()),
            ]
        );
    }

    #[test]
    fn home_grants_keep_their_operations() {
        let text = "(allow file-read*\n    (home-subpath \"/.cargo\")\n    (home-prefix \"/.x\")\n)\n\
                    (allow file-read* file-write*\n    (home-literal \"/.y\")\n)\n";
        assert_eq!(
            home_candidates(text),
            [
                ("file-read*".to_owned(), "subpath", "/.cargo".to_owned()),
                ("file-read*".to_owned(), "prefix", "/.x".to_owned()),
                (
                    "file-read* file-write*".to_owned(),
                    "literal",
                    "/.y".to_owned()
                ),
            ]
        );
    }
}
