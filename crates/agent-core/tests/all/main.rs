//! Integration tests of agent-core (one binary, modules by concept).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

mod brace_words;
mod contained_approvals;
mod engine_async;
mod events_compat;
mod hidden_options;
mod hooks_engine;
mod hooks_process;
mod hooks_protocol;
mod hooks_registry;
mod link_following;
mod mode_matrix;
mod option_effects;
mod permissions_table;
mod properties;
mod read_only_options;
mod read_only_oracle;
mod read_paths;
mod runtime_eval;
mod sed_scripts;
mod settings_files;
mod support;
mod whole_tool_denies;
mod wrapper_tables;
