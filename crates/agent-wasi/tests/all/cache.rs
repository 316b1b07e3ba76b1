//! Preparing modules: digest checks, the memory cache, the disk cache and its integrity check.

use std::fs;
use std::path::{Path, PathBuf};

use agent_wasi::{CacheState, CommandInput, PrepareError, Runtime, RuntimeConfig};

use crate::guests::{self, run};

fn cached_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn bytes_that_do_not_match_the_digest_are_refused() {
    let runtime = guests::runtime();
    let (bytes, sha) = guests::wasm(&guests::echo());
    let (_, other_sha) = guests::wasm(&guests::cat());
    let err = runtime.prepare(&bytes, &other_sha).unwrap_err();
    match &err {
        PrepareError::DigestMismatch { expected, actual } => {
            assert_eq!((expected, actual), (&other_sha, &sha));
        }
        other => panic!("expected DigestMismatch, got {other}"),
    }
    // Not even a module prepared earlier under that digest is handed out for other bytes.
    runtime
        .prepare(&guests::wasm(&guests::cat()).0, &other_sha)
        .unwrap();
    assert!(matches!(
        runtime.prepare(&bytes, &other_sha),
        Err(PrepareError::DigestMismatch { .. })
    ));
    assert!(matches!(
        runtime.prepare(&bytes, "not-a-digest"),
        Err(PrepareError::BadDigest { .. })
    ));
    // Uppercase hex is the same digest.
    let module = runtime.prepare(&bytes, &sha.to_uppercase()).unwrap();
    assert_eq!(module.sha256(), sha);
}

#[test]
fn a_second_prepare_is_a_memory_hit() {
    let runtime = guests::runtime();
    let (bytes, sha) = guests::wasm(&guests::echo());
    assert_eq!(
        runtime.prepare(&bytes, &sha).unwrap().cache_state(),
        CacheState::Compiled
    );
    assert_eq!(
        runtime.prepare(&bytes, &sha).unwrap().cache_state(),
        CacheState::Memory
    );
    assert_eq!(runtime.get(&sha).unwrap().cache_state(), CacheState::Memory);
    assert!(runtime.get(&"0".repeat(64)).is_none());
}

#[test]
fn prepare_file_reads_and_checks_the_file() {
    let runtime = guests::runtime();
    let dir = tempfile::tempdir().unwrap();
    let (bytes, sha) = guests::wasm(&guests::echo());
    let path = dir.path().join("echo.wasm");
    fs::write(&path, &bytes).unwrap();
    let module = runtime.prepare_file(&path, &sha).unwrap();
    assert_eq!(module.sha256(), sha);
    let err = runtime
        .prepare_file(dir.path().join("missing.wasm"), &sha)
        .unwrap_err();
    assert!(matches!(err, PrepareError::Read { .. }), "{err}");
}

/// A second runtime (another process, in real life) loads the compiled module from the disk
/// cache instead of compiling it, and it runs.
#[test]
fn the_disk_cache_is_used_by_a_second_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("cache");
    let (bytes, sha) = guests::wasm(&guests::echo());
    let config = RuntimeConfig::default().with_cache_dir(&cache_dir);

    let first = Runtime::new(config.clone()).unwrap();
    assert_eq!(
        first.prepare(&bytes, &sha).unwrap().cache_state(),
        CacheState::Compiled
    );
    let files = cached_files(&cache_dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&sha) && name.ends_with(".cwasm"), "{name}");
    drop(first);

    let second = Runtime::new(config).unwrap();
    let module = second.prepare(&bytes, &sha).unwrap();
    assert_eq!(module.cache_state(), CacheState::Disk);
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &second,
        &module,
        CommandInput::new(["echo", "cached"]),
        workspace.path(),
    );
    assert_eq!(output.stdout, b"cached\n");
    assert_eq!(output.meta.cache, CacheState::Disk);
}

/// A cache file whose bytes changed is detected before loading, removed, and the module is
/// compiled again (and cached again).
#[test]
fn a_tampered_cache_file_is_recompiled_never_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, sha) = guests::wasm(&guests::echo());
    let config = RuntimeConfig::default().with_cache_dir(dir.path());
    Runtime::new(config.clone())
        .unwrap()
        .prepare(&bytes, &sha)
        .unwrap();
    let file = cached_files(dir.path()).remove(0);

    for tamper in [
        // Flip a byte in the middle of the compiled code.
        |data: &mut Vec<u8>| {
            let middle = data.len() / 2;
            data[middle] ^= 0x40;
        },
        // Truncate.
        |data: &mut Vec<u8>| data.truncate(data.len() / 3),
        // Garbage of the same length.
        |data: &mut Vec<u8>| data.iter_mut().for_each(|byte| *byte = 0xcc),
    ] {
        let mut data = fs::read(&file).unwrap();
        tamper(&mut data);
        fs::write(&file, &data).unwrap();

        let runtime = Runtime::new(config.clone()).unwrap();
        let module = runtime.prepare(&bytes, &sha).unwrap();
        assert_eq!(module.cache_state(), CacheState::Compiled);
        let workspace = tempfile::tempdir().unwrap();
        let output = run(
            &runtime,
            &module,
            CommandInput::new(["echo", "ok"]),
            workspace.path(),
        );
        assert_eq!(output.stdout, b"ok\n");

        // The rewritten file is good again.
        let again = Runtime::new(config.clone()).unwrap();
        assert_eq!(
            again.prepare(&bytes, &sha).unwrap().cache_state(),
            CacheState::Disk
        );
    }
}

/// A different engine configuration (here: fuel metering) has another compatibility hash, so it
/// never loads the other configuration's compiled code.
#[test]
fn another_engine_configuration_does_not_share_cache_entries() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, sha) = guests::wasm(&guests::echo());
    let plain = RuntimeConfig::default().with_cache_dir(dir.path());
    let fuel = plain.clone().with_consume_fuel(true);
    Runtime::new(plain).unwrap().prepare(&bytes, &sha).unwrap();
    let runtime = Runtime::new(fuel.clone()).unwrap();
    assert_eq!(
        runtime.prepare(&bytes, &sha).unwrap().cache_state(),
        CacheState::Compiled
    );
    assert_eq!(cached_files(dir.path()).len(), 2);
    let runtime = Runtime::new(fuel).unwrap();
    assert_eq!(
        runtime.prepare(&bytes, &sha).unwrap().cache_state(),
        CacheState::Disk
    );
}

/// `prepare_cached` hands out a module by its digest alone (what a new process does instead of
/// reading and hashing the module file): from the disk cache when a runtime with the same
/// engine compiled it, from memory after that, and nothing for a module never compiled or
/// compiled by another engine configuration.
#[test]
fn prepare_cached_finds_compiled_code_by_digest_without_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, sha) = guests::wasm(&guests::echo());
    let (_, other_sha) = guests::wasm(&guests::cat());
    let config = RuntimeConfig::default().with_cache_dir(dir.path());

    let first = Runtime::new(config.clone()).unwrap();
    assert!(first.prepare_cached(&sha).unwrap().is_none(), "miss");
    first.prepare(&bytes, &sha).unwrap();
    drop(first);

    let second = Runtime::new(config.clone()).unwrap();
    let module = second.prepare_cached(&sha).unwrap().expect("a disk hit");
    assert_eq!(module.cache_state(), CacheState::Disk);
    assert_eq!(module.sha256(), sha);
    let workspace = tempfile::tempdir().unwrap();
    let output = run(
        &second,
        &module,
        CommandInput::new(["echo", "mapped"]),
        workspace.path(),
    );
    assert_eq!(output.stdout, b"mapped\n");
    assert_eq!(
        second.prepare_cached(&sha).unwrap().unwrap().cache_state(),
        CacheState::Memory
    );
    // Another module (a changed bundle's new digest) is not there.
    assert!(second.prepare_cached(&other_sha).unwrap().is_none());
    assert!(matches!(
        second.prepare_cached("not-a-digest"),
        Err(PrepareError::BadDigest { .. })
    ));

    // Another engine configuration never maps this engine's code.
    let fuel = Runtime::new(config.with_consume_fuel(true)).unwrap();
    assert!(fuel.prepare_cached(&sha).unwrap().is_none());
}

/// A cache file changed after it was written is never mapped by `prepare_cached`: it is a miss,
/// the file is removed, and preparing from the verified bytes writes a good one again.
#[test]
fn prepare_cached_refuses_a_tampered_file_and_prepare_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, sha) = guests::wasm(&guests::echo());
    let config = RuntimeConfig::default().with_cache_dir(dir.path());
    Runtime::new(config.clone())
        .unwrap()
        .prepare(&bytes, &sha)
        .unwrap();
    let file = cached_files(dir.path()).remove(0);
    let mut data = fs::read(&file).unwrap();
    // A byte of the compiled code (the trailer is the last 20 bytes).
    data[100] ^= 0x01;
    fs::write(&file, &data).unwrap();

    let runtime = Runtime::new(config.clone()).unwrap();
    assert!(runtime.prepare_cached(&sha).unwrap().is_none());
    assert!(!file.exists(), "the tampered file is removed");
    assert_eq!(
        runtime.prepare(&bytes, &sha).unwrap().cache_state(),
        CacheState::Compiled
    );
    let again = Runtime::new(config).unwrap();
    assert_eq!(
        again.prepare_cached(&sha).unwrap().unwrap().cache_state(),
        CacheState::Disk
    );
}
