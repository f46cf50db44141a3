//! The fast generator against the slow reference written straight from RULES.md
//! (`tests/reference/mod.rs`, which shares no code with the crate): on positions from random games
//! and on random placements, both must list the same moves, written by the same canonical paths,
//! leading to the same positions, and agree on whether and how the game has ended.

mod reference;

use camelot_rules::{random_playout, Color, EndReason, Game, Piece, Position, Role, Ruleset, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Every ruleset under test: the six variants and the two other charge rules on Camelot.
const RULESETS: [(&str, &[(&str, &str)]); 8] = [
    ("camelot", &[]),
    ("camelot", &[("charge_rule", "immediate")]),
    ("camelot", &[("charge_rule", "final")]),
    ("camelot-cz", &[]),
    ("chivalry", &[]),
    ("chivalry-1888", &[]),
    ("cam", &[]),
    ("camette", &[]),
];

fn rulesets(variant: &str, flags: &[(&str, &str)]) -> (Ruleset, reference::RefRules) {
    let overrides: Vec<String> = flags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    (Ruleset::with_overrides(variant, &overrides).expect("ruleset"), reference::ref_rules(variant, flags))
}

/// Our moves as the reference writes them: canonical path -> CPN after.
fn our_moves(rules: &Ruleset, pos: &Position) -> BTreeMap<String, String> {
    let game = Game::from_position(Arc::new(rules.clone()), *pos);
    if game.outcome().is_some() {
        return BTreeMap::new();
    }
    rules
        .legal_moves_with_paths(pos)
        .into_iter()
        .map(|(mv, path)| {
            let mut next = *pos;
            rules.play(&mut next, &mv);
            (path.to_string(), rules.to_cpn(&next))
        })
        .collect()
}

fn our_outcome(rules: &Ruleset, pos: &Position) -> Option<String> {
    let outcome = Game::from_position(Arc::new(rules.clone()), *pos).outcome()?;
    // The reference knows no history; a lone position cannot repeat.
    assert_ne!(outcome.reason, EndReason::Repetition);
    Some(match outcome.winner {
        Some(c) => format!("{} wins", c.name()),
        None => "draw".to_string(),
    })
}

fn compare(label: &str, rules: &Ruleset, r: &reference::RefRules, pos: &Position) -> usize {
    let cpn = rules.to_cpn(pos);
    let ours = our_moves(rules, pos);
    let theirs = reference::ref_moves(r, &cpn);
    if ours != theirs {
        let only_ours: Vec<_> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
        let only_theirs: Vec<_> = theirs.keys().filter(|k| !ours.contains_key(*k)).collect();
        let differ: Vec<_> = ours.iter().filter(|(k, v)| theirs.get(*k).is_some_and(|t| t != *v)).collect();
        panic!(
            "{label}: move sets differ at {cpn}\n only ours: {only_ours:?}\n only reference: {only_theirs:?}\n \
             different results: {differ:?}"
        );
    }
    assert_eq!(our_outcome(rules, pos), reference::ref_outcome(r, &cpn), "{label}: outcome at {cpn}");
    ours.len()
}

#[test]
fn random_games_agree_with_the_reference() {
    let mut compared = 0;
    for (variant, flags) in RULESETS {
        let (rules, r) = rulesets(variant, flags);
        let label = format!("{variant} {flags:?}");
        let mut rng = ChaCha8Rng::seed_from_u64(20261129);
        let games = if rules.board().squares().count() > 100 { 10 } else { 30 };
        for _ in 0..games {
            let mut pos = Position::start(&rules);
            let mut moves = Vec::new();
            loop {
                compared += 1;
                compare(&label, &rules, &r, &pos);
                rules.legal_moves(&pos, &mut moves);
                if moves.is_empty() || rules.static_outcome(&pos).is_some() {
                    break;
                }
                let mv = moves[rng.random_range(0..moves.len())];
                rules.play(&mut pos, &mv);
                if pos.no_progress_plies() >= rules.flags().no_progress_plies {
                    break;
                }
            }
        }
    }
    eprintln!("compared {compared} positions from random games");
}

/// A random legal-looking placement: up to the set-up's pieces of each kind per side, anywhere
/// on the board, at most one piece per side in its own castle; random side to move and castle
/// moves used. Such positions are full of jumps, charges, castle entries and castle exits.
fn random_placement(rules: &Ruleset, rng: &mut ChaCha8Rng) -> Position {
    let board = rules.board();
    let squares: Vec<Square> = board.squares().iter().collect();
    let mut pos = Position::empty();
    for color in Color::BOTH {
        let mut in_castle = 0;
        for role in [Role::Knight, Role::Man] {
            let most = rules.setup(color, role).count();
            let count = rng.random_range(0..=most);
            for _ in 0..count {
                let sq = squares[rng.random_range(0..squares.len())];
                if pos.piece_at(sq).is_some() {
                    continue;
                }
                if board.own_castle(color).contains(sq) {
                    if in_castle > 0 {
                        continue;
                    }
                    in_castle += 1;
                }
                pos.put(sq, Piece { color, role });
            }
        }
    }
    let mut turn = if rng.random_bool(0.5) { Color::White } else { Color::Black };
    // The side to move may not already hold the castle it attacks (the game would have ended
    // and `parse_cpn` refuses such text): give the move to the other side, or, when both hold
    // theirs, play on with White to move and one of White's castle pieces taken off.
    let holds =
        |pos: &Position, c: Color| (pos.pieces(c) & board.opp_castle(c)).count() >= rules.flags().castle_squares_to_win;
    if holds(&pos, turn) {
        turn = turn.opponent();
    }
    if holds(&pos, turn) {
        turn = Color::White;
        let sq = (pos.pieces(Color::White) & board.opp_castle(Color::White)).first().expect("a castle piece");
        let mut rebuilt = Position::empty();
        for s in pos.occupied().iter().filter(|&s| s != sq) {
            rebuilt.put(s, pos.piece_at(s).expect("occupied"));
        }
        pos = rebuilt;
    }
    pos.set_turn(turn);
    if rules.has_castle_moves() {
        for color in Color::BOTH {
            pos.set_castle_moves(color, rng.random_range(0..=rules.flags().max_castle_moves.unwrap_or(3)));
        }
    }
    pos.set_counters(rng.random_range(0..rules.flags().no_progress_plies), 1 + rng.random_range(0..60));
    pos.rehash(rules);
    pos
}

#[test]
fn random_placements_agree_with_the_reference() {
    let mut compared = 0;
    let mut moves_seen = 0;
    for (variant, flags) in RULESETS {
        let (rules, r) = rulesets(variant, flags);
        let label = format!("{variant} {flags:?}");
        let mut rng = ChaCha8Rng::seed_from_u64(0xCA3E107);
        for _ in 0..1000 {
            let pos = random_placement(&rules, &mut rng);
            if pos.pieces(pos.turn().opponent()).is_empty() {
                // Refused by `parse_cpn`: the side that just moved must have a piece.
                assert!(rules.parse_cpn(&rules.to_cpn(&pos)).is_err());
                continue;
            }
            // Parse our own CPN back: the placement is valid text.
            let cpn = rules.to_cpn(&pos);
            assert_eq!(rules.parse_cpn(&cpn).as_ref(), Ok(&pos), "{label}: {cpn}");
            moves_seen += compare(&label, &rules, &r, &pos);
            compared += 1;
        }
    }
    eprintln!("compared {compared} random placements ({moves_seen} moves)");
}

#[test]
fn perft_agrees_with_the_reference_from_random_game_positions() {
    for (variant, flags) in RULESETS {
        let (rules, r) = rulesets(variant, flags);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..3 {
            // A position some way into a random game, where captures and charges are common.
            let start = Position::start(&rules);
            let plies = rng.random_range(6..30);
            let mut pos = start;
            let mut moves = Vec::new();
            for _ in 0..plies {
                rules.legal_moves(&pos, &mut moves);
                if moves.is_empty() || rules.static_outcome(&pos).is_some() {
                    break;
                }
                let mv = moves[rng.random_range(0..moves.len())];
                rules.play(&mut pos, &mv);
            }
            let cpn = rules.to_cpn(&pos);
            assert_eq!(rules.perft(&pos, 2), reference::ref_perft(&r, &cpn, 2), "{variant} {flags:?} perft 2 at {cpn}");
        }
        // Unused result kept out of the comparison on purpose: playouts must simply end.
        let _ = random_playout(&rules, &Position::start(&rules), |n| rng.random_range(0..n));
    }
}

#[test]
fn camette_perft_five_agrees_with_the_reference() {
    let (rules, r) = rulesets("camette", &[]);
    let expected = reference::ref_perft(&r, &reference::start_cpn(&r), 5);
    assert_eq!(expected, 774222);
    assert_eq!(rules.perft(&Position::start(&rules), 5), expected);
}
