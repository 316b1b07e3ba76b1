//! Runs a `wasm32-wasip1` module as one `Command(argv)` in a workspace directory, passing this
//! process's stdin through and printing the guest's stdout and stderr, then its exit status and
//! metadata on stderr.
//!
//! ```text
//! cargo run -p agent-wasi --example run -- MODULE.wasm WORKSPACE ARGV0 [ARGS...]
//! ```
//!
//! The example hashes the module itself; in the agent the digest comes from the bundle's signed
//! manifest. Set `AGENT_WASI_CACHE` to a directory to use the disk cache.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use agent_wasi::{CommandInput, Input, Output, Runtime, RuntimeConfig};
use sha2::{Digest, Sha256};

fn main() -> ExitCode {
    match run() {
        Ok(code) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "run: error: {err}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<i32, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: run MODULE.wasm WORKSPACE ARGV0 [ARGS...]";
    let module_path = PathBuf::from(args.next().ok_or(usage)?);
    let workspace = PathBuf::from(args.next().ok_or(usage)?);
    let argv: Vec<String> = args.collect();
    if argv.is_empty() {
        return Err(usage.into());
    }

    let wasm = std::fs::read(&module_path)?;
    let sha256: String = Sha256::digest(&wasm)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let mut config = RuntimeConfig::default();
    if let Some(dir) = std::env::var_os("AGENT_WASI_CACHE") {
        config = config.with_cache_dir(dir);
    }
    let runtime = Runtime::new(config)?;
    let module = runtime.prepare(&wasm, &sha256)?;
    let input = CommandInput::new(argv)
        .with_stdin(Input::Reader(Box::new(std::io::stdin())))
        .with_stdout(Output::Writer(Box::new(std::io::stdout())))
        .with_stderr(Output::Writer(Box::new(std::io::stderr())));
    let output = runtime.run(&module, input, &workspace)?;
    writeln!(
        std::io::stderr(),
        "exit {} in {:?}; {:?}",
        output.exit_code,
        output.duration,
        output.meta
    )?;
    Ok(output.exit_code)
}
