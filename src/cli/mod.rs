//! Subcommands and the arguments they share.

// First: its macros are for every module below.
#[macro_use]
mod output;

mod apply;
mod arena;
mod bench;
mod bench_net;
mod bench_optimal;
mod bench_selfplay;
mod engine;
mod export;
mod match_cmd;
mod moves;
mod net_cmd;
mod perft;
mod play;
mod ratings;
mod roles;
mod serve;
mod show;
mod solve;
mod sprt;
mod train;

use anyhow::{bail, Context, Result};
use camelot_rules::{Position, Ruleset};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use output::is_broken_pipe;

/// camelot-zero: self-play training, evaluation and tools for Camelot and its family.
#[derive(Parser, Debug)]
#[command(name = "camelot", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count the leaf nodes of the move tree (moves deduplicated by resulting position).
    Perft(perft::PerftArgs),
    /// List the legal moves of a position, one `MOVE<TAB>CPN after` per line, sorted.
    Moves(moves::MovesArgs),
    /// Play moves from a position and print the CPN after the last one.
    Apply(apply::ApplyArgs),
    /// Draw a position with coordinates.
    Show(show::ShowArgs),
    /// Play a game in the terminal: a person (`human`) against an engine, or any two players.
    Play(play::PlayArgs),
    /// Play many games between two players and report A's score with a 95% interval.
    Match(match_cmd::MatchArgs),
    /// Round robin or gauntlet of many players; results appended to DIR/results.csv (resumable).
    Arena(arena::ArenaArgs),
    /// Elo table with 95% intervals of an arena's results, and the Elo-by-generation plot.
    Ratings(ratings::RatingsArgs),
    /// Game pairs between two players until an SPRT accepts H0 or H1.
    Sprt(sprt::SprtArgs),
    /// Train from scratch by self-play (or resume a run): generations of self-play, training
    /// and evaluation.
    Train(train::TrainArgs),
    /// A self-play worker of a distributed run: plays with the newest model, writes shards.
    Selfplay(roles::SelfplayArgs),
    /// The trainer of a distributed run: trains on new shards, publishes the next model.
    Trainer(roles::TrainerArgs),
    /// The evaluator of a distributed run: plays each new model against the previous one and
    /// the baselines.
    Evaluator(roles::EvaluatorArgs),
    /// Print a run's self-play games in notation.
    Games(train::GamesArgs),
    /// Play a run's network against opponents with the run's evaluation search (its promises).
    Evaluate(train::EvaluateArgs),
    /// Save a fresh, untrained network as a checkpoint (a run's generation 0).
    InitNet(net_cmd::InitNetArgs),
    /// A network checkpoint's value and most likely moves in a position.
    EvalNet(net_cmd::EvalNetArgs),
    /// Export a checkpoint as ONNX or safetensors, with a JSON card documenting the encoding.
    Export(export::ExportArgs),
    /// Play through a line protocol on stdin/stdout (UGI, the game-neutral form of UCI) with any
    /// player spec; see docs/ENGINE.md.
    Engine(engine::EngineArgs),
    /// A web page on this machine to play against a network or any player spec; see
    /// docs/SERVE.md.
    Serve(serve::ServeArgs),
    /// Exact values of a small variant (Camette) by retrograde analysis; with --table, a
    /// position's value and value-keeping moves, or solved test positions.
    Solve(solve::SolveArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

/// Dispatches a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Perft(args) => perft::run(args),
        Command::Moves(args) => moves::run(args),
        Command::Apply(args) => apply::run(args),
        Command::Show(args) => show::run(args),
        Command::Play(args) => play::run(args),
        Command::Match(args) => match_cmd::run(args),
        Command::Arena(args) => arena::run(args),
        Command::Ratings(args) => ratings::run(args),
        Command::Sprt(args) => sprt::run(args),
        Command::Train(args) => train::run(args),
        Command::Selfplay(args) => roles::selfplay(args),
        Command::Trainer(args) => roles::trainer(args),
        Command::Evaluator(args) => roles::evaluator(args),
        Command::Games(args) => train::games(args),
        Command::Evaluate(args) => train::evaluate(args),
        Command::InitNet(args) => net_cmd::init(args),
        Command::EvalNet(args) => net_cmd::eval(args),
        Command::Export(args) => export::run(args),
        Command::Engine(args) => engine::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Bench(cmd) => bench::run(cmd),
    }
}

/// `--variant` and `--set`: which ruleset.
#[derive(Args, Debug, Clone)]
pub struct RulesArgs {
    /// Variant: camelot, camelot-cz, chivalry, chivalry-1888, cam, camette [default: camelot,
    /// or the variant of the `--model` given].
    #[arg(long)]
    pub variant: Option<String>,
    /// Override a ruleset flag, e.g. `--set charge_rule=final` (repeatable).
    #[arg(long = "set", value_name = "FLAG=VALUE")]
    pub set: Vec<String>,
}

/// The variant when neither `--variant` nor a model says which.
pub const DEFAULT_VARIANT: &str = "camelot";

impl RulesArgs {
    /// The variant named, `camelot` when none is.
    pub fn variant(&self) -> &str {
        self.variant.as_deref().unwrap_or(DEFAULT_VARIANT)
    }

    /// The ruleset these arguments name.
    pub fn ruleset(&self) -> Result<Ruleset> {
        Ok(Ruleset::with_overrides(self.variant(), &self.set)?)
    }

    /// The variant for a command that plays the checkpoints `models` (as given on the command
    /// line, `DIR/latest` included): the one `--variant` names, else the first model's (read
    /// from its card). A model of another variant is an error naming both.
    pub fn variant_for_models(&self, models: &[&str]) -> Result<String> {
        let mut variant = self.variant.clone();
        for model in models {
            let plays = model_variant(model)?;
            match &variant {
                None => variant = Some(plays),
                Some(v) if *v != plays => match &self.variant {
                    Some(_) => bail!("model `{model}`: the model plays `{plays}`, --variant says `{v}`"),
                    None => bail!("the models disagree: `{}` plays `{v}`, `{model}` plays `{plays}`", models[0]),
                },
                Some(_) => {}
            }
        }
        Ok(variant.unwrap_or_else(|| DEFAULT_VARIANT.to_string()))
    }
}

/// The variant a checkpoint plays, from its card (`DIR/latest` resolved first).
pub fn model_variant(model: &str) -> Result<String> {
    let resolved = camelot_arena::resolve_model_path(model)?;
    let card = camelot_net::read_card(std::path::Path::new(&resolved)).with_context(|| format!("model `{model}`"))?;
    Ok(card.variant)
}

/// `--position`: a CPN, or the variant's start when absent.
#[derive(Args, Debug, Clone)]
pub struct PositionArgs {
    /// Position as CPN (default: the variant's start).
    #[arg(long, value_name = "CPN")]
    pub position: Option<String>,
}

impl PositionArgs {
    /// The position given, read under `rules`, or the variant's start.
    pub fn position(&self, rules: &Ruleset) -> Result<Position> {
        match self.position.as_deref() {
            None => Ok(Position::start(rules)),
            Some(text) => rules.parse_cpn(text).with_context(|| format!("reading --position `{text}`")),
        }
    }
}

/// `--device`: where a network runs.
#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    /// Device: cpu, cuda, cuda:N, wgpu.
    #[arg(long, default_value = "cpu")]
    pub device: String,
}

impl DeviceArgs {
    /// The device named (an error says which names there are).
    pub fn device(&self) -> Result<camelot_net::Device> {
        Ok(camelot_net::parse_device(&self.device)?)
    }
}

/// `--model`: one network checkpoint that the command reads.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Checkpoint, with or without `.safetensors`.
    #[arg(long, value_name = "M")]
    pub model: PathBuf,
}

/// `--blocks` and `--channels`: a network's size.
#[derive(Args, Debug, Clone)]
pub struct ArchitectureArgs {
    /// Residual blocks (default: the default self-play network's).
    #[arg(long)]
    pub blocks: Option<usize>,
    /// Channels (default: the default self-play network's).
    #[arg(long)]
    pub channels: Option<usize>,
}

impl ArchitectureArgs {
    /// The architecture: the default self-play network resized as asked.
    pub fn config(&self) -> camelot_net::NetConfig {
        let default = camelot_net::NetConfig::default();
        camelot_net::NetConfig::new(self.blocks.unwrap_or(default.blocks), self.channels.unwrap_or(default.channels))
    }
}
