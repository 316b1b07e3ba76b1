//! The `s` command: its compiled form, the parse of its replacement text (`&`, `\1`..`\9`, the
//! GNU escapes and the case conversions `\L \U \l \u \E`), and the substitution itself.

use regex::bytes::{CaptureLocations, Regex};

use crate::posix_re;

/// Case conversion in a replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Case {
    Upper,
    Lower,
    OneUpper,
    OneLower,
    End,
}

/// A piece of an `s` replacement.
#[derive(Debug, Clone)]
pub(super) enum Repl {
    Lit(Vec<u8>),
    Group(usize),
    Case(Case),
}

/// An `s` command.
#[derive(Debug, Clone)]
pub(super) struct Subst {
    pub(super) re: Option<usize>,
    pub(super) repl: Vec<Repl>,
    pub(super) global: bool,
    pub(super) nth: usize,
    pub(super) print: bool,
    pub(super) write: Option<usize>,
}

/// Parses the replacement text `raw` of an `s` command whose regex has `groups` groups; the
/// error is the message (the script position is the caller's).
pub(super) fn parse_replacement(raw: &[u8], groups: usize) -> Result<Vec<Repl>, String> {
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    let mut k = 0;
    let flush = |lit: &mut Vec<u8>, parts: &mut Vec<Repl>| {
        if !lit.is_empty() {
            parts.push(Repl::Lit(std::mem::take(lit)));
        }
    };
    while k < raw.len() {
        let c = raw[k];
        k += 1;
        match c {
            b'&' => {
                flush(&mut lit, &mut parts);
                parts.push(Repl::Group(0));
            }
            b'\\' if k < raw.len() => {
                let d = raw[k];
                k += 1;
                match d {
                    b'0'..=b'9' => {
                        let g = usize::from(d - b'0');
                        if g > groups {
                            return Err(format!("invalid reference \\{g} on `s' command's RHS"));
                        }
                        flush(&mut lit, &mut parts);
                        parts.push(Repl::Group(g));
                    }
                    b'n' => lit.push(b'\n'),
                    b't' => lit.push(b'\t'),
                    b'r' => lit.push(b'\r'),
                    b'f' => lit.push(0x0c),
                    b'v' => lit.push(0x0b),
                    b'a' => lit.push(0x07),
                    b'd' | b'o' | b'x' | b'c' => match posix_re::numeric_escape(raw, k - 1) {
                        Some((byte, used)) => {
                            lit.push(byte);
                            k += used;
                        }
                        None => lit.push(d),
                    },
                    b'L' | b'U' | b'l' | b'u' | b'E' => {
                        flush(&mut lit, &mut parts);
                        parts.push(Repl::Case(match d {
                            b'L' => Case::Lower,
                            b'U' => Case::Upper,
                            b'l' => Case::OneLower,
                            b'u' => Case::OneUpper,
                            _ => Case::End,
                        }));
                    }
                    _ => lit.push(d),
                }
            }
            _ => lit.push(c),
        }
    }
    flush(&mut lit, &mut parts);
    Ok(parts)
}

impl Subst {
    /// Replaces the matches of `re` (this command's regex, or the last one used) in the pattern
    /// space `ps` as the flags say; whether anything was replaced.
    pub(super) fn apply(&self, re: &Regex, ps: &mut Vec<u8>) -> bool {
        let mut out = Vec::with_capacity(ps.len() + 16);
        let mut pos = 0usize;
        let mut copied = 0usize;
        let mut count = 0usize;
        let mut prev_end: Option<usize> = None;
        let mut done = false;
        let mut locs = re.capture_locations();
        while pos <= ps.len() {
            let Some(m) = re.captures_read_at(&mut locs, ps, pos) else {
                break;
            };
            let (st, en) = (m.start(), m.end());
            if st == en && prev_end == Some(st) {
                // An empty match right after the previous match does not count.
                pos = st + 1;
                continue;
            }
            count += 1;
            if count >= self.nth {
                out.extend_from_slice(&ps[copied..st]);
                expand(&self.repl, ps, &locs, &mut out);
                copied = en;
                done = true;
                if !self.global {
                    break;
                }
            }
            prev_end = Some(en);
            pos = if en == st { en + 1 } else { en };
        }
        if done {
            out.extend_from_slice(&ps[copied..]);
            *ps = out;
        }
        done
    }
}

/// Expands a replacement for one match.
fn expand(repl: &[Repl], hay: &[u8], locs: &CaptureLocations, out: &mut Vec<u8>) {
    let mut mode: Option<Case> = None;
    let mut one: Option<Case> = None;
    let push = |bytes: &[u8], out: &mut Vec<u8>, mode: Option<Case>, one: &mut Option<Case>| {
        for &b in bytes {
            let b = match one.take() {
                Some(Case::OneUpper) => b.to_ascii_uppercase(),
                Some(Case::OneLower) => b.to_ascii_lowercase(),
                _ => match mode {
                    Some(Case::Upper) => b.to_ascii_uppercase(),
                    Some(Case::Lower) => b.to_ascii_lowercase(),
                    _ => b,
                },
            };
            out.push(b);
        }
    };
    for part in repl {
        match part {
            Repl::Lit(l) => push(l, out, mode, &mut one),
            Repl::Group(g) => {
                if let Some((s, e)) = locs.get(*g) {
                    push(&hay[s..e], out, mode, &mut one);
                }
            }
            Repl::Case(c) => match c {
                Case::Upper | Case::Lower => {
                    mode = Some(*c);
                    one = None;
                }
                Case::End => {
                    mode = None;
                    one = None;
                }
                Case::OneUpper | Case::OneLower => one = Some(*c),
            },
        }
    }
}
