//! `agent keys`: the Ed25519 keys of bundle manifests.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `agent keys ...`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate an Ed25519 key pair: ID.jwk (private, 0600) and ID.pub.jwk.
    #[command(
        after_help = "Examples:\n  agent keys generate --id release-2026\n  agent keys generate --id dev --out ./keys --trust --official-for ./registry\n\nExit codes: 0 written; 2 bad id, or the key file exists."
    )]
    Generate(KeysGenerateArgs),
    /// List the trusted public keys and the registries they count for.
    #[command(
        after_help = "Example:\n  agent keys list --json\n\nExit codes: 0 listed; 2 unreadable trust store."
    )]
    List(KeysListArgs),
    /// Trust a public key: official for some registries (their manifests must be signed by
    /// it) or configured for third-party registries.
    #[command(
        after_help = "Examples:\n  agent keys trust agent-dev=ZzLClo23XmctaEt4zX--ubVfFQnuBEvHMSCwuLBpr4Q --official-for https://bundles.example.org\n  agent keys trust ./keys/dev.pub.jwk --registry ./third-party-registry\n\nExit codes: 0 trusted; 2 bad key or registry."
    )]
    Trust(KeysTrustArgs),
    /// Stop trusting a key.
    #[command(
        after_help = "Example:\n  agent keys untrust agent-dev\n\nExit codes: 0 removed; 1 no such key; 2 unreadable trust store."
    )]
    Untrust(KeysUntrustArgs),
}

/// `agent keys generate`.
#[derive(Debug, Args)]
pub struct KeysGenerateArgs {
    /// The key id manifests will name (letters, digits, `. _ - +`).
    #[arg(long, value_name = "ID")]
    pub id: String,
    /// The directory for the key files (default: $AGENT_HOME/keys).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also add the public key to the trust store.
    #[arg(long)]
    pub trust: bool,
    /// With --trust: the registries it is official for (repeat for more).
    #[arg(long = "official-for", value_name = "REGISTRY", requires = "trust")]
    pub official_for: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent keys list`.
#[derive(Debug, Args)]
pub struct KeysListArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent keys trust`.
#[derive(Debug, Args)]
pub struct KeysTrustArgs {
    /// The key: ID=BASE64URL, or a public (or private) JWK file.
    pub key: String,
    /// A registry (directory or URL) this key is official for (repeat for more).
    #[arg(long = "official-for", value_name = "REGISTRY")]
    pub official_for: Vec<String>,
    /// A third-party registry whose manifests must be signed by this key (repeat for more).
    #[arg(long = "registry", value_name = "REGISTRY")]
    pub registries: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent keys untrust`.
#[derive(Debug, Args)]
pub struct KeysUntrustArgs {
    /// The key id.
    pub id: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}
