//! `Grep`: a regular expression over the workspace's files (gitignore-aware, binary files
//! skipped), in ripgrep's output shapes: `files_with_matches` (default, newest first),
//! `content` (`path:line:text`, context lines `path-line-text`, `--` between groups) or
//! `count` (`path:N`).

use std::collections::BTreeSet;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_sandbox::caps::{OutputCaps, cut_line};
use globset::GlobBuilder;
use regex::RegexBuilder;
use serde_json::{Value, json};

use super::files::Confined;
use super::input::{object, opt_bool, opt_str, opt_usize, str_field};
use super::search::{base, by_mtime, files};

/// The `Grep` tool.
#[derive(Clone, Debug, Default)]
pub struct Grep {
    caps: OutputCaps,
}

/// Output lines at most, unless `head_limit` says otherwise.
const DEFAULT_LINES: usize = 250;

#[async_trait::async_trait]
impl Tool for Grep {
    fn name(&self) -> &str {
        "Grep"
    }

    fn description(&self) -> &str {
        "Searches file contents with a regular expression (Rust regex syntax, like ripgrep). \
         output_mode: files_with_matches (default), content (with -n, -A, -B, -C), or count. \
         Filter files with `glob`; `-i` ignores case; `multiline` lets a match span lines."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "A file or directory (default: the workspace root)"},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs"},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
                "-i": {"type": "boolean"},
                "-n": {"type": "boolean", "description": "Line numbers in content mode (default true)"},
                "-A": {"type": "integer", "minimum": 0},
                "-B": {"type": "integer", "minimum": 0},
                "-C": {"type": "integer", "minimum": 0},
                "multiline": {"type": "boolean"},
                "head_limit": {"type": "integer", "minimum": 1}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let pattern = str_field(&input, "pattern")?;
        let mode = opt_str(&input, "output_mode")?.unwrap_or("files_with_matches");
        if !matches!(mode, "content" | "files_with_matches" | "count") {
            return Err(ToolError::invalid_input(format!(
                "`output_mode` must be content, files_with_matches or count, got {mode}"
            )));
        }
        let multiline = opt_bool(&input, "multiline")?;
        let re = RegexBuilder::new(pattern)
            .case_insensitive(opt_bool(&input, "-i")?)
            .multi_line(true)
            .dot_matches_new_line(multiline)
            .size_limit(1 << 24)
            .build()
            .map_err(|e| {
                ToolError::invalid_input(format!("`pattern` is not a valid regex: {e}"))
            })?;
        let numbers = match input.get("-n") {
            Some(Value::Bool(b)) => *b,
            _ => true,
        };
        let ctx_all = opt_usize(&input, "-C")?;
        let after = opt_usize(&input, "-A")?.or(ctx_all).unwrap_or(0);
        let before = opt_usize(&input, "-B")?.or(ctx_all).unwrap_or(0);
        let limit = opt_usize(&input, "head_limit")?.unwrap_or(DEFAULT_LINES);
        let filter = match opt_str(&input, "glob")? {
            Some(g) => Some(
                GlobBuilder::new(g)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| ToolError::invalid_input(format!("`glob` is not valid: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let fs = Confined::for_call(ctx)?;
        let base = base(&fs, opt_str(&input, "path")?)?;
        let mut hits = if base.is_file() {
            let name = base
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mtime = std::fs::metadata(&base)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            vec![super::search::Hit {
                path: base,
                rel: name,
                mtime,
            }]
        } else {
            files(&base)
        };
        if let Some(g) = &filter {
            hits.retain(|h| {
                g.is_match(&h.rel)
                    || std::path::Path::new(&h.rel)
                        .file_name()
                        .is_some_and(|n| g.is_match(n))
            });
        }
        by_mtime(&mut hits);
        let mut out: Vec<String> = Vec::new();
        let mut matched_files = 0usize;
        for hit in &hits {
            if out.len() >= limit {
                break;
            }
            let Ok(bytes) = fs.read(&hit.path) else {
                continue;
            };
            if bytes.iter().take(8192).any(|&b| b == 0) {
                continue;
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let path = hit.path.display().to_string();
            // Lines (0-based) a match starts on, and every line it covers.
            let starts: Vec<usize> = line_starts(&text);
            let mut matched: BTreeSet<usize> = BTreeSet::new();
            let mut count = 0usize;
            for m in re.find_iter(&text) {
                if m.as_str().is_empty() && !multiline && text.is_empty() {
                    continue;
                }
                count += 1;
                let first = line_of(&starts, m.start());
                let last = line_of(&starts, m.end().saturating_sub(1).max(m.start()));
                matched.extend(first..=last);
            }
            if count == 0 {
                continue;
            }
            matched_files += 1;
            match mode {
                "files_with_matches" => out.push(path),
                "count" => out.push(format!("{path}:{count}")),
                _ => {
                    let lines: Vec<&str> = text.lines().collect();
                    let mut shown: BTreeSet<usize> = BTreeSet::new();
                    for &l in &matched {
                        let from = l.saturating_sub(before);
                        let to = (l + after).min(lines.len().saturating_sub(1));
                        shown.extend(from..=to);
                    }
                    let mut prev: Option<usize> = None;
                    for l in shown {
                        if out.len() >= limit {
                            break;
                        }
                        if prev.is_some_and(|p| l > p + 1) {
                            out.push("--".into());
                        }
                        let sep = if matched.contains(&l) { ':' } else { '-' };
                        let (line, _) =
                            cut_line(lines.get(l).copied().unwrap_or(""), self.caps.line_chars);
                        if numbers {
                            out.push(format!("{path}{sep}{}{sep}{line}", l + 1));
                        } else {
                            out.push(format!("{path}{sep}{line}"));
                        }
                        prev = Some(l);
                    }
                }
            }
        }
        if out.is_empty() {
            return Ok(ToolOutput::text("No matches found"));
        }
        let truncated = out.len() >= limit;
        let mut text = out.join("\n");
        if truncated {
            text.push_str(&format!(
                "\n… (output cut at {limit} lines; narrow the search or raise head_limit)"
            ));
        }
        if mode == "files_with_matches" {
            text = format!("Found {matched_files} file(s)\n{text}");
        }
        Ok(ToolOutput::text(text))
    }
}

/// Byte offsets where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    v
}

/// The 0-based line holding byte `at`.
fn line_of(starts: &[usize], at: usize) -> usize {
    match starts.binary_search(&at) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    }
}
