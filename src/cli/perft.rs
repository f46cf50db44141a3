//! `camelot perft`: move-generator check and speed figure.

use super::{PositionArgs, RulesArgs};
use anyhow::Result;
use clap::Args;
use std::time::Instant;

/// Arguments of `camelot perft`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    #[command(flatten)]
    rules: RulesArgs,
    #[command(flatten)]
    position: PositionArgs,
    /// Depth in plies.
    #[arg(long)]
    depth: u32,
    /// Print the count below each root move first.
    #[arg(long)]
    divide: bool,
}

/// Prints the count as the last line of standard output; timing goes to standard error.
pub fn run(args: PerftArgs) -> Result<()> {
    let rules = args.rules.ruleset()?;
    let pos = args.position.position(&rules)?;
    let started = Instant::now();
    let total = if args.divide {
        let rows = rules.perft_divide(&pos, args.depth);
        for (mv, count) in &rows {
            outln!("{mv}\t{count}")?;
        }
        if args.depth == 0 {
            1
        } else {
            rows.iter().map(|(_, c)| c).sum()
        }
    } else {
        rules.perft(&pos, args.depth)
    };
    let seconds = started.elapsed().as_secs_f64();
    errln!(
        "perft {} ({}): {total} leaves in {seconds:.3} s, {:.0} moves/s",
        args.depth,
        rules.name(),
        total as f64 / seconds.max(1e-9)
    );
    outln!("{total}")?;
    Ok(())
}
