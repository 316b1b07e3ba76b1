//! `Read(...)` / `Edit(...)` specifiers: gitignore-style globs with four anchors.
//!
//! | prefix | anchored at | example |
//! |---|---|---|
//! | `//path` | the filesystem root | `Read(//etc/**)` |
//! | `~/path` | the home directory | `Read(~/.ssh/**)` |
//! | `/path` | the settings file's root (project root, `~/.agent`, the `--settings` file's folder) | `Edit(/src/**)` |
//! | `path`, `./path` | the current directory | `Read(*.env)` |
//!
//! `*` stays within one path segment and `**` crosses segments. A bare file name (no `/`)
//! matches at any depth below its anchor (`Read(.env)` is `Read(**/.env)`); a single-segment
//! directory pattern such as `src/**` is anchored for allow rules but matches at any depth for
//! deny and ask rules. A pattern also covers everything below what it names, so `Read(secrets)`
//! protects `secrets/key.pem`.

use std::path::Path;

use globset::GlobBuilder;

use crate::permissions::decision::RuleList;

/// Where a path pattern is anchored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// `//path`
    Root,
    /// `~/path`
    Home,
    /// `/path`
    SettingsRoot,
    /// `path` or `./path`
    Cwd,
}

/// A parsed path specifier, before anchoring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    /// The anchor.
    pub anchor: Anchor,
    /// The glob below the anchor (no leading `/` or `./`).
    pub rest: String,
}

/// The directories anchors resolve to.
#[derive(Clone, Copy, Debug)]
pub struct Anchors<'a> {
    /// The current directory.
    pub cwd: &'a Path,
    /// The home directory.
    pub home: &'a Path,
    /// The rule's settings root.
    pub settings_root: &'a Path,
}

impl PathPattern {
    /// Parses and validates a path specifier.
    ///
    /// # Errors
    /// An empty pattern or a glob that does not compile (e.g. an unclosed `[`).
    pub fn parse(content: &str) -> Result<Self, String> {
        let spec = content.trim().replace('\\', "/");
        if spec.is_empty() {
            return Err("empty path pattern; write `Read` to match every file".into());
        }
        let (anchor, rest) = if let Some(r) = spec.strip_prefix("//") {
            (Anchor::Root, r.trim_start_matches('/'))
        } else if spec == "~" {
            (Anchor::Home, "")
        } else if let Some(r) = spec.strip_prefix("~/") {
            (Anchor::Home, r)
        } else if let Some(r) = spec.strip_prefix('/') {
            (Anchor::SettingsRoot, r)
        } else if let Some(r) = spec.strip_prefix("./") {
            (Anchor::Cwd, r)
        } else if spec.starts_with('~') {
            return Err(format!(
                "`{spec}`: only `~/` is supported for the home directory (not `~user`)"
            ));
        } else {
            (Anchor::Cwd, spec.as_str())
        };
        let mut rest = rest.trim_start_matches("./").to_owned();
        if rest.ends_with('/') {
            rest.push_str("**");
        }
        let pattern = Self { anchor, rest };
        // Validate the glob syntax now, with a neutral anchor, so bad rules fail at load.
        let probe = Anchors {
            cwd: Path::new("/"),
            home: Path::new("/"),
            settings_root: Path::new("/"),
        };
        for glob in pattern.globs(RuleList::Deny, probe) {
            build(&glob).map_err(|e| format!("invalid glob `{content}`: {e}"))?;
        }
        Ok(pattern)
    }

    /// The absolute globs this pattern stands for, for a rule in `list`.
    pub fn globs(&self, list: RuleList, anchors: Anchors<'_>) -> Vec<String> {
        let base = match self.anchor {
            Anchor::Root => Path::new("/"),
            Anchor::Home => anchors.home,
            Anchor::SettingsRoot => anchors.settings_root,
            Anchor::Cwd => anchors.cwd,
        };
        let mut base = globset::escape(&base.to_string_lossy());
        if !base.ends_with('/') {
            base.push('/');
        }
        if self.rest.is_empty() || self.rest == "**" {
            let root = base.trim_end_matches('/').to_owned();
            return vec![
                if root.is_empty() { "/".into() } else { root },
                format!("{base}**"),
            ];
        }
        let segments: Vec<&str> = self.rest.split('/').collect();
        let any_depth = match segments.as_slice() {
            // A bare file name: at any depth below the anchor.
            [_] => true,
            // `dir/**`: any depth for deny and ask, anchored for allow.
            [_, "**"] => self.anchor == Anchor::Cwd && list != RuleList::Allow,
            _ => false,
        };
        let rel = if any_depth && !self.rest.starts_with("**") {
            format!("**/{}", self.rest)
        } else {
            self.rest.clone()
        };
        let glob = format!("{base}{rel}");
        if glob.ends_with("/**") {
            vec![glob]
        } else {
            vec![glob.clone(), format!("{glob}/**")]
        }
    }
}

/// Compiles one glob with gitignore-like separator rules.
pub(crate) fn build(glob: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(spec: &str, list: RuleList) -> Vec<String> {
        PathPattern::parse(spec).unwrap().globs(
            list,
            Anchors {
                cwd: Path::new("/work/proj"),
                home: Path::new("/home/u"),
                settings_root: Path::new("/cfg"),
            },
        )
    }

    fn hit(spec: &str, list: RuleList, path: &str) -> bool {
        globs(spec, list)
            .iter()
            .any(|g| build(g).unwrap().compile_matcher().is_match(path))
    }

    #[test]
    fn anchors() {
        assert!(hit("//etc/**", RuleList::Deny, "/etc/passwd"));
        assert!(hit("~/.ssh/**", RuleList::Deny, "/home/u/.ssh/id_rsa"));
        assert!(hit("/secrets/**", RuleList::Deny, "/cfg/secrets/a"));
        assert!(!hit("/secrets/**", RuleList::Deny, "/secrets/a"));
        assert!(hit("./src/**", RuleList::Allow, "/work/proj/src/a.rs"));
        assert!(hit("~", RuleList::Deny, "/home/u/x"));
    }

    #[test]
    fn depth_rules() {
        assert!(hit(".env", RuleList::Deny, "/work/proj/.env"));
        assert!(hit(".env", RuleList::Deny, "/work/proj/a/b/.env"));
        assert!(!hit(".env", RuleList::Deny, "/work/.env"));
        assert!(hit("*.env", RuleList::Deny, "/work/proj/x/prod.env"));
        assert!(hit("src/**", RuleList::Deny, "/work/proj/a/src/x.rs"));
        assert!(!hit("src/**", RuleList::Allow, "/work/proj/a/src/x.rs"));
        assert!(hit("src/**", RuleList::Allow, "/work/proj/src/x.rs"));
        assert!(!hit("src/a/**", RuleList::Deny, "/work/proj/b/src/a/x"));
        assert!(hit("**/src/**", RuleList::Allow, "/work/proj/b/src/x"));
    }

    #[test]
    fn star_stays_in_segment_and_dirs_cover_contents() {
        assert!(!hit("src/*.rs", RuleList::Deny, "/work/proj/src/a/b.rs"));
        assert!(hit("src/*.rs", RuleList::Deny, "/work/proj/src/b.rs"));
        assert!(hit("secrets", RuleList::Deny, "/work/proj/secrets/key.pem"));
        assert!(hit("build/", RuleList::Deny, "/work/proj/build/x"));
    }

    #[test]
    fn special_characters_in_anchor_are_literal() {
        let p = PathPattern::parse("x").unwrap();
        let g = p.globs(
            RuleList::Deny,
            Anchors {
                cwd: Path::new("/w/[a]"),
                home: Path::new("/"),
                settings_root: Path::new("/"),
            },
        );
        assert!(build(&g[0]).unwrap().compile_matcher().is_match("/w/[a]/x"));
    }

    #[test]
    fn errors() {
        assert!(PathPattern::parse("").is_err());
        assert!(PathPattern::parse("src/[a").is_err());
        assert!(PathPattern::parse("~bob/x").is_err());
    }
}
