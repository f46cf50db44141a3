//! Matches: reproducible from the seed whatever the thread count, colours alternating over
//! shared openings (the score tally is tested in camelot-tournament).

use camelot_arena::{play_match, random_opening, MatchConfig, MatchReport, PlayerSpec};
use camelot_rules::Ruleset;
use std::sync::Arc;

fn cam() -> Arc<Ruleset> {
    Arc::new(Ruleset::variant("cam").expect("cam exists"))
}

fn spec(text: &str) -> PlayerSpec {
    PlayerSpec::parse(text).expect("spec parses")
}

fn run(a: &str, b: &str, config: &MatchConfig) -> camelot_arena::MatchReport {
    play_match(cam(), &spec(a), &spec(b), config, &|_, _| {}).expect("the match runs")
}

#[test]
fn same_seed_same_games_whatever_the_thread_count() {
    let config =
        MatchConfig { games: 8, threads: 1, seed: 42, opening_plies: 4, max_plies: 2000, ..MatchConfig::default() };
    let one = run("greedy", "uct:sims=20", &config);
    let three = run("greedy", "uct:sims=20", &MatchConfig { threads: 3, ..config.clone() });
    assert_eq!(one.games, three.games);
    assert_eq!(one.games.len(), 8);
    let again = run("greedy", "uct:sims=20", &config);
    assert_eq!(one.games, again.games);
    let other = run("greedy", "uct:sims=20", &MatchConfig { seed: 43, ..config });
    assert_ne!(
        one.games.iter().map(|g| &g.moves).collect::<Vec<_>>(),
        other.games.iter().map(|g| &g.moves).collect::<Vec<_>>()
    );
}

#[test]
fn colours_alternate_over_shared_openings() {
    let config =
        MatchConfig { games: 6, threads: 2, seed: 7, opening_plies: 3, max_plies: 2000, ..MatchConfig::default() };
    let report = run("random", "greedy", &config);
    for (i, g) in report.games.iter().enumerate() {
        assert_eq!(g.opening as usize, i / 2);
        assert_eq!(MatchReport::a_is_white(i), i % 2 == 0);
        let (white, black) = if i % 2 == 0 { ("random", "greedy") } else { ("greedy", "random") };
        assert_eq!((g.white.as_str(), g.black.as_str()), (white, black));
        assert!(!g.reason.contains("adjudicated"), "the rules ended game {i}: {}", g.reason);
        assert!([0.0, 0.5, 1.0].contains(&report.score_a(i)));
    }
    for pair in report.games.chunks(2) {
        // `1.a b 2.c`: the three opening plies, one token each.
        let opening = |text: &str| text.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
        assert_eq!(opening(&pair[0].moves), opening(&pair[1].moves));
        assert_eq!(opening(&pair[0].moves).split(' ').count(), 3);
    }
    // The opening itself is a function of its seed.
    let rules = cam();
    let a = random_opening(&rules, 6, 99);
    let b = random_opening(&rules, 6, 99);
    assert_eq!(a.moves(), b.moves());
    assert_eq!(a.moves().len(), 6);
    assert!(a.outcome().is_none());
}

#[test]
fn the_ply_cap_adjudicates_on_material() {
    let config =
        MatchConfig { games: 2, threads: 1, seed: 3, opening_plies: 0, max_plies: 6, ..MatchConfig::default() };
    let report = run("random", "random", &config);
    for g in &report.games {
        assert_eq!(g.plies, 6);
        assert!(g.reason.contains("adjudicated on material at the ply cap"), "{}", g.reason);
        assert!(g.moves.ends_with("1-0") || g.moves.ends_with("0-1") || g.moves.ends_with("1/2-1/2"));
    }
}

#[test]
fn a_stronger_player_wins_on_cam() {
    let config =
        MatchConfig { games: 10, threads: 2, seed: 5, opening_plies: 2, max_plies: 2000, ..MatchConfig::default() };
    let tally = run("alphabeta:depth=2", "random", &config).tally();
    assert!(tally.score() >= 0.9, "{}", tally.summary_line());
}

#[test]
fn players_that_cannot_sit_stop_the_match_before_it_starts() {
    let config = MatchConfig { games: 2, ..MatchConfig::default() };
    assert!(play_match(cam(), &spec("human"), &spec("random"), &config, &|_, _| {}).is_err());
    assert!(play_match(cam(), &spec("random"), &spec("mcts:model=x"), &config, &|_, _| {}).is_err());
    assert!(
        play_match(cam(), &spec("random"), &spec("random"), &MatchConfig { games: 0, ..config }, &|_, _| {}).is_err()
    );
}
