//! Helpers shared by the end-to-end tests of the `camelot` binary. Each test file compiles
//! this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `camelot` binary that `cargo test` built, to completion.
pub fn camelot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_camelot")).args(args).output().expect("the binary runs")
}

/// A fresh, empty directory `PREFIX-NAME-PID` under cargo's temporary directory for tests
/// (one per process, so parallel test binaries never share one).
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs the `camelot` binary in the directory `dir`, to completion.
pub fn camelot_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_camelot")).current_dir(dir).args(args).output().expect("the binary runs")
}
