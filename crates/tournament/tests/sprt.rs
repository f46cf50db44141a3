//! SPRT on simulated matches: its error rates are near alpha and beta, and it moves the right
//! way.

use camelot_tournament::sprt::{logistic_elo, logistic_score};
use camelot_tournament::{Sprt, SprtConfig, SprtStatus};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One game's score for A with expected score `s` and draw rate `draws`.
fn game(rng: &mut ChaCha8Rng, s: f64, draws: f64) -> f64 {
    let u: f64 = rng.random();
    let win = s - draws / 2.0;
    if u < win {
        1.0
    } else if u < win + draws {
        0.5
    } else {
        0.0
    }
}

/// Runs one test against a player `elo` stronger; returns the verdict and the pairs used.
fn run(config: SprtConfig, elo: f64, rng: &mut ChaCha8Rng) -> (SprtStatus, u64) {
    let s = logistic_score(elo);
    // White's edge moves each game's expectation, not the pair's.
    let edge = 0.06;
    let mut test = Sprt::new(config);
    loop {
        test.add_pair(game(rng, s + edge, 0.3), game(rng, s - edge, 0.3));
        let status = test.status();
        if status != SprtStatus::Continue || test.pairs() > 100_000 {
            return (status, test.pairs());
        }
    }
}

#[test]
fn error_rates_are_near_alpha_and_beta() {
    let config = SprtConfig { elo0: 0.0, elo1: 30.0, alpha: 0.05, beta: 0.05 };
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let trials = 300;
    let false_h1 = (0..trials).filter(|_| run(config, config.elo0, &mut rng).0 == SprtStatus::AcceptH1).count();
    let false_h0 = (0..trials).filter(|_| run(config, config.elo1, &mut rng).0 == SprtStatus::AcceptH0).count();
    let (a, b) = (false_h1 as f64 / trials as f64, false_h0 as f64 / trials as f64);
    eprintln!("type I error {a:.3}, type II error {b:.3} over {trials} tests each");
    // Standard error of a rate near 0.05 over 300 trials: 0.0126.
    assert!((0.01..=0.09).contains(&a), "type I error {a}");
    assert!((0.01..=0.09).contains(&b), "type II error {b}");
    // Far from the hypotheses the test decides quickly and correctly.
    for _ in 0..20 {
        let (status, pairs) = run(config, 150.0, &mut rng);
        assert_eq!(status, SprtStatus::AcceptH1);
        assert!(pairs < 400, "{pairs} pairs");
        assert_eq!(run(config, -150.0, &mut rng).0, SprtStatus::AcceptH0);
    }
}

#[test]
fn llr_bounds_and_counts() {
    let config = SprtConfig::default();
    let (lower, upper) = config.bounds();
    assert!((lower - (0.05f64 / 0.95).ln()).abs() < 1e-12);
    assert!((upper - (0.95f64 / 0.05).ln()).abs() < 1e-12);
    let mut test = Sprt::new(config);
    assert_eq!(test.llr(), 0.0);
    for _ in 0..10 {
        test.add_pair(1.0, 0.5);
    }
    assert_eq!(test.counts(), [0, 0, 0, 10, 0]);
    assert!(test.llr() > 0.0);
    let mut losing = Sprt::new(config);
    for _ in 0..10 {
        losing.add_pair(0.0, 0.5);
    }
    assert!(losing.llr() < 0.0);
    assert!(test.summary_line().contains("LLR"));
    assert!((logistic_elo(logistic_score(123.0)) - 123.0).abs() < 1e-6);
    assert!(SprtConfig { elo0: 10.0, elo1: 5.0, ..config }.validate().is_err());
    assert!(SprtConfig { alpha: 0.0, ..config }.validate().is_err());
}
