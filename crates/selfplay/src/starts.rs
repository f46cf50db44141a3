//! Where self-play games begin: the variant's set-up, a scattered one
//! (`selfplay.scattered_starts`), or the position a few random plies reach
//! (`selfplay.random_opening_plies`).
//!
//! From the set-up, young networks' games never reach a castle: no self-play game of the
//! quick runs ended on one (random play: 6 in 2,000), so the value head never learns what a
//! castle is worth and any player that walks two pieces in beats the network. A scattered
//! start puts each side's full set of pieces on squares drawn uniformly from the board (both
//! castles excepted), with a random side to move, so pieces stand near both castles from the
//! first move and castle ends come from the network's own play. Nothing but the rules shapes
//! these positions: no evaluation, no baseline player's moves (KataGo's random initial
//! positions in spirit).

use camelot_rules::{Color, Game, Piece, Position, Role, Ruleset, Square};
use rand::Rng;
use std::sync::Arc;

/// Draws tried before giving up on a scattered start (a draw fails only when the position is
/// already over or the side to move has no move: rare).
const TRIES: u32 = 64;

/// A scattered start for `rules`: the set-up's pieces of each side on distinct squares drawn
/// uniformly from the board outside both castles, either side to move, counters at zero. The
/// game is not over there and the side to move has a legal move. `None` if `TRIES` draws all
/// failed (never seen on the variants here; the caller then starts from the set-up).
pub fn scattered_start(rules: &Arc<Ruleset>, rng: &mut impl Rng) -> Option<Position> {
    let board = rules.board();
    let castles = board.own_castle(Color::White) | board.own_castle(Color::Black);
    let free: Vec<Square> = (board.squares() & !castles).iter().collect();
    let pieces: Vec<Piece> = Color::BOTH
        .into_iter()
        .flat_map(|color| {
            [Role::Knight, Role::Man]
                .into_iter()
                .flat_map(move |role| (0..rules.setup(color, role).count()).map(move |_| Piece { color, role }))
        })
        .collect();
    if pieces.len() > free.len() {
        return None;
    }
    let mut squares = free;
    for _ in 0..TRIES {
        // A partial Fisher-Yates shuffle: the first `pieces.len()` squares are a uniform draw.
        for i in 0..pieces.len() {
            let j = rng.random_range(i..squares.len());
            squares.swap(i, j);
        }
        let mut position = Position::empty();
        for (&piece, &sq) in pieces.iter().zip(&squares) {
            position.put(sq, piece);
        }
        position.set_turn(if rng.random::<bool>() { Color::White } else { Color::Black });
        position.rehash(rules);
        let game = Game::from_position(rules.clone(), position);
        if game.outcome().is_none() && !game.legal_moves().is_empty() {
            return Some(position);
        }
    }
    None
}

/// The position `k` uniformly random legal moves reach from the set-up, `k` drawn uniformly
/// from `0..=max_plies`; `None` when `k` is 0 (the set-up itself). Plies that end the game
/// are drawn again (`camelot_arena::random_opening`).
///
/// Self-play from the set-up visits the openings its network prefers and few others; random
/// plies put every early line in front of the network, as lc0's and KataGo's opening
/// randomisation does, and nothing but the rules chooses them. Measured on Camette (where a
/// generation-20 network missed the exact value in 24% of the solved positions within four
/// plies of the set-up, against 12% of the others), 4 or 10 random plies lifted the value
/// head by 4 points but left those misses as they were: the early positions are hard for
/// being 20-40 plies from their end, not for being unseen (docs/BENCHMARKS.md).
pub fn random_opening(rules: &Arc<Ruleset>, max_plies: u32, rng: &mut impl Rng) -> Option<Position> {
    let plies = rng.random_range(0..=max_plies);
    // The arenas' opening book: k random plies, redrawn where they end the game.
    let game = camelot_arena::random_opening(rules, plies, rng.random());
    (!game.moves().is_empty()).then(|| *game.position())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn scattered_starts_hold_the_full_set_off_the_castles_and_read_back_from_cpn() {
        for variant in ["camelot", "chivalry", "cam", "camette"] {
            let rules = Arc::new(Ruleset::variant(variant).expect("variant"));
            let board = rules.board();
            let castles = board.own_castle(Color::White) | board.own_castle(Color::Black);
            let start = Position::start(&rules);
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let mut turns = [0u32; 2];
            let mut near_castle = 0;
            for _ in 0..200 {
                let p = scattered_start(&rules, &mut rng).expect("a start");
                for color in Color::BOTH {
                    for role in [Role::Knight, Role::Man] {
                        assert_eq!(p.role(color, role).count(), start.role(color, role).count(), "{variant}");
                    }
                }
                assert!((p.occupied() & castles).is_empty(), "{variant}");
                turns[p.turn() as usize] += 1;
                // Some piece a step or leap from the castle its side attacks.
                let attacked = board.opp_castle(p.turn());
                if p.pieces(p.turn()).iter().any(|sq| {
                    (0..camelot_rules::DIRECTIONS.len()).any(|d| {
                        [board.step(sq, d), board.leap(sq, d)].into_iter().flatten().any(|t| attacked.contains(t))
                    })
                }) {
                    near_castle += 1;
                }
                let cpn = rules.to_cpn(&p);
                assert_eq!(rules.parse_cpn(&cpn).expect("its CPN reads back"), p, "{variant}: {cpn}");
                assert!(Game::from_position(rules.clone(), p).outcome().is_none());
            }
            assert!(turns[0] > 60 && turns[1] > 60, "{variant}: {turns:?}");
            assert!(near_castle > 10, "{variant}: {near_castle} of 200 near the castle they attack");
        }
    }

    #[test]
    fn random_openings_reach_live_positions_a_few_plies_from_the_set_up() {
        let rules = Arc::new(Ruleset::variant("camette").expect("variant"));
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut setups, mut distinct) = (0, std::collections::HashSet::new());
        for _ in 0..700 {
            match random_opening(&rules, 6, &mut rng) {
                None => setups += 1,
                Some(p) => {
                    let game = Game::from_position(rules.clone(), p);
                    assert!(game.outcome().is_none() && !game.legal_moves().is_empty(), "{}", rules.to_cpn(&p));
                    distinct.insert(rules.to_cpn(&p));
                }
            }
        }
        // k = 0 (the set-up) one draw in seven: 100 expected of 700.
        assert!((60..=140).contains(&setups), "{setups} set-ups of 700");
        assert!(distinct.len() > 400, "{} distinct openings of 700", distinct.len());
        assert_eq!(random_opening(&rules, 0, &mut rng), None);
    }
}
