//! Helpers shared by the own applets: a GNU `getopt_long`-like argument parser, byte/`OsStr`
//! conversions, and GNU-style I/O error messages.

use std::ffi::{OsStr, OsString};
use std::io;

#[cfg(unix)]
use std::os::unix::ffi::{OsStrExt, OsStringExt};
#[cfg(target_os = "wasi")]
use std::os::wasi::ffi::{OsStrExt, OsStringExt};

/// The bytes of an `OsStr`.
pub fn os_bytes(s: &OsStr) -> &[u8] {
    s.as_bytes()
}

/// An `OsString` from bytes.
pub fn bytes_os(b: Vec<u8>) -> OsString {
    OsString::from_vec(b)
}

/// An `OsStr` view of bytes.
pub fn bytes_osstr(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

/// The message GNU tools print for an I/O error (strerror text, without Rust's "(os error N)").
pub fn io_msg(e: &io::Error) -> String {
    use io::ErrorKind as K;
    let fixed = match e.kind() {
        K::NotFound => "No such file or directory",
        K::PermissionDenied => "Permission denied",
        K::AlreadyExists => "File exists",
        K::IsADirectory => "Is a directory",
        K::NotADirectory => "Not a directory",
        K::DirectoryNotEmpty => "Directory not empty",
        K::InvalidInput => "Invalid argument",
        K::ReadOnlyFilesystem => "Read-only file system",
        K::Unsupported => "Operation not supported",
        _ => "",
    };
    if !fixed.is_empty() {
        return fixed.to_owned();
    }
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// Whether an option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    /// A flag.
    No,
    /// `-x VALUE`, `-xVALUE`, `--name VALUE`, `--name=VALUE`.
    Required,
    /// Only attached: `-xVALUE`, `--name=VALUE`.
    Optional,
}

/// A long option: its name, whether it takes an argument, and the key it reports.
#[derive(Clone, Copy, Debug)]
pub struct LongOpt {
    /// The name without the leading `--`.
    pub name: &'static str,
    /// Argument kind.
    pub arg: HasArg,
    /// The key reported for it (usually the matching short option's letter).
    pub key: &'static str,
}

/// Shorthand constructor for a [`LongOpt`].
pub const fn long(name: &'static str, arg: HasArg, key: &'static str) -> LongOpt {
    LongOpt { name, arg, key }
}

/// One parsed command-line item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// An option, by key, with its value, and the index of the argument it came from.
    Opt {
        /// The option's key (a short option's letter, or a long option's key).
        key: &'static str,
        /// The option's value, if any.
        val: Option<OsString>,
        /// Index into the argument list it was read from.
        at: usize,
    },
    /// A non-option argument.
    Operand(OsString),
}

/// Parses arguments the way GNU `getopt_long` does. `shorts` lists the short options, each
/// letter followed by `:` when it takes an argument or `::` when the argument is optional. With
/// `permute`, options may follow operands (GNU default); without, the first operand ends the
/// options. `--` always ends them. Returns a GNU-worded message on error.
pub fn getopt(
    args: &[OsString],
    shorts: &'static str,
    longs: &[LongOpt],
    permute: bool,
) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let arg = os_bytes(&args[i]);
        if only_operands || arg.len() < 2 || arg[0] != b'-' {
            items.push(Item::Operand(args[i].clone()));
            if !permute {
                only_operands = true;
            }
            i += 1;
            continue;
        }
        if arg == b"--" {
            only_operands = true;
            i += 1;
            continue;
        }
        if let Some(body) = arg.strip_prefix(b"--") {
            let (name, value) = match body.iter().position(|&b| b == b'=') {
                Some(eq) => (&body[..eq], Some(bytes_os(body[eq + 1..].to_vec()))),
                None => (body, None),
            };
            let shown = String::from_utf8_lossy(name).into_owned();
            let exact = longs.iter().find(|l| l.name.as_bytes() == name);
            let opt = match exact {
                Some(l) => *l,
                None => {
                    let cands: Vec<&LongOpt> = longs
                        .iter()
                        .filter(|l| l.name.as_bytes().starts_with(name))
                        .collect();
                    match cands.as_slice() {
                        [] => return Err(format!("unrecognized option '--{shown}'")),
                        [one] => **one,
                        many => {
                            // Several names for one key are not ambiguous.
                            if many
                                .iter()
                                .all(|l| l.key == many[0].key && l.arg == many[0].arg)
                            {
                                *many[0]
                            } else {
                                let names: Vec<String> =
                                    many.iter().map(|l| format!("'--{}'", l.name)).collect();
                                return Err(format!(
                                    "option '--{shown}' is ambiguous; possibilities: {}",
                                    names.join(" ")
                                ));
                            }
                        }
                    }
                }
            };
            let val = match (opt.arg, value) {
                (HasArg::No, Some(_)) => {
                    return Err(format!("option '--{}' doesn't allow an argument", opt.name));
                }
                (HasArg::No, None) => None,
                (HasArg::Optional, v) => v,
                (HasArg::Required, Some(v)) => Some(v),
                (HasArg::Required, None) => {
                    i += 1;
                    match args.get(i) {
                        Some(v) => Some(v.clone()),
                        None => {
                            return Err(format!("option '--{}' requires an argument", opt.name));
                        }
                    }
                }
            };
            items.push(Item::Opt {
                key: opt.key,
                val,
                at: i,
            });
            i += 1;
            continue;
        }
        // A cluster of short options.
        let start = i;
        let mut j = 1;
        while j < arg.len() {
            let c = arg[j];
            let Some(spec) = short_spec(shorts, c) else {
                return Err(format!("invalid option -- '{}'", char::from(c)));
            };
            let (key, kind) = spec;
            j += 1;
            let val = match kind {
                HasArg::No => None,
                HasArg::Optional => {
                    let v = (j < arg.len()).then(|| bytes_os(arg[j..].to_vec()));
                    j = arg.len();
                    v
                }
                HasArg::Required => {
                    if j < arg.len() {
                        let v = bytes_os(arg[j..].to_vec());
                        j = arg.len();
                        Some(v)
                    } else {
                        i += 1;
                        match args.get(i) {
                            Some(v) => Some(v.clone()),
                            None => {
                                return Err(format!(
                                    "option requires an argument -- '{}'",
                                    char::from(c)
                                ));
                            }
                        }
                    }
                }
            };
            items.push(Item::Opt {
                key,
                val,
                at: start,
            });
        }
        i += 1;
    }
    Ok(items)
}

/// Looks a short option up in a getopt spec string; returns its key (a one-letter `&str` taken
/// from the spec) and argument kind.
fn short_spec(shorts: &'static str, c: u8) -> Option<(&'static str, HasArg)> {
    let b = shorts.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let letter = b[k];
        let key = shorts.get(k..k + 1)?;
        let mut kind = HasArg::No;
        let mut next = k + 1;
        if b.get(next) == Some(&b':') {
            kind = HasArg::Required;
            next += 1;
            if b.get(next) == Some(&b':') {
                kind = HasArg::Optional;
                next += 1;
            }
        }
        if letter == c && letter != b':' {
            return Some((key, kind));
        }
        k = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    const LONGS: &[LongOpt] = &[
        long("ignore-case", HasArg::No, "i"),
        long("regexp", HasArg::Required, "e"),
        long("in-place", HasArg::Optional, "I"),
        long("invert-match", HasArg::No, "v"),
    ];

    fn keys(items: &[Item]) -> Vec<String> {
        items
            .iter()
            .map(|it| match it {
                Item::Opt { key, val, .. } => match val {
                    Some(v) => format!("{key}={}", v.to_string_lossy()),
                    None => (*key).to_owned(),
                },
                Item::Operand(o) => format!("<{}>", o.to_string_lossy()),
            })
            .collect()
    }

    #[test]
    fn shorts_and_clusters() {
        let it = getopt(&a(&["-ive", "pat", "f", "-n"]), "ie:vn", LONGS, true).unwrap();
        assert_eq!(keys(&it), ["i", "v", "e=pat", "<f>", "n"]);
        let it = getopt(&a(&["-epat"]), "ie:vn", LONGS, true).unwrap();
        assert_eq!(keys(&it), ["e=pat"]);
    }

    #[test]
    fn longs_and_prefixes() {
        let it = getopt(
            &a(&["--ignore", "--regexp=x", "--in-place=.bak"]),
            "",
            LONGS,
            true,
        )
        .unwrap();
        assert_eq!(keys(&it), ["i", "e=x", "I=.bak"]);
        assert!(getopt(&a(&["--i"]), "", LONGS, true).is_err());
        assert!(getopt(&a(&["--nope"]), "", LONGS, true).is_err());
        assert!(getopt(&a(&["--ignore-case=1"]), "", LONGS, true).is_err());
        assert!(getopt(&a(&["--regexp"]), "", LONGS, true).is_err());
    }

    #[test]
    fn permutation_and_double_dash() {
        let it = getopt(&a(&["x", "-i", "--", "-v"]), "iv", LONGS, true).unwrap();
        assert_eq!(keys(&it), ["<x>", "i", "<-v>"]);
        let it = getopt(&a(&["x", "-i"]), "iv", LONGS, false).unwrap();
        assert_eq!(keys(&it), ["<x>", "<-i>"]);
        let it = getopt(&a(&["-", "-i"]), "iv", LONGS, true).unwrap();
        assert_eq!(keys(&it), ["<->", "i"]);
    }

    #[test]
    fn errors() {
        assert_eq!(
            getopt(&a(&["-k"]), "iv", LONGS, true).unwrap_err(),
            "invalid option -- 'k'"
        );
        assert_eq!(
            getopt(&a(&["-e"]), "e:", LONGS, true).unwrap_err(),
            "option requires an argument -- 'e'"
        );
    }
}
