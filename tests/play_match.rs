//! End-to-end tests of `camelot match` and `camelot play`: the output contract (the score line)
//! and a terminal game driven through standard input.

mod common;

use common::camelot;

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn camelot_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_camelot"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("stdin is piped").write_all(input.as_bytes()).expect("input written");
    child.wait_with_output().expect("the binary finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

/// Reads `score: S% (W/D/L w/d/l) +- H` into its five numbers.
fn score_line(line: &str) -> Option<(f64, u32, u32, u32, f64)> {
    let rest = line.strip_prefix("score: ")?;
    let (score, rest) = rest.split_once("% (W/D/L ")?;
    let (wdl, half) = rest.split_once(") +- ")?;
    let mut parts = wdl.split('/').map(|n| n.parse::<u32>().ok());
    let (w, d, l) = (parts.next()??, parts.next()??, parts.next()??);
    let one_decimal = |s: &str| s.split_once('.').is_some_and(|(_, f)| f.len() == 1);
    if !one_decimal(score) || !one_decimal(half) {
        return None;
    }
    Some((score.parse().ok()?, w, d, l, half.parse().ok()?))
}

#[test]
fn match_ends_with_the_score_line_and_is_reproducible() {
    let args = ["match", "--variant", "cam", "greedy", "random", "--games", "6", "--threads", "2", "--seed", "5"];
    let out = camelot(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().expect("output");
    let (score, w, d, l, half) = score_line(last).unwrap_or_else(|| panic!("bad score line `{last}`"));
    assert_eq!(w + d + l, 6);
    assert!((score - (w as f64 + 0.5 * d as f64) / 6.0 * 100.0).abs() < 0.051);
    assert!((0.0..=50.0).contains(&half));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("game ")).count(), 6);
    // Same seed, other thread count: the same games.
    let again =
        camelot(&["match", "--variant", "cam", "greedy", "random", "--games", "6", "--threads", "1", "--seed", "5"]);
    assert_eq!(text(&again.stdout).lines().skip(1).collect::<Vec<_>>(), stdout.lines().skip(1).collect::<Vec<_>>());
}

#[test]
fn match_refuses_a_bad_spec_naming_the_key() {
    let out = camelot(&["match", "--variant", "cam", "alphabeta:depht=3", "random", "--games", "2"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("depht") && err.contains("player A"), "{err}");
    let out = camelot(&["match", "--variant", "cam", "random", "human", "--games", "2"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("camelot play"));
}

#[test]
fn play_human_against_random_through_stdin() {
    // Cam: White's men stand on rank 5, Black's on rank 9, so after one move each nothing can
    // be captured and White's second move D5-D6 is legal whatever Black played.
    let input = "help\nmoves\nC4\nb5-b6\nundo\nB5B6\nd5-d6\nresign\n";
    let out = camelot_with_input(
        &["play", "--variant", "cam", "--white", "human", "--black", "random", "--seed", "3"],
        input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("    A B C D E F G"), "the board is drawn with coordinates:\n{stdout}");
    assert!(stdout.contains("commands:"), "help is printed");
    assert!(stdout.contains("54 legal moves:"), "moves are listed:\n{stdout}");
    assert!(stdout.contains("`C4` could be any of: C4-A6"), "ambiguous input lists candidates:\n{stdout}");
    assert!(stdout.contains("white plays B5-B6"));
    assert!(stdout.contains("took back B5-B6 "), "undo takes back both moves:\n{stdout}");
    assert!(stdout.contains("white plays D5-D6"));
    assert_eq!(stdout.matches("black (random) plays").count(), 3, "{stdout}");
    let last = stdout.lines().last().expect("output");
    assert!(last.starts_with("1.B5-B6 ") && last.ends_with(" 0-1"), "the record ends the game: `{last}`");
    assert!(stdout.contains("white resigns: black wins"));
}

#[test]
fn play_shows_the_engines_evaluation_and_line() {
    let input = "d5-d6\nquit\n";
    let args = ["play", "--variant", "cam", "--white", "human", "--black", "alphabeta:depth=2"];
    let out = camelot_with_input(&args, input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("black (alphabeta:depth=2) plays "), "{stdout}");
    assert!(stdout.contains("  evaluation "), "{stdout}");
    assert!(stdout.contains("  line "), "{stdout}");
    assert!(stdout.contains("game left unfinished"));
}

#[test]
fn play_between_two_engines_runs_to_the_end() {
    let out = camelot_with_input(&["play", "--variant", "camette", "--white", "greedy", "--black", "random"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("game over: "), "{stdout}");
}
