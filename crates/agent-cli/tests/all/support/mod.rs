//! What the tests share: a scripted model server and, on Linux, a pseudo-terminal.

pub mod model;
#[cfg(target_os = "linux")]
pub mod terminal;
