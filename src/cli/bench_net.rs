//! `camelot bench net`: inference and training throughput of a network architecture, with
//! GFLOP/s counted from the architecture so that it compares with a matmul peak
//! (`scripts/matmul-peak.py`).

use super::{ArchitectureArgs, DeviceArgs, RulesArgs};
use anyhow::{bail, Context, Result};
use camelot_game::{planes_len, random_game_states, CamelotState};
use camelot_net::{
    forward_flops, grid_of, load_checkpoint, parse_device, Network, Precision, TrainConfig, Trainer, TrainingSample,
};
use camelot_search::GameState as _;
use clap::Args;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `camelot bench net`.
#[derive(Args, Debug)]
pub struct NetArgs {
    #[command(flatten)]
    rules: RulesArgs,
    #[command(flatten)]
    architecture: ArchitectureArgs,
    /// Time this checkpoint (a trained network's activations, which `--precision int8` rounds)
    /// instead of a fresh network of `--blocks` and `--channels`.
    #[arg(long, value_name = "M", conflicts_with_all = ["blocks", "channels"])]
    model: Option<std::path::PathBuf>,
    /// Batch sizes to time, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,64,128,256")]
    batch: Vec<usize>,
    /// Seconds to time each batch size for (after one warm-up batch).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Batch size of the training measurement (0: skip it).
    #[arg(long, default_value_t = 256)]
    train_batch: usize,
    /// Training steps to time (after one warm-up step).
    #[arg(long, default_value_t = 5)]
    train_steps: usize,
    #[command(flatten)]
    device: DeviceArgs,
    /// Time burn's own operators instead of the folded CPU model that `cpu` runs by default,
    /// and burn's autodiff instead of the CPU's hand-written gradients for training (for
    /// comparison; other devices always run burn).
    #[arg(long)]
    burn: bool,
    /// Also run the largest batch on the CPU and fail if the outputs differ by a relative error
    /// of 1e-3 or more (for GPU devices).
    #[arg(long)]
    check_cpu: bool,
    /// Arithmetic of the residual tower on the CPU: `f32`, or `int8` (8-bit activations and
    /// weights, AVX-512 VNNI where the CPU has it); with `int8` the outputs' largest difference
    /// from `f32` on the largest batch is printed first.
    #[arg(long, default_value = "f32", value_parser = parse_precision)]
    precision: Precision,
}

fn parse_precision(text: &str) -> Result<Precision, String> {
    Precision::parse(text).ok_or_else(|| format!("unknown precision {text:?}: f32 or int8"))
}

/// Largest difference between two output arrays, relative to the largest magnitude in `reference`.
fn relative_error(got: &[f32], reference: &[f32]) -> f32 {
    let scale = reference.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(1e-6);
    got.iter().zip(reference).fold(0.0f32, |m, (a, b)| m.max((a - b).abs())) / scale
}

/// Runs the benchmark.
pub fn run(args: NetArgs) -> Result<()> {
    if args.batch.is_empty() || args.batch.contains(&0) {
        bail!("--batch needs sizes of at least 1");
    }
    if args.seconds.is_nan() || args.seconds <= 0.0 {
        bail!("--seconds must be positive");
    }
    let rules = Arc::new(args.rules.ruleset()?);
    let device = args.device.device()?;
    let start = CamelotState::new(rules.clone());
    let codec = start.codec();
    let grid = grid_of(&codec);
    let trained = match &args.model {
        Some(path) => {
            let (network, card) =
                load_checkpoint(path, &device).with_context(|| format!("loading {}", path.display()))?;
            if card.variant != rules.name() {
                bail!("{} plays `{}`, not `{}` (--variant)", path.display(), card.variant, rules.name());
            }
            network
        }
        None => Network::new(&args.architecture.config(), grid, &device, 1).context("building the network")?,
    };
    let config = trained.config().clone();
    let network = trained.with_precision(args.precision)?;
    let flops = forward_flops(&config, camelot_game::PLANES, grid) as f64;
    outln!(
        "network {} on {} ({}x{} grid): {} weights, {:.1} MFLOP per position, device {}, inference by {} ({})",
        config.label(),
        rules.name(),
        grid.files,
        grid.ranks,
        network.num_params(),
        flops / 1e6,
        args.device.device,
        if network.is_folded() && !args.burn { "the folded CPU model" } else { "burn" },
        network.precision().name()
    )?;

    let max_batch = args.batch.iter().copied().max().unwrap_or(1).max(args.train_batch);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let states = random_game_states(&rules, max_batch, 200, |n| rng.random_range(0..n));
    let per = planes_len(&codec);
    let mut planes = vec![0.0f32; max_batch * per];
    for (state, out) in states.iter().zip(planes.chunks_mut(per)) {
        state.encode_planes(out);
    }

    if args.check_cpu {
        let cpu = network.to_device(&parse_device("cpu")?);
        let got = network.forward(&planes[..max_batch * per], max_batch)?;
        let want = cpu.forward(&planes[..max_batch * per], max_batch)?;
        let policy = relative_error(&got.policy_logits, &want.policy_logits);
        let value = relative_error(&got.wdl, &want.wdl);
        outln!("check against cpu ({max_batch} positions): relative error policy {policy:.2e}, value {value:.2e}")?;
        if policy.max(value) >= 1e-3 || !policy.is_finite() || !value.is_finite() {
            bail!("{} and cpu disagree beyond 1e-3", args.device.device);
        }
    }

    if network.precision() != trained.precision() {
        let got = network.forward(&planes[..max_batch * per], max_batch)?;
        let want = trained.forward(&planes[..max_batch * per], max_batch)?;
        // Largest and mean absolute differences.
        let differences = |got: &[f32], want: &[f32]| {
            let (max, sum) = got
                .iter()
                .zip(want)
                .fold((0.0f32, 0.0f64), |(m, s), (a, b)| (m.max((a - b).abs()), s + (a - b).abs() as f64));
            (max, sum / want.len().max(1) as f64)
        };
        let (policy, policy_mean) = differences(&got.policy_logits, &want.policy_logits);
        let (value, value_mean) = differences(&got.wdl, &want.wdl);
        outln!(
            "{} against {} ({max_batch} positions): policy logits differ by {policy_mean:.4} on average, {policy:.4} at most; win/draw/loss probabilities by {value_mean:.4}, {value:.4}",
            network.precision().name(),
            trained.precision().name()
        )?;
    }

    let forward = |input: &[f32], batch: usize| match args.burn {
        true => network.forward_burn(input, batch),
        false => network.forward(input, batch),
    };
    let mut best = (0.0f64, 0usize);
    for &batch in &args.batch {
        let input = &planes[..batch * per];
        forward(input, batch)?;
        let started = Instant::now();
        let mut batches = 0u64;
        while started.elapsed().as_secs_f64() < args.seconds {
            forward(input, batch)?;
            batches += 1;
        }
        let seconds = started.elapsed().as_secs_f64();
        let positions = (batches * batch as u64) as f64 / seconds;
        let gflops = positions * flops / 1e9;
        outln!(
            "batch {batch}: {positions:.0} positions/s, {:.2} ms per batch, {gflops:.1} GFLOP/s",
            1e3 * seconds / batches as f64
        )?;
        if gflops > best.0 {
            best = (gflops, batch);
        }
    }

    if args.train_batch > 0 && args.train_steps > 0 {
        let samples: Vec<TrainingSample> = states[..args.train_batch]
            .iter()
            .zip(planes.chunks(per))
            .map(|(state, planes)| {
                let mut legal = Vec::new();
                state.legal_actions(&mut legal);
                let policy = vec![1.0 / legal.len() as f32; legal.len()];
                TrainingSample {
                    planes: planes.to_vec(),
                    legal,
                    policy,
                    wdl: [0.3, 0.4, 0.3],
                    material: 0.0,
                    plies_left: 0.5,
                    ownership: Vec::new(),
                    mirrorable: true,
                }
            })
            .collect();
        let batch: Vec<&TrainingSample> = samples.iter().collect();
        let mut trainer = Trainer::new(&network, codec, TrainConfig::default())?;
        if args.burn {
            trainer.use_autodiff();
        }
        trainer.train_step(&batch, &mut rng)?;
        let started = Instant::now();
        for _ in 0..args.train_steps {
            trainer.train_step(&batch, &mut rng)?;
        }
        let seconds = started.elapsed().as_secs_f64();
        let positions = (args.train_steps * args.train_batch) as f64 / seconds;
        // A training step costs about three forward passes (forward, and backward for inputs
        // and for weights).
        outln!(
            "training (batch {}, gradients by {}): {positions:.0} positions/s, {:.0} ms per step, {:.1} GFLOP/s",
            args.train_batch,
            if trainer.gradients_by_hand() { "hand" } else { "burn's autodiff" },
            1e3 * seconds / args.train_steps as f64,
            3.0 * positions * flops / 1e9
        )?;
    }
    outln!("best: {:.1} GFLOP/s at batch {}", best.0, best.1)?;
    Ok(())
}
