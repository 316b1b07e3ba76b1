//! One connected MCP server: the connection (a child process on stdio, or streamable HTTP), its
//! tool list, `tools/call`, and shutdown.
//!
//! A stdio server's process is spawned with `kill_on_drop`, in a process group of its own and
//! under agent-core's containment runner (see [`crate::processes`]), so neither it nor what it
//! started can outlive the [`McpServer`] (and so the runtime): [`McpServer::shutdown`] closes
//! its stdin and waits for it to exit (then SIGTERM, then SIGKILL, as the MCP specification's
//! stdio shutdown says), then ends what is left of its processes (SIGTERM, a short grace,
//! SIGKILL); dropping the server without a shutdown does the same in the background.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::process::ProcessTree;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, ProtocolVersion, Tool as RmcpTool,
};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use crate::config::{HttpServer, ServerConfig, StdioServer};
use crate::failure;
use crate::processes::ServerProcesses;

/// How many of a stdio server's last stderr lines are kept for error messages.
const STDERR_TAIL_LINES: usize = 20;
/// How long [`McpServer::shutdown`] waits for the connection to close (rmcp's stdio shutdown
/// waits up to 3 s for the exit after closing stdin and 3 s more after SIGTERM).
const SHUTDOWN_WAIT: Duration = Duration::from_secs(8);
/// Headers the streamable HTTP transport sets itself (rmcp refuses them as custom headers).
const RESERVED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id"];

/// Why a server could not be reached or a request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// Occurs when a stdio server's program cannot be started.
    #[error(
        "cannot start `{command}`: {source}; check mcpServers.{server}.command (is the program installed and on PATH?)"
    )]
    Spawn {
        /// The server's name.
        server: String,
        /// The program.
        command: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Occurs when an HTTP header of the configuration cannot be sent.
    #[error("header `{header}` of mcpServers.{server}.headers cannot be sent: {message}")]
    Header {
        /// The server's name.
        server: String,
        /// The header's name.
        header: String,
        /// Why.
        message: String,
    },
    /// Occurs when the MCP handshake (`initialize`) fails.
    #[error("the initialize handshake failed: {message}{}", StderrTail(stderr))]
    Initialize {
        /// The server's name.
        server: String,
        /// What failed (connection refused, an HTTP status, a response that is not MCP) and
        /// what to check.
        message: String,
        /// The server's last stderr lines (stdio servers).
        stderr: Vec<String>,
    },
    /// Occurs when a request to a connected server fails (transport closed, JSON-RPC error).
    #[error("{method} failed: {message}{}", StderrTail(stderr))]
    Request {
        /// The server's name.
        server: String,
        /// The MCP method, e.g. `tools/list` or `tools/call mcp__demo__echo`.
        method: String,
        /// What failed and what to check.
        message: String,
        /// rmcp's error.
        #[source]
        source: ServiceError,
        /// The server's last stderr lines (stdio servers).
        stderr: Vec<String>,
    },
}

/// `"; its stderr ended with: ..."` when there is stderr to show.
struct StderrTail<'a>(&'a [String]);

impl std::fmt::Display for StderrTail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<&str> = self
            .0
            .iter()
            .rev()
            .take(5)
            .rev()
            .map(String::as_str)
            .collect();
        if lines.is_empty() {
            Ok(())
        } else {
            write!(f, "; its stderr ended with: {}", lines.join(" | "))
        }
    }
}

/// A tool as a server lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerTool {
    /// The server's own name for it (what `tools/call` needs).
    pub name: String,
    /// Its description, empty when the server gave none.
    pub description: String,
    /// The JSON schema of its input object.
    pub input_schema: serde_json::Value,
    /// `annotations.readOnlyHint` (a hint from the server, not a guarantee).
    pub read_only_hint: bool,
    /// `_meta["anthropic/requiresUserInteraction"]`: the tool needs a person to answer.
    pub requires_user_interaction: bool,
}

impl ServerTool {
    fn from_rmcp(tool: &RmcpTool) -> Self {
        let meta = serde_json::to_value(&tool.meta).unwrap_or_default();
        Self {
            name: tool.name.to_string(),
            description: tool
                .description
                .as_deref()
                .map(str::to_owned)
                .unwrap_or_default(),
            input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
            read_only_hint: tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false),
            requires_user_interaction: meta
                .get("anthropic/requiresUserInteraction")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }
}

type Service = RunningService<RoleClient, ClientConfig>;

/// A connected MCP server.
pub struct McpServer {
    name: String,
    transport: &'static str,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<Service>>,
    pid: Option<u32>,
    /// An http server's endpoint (for error messages).
    url: Option<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// A stdio server's processes, contained by the runtime's one runner (agent-core's
    /// `ProcessTree`): whatever the server started (`npx`'s grandchildren) ends with it.
    processes: ServerProcesses,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// What this runtime tells servers about itself: no client capabilities (no sampling, roots or
/// elicitation), and the newest protocol version that still has the `initialize` handshake.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("agent-mcp", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

impl McpServer {
    /// Starts (stdio) or reaches (http) the server `name` and runs the `initialize` handshake.
    /// No timeout is applied here; [`crate::McpServers::start`] bounds it.
    ///
    /// # Errors
    /// [`McpError::Spawn`], [`McpError::Header`] or [`McpError::Initialize`].
    pub async fn connect(name: &str, config: &ServerConfig) -> Result<Self, McpError> {
        match config {
            ServerConfig::Stdio(stdio) => Self::connect_stdio(name, stdio).await,
            ServerConfig::Http(http) => Self::connect_http(name, http).await,
        }
    }

    async fn connect_stdio(name: &str, config: &StdioServer) -> Result<Self, McpError> {
        let mut command = tokio::process::Command::new(&config.command);
        command.args(&config.args).envs(&config.env);
        if let Some(cwd) = &config.cwd {
            command.current_dir(cwd);
        }
        // The process must not outlive its transport: rmcp ends it on close, and this ends it
        // when the transport is dropped without a close (a cancelled start, a runtime that shuts
        // down first).
        command.kill_on_drop(true);
        // A process group of its own: a Ctrl-C at the terminal goes to the runtime, which
        // ends the server itself (and `npx` and the server it starts are one group).
        #[cfg(unix)]
        command.process_group(0);
        let mut tree = ProcessTree::begin();
        if let Some((var, value)) = tree.marker() {
            command.env(var, value);
        }
        let (child, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| McpError::Spawn {
                server: name.to_owned(),
                command: config.command.clone(),
                source,
            })?;
        let pid = child.id();
        tree.started(pid);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = stderr {
            tokio::spawn(forward_stderr(name.to_owned(), stderr, tail.clone()));
        }
        let service = match client_config().serve(child).await {
            Ok(service) => service,
            Err(e) => {
                // Give the stderr reader a moment to collect the server's last words.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(McpError::Initialize {
                    server: name.to_owned(),
                    message: failure::initialize(&e, None),
                    stderr: snapshot(&tail),
                });
            }
        };
        let mut server = Self::new(name, "stdio", service, pid, tail);
        server.processes = ServerProcesses::new(tree);
        Ok(server)
    }

    async fn connect_http(name: &str, config: &HttpServer) -> Result<Self, McpError> {
        let mut headers = std::collections::HashMap::new();
        for (key, value) in &config.headers {
            let header_error = |message: String| McpError::Header {
                server: name.to_owned(),
                header: key.clone(),
                message,
            };
            if RESERVED_HEADERS.iter().any(|r| key.eq_ignore_ascii_case(r)) {
                return Err(header_error(format!(
                    "the MCP transport sets it itself; remove it from mcpServers.{name}.headers"
                )));
            }
            let header_name =
                HeaderName::from_bytes(key.as_bytes()).map_err(|e| header_error(e.to_string()))?;
            let header_value =
                HeaderValue::from_str(value).map_err(|e| header_error(e.to_string()))?;
            headers.insert(header_name, header_value);
        }
        let transport_config = StreamableHttpClientTransportConfig::with_uri(config.url.as_str())
            .custom_headers(headers);
        let transport = StreamableHttpClientTransport::from_config(transport_config);
        let service = client_config()
            .serve(transport)
            .await
            .map_err(|e| McpError::Initialize {
                server: name.to_owned(),
                message: failure::initialize(&e, Some(&config.url)),
                stderr: Vec::new(),
            })?;
        let mut server = Self::new(name, "http", service, None, Arc::default());
        server.url = Some(config.url.clone());
        Ok(server)
    }

    fn new(
        name: &str,
        transport: &'static str,
        service: Service,
        pid: Option<u32>,
        stderr: Arc<Mutex<VecDeque<String>>>,
    ) -> Self {
        if let Some(info) = service.peer_info() {
            let server = info.server_info.as_ref();
            tracing::debug!(
                server = name,
                transport,
                protocol = %info.protocol_version,
                implementation = server.map(|s| s.name.as_str()).unwrap_or(""),
                version = server.map(|s| s.version.as_str()).unwrap_or(""),
                "MCP server connected"
            );
        }
        Self {
            name: name.to_owned(),
            transport,
            peer: service.peer().clone(),
            service: tokio::sync::Mutex::new(Some(service)),
            pid,
            url: None,
            stderr,
            processes: ServerProcesses::default(),
        }
    }

    /// The server's name from the configuration.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `stdio` or `http`.
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// The process id of a stdio server (`None` for http servers).
    pub fn process_id(&self) -> Option<u32> {
        self.pid
    }

    /// The server's last stderr lines (stdio servers), oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        snapshot(&self.stderr)
    }

    /// Lists every tool (`tools/list`, following `nextCursor` to the last page).
    ///
    /// # Errors
    /// [`McpError::Request`] when the request fails.
    pub async fn list_tools(&self) -> Result<Vec<ServerTool>, McpError> {
        let tools = self
            .peer
            .list_all_tools()
            .await
            .map_err(|source| self.request_error("tools/list", source))?;
        Ok(tools.iter().map(ServerTool::from_rmcp).collect())
    }

    /// Runs `tools/call`. No timeout is applied here ([`crate::McpTool`] applies the call
    /// timeout); dropping the future sends `notifications/cancelled` to the server.
    ///
    /// # Errors
    /// [`McpError::Request`] when the request fails (a tool's own failure is a result with
    /// `is_error`).
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.peer
            .call_tool(params)
            .await
            .map_err(|source| self.request_error(&format!("tools/call `{tool}`"), source))
    }

    /// Whether the connection is closed (the process exited or the service stopped).
    pub fn is_closed(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// Closes the connection and, for a stdio server, ends its process: stdin is closed, then
    /// SIGTERM and SIGKILL follow if it does not exit (at most about 6 s). Idempotent.
    pub async fn shutdown(&self) {
        let service = self.service.lock().await.take();
        if let Some(mut service) = service {
            match service.close_with_timeout(SHUTDOWN_WAIT).await {
                Ok(Some(reason)) => {
                    tracing::debug!(server = %self.name, ?reason, "MCP server closed");
                }
                Ok(None) => tracing::warn!(
                    server = %self.name,
                    "MCP server did not close in time; its process is killed when dropped"
                ),
                Err(e) => tracing::warn!(server = %self.name, error = %e, "MCP server task failed"),
            }
        }
        // Whatever the server left behind (a launcher's grandchildren, a detached helper)
        // ends now too: SIGTERM, a short grace, then SIGKILL.
        self.processes.end().await;
    }

    /// Closes the connection without waiting (for `Drop`): the service stops, and a stdio
    /// server's process is ended in the background (killed if the runtime is gone).
    pub(crate) fn close_now(&self) {
        if let Ok(mut service) = self.service.try_lock() {
            drop(service.take());
        }
        // SIGTERM now, SIGKILL after a short grace, in the background.
        self.processes.end_in_background();
    }

    fn request_error(&self, method: &str, source: ServiceError) -> McpError {
        McpError::Request {
            server: self.name.clone(),
            method: method.to_owned(),
            message: failure::request(&source, self.url.as_deref()),
            source,
            stderr: snapshot(&self.stderr),
        }
    }
}

fn snapshot(tail: &Mutex<VecDeque<String>>) -> Vec<String> {
    tail.lock()
        .map(|t| t.iter().cloned().collect())
        .unwrap_or_default()
}

/// Logs a stdio server's stderr at `debug` and keeps its last lines for error messages.
async fn forward_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %server, "stderr: {line}");
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}

/// The map a `tools/call` needs, from the model's input: an object, or nothing.
pub(crate) fn arguments(input: serde_json::Value) -> Option<JsonObject> {
    match input {
        serde_json::Value::Object(map) => Some(map),
        serde_json::Value::Null => Some(JsonObject::new()),
        _ => None,
    }
}
