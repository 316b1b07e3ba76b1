//! The vendored utilities (vendor/README.md) and uucore's locale embedding.
//!
//! uucore 0.12 from crates.io embeds a utility's locale files only when it finds that utility's
//! crate unpacked beside its own in cargo's registry (`uu_<name>-<version>/locales/`). A vendored
//! copy is never there, so each one must keep its crates.io release as a dependency too (which
//! cargo unpacks beside uucore) and the two releases' locale files must not drift apart: uucore
//! embeds the crates.io copy's files, the vendored code looks its messages up in them.

#![allow(
    clippy::expect_used,
    reason = "test harness: a failed setup step must abort the test with its message"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// The part of `cargo metadata`'s output read here.
#[derive(Debug, Deserialize)]
struct Metadata {
    packages: Vec<Package>,
}

#[derive(Debug, Deserialize)]
struct Package {
    name: String,
    version: String,
    /// `None` for a path package (the guest itself, the vendored copies).
    source: Option<String>,
    manifest_path: PathBuf,
}

impl Package {
    fn dir(&self) -> &Path {
        self.manifest_path
            .parent()
            .expect("a manifest path has a directory")
    }

    fn is_from_registry(&self) -> bool {
        self.source
            .as_deref()
            .is_some_and(|s| s.starts_with("registry+") || s.starts_with("sparse+"))
    }
}

/// The host's target triple (`rustc -vV`), to resolve only the packages a host build uses
/// (those the test build has unpacked already, so `--offline` holds).
fn host_triple() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    let text = String::from_utf8(out.stdout).expect("utf-8 rustc -vV");
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

fn metadata() -> Metadata {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host_triple()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("parse cargo metadata")
}

/// The files of `dir/locales`, by name.
fn locale_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir.join("locales"))
        .unwrap_or_else(|e| panic!("{}/locales: {e}", dir.display()))
        .map(|e| {
            let e = e.expect("read locales entry");
            let name = e.file_name().to_string_lossy().into_owned();
            (name, fs::read(e.path()).expect("read locale file"))
        })
        .collect();
    files.sort();
    files
}

/// Every vendored `uu_*` crate has its crates.io release in the build too, unpacked in the
/// directory uucore's build script scans (the one holding uucore), with byte-identical locale
/// files: what uucore embeds for that utility is what the vendored code asks for.
#[test]
fn vendored_utilities_keep_their_crates_io_locales_beside_uucore() {
    let meta = metadata();
    let uucore = meta
        .packages
        .iter()
        .find(|p| p.name == "uucore")
        .expect("uucore is a dependency");
    assert!(
        uucore.is_from_registry(),
        "uucore is no longer the crates.io release ({:?}): its locale embedding is not the one \
         docs/guest-coreutils.md describes",
        uucore.source
    );
    let registry_dir = uucore.dir().parent().expect("uucore's registry directory");
    let vendor = Path::new(env!("CARGO_MANIFEST_DIR")).join("vendor");
    let vendored: Vec<&Package> = meta
        .packages
        .iter()
        .filter(|p| p.name.starts_with("uu_") && p.source.is_none())
        .collect();
    assert!(
        !vendored.is_empty(),
        "no vendored uu_* crate in the build: drop this test with the last one"
    );
    for copy in vendored {
        assert!(
            copy.dir().starts_with(&vendor),
            "{} is a path package outside vendor/",
            copy.manifest_path.display()
        );
        let release = meta
            .packages
            .iter()
            .find(|p| p.name == copy.name && p.version == copy.version && p.is_from_registry())
            .unwrap_or_else(|| {
                panic!(
                    "{} {} is vendored but its crates.io release is not a dependency: uucore \
                     would embed no locale for it (guest/vendor/README.md)",
                    copy.name, copy.version
                )
            });
        assert_eq!(
            release.dir(),
            registry_dir.join(format!("{}-{}", copy.name, copy.version)),
            "uucore scans {} for uu_<name>-<version> crates",
            registry_dir.display()
        );
        let (ours, theirs) = (locale_files(copy.dir()), locale_files(release.dir()));
        let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
            files.iter().map(|(n, _)| n.clone()).collect()
        };
        assert_eq!(names(&ours), names(&theirs), "{} locale files", copy.name);
        for ((name, a), (_, b)) in ours.iter().zip(&theirs) {
            assert!(
                a == b,
                "{}/locales/{name} differs from the crates.io release's: uucore embeds that one",
                copy.dir().display()
            );
        }
    }
}
