//! Rules compiled once for a session: indexed so one call is matched without re-parsing and
//! without testing every rule.
//!
//! Per list (deny, ask, allow): Bash patterns are indexed by the first word they fix (a command
//! is tested only against rules for its own name plus the few that fix none); path rules of each
//! family are one `GlobSet` matched once per path; the remaining rules are few and tested
//! directly.

use std::path::{Path, PathBuf};

use globset::{Candidate, GlobSet, GlobSetBuilder};
use rustc_hash::FxHashMap;
use serde_json::Value;

use super::decision::{RuleList, RuleOrigin, RuleRef};
use super::request::EDIT_TOOLS;
use super::rules::{
    Anchors, BashPattern, PathFamily, Rule, RuleContent, ToolPattern, build_glob, wildcard_match,
};
use super::workdirs::ResolvedPath;

/// A rule with its provenance and the directory its `/path` patterns are anchored at.
#[derive(Clone, Debug)]
pub struct RuleEntry {
    /// The parsed rule.
    pub rule: Rule,
    /// Where it was written.
    pub origin: RuleOrigin,
    /// The root `/path` patterns resolve against (see `rules::paths`).
    pub settings_root: PathBuf,
}

impl RuleEntry {
    /// The rule as a [`RuleRef`] for decisions.
    pub fn to_ref(&self) -> RuleRef {
        RuleRef {
            text: self.rule.text.clone(),
            origin: self.origin.clone(),
        }
    }
}

/// Which tool family a path is checked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathUse {
    Read,
    Write,
}

#[derive(Debug, Default)]
struct PathSet {
    set: GlobSet,
    /// For each glob of `set`, the rule it belongs to.
    owners: Vec<usize>,
}

impl PathSet {
    fn build(globs: Vec<(String, usize)>) -> Result<Self, String> {
        let mut builder = GlobSetBuilder::new();
        let mut owners = Vec::with_capacity(globs.len());
        for (glob, owner) in globs {
            builder.add(build_glob(&glob).map_err(|e| format!("invalid glob `{glob}`: {e}"))?);
            owners.push(owner);
        }
        let set = builder.build().map_err(|e| e.to_string())?;
        Ok(Self { set, owners })
    }

    /// Indices of the rules matching the candidate path.
    fn matching(&self, path: &Candidate<'_>, scratch: &mut Vec<usize>, out: &mut Vec<usize>) {
        if self.owners.is_empty() {
            return;
        }
        self.set.matches_candidate_into(path, scratch);
        out.extend(scratch.iter().map(|&i| self.owners[i]));
    }
}

/// One list of compiled rules.
#[derive(Debug, Default)]
pub(crate) struct CompiledList {
    pub entries: Vec<RuleEntry>,
    /// Exact Bash patterns by their text (the lowest index per text).
    bash_exact: FxHashMap<String, usize>,
    /// Prefix Bash patterns by the first word they fix.
    bash_by_word: FxHashMap<String, Vec<usize>>,
    /// Bash pattern rules fixing no first word.
    bash_other: Vec<usize>,
    /// `Read(...)` path rules.
    read_paths: PathSet,
    /// `Edit(...)` path rules.
    edit_paths: PathSet,
    /// `Write(...)`-style path rules (tool-specific).
    only_paths: PathSet,
    /// Everything else: tool-level, parameter, literal and domain rules.
    other: Vec<usize>,
}

impl CompiledList {
    pub(crate) fn compile(
        entries: Vec<RuleEntry>,
        list: RuleList,
        cwd: &Path,
        home: &Path,
    ) -> Result<Self, String> {
        let mut this = Self::default();
        let mut read_globs = Vec::new();
        let mut edit_globs = Vec::new();
        let mut only_globs = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            match &entry.rule.content {
                RuleContent::Bash(BashPattern::Exact(text)) => {
                    this.bash_exact.entry(text.clone()).or_insert(i);
                }
                RuleContent::Bash(p) => match p.first_word() {
                    Some(w) => this.bash_by_word.entry(w.to_owned()).or_default().push(i),
                    None => this.bash_other.push(i),
                },
                RuleContent::Path { family, pattern } => {
                    let anchors = Anchors {
                        cwd,
                        home,
                        settings_root: &entry.settings_root,
                    };
                    let target = match family {
                        PathFamily::Read => &mut read_globs,
                        PathFamily::Edit => &mut edit_globs,
                        PathFamily::Only(_) => &mut only_globs,
                    };
                    target.extend(pattern.globs(list, anchors).into_iter().map(|g| (g, i)));
                }
                _ => this.other.push(i),
            }
        }
        this.read_paths = PathSet::build(read_globs)?;
        this.edit_paths = PathSet::build(edit_globs)?;
        this.only_paths = PathSet::build(only_globs)?;
        this.entries = entries;
        Ok(this)
    }

    /// The entry at `i`.
    pub(crate) fn entry(&self, i: usize) -> &RuleEntry {
        &self.entries[i]
    }

    /// The first (lowest-index) rule that applies to the whole call at tool level: a bare tool
    /// rule, a parameter rule, a literal rule or a domain rule. `host` is the fetched host.
    pub(crate) fn tool_level(
        &self,
        tool: &str,
        input: &Value,
        host: Option<&str>,
    ) -> Option<usize> {
        self.other
            .iter()
            .copied()
            .find(|&i| self.tool_level_one(i, tool, input, host))
    }

    /// [`Self::tool_level`] without bare (content-free) rules.
    pub(crate) fn tool_level_except_bare(
        &self,
        tool: &str,
        input: &Value,
        host: Option<&str>,
    ) -> Option<usize> {
        self.other.iter().copied().find(|&i| {
            !matches!(self.entries[i].rule.content, RuleContent::Any)
                && self.tool_level_one(i, tool, input, host)
        })
    }

    fn tool_level_one(&self, i: usize, tool: &str, input: &Value, host: Option<&str>) -> bool {
        let rule = &self.entries[i].rule;
        if !applies_to_tool(rule, tool) {
            return false;
        }
        match &rule.content {
            RuleContent::Any => true,
            RuleContent::Param { name, value } => input
                .get(name)
                .and_then(scalar_text)
                .is_some_and(|v| wildcard_match(value, &v)),
            RuleContent::Literal { field, value } => input
                .get(*field)
                .and_then(Value::as_str)
                .is_some_and(|v| wildcard_match(value, v)),
            RuleContent::Domain(d) => host.is_some_and(|h| d.matches(h)),
            RuleContent::Bash(_) | RuleContent::Path { .. } => false,
        }
    }

    /// Whether the list has a bare rule for `tool` (e.g. `Bash` itself).
    pub(crate) fn bare_rule(&self, tool: &str) -> Option<usize> {
        self.other.iter().copied().find(|&i| {
            let rule = &self.entries[i].rule;
            matches!(rule.content, RuleContent::Any) && applies_to_tool(rule, tool)
        })
    }

    /// The first Bash pattern rule matching `text` (`exact_only` admits only exact patterns).
    pub(crate) fn bash(&self, text: &str, exact_only: bool) -> Option<usize> {
        let first = text.split(' ').next().unwrap_or(text);
        let indexed = self
            .bash_by_word
            .get(first)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut best: Option<usize> = self.bash_exact.get(text).copied();
        for &i in indexed.iter().chain(&self.bash_other) {
            if best.is_some_and(|b| b < i) {
                continue;
            }
            if let RuleContent::Bash(p) = &self.entries[i].rule.content
                && (!exact_only || p.is_exact())
                && p.matches(text)
            {
                best = Some(i);
            }
        }
        best
    }

    /// The first Bash pattern rule (of any placement) — used when a command did not parse, to
    /// test deny rules against its raw text.
    pub(crate) fn bash_raw(&self, text: &str) -> Option<usize> {
        self.entries.iter().position(|e| match &e.rule.content {
            RuleContent::Bash(p) => p.matches(text),
            _ => false,
        })
    }

    /// Rules matching one path for `use_` by `tool` (`None` for Bash). With `any_form`, a match
    /// on either the lexical or the symlink-resolved form counts (deny, ask); otherwise every
    /// form must match (allow).
    pub(crate) fn path(
        &self,
        path: &ResolvedPath,
        use_: PathUse,
        tool: Option<&str>,
        any_form: bool,
        read_rules_cover_writes: bool,
    ) -> Option<usize> {
        let mut per_form: Vec<Vec<usize>> = Vec::new();
        let mut scratch = Vec::new();
        for form in path.forms() {
            // One candidate per form (globset normalises the path once for every set).
            let candidate = Candidate::new(form);
            let mut hits = Vec::new();
            match use_ {
                PathUse::Read => self
                    .read_paths
                    .matching(&candidate, &mut scratch, &mut hits),
                PathUse::Write => {
                    self.edit_paths
                        .matching(&candidate, &mut scratch, &mut hits);
                    if read_rules_cover_writes {
                        self.read_paths
                            .matching(&candidate, &mut scratch, &mut hits);
                    }
                }
            }
            if let Some(tool) = tool {
                let mut only = Vec::new();
                self.only_paths
                    .matching(&candidate, &mut scratch, &mut only);
                hits.extend(only.into_iter().filter(|&i| {
                    matches!(&self.entries[i].rule.content, RuleContent::Path { family: PathFamily::Only(t), .. } if t == tool)
                }));
            }
            hits.sort_unstable();
            hits.dedup();
            per_form.push(hits);
        }
        if any_form {
            per_form.into_iter().flatten().min()
        } else {
            let (first, rest) = per_form.split_first()?;
            first
                .iter()
                .copied()
                .find(|i| rest.iter().all(|r| r.contains(i)))
        }
    }

    /// Whether the list has no rules at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Whether `rule` can apply to a call of `tool` (canonical name), tool families included:
/// `Edit` rules cover every editing tool.
fn applies_to_tool(rule: &Rule, tool: &str) -> bool {
    match &rule.tool {
        ToolPattern::Name(n) if n == "Edit" => EDIT_TOOLS.contains(&tool),
        ToolPattern::Name(n) if n == "Read" && matches!(rule.content, RuleContent::Any) => {
            tool == "Read"
        }
        other => other.matches(tool),
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
