//! The hand-made evaluation respects the game's symmetries and counts what it says it counts.

use camelot_arena::eval::{material, EvalWeights, Heuristic};
use camelot_rules::{Color, Game, Piece, Position, Ruleset, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Positions from random games of `variant`.
fn sample(variant: &str, games: u64) -> (Arc<Ruleset>, Vec<Position>) {
    let rules = Arc::new(Ruleset::variant(variant).expect("a variant"));
    let mut out = Vec::new();
    for seed in 0..games {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new(Arc::clone(&rules));
        while game.outcome().is_none() && game.moves().len() < 300 {
            let moves = game.legal_moves();
            game.play(moves[rng.random_range(0..moves.len())]);
            out.push(*game.position());
        }
    }
    (rules, out)
}

#[test]
fn the_start_is_even() {
    for variant in ["camelot", "chivalry", "cam", "camette"] {
        let rules = Ruleset::variant(variant).expect("a variant");
        assert_eq!(Heuristic::new(&rules).evaluate(&Position::start(&rules)), 0, "{variant}");
    }
}

#[test]
fn colour_flip_and_mirror_leave_the_value_unchanged() {
    for variant in ["camelot", "cam"] {
        let (rules, positions) = sample(variant, 20);
        let h = Heuristic::new(&rules);
        for pos in positions {
            let v = h.evaluate(&pos);
            assert_eq!(h.evaluate(&pos.flip_colors(&rules)), v, "{}", rules.to_cpn(&pos));
            assert_eq!(h.evaluate(&pos.mirror_files(&rules)), v, "{}", rules.to_cpn(&pos));
        }
    }
}

/// A position from piece tokens such as `MG16 kA5` (CPN letter, then square), White to move.
fn setup(rules: &Ruleset, pieces: &str) -> Position {
    let mut pos = Position::empty();
    for token in pieces.split_whitespace() {
        let piece = Piece::from_letter(token.chars().next().expect("a letter")).expect("K, M, k or m");
        pos.put(Square::parse(&token[1..]).expect("a square"), piece);
    }
    pos.rehash(rules);
    pos
}

#[test]
fn material_and_castle_count() {
    let rules = Ruleset::variant("camelot").expect("camelot");
    let w = EvalWeights::default();
    let start = Position::start(&rules);
    assert_eq!(material(&start, Color::White, &w), 10 * w.man + 4 * w.knight);
    let h = Heuristic::new(&rules);
    // A man up, otherwise mirrored: worth about a man.
    let v = h.evaluate(&setup(&rules, "MC5 MD5 ME5 mC12 mD12"));
    assert!(v > w.man / 2 && v < 2 * w.man, "{v}");
    // A knight up is worth more than a man up.
    let k = h.evaluate(&setup(&rules, "MC5 MD5 KE5 mC12 mD12"));
    assert!(k > v + (w.knight - w.man) / 2, "{k} v {v}");
    // A man in the enemy castle is worth more than one a step short of it.
    let inside = h.evaluate(&setup(&rules, "MF16 MA6 mA9 mB9"));
    let outside = h.evaluate(&setup(&rules, "MF15 MA6 mA9 mB9"));
    assert!(inside > outside + w.castle / 2, "{inside} v {outside}");
    // Advancing is worth something.
    let forward = h.evaluate(&setup(&rules, "MF10 MA6 mA11 mB11"));
    let back = h.evaluate(&setup(&rules, "MF5 MA6 mA11 mB11"));
    assert!(forward > back, "{forward} v {back}");
    // A piece that the opponent can jump costs the side to move.
    let hanging = h.evaluate(&setup(&rules, "MF8 MA6 mF9 mL11"));
    let safe = h.evaluate(&setup(&rules, "MF7 MA6 mF9 mL11"));
    assert!(hanging < safe - w.threat / 2, "{hanging} v {safe}");
}
