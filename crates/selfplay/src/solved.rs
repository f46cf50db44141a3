//! A player's moves in solved positions (`camelot solve --sample-positions`): the share that
//! keeps the exact value, and for network players the value head's accuracy. The trainer's
//! yardstick on Camette, measured by `camelot bench optimal` and, with
//! `evaluation.solved_positions`, by every generation's evaluation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use camelot_arena::{ModelStore, PlayerSpec};
use camelot_game::CamelotState;
use camelot_rules::{Game, Ruleset};
use camelot_solver::{read_positions, OptimalTally, PositionRecord};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::SelfplayError;

/// Solved positions read from a file (named in errors), perhaps a sample of it.
#[derive(Clone, Debug)]
pub struct SolvedPositions {
    /// The file they come from.
    pub path: PathBuf,
    /// The positions, in file order.
    pub records: Vec<PositionRecord>,
}

impl SolvedPositions {
    /// Reads `path`, keeping every `stride`-th record so that at most `sample` remain (0: all).
    pub fn read(path: &Path, sample: usize) -> Result<SolvedPositions, SelfplayError> {
        let mut records = read_positions(path)?;
        if sample > 0 && records.len() > sample {
            let stride = records.len().div_ceil(sample);
            records = records.into_iter().step_by(stride).collect();
        }
        Ok(SolvedPositions { path: path.to_path_buf(), records })
    }

    /// `spec`'s moves in the positions, on `threads` threads (each with a player of its own,
    /// seeded `seed + thread`), tallied, with the positions where the move did not keep the
    /// value (each record with the move chosen, in file order); `on_position` is called after
    /// each position.
    pub fn tally(
        &self,
        rules: &Arc<Ruleset>,
        spec: &PlayerSpec,
        models: &ModelStore,
        seed: u64,
        threads: usize,
        on_position: &(dyn Fn() + Sync),
    ) -> Result<(OptimalTally, Vec<Miss>), SelfplayError> {
        let records = &self.records;
        let path = self.path.as_path();
        let threads = threads.clamp(1, records.len().max(1));
        let tallies: Vec<Result<(OptimalTally, Vec<Miss>), SelfplayError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        let lines = (t..records.len()).step_by(threads).map(|i| (i, &records[i]));
                        tally_part(rules, spec, models, lines, path, seed + t as u64, on_position)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| Err(SelfplayError::Search("a solved-positions thread panicked".into())))
                })
                .collect()
        });
        let mut total = OptimalTally::default();
        let mut misses = Vec::new();
        for part in tallies {
            let (tally, part_misses) = part?;
            total = total.merged(&tally);
            misses.extend(part_misses);
        }
        misses.sort_by_key(|m| m.line);
        Ok((total, misses))
    }
}

/// A solved position where the player's move did not keep the value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Miss {
    /// Line of the position in its file (1-based).
    pub line: usize,
    /// The move played, in the project's notation.
    pub chosen: String,
    /// The position's record: its value, distance and value-keeping moves.
    #[serde(flatten)]
    pub record: PositionRecord,
}

fn tally_part<'a>(
    rules: &Arc<Ruleset>,
    spec: &PlayerSpec,
    models: &ModelStore,
    lines: impl Iterator<Item = (usize, &'a PositionRecord)>,
    path: &Path,
    seed: u64,
    on_position: &(dyn Fn() + Sync),
) -> Result<(OptimalTally, Vec<Miss>), SelfplayError> {
    let mut player = spec.build_with(rules, ChaCha8Rng::seed_from_u64(seed), models)?;
    let network = match spec {
        PlayerSpec::Mcts(config) => Some(config.network(models, rules)?.0),
        _ => None,
    };
    let mut planes = Vec::new();
    let mut tally = OptimalTally::default();
    let mut misses = Vec::new();
    for (i, record) in lines {
        let at = |reason: String| SelfplayError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("line {} `{}`: {reason}", i + 1, record.cpn),
        };
        let pos = rules.parse_cpn(&record.cpn).map_err(|e| at(e.to_string()))?;
        if record.legal == 0 {
            continue;
        }
        let game = Game::from_position(Arc::clone(rules), pos);
        let choice = player.choose(&game).map_err(|e| at(e.to_string()))?;
        let chosen = rules.move_to_string(&pos, &choice.mv);
        // Every record read has a consistent value (`read_positions` refuses others), so a
        // move not counted as kept is a miss.
        if !tally.add(record, &chosen) {
            misses.push(Miss { line: i + 1, chosen, record: record.clone() });
        }
        if let Some(network) = &network {
            let state = CamelotState::from_game(&game);
            planes.resize(network.planes_len(), 0.0);
            state.encode_planes(&mut planes);
            let raw = network.forward(&planes, 1)?;
            if let [w, d, l, ..] = raw.wdl[..] {
                tally.add_value_head(record, [w, d, l]);
            }
            // The auxiliary outputs are [material, plies left / 100] (`camelot_net::AUX_OUTPUTS`).
            if let Some(&plies_left) = raw.aux.get(1) {
                tally.add_plies_head(record, 100.0 * plies_left);
            }
        }
        on_position();
    }
    Ok((tally, misses))
}
