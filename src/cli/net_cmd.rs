//! `camelot init-net`: a fresh, untrained network saved as a checkpoint (what a training run's
//! generation 0 is); `camelot eval-net`: what a checkpoint thinks of a position: its
//! win/draw/loss value and its most likely whole moves (the product of its decision
//! probabilities along each move's legs).

use super::{ArchitectureArgs, DeviceArgs, ModelArgs, PositionArgs, RulesArgs};
use anyhow::{bail, Context, Result};
use camelot_game::CamelotState;
use camelot_net::{
    grid_of, load_checkpoint, parse_device, save_checkpoint, CheckpointInfo, CheckpointPaths, NetEvaluator, Network,
};
use camelot_rules::Ruleset;
use camelot_search::{Evaluations, Evaluator, GameState as _};
use clap::Args;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `camelot init-net`.
#[derive(Args, Debug)]
pub struct InitNetArgs {
    #[command(flatten)]
    rules: RulesArgs,
    #[command(flatten)]
    architecture: ArchitectureArgs,
    /// Seed of the initial weights.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Checkpoint to write (`PATH.safetensors` and `PATH.json`); never overwritten.
    #[arg(long)]
    out: PathBuf,
}

/// Runs `camelot init-net`.
pub fn init(args: InitNetArgs) -> Result<()> {
    let rules = args.rules.ruleset()?;
    if !args.rules.set.is_empty() {
        bail!("a model records its variant by name only: --set is not supported here");
    }
    let config = args.architecture.config();
    let codec = CamelotState::new(Arc::new(rules.clone())).codec();
    let network = Network::new(&config, grid_of(&codec), &parse_device("cpu")?, args.seed)?;
    let info =
        CheckpointInfo { variant: rules.name().to_string(), parent: None, step: 0, generation: Some(0), play: None };
    let card = save_checkpoint(&args.out, &network, &info)?;
    let paths = CheckpointPaths::of(&args.out);
    outln!(
        "wrote {} and {}: {} {} network, {} weights",
        paths.weights.display(),
        paths.card.display(),
        card.variant,
        config.label(),
        card.parameters
    )?;
    Ok(())
}

/// Arguments of `camelot eval-net`.
#[derive(Args, Debug)]
pub struct EvalNetArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    position: PositionArgs,
    /// Moves to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[command(flatten)]
    device: DeviceArgs,
}

/// Runs `camelot eval-net`.
pub fn eval(args: EvalNetArgs) -> Result<()> {
    let device = args.device.device()?;
    let (network, card) = load_checkpoint(&args.model.model, &device)?;
    let rules =
        Arc::new(Ruleset::variant(&card.variant).with_context(|| {
            format!("{}: variant `{}` of the model card", args.model.model.display(), card.variant)
        })?);
    let pos = args.position.position(&rules)?;
    let root = CamelotState::from_position(rules.clone(), pos);
    if root.terminal().is_some() {
        bail!("the game is over in this position: nothing to evaluate");
    }
    outln!(
        "model: {} ({}, {}, {} weights, step {}{})",
        args.model.model.display(),
        card.variant,
        card.architecture.label(),
        card.parameters,
        card.step,
        card.generation.map(|g| format!(", generation {g}")).unwrap_or_default()
    )?;
    outln!("position: {}", rules.to_cpn(&pos))?;

    // Every decision state along every legal move, evaluated in one batch.
    let moves = root.legal_moves();
    let mut index_of: HashMap<u64, usize> = HashMap::new();
    let mut states: Vec<CamelotState> = Vec::new();
    let mut paths: Vec<Vec<(usize, u32)>> = Vec::with_capacity(moves.len());
    for m in 0..moves.len() {
        let mut state = root.clone();
        let mut steps = Vec::new();
        for action in root.actions_for_move(m) {
            let slot = *index_of.entry(state.hash()).or_insert_with(|| {
                states.push(state.clone());
                states.len() - 1
            });
            steps.push((slot, action));
            state.apply(action);
        }
        paths.push(steps);
    }
    let mut evaluator = NetEvaluator::new(network, 0);
    let mut out = Evaluations::new();
    let mut legal = Vec::new();
    for s in &states {
        legal.clear();
        s.legal_actions(&mut legal);
        out.push_state(&legal);
    }
    let refs: Vec<&CamelotState> = states.iter().collect();
    evaluator.evaluate(&refs, &mut out).map_err(|e| anyhow::anyhow!("evaluating: {e}"))?;

    let value = out.value(0);
    let mover = pos.turn().name();
    outln!(
        "value for {mover} (to move): win {:.1}%  draw {:.1}%  loss {:.1}%  (score {:+.3})",
        100.0 * value.win,
        100.0 * value.draw,
        100.0 * value.loss,
        value.value()
    )?;
    let mut ranked: Vec<(f32, String)> = paths
        .iter()
        .enumerate()
        .map(|(m, steps)| {
            let p = steps
                .iter()
                .map(|&(slot, action)| {
                    let at = out.legal_actions(slot).iter().position(|&a| a == action).unwrap_or(usize::MAX);
                    out.priors(slot).get(at).copied().unwrap_or(0.0)
                })
                .product();
            (p, root.path_of(m).to_string())
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    outln!("top moves ({} legal):", moves.len())?;
    for (rank, (p, text)) in ranked.iter().take(args.top).enumerate() {
        outln!("{:>3}. {:>5.1}%  {text}", rank + 1, 100.0 * p)?;
    }
    Ok(())
}
