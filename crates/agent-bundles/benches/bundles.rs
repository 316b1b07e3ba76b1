//! Bundle figures (issue: "Verifying and loading the installed core-utils bundle: report the
//! time; target ≤ 20 ms for a warm cache including sha256 of every module"):
//!
//! - `load_all_verified`: `Resolver::load_all` over the installed core-utils bundle, warm page
//!   cache: the manifest's signature checked under an official registry's policy, every module
//!   read and its size and sha256 checked, one `LoadedModule` per command.
//! - `read_modules_baseline`: the same module files read with `std::fs::read`, nothing checked.
//! - `sha256_4mib` / `copy_4mib_baseline`: the hash alone on 4 MiB in memory, beside a plain copy
//!   of the same bytes, for the throughput of sha2 0.11 on this machine.
//!
//! The modules are the real ones from `target/bundles/registry` (`cargo xtask bundles`); when
//! that registry is missing the bench says so and uses one synthetic 4.5 MiB module instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "bench code: a panic is a failure report, and the note on stderr is for the reader"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agent_bundles::keys::KeyPair;
use agent_bundles::manifest::Manifest;
use agent_bundles::registry::Registry;
use agent_bundles::store::BundleStore;
use agent_bundles::trust::{TrustStore, registry_id};
use agent_bundles::{pack, verify};
use criterion::{Criterion, criterion_group, criterion_main};

/// A registry signed by a fresh key trusted as official for it, made from the real core-utils
/// modules when they are built.
fn setup(dir: &Path) -> (BundleStore, TrustStore, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let built = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("bundles/registry");
    let modules = dir.join("modules");
    std::fs::create_dir_all(&modules).unwrap();
    let spec = match Registry::open(&built.to_string_lossy()).and_then(|r| {
        let index = r.index()?;
        let name = index
            .bundles
            .first()
            .map(|b| b.name.clone())
            .unwrap_or_default();
        let version = index.latest(&name).unwrap_or_default().to_string();
        Ok((r, name, version))
    }) {
        Ok((_, name, version)) if !name.is_empty() => {
            let from = built.join("bundles").join(&name).join(&version);
            let manifest =
                Manifest::parse(&std::fs::read(from.join("manifest.json")).unwrap()).unwrap();
            for asset in &manifest.assets {
                let to = modules.join(&asset.path);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(from.join(&asset.path), &to).unwrap();
            }
            let mut spec = serde_json::Value::Object(manifest.document().clone());
            spec.as_object_mut().unwrap().remove("signature");
            spec.as_object_mut().unwrap().remove("assets");
            spec
        }
        _ => {
            eprintln!(
                "note: {} is missing (run `cargo xtask bundles`); using one synthetic 4.5 MiB module",
                built.display()
            );
            std::fs::write(modules.join("coreutils.wasm"), vec![0x5a; 4_718_592]).unwrap();
            let commands: Vec<_> = ["cat", "ls", "wc", "sort", "grep", "sed", "find", "head"]
                .iter()
                .map(|c| serde_json::json!({"name": c, "modulePath": "coreutils.wasm"}))
                .collect();
            serde_json::json!({"name": "core-utils", "version": "0.0.0-synthetic", "commands": commands})
        }
    };
    let manifest = pack::build_manifest(&spec, &modules).unwrap();
    let key = KeyPair::generate("bench").unwrap();
    let registry_dir = dir.join("registry");
    pack::publish(
        &verify::sign_manifest(&manifest, &key),
        &modules,
        &registry_dir,
    )
    .unwrap();
    let mut trust = TrustStore::load(&dir.join("trusted.json")).unwrap();
    trust.trust(
        &key.public(),
        &[registry_id(&registry_dir.to_string_lossy())],
        &[],
    );
    let store = BundleStore::new(dir.join("cache"));
    let registry = Registry::open(&registry_dir.to_string_lossy()).unwrap();
    let installed = store
        .install(&registry, &trust, &manifest.name, None)
        .unwrap();
    let files = installed
        .bundle
        .manifest
        .assets
        .iter()
        .map(|a| installed.bundle.dir.join(&a.path))
        .collect();
    (store, trust, files)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (store, trust, files) = setup(dir.path());
    let mut group = c.benchmark_group("bundles");
    group.sample_size(30);
    group.bench_function("load_all_verified", |b| {
        b.iter(|| {
            let resolver = store.resolver(&[]).unwrap();
            let all = resolver.load_all(&trust, true).unwrap();
            assert!(!all.is_empty());
            black_box(all)
        });
    });
    group.bench_function("read_modules_baseline", |b| {
        b.iter(|| {
            for f in &files {
                black_box(std::fs::read(f).unwrap());
            }
        });
    });
    let data = vec![0xa5u8; 4 * 1024 * 1024];
    group.bench_function("sha256_4mib", |b| {
        b.iter(|| black_box(agent_bundles::digest::sha256_hex(black_box(&data))));
    });
    group.bench_function("copy_4mib_baseline", |b| {
        b.iter(|| black_box(black_box(&data).clone()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
