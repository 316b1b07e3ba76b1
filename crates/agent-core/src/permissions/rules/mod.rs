//! The rule grammar: `Tool` or `Tool(specifier)`, as in Claude Code (claude-code.md §3).
//!
//! | rule | meaning |
//! |---|---|
//! | `Bash`, `Bash(*)` | every call of the tool |
//! | `Bash(git diff *)`, `Bash(ls*)`, `Bash(npm run test:*)` | command patterns ([`BashPattern`]) |
//! | `Read(./src/**)`, `Edit(//abs/**)`, `Read(~/x)`, `Edit(/x)` | path globs ([`PathPattern`]) |
//! | `WebFetch(domain:example.com)`, `WebFetch(domain:*.x.com)` | hosts ([`DomainPattern`]) |
//! | `mcp__srv`, `mcp__srv__tool`, `mcp__srv__get_*` | MCP servers and tools |
//! | `Agent(model:opus)`, `Bash(run_in_background:true)` | parameter rules (deny and ask only) |
//! | `Agent(Explore)`, `Skill(name)` | the tool's primary name field |
//! | `*`, `mcp__*` | tool-name globs (deny and ask only; allow only after `mcp__srv__`) |
//!
//! Rules are parsed once, when settings load; a rule that cannot be parsed refuses its whole
//! settings file. Rules that Claude Code accepts but ignores are ignored here too, with a warning.

mod bash;
mod domain;
mod paths;

use std::fmt;

pub use bash::BashPattern;
pub use domain::{DomainPattern, url_host};
pub(crate) use paths::build as build_glob;
pub use paths::{Anchor, Anchors, PathPattern};

use super::decision::RuleList;

/// Which tool names a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolPattern {
    /// One tool, by canonical name (`Task` is read as `Agent`).
    Name(String),
    /// Every tool of one MCP server (`mcp__srv`).
    McpServer(String),
    /// A glob over tool names (`*`, `mcp__*`, `mcp__srv__get_*`).
    Glob(String),
}

impl ToolPattern {
    /// Whether the (canonical) tool name matches.
    pub fn matches(&self, tool: &str) -> bool {
        match self {
            Self::Name(n) => n == tool,
            Self::McpServer(s) => {
                tool == s || (tool.starts_with(s.as_str()) && tool[s.len()..].starts_with("__"))
            }
            Self::Glob(g) => wildcard_match(g, tool),
        }
    }
}

/// The tool families path rules apply to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathFamily {
    /// `Read(...)`: Read, Glob, Grep, NotebookRead, LS, and files Bash commands read. A Read
    /// deny also blocks writes to the same path.
    Read,
    /// `Edit(...)`: Edit, Write, MultiEdit, NotebookEdit, and files Bash commands write.
    Edit,
    /// `Write(...)`, `MultiEdit(...)`, `NotebookEdit(...)`, `Glob(...)`: that tool only (deny and
    /// ask; Claude Code ignores these, this runtime applies them because they only restrict).
    Only(String),
}

/// What a rule's specifier says.
#[derive(Clone, Debug)]
pub enum RuleContent {
    /// No specifier (or `*`): every call of the tool.
    Any,
    /// A command pattern.
    Bash(BashPattern),
    /// A path pattern for a tool family.
    Path {
        /// Which tools it applies to.
        family: PathFamily,
        /// The pattern.
        pattern: PathPattern,
    },
    /// A host pattern.
    Domain(DomainPattern),
    /// `param:value`, matching a top-level scalar input field (`*` allowed in the value).
    Param {
        /// The input field.
        name: String,
        /// The value pattern.
        value: String,
    },
    /// A pattern for the tool's primary name field (`Agent(Explore)` → `subagent_type`).
    Literal {
        /// The input field compared.
        field: &'static str,
        /// The value pattern.
        value: String,
    },
}

/// A parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule as written.
    pub text: String,
    /// The tools it applies to.
    pub tool: ToolPattern,
    /// Its specifier.
    pub content: RuleContent,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The result of parsing one rule text.
#[derive(Clone, Debug)]
pub enum Parsed {
    /// A rule to apply, with an optional note for the user.
    Rule(Rule, Option<String>),
    /// A rule that is accepted but not applied (as in Claude Code), with the reason.
    Ignored(String),
}

/// Inputs that hold a tool's primary content; parameter rules on them are ignored
/// (claude-code.md §3.1): write a content rule instead.
const PRIMARY_PARAMS: &[&str] = &["command", "file_path", "path", "notebook_path", "url"];

/// The canonical name of a tool (`Task` is the old name of `Agent`).
pub(crate) fn canonical_tool(name: &str) -> &str {
    match name {
        "Task" => "Agent",
        other => other,
    }
}

/// Parses one rule from `list`: its syntax, then a tool-name glob or a whole MCP server, a
/// tool without a specifier, else the specifier by the tool's content grammar (Bash patterns,
/// paths, WebFetch domains, parameter rules, the one field of the other tools).
///
/// # Errors
/// A message saying what is wrong and how to write it instead.
pub fn parse_rule(text: &str, list: RuleList) -> Result<Parsed, String> {
    let trimmed = text.trim();
    let (name, content) = split_rule(trimmed)?;
    if let Some(parsed) = tool_pattern_rule(trimmed, name, content, list)? {
        return Ok(parsed);
    }
    let canonical = canonical_tool(name).to_owned();
    let Some(content) = content else {
        let tool = ToolPattern::Name(canonical);
        return Ok(Parsed::Rule(
            Rule {
                text: trimmed.to_owned(),
                tool,
                content: RuleContent::Any,
            },
            None,
        ));
    };
    RuleText {
        trimmed,
        list,
        param: param_of(content),
        tool: ToolPattern::Name(canonical.clone()),
        canonical,
    }
    .content_rule(content)
}

/// A rule's tool name and specifier (trimmed; `None` for none or `*`), checked for syntax.
fn split_rule(trimmed: &str) -> Result<(&str, Option<&str>), String> {
    if trimmed.is_empty() {
        return Err("empty rule; write `Tool` or `Tool(specifier)`".into());
    }
    let (name, content) = match trimmed.find('(') {
        Some(open) => {
            if !trimmed.ends_with(')') {
                return Err(format!(
                    "`{trimmed}`: unbalanced parentheses; a rule is `Tool` or `Tool(specifier)` ending with `)`"
                ));
            }
            (
                trimmed[..open].trim(),
                Some(&trimmed[open + 1..trimmed.len() - 1]),
            )
        }
        None => {
            if trimmed.contains(')') {
                return Err(format!("`{trimmed}`: `)` without `(`"));
            }
            (trimmed, None)
        }
    };
    if name.is_empty() {
        return Err(format!("`{trimmed}`: missing tool name before `(`"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*')))
    {
        return Err(format!(
            "`{trimmed}`: `{bad}` cannot appear in a tool name (letters, digits, `_`, `-`, `*`)"
        ));
    }
    let content = content.map(str::trim);
    if content == Some("") {
        return Err(format!(
            "`{trimmed}`: empty specifier; write `{name}` to match every call"
        ));
    }
    Ok((name, content.filter(|c| *c != "*")))
}

/// The rule when its tool is a pattern: a tool-name glob or a whole MCP server; `None` for a
/// rule on one tool.
fn tool_pattern_rule(
    trimmed: &str,
    name: &str,
    content: Option<&str>,
    list: RuleList,
) -> Result<Option<Parsed>, String> {
    let rule = |tool: ToolPattern| {
        Parsed::Rule(
            Rule {
                text: trimmed.to_owned(),
                tool,
                content: RuleContent::Any,
            },
            None,
        )
    };
    if name.contains('*') {
        if content.is_some() {
            return Err(format!(
                "`{trimmed}`: a tool-name glob cannot take a specifier"
            ));
        }
        if list == RuleList::Allow && !anchored_mcp_glob(name) {
            return Ok(Some(Parsed::Ignored(format!(
                "allow rule `{trimmed}` is ignored: allow rules may glob a tool name only after `mcp__<server>__`"
            ))));
        }
        return Ok(Some(rule(ToolPattern::Glob(name.to_owned()))));
    }
    if let Some(server) = name.strip_prefix("mcp__")
        && !server.is_empty()
        && !server.contains("__")
        && content.is_none()
    {
        return Ok(Some(rule(ToolPattern::McpServer(name.to_owned()))));
    }
    Ok(None)
}

/// `param:value`, when `param` is an identifier (whether the tool has it is the tool's
/// grammar's to say).
fn param_of(content: &str) -> Option<(String, String)> {
    content.split_once(':').and_then(|(p, v)| {
        let p = p.trim();
        let ident = !p.is_empty()
            && !p.starts_with(|c: char| c.is_ascii_digit())
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        ident.then(|| (p.to_owned(), v.trim().to_owned()))
    })
}

/// One rule with a specifier, read by its tool's content grammar.
struct RuleText<'a> {
    /// The rule as written, trimmed.
    trimmed: &'a str,
    list: RuleList,
    /// The tool's canonical name.
    canonical: String,
    tool: ToolPattern,
    /// The specifier as `param:value`, when it has that shape.
    param: Option<(String, String)>,
}

impl RuleText<'_> {
    fn rule(&self, content: RuleContent) -> Rule {
        Rule {
            text: self.trimmed.to_owned(),
            tool: self.tool.clone(),
            content,
        }
    }

    /// The specifier by the tool's grammar: Bash patterns, paths, WebFetch domains, or the one
    /// field of the other tools.
    fn content_rule(self, content: &str) -> Result<Parsed, String> {
        match self.canonical.as_str() {
            "Bash" => self.bash_rule(content),
            "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "Glob" => {
                self.path_rule(content)
            }
            "WebFetch" => self.web_fetch_rule(),
            _ => self.other_rule(content),
        }
    }

    /// A parameter rule (`Tool(param:value)`): deny and ask lists only, never on the tool's
    /// primary content.
    fn param_rule(&self, name: String, value: String) -> Result<Parsed, String> {
        let trimmed = self.trimmed;
        if PRIMARY_PARAMS.contains(&name.as_str()) {
            return Ok(Parsed::Ignored(format!(
                "rule `{trimmed}` is ignored: `{name}` is the tool's primary content; write `{}(...)` with a content pattern instead",
                self.canonical
            )));
        }
        if self.list == RuleList::Allow {
            return Ok(Parsed::Ignored(format!(
                "allow rule `{trimmed}` is ignored: parameter rules work in deny and ask lists only"
            )));
        }
        Ok(Parsed::Rule(
            self.rule(RuleContent::Param { name, value }),
            None,
        ))
    }

    fn bash_rule(&self, content: &str) -> Result<Parsed, String> {
        if let Some((p, v)) = self.param.clone().filter(|(p, _)| {
            matches!(
                p.as_str(),
                "command"
                    | "description"
                    | "timeout"
                    | "run_in_background"
                    | "dangerouslyDisableSandbox"
            )
        }) {
            return self.param_rule(p, v);
        }
        let pattern =
            BashPattern::parse(content).map_err(|e| format!("`{}`: {e}", self.trimmed))?;
        Ok(Parsed::Rule(self.rule(RuleContent::Bash(pattern)), None))
    }

    fn path_rule(&self, content: &str) -> Result<Parsed, String> {
        let trimmed = self.trimmed;
        let known: &[&str] = match self.canonical.as_str() {
            "Read" => &["offset", "limit", "pages", "file_path"],
            "Edit" | "MultiEdit" => &["replace_all", "file_path"],
            "Glob" => &["pattern", "path"],
            "NotebookEdit" => &["cell_id", "edit_mode", "notebook_path"],
            _ => &["file_path"],
        };
        if let Some((p, v)) = self
            .param
            .clone()
            .filter(|(p, _)| known.contains(&p.as_str()))
        {
            return self.param_rule(p, v);
        }
        let pattern = PathPattern::parse(content).map_err(|e| format!("`{trimmed}`: {e}"))?;
        let family = match self.canonical.as_str() {
            "Read" => PathFamily::Read,
            "Edit" => PathFamily::Edit,
            other => {
                if self.list == RuleList::Allow {
                    return Ok(Parsed::Ignored(format!(
                        "allow rule `{trimmed}` is ignored: path allow rules are written `Edit(...)` (for every editing tool) or `Read(...)`"
                    )));
                }
                let note = format!(
                    "`{trimmed}` applies to the {other} tool only; Claude Code ignores `{other}(path)` rules, write `Edit(...)` or `Read(...)` to cover every tool"
                );
                return Ok(Parsed::Rule(
                    self.rule(RuleContent::Path {
                        family: PathFamily::Only(other.to_owned()),
                        pattern,
                    }),
                    Some(note),
                ));
            }
        };
        Ok(Parsed::Rule(
            self.rule(RuleContent::Path { family, pattern }),
            None,
        ))
    }

    fn web_fetch_rule(&self) -> Result<Parsed, String> {
        match self.param.clone() {
            Some((p, v)) if p == "domain" => {
                let d = DomainPattern::parse(&v).map_err(|e| format!("`{}`: {e}", self.trimmed))?;
                Ok(Parsed::Rule(self.rule(RuleContent::Domain(d)), None))
            }
            Some((p, v)) => self.param_rule(p, v),
            None => Err(format!(
                "`{}`: WebFetch rules are written `WebFetch(domain:example.com)`",
                self.trimmed
            )),
        }
    }

    /// Any other tool: a parameter rule, the one field it matches literally, or (no such
    /// field) a rule on every call.
    fn other_rule(&self, content: &str) -> Result<Parsed, String> {
        let (trimmed, other) = (self.trimmed, self.canonical.as_str());
        if let Some((p, v)) = self.param.clone() {
            return self.param_rule(p, v);
        }
        let field = match other {
            "Agent" => Some("subagent_type"),
            "Skill" => Some("skill"),
            "WebSearch" => Some("query"),
            "PowerShell" => Some("command"),
            _ => None,
        };
        match field {
            Some(field) => Ok(Parsed::Rule(
                self.rule(RuleContent::Literal {
                    field,
                    value: content.to_owned(),
                }),
                None,
            )),
            None if self.list == RuleList::Allow => Ok(Parsed::Ignored(format!(
                "allow rule `{trimmed}` is ignored: `{other}` takes no specifier; write `{other}` or a parameter rule"
            ))),
            None => Ok(Parsed::Rule(
                self.rule(RuleContent::Any),
                Some(format!(
                    "`{trimmed}`: `{other}` takes no specifier, so this {} rule applies to every `{other}` call",
                    self.list.as_str()
                )),
            )),
        }
    }
}

/// `mcp__<server>__<glob>` with a literal server name.
fn anchored_mcp_glob(name: &str) -> bool {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(server, _)| !server.is_empty() && !server.contains('*'))
}

/// `*` matches any sequence; everything else is literal. Linear-time two-pointer match.
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, list: RuleList) -> Rule {
        match parse_rule(text, list).unwrap() {
            Parsed::Rule(r, _) => r,
            Parsed::Ignored(w) => panic!("{text} ignored: {w}"),
        }
    }

    fn ignored(text: &str, list: RuleList) -> String {
        match parse_rule(text, list).unwrap() {
            Parsed::Rule(..) => panic!("{text} should be ignored"),
            Parsed::Ignored(w) => w,
        }
    }

    #[test]
    fn forms() {
        assert!(matches!(
            ok("Bash", RuleList::Allow).content,
            RuleContent::Any
        ));
        assert!(matches!(
            ok("Bash(*)", RuleList::Allow).content,
            RuleContent::Any
        ));
        assert!(matches!(
            ok("Bash(git diff *)", RuleList::Allow).content,
            RuleContent::Bash(_)
        ));
        assert!(matches!(
            ok("Bash(ls:*)", RuleList::Allow).content,
            RuleContent::Bash(_)
        ));
        assert!(matches!(
            ok("Read(./src/**)", RuleList::Allow).content,
            RuleContent::Path {
                family: PathFamily::Read,
                ..
            }
        ));
        assert!(matches!(
            ok("Edit(//x/**)", RuleList::Allow).content,
            RuleContent::Path {
                family: PathFamily::Edit,
                ..
            }
        ));
        assert!(matches!(
            ok("WebFetch(domain:*.x.com)", RuleList::Allow).content,
            RuleContent::Domain(_)
        ));
        assert_eq!(
            ok("mcp__srv", RuleList::Allow).tool,
            ToolPattern::McpServer("mcp__srv".into())
        );
        assert_eq!(
            ok("mcp__srv__tool", RuleList::Allow).tool,
            ToolPattern::Name("mcp__srv__tool".into())
        );
        assert_eq!(
            ok("mcp__srv__get_*", RuleList::Allow).tool,
            ToolPattern::Glob("mcp__srv__get_*".into())
        );
        assert_eq!(ok("*", RuleList::Deny).tool, ToolPattern::Glob("*".into()));
        assert!(matches!(
            ok("Agent(model:opus)", RuleList::Deny).content,
            RuleContent::Param { .. }
        ));
        assert!(matches!(
            ok("Bash(run_in_background : true)", RuleList::Ask).content,
            RuleContent::Param { .. }
        ));
        assert!(matches!(
            ok("Agent(Explore)", RuleList::Deny).content,
            RuleContent::Literal {
                field: "subagent_type",
                ..
            }
        ));
        assert_eq!(
            ok("Task(Explore)", RuleList::Deny).tool,
            ToolPattern::Name("Agent".into())
        );
        assert!(matches!(
            ok("Write(.env)", RuleList::Deny).content,
            RuleContent::Path {
                family: PathFamily::Only(_),
                ..
            }
        ));
    }

    #[test]
    fn ignored_with_warning() {
        assert!(ignored("*", RuleList::Allow).contains("mcp__<server>__"));
        assert!(ignored("mcp__*", RuleList::Allow).contains("ignored"));
        assert!(ignored("Agent(model:opus)", RuleList::Allow).contains("deny and ask"));
        assert!(ignored("Bash(command:rm *)", RuleList::Deny).contains("primary content"));
        assert!(ignored("Write(src/**)", RuleList::Allow).contains("Edit(...)"));
        assert!(ignored("mcp__a__b(x)", RuleList::Allow).contains("no specifier"));
    }

    #[test]
    fn malformed() {
        for (text, want) in [
            ("", "empty rule"),
            ("Bash(rm", "unbalanced"),
            ("Bash)", "without `(`"),
            ("(rm)", "missing tool name"),
            ("Ba sh", "cannot appear"),
            ("Bash()", "empty specifier"),
            ("Read(src/[a)", "invalid glob"),
            ("WebFetch(example.com)", "domain:"),
            ("WebFetch(domain:a..b)", "empty label"),
            ("mcp__*(x)", "cannot take a specifier"),
        ] {
            let err = parse_rule(text, RuleList::Deny).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn tool_patterns() {
        assert!(ToolPattern::McpServer("mcp__gh".into()).matches("mcp__gh__issue"));
        assert!(!ToolPattern::McpServer("mcp__gh".into()).matches("mcp__ghx__issue"));
        assert!(ToolPattern::Glob("mcp__*".into()).matches("mcp__a__b"));
        assert!(!ToolPattern::Glob("mcp__gh__get_*".into()).matches("mcp__gh__put_x"));
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("a*c", "abbbc"));
        assert!(wildcard_match("*", ""));
        assert!(!wildcard_match("a*c", "abcd"));
        assert!(wildcard_match("*b*", "abc"));
        assert!(wildcard_match("opus", "opus"));
        assert!(!wildcard_match("opus", "opus4"));
    }
}
