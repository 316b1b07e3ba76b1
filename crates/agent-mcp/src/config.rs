//! The `mcpServers` object of Claude Code's `.mcp.json` (and of settings files): which MCP
//! servers to start and how to reach them.
//!
//! ```json
//! {"mcpServers": {
//!   "github": {"type": "http", "url": "https://api.example.com/mcp",
//!              "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
//!   "files":  {"command": "npx", "args": ["-y", "some-mcp-server", "${HOME}/docs"],
//!              "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"}}
//! }}
//! ```
//!
//! A server with a `command` is a stdio server (`"type": "stdio"`, the default); `"type": "http"`
//! is a streamable HTTP server. The legacy `"type": "sse"` transport is not supported (rmcp,
//! the MCP client this crate uses, has no client for it): such a server is left out with a hint
//! to use `"http"`. `${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`,
//! `cwd`, `url` and `headers`, as Claude Code does; a variable that is not set and has no
//! default is an error for that server. Every problem names the server and the field
//! (`mcpServers.github.url: must be an http(s) URL`).
//!
//! One bad server does not spoil the others: [`McpConfig::parse`] and
//! [`McpConfig::load_partial`] keep every server that is well formed and report each one left
//! out as a [`SkippedServer`], as Claude Code loads the rest with a warning.
//! [`McpConfig::from_json`] and [`McpConfig::load`] are the strict forms (the first problem is
//! the error).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Every configured MCP server, by name (sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// The servers, by name. Names match `[A-Za-z0-9_-]+`.
    pub servers: BTreeMap<String, ServerConfig>,
}

/// How to reach one MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerConfig {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio(StdioServer),
    /// A server speaking MCP's streamable HTTP transport.
    Http(HttpServer),
}

impl ServerConfig {
    /// The transport's name as written in `type`: `stdio` or `http`.
    pub fn transport(&self) -> &'static str {
        match self {
            Self::Stdio(_) => "stdio",
            Self::Http(_) => "http",
        }
    }
}

/// A stdio server: the command to start, with variables already expanded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StdioServer {
    /// The program (looked up on `PATH` when it has no slash).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to (or replacing in) the inherited environment.
    pub env: BTreeMap<String, String>,
    /// The working directory; `None` keeps the runtime's own. [`McpConfig::load`] makes a
    /// relative one relative to the directory of the file.
    pub cwd: Option<PathBuf>,
}

/// A streamable HTTP server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpServer {
    /// The endpoint, an `http://` or `https://` URL.
    pub url: String,
    /// Headers sent with every request (e.g. `Authorization`).
    pub headers: BTreeMap<String, String>,
}

/// Why an MCP configuration could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Occurs when the configuration file cannot be read.
    #[error("cannot read the MCP configuration {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Occurs when the configuration file is not JSON.
    #[error("the MCP configuration {} is not valid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// Occurs when a field has a wrong type or value; `field` is its JSON path, e.g.
    /// `mcpServers.github.url`.
    #[error("{}{field}: {message}", FileTag(file.as_deref()))]
    Invalid {
        /// The file the configuration came from, when there is one.
        file: Option<PathBuf>,
        /// The JSON path of the field.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// A server of the configuration that was left out, and why.
#[derive(Debug)]
pub struct SkippedServer {
    /// The server's name (the key under `mcpServers`).
    pub server: String,
    /// What is wrong with its entry, naming the file and the field, and how to fix it.
    pub error: ConfigError,
}

impl fmt::Display for SkippedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MCP server `{}` is skipped (the other servers start): {}",
            self.server, self.error
        )
    }
}

/// A configuration read leniently: the servers that can be used, and the ones left out.
#[derive(Debug, Default)]
pub struct PartialConfig {
    /// The well-formed servers.
    pub config: McpConfig,
    /// One entry per server left out, in name order.
    pub skipped: Vec<SkippedServer>,
}

impl ConfigError {
    /// The JSON path of the offending field, for [`ConfigError::Invalid`].
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }

    fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            file: None,
            field: field.into(),
            message: message.into(),
        }
    }

    fn in_file(self, path: &Path) -> Self {
        match self {
            Self::Invalid { field, message, .. } => Self::Invalid {
                file: Some(path.to_path_buf()),
                field,
                message,
            },
            other => other,
        }
    }
}

/// `"<file>: "` before an invalid field's path, when the configuration came from a file.
struct FileTag<'a>(Option<&'a Path>);

impl fmt::Display for FileTag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, "{}: ", path.display()),
            None => Ok(()),
        }
    }
}

impl McpConfig {
    /// Parses a JSON document holding an `mcpServers` object (a `.mcp.json` file or a settings
    /// file), expanding `${VAR}` from the process environment. A document without
    /// `mcpServers` is an empty configuration.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the first malformed field (see [`McpConfig::parse`] to
    /// keep the well-formed servers instead).
    pub fn from_json(value: &Value) -> Result<Self, ConfigError> {
        Self::from_json_with_env(value, |name| std::env::var(name).ok())
    }

    /// Like [`McpConfig::from_json`], with `env` answering variable lookups (for tests and for
    /// hosts that keep their own environment).
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the first malformed field.
    pub fn from_json_with_env(
        value: &Value,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        strict(Self::parse(value, None, env)?)
    }

    /// Parses the `mcpServers` of a JSON document leniently: every well-formed server is kept,
    /// and each malformed one is left out and reported in [`PartialConfig::skipped`] (with
    /// `file`, when given, named in its error). `env` answers variable lookups.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] only when the document itself is unusable: not an object, or
    /// an `mcpServers` that is not an object.
    pub fn parse(
        value: &Value,
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<PartialConfig, ConfigError> {
        let named = |e: ConfigError| match file {
            Some(path) => e.in_file(path),
            None => e,
        };
        let root = value
            .as_object()
            .ok_or_else(|| named(ConfigError::invalid("(root)", "must be a JSON object")))?;
        let Some(servers) = root.get("mcpServers") else {
            return Ok(PartialConfig::default());
        };
        let servers = servers.as_object().ok_or_else(|| {
            named(ConfigError::invalid(
                "mcpServers",
                "must be an object mapping server names to server configurations",
            ))
        })?;
        let mut out = PartialConfig::default();
        for (name, server) in servers {
            let path = format!("mcpServers.{name}");
            match check_name(name, &path).and_then(|()| parse_server(server, &path, &env)) {
                Ok(server) => {
                    out.config.servers.insert(name.clone(), server);
                }
                Err(error) => out.skipped.push(SkippedServer {
                    server: name.clone(),
                    error: named(error),
                }),
            }
        }
        Ok(out)
    }

    /// Reads and parses a `.mcp.json` file (see [`McpConfig::from_json`]). A relative `cwd` of a
    /// stdio server is taken relative to the file's directory.
    ///
    /// # Errors
    /// [`ConfigError::Read`], [`ConfigError::Json`], or [`ConfigError::Invalid`] with the file
    /// named.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        strict(Self::load_partial(path)?)
    }

    /// Reads and parses a `.mcp.json` file leniently (see [`McpConfig::parse`]): the servers
    /// that are well formed, and the ones left out. A relative `cwd` of a stdio server is taken
    /// relative to the file's directory.
    ///
    /// # Errors
    /// [`ConfigError::Read`], [`ConfigError::Json`], or [`ConfigError::Invalid`] when the file
    /// as a whole is unusable.
    pub fn load_partial(path: impl AsRef<Path>) -> Result<PartialConfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|source| ConfigError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        let mut partial = Self::parse(&value, Some(path), |name| std::env::var(name).ok())?;
        if let Some(dir) = path.parent() {
            for server in partial.config.servers.values_mut() {
                if let ServerConfig::Stdio(StdioServer { cwd: Some(cwd), .. }) = server
                    && cwd.is_relative()
                {
                    *cwd = dir.join(&*cwd);
                }
            }
        }
        Ok(partial)
    }

    /// Places every stdio server in a shadow workspace (`view`: the real folder and its
    /// shadow): a server without a `cwd` starts in `start` (the agent's working directory in
    /// the shadow), and a `cwd` or an argument naming the real folder or a path beneath it is
    /// moved onto the shadow, so a server given `.` or the project's path works on the
    /// shadow, never on the real folder.
    pub fn in_workspace(&mut self, view: &agent_core::view::PathView, start: &Path) {
        for server in self.servers.values_mut() {
            let ServerConfig::Stdio(stdio) = server else {
                continue;
            };
            stdio.cwd = Some(match stdio.cwd.take() {
                None => start.to_path_buf(),
                Some(cwd) => match cwd.to_str().and_then(|c| view.to_actual(c)) {
                    Some(moved) => PathBuf::from(moved),
                    None => cwd,
                },
            });
            for arg in &mut stdio.args {
                if let Some(moved) = view.to_actual(arg) {
                    *arg = moved;
                }
            }
        }
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

/// The strict reading of a partial configuration: the first server left out is the error.
fn strict(partial: PartialConfig) -> Result<McpConfig, ConfigError> {
    match partial.skipped.into_iter().next() {
        Some(skipped) => Err(skipped.error),
        None => Ok(partial.config),
    }
}

/// Server names become part of tool names (`mcp__NAME__tool`), so they are restricted to
/// `[A-Za-z0-9_-]+`.
fn check_name(name: &str, path: &str) -> Result<(), ConfigError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(ConfigError::invalid(
            path,
            format!(
                "the server name {name:?} may contain only letters, digits, `_` and `-` \
                 (it becomes part of the tool names mcp__<server>__<tool>); rename the server"
            ),
        ));
    }
    Ok(())
}

fn parse_server(
    value: &Value,
    path: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<ServerConfig, ConfigError> {
    let obj = value
        .as_object()
        .ok_or_else(|| ConfigError::invalid(path, "must be an object"))?;
    let kind = match obj.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => {
            return Err(ConfigError::invalid(
                format!("{path}.type"),
                "must be a string: \"stdio\" or \"http\"",
            ));
        }
    };
    match kind {
        Some("stdio") => parse_stdio(obj, path, env).map(ServerConfig::Stdio),
        None if obj.contains_key("command") => parse_stdio(obj, path, env).map(ServerConfig::Stdio),
        Some("http") => parse_http(obj, path, env).map(ServerConfig::Http),
        Some("sse") => Err(ConfigError::invalid(
            format!("{path}.type"),
            "\"sse\" (the legacy HTTP+SSE transport) is not supported by this runtime's MCP \
             client; if the server also speaks streamable HTTP (most do, often at path /mcp \
             instead of /sse), write \"type\": \"http\" with that URL",
        )),
        Some(other) => Err(ConfigError::invalid(
            format!("{path}.type"),
            format!(
                "unknown transport {other:?}; expected \"stdio\" (with \"command\") or \"http\" (with \"url\")"
            ),
        )),
        None if obj.contains_key("url") => Err(ConfigError::invalid(
            format!("{path}.type"),
            "is missing: a server with a \"url\" needs \"type\": \"http\"",
        )),
        None => Err(ConfigError::invalid(
            path,
            "has neither \"command\" (a stdio server) nor \"type\": \"http\" with \"url\"",
        )),
    }
}

fn parse_stdio(
    obj: &Map<String, Value>,
    path: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<StdioServer, ConfigError> {
    let field = format!("{path}.command");
    let command = match obj.get("command") {
        Some(Value::String(c)) => expand(c, &field, env)?,
        Some(_) => return Err(ConfigError::invalid(field, "must be a string")),
        None => {
            return Err(ConfigError::invalid(
                field,
                "is missing: a stdio server needs the program to start",
            ));
        }
    };
    if command.trim().is_empty() {
        return Err(ConfigError::invalid(
            format!("{path}.command"),
            "is empty: give the program to start",
        ));
    }
    let args = match obj.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = format!("{path}.args[{i}]");
                match item {
                    Value::String(s) => expand(s, &field, env),
                    _ => Err(ConfigError::invalid(field, "must be a string")),
                }
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ConfigError::invalid(
                format!("{path}.args"),
                "must be an array of strings",
            ));
        }
    };
    let env_vars = string_map(obj.get("env"), &format!("{path}.env"), env)?;
    let cwd = match obj.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(PathBuf::from(expand(c, &format!("{path}.cwd"), env)?)),
        Some(_) => {
            return Err(ConfigError::invalid(
                format!("{path}.cwd"),
                "must be a string (a directory)",
            ));
        }
    };
    Ok(StdioServer {
        command,
        args,
        env: env_vars,
        cwd,
    })
}

fn parse_http(
    obj: &Map<String, Value>,
    path: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<HttpServer, ConfigError> {
    let field = format!("{path}.url");
    let url = match obj.get("url") {
        Some(Value::String(u)) => expand(u, &field, env)?,
        Some(_) => return Err(ConfigError::invalid(field, "must be a string")),
        None => {
            return Err(ConfigError::invalid(
                field,
                "is missing: an http server needs its endpoint URL",
            ));
        }
    };
    if !is_http_url(&url) {
        return Err(ConfigError::invalid(
            field,
            format!("must be an http(s) URL, got {url:?}"),
        ));
    }
    let headers = string_map(obj.get("headers"), &format!("{path}.headers"), env)?;
    for name in headers.keys() {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return Err(ConfigError::invalid(
                format!("{path}.headers.{name}"),
                "is not a valid HTTP header name",
            ));
        }
    }
    for (name, value) in &headers {
        if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(ConfigError::invalid(
                format!("{path}.headers.{name}"),
                "must not contain line breaks or NUL",
            ));
        }
    }
    Ok(HttpServer { url, headers })
}

/// `http://host...` or `https://host...` with a non-empty host.
fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(rest) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            !host.is_empty() && !host.contains(char::is_whitespace)
        }
        None => false,
    }
}

fn string_map(
    value: Option<&Value>,
    path: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, ConfigError> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                let field = format!("{path}.{k}");
                match v {
                    Value::String(s) => Ok((k.clone(), expand(s, &field, env)?)),
                    _ => Err(ConfigError::invalid(field, "must be a string")),
                }
            })
            .collect(),
        Some(_) => Err(ConfigError::invalid(
            path,
            "must be an object of string values",
        )),
    }
}

/// Expands `${VAR}` and `${VAR:-default}` as Claude Code does: the text between `${` and the
/// next `}` is the variable, optionally followed by `:-` and a default. `$VAR` without braces
/// and a `${` without a closing brace are left as written.
///
/// # Errors
/// [`ConfigError::Invalid`] for `field` when a variable is not set and has no default.
pub fn expand(
    text: &str,
    field: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        out.push_str(&rest[..start]);
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (env(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(ConfigError::invalid(
                    field,
                    format!(
                        "the environment variable {name} is not set; set it, or write \
                         ${{{name}:-default}} to give a default"
                    ),
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expansion() {
        let f = "f";
        assert_eq!(expand("${HOME}/x", f, &env).unwrap(), "/home/me/x");
        assert_eq!(expand("a${NOPE:-b}c", f, &env).unwrap(), "abc");
        assert_eq!(expand("${NOPE:-}", f, &env).unwrap(), "");
        assert_eq!(expand("${EMPTY:-d}", f, &env).unwrap(), "");
        assert_eq!(expand("$HOME ${HOME", f, &env).unwrap(), "$HOME ${HOME");
        assert_eq!(
            expand("${HOME}${HOME}", f, &env).unwrap(),
            "/home/me/home/me"
        );
        assert_eq!(expand("${X:-a:-b}", f, &env).unwrap(), "a:-b");
        let err = expand("${NOPE}", "mcpServers.a.args[0]", &env).unwrap_err();
        assert_eq!(err.field(), Some("mcpServers.a.args[0]"));
        assert!(err.to_string().contains("NOPE is not set"), "{err}");
    }

    #[test]
    fn urls() {
        assert!(is_http_url("http://127.0.0.1:8080/mcp"));
        assert!(is_http_url("HTTPS://example.com"));
        assert!(!is_http_url("ftp://example.com"));
        assert!(!is_http_url("https://"));
        assert!(!is_http_url("example.com/mcp"));
    }
}
