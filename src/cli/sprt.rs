//! `camelot sprt A B`: game pairs between two players until a sequential probability ratio
//! test accepts H0 (elo <= elo0) or H1 (elo >= elo1), the log-likelihood ratio printed as it
//! goes.

use super::arena::GameArgs;
use super::RulesArgs;
use anyhow::{Context, Result};
use camelot_arena::{run_sprt, ModelStore, PlayerSpec};
use camelot_tournament::{results_path, ResultsFile, Sprt, SprtConfig, SprtStatus};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `camelot sprt`.
#[derive(Args, Debug)]
pub struct SprtArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Player A, the one tested (its Elo over B).
    a: String,
    /// Player B, the reference.
    b: String,
    /// Elo of A over B under H0.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    elo0: f64,
    /// Elo of A over B under H1.
    #[arg(long, default_value_t = 30.0, allow_hyphen_values = true)]
    elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Stop undecided after this many pairs (0: no limit).
    #[arg(long, default_value_t = 0)]
    max_pairs: u32,
    #[command(flatten)]
    games: GameArgs,
    /// Also append the counted games to DIR/results.csv.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `camelot sprt`. Each counted pair prints one line ending in `LLR x [lower, upper]`;
/// the last line is `H1 accepted`, `H0 accepted` or `undecided`.
pub fn run(args: SprtArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let a = PlayerSpec::parse(&args.a).with_context(|| format!("player A `{}`", args.a))?.resolved()?;
    let b = PlayerSpec::parse(&args.b).with_context(|| format!("player B `{}`", args.b))?.resolved()?;
    let sprt = SprtConfig { elo0: args.elo0, elo1: args.elo1, alpha: args.alpha, beta: args.beta };
    sprt.validate().map_err(anyhow::Error::msg)?;
    let config = args.games.config();
    let mut file = args.out.as_ref().map(|dir| ResultsFile::open(&results_path(dir))).transpose()?;
    outln!(
        "sprt {a} vs {b}: H0 elo {} / H1 elo {}, alpha {}, beta {}; variant {}, seed {}",
        sprt.elo0,
        sprt.elo1,
        sprt.alpha,
        sprt.beta,
        rules.name(),
        config.seed
    )?;
    let started = Instant::now();
    let models = ModelStore::new();
    // A failed write of standard output stops the test; it is kept whole (not as the arena's
    // error) so that `main` can tell a closed pipe from a real failure.
    let mut write_failed = None;
    let mut on_pair = |test: &Sprt, rows: &[camelot_tournament::ResultRow]| {
        if let Some(file) = file.as_mut() {
            for row in rows {
                file.append(row)?;
            }
        }
        if let Err(err) = outln!("{} ({:.0} s)", test.summary_line(), started.elapsed().as_secs_f64()) {
            let message = format!("{err:#}");
            write_failed = Some(err);
            return Err(camelot_arena::ArenaError::Config(message));
        }
        Ok(())
    };
    let report = run_sprt(&rules, &a, &b, &sprt, args.max_pairs, &config, &models, &mut on_pair);
    if let Some(err) = write_failed {
        return Err(err);
    }
    let report = report?;
    outln!(
        "{}",
        match report.status {
            SprtStatus::AcceptH1 => "H1 accepted",
            SprtStatus::AcceptH0 => "H0 accepted",
            SprtStatus::Continue => "undecided",
        }
    )?;
    Ok(())
}
