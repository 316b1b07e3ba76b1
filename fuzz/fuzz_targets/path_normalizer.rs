//! Fuzzes path normalisation and the path policy: no panic, the lexical form is absolute and
//! free of `.` / `..` / empty components, and nothing outside the granted directory is allowed.

#![no_main]

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use agent_sandbox::paths::{Op, PathPolicy, lexical};
use agent_sandbox::settings::SandboxSettings;
use libfuzzer_sys::fuzz_target;

fn policy() -> &'static PathPolicy {
    static P: OnceLock<PathPolicy> = OnceLock::new();
    P.get_or_init(|| {
        PathPolicy::new(
            &SandboxSettings {
                base_dir: Some(PathBuf::from("/nonexistent-fuzz/project")),
                ..SandboxSettings::default()
            },
            None,
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.contains('\0') {
        return;
    }
    let lex = lexical(Path::new(text), Path::new("/nonexistent-fuzz/project"));
    assert!(lex.is_absolute());
    assert!(
        lex.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
    );
    let v = policy().check_resolved(&lex, Op::Write);
    if v.allowed {
        assert!(
            lex.starts_with("/nonexistent-fuzz/project"),
            "{lex:?} allowed"
        );
    }
});
