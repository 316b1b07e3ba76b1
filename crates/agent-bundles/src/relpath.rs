//! The names a manifest may use for files and commands, decided by allowlist.
//!
//! A bundle path is relative and already normal: components joined by `/`, each made only of
//! ASCII letters, digits and `. _ - +`, none of them `.` or `..`, no empty component (so no
//! leading, trailing or doubled `/`), at most [`MAX_DEPTH`] components of at most
//! [`MAX_COMPONENT`] bytes. Everything else (absolute paths, `..`, backslashes, drive letters,
//! NUL, control or non-ASCII characters, `%2e%2e`) is refused because it is not on the list,
//! not because it is remembered as dangerous. Such a path can be joined to a cache directory
//! without ever leaving it.

/// Most components in a bundle path.
pub const MAX_DEPTH: usize = 16;
/// Longest component, in bytes.
pub const MAX_COMPONENT: usize = 128;

/// Why a path or name was refused (a phrase that completes "must ...").
pub type Refusal = &'static str;

/// Checks a bundle-relative file path.
///
/// # Errors
/// What is wrong, as a phrase.
pub fn check_path(path: &str) -> Result<(), Refusal> {
    if path.is_empty() {
        return Err("be a non-empty relative path");
    }
    if path.starts_with('/') {
        return Err("be relative (it starts with `/`)");
    }
    let components: Vec<&str> = path.split('/').collect();
    if components.len() > MAX_DEPTH {
        return Err("have at most 16 components");
    }
    for component in components {
        check_component(component)?;
    }
    Ok(())
}

/// Checks a single path component (also used for bundle names and versions, which become
/// directory names in the cache).
///
/// # Errors
/// What is wrong, as a phrase.
pub fn check_component(component: &str) -> Result<(), Refusal> {
    if component.is_empty() {
        return Err("be normalised (no empty component: no leading, trailing or doubled `/`)");
    }
    if component == "." || component == ".." {
        return Err("stay inside the bundle (no `.` or `..` component)");
    }
    if component.len() > MAX_COMPONENT {
        return Err("have components of at most 128 bytes");
    }
    if !component.bytes().all(is_path_byte) {
        return Err(
            "use only ASCII letters, digits and `. _ - +` in each component (no `\\`, `:`, NUL, spaces or other characters)",
        );
    }
    Ok(())
}

/// Checks a command name: a path component that does not start with `-`, or `[` (the test
/// command's other name).
///
/// # Errors
/// What is wrong, as a phrase.
pub fn check_command_name(name: &str) -> Result<(), Refusal> {
    if name == "[" {
        return Ok(());
    }
    if name.starts_with('-') {
        return Err("not start with `-`");
    }
    check_component(name)
}

fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'+')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_relative_paths_pass() {
        for ok in [
            "cat.wasm",
            "bin/coreutils.wasm",
            "a/b/c-1.2_x+y.wasm",
            ".hidden",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn escapes_and_oddities_are_refused() {
        let bad = [
            "",
            "/etc/passwd",
            "../x.wasm",
            "a/../../x",
            "a/./b",
            "./a",
            "a//b",
            "a/",
            "..",
            ".",
            "a\\..\\b",
            "..\\x",
            "C:/x",
            "c:x",
            "a\0b",
            "a b",
            "a\nb",
            "%2e%2e/x",
            "é.wasm",
            "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q",
        ];
        for path in bad {
            assert!(check_path(path).is_err(), "{path:?} should be refused");
        }
        assert!(check_path(&"a".repeat(129)).is_err());
    }

    #[test]
    fn command_names() {
        for ok in ["cat", "[", "sha256sum", "x.y"] {
            assert_eq!(check_command_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "-rf", "a/b", "..", "[[", "a b", "ls;rm"] {
            assert!(check_command_name(bad).is_err(), "{bad:?}");
        }
    }
}
