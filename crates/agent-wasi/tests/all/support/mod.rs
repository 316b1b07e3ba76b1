//! Shared by the tests that run the real core-utils bundle.

#![allow(
    dead_code,
    clippy::print_stderr,
    reason = "each test file uses a part; the skip note is for the reader"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_bundles::registry::Registry;
use agent_bundles::store::BundleStore;
use agent_bundles::trust::TrustStore;
use agent_wasi::toolbox::Toolbox;
use agent_wasi::{Runtime, RuntimeConfig};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The toolbox over a fresh install of the built registry, or `None` when it is not built.
pub fn toolbox(dir: &Path) -> Option<Toolbox> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let registry = target.join("bundles/registry");
    if !registry.join("index.json").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: `cargo xtask ci` builds it before the tests",
            registry.display()
        );
        eprintln!("skipped: run `cargo xtask bundles` first");
        return None;
    }
    let store = BundleStore::new(dir.join("bundles"));
    let trust = TrustStore::load(&dir.join("trusted.json")).unwrap();
    let registry = Registry::open(&registry.to_string_lossy()).unwrap();
    store
        .install(&registry, &trust, "core-utils", None)
        .unwrap();
    let runtime =
        Runtime::new(RuntimeConfig::default().with_cache_dir(target.join("wasi-test-cache")))
            .unwrap();
    Some(Toolbox::open(Arc::new(runtime), &store, trust, &[]).unwrap())
}
