//! `camelot`: the command line of camelot-zero. Each subcommand lives in its own file under
//! `src/cli/`; this file only dispatches.

mod cli;

use clap::Parser;
use std::io::Write;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // The reader of a pipe has gone (`| head`): it has what it wanted, nothing failed.
        Err(err) if cli::is_broken_pipe(&err) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
