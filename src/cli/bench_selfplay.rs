//! `camelot bench selfplay`: self-play throughput of a config's network and search with 1, 2...
//! worker threads, and the share of time spent in the network (the rest is tree search and
//! rules work). With `--processes`, the same work in 1, 2... separate processes instead (as
//! `camelot selfplay` workers run), to show how throughput grows with worker processes.

use super::DeviceArgs;
use anyhow::{bail, Result};
use camelot_game::CamelotState;
use camelot_net::{grid_of, Network};
use camelot_search::derive_seed;
use camelot_selfplay::play::{play_selfplay_group, with_network_threads, SelfplayNetwork};
use camelot_selfplay::RunConfig;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `camelot bench selfplay`.
#[derive(Args, Debug)]
pub struct BenchSelfplayArgs {
    /// Config whose variant, network and self-play settings to use.
    #[arg(long, default_value = "configs/quick.toml")]
    config: PathBuf,
    /// Worker thread counts to compare, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<u32>,
    /// Plies per game (the config's ply cap is lowered to this, to bound the time).
    #[arg(long, default_value_t = 40)]
    plies: u32,
    /// CPU threads of each worker's network passes (so `--threads T` uses T x this cores).
    #[arg(long, default_value_t = 1)]
    network_threads: usize,
    #[command(flatten)]
    device: DeviceArgs,
    /// Worker process counts to compare instead of threads, comma-separated: each process
    /// plays one worker's batch of games (as one `camelot selfplay` worker does per shard).
    #[arg(long, value_delimiter = ',')]
    processes: Vec<u32>,
    /// Internal: play as worker process N of a `--processes` measurement and print its count.
    #[arg(long, hide = true)]
    child: Option<u32>,
}

/// Runs the benchmark.
pub fn run(args: BenchSelfplayArgs) -> Result<()> {
    if args.threads.is_empty() || args.threads.contains(&0) {
        bail!("--threads needs counts of at least 1");
    }
    let mut config = RunConfig::load(&args.config)?;
    config.selfplay.max_plies = args.plies.max(1);
    config.selfplay.resign_threshold = None;
    let rules = Arc::new(camelot_rules::Ruleset::variant(&config.variant)?);
    let codec = CamelotState::new(rules.clone()).codec();
    let network = Network::new(&config.network, grid_of(&codec), &args.device.device()?, 1)?;
    outln!(
        "{}: {} network, {} games per worker batch, {} simulations ({} fast, {:.0}% full), {} plies per game, {} network thread(s) per worker",
        args.config.display(),
        config.network.label(),
        config.selfplay.parallel_games,
        config.selfplay.simulations,
        config.selfplay.fast_simulations,
        100.0 * config.selfplay.full_search_fraction,
        config.selfplay.max_plies,
        args.network_threads
    )?;
    if let Some(index) = args.child {
        let out = with_network_threads(args.network_threads, || {
            play_selfplay_group(
                &rules,
                // Timed as a trained generation plays: fast searches without first-generation noise.
                &SelfplayNetwork { generation: u32::MAX, network: &network, hash: "bench" },
                &config,
                derive_seed(1, 9, index as u64),
                config.selfplay.parallel_games,
                &[],
            )
        })?;
        outln!("decisions {}", out.games.iter().map(|g| g.actions.len() as u64).sum::<u64>())?;
        return Ok(());
    }
    if !args.processes.is_empty() {
        return run_processes(&args);
    }
    let mut base = None;
    for &threads in &args.threads {
        let started = Instant::now();
        let outputs = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (rules, network, config) = (&rules, &network, &config);
                    let network_threads = args.network_threads;
                    scope.spawn(move || {
                        with_network_threads(network_threads, || {
                            play_selfplay_group(
                                rules,
                                &SelfplayNetwork { generation: u32::MAX, network, hash: "bench" },
                                config,
                                derive_seed(1, 9, t as u64),
                                config.selfplay.parallel_games,
                                &[],
                            )
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().map_err(|_| anyhow::anyhow!("a worker panicked"))).collect::<Vec<_>>()
        });
        let seconds = started.elapsed().as_secs_f64();
        let (mut decisions, mut evaluations, mut network_time, mut total_time) =
            (0u64, 0u64, Duration::ZERO, Duration::ZERO);
        for out in outputs {
            let out = out??;
            decisions += out.games.iter().map(|g| g.actions.len() as u64).sum::<u64>();
            evaluations += out.evaluations;
            network_time += out.network_time;
            total_time += out.total_time;
        }
        let rate = decisions as f64 / seconds;
        let share = network_time.as_secs_f64() / total_time.as_secs_f64().max(1e-9);
        let speedup = base.map(|b: f64| rate / b).unwrap_or(1.0);
        base.get_or_insert(rate);
        outln!(
            "threads {threads}: {rate:.1} decisions/s, {:.0} evaluations/s, network {:.1}% of the time, search {:.1}%, {speedup:.2}x one thread",
            evaluations as f64 / seconds,
            100.0 * share,
            100.0 * (1.0 - share)
        )?;
    }
    Ok(())
}

/// `--processes`: each count P starts P copies of this program as `--child` workers at once and
/// measures decisions per second of wall time (process start and network set-up included,
/// as a real worker pays them once).
fn run_processes(args: &BenchSelfplayArgs) -> Result<()> {
    if args.processes.contains(&0) {
        bail!("--processes needs counts of at least 1");
    }
    let exe = std::env::current_exe()?;
    let mut base = None;
    for &processes in &args.processes {
        let started = Instant::now();
        let children: Vec<_> = (0..processes)
            .map(|i| {
                std::process::Command::new(&exe)
                    .args(["bench", "selfplay", "--config"])
                    .arg(&args.config)
                    .args(["--plies", &args.plies.to_string(), "--network-threads", &args.network_threads.to_string()])
                    .args(["--device", &args.device.device, "--child", &i.to_string()])
                    .stdout(std::process::Stdio::piped())
                    .spawn()
            })
            .collect::<std::io::Result<_>>()?;
        let mut decisions = 0u64;
        for child in children {
            let out = child.wait_with_output()?;
            if !out.status.success() {
                bail!("a worker process failed: {}", out.status);
            }
            let text = String::from_utf8_lossy(&out.stdout);
            let count = text.lines().find_map(|l| l.strip_prefix("decisions ")?.trim().parse::<u64>().ok());
            decisions += count.ok_or_else(|| anyhow::anyhow!("a worker process printed no count: {text}"))?;
        }
        let rate = decisions as f64 / started.elapsed().as_secs_f64();
        let speedup = base.map(|b: f64| rate / b).unwrap_or(1.0);
        base.get_or_insert(rate);
        outln!("processes {processes}: {rate:.1} decisions/s, {speedup:.2}x one process")?;
    }
    Ok(())
}
