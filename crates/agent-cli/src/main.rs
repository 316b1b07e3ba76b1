//! `agent`: the command-line interface of the agent runtime.
//!
//! Thin by design: argument parsing ([`cli`]), output, and calls into the library crates. Every
//! capability has a verb so it can be tested and scripted from the shell. Exit codes are listed
//! in [`exit::Exit`] and in `docs/cli.md`.

mod cli;
mod commands;
mod exit;
mod output;
mod profiles;

use clap::Parser;

use crate::exit::Exit;

fn main() -> std::process::ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return output::clap_error(&e),
    };
    let result = match cli.command {
        cli::Command::Permissions(cmd) => commands::permissions::run(cmd),
        cli::Command::Trust(args) => commands::trust::run(&args),
        cli::Command::Hooks(cmd) => commands::hooks::run(cmd),
        cli::Command::Sandbox(cmd) => commands::sandbox::run(cmd),
        cli::Command::Sessions(args) => commands::sessions::run(args),
        cli::Command::Workspace(args) => commands::workspace::run(args),
        cli::Command::Tool(args) => commands::tool::run(args),
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Demo(args) => commands::demo::run(args),
        cli::Command::Exec(args) => commands::exec::exec(args),
        cli::Command::Shell(args) => commands::exec::shell(args),
        cli::Command::Bundles(cmd) => commands::bundles::run(cmd),
        cli::Command::Keys(cmd) => commands::keys::run(cmd),
        cli::Command::Completions(args) => commands::completions(&args),
    };
    match result {
        Ok(code) => code.into(),
        Err(e) => {
            output::error(&output::chain(&e));
            Exit::Usage.into()
        }
    }
}
