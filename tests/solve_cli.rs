//! End-to-end tests of `camelot solve` and `camelot bench optimal` on small tables and
//! positions files (the full Camette solve takes minutes and is not run here).

mod common;

use camelot_rules::Ruleset;
use camelot_solver::{solve, write_table, Quiet};
use common::{camelot, temp_dir};
use std::process::Output;

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// White man C6, Black man A3, White to move: C6-C7 wins at once; B6 and D6 win in 3.
const RACE: &str = "1/1M1/5/5/m4/3/1 w - 0 1";

#[test]
fn solve_refuses_big_boards_and_existing_files() {
    let out = camelot(&["solve", "--variant", "cam"]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("cannot be solved"), "{err}");
    let dir = temp_dir("solve", "exists");
    let path = dir.join("t.table");
    std::fs::write(&path, b"keep me").expect("write");
    let out = camelot(&["solve", "--variant", "camette", "--out", path.to_str().expect("utf-8")]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&path).expect("still there"), b"keep me");
}

#[test]
fn a_table_on_disk_answers_a_position_with_its_value_keeping_moves() {
    let rules = Ruleset::variant("camette").expect("camette");
    let root = rules.parse_cpn(RACE).expect("cpn");
    let (table, _) = solve(&rules, &[root], &mut Quiet).expect("solves");
    let dir = temp_dir("solve", "probe");
    let path = dir.join("race.table");
    write_table(&table, &path, false).expect("writes");
    let p = path.to_str().expect("utf-8");
    let out = camelot(&["solve", "--variant", "camette", "--table", p, "--position", RACE]);
    let (stdout, err) = text(&out);
    assert!(out.status.success(), "{err}");
    assert!(stdout.contains("win in 1 plies (White wins in 1 plies)"), "{stdout}");
    assert!(stdout.contains("C6-B5") && stdout.contains("loss in 4 plies"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("value-keeping moves: C6-B6 C6-C7 C6-D6"));
    // A position the table does not hold is refused by name.
    let out = camelot(&["solve", "--variant", "camette", "--table", p, "--position", "1/1k1/5/5/MMM2/3/1 w - 0 1"]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("not in the table"), "{err}");
}

#[test]
fn bench_optimal_scores_a_player_by_value_class() {
    let dir = temp_dir("solve", "optimal");
    let path = dir.join("p.jsonl");
    let lines = [
        format!(r#"{{"cpn":"{RACE}","value":"win","plies":1,"keeping":["C6-B6","C6-C7","C6-D6"],"legal":6,"source":"hand","ply":0}}"#),
        r#"{"cpn":"1/1M1/5/5/m4/3/1 b - 0 1","value":"loss","plies":2,"keeping":["A3-A4","A3-B2","A3-B3","A3-B4"],"legal":4,"source":"hand","ply":0}"#.to_string(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    let p = path.to_str().expect("utf-8");
    let out = camelot(&["bench", "optimal", "--variant", "camette", "--positions", p, "--player", "alphabeta:depth=2"]);
    let (stdout, err) = text(&out);
    assert!(out.status.success(), "{err}");
    assert!(stdout.contains("won       1 positions, value kept 100.0%"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("value kept: 100.0% of 2 positions (decided: 100.0%)"));
    // A record whose only keeping move is not a move: every choice misses it, and `--misses`
    // writes the record with its line and the move chosen; the loss still counts by result.
    let missed = dir.join("missed.jsonl");
    let wrong = lines[0].replace(r#"["C6-B6","C6-C7","C6-D6"]"#, r#"["A1-A2"]"#);
    std::fs::write(&path, [lines[1].clone(), wrong].join("\n") + "\n").expect("write");
    let m = missed.to_str().expect("utf-8");
    let args = ["bench", "optimal", "--variant", "camette", "--positions", p, "--player", "alphabeta:depth=2"];
    let out = camelot(&[&args[..], &["--misses", m]].concat());
    let (stdout, err) = text(&out);
    assert!(out.status.success(), "{err}");
    assert!(stdout.contains("1 positions where the move did not keep the value"), "{stdout}");
    assert!(stdout.contains("every move of a lost position counts): 50.0%"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("value kept: 50.0% of 2 positions (decided: 50.0%)"));
    let written = std::fs::read_to_string(&missed).expect("the misses file");
    let record: serde_json::Value = serde_json::from_str(written.trim()).expect("one JSON line");
    assert_eq!(record["line"], 2, "{written}");
    assert_eq!(record["cpn"], RACE, "{written}");
    let chosen = record["chosen"].as_str().unwrap_or("");
    assert!(["C6-B6", "C6-C7", "C6-D6"].contains(&chosen), "{written}");
    // An existing misses file is not replaced without --force.
    let again = camelot(&[&args[..], &["--misses", m]].concat());
    assert!(!again.status.success() && text(&again).1.contains("--force"), "{}", text(&again).1);
    let forced = camelot(&[&args[..], &["--misses", m, "--force"]].concat());
    assert!(forced.status.success(), "{}", text(&forced).1);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    // A line that is not a record is refused with its line number.
    std::fs::write(&path, lines[0].clone() + "\n{\"cpn\": 3}\n").expect("write");
    let out = camelot(&["bench", "optimal", "--variant", "camette", "--positions", p, "--player", "random"]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains("p.jsonl:2"), "{err}");
}

#[test]
fn the_checked_in_positions_file_is_read_by_bench_optimal() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/camette-solved.jsonl");
    let out = camelot(&["bench", "optimal", "--variant", "camette", "--positions", path, "--player", "greedy"]);
    let (stdout, err) = text(&out);
    assert!(out.status.success(), "{err}");
    let last = stdout.lines().last().unwrap_or("");
    assert!(last.starts_with("value kept: ") && last.contains("% of 2000 positions (decided: "), "{last}");
}
