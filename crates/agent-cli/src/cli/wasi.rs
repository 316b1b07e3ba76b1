//! `agent exec` and `agent shell`: commands of the installed WASI bundles, run in-process.

use std::path::PathBuf;

use clap::Args;

/// Options shared by `agent exec` and `agent shell`.
#[derive(Debug, Args)]
pub struct WasiArgs {
    /// The directory the commands see as `/` (default: the current directory). Nothing outside
    /// it is reachable.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Wall-time limit per command, in milliseconds (default 120000).
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
    /// Linear-memory limit per command, in bytes (default 536870912).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<u64>,
    /// Most bytes kept of stdout and of stderr each (default 16777216).
    #[arg(long = "output-limit", value_name = "BYTES")]
    pub output_limit: Option<usize>,
    /// An environment variable for the commands, NAME=VALUE (repeat for more; nothing of the
    /// host's environment is passed).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Search this bundle first (repeat for an order; the rest follow by name).
    #[arg(long, value_name = "BUNDLE")]
    pub prefer: Vec<String>,
    /// Let the commands fetch URLs of this domain (the `fetch` command, through agent_net);
    /// repeat for more; `*.example.com` allows its subdomains. Private and loopback addresses
    /// stay refused. Default: no network at all.
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    /// The bundle cache (default: $AGENT_HOME/bundles).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Print the structured result as JSON instead of passing the output through.
    #[arg(long)]
    pub json: bool,
}

/// `agent exec`.
#[derive(Debug, Args)]
pub struct WasiExecArgs {
    #[command(flatten)]
    pub wasi: WasiArgs,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub argv: Vec<String>,
}

/// `agent shell`.
#[derive(Debug, Args)]
pub struct ShellArgs {
    #[command(flatten)]
    pub wasi: WasiArgs,
    /// The script.
    pub script: String,
}
