//! Uniformly random playouts under the full rules: the rules core's benchmark and a source of
//! varied positions for tests. Randomness comes from the caller, so this crate needs no RNG.

use crate::outcome::Outcome;
use crate::position::Position;
use crate::ruleset::Ruleset;

/// What a playout did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayoutStats {
    /// Plies played.
    pub plies: u32,
    /// How the game ended.
    pub outcome: Outcome,
    /// The final position.
    pub last: Position,
}

/// Plays uniformly random legal moves from `start` until the game ends. `pick(n)` must return
/// an index below `n`. Every game ends: the no-progress rule bounds its length.
pub fn random_playout<F: FnMut(usize) -> usize>(rules: &Ruleset, start: &Position, mut pick: F) -> PlayoutStats {
    let mut pos = *start;
    let mut history = Vec::with_capacity(256);
    history.push(pos.hash());
    let mut moves = Vec::with_capacity(128);
    let mut plies = 0;
    loop {
        let outcome = match rules.static_outcome(&pos) {
            Some(o) => Some(o),
            None => {
                rules.legal_moves(&pos, &mut moves);
                let occurrences = crate::outcome::occurrences(history.iter().rev().copied(), &pos);
                rules.outcome(&pos, !moves.is_empty(), occurrences)
            }
        };
        if let Some(outcome) = outcome {
            return PlayoutStats { plies, outcome, last: pos };
        }
        let mv = moves[pick(moves.len())];
        rules.play(&mut pos, &mv);
        if pos.no_progress_plies() == 0 {
            history.clear();
        }
        history.push(pos.hash());
        plies += 1;
    }
}
