//! The decision interface reaches every legal move exactly once, agrees with the rules on the
//! end of the game, and lets the generic search play Camelot.

use camelot_game::CamelotState;
use camelot_rules::{EndReason, Game, Position, Ruleset, VARIANT_NAMES};
use camelot_search::{GameState as _, SearchConfig, Searcher, Side, Terminal, Tree, UniformEvaluator};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::Arc;

/// Every position reachable by playing decisions until the turn changes, with the number of
/// decision sequences that reach it.
fn turn_results(state: &CamelotState) -> HashMap<u64, usize> {
    let mut out = HashMap::new();
    let mut stack = vec![state.clone()];
    let mut actions = Vec::new();
    while let Some(s) = stack.pop() {
        actions.clear();
        s.legal_actions(&mut actions);
        for &a in &actions {
            let mut next = s.clone();
            next.apply(a);
            if next.is_mid_move() {
                assert_eq!(next.to_move(), s.to_move(), "the mover keeps the turn inside a move");
                stack.push(next);
            } else {
                *out.entry(next.position().hash()).or_insert(0) += 1;
            }
        }
    }
    out
}

#[test]
fn every_legal_move_is_reached_exactly_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut checked = 0;
    for name in VARIANT_NAMES {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        for _ in 0..4 {
            let mut state = CamelotState::new(rules.clone());
            while state.terminal().is_none() {
                let results = turn_results(&state);
                let mut expected = HashMap::new();
                for mv in &state.legal_moves() {
                    let mut p = *state.position();
                    rules.play(&mut p, mv);
                    *expected.entry(p.hash()).or_insert(0) += 1;
                }
                assert!(expected.values().all(|&n| n == 1), "moves are distinct positions");
                assert_eq!(results, expected, "{name} at {}", rules.to_cpn(state.position()));
                checked += 1;
                // Play a random move through its action sequence.
                let index = rng.random_range(0..state.legal_moves().len());
                let mv = state.legal_moves()[index];
                let mut expected_after = *state.position();
                rules.play(&mut expected_after, &mv);
                for a in state.actions_for_move(index) {
                    state.apply(a);
                }
                assert_eq!(*state.position(), expected_after);
            }
        }
    }
    assert!(checked > 200, "only {checked} positions checked");
}

#[test]
fn outcomes_and_repetitions_match_the_rules_game() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for name in ["camelot", "cam", "camette"] {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        for _ in 0..6 {
            let mut game = Game::new(rules.clone());
            let mut state = CamelotState::new(rules.clone());
            loop {
                assert_eq!(state.outcome(), game.outcome(), "{name}");
                // A state rebuilt from the game's history agrees too, and is the same turn
                // (what lets a player's kept search tree go on into it); one built from the
                // position alone lacks the history once a position could repeat.
                let rebuilt = CamelotState::from_game(&game);
                assert_eq!(rebuilt.outcome(), game.outcome());
                assert!(rebuilt.is_same_turn(&state) && state.is_same_turn(&rebuilt), "{name}");
                let bare = CamelotState::from_position(rules.clone(), *game.position());
                assert_eq!(bare.is_same_turn(&state), game.position().no_progress_plies() == 0, "{name}");
                if game.outcome().is_some() {
                    break;
                }
                let moves = game.legal_moves();
                let mv = moves[rng.random_range(0..moves.len())];
                // One leg on (inside a move, or the next turn) is never the same turn.
                let mut inside = state.clone();
                let first = inside.actions_for_move(rng.random_range(0..moves.len()))[0];
                inside.apply(first);
                assert!(!inside.is_same_turn(&state) && !state.is_same_turn(&inside), "{name}");
                game.play(mv);
                state.play_move(&mv);
            }
        }
    }
}

#[test]
fn mid_move_board_follows_the_legs() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let pos =
        rules.parse_cpn("2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0").expect("cpn");
    let mut state = CamelotState::from_position(rules.clone(), pos);
    // F7-H5-J7 is a complete canter that could go on to J5, so it ends with `stop`.
    let index =
        (0..state.legal_moves().len()).find(|&i| state.path_of(i).to_string() == "F7-H5-J7").expect("canter F7-H5-J7");
    let actions = state.actions_for_move(index);
    assert_eq!(actions.len(), 3, "two legs and stop");
    assert_eq!(actions[2], state.codec().stop());
    state.apply(actions[0]);
    let mid = state.mid_move().expect("inside the move");
    assert_eq!(mid.moving.to_string(), "H5");
    assert_eq!(mid.origin.to_string(), "F7");
    assert!(mid.position.piece_at(mid.origin).is_none());
    assert!(mid.position.piece_at(mid.moving).is_some());
    state.apply(actions[1]);
    let mut legal = Vec::new();
    state.legal_actions(&mut legal);
    assert!(legal.contains(&state.codec().stop()), "J7 ends a move that may continue");
    assert_eq!(state.to_move(), Side::First);
    state.apply(actions[2]);
    assert!(state.mid_move().is_none());
    assert_eq!(state.to_move(), Side::Second);
}

#[test]
fn search_finds_the_castle_win_on_cam() {
    // Cam: a white man on D12 steps into Black's castle D13 and wins at once.
    let rules = Arc::new(Ruleset::variant("cam").expect("variant"));
    let pos = rules.parse_cpn("1/1M1/5/7/2k4/7/7/7/7/7/5/3/1 w - 0 1").expect("cpn");
    let state = CamelotState::from_position(rules.clone(), pos);
    let mut searcher = Searcher::new(SearchConfig { simulations: 200, ..SearchConfig::evaluation() }).expect("config");
    let mut trees = vec![Tree::new(state.clone(), 1)];
    let results = searcher.search(&mut trees, &mut UniformEvaluator).expect("search");
    assert_eq!(results[0].proven, Some(Terminal::Win(Side::First)));
    let mut after = state;
    after.apply(results[0].action);
    assert_eq!(
        after.position().pieces(camelot_rules::Color::White).iter().next().map(|s| s.to_string()),
        Some("D13".into())
    );
}

#[test]
fn start_position_matches_the_rules() {
    for name in VARIANT_NAMES {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        let state = CamelotState::new(rules.clone());
        assert_eq!(*state.position(), Position::start(&rules));
        assert_eq!(state.legal_moves().len() as u64, rules.perft(&Position::start(&rules), 1));
    }
}

/// The actions that win at once, and among them those `decisive_action` promises to find: by
/// the castle, or by taking the last of at most three pieces.
fn winning_actions(state: &CamelotState) -> (Vec<u32>, Vec<u32>) {
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    let mover = state.position().turn();
    let opponent_pieces = state.position().pieces(mover.opponent()).count();
    let (mut wins, mut promised) = (Vec::new(), Vec::new());
    for a in actions {
        let mut next = state.clone();
        next.apply(a);
        if let Some(o) = next.outcome().filter(|o| o.winner == Some(mover)) {
            wins.push(a);
            if o.reason == EndReason::CastleOccupied || (o.reason == EndReason::AllCaptured && opponent_pieces <= 3) {
                promised.push(a);
            }
        }
    }
    (wins, promised)
}

#[test]
fn decisive_action_finds_exactly_the_wins_in_one_decision() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let (mut decisions, mut wins) = (0, 0);
    for name in ["camelot", "cam", "camette", "chivalry"] {
        let rules = Arc::new(Ruleset::variant(name).expect("variant"));
        for _ in 0..12 {
            let mut state = CamelotState::new(rules.clone());
            let mut actions = Vec::new();
            while state.terminal().is_none() {
                let (all, promised) = winning_actions(&state);
                let at = rules.to_cpn(state.position());
                match state.decisive_action() {
                    Some(a) => assert!(all.contains(&a), "{name}: {a} does not win at {at}"),
                    None => assert!(promised.is_empty(), "{name}: missed {promised:?} at {at}"),
                }
                wins += usize::from(!promised.is_empty());
                decisions += 1;
                // Random decisions (legs and stops), so positions inside moves are checked too.
                actions.clear();
                state.legal_actions(&mut actions);
                state.apply(actions[rng.random_range(0..actions.len())]);
            }
        }
    }
    assert!(decisions > 1000 && wins >= 10, "{decisions} decisions, {wins} with a win in one");
}

#[test]
fn few_simulations_never_miss_a_castle_win() {
    // Camelot: White holds F16; the man on H15 steps into G16 and wins. With Gumbel's root
    // sampling only 2 of the legal actions and 2 simulations, the decisive check alone finds it.
    let rules = Arc::new(Ruleset::variant("camelot").expect("variant"));
    let pos = rules.parse_cpn("M1/5M2/10/12/12/12/12/12/12/12/12/12/4k7/10/8/2 w 0/0").expect("cpn");
    let state = CamelotState::from_position(rules.clone(), pos);
    let (winning, _) = winning_actions(&state);
    assert_eq!(winning.len(), 1, "H15-G16 only");
    assert_eq!(state.decisive_action(), Some(winning[0]));
    for seed in 0..20 {
        let config = SearchConfig { simulations: 2, gumbel: true, gumbel_m: 2, ..SearchConfig::evaluation() };
        let mut searcher = Searcher::new(config).expect("config");
        let mut trees = vec![Tree::new(state.clone(), seed)];
        let results = searcher.search(&mut trees, &mut UniformEvaluator).expect("search");
        assert_eq!(results[0].action, winning[0], "seed {seed}");
        assert_eq!(results[0].proven, Some(Terminal::Win(Side::First)), "seed {seed}");
    }
}
