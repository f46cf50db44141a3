//! `camelot bench`: throughput figures recorded in docs/BENCHMARKS.md.

use super::RulesArgs;
use anyhow::{bail, Result};
use camelot_rules::{random_playout, EndReason, Position, Ruleset};
use clap::{Args, Subcommand};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::time::Instant;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Uniformly random whole moves under the full rules, to the end of each game.
    Playouts(PlayoutArgs),
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
    }
}

#[derive(Default)]
struct Tally {
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

fn play_games(rules: &Ruleset, games: u64, seed: u64) -> Tally {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Position::start(rules);
    let mut tally = Tally::default();
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
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
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
    let mut total = Tally::default();
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
    println!(
        "variant {}, {} games, {} thread(s), seed {}",
        rules.name(),
        total.games,
        args.threads,
        args.seed
    );
    println!(
        "results: white {} black {} draw {} ({})",
        total.white,
        total.black,
        total.draws,
        reasons.join(", ")
    );
    println!("plies: {} ({:.1} per game)", total.plies, total.plies as f64 / total.games as f64);
    println!("{:.0} plies/s", total.plies as f64 / seconds);
    println!("{:.0} games/s", total.games as f64 / seconds);
    Ok(())
}
