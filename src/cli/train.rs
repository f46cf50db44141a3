//! `camelot train`: the generation loop with progress bars and a log in the run directory;
//! `camelot games`: a run's self-play games in notation.

use super::DeviceArgs;
use anyhow::{bail, Context, Result};
use camelot_selfplay::record::replay_moves;
use camelot_selfplay::store::{is_url, RunStore};
use camelot_selfplay::{layout, Event, Observer, Run, RunConfig, RunOptions};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Arguments of `camelot train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Config file (see configs/).
    #[arg(long)]
    config: PathBuf,
    /// Run: a directory (created on the first call, resumed on the next ones) or, built with
    /// `--features s3`, `s3://bucket/prefix`.
    #[arg(long)]
    run: String,
    /// Override a config key for a new run, e.g. `--set selfplay.games=128` (repeatable); the
    /// result is frozen into run.toml, and on resume it must match like the file (or pass
    /// --allow-config-change).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[command(flatten)]
    device: DeviceArgs,
    /// Resume even though the config differs from the run's run.toml (the change is logged).
    #[arg(long)]
    allow_config_change: bool,
    /// Stop after this many generations of this invocation (the next call continues).
    #[arg(long)]
    generations_now: Option<u32>,
}

/// Progress bars on a terminal (nothing drawn otherwise); phase summaries go to the log.
struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    draw: bool,
}

impl Observer for Bars {
    fn event(&self, event: Event) {
        let Ok(mut slot) = self.bar.lock() else { return };
        match event {
            Event::Phase { generation, name, total } => {
                if let Some(old) = slot.take() {
                    old.finish_and_clear();
                }
                let bar = ProgressBar::with_draw_target(
                    Some(total),
                    if self.draw { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
                );
                let style =
                    ProgressStyle::with_template("{prefix:>24} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> ");
                bar.set_style(style);
                bar.set_prefix(format!("gen {generation} {name}"));
                *slot = Some(bar);
            }
            Event::Progress { done, message } => {
                if let Some(bar) = slot.as_ref() {
                    bar.inc(done);
                    bar.set_message(message);
                }
            }
            Event::PhaseDone(summary) => {
                if let Some(bar) = slot.take() {
                    bar.finish_and_clear();
                }
                if self.draw {
                    errln!("{summary}");
                }
            }
        }
    }
}

/// Sends `tracing` events to `log.txt` in a run directory (plain text) and, when stderr is not
/// a terminal, to stderr too (without colour codes); a run in a bucket logs to stderr alone.
fn start_logging(run: &str) -> Result<()> {
    if is_url(run) {
        let _ = tracing_subscriber::fmt().with_ansi(false).with_target(false).with_writer(std::io::stderr).try_init();
        return Ok(());
    }
    let root = Path::new(run);
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    log_to_file(&root.join(layout::LOG), !std::io::stderr().is_terminal())
}

/// Sends `tracing` events, as plain text, to the end of the file at `path` and, if `to_stderr`,
/// to stderr too.
pub(crate) fn log_to_file(path: &Path, to_stderr: bool) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening the log file {}", path.display()))?;
    let writer = move || -> Box<dyn std::io::Write> {
        let file: Box<dyn std::io::Write> = Box::new(file.try_clone().expect("the log file handle clones"));
        if to_stderr {
            Box::new(Tee(file, std::io::stderr()))
        } else {
            file
        }
    };
    let _ = tracing_subscriber::fmt().with_ansi(false).with_target(false).with_writer(writer).try_init();
    Ok(())
}

struct Tee<A, B>(A, B);

impl<A: std::io::Write, B: std::io::Write> std::io::Write for Tee<A, B> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(buf)?;
        self.1.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()?;
        self.1.flush()
    }
}

/// Runs `camelot train`.
pub fn run(args: TrainArgs) -> Result<()> {
    let config = RunConfig::load_with_overrides(&args.config, &args.set)?;
    start_logging(&args.run)?;
    let options = RunOptions {
        device: args.device.device()?,
        allow_config_change: args.allow_config_change,
        stop_after: args.generations_now,
    };
    tracing::info!(
        "training {} on {} ({} network) into {}, {} generations",
        args.config.display(),
        config.variant,
        config.network.label(),
        args.run,
        config.generations
    );
    for set in &args.set {
        tracing::info!("--set {set}");
    }
    let bars = Bars { bar: Mutex::new(None), draw: std::io::stderr().is_terminal() };
    let summary = camelot_selfplay::run(&config, RunStore::open(&args.run)?, &options, &bars)?;
    let line = format!(
        "run {}: generation {} of {}, {} training steps",
        args.run, summary.generation, config.generations, summary.train_step
    );
    tracing::info!("{line}");
    outln!("{line}")?;
    Ok(())
}

/// Arguments of `camelot games`.
#[derive(Args, Debug)]
pub struct GamesArgs {
    /// Run: a directory or `s3://bucket/prefix`.
    #[arg(long)]
    run: String,
    /// Generation of the network that played (default: the newest with games).
    #[arg(long)]
    generation: Option<u32>,
    /// Only this game (0-based, in shard order).
    #[arg(long)]
    game: Option<usize>,
}

/// Runs `camelot games`.
pub fn games(args: GamesArgs) -> Result<()> {
    let run = open_run(&args.run, camelot_net::parse_device("cpu")?)?;
    let (config, rules) = (&run.config, &run.rules);
    let generation = match args.generation {
        Some(g) => g,
        None => {
            let mut newest = None;
            for g in (0..=config.generations).rev() {
                if !run.store.list(&layout::shards_dir(g))?.is_empty() {
                    newest = Some(g);
                    break;
                }
            }
            newest.with_context(|| format!("{}: no self-play games yet", args.run))?
        }
    };
    let games = run.generation_games(generation)?;
    if games.is_empty() {
        bail!("{}: generation {generation} has no finished games", args.run);
    }
    let chosen: Vec<(usize, &camelot_selfplay::record::GameRecord)> = match args.game {
        Some(i) => {
            vec![(i, games.get(i).with_context(|| format!("generation {generation} has {} games", games.len()))?)]
        }
        None => games.iter().enumerate().collect(),
    };
    for (i, game) in chosen {
        let moves = replay_moves(rules, game).map_err(|e| anyhow::anyhow!("generation {generation}, game {i}: {e}"))?;
        let result = match game.winner {
            1 => "1-0",
            -1 => "0-1",
            _ => "1/2-1/2",
        };
        outln!(
            "[Variant \"{}\"] [Generation \"{generation}\"] [Game \"{i}\"] [Seed \"{}\"] [End \"{:?}\"] [Network \"{}\"]",
            config.variant,
            game.seed,
            game.end,
            &game.network[..game.network.len().min(16)]
        )?;
        // A scattered start (`selfplay.scattered_starts`) is named, as PGN names a set-up
        // with its FEN tag; with Black to move first, move 1 is written `1...`.
        let black_first = match &game.start {
            Some(cpn) => {
                outln!("[Start \"{cpn}\"]")?;
                game.start_state(rules)
                    .map_err(|e| anyhow::anyhow!("generation {generation}, game {i}: {e}"))?
                    .position()
                    .turn()
                    == camelot_rules::Color::Black
            }
            None => false,
        };
        let mut text = String::new();
        for (k, m) in moves.iter().enumerate() {
            let ply = k + usize::from(black_first);
            if ply.is_multiple_of(2) {
                text.push_str(&format!("{}.", ply / 2 + 1));
            } else if k == 0 {
                text.push_str("1...");
            }
            text.push_str(&m.text);
            text.push(' ');
        }
        outln!("{text}{result}\n")?;
    }
    Ok(())
}

/// Arguments of `camelot evaluate`.
#[derive(Args, Debug)]
pub struct EvaluateArgs {
    /// Run: a directory or `s3://bucket/prefix`.
    #[arg(long)]
    run: String,
    /// Generation of the network to check (default: the newest evaluated one).
    #[arg(long)]
    generation: Option<u32>,
    /// Opponents: `initial` (generation 0), `previous`, a generation number, or a baseline
    /// spec (`random`, `greedy`, `alphabeta:depth=2`, ...). Repeatable.
    #[arg(long = "opponent", required = true)]
    opponents: Vec<String>,
    /// Games per opponent (even: each opening with both colours).
    #[arg(long, default_value_t = 100)]
    games: u32,
    /// Seed of the openings (different from the trainer's evaluation seeds by default).
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Simulations per decision (default: the run's evaluation.simulations).
    #[arg(long)]
    simulations: Option<u32>,
    /// Also append the games to DIR/results.csv (the arena format; `camelot ratings DIR`).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    device: DeviceArgs,
}

/// Runs `camelot evaluate`: a run's network against opponents with the run's own evaluation
/// search, one `score:` line per opponent.
pub fn evaluate(args: EvaluateArgs) -> Result<()> {
    if args.games == 0 || !args.games.is_multiple_of(2) {
        bail!("--games must be even and positive (each opening is played with both colours), got {}", args.games);
    }
    let mut run = open_run(&args.run, args.device.device()?)?;
    if let Some(sims) = args.simulations {
        if sims == 0 {
            bail!("--simulations must be at least 1");
        }
        run.config.evaluation.simulations = sims;
    }
    let generation = match args.generation {
        Some(g) => g,
        None => camelot_selfplay::run::read_state(&run.store)?.generation,
    };
    let config = &run.config;
    let mut results = match &args.out {
        Some(out) => Some(camelot_tournament::ResultsFile::open(&out.join("results.csv"))?),
        None => None,
    };
    outln!(
        "generation {generation} of {} at {} simulations{}, ply cap {}, {} games per opponent",
        args.run,
        config.evaluation.simulations,
        if config.selfplay.gumbel { " (Gumbel)" } else { "" },
        config.evaluation_max_plies(),
        args.games
    )?;
    for opponent in &args.opponents {
        let started = std::time::Instant::now();
        let report = camelot_selfplay::evaluator::check_network(&run, generation, opponent, args.games, args.seed)?;
        if let Some(file) = results.as_mut() {
            for row in &report.rows {
                file.append(row)?;
            }
        }
        let plies: u32 = report.rows.iter().map(|r| r.plies).sum();
        outln!(
            "vs {}: {} ({:.0} plies per game, {:.0} s)",
            report.opponent,
            report.tally.summary_line(),
            plies as f64 / report.rows.len().max(1) as f64,
            started.elapsed().as_secs_f64()
        )?;
    }
    Ok(())
}

/// Opens an existing run, or says that there is none at `location`.
fn open_run(location: &str, device: camelot_net::Device) -> Result<Run> {
    Run::open_existing(RunStore::open(location)?, device)?
        .with_context(|| format!("{location}: not a run (no {})", layout::CONFIG))
}
