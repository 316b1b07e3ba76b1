//! Fuzzes the command checker: it must answer every input without panicking, and a denied
//! program placed in command position after the input must never be allowed.

#![no_main]

use std::sync::OnceLock;

use agent_sandbox::commands::CommandChecker;
use agent_sandbox::settings::SandboxSettings;
use libfuzzer_sys::fuzz_target;

fn checker() -> &'static CommandChecker {
    static C: OnceLock<CommandChecker> = OnceLock::new();
    C.get_or_init(|| {
        CommandChecker::with_path(
            &SandboxSettings {
                denied_commands: vec!["rm".into(), "curl".into()],
                ..SandboxSettings::default()
            },
            &[],
        )
    })
}

fuzz_target!(
    init: {
        // brush-parser panics on some inputs (e.g. `11111111111>`, an fd number that overflows);
        // agent-core catches those panics and fails closed, which is the behaviour under test.
        // libfuzzer-sys's hook would abort on the caught panic, so the default silent hook is
        // restored: a panic that is not caught still aborts at the FFI boundary and is reported.
        std::panic::set_hook(Box::new(|_| {}));
    },
    |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let c = checker();
    let _ = c.check(text);
    if defines_function(text) {
        // `rm ()...` defines a function named `rm`: no program runs, so there is nothing to
        // deny (the function's body is still checked, and a later `rm` call is denied).
        return;
    }
    for wrapped in [format!("true; rm {text}"), format!("echo $(rm {text})")] {
        let v = c.check(&wrapped);
        assert!(!v.allowed, "allowed: {wrapped:?}");
    }
    }
);

/// Whether `rm TEXT` is a function definition: TEXT starts with `(` after blanks and line
/// continuations.
fn defines_function(text: &str) -> bool {
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t']);
        match trimmed.strip_prefix("\\\n") {
            Some(more) => rest = more,
            None => return trimmed.starts_with('('),
        }
    }
}
