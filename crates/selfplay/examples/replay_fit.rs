//! Diagnostic: how well can the network fit a run's own training targets? Reads the replay
//! shards of generations FIRST..=LAST of a run, holds out every tenth game, trains a network
//! (fresh, of the run's shape or BLOCKSxCHANNELS, or the run's model `from=G`) for STEPS steps
//! and prints the policy cross-entropy on training and held-out positions beside the targets'
//! own entropy (the floor), and the value cross-entropy.
//!
//! It answers "does the policy stay near the prior's entropy because the loop trains too few
//! steps, or because the network cannot fit its targets?" (docs/BENCHMARKS.md).
//!
//! `cargo run --release -p camelot-selfplay --example replay_fit -- RUN FIRST LAST STEPS LR [BLOCKSxCHANNELS | from=G]`

use std::path::Path;

use camelot_net::{grid_of, masked_softmax, parse_device, NetConfig, Network, Trainer, TrainingSample};
use camelot_selfplay::record::decode_shard;
use camelot_selfplay::replay::game_samples;
use camelot_selfplay::store::RunStore;
use camelot_selfplay::{layout, Run};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Mean policy cross-entropy, mean target entropy, mean value cross-entropy of `samples`, and
/// the value cross-entropy over positions within 20 plies of their game's end.
fn measure(network: &Network, samples: &[TrainingSample]) -> Result<(f64, f64, f64, f64), Box<dyn std::error::Error>> {
    let actions = network.grid().actions();
    let (mut ce, mut entropy, mut value) = (0.0f64, 0.0f64, 0.0f64);
    let (mut late_value, mut late) = (0.0f64, 0usize);
    for chunk in samples.chunks(256) {
        let planes: Vec<f32> = chunk.iter().flat_map(|s| s.planes.iter().copied()).collect();
        let raw = network.forward(&planes, chunk.len())?;
        for (b, s) in chunk.iter().enumerate() {
            let mut prior = vec![0.0; s.legal.len()];
            masked_softmax(&raw.policy_logits[b * actions..(b + 1) * actions], &s.legal, &mut prior);
            for (&p, &q) in s.policy.iter().zip(&prior) {
                if p > 0.0 {
                    ce -= p as f64 * (q.max(1e-12) as f64).ln();
                    entropy -= p as f64 * (p as f64).ln();
                }
            }
            // The value head gives probabilities.
            let wdl = &raw.wdl[b * 3..b * 3 + 3];
            let v: f64 = s
                .wdl
                .iter()
                .zip(wdl)
                .filter(|(&target, _)| target > 0.0)
                .map(|(&target, &p)| -(target as f64) * (p.max(1e-12) as f64).ln())
                .sum();
            value += v;
            if s.plies_left < 0.2 {
                late_value += v;
                late += 1;
            }
        }
    }
    let n = samples.len() as f64;
    Ok((ce / n, entropy / n, value / n, late_value / late.max(1) as f64))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        return Err("usage: replay_fit RUN FIRST LAST STEPS LR [BLOCKSxCHANNELS | from=G]".into());
    }
    let first: u32 = args[2].parse()?;
    let last: u32 = args[3].parse()?;
    let steps: u64 = args[4].parse()?;
    let lr: f64 = args[5].parse()?;
    let device = parse_device("cpu")?;
    let run = Run::open_existing(RunStore::open(&args[1])?, device.clone())?.ok_or("not a run directory")?;
    let cells = run.codec.cells() as usize;
    let (mut train, mut test) = (Vec::new(), Vec::new());
    let mut game_index = 0u64;
    let (mut proven, mut targets) = (0usize, 0usize);
    for g in first..=last {
        for object in run.store.list(&layout::shards_dir(g))? {
            if layout::parse_shard_key(&object.key).is_none() {
                continue;
            }
            let bytes = run.store.get(&object.key)?.ok_or("listed shard missing")?;
            for game in decode_shard(&bytes, Path::new(&object.key))? {
                proven += game.targets.iter().filter(|t| t.root_value.contains(&1.0)).count();
                targets += game.targets.len();
                let replayed = game_samples(&run.rules, &game, run.config.target_settings())?;
                let into = if game_index.is_multiple_of(10) { &mut test } else { &mut train };
                into.extend(replayed.samples.iter().map(|s| s.unpack(cells)));
                game_index += 1;
            }
        }
    }
    eprintln!(
        "{game_index} games: {} training positions, {} held out; {proven} of {targets} searched roots proven",
        train.len(),
        test.len()
    );
    let network = match args.get(6) {
        Some(spec) if spec.starts_with("from=") => run.load_model(spec[5..].parse()?)?.0,
        Some(shape) => {
            let (b, c) = shape.split_once('x').ok_or("shape BLOCKSxCHANNELS")?;
            let config = NetConfig { blocks: b.parse()?, channels: c.parse()?, ..run.config.network.clone() };
            Network::new(&config, grid_of(&run.codec), &device, 1)?
        }
        None => Network::new(&run.config.network, grid_of(&run.codec), &device, 1)?,
    };
    let mut config = run.config.training.clone();
    config.learning_rate = lr;
    let mut trainer = Trainer::new(&network, run.codec, config)?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let train_probe: Vec<TrainingSample> = train.iter().step_by((train.len() / 3000).max(1)).cloned().collect();
    // The value cross-entropy of predicting every held-out position at the training set's
    // result frequencies: what a value head that learned nothing would score.
    let mut base = [0.0f64; 3];
    for s in &train {
        for (b, &w) in base.iter_mut().zip(&s.wdl) {
            *b += w as f64 / train.len() as f64;
        }
    }
    let base_ce: f64 =
        test.iter().map(|s| (0..3).map(|k| -(s.wdl[k] as f64) * base[k].max(1e-9).ln()).sum::<f64>()).sum::<f64>()
            / test.len() as f64;
    println!(
        "result frequencies (W/D/L, mover's view) {:.3}/{:.3}/{:.3}: held-out value CE at them {base_ce:.3}",
        base[0], base[1], base[2]
    );
    let start = std::time::Instant::now();
    let report = |step: u64, net: &Network| -> Result<(), Box<dyn std::error::Error>> {
        let (ce_train, h_train, v_train, _) = measure(net, &train_probe)?;
        let (ce_test, h_test, v_test, v_late) = measure(net, &test)?;
        println!(
            "step {step}: policy CE train {ce_train:.3} (floor {h_train:.3}) held out {ce_test:.3} (floor {h_test:.3}); \
             value CE train {v_train:.3} held out {v_test:.3} (last 20 plies {v_late:.3}) ({:.0} s)",
            start.elapsed().as_secs_f64()
        );
        Ok(())
    };
    report(0, &trainer.network())?;
    for step in 1..=steps {
        let batch: Vec<&TrainingSample> = (0..128).map(|_| &train[rng.random_range(0..train.len())]).collect();
        trainer.train_step(&batch, &mut rng)?;
        if step % (steps / 8).max(1) == 0 || step == steps {
            report(step, &trainer.network())?;
        }
    }
    Ok(())
}
