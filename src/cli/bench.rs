//! `camelot bench`: throughput figures recorded in docs/BENCHMARKS.md.

use super::RulesArgs;
use anyhow::{bail, Result};
use camelot_game::CamelotState;
use camelot_rules::{random_playout, EndReason, Position, Ruleset};
use camelot_search::{GameState as _, SearchConfig, Searcher, Tree, UniformEvaluator};
use clap::{Args, Subcommand};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Uniformly random whole moves under the full rules, to the end of each game.
    Playouts(PlayoutArgs),
    /// Tree work of the search alone: self-play moves with a uniform evaluator.
    Search(SearchArgs),
    /// Network inference per batch size (positions/s, GFLOP/s) and training throughput.
    Net(super::bench_net::NetArgs),
    /// Self-play throughput by worker threads and the network's share of the time.
    Selfplay(super::bench_selfplay::BenchSelfplayArgs),
    /// How often a player's move keeps the exact value of solved positions (`camelot solve`).
    Optimal(super::bench_optimal::OptimalArgs),
}

/// Arguments of `camelot bench search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Worker threads, each searching its own batch of games.
    #[arg(long, default_value_t = 1)]
    threads: u64,
    /// Games searched together per thread (one evaluator call per round for all of them).
    #[arg(long, default_value_t = 16)]
    games: usize,
    /// Simulations per move.
    #[arg(long, default_value_t = 800)]
    simulations: u32,
    /// Moves to play in each game (each one a full search), or fewer if it ends.
    #[arg(long, default_value_t = 8)]
    moves: u32,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Arguments of `camelot bench playouts`.
#[derive(Args, Debug)]
pub struct PlayoutArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Games in all.
    #[arg(long, default_value_t = 2000)]
    games: u64,
    /// Worker threads; the games are split evenly.
    #[arg(long, default_value_t = 1)]
    threads: u64,
    /// Seed; thread `t` uses ChaCha8 seeded with `seed + t`, so a run is reproducible.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Playouts(args) => playouts(args),
        BenchCommand::Search(args) => search(args),
        BenchCommand::Net(args) => super::bench_net::run(args),
        BenchCommand::Selfplay(args) => super::bench_selfplay::run(args),
        BenchCommand::Optimal(args) => super::bench_optimal::run(args),
    }
}

#[derive(Default)]
struct EndTally {
    games: u64,
    plies: u64,
    white: u64,
    black: u64,
    draws: u64,
    reasons: BTreeMap<&'static str, u64>,
}

fn reason_name(reason: EndReason) -> &'static str {
    match reason {
        EndReason::CastleOccupied => "castle",
        EndReason::MaterialDraw => "material",
        EndReason::AllCaptured => "all-captured",
        EndReason::NoLegalMove => "no-legal-move",
        EndReason::Repetition => "repetition",
        EndReason::NoProgress => "no-progress",
    }
}

fn play_games(rules: &Ruleset, games: u64, seed: u64) -> EndTally {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Position::start(rules);
    let mut tally = EndTally::default();
    for _ in 0..games {
        let stats = random_playout(rules, &start, |n| rng.random_range(0..n));
        tally.games += 1;
        tally.plies += stats.plies as u64;
        match stats.outcome.winner {
            Some(camelot_rules::Color::White) => tally.white += 1,
            Some(camelot_rules::Color::Black) => tally.black += 1,
            None => tally.draws += 1,
        }
        *tally.reasons.entry(reason_name(stats.outcome.reason)).or_default() += 1;
    }
    tally
}

fn playouts(args: PlayoutArgs) -> Result<()> {
    if args.threads == 0 || args.games == 0 {
        bail!("--threads and --games must be at least 1");
    }
    let rules = args.rules.ruleset()?;
    let started = Instant::now();
    let tallies: Vec<EndTally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.threads)
            .map(|t| {
                let share = args.games / args.threads + u64::from(t < args.games % args.threads);
                let rules = &rules;
                scope.spawn(move || play_games(rules, share, args.seed.wrapping_add(t)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("playout thread panicked")).collect()
    });
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    let mut total = EndTally::default();
    for t in tallies {
        total.games += t.games;
        total.plies += t.plies;
        total.white += t.white;
        total.black += t.black;
        total.draws += t.draws;
        for (k, v) in t.reasons {
            *total.reasons.entry(k).or_default() += v;
        }
    }
    let reasons: Vec<String> = total.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
    outln!("variant {}, {} games, {} thread(s), seed {}", rules.name(), total.games, args.threads, args.seed)?;
    outln!("results: white {} black {} draw {} ({})", total.white, total.black, total.draws, reasons.join(", "))?;
    outln!("plies: {} ({:.1} per game)", total.plies, total.plies as f64 / total.games as f64)?;
    outln!("{:.0} plies/s", total.plies as f64 / seconds)?;
    outln!("{:.0} games/s", total.games as f64 / seconds)?;
    Ok(())
}

/// Searches `games` games from the start for `moves` moves each, advancing every tree with its
/// chosen action (tree reuse), and returns the simulations run.
fn search_games(rules: &Arc<Ruleset>, args: &SearchArgs, seed: u64) -> Result<u64> {
    let config = SearchConfig { simulations: args.simulations, ..SearchConfig::default() };
    let mut searcher = Searcher::new(config)?;
    let start = CamelotState::new(rules.clone());
    let mut trees: Vec<Tree<CamelotState>> =
        (0..args.games).map(|g| Tree::new(start.clone(), seed.wrapping_mul(1000).wrapping_add(g as u64))).collect();
    let mut simulations = 0u64;
    let mut results = Vec::new();
    for _ in 0..args.moves {
        trees.retain(|t| t.root_state().terminal().is_none());
        if trees.is_empty() {
            break;
        }
        searcher.search_into(&mut trees, &mut UniformEvaluator, &mut results)?;
        for (tree, result) in trees.iter_mut().zip(&results) {
            simulations += result.simulations as u64;
            // A whole move may take several decisions; each advance reuses the subtree.
            tree.advance(result.action)?;
        }
    }
    Ok(simulations)
}

fn search(args: SearchArgs) -> Result<()> {
    if args.threads == 0 || args.games == 0 {
        bail!("--threads and --games must be at least 1");
    }
    let rules = Arc::new(args.rules.ruleset()?);
    let started = Instant::now();
    let counts: Vec<Result<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.threads)
            .map(|t| {
                let rules = &rules;
                let args = &args;
                scope.spawn(move || search_games(rules, args, args.seed.wrapping_add(t)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("search thread panicked")).collect()
    });
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    let mut total = 0;
    for c in counts {
        total += c?;
    }
    outln!(
        "variant {}, {} thread(s) x {} games, {} simulations per decision, uniform evaluator",
        rules.name(),
        args.threads,
        args.games,
        args.simulations
    )?;
    outln!("simulations: {total} in {seconds:.2} s")?;
    outln!("{:.0} simulations/s", total as f64 / seconds)?;
    Ok(())
}
