//! One visited file as the expression sees it: its path, name, depth and metadata, the type
//! letter of `-type` and `%y`, and the `-printf` format.

use std::fs::{self, Metadata};

/// One visited file.
pub(super) struct Entry<'a> {
    /// The path as printed.
    pub(super) path: &'a [u8],
    /// The starting point it was found under.
    pub(super) start: &'a [u8],
    pub(super) depth: usize,
    pub(super) meta: &'a Metadata,
}

impl Entry<'_> {
    /// The base name used by `-name` (trailing slashes removed; `/` stays `/`).
    pub(super) fn name(&self) -> &[u8] {
        let mut p = self.path;
        while p.len() > 1 && p.ends_with(b"/") {
            p = &p[..p.len() - 1];
        }
        if p == b"/" {
            return p;
        }
        match p.iter().rposition(|&b| b == b'/') {
            Some(k) => &p[k + 1..],
            None => p,
        }
    }

    /// The directory part of the path (`%h`): `.` when there is none.
    fn dirname(&self) -> &[u8] {
        let p = self.path;
        match p.iter().rposition(|&b| b == b'/') {
            Some(0) => b"/",
            Some(k) => &p[..k],
            None => b".",
        }
    }
}

/// A file type letter of `-type`.
pub(super) fn type_letter(m: &Metadata) -> u8 {
    let ft = m.file_type();
    if ft.is_symlink() {
        b'l'
    } else if ft.is_dir() {
        b'd'
    } else if ft.is_file() {
        b'f'
    } else {
        other_type_letter(&ft)
    }
}

#[cfg(unix)]
fn other_type_letter(ft: &fs::FileType) -> u8 {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_block_device() {
        b'b'
    } else if ft.is_char_device() {
        b'c'
    } else if ft.is_fifo() {
        b'p'
    } else if ft.is_socket() {
        b's'
    } else {
        b'U'
    }
}

/// On WASI the standard library's device/socket tests are unstable: such files report `U`.
#[cfg(not(unix))]
fn other_type_letter(_ft: &fs::FileType) -> u8 {
    b'U'
}

/// Expands a `-printf` format for one entry.
pub(super) fn printf(f: &[u8], en: &Entry<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        i += 1;
        match c {
            b'\\' if i < f.len() => {
                let d = f[i];
                i += 1;
                match d {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b'f' => out.push(0x0c),
                    b'v' => out.push(0x0b),
                    b'0'..=b'7' => {
                        let mut v = u32::from(d - b'0');
                        let mut k = 0;
                        while k < 2 && i < f.len() && (b'0'..=b'7').contains(&f[i]) {
                            v = v * 8 + u32::from(f[i] - b'0');
                            i += 1;
                            k += 1;
                        }
                        out.push(u8::try_from(v & 0xff).unwrap_or(0));
                    }
                    b'\\' => out.push(b'\\'),
                    b'c' => return out,
                    _ => {
                        out.push(b'\\');
                        out.push(d);
                    }
                }
            }
            b'%' if i < f.len() => {
                let d = f[i];
                i += 1;
                match d {
                    b'%' => out.push(b'%'),
                    b'p' => out.extend_from_slice(en.path),
                    b'f' => out.extend_from_slice(en.name()),
                    b'h' => out.extend_from_slice(en.dirname()),
                    b'H' => out.extend_from_slice(en.start),
                    b'P' => {
                        let rest = en.path.strip_prefix(en.start).unwrap_or(en.path);
                        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                        out.extend_from_slice(rest);
                    }
                    b'd' => out.extend_from_slice(en.depth.to_string().as_bytes()),
                    b's' => out.extend_from_slice(en.meta.len().to_string().as_bytes()),
                    b'y' => out.push(type_letter(en.meta)),
                    _ => {
                        out.push(b'%');
                        out.push(d);
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}
