//! `camelot bench optimal`: the share of solved positions (`camelot solve --sample-positions`)
//! where a player's move keeps the exact value, by the position's value, and for network
//! players how often the value head's W/D/L argmax is the exact value.

use super::RulesArgs;
use anyhow::{bail, Context, Result};
use camelot_arena::{ModelStore, PlayerSpec};
use camelot_game::CamelotState;
use camelot_rules::Game;
use camelot_solver::{read_positions, OptimalTally};
use clap::Args;
use indicatif::ProgressBar;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
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
    /// Seed of the player's randomness.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Prints one line per value class, the value head's line for network players, and
/// `value kept: P% of N positions (decided: Q%)` last.
pub fn run(args: OptimalArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let spec: PlayerSpec = args.player.parse()?;
    if spec.is_human() {
        bail!("bench optimal needs an engine player, not `human`");
    }
    let records = read_positions(&args.positions)?;
    let models = ModelStore::new();
    let mut player = spec.build_with(&rules, ChaCha8Rng::seed_from_u64(args.seed), &models)?;
    let network = match &spec {
        PlayerSpec::Mcts(config) => Some(models.network(&config.model, &config.device, &rules)?),
        _ => None,
    };
    let mut planes = Vec::new();
    let mut tally = OptimalTally::default();
    let bar = ProgressBar::new(records.len() as u64);
    let clock = Instant::now();
    for (line, record) in records.iter().enumerate() {
        let at = || format!("{}:{} `{}`", args.positions.display(), line + 1, record.cpn);
        let pos = rules.parse_cpn(&record.cpn).with_context(at)?;
        if record.legal == 0 {
            continue;
        }
        let game = Game::from_position(Arc::clone(&rules), pos);
        let choice = player.choose(&game).with_context(at)?;
        tally.add(record, &rules.move_to_string(&pos, &choice.mv));
        if let Some(network) = &network {
            let state = CamelotState::from_game(&game);
            planes.resize(network.planes_len(), 0.0);
            state.encode_planes(&mut planes);
            let raw = network.forward(&planes, 1).with_context(at)?;
            if let [w, d, l, ..] = raw.wdl[..] {
                tally.add_value_head(record, [w, d, l]);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    outln!(
        "player {spec}, {} positions from {}, {:.1} s",
        records.len(),
        args.positions.display(),
        clock.elapsed().as_secs_f64()
    )?;
    for line in tally.lines() {
        outln!("{line}")?;
    }
    Ok(())
}
