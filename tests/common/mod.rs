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

/// Saves an untrained 1x8 network of `variant` as the checkpoint `out` (fast to make and play).
pub fn tiny_net(variant: &str, out: &std::path::Path) -> Output {
    let out = out.to_str().expect("a UTF-8 path");
    camelot(&["init-net", "--variant", variant, "--blocks", "1", "--channels", "8", "--out", out])
}

/// Runs `camelot args` twice, its standard output first on a pipe whose reader has already
/// gone (`| head` that has read enough), then on `/dev/full` (a full disk), and checks what a
/// command line expects: a quiet exit for the pipe, one error line naming standard output for
/// the full disk, never a panic. Each run is killed if it takes over a minute.
pub fn check_closed_and_full_stdout(args: &[&str]) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let closed = run_within(args, writer.into(), std::time::Duration::from_secs(60));
    let err = String::from_utf8_lossy(&closed.stderr);
    assert!(closed.status.success(), "{args:?} into a closed pipe: {:?}\n{err}", closed.status);
    assert!(!err.contains("panicked") && !err.contains("error"), "{args:?} into a closed pipe: {err}");

    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let out = run_within(args, full.into(), std::time::Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?} into /dev/full: {err}");
    assert!(!err.contains("panicked"), "{args:?} into /dev/full: {err}");
    let last = err.lines().last().unwrap_or("");
    assert_eq!(
        last, "error: writing standard output: No space left on device (os error 28)",
        "{args:?} into /dev/full: {err}"
    );
}

/// Runs `camelot args` with `stdout`, killed after `limit`.
fn run_within(args: &[&str], stdout: std::process::Stdio, limit: std::time::Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_camelot"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let started = std::time::Instant::now();
    while child.try_wait().expect("waiting for the binary").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{args:?} did not end within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().expect("the binary's output")
}
