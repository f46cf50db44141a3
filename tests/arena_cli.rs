//! End-to-end tests of `camelot arena`, `camelot ratings` and `camelot sprt` through the built
//! binary: a round robin with a checkpoint player on `cam`, resumed after a crash without
//! replaying a game, the ratings table and its plot, and an SPRT that must accept H1.

mod common;

use common::{camelot, temp_dir};

use std::path::Path;

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8 output")
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// The data lines of a results file (header left out).
fn result_lines(path: &Path) -> Vec<String> {
    let content = std::fs::read_to_string(path).expect("results.csv readable");
    content.lines().skip(1).map(str::to_string).collect()
}

fn sorted(mut lines: Vec<String>) -> Vec<String> {
    lines.sort();
    lines
}

#[test]
fn arena_resumes_after_a_crash_and_ratings_print_the_table_and_plot() {
    let dir = temp_dir("arena-cli", "round-robin");
    let model = dir.join("models/000000");
    let out = camelot(&["init-net", "--variant", "cam", "--blocks", "1", "--channels", "8", "--out", utf8(&model)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let network = format!("mcts:model={},sims=8", utf8(&model));
    let arena_dir = dir.join("arena");
    let players = ["random", "greedy", "alphabeta:depth=1", network.as_str()];
    let arena = |threads: &str| {
        let mut args = vec!["arena", "--variant", "cam", "--players"];
        args.extend(players);
        args.extend([
            "--games-per-pair",
            "2",
            "--threads",
            threads,
            "--seed",
            "4",
            "--max-plies",
            "150",
            "--out",
            utf8(&arena_dir),
        ]);
        let out = camelot(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let results = arena_dir.join("results.csv");
    let first = arena("2");
    assert!(first.contains("12 games scheduled, 0 already in"), "{first}");
    let complete = result_lines(&results);
    assert_eq!(complete.len(), 12, "6 pairings x 2 games");
    assert!(complete.iter().any(|l| l.contains("mcts:model=")), "the network played");

    // The same command again replays nothing.
    let again = arena("2");
    assert!(again.contains("12 games scheduled, 12 already in") && again.contains("0 to play"), "{again}");
    assert_eq!(result_lines(&results), complete);

    // A crash: only the first five games reached the file, the sixth was torn mid-line. The
    // rerun (on another thread count) plays exactly the seven missing games, identical to the
    // first run's.
    let content = std::fs::read_to_string(&results).expect("readable");
    let lines: Vec<&str> = content.lines().collect();
    let torn = &lines[6][..lines[6].len() / 2];
    std::fs::write(&results, format!("{}\n{torn}", lines[..6].join("\n"))).expect("truncated");
    let resumed = arena("1");
    assert!(resumed.contains("12 games scheduled, 5 already in") && resumed.contains("7 to play"), "{resumed}");
    assert_eq!(sorted(result_lines(&results)), sorted(complete.clone()), "same games, none twice, no torn line");

    let plot = dir.join("elo.png");
    let out = camelot(&["ratings", utf8(&arena_dir), "--plot", utf8(&plot)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let mut rated = Vec::new();
    for spec in players {
        let line = table.lines().find(|l| l.split_whitespace().next() == Some(spec)).unwrap_or_else(|| {
            panic!("no line for {spec} in\n{table}");
        });
        let fields: Vec<&str> = line.split_whitespace().collect();
        let elo: f64 = fields[1].parse().unwrap_or_else(|_| panic!("Elo in `{line}`"));
        let ci: f64 =
            fields[2].strip_prefix("+-").and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("+-CI in `{line}`"));
        // The anchor is fixed at 0, so its interval is empty; every other one is not.
        assert!(ci.is_finite() && (ci > 0.0 || spec == "random"), "{line}");
        rated.push((spec, elo));
    }
    assert_eq!(table.lines().take_while(|l| !l.is_empty()).count(), players.len(), "one line per player first");
    assert_eq!(rated.iter().find(|(s, _)| *s == "random").map(|r| r.1), Some(0.0), "random anchors at 0");
    assert!(table.contains("anchor random = 0"), "{table}");
    let png = std::fs::read(&plot).expect("the plot is written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000, "a PNG image");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sprt_accepts_h1_for_a_strong_player_over_a_weak_one() {
    let dir = temp_dir("arena-cli", "sprt");
    let out = camelot(&[
        "sprt",
        "--variant",
        "cam",
        "alphabeta:depth=2",
        "random",
        "--elo0",
        "0",
        "--elo1",
        "200",
        "--alpha",
        "0.05",
        "--beta",
        "0.05",
        "--max-pairs",
        "60",
        "--threads",
        "2",
        "--max-plies",
        "200",
        "--out",
        utf8(&dir),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let llr: Vec<f64> =
        stdout.lines().filter_map(|l| l.split_once(" LLR ")?.1.split_whitespace().next()?.parse().ok()).collect();
    assert!(!llr.is_empty(), "LLR lines as it goes:\n{stdout}");
    assert_eq!(stdout.lines().last(), Some("H1 accepted"), "{stdout}");
    // ln((1 - beta) / alpha) = ln 19: the last LLR crossed it, the ones before did not.
    let upper = (0.95f64 / 0.05).ln();
    assert!(*llr.last().expect("one") >= upper - 1e-3, "{llr:?}");
    assert!(llr[..llr.len() - 1].iter().all(|x| *x < upper), "{llr:?}");
    // Every counted pair is recorded.
    assert_eq!(result_lines(&dir.join("results.csv")).len(), 2 * llr.len());
    let _ = std::fs::remove_dir_all(&dir);
}
