//! `Grep`: a regular expression over the workspace's files (gitignore-aware, binary files
//! skipped), in ripgrep's output shapes: `files_with_matches` (default, newest first),
//! `content` (`path:line:text`, context lines `path-line-text`, `--` between groups) or
//! `count` (`path:N`).
//!
//! It searches as ripgrep does, with ripgrep's own crates: the workspace's walk
//! ([`walker`](agent_workspace::filter::walker)) run in parallel (`ignore`'s parallel walker,
//! one thread per CPU), each file opened through the sandbox's capability handle for the
//! search's directory ([`ReadTree`]) and read incrementally by `grep-searcher` with a
//! `grep-regex` matcher: lines are found only around matches, a `files_with_matches` search
//! of a file stops at its first match, and a file is binary (skipped) when a NUL byte comes
//! before its first match. Results are then ordered newest first, as before.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_sandbox::caps::{OutputCaps, cut_line};
use agent_sandbox::paths::ReadTree;
use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use serde_json::{Value, json};

use super::files::{Confined, fs_error};
use super::input::{object, opt_bool, opt_str, opt_usize, str_field};
use super::search::base;
use agent_workspace::filter::walker;

/// The `Grep` tool.
#[derive(Clone, Debug, Default)]
pub struct Grep {
    caps: OutputCaps,
}

/// Output lines at most, unless `head_limit` says otherwise.
const DEFAULT_LINES: usize = 250;

/// What a search reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The paths of files with a match.
    Files,
    /// Matching lines (and context lines).
    Content,
    /// Matches per file.
    Count,
}

impl Mode {
    fn parse(mode: &str) -> Result<Self, ToolError> {
        match mode {
            "files_with_matches" => Ok(Self::Files),
            "content" => Ok(Self::Content),
            "count" => Ok(Self::Count),
            other => Err(ToolError::invalid_input(format!(
                "`output_mode` must be content, files_with_matches or count, got {other}"
            ))),
        }
    }
}

/// One search's settings, shared by the walker's threads.
struct Query {
    matcher: RegexMatcher,
    mode: Mode,
    multiline: bool,
    before: usize,
    after: usize,
    numbers: bool,
    line_chars: usize,
    filter: Option<GlobMatcher>,
}

/// What one file yielded.
struct Found {
    path: PathBuf,
    mtime: SystemTime,
    /// Matches (count mode).
    count: usize,
    /// Output lines (content mode).
    lines: Vec<String>,
}

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
        let (query, limit) = self.query(&input)?;
        let fs = Confined::for_call(ctx)?;
        let base = base(&fs, opt_str(&input, "path")?)?;
        let mut found = if base.is_file() {
            let file = fs.open(&base)?;
            search_one(&query, &mut query.searcher(), &base, &file)
                .into_iter()
                .collect()
        } else {
            let tree = fs
                .sandbox()
                .read_tree(&base)
                .map_err(|e| fs_error(&base, e))?;
            search_tree(&query, &tree)
        };
        found.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
        Ok(ToolOutput::text(report(&query, &found, limit)))
    }
}

impl Grep {
    /// The search the input asks for, and its output line limit.
    fn query(&self, input: &Value) -> Result<(Query, usize), ToolError> {
        object(input)?;
        let pattern = str_field(input, "pattern")?;
        let mode = Mode::parse(opt_str(input, "output_mode")?.unwrap_or("files_with_matches"))?;
        let multiline = opt_bool(input, "multiline")?;
        let mut builder = RegexMatcherBuilder::new();
        builder
            .case_insensitive(opt_bool(input, "-i")?)
            .multi_line(true)
            .dot_matches_new_line(multiline)
            .size_limit(1 << 24)
            .ban_byte(Some(0));
        if !multiline {
            // Line by line: a match never spans lines (`multiline: true` lets it).
            builder.line_terminator(Some(b'\n'));
        }
        let matcher = builder.build(pattern).map_err(|e| {
            ToolError::invalid_input(format!(
                "`pattern` is not a valid regex: {e}{}",
                if multiline {
                    ""
                } else {
                    " (to match across lines, set `multiline: true`)"
                }
            ))
        })?;
        let numbers = match input.get("-n") {
            Some(Value::Bool(b)) => *b,
            _ => true,
        };
        let ctx_all = opt_usize(input, "-C")?;
        let filter = match opt_str(input, "glob")? {
            Some(g) => Some(
                GlobBuilder::new(g)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| ToolError::invalid_input(format!("`glob` is not valid: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let query = Query {
            matcher,
            mode,
            multiline,
            before: opt_usize(input, "-B")?.or(ctx_all).unwrap_or(0),
            after: opt_usize(input, "-A")?.or(ctx_all).unwrap_or(0),
            numbers,
            line_chars: self.caps.line_chars,
            filter,
        };
        let limit = opt_usize(input, "head_limit")?.unwrap_or(DEFAULT_LINES);
        Ok((query, limit))
    }
}

impl Query {
    /// A searcher for one thread.
    fn searcher(&self) -> Searcher {
        let context = self.mode == Mode::Content;
        SearcherBuilder::new()
            // Lines are counted only where they are shown.
            .line_number(context)
            .multi_line(self.multiline)
            .before_context(if context { self.before } else { 0 })
            .after_context(if context { self.after } else { 0 })
            .binary_detection(BinaryDetection::quit(0))
            .build()
    }

    /// Whether the glob filter (when given) keeps the file at `rel` (its path or its name).
    fn keeps(&self, rel: &Path) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|g| g.is_match(rel) || rel.file_name().is_some_and(|n| g.is_match(n)))
    }
}

/// Every file beneath the tree, searched by the parallel walker's threads.
fn search_tree(query: &Query, tree: &ReadTree<'_>) -> Vec<Found> {
    let found = Mutex::new(Vec::new());
    let base = tree.path();
    walker(base).build_parallel().run(|| {
        let mut searcher = query.searcher();
        let found = &found;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Ok(rel) = entry.path().strip_prefix(base) else {
                return WalkState::Continue;
            };
            if !query.keeps(rel) {
                return WalkState::Continue;
            }
            // A file that cannot be opened (removed meanwhile, denied) is not searched.
            let Ok(file) = tree.open(rel) else {
                return WalkState::Continue;
            };
            if let Some(hit) = search_one(query, &mut searcher, entry.path(), &file)
                && let Ok(mut all) = found.lock()
            {
                all.push(hit);
            }
            WalkState::Continue
        })
    });
    found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One file's matches, `None` when it has none or is binary.
fn search_one(
    query: &Query,
    searcher: &mut Searcher,
    path: &Path,
    file: &std::fs::File,
) -> Option<Found> {
    let mut sink = Collect {
        query,
        path,
        count: 0,
        lines: Vec::new(),
        binary: false,
    };
    searcher.search_file(&query.matcher, file, &mut sink).ok()?;
    if sink.binary || sink.count == 0 {
        return None;
    }
    let mtime = file
        .metadata()
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Some(Found {
        path: path.to_path_buf(),
        mtime,
        count: sink.count,
        lines: sink.lines,
    })
}

/// The sink of one file's search: counts matches and, in content mode, formats lines.
struct Collect<'q> {
    query: &'q Query,
    path: &'q Path,
    count: usize,
    lines: Vec<String>,
    binary: bool,
}

impl Collect<'_> {
    /// One output line: `path:N:text` for a match, `path-N-text` for context (`-n: false`
    /// leaves the number out).
    fn push(&mut self, sep: char, number: Option<u64>, line: &[u8]) {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(line);
        let (text, _) = cut_line(&text, self.query.line_chars);
        let path = self.path.display();
        self.lines.push(match number {
            Some(n) if self.query.numbers => format!("{path}{sep}{n}{sep}{text}"),
            _ => format!("{path}{sep}{text}"),
        });
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        match self.query.mode {
            Mode::Files => {
                self.count += 1;
                // One match is enough to list the file.
                return Ok(false);
            }
            Mode::Count => {
                let mut n = 0usize;
                self.query
                    .matcher
                    .find_iter(mat.bytes(), |_| {
                        n += 1;
                        true
                    })
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                self.count += n.max(1);
            }
            Mode::Content => {
                self.count += 1;
                let first = mat.line_number();
                for (i, line) in mat.lines().enumerate() {
                    self.push(':', first.map(|n| n + i as u64), line);
                }
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push('-', ctx.line_number(), ctx.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.lines.push("--".into());
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        // Binary files are skipped, like ripgrep's default.
        self.binary = true;
        Ok(false)
    }
}

/// The tool's text: the files newest first, cut at `limit` output lines.
fn report(query: &Query, found: &[Found], limit: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    for hit in found {
        if out.len() >= limit {
            break;
        }
        let path = hit.path.display();
        match query.mode {
            Mode::Files => out.push(path.to_string()),
            Mode::Count => out.push(format!("{path}:{}", hit.count)),
            Mode::Content => {
                let room = limit - out.len();
                out.extend(hit.lines.iter().take(room).cloned());
            }
        }
    }
    if out.is_empty() {
        return "No matches found".into();
    }
    let truncated = out.len() >= limit;
    let mut text = out.join("\n");
    if truncated {
        text.push_str(&format!(
            "\n… (output cut at {limit} lines; narrow the search or raise head_limit)"
        ));
    }
    if query.mode == Mode::Files {
        text = format!("Found {} file(s)\n{text}", found.len());
    }
    text
}
