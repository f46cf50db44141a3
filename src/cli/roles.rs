//! `camelot selfplay`, `camelot trainer`, `camelot evaluator`: the three roles of a training
//! run as separate processes over a run directory or bucket (README, "Scaling out"). One file
//! for the three: they share their arguments, signal handling and logging.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use camelot_selfplay::roles::{wait_for_run, RoleOptions};
use camelot_selfplay::store::RunStore;
use camelot_selfplay::{evaluator, layout, trainer, worker, Run, RunConfig};
use clap::Args;

use super::train::log_to_file;
use super::DeviceArgs;

/// What every role takes.
#[derive(Args, Debug)]
pub struct RoleArgs {
    /// Run: a directory (shared by the processes) or `s3://bucket/prefix` (built with
    /// `--features s3`; credentials and endpoint from the AWS_* environment variables).
    #[arg(long)]
    run: String,
    #[command(flatten)]
    device: DeviceArgs,
    /// Seconds between two looks at the run for new models, shards or the config.
    #[arg(long, default_value_t = 10.0)]
    poll_seconds: f64,
    /// Also append the log to this local file. Default: on a run directory,
    /// `logs/selfplay-ID.log`, `logs/trainer.log` or `logs/evaluator.log` in it; on a bucket,
    /// stderr only (which the cluster's scheduler keeps).
    #[arg(long)]
    log_file: Option<PathBuf>,
}

/// Arguments of `camelot selfplay`.
#[derive(Args, Debug)]
pub struct SelfplayArgs {
    #[command(flatten)]
    role: RoleArgs,
    /// This worker's number, unique among the run's workers (Kubernetes: JOB_COMPLETION_INDEX,
    /// Slurm: SLURM_ARRAY_TASK_ID); it names the worker's shards and seeds its games.
    #[arg(long)]
    worker_id: u32,
}

/// Arguments of `camelot trainer`.
#[derive(Args, Debug)]
pub struct TrainerArgs {
    #[command(flatten)]
    role: RoleArgs,
    /// Config of a new run (put as its run.toml); with an existing run it must match.
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Arguments of `camelot evaluator`.
#[derive(Args, Debug)]
pub struct EvaluatorArgs {
    #[command(flatten)]
    role: RoleArgs,
}

/// Logging (stderr, which the scheduler keeps, and a log file: see `--log-file`), the store,
/// and a stop flag set by SIGTERM and SIGINT. `name` names this process's default log file.
fn start(args: &RoleArgs, name: &str) -> Result<(RunStore, RoleOptions)> {
    let log_file = match &args.log_file {
        Some(path) => Some(path.clone()),
        // Each process appends to its own file: no two writers share one.
        None if !camelot_selfplay::store::is_url(&args.run) => {
            let dir = Path::new(&args.run).join(layout::ROLE_LOGS);
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            Some(dir.join(format!("{name}.log")))
        }
        None => None,
    };
    match log_file {
        Some(path) => log_to_file(&path, true)?,
        None => {
            let _ =
                tracing_subscriber::fmt().with_ansi(false).with_target(false).with_writer(std::io::stderr).try_init();
        }
    }
    if !(args.poll_seconds.is_finite() && args.poll_seconds > 0.0) {
        bail!("--poll-seconds must be a positive number of seconds, got {}", args.poll_seconds);
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone()).context("installing the SIGTERM/SIGINT handler")?;
    }
    let store = RunStore::open(&args.run)?;
    let options = RoleOptions { device: args.device.device()?, poll: Duration::from_secs_f64(args.poll_seconds), stop };
    Ok((store, options))
}

/// Runs `camelot selfplay`.
pub fn selfplay(args: SelfplayArgs) -> Result<()> {
    let (store, options) = start(&args.role, &format!("selfplay-{}", args.worker_id))?;
    tracing::info!("worker {} on {}", args.worker_id, store.location());
    let Some(run) = wait_for_run(store, &options)? else {
        outln!("worker {}: stopped before the run started", args.worker_id)?;
        return Ok(());
    };
    let summary = worker::selfplay_worker(&run, args.worker_id, &options)?;
    outln!(
        "worker {}: {} shards, {} games written{}",
        args.worker_id,
        summary.shards,
        summary.games,
        if summary.run_finished { "; the run is finished" } else { "; stopped" }
    )?;
    Ok(())
}

/// Runs `camelot trainer`.
pub fn trainer(args: TrainerArgs) -> Result<()> {
    let (store, options) = start(&args.role, "trainer")?;
    let config = match &args.config {
        Some(path) => Some(RunConfig::load(path)?),
        None => None,
    };
    tracing::info!("trainer on {}", store.location());
    let run = match config {
        Some(config) => Run::create_or_resume(store, &config, false, options.device.clone())?,
        None => Run::open_existing(store, options.device.clone())?.with_context(|| {
            format!("{}: not found: start the first trainer with --config to create the run", layout::CONFIG)
        })?,
    };
    let summary = trainer::trainer(&run, &options)?;
    outln!("trainer: model {} is the newest; {} published by this process", summary.generation, summary.published)?;
    Ok(())
}

/// Runs `camelot evaluator`.
pub fn evaluator(args: EvaluatorArgs) -> Result<()> {
    let (store, options) = start(&args.role, "evaluator")?;
    tracing::info!("evaluator on {}", store.location());
    let Some(run) = wait_for_run(store, &options)? else {
        outln!("evaluator: stopped before the run started")?;
        return Ok(());
    };
    let summary = evaluator::evaluator(&run, &options)?;
    outln!("evaluator: evaluated models {:?}", summary.evaluated)?;
    Ok(())
}
