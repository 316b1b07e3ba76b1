//! The `read` built-in, as bash 5.2's: `read [-ers] [-d DELIM] [-n N] [-N N] [-p PROMPT]
//! [-t TIMEOUT] [-u 0] [NAME...]` reads one line from stdin (byte by byte, so what follows stays
//! for the next reader: `while read -r line; do ..; done < file`), and assigns its fields.
//!
//! - Without `-r` a backslash escapes the next character (it is kept, never a separator) and a
//!   backslash-newline continues the line.
//! - Fields are split on `$IFS` as bash splits them for `read`: IFS whitespace at the start and
//!   end is dropped, each name but the last takes one field, the last takes the rest of the line
//!   (with a single trailing non-whitespace IFS character dropped when the rest is one field).
//!   Without names the line goes to `REPLY` whole.
//! - Status 0 when the delimiter (or `-n`/`-N` characters) was read, 1 at end of input (the
//!   names still get what was read), 1 for a bad name, 2 for a bad option.
//! - `-p`, `-s`, `-e`, `-i` and `-t` concern terminals, which a script here never reads from:
//!   accepted and without effect. `-u` other than 0 and `-a` (arrays) are refused (status 2).
//! - A line longer than 1 MiB is an error (status 1): the script's variables are bounded.

use std::io::Read;

use super::state::State;
use super::stream::Fds;
use super::vars::is_name;

/// The longest line `read` takes.
const MAX_LINE_BYTES: usize = 1 << 20;

const USAGE: &str = "read: usage: read [-ers] [-a array] [-d delim] [-i text] [-n nchars] [-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]";

/// The options given.
struct Options {
    raw: bool,
    delim: Option<u8>,
    /// `-n` (stop at the delimiter too) or `-N` (ignore it): at most this many characters.
    count: Option<(usize, bool)>,
}

/// Runs `read ARGS...`; the exit status.
pub(crate) fn read(args: &[String], state: &mut State, fds: &mut Fds) -> i32 {
    let (options, names) = match parse(args) {
        Ok(parsed) => parsed,
        Err((message, status)) => {
            fds.diagnose(&message);
            return status;
        }
    };
    if let Some(bad) = names.iter().find(|n| !is_name(n)) {
        fds.diagnose(&format!("read: `{bad}': not a valid identifier"));
        return 1;
    }
    let (line, complete) = match read_line(&mut fds.stdin, &options) {
        Ok(read) => read,
        Err(message) => {
            fds.diagnose(&message);
            return 1;
        }
    };
    let values = if names.is_empty() {
        vec![(
            "REPLY".to_owned(),
            line.iter().map(|(c, _)| *c).collect::<String>(),
        )]
    } else {
        let ifs = state.vars.get("IFS").unwrap_or(" \t\n").to_owned();
        names
            .iter()
            .cloned()
            .zip(split(&line, &ifs, names.len()))
            .collect()
    };
    for (name, value) in values {
        if state.vars.set(&name, value).is_err() {
            fds.diagnose(&format!(
                "read: {name}: the shell's variables would exceed {} bytes",
                super::vars::MAX_VARIABLE_BYTES
            ));
            return 1;
        }
    }
    i32::from(!complete)
}

/// bash's getopt for `read`: clustered letters, an argument attached or in the next word.
fn parse(args: &[String]) -> Result<(Options, Vec<String>), (String, i32)> {
    let mut o = Options {
        raw: false,
        delim: Some(b'\n'),
        count: None,
    };
    let usage = |message: String| (format!("{message}\n{USAGE}"), 2);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        for (at, c) in cluster.char_indices() {
            let takes = matches!(c, 'a' | 'd' | 'i' | 'n' | 'N' | 'p' | 't' | 'u');
            if !takes {
                match c {
                    'r' => o.raw = true,
                    's' | 'e' => {}
                    _ => return Err(usage(format!("read: -{c}: invalid option"))),
                }
                continue;
            }
            let rest = &cluster[at + c.len_utf8()..];
            let value = if rest.is_empty() {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| usage(format!("read: -{c}: option requires an argument")))?
            } else {
                rest.to_owned()
            };
            match c {
                'd' => o.delim = Some(value.bytes().next().unwrap_or(0)),
                'n' | 'N' => {
                    let n: usize = value
                        .parse()
                        .map_err(|_| (format!("read: {value}: invalid number"), 1))?;
                    o.count = Some((n, c == 'N'));
                    if c == 'N' {
                        o.delim = None;
                    }
                }
                't' => {
                    value
                        .parse::<f64>()
                        .ok()
                        .filter(|t| *t >= 0.0)
                        .ok_or_else(|| {
                            (format!("read: {value}: invalid timeout specification"), 1)
                        })?;
                }
                'u' if value.trim() == "0" => {}
                'u' => {
                    return Err((
                        format!("read: {value}: only file descriptor 0 can be read here"),
                        2,
                    ));
                }
                'a' => {
                    return Err((
                        "read: -a: arrays are not supported by the agent's shell".to_owned(),
                        2,
                    ));
                }
                // -p PROMPT and -i TEXT: for terminals only.
                _ => {}
            }
            break;
        }
        i += 1;
    }
    Ok((o, args[i.min(args.len())..].to_vec()))
}

/// Reads one line: its characters, each with whether a backslash escaped it, and whether the
/// delimiter (or the count) ended it rather than the end of input.
fn read_line(input: &mut dyn Read, o: &Options) -> Result<(Vec<(char, bool)>, bool), String> {
    let mut bytes: Vec<(u8, bool)> = Vec::new();
    let mut chars = 0usize;
    let mut byte = || -> Result<Option<u8>, String> {
        let mut b = [0u8; 1];
        loop {
            match input.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => return Ok(Some(b[0])),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("read: read error: 0: {e}")),
            }
        }
    };
    let complete = loop {
        if let Some((n, _)) = o.count
            && chars >= n
        {
            break true;
        }
        let Some(b) = byte()? else {
            break false;
        };
        let (b, escaped) = if !o.raw && b == b'\\' {
            match byte()? {
                None => break false,
                Some(b'\n') => continue,
                Some(next) => (next, true),
            }
        } else {
            (b, false)
        };
        if !escaped && Some(b) == o.delim {
            break true;
        }
        // A character starts at any byte that is not a UTF-8 continuation byte; the rest of
        // a multi-byte character is read with it, so a count never splits one.
        if b & 0xC0 != 0x80 {
            chars += 1;
        }
        bytes.push((b, escaped));
        let continuation = match b {
            0xC0..=0xDF => 1,
            0xE0..=0xEF => 2,
            0xF0..=0xF7 => 3,
            _ => 0,
        };
        for _ in 0..continuation {
            match byte()? {
                Some(next) => bytes.push((next, escaped)),
                None => break,
            }
        }
        if bytes.len() > MAX_LINE_BYTES {
            return Err(format!(
                "read: a line longer than {MAX_LINE_BYTES} bytes; split the input first"
            ));
        }
    };
    // Decode, carrying each character's escape flag (that of its first byte).
    let raw: Vec<u8> = bytes.iter().map(|(b, _)| *b).collect();
    let out = match std::str::from_utf8(&raw) {
        Ok(text) => text.char_indices().map(|(i, c)| (c, bytes[i].1)).collect(),
        Err(_) => String::from_utf8_lossy(&raw)
            .chars()
            .map(|c| (c, false))
            .collect(),
    };
    Ok((out, complete))
}

/// Splits a line into `n` values as bash's `read` does.
fn split(line: &[(char, bool)], ifs: &str, n: usize) -> Vec<String> {
    let is_ifs = |&(c, escaped): &(char, bool)| !escaped && ifs.contains(c);
    let is_white = |p: &(char, bool)| is_ifs(p) && matches!(p.0, ' ' | '\t' | '\n');
    let text = |s: &[(char, bool)]| s.iter().map(|(c, _)| *c).collect::<String>();
    if ifs.is_empty() {
        let mut out = vec![text(line)];
        out.resize(n, String::new());
        return out;
    }
    let mut i = 0;
    while i < line.len() && is_white(&line[i]) {
        i += 1;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 1..n {
        let start = i;
        while i < line.len() && !is_ifs(&line[i]) {
            i += 1;
        }
        out.push(text(&line[start..i]));
        while i < line.len() && is_white(&line[i]) {
            i += 1;
        }
        if i < line.len() && is_ifs(&line[i]) {
            i += 1;
            while i < line.len() && is_white(&line[i]) {
                i += 1;
            }
        }
    }
    let mut rest = &line[i.min(line.len())..];
    while rest.last().is_some_and(is_white) {
        rest = &rest[..rest.len() - 1];
    }
    // One field and its delimiter: the delimiter goes (`IFS=, read a b` of `1,2,` is `2`).
    if let Some((last, body)) = rest.split_last()
        && is_ifs(last)
    {
        let mut body = body;
        while body.last().is_some_and(is_white) {
            body = &body[..body.len() - 1];
        }
        if !body.iter().any(is_ifs) {
            rest = body;
        }
    }
    out.push(text(rest));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Vec<(char, bool)> {
        s.chars().map(|c| (c, false)).collect()
    }

    fn fields(s: &str, ifs: &str, n: usize) -> Vec<String> {
        split(&line(s), ifs, n)
    }

    #[test]
    fn splitting_as_bash() {
        assert_eq!(fields("1,2,3,", ",", 2), ["1", "2,3,"]);
        assert_eq!(fields("1,2,", ",", 2), ["1", "2"]);
        assert_eq!(fields("1,2,,", ",", 2), ["1", "2,,"]);
        assert_eq!(fields("  x   y  z  ", " \t\n", 2), ["x", "y  z"]);
        assert_eq!(fields(" x , y , ", " ,", 2), ["x", "y"]);
        assert_eq!(fields("1,,2", ",", 3), ["1", "", "2"]);
        assert_eq!(fields("  lead trail  ", " \t\n", 1), ["lead trail"]);
        assert_eq!(fields("  lead  ", "", 2), ["  lead  ", ""]);
        assert_eq!(fields("a", " ", 3), ["a", "", ""]);
        let escaped = vec![
            ('x', false),
            (' ', true),
            ('y', false),
            (' ', false),
            ('z', false),
        ];
        assert_eq!(split(&escaped, " ", 2), ["x y", "z"]);
    }

    #[test]
    fn reading_lines() {
        let o = |raw| Options {
            raw,
            delim: Some(b'\n'),
            count: None,
        };
        let text = |l: Vec<(char, bool)>| l.into_iter().map(|(c, _)| c).collect::<String>();
        let mut input: &[u8] = b"a\\\nb\nrest";
        let (l, complete) = read_line(&mut input, &o(false)).unwrap();
        assert_eq!((text(l), complete), ("ab".to_owned(), true));
        assert_eq!(input, b"rest", "nothing past the line is consumed");
        let (l, complete) = read_line(&mut input, &o(false)).unwrap();
        assert_eq!((text(l), complete), ("rest".to_owned(), false));
        let mut raw: &[u8] = b"x\\ y\n";
        let (l, _) = read_line(&mut raw, &o(true)).unwrap();
        assert_eq!(text(l), "x\\ y");
        let mut counted: &[u8] = "héllo\n".as_bytes();
        let n = Options {
            raw: false,
            delim: Some(b'\n'),
            count: Some((2, false)),
        };
        let (l, complete) = read_line(&mut counted, &n).unwrap();
        assert_eq!((text(l), complete), ("hé".to_owned(), true));
    }

    #[test]
    fn options() {
        let words = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let (o, names) = parse(&words(&["-r", "-d:", "-p", "prompt> ", "a", "b"])).unwrap();
        assert!(o.raw);
        assert_eq!((o.delim, names), (Some(b':'), words(&["a", "b"])));
        let (o, _) = parse(&words(&["-rN3"])).unwrap();
        assert_eq!((o.delim, o.count), (None, Some((3, true))));
        assert_eq!(parse(&words(&["-z"])).err().map(|e| e.1), Some(2));
        assert_eq!(parse(&words(&["-a", "arr"])).err().map(|e| e.1), Some(2));
        assert_eq!(parse(&words(&["-u", "3"])).err().map(|e| e.1), Some(2));
        assert!(parse(&words(&["-u", "0", "-t", "1.5", "x"])).is_ok());
    }
}
