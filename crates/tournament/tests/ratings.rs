//! Ratings on synthetic players with known Elo: the fit recovers them, and the 95% intervals
//! cover the truth about 95% of the time. The Elo plot of a fit: a PNG of the requested size,
//! written atomically.

use camelot_tournament::generation_of;
use camelot_tournament::{fit_ratings, plot_elo_by_generation, FitOptions, GameResult, ResultRow, TournamentError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn row(white: &str, black: &str, result: GameResult, opening: u32) -> ResultRow {
    ResultRow {
        variant: "camelot".to_string(),
        white: white.to_string(),
        black: black.to_string(),
        result,
        plies: 10,
        reason: String::new(),
        seed: 1,
        opening,
        moves: String::new(),
    }
}

/// Davidson's model with a white advantage: probabilities of white win, draw, black win.
fn probabilities(white: f64, black: f64, advantage: f64, nu: f64) -> [f64; 3] {
    let g = |elo: f64| 10f64.powf(elo / 400.0);
    let (a, b) = (g(white + advantage), g(black));
    let d = nu * (a * b).sqrt();
    let z = a + b + d;
    [a / z, d / z, b / z]
}

/// A round robin of `games` games per ordered pair between players of Elo `elos`.
fn simulate(names: &[&str], elos: &[f64], games: u32, advantage: f64, nu: f64, rng: &mut ChaCha8Rng) -> Vec<ResultRow> {
    let mut rows = Vec::new();
    for (i, wn) in names.iter().enumerate() {
        for (j, bn) in names.iter().enumerate() {
            if i == j {
                continue;
            }
            let p = probabilities(elos[i], elos[j], advantage, nu);
            for k in 0..games {
                let u: f64 = rng.random();
                let result = if u < p[0] {
                    GameResult::WhiteWins
                } else if u < p[0] + p[1] {
                    GameResult::Draw
                } else {
                    GameResult::BlackWins
                };
                rows.push(row(wn, bn, result, k));
            }
        }
    }
    rows
}

#[test]
fn intervals_cover_the_true_elo_about_95_percent_of_the_time() {
    let names = ["random", "greedy", "alphabeta:depth=2", "uct:sims=400"];
    let elos = [0.0, 120.0, 250.0, 400.0];
    let (advantage, nu) = (40.0, 0.8);
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let trials = 200;
    let (mut covered, mut checked, mut adv_covered) = (0, 0, 0);
    let mut mean_error = [0.0; 4];
    for _ in 0..trials {
        let rows = simulate(&names, &elos, 30, advantage, nu, &mut rng);
        let table = fit_ratings(&rows, &FitOptions::default()).expect("the fit converges");
        assert_eq!(table.anchor, "random");
        for (k, name) in names.iter().enumerate() {
            let p = &table.players[table.index_of(name).expect("rated")];
            mean_error[k] += (p.elo - elos[k]) / trials as f64;
            if k == 0 {
                assert_eq!((p.elo, p.ci95), (0.0, 0.0), "the anchor is fixed");
                continue;
            }
            checked += 1;
            if (p.elo - elos[k]).abs() <= p.ci95 {
                covered += 1;
            }
        }
        if (table.white_advantage.0 - advantage).abs() <= table.white_advantage.1 {
            adv_covered += 1;
        }
    }
    let coverage = covered as f64 / checked as f64;
    eprintln!(
        "coverage {coverage:.3} over {checked} estimates; white advantage {:.3}",
        adv_covered as f64 / trials as f64
    );
    assert!((0.92..=0.98).contains(&coverage), "coverage {coverage} over {checked} estimates");
    let adv = adv_covered as f64 / trials as f64;
    assert!((0.90..=0.99).contains(&adv), "white-advantage coverage {adv}");
    for (k, e) in mean_error.iter().enumerate() {
        assert!(e.abs() < 12.0, "player {k}: mean error {e:.1} Elo (biased?)");
    }
}

#[test]
fn los_and_order_follow_the_results() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let rows = simulate(&["a", "b", "c"], &[0.0, 300.0, 310.0], 200, 0.0, 0.5, &mut rng);
    let table = fit_ratings(&rows, &FitOptions::default()).expect("fits");
    // No `random`: the first player is the anchor.
    assert_eq!(table.anchor, "a");
    let (a, b, c) = (table.index_of("a").unwrap(), table.index_of("b").unwrap(), table.index_of("c").unwrap());
    assert!(table.los(b, a) > 0.999 && table.los(a, b) < 0.001);
    assert!((table.los(b, c) + table.los(c, b) - 1.0).abs() < 1e-6);
    assert!(table.los(c, b) > 0.2 && table.los(c, b) < 0.95, "close players: {}", table.los(c, b));
    assert_eq!(table.players[2].spec, "a");
    let text = table.to_text();
    let first = text.lines().next().unwrap();
    let fields: Vec<&str> = first.split_whitespace().collect();
    assert!(fields[0] == "b" || fields[0] == "c", "{first}");
    assert!(fields[1].parse::<f64>().is_ok() && fields[2].starts_with("+-"), "{first}");
    assert!(text.contains("likelihood of superiority"));
}

#[test]
fn a_clean_sweep_stays_finite_and_disconnected_players_are_refused() {
    let rows: Vec<ResultRow> = (0..10)
        .flat_map(|k| [row("uct", "random", GameResult::WhiteWins, k), row("random", "uct", GameResult::BlackWins, k)])
        .collect();
    let table = fit_ratings(&rows, &FitOptions::default()).expect("finite with the prior");
    let uct = &table.players[table.index_of("uct").unwrap()];
    assert!(uct.elo > 300.0 && uct.elo < 2000.0 && uct.ci95.is_finite(), "{uct:?}");
    assert_eq!((uct.wins, uct.draws, uct.losses), (20, 0, 0));

    let mut split = rows.clone();
    split.push(row("x", "y", GameResult::Draw, 0));
    split.push(row("y", "x", GameResult::WhiteWins, 0));
    match fit_ratings(&split, &FitOptions::default()) {
        Err(TournamentError::Disconnected { first, second }) => {
            assert!(first.contains(&"uct".to_string()) && second.contains(&"x".to_string()));
        }
        other => panic!("expected a disconnection error, got {other:?}"),
    }
    let none = fit_ratings(&[], &FitOptions::default());
    assert!(matches!(none, Err(TournamentError::NoGames)), "{none:?}");
}

#[test]
fn generations_come_from_checkpoint_names() {
    assert_eq!(generation_of("mcts:model=runs/x/models/000017,sims=200"), Some(17));
    assert_eq!(generation_of("mcts:model=runs/x/models/000003.safetensors"), Some(3));
    assert_eq!(generation_of("mcts:model=runs/x/latest,sims=200"), None);
    assert_eq!(generation_of("uct:sims=400"), None);
}

#[test]
fn the_plot_is_a_png_of_the_requested_size() {
    let dir = std::env::temp_dir().join(format!("camelot-tournament-plot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let gen = |g: u32| format!("mcts:model=runs/x/models/{g:06},sims=20");
    let mut rows = Vec::new();
    for k in 0..6 {
        rows.push(row(&gen(1), "random", GameResult::WhiteWins, k));
        rows.push(row("random", &gen(1), if k % 2 == 0 { GameResult::Draw } else { GameResult::BlackWins }, k));
        rows.push(row(&gen(2), &gen(1), if k % 3 == 0 { GameResult::Draw } else { GameResult::WhiteWins }, k));
        rows.push(row(&gen(1), &gen(2), GameResult::BlackWins, k));
    }
    let table = fit_ratings(&rows, &FitOptions::default()).expect("fits");
    let path = dir.join("plots").join("elo.png");
    plot_elo_by_generation(&table, &path, 320, 200).expect("draws");
    let bytes = std::fs::read(&path).expect("written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // The IHDR chunk: width and height, big-endian.
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 320);
    assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 200);
    // Drawn again over the old file: replaced, and no temporary file is left.
    plot_elo_by_generation(&table, &path, 200, 100).expect("redraws");
    let names: Vec<_> = std::fs::read_dir(dir.join("plots")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("elo.png")]);

    let baselines = vec![row("greedy", "random", GameResult::WhiteWins, 0)];
    let table = fit_ratings(&baselines, &FitOptions::default()).expect("fits");
    let e = plot_elo_by_generation(&table, &dir.join("none.png"), 100, 100).unwrap_err();
    assert!(matches!(e, TournamentError::NoGenerations), "{e}");
    assert!(!dir.join("none.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_anchor_given_replaces_random_and_the_intervals_are_relative_to_it() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // A chain: random far below greedy, the network far above both and close to depth 2.
    let names = ["random", "greedy", "alphabeta:depth=2", "net"];
    let rows = simulate(&names, &[0.0, 200.0, 1200.0, 1150.0], 60, 0.0, 0.5, &mut rng);
    let by_random = fit_ratings(&rows, &FitOptions::default()).expect("fits");
    let options = FitOptions { anchor: Some("alphabeta:depth=2".into()), ..FitOptions::default() };
    let by_depth2 = fit_ratings(&rows, &options).expect("fits");
    assert_eq!((by_random.anchor.as_str(), by_depth2.anchor.as_str()), ("random", "alphabeta:depth=2"));
    let elo = |t: &camelot_tournament::RatingTable, n: &str| t.players[t.index_of(n).unwrap()].clone();
    // The same differences, shifted.
    let gap = |t: &camelot_tournament::RatingTable| elo(t, "net").elo - elo(t, "alphabeta:depth=2").elo;
    assert!((gap(&by_random) - gap(&by_depth2)).abs() < 1e-6);
    assert_eq!(elo(&by_depth2, "alphabeta:depth=2").elo, 0.0);
    // The network's interval: the whole chain from random, only the direct games from depth 2.
    assert!(
        elo(&by_depth2, "net").ci95 < elo(&by_random, "net").ci95,
        "{:?} {:?}",
        elo(&by_depth2, "net"),
        elo(&by_random, "net")
    );
    let unknown = FitOptions { anchor: Some("nobody".into()), ..FitOptions::default() };
    assert!(matches!(fit_ratings(&rows, &unknown), Err(TournamentError::UnknownAnchor(_))));
}
