//! End-to-end tests of the `camelot` binary's rules commands: the exact output contract that
//! outside tools rely on.

mod common;

use common::camelot;

use std::process::Output;

const START: &str = "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0 0 1";

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("utf-8 output")
}

#[test]
fn perft_last_line_is_the_count() {
    let out = camelot(&["perft", "--variant", "camelot", "--set", "charge_rule=final", "--depth", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().last(), Some("10026"));
}

#[test]
fn perft_divide_lists_each_root_move_then_the_total() {
    let out = camelot(&["perft", "--set", "charge_rule=final", "--depth", "2", "--divide"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    let sum: u64 = lines[..100]
        .iter()
        .map(|l| l.split('\t').nth(1).and_then(|c| c.parse::<u64>().ok()).expect("MOVE<TAB>COUNT"))
        .sum();
    assert_eq!(sum, 10026);
    assert_eq!(lines[100], "10026");
    let mut sorted = lines[..100].to_vec();
    sorted.sort();
    assert_eq!(sorted, lines[..100]);
}

#[test]
fn moves_prints_sorted_move_and_cpn_pairs() {
    let out = camelot(&["moves", "--variant", "camelot", "--position", START]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 100);
    let moves: Vec<&str> = lines.iter().map(|l| l.split('\t').next().expect("move")).collect();
    let mut sorted = moves.clone();
    sorted.sort();
    assert_eq!(moves, sorted);
    // The knight on C6 canters over D7 to E8; E8-G8 would need a piece on F8.
    let canter = lines.iter().find(|l| l.starts_with("C6-E8\t")).expect("the canter C6-E8 is listed");
    assert_eq!(
        canter.split('\t').nth(1),
        Some("2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/4K7/3KMMMMK3/3MMMMMMK2/12/12/10/8/2 b 0/0 1 1")
    );
    assert!(!moves.contains(&"C6-E8-G8"));
}

#[test]
fn moves_on_a_finished_game_prints_nothing_and_says_why() {
    // Camette: White's man stands in Black's one-square castle after White's move.
    let out = camelot(&["moves", "--variant", "camette", "--position", "M/1k1/1mmm1/5/2MM1/1K1/1 b - 0 3"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("white wins"), "{}", stderr(&out));
}

#[test]
fn apply_accepts_numbers_annotations_and_any_path() {
    let out = camelot(&["apply", "1.D6-F8", "1....H11-F9!", "2.C6-E8-G8?!", "J11-H11"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = stdout(&out);
    // The same moves as bare canonical moves give the same position.
    let bare = camelot(&["apply", "--position", START, "D6-F8", "H11-F9", "C6-E8-G8", "J11-H11"]);
    assert_eq!(after, stdout(&bare));
    assert!(after.trim_end().ends_with("w 0/0 4 3"), "{after}");
    // Lone move numbers, as in a pasted record, are checked and skipped.
    let numbered = camelot(&["apply", "1.", "D6-F8", "1....", "H11-F9", "2.", "C6-E8-G8", "J11-H11"]);
    assert_eq!(stdout(&numbered), after);
    let wrong = camelot(&["apply", "1.", "D6-F8", "2.", "H11-F9"]);
    assert!(!wrong.status.success());
    assert!(stderr(&wrong).contains("move 3"), "{}", stderr(&wrong));
}

#[test]
fn apply_refuses_an_illegal_move_with_its_index_and_reason() {
    let out = camelot(&["apply", "D6-F8", "H11-F9", "C6-C8-C10"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("move 3"), "{err}");
    assert!(err.contains("C6-C8-C10"), "{err}");
    assert!(err.contains("no friendly piece on C7 to canter over"), "{err}");

    let out = camelot(&["apply", "2.D6-F8"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("move 1"), "{}", stderr(&out));
}

#[test]
fn malformed_positions_and_flags_are_refused_by_name() {
    let out = camelot(&[
        "moves",
        "--position",
        "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK3/12/12/10/8/2 w 0/0",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("rank 6"), "{}", stderr(&out));
    let out = camelot(&["perft", "--set", "charge_rule=sometimes", "--depth", "1"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("charge_rule"), "{}", stderr(&out));
    let out = camelot(&["perft", "--variant", "chess", "--depth", "1"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("unknown variant"), "{}", stderr(&out));
}

#[test]
fn show_draws_coordinates_and_pieces() {
    let out = camelot(&["show", "--variant", "cam"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("A B C D E F G"), "{text}");
    let rank_5 = text.lines().find(|l| l.starts_with(" 5 ")).expect("rank 5 is drawn");
    assert_eq!(rank_5.split_whitespace().collect::<Vec<_>>(), ["5", ".", "M", "M", "M", "M", "M", ".", "5"]);
    assert!(text.contains("white to move"));
}

#[test]
fn bench_playouts_reports_games_per_second_last() {
    let out = camelot(&["bench", "playouts", "--variant", "cam", "--games", "20", "--threads", "2", "--seed", "7"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let last = text.lines().last().expect("output");
    assert!(last.ends_with(" games/s"), "{last}");
    assert!(text.contains("20 games"), "{text}");
    // Same seed, same games: the result line repeats exactly.
    let again = camelot(&["bench", "playouts", "--variant", "cam", "--games", "20", "--threads", "2", "--seed", "7"]);
    let results = |t: &str| t.lines().find(|l| l.starts_with("results:")).map(str::to_string);
    assert_eq!(results(&text), results(&stdout(&again)));
}

#[test]
fn a_closed_or_full_standard_output_is_a_quiet_exit_or_one_error_not_a_panic() {
    common::check_closed_and_full_stdout(&["moves", "--position", START]);
    common::check_closed_and_full_stdout(&["perft", "--depth", "1", "--divide"]);
    common::check_closed_and_full_stdout(&["show"]);
    common::check_closed_and_full_stdout(&["apply", "D6-F8"]);
    let dir = common::temp_dir("cli", "ratings");
    let arena = dir.join("arena");
    let arena = arena.to_str().expect("utf-8 path");
    let out = random_v_greedy_arena(arena);
    assert!(out.status.success(), "{}", stderr(&out));
    common::check_closed_and_full_stdout(&["ratings", arena]);
}

#[test]
fn counters_written_can_be_read_back_and_counts_have_one_spelling() {
    // Black's move at the largest move number: the counter stays where the reader takes it.
    let at_limit = "1/1M1/5/5/m4/3/1 b - 0 999999999";
    let out = camelot(&["moves", "--variant", "camette", "--position", at_limit]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let after = text.lines().next().and_then(|l| l.split('\t').nth(1)).expect("a move and its CPN");
    assert!(after.ends_with(" 999999999"), "{after}");
    let again = camelot(&["show", "--variant", "camette", "--position", after]);
    assert!(again.status.success(), "{}", stderr(&again));

    let padded = camelot(&["show", "--variant", "camette", "--position", "1/1M1/005/5/m4/3/1 w - 0 1"]);
    assert!(!padded.status.success());
    assert!(stderr(&padded).contains("empty-square count `005` has a leading zero"), "{}", stderr(&padded));
}

#[test]
fn errors_name_the_real_limit_and_the_os_error_once() {
    let out = camelot(&["init-net", "--variant", "camette", "--blocks", "300", "--out", "/nonexistent/x"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("blocks must be between 1 and 256, not 300"), "{}", stderr(&out));

    let dir = common::temp_dir("cli", "os-error");
    let file = dir.join("a-file");
    std::fs::write(&file, b"not a directory").expect("write");
    let under_file = file.join("out");
    let under_file = under_file.to_str().expect("utf-8 path");
    let out = random_v_greedy_arena(under_file);
    assert!(!out.status.success());
    assert_eq!(stderr(&out).matches("(os error").count(), 1, "{}", stderr(&out));
}

/// A round of `random` against `greedy` on Camette into `out`: a fast arena.
fn random_v_greedy_arena(out: &str) -> Output {
    camelot(&["arena", "--variant", "camette", "--players", "random", "greedy", "--games-per-pair", "2", "--out", out])
}
