//! `agent`: the command-line interface of the agent runtime.
//!
//! Thin by design: argument parsing ([`cli`]), output, and calls into the library crates. Every
//! capability has a verb so it can be tested and scripted from the shell. Exit codes are listed
//! in [`exit::Exit`] and in `docs/cli.md`.

mod cli;
mod colour;
mod commands;
mod exit;
mod output;
mod profiles;

use clap::{CommandFactory as _, FromArgMatches as _};

use crate::colour::ColorWhen;
use crate::exit::Exit;

fn main() -> std::process::ExitCode {
    // `--color` is known before clap parses, so clap's own help and errors follow it too.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `agent -p PROMPT`, and the Claude Agent SDK's `agent --output-format stream-json …`: the
    // headless mode, flags only.
    if cli::sdk::SdkCli::claims(&args) {
        let parsed = cli::sdk::SdkCli::command()
            .try_get_matches_from(&args)
            .and_then(|m| cli::sdk::SdkCli::from_arg_matches(&m));
        return match parsed.map(commands::headless::run) {
            Ok(Ok(code)) => code.into(),
            Ok(Err(e)) => {
                output::error(&output::chain(&e));
                Exit::Usage.into()
            }
            Err(e) => output::clap_error(&e, "agent"),
        };
    }
    // `agent --continue`, `agent --model M`: session options without a verb open the
    // interactive session on a terminal, as `agent` alone does.
    if commands::chat::on_a_terminal()
        && args.get(1).is_some_and(|a| {
            let a = a.to_string_lossy();
            a.starts_with('-')
                && !matches!(a.as_ref(), "-h" | "--help" | "-V" | "--version")
                && !a.starts_with("--color")
        })
    {
        args.insert(1, "chat".into());
    }
    let when = ColorWhen::from_args(&args).unwrap_or_default();
    when.apply();
    let command = cli::Cli::command().color(when.into());
    let parsed = command
        .clone()
        .try_get_matches_from(&args)
        .and_then(|m| cli::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return output::clap_error(&e, &output::verb(&command, &args)),
    };
    let command = match cli.command {
        Some(c) => c,
        // `agent` alone: the interactive session on a terminal, else the help.
        None if commands::chat::on_a_terminal() => {
            let chat = command
                .try_get_matches_from(["agent", "chat"])
                .and_then(|m| cli::Cli::from_arg_matches(&m));
            match chat {
                Ok(cli::Cli {
                    command: Some(c), ..
                }) => c,
                Ok(_) => return Exit::Usage.into(),
                Err(e) => return output::clap_error(&e, "agent chat"),
            }
        }
        None => {
            let mut help = command;
            let _ = help.print_help();
            return Exit::Usage.into();
        }
    };
    let result = match command {
        cli::Command::Permissions(cmd) => commands::permissions::run(cmd),
        cli::Command::Trust(args) => commands::trust::run(&args),
        cli::Command::Hooks(cmd) => commands::hooks::run(cmd),
        cli::Command::Sandbox(cmd) => commands::sandbox::run(cmd),
        cli::Command::Sessions(args) => commands::sessions::run(args),
        cli::Command::Workspace(args) => commands::workspace::run(args),
        cli::Command::Tool(args) => commands::tool::run(args),
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Chat(args) => commands::chat::run(args),
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
