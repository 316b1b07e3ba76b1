//! Integration tests of agent-core (one binary, modules by concept).

mod engine_async;
mod events_compat;
mod permissions_table;
mod properties;
mod settings_files;
mod support;
