//! `camelot match`: two players, many games over shared random openings, A's score with a 95%
//! interval.

use super::RulesArgs;
use anyhow::{Context, Result};
use camelot_arena::{play_match, MatchConfig, MatchReport, PlayerSpec};
use camelot_tournament::ResultRow;
use camelot_tournament::Tally;
use clap::Args;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `camelot match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Player A, whose score is reported: random, greedy, alphabeta:depth=3, alphabeta:ms=200,
    /// uct:sims=1000, mcts:model=PATH,sims=200[,material=F,...].
    a: String,
    /// Player B.
    b: String,
    /// Games in all; games 2k and 2k+1 share a random opening, A playing White in the first.
    #[arg(long, default_value_t = 40)]
    games: u32,
    #[command(flatten)]
    game: super::arena::GameArgs,
    /// Print every game's moves after its result line.
    #[arg(long)]
    moves: bool,
}

/// Plays the match. Progress goes to standard error; standard output gets one line per game
/// (by index), a summary, and last the line `score: S% (W/D/L w/d/l) +- H`.
pub fn run(args: MatchArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let a = PlayerSpec::parse(&args.a).with_context(|| format!("player A `{}`", args.a))?;
    let b = PlayerSpec::parse(&args.b).with_context(|| format!("player B `{}`", args.b))?;
    let config = MatchConfig {
        games: args.games,
        threads: args.game.threads,
        seed: args.game.seed,
        opening_plies: args.game.opening_plies,
        max_plies: args.game.max_plies,
        games_per_thread: args.game.games_per_thread,
    };
    outln!(
        "match {a} vs {b}: variant {}, {} games, seed {}, {} opening plies, {} threads",
        rules.name(),
        config.games,
        config.seed,
        config.opening_plies,
        config.threads
    )?;
    let started = Instant::now();
    let done = AtomicU32::new(0);
    let total = config.games;
    let progress = |index: usize, g: &ResultRow| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        let white = g.result.white_score();
        let score_a = if MatchReport::a_is_white(index) { white } else { 1.0 - white };
        errln!("[{n}/{total}] game {} (A {}): A scores {score_a} ({} plies)", index + 1, colour(index), g.plies);
    };
    let report = play_match(Arc::clone(&rules), &a, &b, &config, &progress)?;
    let mut as_white = Tally::default();
    let mut as_black = Tally::default();
    let mut reasons: BTreeMap<String, u32> = BTreeMap::new();
    let mut plies = 0u64;
    for (index, g) in report.games.iter().enumerate() {
        outln!("game {} (A {}): {} ({} plies)", index + 1, colour(index), g.reason, g.plies)?;
        if args.moves {
            outln!("  {}", g.moves)?;
        }
        if MatchReport::a_is_white(index) { &mut as_white } else { &mut as_black }.add(report.score_a(index));
        *reasons.entry(g.reason.clone()).or_default() += 1;
        plies += g.plies as u64;
    }
    for (reason, count) in &reasons {
        outln!("{count:>5}  {reason}")?;
    }
    let tally = report.tally();
    errln!("{} games in {:.1} s", tally.games(), started.elapsed().as_secs_f64());
    outln!(
        "A = {a}, B = {b}; A as white W/D/L {}/{}/{}, as black {}/{}/{}; {:.1} plies per game",
        as_white.wins,
        as_white.draws,
        as_white.losses,
        as_black.wins,
        as_black.draws,
        as_black.losses,
        plies as f64 / tally.games().max(1) as f64
    )?;
    outln!("{}", tally.summary_line())?;
    Ok(())
}

fn colour(index: usize) -> &'static str {
    if MatchReport::a_is_white(index) {
        "white"
    } else {
        "black"
    }
}
