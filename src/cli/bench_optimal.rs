//! `camelot bench optimal`: the share of solved positions (`camelot solve --sample-positions`)
//! where a player's move keeps the exact value, by the position's value, and for network
//! players how often the value head's W/D/L argmax is the exact value.

use super::RulesArgs;
use anyhow::{bail, Context, Result};
use camelot_arena::{ModelStore, PlayerSpec};
use camelot_selfplay::solved::{Miss, SolvedPositions};
use clap::Args;
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
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
    /// Write the positions where the move did not keep the value to FILE (JSON lines: the
    /// position's record with `line` and the `chosen` move), to study a player's mistakes.
    #[arg(long, value_name = "FILE")]
    misses: Option<PathBuf>,
    /// Replace an existing `--misses` file.
    #[arg(long)]
    force: bool,
}

/// Prints one line per value class, the value head's line for network players, and
/// `value kept: P% of N positions (decided: Q%)` last.
pub fn run(args: OptimalArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let spec: PlayerSpec = args.player.parse()?;
    if spec.is_human() {
        bail!("bench optimal needs an engine player, not `human`");
    }
    if let Some(path) = &args.misses {
        if path.exists() && !args.force {
            bail!("{} exists; pass --force to replace it", path.display());
        }
    }
    let positions = SolvedPositions::read(&args.positions, 0)?;
    let models = ModelStore::new();
    let bar = ProgressBar::new(positions.records.len() as u64);
    let clock = Instant::now();
    let (tally, misses) = positions.tally(&rules, &spec, &models, args.seed, args.threads, &|| bar.inc(1))?;
    bar.finish_and_clear();
    outln!(
        "player {spec}, {} positions from {}, {:.1} s",
        positions.records.len(),
        args.positions.display(),
        clock.elapsed().as_secs_f64()
    )?;
    if let Some(path) = &args.misses {
        write_misses(path, &misses, args.force)?;
        outln!("{} positions where the move did not keep the value: {}", misses.len(), path.display())?;
    }
    for line in tally.lines() {
        outln!("{line}")?;
    }
    Ok(())
}

/// Writes the missed positions as JSON lines, atomically (temporary name, sync, rename).
fn write_misses(path: &Path, misses: &[Miss], force: bool) -> Result<()> {
    let mut text = Vec::new();
    for miss in misses {
        serde_json::to_writer(&mut text, miss)?;
        text.push(b'\n');
    }
    camelot_rules::fsio::write_atomic(path, &text, force).with_context(|| format!("writing {}", path.display()))
}
