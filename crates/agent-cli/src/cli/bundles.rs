//! `agent bundles`: signed WASI tool bundles.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// Where the bundle cache is (default `$AGENT_HOME/bundles`).
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The bundle cache directory (default: $AGENT_HOME/bundles).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles ...`.
#[derive(Debug, Subcommand)]
pub enum BundlesCommand {
    /// Build a manifest from a spec (name, version, commands) and a directory of modules;
    /// optionally lay it out in a registry directory and sign it.
    #[command(
        after_help = "Examples:\n  agent bundles build --spec guest/bundle.json --modules guest/target/wasm32-wasip1/release --registry target/bundles/registry --key ~/.agent/keys/me.jwk\n  agent bundles build --spec bundle.json --modules out --out manifest.json\n\nExit codes: 0 built; 2 bad spec, missing module or unwritable output."
    )]
    Build(BundleBuildArgs),
    /// Sign a manifest with a private key (the `signature` block is added or replaced).
    #[command(
        after_help = "Example:\n  agent bundles sign --manifest registry/bundles/core-utils/0.1.0/manifest.json --key ~/.agent/keys/me.jwk\n\nExit codes: 0 signed; 2 bad manifest or key."
    )]
    Sign(BundleSignArgs),
    /// Verify a manifest: its signature (with the given keys, else the trusted ones) and,
    /// unless --signature-only, every asset beside it (size and sha256).
    #[command(
        after_help = "Examples:\n  agent bundles verify --manifest manifest.json --key agent-dev=ZzLClo23XmctaEt4zX--ubVfFQnuBEvHMSCwuLBpr4Q\n  agent bundles verify --manifest registry/bundles/core-utils/0.1.0/manifest.json --json\n\nExit codes: 0 valid; 1 invalid (the reason on stderr, or in the JSON); 2 bad input (unreadable file, not JSON, bad --key)."
    )]
    Verify(BundleVerifyArgs),
    /// Install NAME[@VERSION] from a registry (a directory or an http(s) URL), verified before
    /// anything is written to the cache.
    #[command(
        after_help = "Examples:\n  agent bundles install core-utils --registry target/bundles/registry\n  agent bundles install core-utils@0.1.0 --registry https://bundles.example.org\n\nExit codes: 0 installed (or already installed); 1 verification or transfer failed (nothing is installed); 2 bad input."
    )]
    Install(BundleInstallArgs),
    /// List installed bundles and their commands.
    #[command(
        after_help = "Example:\n  agent bundles list --json\n\nExit codes: 0 listed; 2 unreadable cache."
    )]
    List(StoreArgs),
    /// Remove an installed bundle (all versions, or NAME@VERSION).
    #[command(
        after_help = "Example:\n  agent bundles remove core-utils@0.1.0\n\nExit codes: 0 removed; 1 not installed; 2 bad input."
    )]
    Remove(BundleRemoveArgs),
    /// Which installed bundle provides a command, why (pinned, official, preferred, by name),
    /// and what else provides it (verified: the manifest's signature and the module's sha256
    /// are checked). Official bundles win every name clash; a third-party command that an
    /// official bundle also provides runs only when pinned (`agent bundles pin`).
    #[command(
        after_help = "Examples:\n  agent bundles which grep\n  agent bundles which cat --prefer core-utils --json\n\nExit codes: 0 found and verified; 1 not found, refused (--prefer puts a third-party bundle before an official one providing it; a pin naming a bundle that is gone) or verification failed; 2 bad input."
    )]
    Which(BundleWhichArgs),
    /// Pin a command to a bundle: its command runs whatever else provides it, official
    /// bundles included (the only way to run a third-party command an official bundle also
    /// provides). Pins live in STORE/pins.json; `agent bundles list` shows them.
    #[command(
        after_help = "Examples:\n  agent bundles pin cat a-tools\n  agent bundles pin grep core-utils --json\n\nExit codes: 0 pinned; 1 the bundle is not installed or does not provide the command; 2 bad input (a bad name, an unreadable pins file)."
    )]
    Pin(BundlePinArgs),
    /// Remove a command's pin: it resolves as usual again (official bundles first).
    #[command(
        after_help = "Example:\n  agent bundles unpin cat\n\nExit codes: 0 unpinned; 1 the command was not pinned; 2 bad input (an unreadable pins file)."
    )]
    Unpin(BundleUnpinArgs),
    /// Remove leftovers of interrupted installs, broken directories and superseded versions.
    #[command(
        after_help = "Example:\n  agent bundles gc\n\nExit codes: 0 done; 2 the cache could not be cleaned."
    )]
    Gc(StoreArgs),
}

/// `agent bundles build`.
#[derive(Debug, Args)]
pub struct BundleBuildArgs {
    /// The spec: a JSON object with name, version and commands [{name, modulePath, limits?}].
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
    /// The directory holding the modules the commands name.
    #[arg(long, value_name = "DIR")]
    pub modules: PathBuf,
    /// Lay the bundle out in this registry directory (bundles/NAME/VERSION/, index.json).
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Write the manifest to this file (default with --registry: inside the registry; else
    /// stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Sign the manifest with this private key (a JWK file from `agent keys generate`).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles sign`.
#[derive(Debug, Args)]
pub struct BundleSignArgs {
    /// The manifest to sign (rewritten in place unless --out).
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// The private key (a JWK file from `agent keys generate`).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Write the signed manifest here instead.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles verify`.
#[derive(Debug, Args)]
pub struct BundleVerifyArgs {
    /// The manifest.
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// A public key that may have signed it, as ID=BASE64URL (repeat for more). Without any,
    /// the trusted keys of $AGENT_HOME/keys/trusted.json are used.
    #[arg(long = "key", value_name = "ID=BASE64URL")]
    pub keys: Vec<String>,
    /// Check the signature only, not the assets beside the manifest.
    #[arg(long = "signature-only")]
    pub signature_only: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `agent bundles install`.
#[derive(Debug, Args)]
pub struct BundleInstallArgs {
    /// NAME or NAME@VERSION (default version: the newest in the registry's index.json).
    pub bundle: String,
    /// The registry: a directory or an http(s) URL.
    #[arg(long, value_name = "DIR|URL")]
    pub registry: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles remove`.
#[derive(Debug, Args)]
pub struct BundleRemoveArgs {
    /// NAME (every version) or NAME@VERSION.
    pub bundle: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles which`.
#[derive(Debug, Args)]
pub struct BundleWhichArgs {
    /// The command name.
    pub command: String,
    /// Search this bundle before the others of its class (repeat for an order; the rest
    /// follow by name). Official bundles still come before third-party ones.
    #[arg(long, value_name = "BUNDLE")]
    pub prefer: Vec<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles pin`.
#[derive(Debug, Args)]
pub struct BundlePinArgs {
    /// The command name.
    pub command: String,
    /// The bundle (its name; the newest installed version is used).
    pub bundle: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `agent bundles unpin`.
#[derive(Debug, Args)]
pub struct BundleUnpinArgs {
    /// The command name.
    pub command: String,
    #[command(flatten)]
    pub store: StoreArgs,
}
