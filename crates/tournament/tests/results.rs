//! The results file: round trips (specs with commas included), a torn last line is ignored and
//! cut before the next append, a game is never recorded twice, bad rows name file, line and
//! column.

use camelot_tournament::{read_results, GameResult, ResultRow, ResultsFile, RESULTS_HEADER};
use std::io::Write;
use std::path::PathBuf;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("camelot-tournament-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn row(opening: u32, result: GameResult) -> ResultRow {
    ResultRow {
        variant: "camelot".to_string(),
        white: "mcts:model=runs/x/models/000017,sims=200".to_string(),
        black: "alphabeta:depth=2".to_string(),
        result,
        plies: 57,
        reason: "White wins: \"two squares\", castle".to_string(),
        seed: 9,
        opening,
        moves: "1.I8-J9 H11-H10 1-0".to_string(),
    }
}

#[test]
fn rows_round_trip_and_are_never_duplicated() {
    let dir = temp_dir("roundtrip");
    let path = dir.join("results.csv");
    let mut file = ResultsFile::open(&path).expect("creates");
    assert!(file.append(&row(0, GameResult::WhiteWins)).unwrap());
    assert!(file.append(&row(1, GameResult::Draw)).unwrap());
    assert!(!file.append(&row(1, GameResult::BlackWins)).unwrap(), "same key: refused");
    drop(file);
    let rows = read_results(&path).expect("reads");
    assert_eq!(rows, vec![row(0, GameResult::WhiteWins), row(1, GameResult::Draw)]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(&format!("{RESULTS_HEADER}\n")));
    // Reopening sees the rows and still refuses their keys.
    let mut again = ResultsFile::open(&path).unwrap();
    assert_eq!(again.rows().len(), 2);
    assert!(!again.append(&row(0, GameResult::Draw)).unwrap());
    assert!(read_results(&dir.join("missing.csv")).unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_last_line_is_ignored_then_cut() {
    let dir = temp_dir("torn");
    let path = dir.join("results.csv");
    let mut file = ResultsFile::open(&path).unwrap();
    file.append(&row(0, GameResult::WhiteWins)).unwrap();
    drop(file);
    let full = row(1, GameResult::Draw).to_line();
    let mut raw = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    raw.write_all(&full.as_bytes()[..full.len() / 2]).unwrap();
    drop(raw);
    assert_eq!(read_results(&path).unwrap().len(), 1, "the torn line is not a row");
    let mut file = ResultsFile::open(&path).unwrap();
    assert!(file.append(&row(1, GameResult::Draw)).unwrap(), "the torn game was never recorded");
    drop(file);
    assert_eq!(read_results(&path).unwrap(), vec![row(0, GameResult::WhiteWins), row(1, GameResult::Draw)]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_rows_name_the_line_and_column() {
    let dir = temp_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("results.csv");
    let good = row(0, GameResult::WhiteWins).to_line();
    std::fs::write(&path, format!("{RESULTS_HEADER}\n{good}camelot,a,b,2-0,5,,1,0,\n")).unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains("results.csv:3") && e.contains("`result`") && e.contains("2-0"), "{e}");
    std::fs::write(&path, format!("{RESULTS_HEADER}\ncamelot,a,b,1-0,many,,1,0,\n")).unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains(":2") && e.contains("`plies`"), "{e}");
    std::fs::write(&path, "white,black\n").unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains(":1") && e.contains("header"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_header_is_the_row_types_field_names() {
    // Serialising a row with serde's field names as the header gives exactly the documented
    // header: the column names live in one place, the struct.
    let mut writer = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    writer.serialize(row(0, GameResult::WhiteWins)).unwrap();
    let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
    let expected = format!("{RESULTS_HEADER}\n{}", row(0, GameResult::WhiteWins).to_line());
    assert_eq!(text, expected);
    // Specs with commas are quoted; the reason's quotes are doubled.
    assert!(text.contains("\"mcts:model=runs/x/models/000017,sims=200\""), "{text}");
    assert!(text.contains("\"White wins: \"\"two squares\"\", castle\""), "{text}");
}

#[test]
fn bad_numbers_and_empty_players_are_named() {
    let dir = temp_dir("numbers");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("results.csv");
    std::fs::write(&path, format!("{RESULTS_HEADER}\ncamelot,a,b,1-0,5,,1,99999999999,\n")).unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains(":2") && e.contains("`opening`") && e.contains("too large"), "{e}");
    std::fs::write(&path, format!("{RESULTS_HEADER}\ncamelot,,b,1-0,5,,1,0,\n")).unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains(":2") && e.contains("`white` is empty"), "{e}");
    std::fs::write(&path, format!("{RESULTS_HEADER}\ncamelot,a,b,1-0,5,,1\n")).unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains(":2") && e.contains("7 columns"), "{e}");
    // Spaces around numbers are accepted, as before.
    std::fs::write(&path, format!("{RESULTS_HEADER}\ncamelot,a,b,1-0, 5 ,,1,0,\n")).unwrap();
    assert_eq!(read_results(&path).unwrap()[0].plies, 5);
    let _ = std::fs::remove_dir_all(&dir);
}
