//! `camelot ratings DIR`: the Elo table of everything in `DIR/results.csv`, and the
//! Elo-by-generation plot.

use anyhow::{bail, Result};
use camelot_tournament::{
    fit_ratings, plot_elo_by_generation, read_results, results_path, FitOptions, ResultRow, TournamentError,
};
use clap::Args;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Arguments of `camelot ratings`.
#[derive(Args, Debug)]
pub struct RatingsArgs {
    /// Arena directory (holding results.csv), or a results file.
    dir: PathBuf,
    /// Rate only the games of this variant (needed when the file holds several).
    #[arg(long)]
    variant: Option<String>,
    /// Virtual draws added to each pair of players that met (keeps a clean sweep finite).
    #[arg(long, default_value_t = 1.0)]
    prior_draws: f64,
    /// The player fixed at 0 Elo, against whom every interval is measured (default: `random`
    /// when it played, else the first player in the file).
    #[arg(long)]
    anchor: Option<String>,
    /// Where to draw the Elo-by-generation plot (default: DIR/elo.png; skipped when no
    /// checkpoint player is rated).
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// Runs `camelot ratings`.
pub fn run(args: RatingsArgs) -> Result<()> {
    let path = results_path(&args.dir);
    if !path.exists() {
        bail!("{}: no results file", path.display());
    }
    let all = read_results(&path)?;
    let variants: BTreeSet<&str> = all.iter().map(|r| r.variant.as_str()).collect();
    let rows: Vec<ResultRow> = match &args.variant {
        Some(v) => all.iter().filter(|r| &r.variant == v).cloned().collect(),
        None if variants.len() > 1 => {
            bail!(
                "{} holds games of several variants ({}): choose one with --variant",
                path.display(),
                variants.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
        None => all.clone(),
    };
    if !(args.prior_draws >= 0.0 && args.prior_draws.is_finite()) {
        bail!("--prior-draws must be a finite number >= 0, got {}", args.prior_draws);
    }
    let table = fit_ratings(&rows, &FitOptions { prior_draws: args.prior_draws, anchor: args.anchor.clone() })?;
    out!("{}", table.to_text())?;
    let plot = args.plot.clone().unwrap_or_else(|| path.with_file_name("elo.png"));
    match plot_elo_by_generation(&table, &plot, 900, 560) {
        Ok(()) => errln!("plot: {}", plot.display()),
        Err(TournamentError::NoGenerations) if args.plot.is_none() => {
            errln!("no plot: no checkpoint player (mcts:model=.../NNNNNN) in these results")
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
