//! How a path segment is compared with a protected name (`.git`, `.bashrc`, `HEAD`, ...).
//!
//! The file systems an agent runs on do not all compare names byte for byte: APFS and HFS+
//! (macOS) and NTFS (Windows) are case-insensitive by default, so `.Git/config` and `.BASHRC`
//! are the protected files themselves; HFS+ ignores some invisible code points (`.g\u{200c}it`
//! is `.git`); Windows drops trailing dots and spaces (`.git.`), reads `name::$DATA` or
//! `name:stream` as the file `name`, and may give a long name an 8.3 short alias (`GIT~1` for
//! `.git`). The same bypasses were git's own (CVE-2014-9390, CVE-2019-1353). A segment is
//! therefore folded to the name those file systems would open before it is compared, on every
//! platform: on a case-sensitive file system this only makes more names protected, the safe
//! side.

/// Code points HFS+ ignores in file names (the list git checks in `is_hfs_dotgit`).
fn hfs_ignorable(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

/// The name a case-insensitive, Windows- or HFS+-style file system would open for `segment`:
/// invisible code points removed, case folded (full Unicode folding, so the Kelvin sign is
/// `k` and a long `ſ` is `s`), an NTFS stream suffix (`:…`) and trailing dots and spaces cut.
pub(crate) fn fold(segment: &str) -> String {
    let folded: String = if segment.is_ascii() {
        segment.to_ascii_lowercase()
    } else {
        segment
            .chars()
            .filter(|&c| !hfs_ignorable(c))
            .flat_map(char::to_uppercase)
            .flat_map(char::to_lowercase)
            .collect()
    };
    let without_stream = match folded.find(':') {
        Some(i) => &folded[..i],
        None => &folded[..],
    };
    without_stream.trim_end_matches(['.', ' ']).to_owned()
}

/// Whether a folded segment names the protected name `name` (lowercase ASCII, as the tables
/// hold them): equal, or an 8.3 short alias of it.
pub(crate) fn names(folded: &str, name: &str) -> bool {
    folded.eq_ignore_ascii_case(name) || is_short_alias(folded, name)
}

/// `STEM~N` or `STEM~N.EXT`, where `STEM` is how Windows starts the short name of `name`: its
/// first six characters with leading dots, later dots and the extension removed.
fn is_short_alias(folded: &str, name: &str) -> bool {
    let Some((stem, rest)) = folded.split_once('~') else {
        return false;
    };
    let digits = rest.split_once('.').map_or(rest, |(d, _)| d);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let base = name.trim_start_matches('.');
    let base = match base.rfind('.') {
        Some(i) if i > 0 => &base[..i],
        _ => base,
    };
    let expected: String = base
        .chars()
        .filter(|c| !matches!(c, '.' | ' '))
        .take(6)
        .collect();
    !expected.is_empty() && stem.eq_ignore_ascii_case(&expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_a_case_insensitive_or_windows_file_system_opens_as_the_protected_name() {
        for (segment, name) in [
            (".git", ".git"),
            (".Git", ".git"),
            (".GIT", ".git"),
            (".BASHRC", ".bashrc"),
            (".Bashrc", ".bashrc"),
            (".ba\u{17f}hrc", ".bashrc"),
            (".g\u{200c}it", ".git"),
            (".git\u{feff}", ".git"),
            (".git.", ".git"),
            (".git. . ", ".git"),
            (".git::$INDEX_ALLOCATION", ".git"),
            (".bashrc:stream", ".bashrc"),
            ("GIT~1", ".git"),
            ("git~12", ".git"),
            ("BASHRC~1", ".bashrc"),
            ("YARNRC~1.YML", ".yarnrc.yml"),
            ("GRADLE~1.PRO", "gradle-wrapper.properties"),
            ("Head", "head"),
            ("OBJECTS", "objects"),
            (".bazelis\u{212a}rc", ".bazeliskrc"),
        ] {
            assert!(
                names(&fold(segment), name),
                "{segment:?} should name {name}"
            );
        }
    }

    #[test]
    fn other_names_stay_apart() {
        for (segment, name) in [
            (".gitignore", ".git"),
            ("git", ".git"),
            (".git~", ".git"),
            ("GIT~", ".git"),
            ("GIT~X", ".git"),
            ("GI~1", ".git"),
            (".bashrc.bak", ".bashrc"),
            ("xbashrc", ".bashrc"),
        ] {
            assert!(!names(&fold(segment), name), "{segment:?} is not {name}");
        }
    }
}
