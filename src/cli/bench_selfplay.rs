//! `camelot bench selfplay`: self-play throughput of a config's network and search with 1, 2...
//! worker threads, and the share of time spent in the network (the rest is tree search and
//! rules work).

use anyhow::{bail, Result};
use camelot_game::CamelotState;
use camelot_net::{grid_of, parse_device, Network};
use camelot_selfplay::play::{derive_seed, play_selfplay_group, with_network_threads};
use camelot_selfplay::RunConfig;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `camelot bench selfplay`.
#[derive(Args, Debug)]
pub struct SelfplayArgs {
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
    /// Device: cpu, cuda, cuda:N, wgpu.
    #[arg(long, default_value = "cpu")]
    device: String,
}

/// Runs the benchmark.
pub fn run(args: SelfplayArgs) -> Result<()> {
    if args.threads.is_empty() || args.threads.contains(&0) {
        bail!("--threads needs counts of at least 1");
    }
    let mut config = RunConfig::load(&args.config)?;
    config.selfplay.max_plies = args.plies.max(1);
    config.selfplay.resign_threshold = None;
    let rules = Arc::new(camelot_rules::Ruleset::variant(&config.variant)?);
    let codec = CamelotState::new(rules.clone()).codec();
    let network = Network::new(&config.network, grid_of(&codec), &parse_device(&args.device)?, 1)?;
    println!(
        "{}: {} network, {} games per worker batch, {} simulations ({} fast, {:.0}% full), {} plies per game, {} network thread(s) per worker",
        args.config.display(),
        config.network.label(),
        config.selfplay.parallel_games,
        config.selfplay.simulations,
        config.selfplay.fast_simulations,
        100.0 * config.selfplay.full_search_fraction,
        config.selfplay.max_plies,
        args.network_threads
    );
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
                                network,
                                "bench",
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
        println!(
            "threads {threads}: {rate:.1} decisions/s, {:.0} evaluations/s, network {:.1}% of the time, search {:.1}%, {speedup:.2}x one thread",
            evaluations as f64 / seconds,
            100.0 * share,
            100.0 * (1.0 - share)
        );
    }
    Ok(())
}
