//! What a `sed` command runs, writes and reads beyond its input files, read from its options
//! and its script as GNU sed parses them.
//!
//! - The script is every `-e` / `--expression` (in any spelling: `-eSCRIPT`, `--expr=…`), or
//!   the first operand when there is none. A `-f` / `--file` script cannot be checked (its text
//!   is not in the command, and the command itself may write it first), so it is refused.
//! - In the script: `e` (and the `s///e` flag) runs a shell command; `w FILE`, `W FILE` and
//!   the `s///w FILE` flag write `FILE`; `r FILE`, `R FILE` read it. `/dev/stdout`,
//!   `/dev/stderr` (for writing) and `/dev/stdin` (for reading) are sed's own streams.
//! - `-i` / `--in-place` writes every input file, and a backup named by its suffix
//!   (`-i.bak`: `FILE.bak`; a `*` in the suffix is the file's name: `-i'bak/*'` writes
//!   `bak/FILE`, `-i'/tmp/*'` writes `/tmp/FILE`).
//!
//! The script is parsed by an allowlist of sed's commands: a command it does not know, or text
//! it cannot place, makes the script unanalysable, and the checker refuses it.

use agent_core::shell::Word;

/// What a sed command does beyond reading its input files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SedEffects {
    /// Why it runs another program, if it does.
    pub runs: Option<String>,
    /// Why it cannot be analysed, if it cannot.
    pub unanalysable: Option<String>,
    /// Files its script writes (static text, relative to the working directory).
    pub writes: Vec<String>,
    /// With `-i`: the backup suffix (empty for none) and the files rewritten in place (each
    /// backed up under [`backup_name`]).
    pub in_place: Option<(String, Vec<Word>)>,
    /// Files its script reads.
    pub reads: Vec<String>,
}

/// GNU sed's long options and whether each takes a value (`Some(true)`: required,
/// `Some(false)`: optional and attached only, `None`: none).
const LONG: &[(&str, Option<bool>)] = &[
    ("expression", Some(true)),
    ("file", Some(true)),
    ("in-place", Some(false)),
    ("line-length", Some(true)),
    ("quiet", None),
    ("silent", None),
    ("debug", None),
    ("posix", None),
    ("regexp-extended", None),
    ("separate", None),
    ("sandbox", None),
    ("unbuffered", None),
    ("null-data", None),
    ("zero-terminated", None),
    ("follow-symlinks", None),
    ("binary", None),
    ("help", None),
    ("version", None),
];

/// Short options with no value.
const SHORT_FLAGS: &str = "nrEsuzb";

/// Reads a `sed` command's words (name first, after wrappers).
pub(crate) fn effects(words: &[Word]) -> SedEffects {
    let mut e = SedEffects::default();
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&Word> = Vec::new();
    let mut in_place: Option<String> = None;
    let mut options_done = false;
    let args = words.get(1..).unwrap_or(&[]);
    let mut i = 0;
    let fail = |e: &mut SedEffects, why: String| {
        e.unanalysable.get_or_insert(why);
    };
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if options_done || t == "-" || !t.starts_with('-') {
            if w.dynamic && (!options_done || scripts.is_empty() && operands.is_empty()) {
                // A run-time value where an option (GNU sed reads options after operands too)
                // or the script may stand.
                fail(
                    &mut e,
                    format!(
                        "`{}` is only known at run time and could be an option or the script; put it after `--`",
                        w.raw
                    ),
                );
            } else if w.glob && !options_done && t.starts_with(['*', '?', '[', '{']) {
                fail(
                    &mut e,
                    format!(
                        "`{}` could match a file whose name sed reads as an option; write `./{}` or put it after `--`",
                        w.raw, w.raw
                    ),
                );
            } else if w.glob && scripts.is_empty() && operands.is_empty() {
                fail(
                    &mut e,
                    format!("the sed script `{}` is a glob pattern; quote it", w.raw),
                );
            }
            operands.push(w);
            continue;
        }
        if !w.is_static() {
            fail(&mut e, format!("`{}` is only known at run time", w.raw));
            continue;
        }
        if t == "--" {
            options_done = true;
            continue;
        }
        if let Some(body) = t.strip_prefix("--") {
            let (given, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let found: Vec<_> = LONG.iter().filter(|(n, _)| n.starts_with(given)).collect();
            let exact = LONG.iter().find(|(n, _)| *n == given);
            let Some((name, arity)) = exact.or(match found.as_slice() {
                [one] => Some(*one),
                _ => None,
            }) else {
                fail(
                    &mut e,
                    format!("sed's option `{t}` is unknown or ambiguous"),
                );
                continue;
            };
            let value = match (arity, value) {
                (Some(true), None) => {
                    let v = args.get(i).map(|v| v.text.as_str());
                    if args.get(i).is_some_and(|v| !v.is_static()) {
                        fail(
                            &mut e,
                            format!("the value of `{t}` is only known at run time"),
                        );
                    }
                    i += 1;
                    v
                }
                (_, v) => v,
            };
            match *name {
                "expression" => scripts.push(value.unwrap_or("")),
                "file" => fail(
                    &mut e,
                    format!(
                        "`{t}` reads the sed script from a file, which cannot be checked; give it with -e"
                    ),
                ),
                "in-place" => in_place = Some(value.unwrap_or("").to_owned()),
                _ => {}
            }
            continue;
        }
        // A cluster of short options.
        for (at, c) in t.char_indices().skip(1) {
            let rest = &t[at + 1..];
            match c {
                'e' | 'f' | 'l' => {
                    let value = if rest.is_empty() {
                        if args.get(i).is_some_and(|v| !v.is_static()) {
                            fail(
                                &mut e,
                                format!("the value of `-{c}` is only known at run time"),
                            );
                        }
                        i += 1;
                        args.get(i - 1).map_or("", |v| v.text.as_str())
                    } else {
                        rest
                    };
                    match c {
                        'e' => scripts.push(value),
                        'f' => fail(&mut e, "`-f` reads the sed script from a file, which cannot be checked; give it with -e".to_owned()),
                        _ => {}
                    }
                    break;
                }
                'i' => {
                    in_place = Some(rest.to_owned());
                    break;
                }
                c if SHORT_FLAGS.contains(c) => {}
                c => {
                    fail(&mut e, format!("sed's option `-{c}` is unknown"));
                    break;
                }
            }
        }
    }
    let mut files: Vec<&Word> = operands;
    let script = if scripts.is_empty() {
        if files.is_empty() {
            return e;
        }
        vec![files.remove(0).text.as_str()]
    } else {
        scripts
    };
    let joined = script.join("\n");
    if let Err(why) = scan(&joined, &mut e) {
        fail(&mut e, format!("the sed script cannot be analysed: {why}"));
    }
    if let Some(suffix) = in_place {
        e.in_place = Some((suffix, files.into_iter().cloned().collect()));
    }
    e
}

/// GNU sed's backup name for `file` with the `-i` suffix `suffix`.
pub(crate) fn backup_name(file: &str, suffix: &str) -> String {
    if !suffix.contains('*') {
        return format!("{file}{suffix}");
    }
    let (dir, base) = match file.rfind('/') {
        Some(at) => (&file[..=at], &file[at + 1..]),
        None => ("", file),
    };
    format!("{dir}{}", suffix.replace('*', base))
}

/// Walks a sed script, recording what it runs, writes and reads.
fn scan(script: &str, e: &mut SedEffects) -> Result<(), String> {
    let s: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut depth = 0usize;
    loop {
        // Between commands.
        while s.get(i).is_some_and(|c| c.is_whitespace() || *c == ';') {
            i += 1;
        }
        let Some(&c) = s.get(i) else { break };
        if c == '#' {
            i = line_end(&s, i);
            continue;
        }
        i = address(&s, i)?;
        if s.get(i) == Some(&',') {
            i = address(&s, i + 1)?;
        }
        while s
            .get(i)
            .is_some_and(|c| *c == ' ' || *c == '\t' || *c == '!')
        {
            i += 1;
        }
        let Some(&cmd) = s.get(i) else {
            return Err("an address without a command".into());
        };
        i += 1;
        match cmd {
            '{' => {
                depth += 1;
                continue; // the next command may follow at once
            }
            '}' => {
                depth = depth.checked_sub(1).ok_or("an unmatched `}`")?;
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            'l' | 'q' | 'Q' | 'L' => {
                while s.get(i).is_some_and(|c| *c == ' ' || c.is_ascii_digit()) {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                while s.get(i).is_some_and(|c| *c != '\n' && *c != ';') {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => i = text_end(&s, i),
            'r' | 'R' | 'w' | 'W' => {
                let (name, end) = file_name(&s, i);
                i = end;
                record_file(cmd, &name, e)?;
            }
            'e' => {
                let end = line_end(&s, i);
                let what: String = s[i..end].iter().collect();
                e.runs.get_or_insert(format!(
                    "sed's `e` command runs a shell command{}",
                    if what.trim().is_empty() {
                        " (the pattern space)".to_owned()
                    } else {
                        format!(" (`{}`)", what.trim())
                    }
                ));
                i = end;
            }
            's' => i = substitute(&s, i, e)?,
            'y' => {
                let delim = *s.get(i).ok_or("`y` without a delimiter")?;
                i = delimited(&s, i + 1, delim)?;
                i = delimited(&s, i, delim)?;
            }
            other => return Err(format!("`{other}` is not a sed command this checker knows")),
        }
        // After a command: blanks, then its end.
        while s.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
            i += 1;
        }
        match s.get(i) {
            None | Some(';' | '\n' | '}' | '#') => {}
            Some(c) => return Err(format!("unexpected `{c}` after the `{cmd}` command")),
        }
    }
    Ok(())
}

/// Skips one address (a line number, `first~step`, `$`, `/re/` or `\cREc` with flags, `+N`,
/// `~N`), if there is one.
fn address(s: &[char], mut i: usize) -> Result<usize, String> {
    match s.get(i) {
        Some(c) if c.is_ascii_digit() || *c == '+' || *c == '~' => {
            i += 1;
            while s.get(i).is_some_and(|c| c.is_ascii_digit() || *c == '~') {
                i += 1;
            }
        }
        Some('$') => i += 1,
        Some('/') => i = delimited(s, i + 1, '/')?,
        Some('\\') => {
            let delim = *s.get(i + 1).ok_or("`\\` without a delimiter")?;
            i = delimited(s, i + 2, delim)?;
        }
        _ => return Ok(i),
    }
    while s.get(i).is_some_and(|c| *c == 'I' || *c == 'M') {
        i += 1;
    }
    while s.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    Ok(i)
}

/// The index after the unescaped `delim` that ends a regex or replacement starting at `i`.
fn delimited(s: &[char], mut i: usize, delim: char) -> Result<usize, String> {
    while let Some(&c) = s.get(i) {
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == delim {
            return Ok(i + 1);
        }
        if c == '\n' {
            return Err("a newline inside a regular expression".into());
        }
        i += 1;
    }
    Err(format!("an unterminated `{delim}`"))
}

/// An `s` command from its delimiter: the flags `e` and `w FILE` are recorded.
fn substitute(s: &[char], i: usize, e: &mut SedEffects) -> Result<usize, String> {
    let delim = *s.get(i).ok_or("`s` without a delimiter")?;
    if delim == '\n' || delim == '\\' {
        return Err("`s` with a newline or backslash delimiter".into());
    }
    let mut i = delimited(s, i + 1, delim)?;
    // The replacement may hold escaped newlines.
    loop {
        match s.get(i) {
            Some('\\') => i += 2,
            Some(c) if *c == delim => {
                i += 1;
                break;
            }
            Some(_) => i += 1,
            None => return Err(format!("an unterminated `{delim}`")),
        }
    }
    while let Some(&c) = s.get(i) {
        match c {
            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
            c if c.is_ascii_digit() => i += 1,
            'e' => {
                e.runs.get_or_insert(
                    "sed's `s///e` flag runs the pattern space as a shell command".to_owned(),
                );
                i += 1;
            }
            'w' => {
                let (name, end) = file_name(s, i + 1);
                record_file('w', &name, e)?;
                return Ok(end);
            }
            _ => break,
        }
    }
    Ok(i)
}

/// A file name after `r`/`w`/...: blanks skipped, then the rest of the line.
fn file_name(s: &[char], mut i: usize) -> (String, usize) {
    while s.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    let end = line_end(s, i);
    (s[i..end].iter().collect(), end)
}

fn record_file(cmd: char, name: &str, e: &mut SedEffects) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("`{cmd}` without a file name"));
    }
    match cmd {
        'w' | 'W' if !matches!(name, "/dev/stdout" | "/dev/stderr") => {
            e.writes.push(name.to_owned());
        }
        'r' | 'R' if name != "/dev/stdin" => e.reads.push(name.to_owned()),
        _ => {}
    }
    Ok(())
}

fn line_end(s: &[char], i: usize) -> usize {
    s[i.min(s.len())..]
        .iter()
        .position(|c| *c == '\n')
        .map_or(s.len(), |p| i + p)
}

/// The end of `a`/`i`/`c` text: the line, continued by a trailing backslash.
fn text_end(s: &[char], mut i: usize) -> usize {
    while let Some(&c) = s.get(i) {
        match c {
            '\\' => i += 2,
            '\n' => return i,
            _ => i += 1,
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sed(cmd: &str) -> SedEffects {
        let parsed = agent_core::shell::parse(cmd).unwrap();
        effects(&parsed.commands[0].words)
    }

    #[test]
    fn the_script_is_found_in_every_place_sed_reads_it() {
        for c in [
            "sed 'e id' f",
            "sed -n '1e id' f",
            "sed 's/a/b/e' f",
            "sed -e 's/a/b/ge' f",
            "sed --expression='1e id' f",
            "sed --expr '1e id' f",
            "sed -ne '$e id' f",
            "sed -n -e p -e '/x/e id' f",
            "sed '/a/,/b/{e id\n}' f",
            "sed 'y/a/b/;e' f",
        ] {
            assert!(sed(c).runs.is_some(), "{c}: {:?}", sed(c));
        }
        let w = sed("sed -e 's/a/b/w out' -e 'w /etc/x' -e '2W two' f");
        assert_eq!(w.writes, ["out", "/etc/x", "two"]);
        assert_eq!(sed("sed 'r /etc/passwd' f").reads, ["/etc/passwd"]);
        let (suffix, files) = sed("sed -i.bak s/a/b/ f g").in_place.unwrap();
        assert_eq!((suffix.as_str(), files.len()), (".bak", 2));
        assert_eq!(
            sed("sed -si'/tmp/*' s/a/b/ f").in_place.unwrap().0,
            "/tmp/*"
        );
        assert_eq!(
            sed("sed '--in-place=bak/*' s/a/b/ f").in_place.unwrap().0,
            "bak/*"
        );
        assert_eq!(backup_name("f", ".bak"), "f.bak");
        assert_eq!(backup_name("d/f", "/tmp/*"), "d//tmp/f");
        assert_eq!(backup_name("d/f", "old_*"), "d/old_f");
        assert!(sed("sed -n p *.txt").unanalysable.is_some());
        assert!(sed("sed -n p ./*.txt").unanalysable.is_none());
        assert!(sed("sed -f s.sed f").unanalysable.is_some());
        assert!(sed("sed --file=s.sed f").unanalysable.is_some());
        assert!(sed("sed -n 'k' f").unanalysable.is_some());
        assert!(sed("sed \"$s\" f").unanalysable.is_some());
        assert!(sed("sed --nope f").unanalysable.is_some());
    }

    #[test]
    fn plain_scripts_run_and_write_nothing() {
        for c in [
            "sed -n 's/a/b/p' f",
            "sed 's|/etc|/usr|g' f",
            "sed -E 's/(w)(e)/\\2\\1/2' f",
            "sed 's/we/ew/' f",
            "sed -e 1d -e '$d' f",
            "sed -n '/start/,/end/{p;q}' f",
            "sed '1i\\\nheader' f",
            "sed 'a tail with w and e' f",
            "sed ':a;N;$!ba;s/\\n/ /g' f",
            "sed 'y/abc/xyz/' f",
            "sed -n '$=' f",
            "sed '0~3d' f",
            "sed '\\,x,d' f",
            "sed 's/e/w/;# e comment' f",
            "sed --posix -s -u -z -l 5 p f",
        ] {
            let e = sed(c);
            assert_eq!(e, SedEffects::default(), "{c}");
        }
    }
}
