//! Parameter expansion operators, `${NAME<op>...}`, as bash 5.2 applies them: the operations
//! on a value (`expand.rs` expands the words inside and splices the results; `word.rs` compiles
//! them). Lengths, offsets and case count characters.
//!
//! Pattern operations (`#`, `##`, `%`, `%%`, `/`) with pattern characters try every substring,
//! as bash does, so their cost grows with the square of the value: a value over
//! [`MAX_PATTERN_SUBJECT`] bytes, or an operation over 100 million matcher steps (about a
//! second), is an error rather than a stall of the whole shell. A literal pattern is a plain
//! string search, of any length.

use super::glob;
use super::plan::ParamReplace;

/// The longest value a pattern operation works on (bash has no bound; it is quadratic).
pub(crate) const MAX_PATTERN_SUBJECT: usize = 16 * 1024;

/// The byte offsets where a character of `s` starts, and its end.
fn boundaries(s: &str) -> Vec<usize> {
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect()
}

/// A pattern compiled for the operation, with the matching budget the operation has left.
pub(crate) struct Pattern {
    compiled: glob::Compiled,
    budget: u64,
}

impl Pattern {
    /// Compiles the pattern `bytes` (with the mask of the bytes that may act as pattern
    /// characters).
    pub fn new(bytes: &[u8], active: &[bool]) -> Self {
        Self {
            compiled: glob::Compiled::new(bytes, active),
            budget: MAX_PATTERN_STEPS,
        }
    }

    fn matches(&mut self, subject: &str) -> Result<bool, String> {
        self.compiled
            .matches(subject.as_bytes(), &mut self.budget)
            .ok_or_else(|| {
                format!(
                    "pattern operation too costly (over {MAX_PATTERN_STEPS} matching steps); use a shorter value or a simpler pattern"
                )
            })
    }
}

/// How many matcher steps one operation may take (about a second).
const MAX_PATTERN_STEPS: u64 = 100_000_000;

/// The error for a value too long for a pattern operation.
fn too_long(value: &str) -> Result<(), String> {
    if value.len() > MAX_PATTERN_SUBJECT {
        return Err(format!(
            "a pattern operation on a value of {} bytes (the agent's shell takes at most {MAX_PATTERN_SUBJECT})",
            value.len()
        ));
    }
    Ok(())
}

/// The first offset in `order` for which `test` holds.
fn first(
    order: impl Iterator<Item = usize>,
    mut test: impl FnMut(usize) -> Result<bool, String>,
) -> Result<Option<usize>, String> {
    for i in order {
        if test(i)? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `#`, `##`, `%`, `%%`: the value without the shortest / longest matching prefix / suffix.
pub(crate) fn trim(
    value: &str,
    pattern: &mut Pattern,
    suffix: bool,
    longest: bool,
) -> Result<String, String> {
    if let Some(literal) = pattern.compiled.literal() {
        let literal = String::from_utf8_lossy(literal);
        let cut = if suffix {
            value.strip_suffix(literal.as_ref())
        } else {
            value.strip_prefix(literal.as_ref())
        };
        return Ok(cut.unwrap_or(value).to_owned());
    }
    too_long(value)?;
    let cuts = boundaries(value);
    let ascending = cuts.iter().copied();
    let descending = cuts.iter().rev().copied();
    Ok(if suffix {
        // The suffix starts at `i`: the shortest starts last.
        let test = |i: usize| pattern.matches(&value[i..]);
        let start = if longest {
            first(ascending, test)?
        } else {
            first(descending, test)?
        };
        start.map_or(value, |i| &value[..i]).to_owned()
    } else {
        let test = |i: usize| pattern.matches(&value[..i]);
        let end = if longest {
            first(descending, test)?
        } else {
            first(ascending, test)?
        };
        end.map_or(value, |i| &value[i..]).to_owned()
    })
}

/// `/`, `//`, `/#`, `/%`: the longest match at the first place one starts (every place for
/// `//`) replaced. `replacement` gives the text for a match (bash 5.2's `patsub_replacement`
/// puts the matched text where an unquoted `&` stands).
pub(crate) fn replace(
    value: &str,
    pattern: &mut Pattern,
    mode: ParamReplace,
    replacement: &dyn Fn(&str) -> String,
) -> Result<String, String> {
    if let Some(literal) = pattern.compiled.literal() {
        let literal = String::from_utf8_lossy(literal).into_owned();
        if literal.is_empty() {
            return Ok(value.to_owned());
        }
        let with = replacement(&literal);
        return Ok(match mode {
            ParamReplace::All => value.replace(&literal, &with),
            ParamReplace::First => value.replacen(&literal, &with, 1),
            ParamReplace::Prefix => match value.strip_prefix(&literal) {
                Some(rest) => format!("{with}{rest}"),
                None => value.to_owned(),
            },
            ParamReplace::Suffix => match value.strip_suffix(&literal) {
                Some(rest) => format!("{rest}{with}"),
                None => value.to_owned(),
            },
        });
    }
    too_long(value)?;
    let cuts = boundaries(value);
    match mode {
        ParamReplace::Prefix => {
            let end = first(cuts.iter().rev().copied(), |e| pattern.matches(&value[..e]))?;
            return Ok(match end {
                Some(e) => format!("{}{}", replacement(&value[..e]), &value[e..]),
                None => value.to_owned(),
            });
        }
        ParamReplace::Suffix => {
            let start = first(cuts.iter().copied(), |s| pattern.matches(&value[s..]))?;
            return Ok(match start {
                Some(s) => format!("{}{}", &value[..s], replacement(&value[s..])),
                None => value.to_owned(),
            });
        }
        ParamReplace::First | ParamReplace::All => {}
    }
    let mut out = String::with_capacity(value.len());
    let mut k = 0;
    let mut copied = 0;
    while k < cuts.len() {
        let start = cuts[k];
        let ends = cuts[k..].iter().rev().copied().filter(|&end| end > start);
        match first(ends, |end| pattern.matches(&value[start..end]))? {
            Some(end) => {
                out.push_str(&value[copied..start]);
                out.push_str(&replacement(&value[start..end]));
                copied = end;
                if mode == ParamReplace::First {
                    break;
                }
                k = cuts.partition_point(|&c| c < end);
            }
            None => k += 1,
        }
    }
    out.push_str(&value[copied..]);
    Ok(out)
}

/// `^`, `^^`, `,`, `,,`.
pub(crate) fn case(value: &str, upper: bool, all: bool) -> String {
    let convert = |c: char| -> String {
        if upper {
            c.to_uppercase().collect()
        } else {
            c.to_lowercase().collect()
        }
    };
    if all {
        value.chars().map(convert).collect()
    } else {
        let mut chars = value.chars();
        match chars.next() {
            Some(first) => convert(first) + chars.as_str(),
            None => String::new(),
        }
    }
}

/// `${NAME:OFFSET:LENGTH}` with the numbers evaluated: characters from OFFSET (from the end when
/// negative), LENGTH of them (up to that many from the end when negative).
pub(crate) fn substring(value: &str, offset: i64, length: Option<i64>) -> Result<String, String> {
    let chars: Vec<char> = value.chars().collect();
    let n = i64::try_from(chars.len()).unwrap_or(i64::MAX);
    let start = if offset < 0 { n + offset } else { offset };
    if start < 0 || start > n {
        return Ok(String::new());
    }
    let end = match length {
        None => n,
        Some(len) if len < 0 => {
            let end = n + len;
            if end < start {
                return Err(format!("{len}: substring expression < 0"));
            }
            end
        }
        Some(len) => start.saturating_add(len).min(n),
    };
    let (start, end) = (
        usize::try_from(start).unwrap_or(0),
        usize::try_from(end).unwrap_or(0),
    );
    Ok(chars[start..end].iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(p: &str) -> (Vec<u8>, Vec<bool>) {
        (p.as_bytes().to_vec(), vec![true; p.len()])
    }

    fn t(value: &str, p: &str, suffix: bool, longest: bool) -> String {
        let (bytes, active) = pat(p);
        trim(value, &mut Pattern::new(&bytes, &active), suffix, longest).unwrap()
    }

    fn r(value: &str, p: &str, mode: ParamReplace, with: &str) -> String {
        let (bytes, active) = pat(p);
        replace(value, &mut Pattern::new(&bytes, &active), mode, &|_| {
            with.to_owned()
        })
        .unwrap()
    }

    #[test]
    fn trimming_as_bash() {
        let path = "dir/sub/file.tar.gz";
        assert_eq!(t(path, "*/", false, false), "sub/file.tar.gz");
        assert_eq!(t(path, "*/", false, true), "file.tar.gz");
        assert_eq!(t(path, ".*", true, false), "dir/sub/file.tar");
        assert_eq!(t(path, ".*", true, true), "dir/sub/file");
        assert_eq!(t(path, "x*", false, true), path);
        assert_eq!(t("ééa", "é", false, false), "éa");
        assert_eq!(t("abc", "", false, false), "abc");
    }

    #[test]
    fn replacing_as_bash() {
        assert_eq!(r("a-b-c", "-", ParamReplace::First, "+"), "a+b-c");
        assert_eq!(r("a-b-c", "-", ParamReplace::All, "+"), "a+b+c");
        assert_eq!(r("aaa", "a*", ParamReplace::First, "x"), "x");
        assert_eq!(r("abcabc", "b", ParamReplace::Prefix, "x"), "abcabc");
        assert_eq!(r("abcabc", "a", ParamReplace::Prefix, "x"), "xbcabc");
        assert_eq!(r("abcabc", "c", ParamReplace::Suffix, "x"), "abcabx");
        assert_eq!(r("abc", "", ParamReplace::All, "x"), "abc");
        assert_eq!(r("a.b.c", "?", ParamReplace::All, "-"), "-----");
    }

    #[test]
    fn case_and_substrings() {
        assert_eq!(case("hello world", true, false), "Hello world");
        assert_eq!(case("hello", true, true), "HELLO");
        assert_eq!(case("HeLLo", false, true), "hello");
        assert_eq!(substring("abcdef", 2, None), Ok("cdef".to_owned()));
        assert_eq!(substring("abcdef", 1, Some(3)), Ok("bcd".to_owned()));
        assert_eq!(substring("abcdef", -2, None), Ok("ef".to_owned()));
        assert_eq!(substring("abcdef", 1, Some(-2)), Ok("bcd".to_owned()));
        assert_eq!(substring("abcdef", 9, None), Ok(String::new()));
        assert!(substring("abcdef", 4, Some(-3)).is_err());
    }

    #[test]
    fn long_values_and_costly_patterns_are_an_error_not_a_stall() {
        let (bytes, active) = pat("*x");
        let long = "a".repeat(MAX_PATTERN_SUBJECT + 1);
        assert!(trim(&long, &mut Pattern::new(&bytes, &active), false, true).is_err());
        let within = "a".repeat(MAX_PATTERN_SUBJECT);
        let started = std::time::Instant::now();
        let costly = replace(
            &within,
            &mut Pattern::new(&bytes, &active),
            ParamReplace::All,
            &|_| String::new(),
        );
        assert!(costly.unwrap_err().contains("too costly"));
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        // A literal pattern takes the plain string search, whatever the length.
        let (dash, all) = pat("-");
        let text = "a-".repeat(100_000);
        let out = replace(
            &text,
            &mut Pattern::new(&dash, &all),
            ParamReplace::All,
            &|_| "+".to_owned(),
        );
        assert_eq!(out.unwrap().len(), text.len());
    }
}
