//! [`McpServers`]: every configured server started concurrently, their tools collected, failures
//! reported without stopping the others, and all of them shut down together.

use std::sync::Arc;
use std::time::Duration;

use agent_core::tools::Tool;

use crate::client::McpServer;
use crate::config::McpConfig;
use crate::tool::McpTool;

/// Timeouts for starting servers and calling their tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McpOptions {
    /// How long one server may take to start, complete the handshake and list its tools
    /// (default 30 s; `MCP_TIMEOUT`, see [`McpOptions::from_env`]).
    pub startup_timeout: Duration,
    /// How long one `tools/call` may take (default 120 s; `MCP_TOOL_TIMEOUT`).
    pub call_timeout: Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            startup_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
        }
    }
}

/// The environment variable giving [`McpOptions::startup_timeout`] in milliseconds, as Claude
/// Code reads it.
pub const STARTUP_TIMEOUT_VAR: &str = "MCP_TIMEOUT";
/// The environment variable giving [`McpOptions::call_timeout`] in milliseconds, as Claude Code
/// reads it.
pub const CALL_TIMEOUT_VAR: &str = "MCP_TOOL_TIMEOUT";

impl McpOptions {
    /// The defaults, with the timeouts of `MCP_TIMEOUT` (server startup) and
    /// `MCP_TOOL_TIMEOUT` (each tool call) from the process environment, in milliseconds as
    /// Claude Code reads them. Also returns one warning per variable that is set but is not a
    /// whole number of milliseconds above 0 (its default is used then).
    pub fn from_env() -> (Self, Vec<String>) {
        Self::from_env_with(|name| std::env::var(name).ok())
    }

    /// Like [`McpOptions::from_env`], with `env` answering variable lookups.
    pub fn from_env_with(env: impl Fn(&str) -> Option<String>) -> (Self, Vec<String>) {
        let mut options = Self::default();
        let mut warnings = Vec::new();
        for (var, slot) in [
            (STARTUP_TIMEOUT_VAR, &mut options.startup_timeout),
            (CALL_TIMEOUT_VAR, &mut options.call_timeout),
        ] {
            let Some(text) = env(var) else { continue };
            match text.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => *slot = Duration::from_millis(ms),
                _ => warnings.push(format!(
                    "{var}={text:?} is not used: it must be a whole number of milliseconds above 0 \
                     (e.g. {var}=60000 for one minute); the default of {} ms applies",
                    slot.as_millis()
                )),
            }
        }
        (options, warnings)
    }
}

/// A server that could not be started; its tools are left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartFailure {
    /// The server's name.
    pub server: String,
    /// What went wrong and what to check.
    pub reason: String,
}

impl std::fmt::Display for StartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MCP server `{}` did not start: {}",
            self.server, self.reason
        )
    }
}

/// The running MCP servers of a session and their tools.
///
/// Dropping it closes every connection and ends every stdio server's process; prefer
/// [`McpServers::shutdown`], which waits for the processes to exit.
#[derive(Debug, Default)]
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
    tools: Vec<Arc<McpTool>>,
    failures: Vec<StartFailure>,
}

impl McpServers {
    /// Starts every server of `config` concurrently, each bounded by
    /// [`McpOptions::startup_timeout`], and lists their tools. A server that fails (cannot be
    /// spawned or reached, handshake or `tools/list` error, timeout) is recorded in
    /// [`McpServers::failures`] and logged; the others still start.
    pub async fn start(config: &McpConfig, options: McpOptions) -> Self {
        let starts = config.servers.iter().map(|(name, server)| async move {
            let span = tracing::info_span!(
                "mcp.server_start",
                server = %name,
                transport = server.transport()
            );
            let result = tracing::Instrument::instrument(
                tokio::time::timeout(options.startup_timeout, async {
                    let server = McpServer::connect(name, server).await?;
                    let tools = server.list_tools().await;
                    match tools {
                        Ok(tools) => Ok((server, tools)),
                        Err(e) => {
                            server.shutdown().await;
                            Err(e)
                        }
                    }
                }),
                span,
            )
            .await;
            (name, result)
        });
        let mut out = Self::default();
        for (name, result) in futures_util::future::join_all(starts).await {
            let (server, tools) = match result {
                Ok(Ok(started)) => started,
                Ok(Err(e)) => {
                    out.fail(name, e.to_string());
                    continue;
                }
                Err(_) => {
                    out.fail(
                        name,
                        format!(
                            "it did not complete the handshake and tools/list within {} ms \
                             (the startup timeout); check that the server starts and speaks MCP, \
                             or raise the timeout ({STARTUP_TIMEOUT_VAR}, in milliseconds)",
                            options.startup_timeout.as_millis()
                        ),
                    );
                    continue;
                }
            };
            let server = Arc::new(server);
            let mut names = std::collections::BTreeSet::new();
            for tool in tools {
                let tool = McpTool::new(server.clone(), tool, options.call_timeout);
                if !names.insert(tool.name().to_owned()) {
                    tracing::warn!(
                        server = %name,
                        tool = tool.server_tool_name(),
                        "MCP tool left out: its name {} is already taken by another tool of the server",
                        tool.name()
                    );
                    continue;
                }
                out.tools.push(Arc::new(tool));
            }
            tracing::info!(server = %name, tools = names.len(), "MCP server started");
            out.servers.push(server);
        }
        out
    }

    fn fail(&mut self, server: &str, reason: String) {
        let failure = StartFailure {
            server: server.to_owned(),
            reason,
        };
        tracing::warn!("{failure}");
        self.failures.push(failure);
    }

    /// Every tool of every started server, as agent-core tools (`mcp__<server>__<tool>`).
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .iter()
            .map(|t| t.clone() as Arc<dyn Tool>)
            .collect()
    }

    /// The same tools as their concrete type (for [`McpTool::tool_call`] and server names).
    pub fn mcp_tools(&self) -> &[Arc<McpTool>] {
        &self.tools
    }

    /// The servers that did not start, with the reason.
    pub fn failures(&self) -> &[StartFailure] {
        &self.failures
    }

    /// The started servers.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// The started server `name`.
    pub fn server(&self, name: &str) -> Option<&Arc<McpServer>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Closes every connection concurrently and waits for stdio servers' processes to end
    /// (see [`McpServer::shutdown`]). Tools still held elsewhere then fail with an error.
    pub async fn shutdown(&mut self) {
        futures_util::future::join_all(self.servers.iter().map(|s| s.shutdown())).await;
        self.tools.clear();
        self.servers.clear();
    }
}

impl Drop for McpServers {
    /// Closes every connection without waiting, also of servers whose tools are still held
    /// elsewhere: each stdio server's stdin is closed and its process ended in the background,
    /// or killed at once if the runtime is gone.
    fn drop(&mut self) {
        for server in &self.servers {
            server.close_now();
        }
    }
}
