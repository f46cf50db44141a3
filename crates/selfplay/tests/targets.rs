//! Self-play targets carry signal: a game stopped at the ply cap with a material lead is a win
//! for the side ahead (and its positions' value targets say so), single-action decisions are
//! never targets, and fast searches add no noise (seeded, a few seconds).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use camelot_arena::ply_cap_winner;
use camelot_game::{ActionCodec, CamelotState};
use camelot_net::{grid_of, parse_device, NetEvaluator, Network};
use camelot_rules::{Color, EndReason, Piece, Position, Role, Ruleset, Square};
use camelot_search::{GameState as _, Searcher, Tree};
use camelot_selfplay::play::{play_selfplay_group, training_winner, with_network_threads, SelfplayNetwork};
use camelot_selfplay::record::GameEnd;
use camelot_selfplay::replay::{game_samples, TargetSettings};
use camelot_selfplay::RunConfig;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn tiny(overrides: &[&str]) -> RunConfig {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/tiny.toml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    RunConfig::load_with_overrides(&path, &overrides).expect("tiny.toml loads")
}

/// `Network::new` seeds the backend's one random generator and then draws the weights; two
/// tests doing that at once in this process would interleave their draws.
static NETWORK_INIT: Mutex<()> = Mutex::new(());

fn setup(config: &RunConfig, seed: u64) -> (Arc<Ruleset>, Network) {
    let rules = Arc::new(Ruleset::variant(&config.variant).expect("variant"));
    let codec = ActionCodec::new(rules.board());
    let device = parse_device("cpu").expect("cpu");
    let network = {
        let _alone = NETWORK_INIT.lock().unwrap_or_else(|e| e.into_inner());
        Network::new(&config.network, grid_of(&codec), &device, seed).expect("network")
    };
    (rules, network)
}

#[test]
fn a_capped_game_with_a_material_lead_gives_decided_value_targets() {
    // Resignation off and a short cap, so that some games reach it after a few captures.
    let config = tiny(&["selfplay.max_plies = 16", "selfplay.resign_playthrough = 1.0"]);
    let (rules, network) = setup(&config, 5);
    let cells = ActionCodec::new(rules.board()).cells() as usize;
    let mut decided = 0;
    let mut checked = 0;
    // Groups of 32 games until enough of them end at the cap with a lead (most end earlier,
    // by the rules); one network thread keeps the games the same on every run.
    let mut games = Vec::new();
    for group in 0..8 {
        if decided >= 3 && checked >= 10 {
            break;
        }
        let out = with_network_threads(1, || {
            play_selfplay_group(
                &rules,
                &SelfplayNetwork { generation: 0, network: &network, hash: "untrained" },
                &config,
                group,
                32,
                &[],
            )
        })
        .expect("plays");
        games.extend(out.games);
        for (k, game) in games.iter().enumerate().skip(games.len() - 32) {
            // Replay the game independently of the recorder: every decision had a choice, and
            // the result is the rules' or the ply cap's material adjudication.
            let mut state = CamelotState::new(rules.clone());
            let mut legal = Vec::new();
            let targets: Vec<u32> = game.targets.iter().map(|t| t.decision).collect();
            for (i, &action) in game.actions.iter().enumerate() {
                legal.clear();
                state.legal_actions(&mut legal);
                assert!(legal.contains(&(action as u32)), "game {k}, decision {i}");
                if legal.len() == 1 {
                    assert!(!targets.contains(&(i as u32)), "game {k}: forced decision {i} recorded as a target");
                }
                state.apply(action as u32);
            }
            if game.end != GameEnd::PlyCap {
                continue;
            }
            assert_eq!(game.plies, 16, "game {k}");
            let expected = match ply_cap_winner(state.position()) {
                Some(Color::White) => 1,
                Some(Color::Black) => -1,
                None => 0,
            };
            assert_eq!(game.winner, expected, "game {k}: the cap adjudicates on material");
            if expected == 0 {
                continue;
            }
            decided += 1;
            // A short game may have no fully searched decision (few choices, each full with
            // probability `full_search_fraction`): then it has no samples to check.
            let samples = game_samples(&rules, game, TargetSettings::default()).expect("samples").samples;
            checked += samples.len();
            for sample in &samples {
                let wdl = sample.unpack(cells).wdl;
                assert!(
                    wdl == [1.0, 0.0, 0.0] || wdl == [0.0, 0.0, 1.0],
                    "game {k}: a capped lead is not a draw: {wdl:?}"
                );
            }
        }
    }
    assert!(decided >= 3, "only {decided} of {} games ended at the cap with a material lead", games.len());
    assert!(checked >= 10, "only {checked} value targets of decided capped games checked");
    eprintln!("{decided} of {} games capped with a lead, {checked} of their value targets checked", games.len());
}

#[test]
fn fast_searches_add_no_noise_and_full_searches_do() {
    // With the untrained network's fast searches noisy, as quick.toml plays generation 0.
    let config = tiny(&["selfplay.fast_noise_generations=1"]);
    let (rules, network) = setup(&config, 9);
    // Positions a few random plies into games.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut states = Vec::new();
    let mut legal = Vec::new();
    while states.len() < 6 {
        let mut state = CamelotState::new(rules.clone());
        for _ in 0..rng.random_range(2..12) {
            legal.clear();
            state.legal_actions(&mut legal);
            state.apply(legal[rng.random_range(0..legal.len())]);
            if state.terminal().is_some() {
                break;
            }
        }
        legal.clear();
        if state.terminal().is_none() {
            state.legal_actions(&mut legal);
            if legal.len() > 2 {
                states.push(state);
            }
        }
    }
    let search = |searcher: &mut Searcher, state: &CamelotState, seed: u64| {
        let mut evaluator = NetEvaluator::new(network.clone(), 0);
        let mut trees = vec![Tree::new(state.clone(), seed)];
        let mut results = Vec::new();
        searcher.search_into(&mut trees, &mut evaluator, &mut results).expect("search");
        let r = results.remove(0);
        (r.action, r.policy)
    };
    assert_eq!(config.fast_search_in(1), config.fast_search());
    let mut fast = Searcher::new(config.fast_search_in(1)).expect("fast searcher");
    let mut full = Searcher::new(config.full_search()).expect("full searcher");
    let mut untrained_fast = Searcher::new(config.fast_search_in(0)).expect("generation 0's fast searcher");
    let (mut full_varies, mut untrained_fast_varies) = (false, false);
    for (i, state) in states.iter().enumerate() {
        let first = search(&mut fast, state, 1);
        for seed in 2..6 {
            assert_eq!(search(&mut fast, state, seed), first, "position {i}: a fast search depends on its seed");
        }
        let full_first = search(&mut full, state, 1);
        full_varies |= (2..6).any(|seed| search(&mut full, state, seed) != full_first);
        let untrained_first = search(&mut untrained_fast, state, 1);
        untrained_fast_varies |= (2..6).any(|seed| search(&mut untrained_fast, state, seed) != untrained_first);
    }
    assert!(full_varies, "full searches explore (Gumbel noise), so some result must depend on the seed");
    assert!(untrained_fast_varies, "generation 0's fast searches carry the full search's noise");
}

/// A position one quiet move from the no-progress limit: White has `white` (knights, men) on
/// rank 6, Black has `black` on rank 12, far from contact and from the castles.
fn near_no_progress(rules: &Arc<Ruleset>, white: (usize, usize), black: (usize, usize)) -> CamelotState {
    let mut pos = Position::empty();
    let files = ["E", "F", "G", "H"];
    let mut place = |color: Color, (knights, men): (usize, usize), rank: u32| {
        for (i, file) in files.iter().take(knights + men).enumerate() {
            let role = if i < knights { Role::Knight } else { Role::Man };
            let sq = Square::parse(&format!("{file}{rank}")).expect("a square");
            pos.put(sq, Piece { color, role });
        }
    };
    place(Color::White, white, 6);
    place(Color::Black, black, 12);
    pos.set_turn(Color::White);
    pos.set_counters(rules.flags().no_progress_plies - 1, 60);
    pos.rehash(rules);
    CamelotState::from_position(rules.clone(), pos)
}

#[test]
fn a_no_progress_draw_is_scored_on_material_only_when_asked() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    for (white, black, lead) in [((2, 2), (1, 1), 1), ((1, 1), (2, 2), -1), ((1, 2), (1, 2), 0)] {
        let mut state = near_no_progress(&rules, white, black);
        // The first quiet move: no capture is possible this far apart.
        let quiet = state.legal_moves().into_iter().next().expect("a legal move");
        state.play_move(&quiet);
        let outcome = state.terminal().expect("the no-progress limit ends the game");
        assert_eq!(state.outcome().map(|o| o.reason), Some(EndReason::NoProgress));
        assert_eq!(training_winner(&state, outcome, false), 0, "the rules' draw, {white:?} against {black:?}");
        assert_eq!(training_winner(&state, outcome, true), lead, "on material, {white:?} against {black:?}");
    }
}
