//! Test positions from varied games: random, greedy and noisy-perfect players in every pairing,
//! one position per game at a uniformly drawn ply, so every phase of the game is represented.

use crate::error::SolverError;
use crate::positions::PositionRecord;
use crate::probe::probe;
use crate::solve::Table;
use crate::value::Value;
use camelot_rules::{Game, Move, Ruleset};
use std::collections::HashSet;
use std::sync::Arc;

/// SplitMix64: a seeded stream with no dependency, so a positions file is regenerable.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 11) as u128 * n as u128) >> 53) as usize
    }
}

/// The players games are sampled from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// A uniformly random legal move.
    Random,
    /// The most material after the move (an immediate win first), random tie-break.
    Greedy,
    /// A value-keeping move from the table, or a random move one time in four.
    Noisy,
}

impl Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::Greedy => "greedy",
            Policy::Noisy => "noisy",
        }
    }
}

const POLICIES: [Policy; 3] = [Policy::Random, Policy::Greedy, Policy::Noisy];
/// Games longer than this are cut (Camette games that long go round a cycle).
const MAX_PLIES: usize = 200;
/// The no-progress limit the values assume room for (RULES.md 6.7).
const NO_PROGRESS: u32 = 100;

fn choose(policy: Policy, table: &Table, rules: &Ruleset, game: &Game, moves: &[Move], rng: &mut SplitMix) -> Move {
    let pos = game.position();
    let random = moves[rng.below(moves.len())];
    match policy {
        Policy::Random => random,
        Policy::Greedy => {
            let score = |mv: &Move| {
                let mut next = *pos;
                rules.play(&mut next, mv);
                if rules.static_outcome(&next).is_some_and(|o| o.winner == Some(pos.turn())) {
                    return i64::MAX;
                }
                i64::from(next.pieces(pos.turn()).count()) - i64::from(next.pieces(pos.turn().opponent()).count())
            };
            let best = moves.iter().map(score).max().unwrap_or(0);
            let top: Vec<Move> = moves.iter().copied().filter(|m| score(m) == best).collect();
            top[rng.below(top.len())]
        }
        Policy::Noisy => {
            if rng.below(4) == 0 {
                return random;
            }
            let keeping: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|mv| {
                    let mut next = *pos;
                    rules.play(&mut next, mv);
                    match (table.value(pos), table.value(&next).map(Value::parent)) {
                        (Some(before), Some(after)) => crate::probe::keeps(before, after),
                        _ => false,
                    }
                })
                .collect();
            if keeping.is_empty() {
                random
            } else {
                keeping[rng.below(keeping.len())]
            }
        }
    }
}

/// `count` distinct positions (distinct up to the table's symmetries), each from its own game
/// between two of the policies (every ordered pairing in turn), at a ply drawn uniformly from the
/// game's length; positions whose no-progress counter leaves less room than their distance are
/// skipped, so every value holds under the full rules. Reproducible from `seed`.
pub fn sample_positions(
    table: &Table,
    rules: &Arc<Ruleset>,
    count: usize,
    seed: u64,
) -> Result<Vec<PositionRecord>, SolverError> {
    let mut rng = SplitMix::new(seed);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut attempts = 0usize;
    while out.len() < count && attempts < count * 50 {
        let pairing = attempts % 9;
        attempts += 1;
        let players = [POLICIES[pairing / 3], POLICIES[pairing % 3]];
        let mut game = Game::new(Arc::clone(rules));
        loop {
            let moves = game.legal_moves();
            if moves.is_empty() || game.moves().len() >= MAX_PLIES {
                break;
            }
            let policy = players[game.moves().len() % 2];
            let mv = choose(policy, table, rules, &game, &moves, &mut rng);
            game.play(mv);
        }
        // Positions with a move still to make: all but the last when the game ended.
        let open = game.positions().len() - usize::from(game.legal_moves().is_empty());
        if open == 0 {
            continue;
        }
        let ply = rng.below(open);
        let pos = game.positions()[ply];
        if !seen.insert(table.index().index_of(&pos)) {
            continue;
        }
        let p = probe(table, rules, &pos)?;
        if p.moves.is_empty() || p.value.distance().is_some_and(|d| pos.no_progress_plies() + d > NO_PROGRESS) {
            continue;
        }
        let source = format!("{}-{}", players[0].name(), players[1].name());
        out.push(PositionRecord::new(rules.to_cpn(&pos), &p, source, ply as u32));
    }
    Ok(out)
}
