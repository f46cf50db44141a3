//! `camelot bench optimal`: the share of solved positions (`camelot solve --sample-positions`)
//! where a player's move keeps the exact value, by the position's value, and for network
//! players how often the value head's W/D/L argmax is the exact value.

use super::RulesArgs;
use anyhow::{bail, Result};
use camelot_arena::{ModelStore, PlayerSpec};
use camelot_selfplay::solved::SolvedPositions;
use clap::Args;
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `camelot bench optimal`.
#[derive(Args, Debug)]
pub struct OptimalArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Solved positions (JSON lines from `camelot solve --sample-positions`).
    #[arg(long)]
    positions: PathBuf,
    /// The player, any arena spec: `alphabeta:depth=3`, `uct:sims=400`, `greedy`, `random`,
    /// `mcts:model=M,sims=64`.
    #[arg(long)]
    player: String,
    /// Seed of the player's randomness (thread t's player gets seed + t).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads, each with a player of its own and an even share of the positions.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// Prints one line per value class, the value head's line for network players, and
/// `value kept: P% of N positions (decided: Q%)` last.
pub fn run(args: OptimalArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let spec: PlayerSpec = args.player.parse()?;
    if spec.is_human() {
        bail!("bench optimal needs an engine player, not `human`");
    }
    let positions = SolvedPositions::read(&args.positions, 0)?;
    let models = ModelStore::new();
    let bar = ProgressBar::new(positions.records.len() as u64);
    let clock = Instant::now();
    let tally = positions.tally(&rules, &spec, &models, args.seed, args.threads, &|| bar.inc(1))?;
    bar.finish_and_clear();
    outln!(
        "player {spec}, {} positions from {}, {:.1} s",
        positions.records.len(),
        args.positions.display(),
        clock.elapsed().as_secs_f64()
    )?;
    for line in tally.lines() {
        outln!("{line}")?;
    }
    Ok(())
}
