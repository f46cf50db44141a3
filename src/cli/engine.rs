//! `camelot engine`: any player behind the UGI-shaped line protocol on standard input and
//! output (camelot_frontend::engine; docs/ENGINE.md).

use super::RulesArgs;
use anyhow::{Context, Result};
use camelot_arena::PlayerSpec;
use camelot_frontend::engine::session::MAX_OVERHEAD_MS;
use camelot_frontend::engine::{run_engine, EngineSettings};
use camelot_frontend::DEFAULT_PLAYER;
use clap::Args;

/// Arguments of `camelot engine`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// A network checkpoint to play with: shorthand for `--player mcts:model=M`.
    #[arg(long, value_name = "M", conflicts_with = "player")]
    model: Option<String>,
    /// The player's spec: random, greedy, alphabeta:depth=3, alphabeta:ms=200, uct:sims=1000,
    /// mcts:model=PATH,sims=200 [default: alphabeta:ms=1000].
    #[arg(long, value_name = "SPEC")]
    player: Option<String>,
    /// Seed of the player's random choices (also the `Seed` option).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Milliseconds kept back from every timed search for input, output and the front end's
    /// latency (also the `MoveOverhead` option).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=MAX_OVERHEAD_MS))]
    move_overhead: u64,
}

/// Runs the protocol until `quit` or the end of standard input.
pub fn run(args: EngineArgs) -> Result<()> {
    let spec = match (&args.model, &args.player) {
        (Some(model), _) => format!("mcts:model={model}"),
        (None, Some(player)) => player.clone(),
        (None, None) => DEFAULT_PLAYER.to_string(),
    };
    let spec = PlayerSpec::parse(&spec).with_context(|| format!("player `{spec}`"))?;
    // A model's own variant is the default: `--model` of a Camette network plays Camette.
    let variant = args.rules.variant_for_models(&args.model.as_deref().into_iter().collect::<Vec<_>>())?;
    let settings = EngineSettings {
        spec,
        variant,
        overrides: args.rules.set.clone(),
        seed: args.seed,
        move_overhead_ms: args.move_overhead,
    };
    // Not `stdin().lock()`: the lock cannot move to the engine's input thread.
    Ok(run_engine(settings, std::io::BufReader::new(std::io::stdin()), std::io::stdout().lock())?)
}
