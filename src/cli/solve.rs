//! `camelot solve`: exact values of a small variant (camelot-solver), a position's value and
//! value-keeping moves from a table on disk, and solved test positions for `bench optimal`.

use super::RulesArgs;
use anyhow::{bail, Context, Result};
use camelot_rules::Position;
use camelot_solver::{describe, probe, read_table, sample_positions, solve, write_positions, write_table, Progress};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `camelot solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Write the solved table here (refused if it exists, unless --force).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite --out or --out-positions if it exists.
    #[arg(long)]
    force: bool,
    /// Read a table written by `--out` instead of solving.
    #[arg(long)]
    table: Option<PathBuf>,
    /// With --table: print this position's value and every move that keeps it.
    #[arg(long)]
    position: Option<String>,
    /// With --table: sample this many test positions from varied games.
    #[arg(long)]
    sample_positions: Option<usize>,
    /// Seed of --sample-positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where --sample-positions writes its JSON lines.
    #[arg(long)]
    out_positions: Option<PathBuf>,
}

/// An indicatif bar per phase, with a rate and an ETA.
struct Bar(Option<ProgressBar>);

impl Progress for Bar {
    fn phase(&mut self, name: &str, total: u64) {
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template("{prefix:>22} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_string());
        self.0 = Some(bar);
    }

    fn set(&mut self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(done);
        }
    }

    fn done(&mut self, message: &str) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
        errln!("{message}");
    }
}

/// Peak resident memory of this process (Linux), for docs/BENCHMARKS.md.
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{:.2} GiB", kib / (1024.0 * 1024.0)))
}

/// Solves, probes or samples, as the arguments ask. The last line of a solve states the start
/// position's value.
pub fn run(args: SolveArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let start = Position::start(&rules);
    let Some(table_path) = &args.table else {
        if args.position.is_some() || args.sample_positions.is_some() {
            bail!("--position and --sample-positions read a table: pass --table FILE");
        }
        if let Some(out) = &args.out {
            if out.exists() && !args.force {
                bail!("{} exists; pass --force to overwrite it", out.display());
            }
        }
        let clock = Instant::now();
        let (table, stats) = solve(&rules, &[start], &mut Bar(None))?;
        let seconds = clock.elapsed().as_secs_f64();
        if let Some(out) = &args.out {
            write_table(&table, out, args.force)?;
            outln!("table: {}", out.display())?;
        }
        outln!("positions: {} (one per mirror pair, mover as White), links: {}", stats.positions, stats.links)?;
        outln!("won {} / drawn {} / lost {} for the side to move", stats.wins, stats.draws, stats.losses)?;
        let np = rules.flags().no_progress_plies;
        outln!(
            "longest distance to the end: {} plies ({} the {np}-ply no-progress limit, so it changes no value)",
            stats.max_distance,
            if stats.max_distance <= np { "within" } else { "BEYOND" }
        )?;
        outln!(
            "time: {seconds:.1} s (enumerate {:.1}, link {:.1}, retrograde {:.1}); arrays {:.2} GiB, peak memory {}",
            stats.seconds[0],
            stats.seconds[1],
            stats.seconds[2],
            stats.peak_bytes as f64 / (1u64 << 30) as f64,
            peak_memory().unwrap_or_else(|| "unknown".to_string())
        )?;
        let value = table.value(&start).context("the start position is not in its own table")?;
        outln!("{} start: {}", rules.name(), describe(value, start.turn()))?;
        return Ok(());
    };
    if args.out.is_some() {
        bail!("--out writes a new table; with --table the table is read, not written");
    }
    let clock = Instant::now();
    let table = read_table(&rules, table_path)?;
    errln!("read {} positions from {} in {:.1} s", table.len(), table_path.display(), clock.elapsed().as_secs_f64());
    if let Some(n) = args.sample_positions {
        let Some(out) = &args.out_positions else { bail!("--sample-positions needs --out-positions FILE") };
        let records = sample_positions(&table, &rules, n, args.seed)?;
        write_positions(&records, out, args.force)?;
        outln!("{} positions written to {}", records.len(), out.display())?;
    }
    if let Some(cpn) = &args.position {
        let pos = rules.parse_cpn(cpn).with_context(|| format!("reading --position `{cpn}`"))?;
        let p = probe(&table, &rules, &pos)?;
        outln!("{}: {} ({})", rules.to_cpn(&pos), p.value, describe(p.value, pos.turn()))?;
        if let Some(d) = p.value.distance().filter(|d| pos.no_progress_plies() + d > rules.flags().no_progress_plies) {
            outln!(
                "note: the value assumes room for {d} plies before the no-progress limit; this position has used {}",
                pos.no_progress_plies()
            )?;
        }
        for m in &p.moves {
            outln!("  {:<16} {}", m.notation, m.value)?;
        }
        outln!("value-keeping moves: {}", p.keeping().join(" "))?;
    }
    if args.position.is_none() && args.sample_positions.is_none() {
        let value = table.value(&start).context("the start position is not in the table")?;
        outln!("{} start: {}", rules.name(), describe(value, start.turn()))?;
    }
    Ok(())
}
