//! Standard output and standard error without panics. `println!` panics when the write fails,
//! and a write fails whenever output goes to a pipe closed early (`camelot games | head -1`) or
//! to a full disk; these write through a locked handle and return the error instead, which
//! `main` turns into a quiet exit (a closed pipe) or a one-line error (anything else).

use camelot_frontend::FrontendError;
use std::fmt;
use std::io::{self, Write};

/// Writes `args` to standard output and flushes it, so that a failure shows here and not at
/// exit (where the standard library drops it).
pub fn write_stdout(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args).and_then(|()| out.flush()).map_err(|e| anyhow::Error::new(e).context("writing standard output"))
}

/// Writes `args` to standard error. A failure is dropped: there is nowhere left to report it.
pub fn write_stderr(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// Whether `err` comes from writing to a pipe whose reader has gone: on a command line that is
/// the reader saying it has seen enough, not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    let broken = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    err.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().is_some_and(broken)
            || matches!(cause.downcast_ref::<FrontendError>(), Some(FrontendError::Io { error, .. }) if broken(error))
    })
}

/// `print!` that returns `anyhow::Result<()>` instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::write_stdout(format_args!($($arg)*)) };
}

/// `println!` that returns `anyhow::Result<()>` instead of panicking.
macro_rules! outln {
    () => { $crate::cli::output::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::output::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` that drops a failed write instead of panicking.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::output::write_stderr(format_args!("{}\n", format_args!($($arg)*))) };
}
