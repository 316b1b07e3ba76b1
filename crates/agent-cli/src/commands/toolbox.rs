//! The installed WASI bundles as a toolbox, and where they live: the bundle cache
//! (`$AGENT_HOME/bundles`) and the user's trust store (`$AGENT_HOME/keys/trusted.json`). Shared by
//! `agent bundles`, `agent keys`, `agent exec` / `agent shell` and `agent tool`.

use std::path::PathBuf;
use std::sync::Arc;

use agent_bundles::store::BundleStore;
use agent_bundles::trust::TrustStore;
use agent_wasi::toolbox::Toolbox;
use agent_wasi::{Limits, Runtime, RuntimeConfig};
use anyhow::{Context, Result};

use super::{absolute, agent_home};

/// The default bundle cache: `$AGENT_HOME/bundles`.
pub fn default_store() -> Result<PathBuf> {
    Ok(agent_home()?.bundles())
}

/// Where the user's trust store is: `$AGENT_HOME/keys/trusted.json`.
pub fn trust_path() -> Result<PathBuf> {
    Ok(agent_home()?.trusted_keys())
}

/// The user's trust store.
pub fn trust_store() -> Result<TrustStore> {
    Ok(TrustStore::load(&trust_path()?)?)
}

/// The toolbox over the bundle cache `store` (default `$AGENT_HOME/bundles`), with compiled
/// modules cached in `<store>/.compiled` (or `$AGENT_WASI_CACHE`).
pub fn open_toolbox(store: Option<PathBuf>, prefer: &[String], limits: Limits) -> Result<Toolbox> {
    let store = BundleStore::new(match store {
        Some(s) => absolute(s)?,
        None => default_store()?,
    });
    let cache = match std::env::var_os("AGENT_WASI_CACHE").filter(|c| !c.is_empty()) {
        Some(dir) => absolute(PathBuf::from(dir))?,
        None => store.root().join(".compiled"),
    };
    let runtime = Runtime::new(RuntimeConfig::default().with_cache_dir(cache))
        .context("cannot start the WASI runtime")?;
    let toolbox = Toolbox::open(Arc::new(runtime), &store, trust_store()?, prefer)?;
    Ok(toolbox.with_limits(limits))
}
