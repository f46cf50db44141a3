//! States along random games: the inputs benchmarks, tests and tools feed a network when no
//! self-play data is at hand.

use std::sync::Arc;

use camelot_rules::Ruleset;
use camelot_search::GameState as _;

use crate::state::CamelotState;

/// Up to `count` decision states (inside moves too) met along games of uniformly random
/// decisions from the start, at most `max_decisions` per game; `pick(n)` chooses an index
/// below `n` (the caller's seeded RNG, for reproducible samples).
pub fn random_game_states(
    rules: &Arc<Ruleset>,
    count: usize,
    max_decisions: usize,
    mut pick: impl FnMut(usize) -> usize,
) -> Vec<CamelotState> {
    let mut out = Vec::with_capacity(count);
    let mut actions = Vec::new();
    while out.len() < count && max_decisions > 0 {
        let mut state = CamelotState::new(rules.clone());
        for _ in 0..max_decisions {
            if state.terminal().is_some() || out.len() == count {
                break;
            }
            out.push(state.clone());
            actions.clear();
            state.legal_actions(&mut actions);
            state.apply(actions[pick(actions.len())]);
        }
    }
    out
}
