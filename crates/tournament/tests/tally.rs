//! The score tally: score, 95% interval and the summary line on known results.

use camelot_tournament::Tally;

#[test]
fn score_and_interval_on_known_results() {
    let tally = |wins, draws, losses| Tally { wins, draws, losses };
    // 39/0/1: mean 0.975, per-game variance 0.975 * 0.025, half-width 1.96 * sqrt(v / 40).
    let t = tally(39, 0, 1);
    assert!((t.score() - 0.975).abs() < 1e-12);
    assert!((t.interval95() - 1.96 * (0.975f64 * 0.025 / 40.0).sqrt()).abs() < 1e-12);
    assert_eq!(t.summary_line(), "score: 97.5% (W/D/L 39/0/1) +- 4.8");
    // Draws sit at the mean: 10/10/0 has mean 0.75 and variance 0.0625.
    assert_eq!(tally(10, 10, 0).summary_line(), "score: 75.0% (W/D/L 10/10/0) +- 11.0");
    assert_eq!(tally(20, 0, 20).summary_line(), "score: 50.0% (W/D/L 20/0/20) +- 15.5");
    assert_eq!(tally(0, 40, 0).summary_line(), "score: 50.0% (W/D/L 0/40/0) +- 0.0");
    assert_eq!(tally(40, 0, 0).summary_line(), "score: 100.0% (W/D/L 40/0/0) +- 0.0");
    assert_eq!(tally(0, 0, 0).summary_line(), "score: 0.0% (W/D/L 0/0/0) +- 0.0");
    let mut t = Tally::default();
    for s in [1.0, 0.5, 0.0, 1.0] {
        t.add(s);
    }
    assert_eq!((t.wins, t.draws, t.losses), (2, 1, 1));
}
