//! Differential fuzzing of the shell parse: `shell::parse` (which takes the plain-script fast
//! path when it can) must give exactly what `shell::parse_with_brush_only` gives, for every
//! input, errors included, and `shell::parse_script` exactly what
//! `shell::parse_script_with_brush_only` gives (the lowered tree the WASI shell compiles, with
//! its positions). A difference is a parser differential, the classic policy bypass.

#![no_main]

use agent_core::shell;
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        // As in command_checker: panics inside brush-parser are caught and fail closed.
        std::panic::set_hook(Box::new(|_| {}));
    },
    |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let fast = shell::parse(text);
    let brush = shell::parse_with_brush_only(text);
    assert_eq!(fast, brush, "the fast path disagrees on {text:?}");
    let fast = shell::parse_script(text);
    let brush = shell::parse_script_with_brush_only(text);
    assert_eq!(fast, brush, "the fast path's tree disagrees on {text:?}");
    }
);
