//! The trainer: model `g + 1` from model `g` on the replay window, published with the record
//! of what trained it. `camelot train` calls [`RunTrainer::train_next`] once per generation; a
//! `camelot trainer` process ([`trainer`]) waits for enough new shards first. Only the trainer
//! writes `models/` and `train/`.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::Ordering;

use camelot_net::checkpoint::{restore_training_state, training_state_bytes};
use camelot_net::{masked_softmax, CheckpointInfo, Network, TrainStats, TrainingSample};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::SelfplayError;
use crate::layout;
use crate::metrics::{csv_bytes, kl_divergence, SelfplayFigures, TargetFigures, TrainRow};
use crate::pipeline::{Event, Observer, Silent};
use crate::record::decode_shard;
use crate::replay::{game_samples, PackedSample};
use crate::roles::{nap, RoleOptions};
use crate::run::Run;

/// One shard as the trainer used it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardUse {
    /// Its key.
    pub key: String,
    /// Games in it.
    pub games: u64,
    /// Training positions read from it.
    pub positions: u64,
}

/// `train/NNNNNN.inputs.json`: the new data that trained one model, and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingInputs {
    /// The model trained.
    pub generation: u32,
    /// The model it was trained from.
    pub parent: u32,
    /// The shards first used by this generation, in key order.
    pub shards: Vec<ShardUse>,
    /// Their games.
    pub new_games: u64,
    /// Their training positions.
    pub new_positions: u64,
    /// Positions of the whole window sampled from (the newest `replay.window_generations`
    /// generations' new shards).
    pub window_positions: u64,
    /// Training steps taken.
    pub steps: u64,
    /// How the new games went.
    #[serde(default)]
    pub selfplay: SelfplayFigures,
    /// The last step's figures.
    #[serde(default)]
    pub last_step: Option<LastStep>,
    /// How informative the new targets were to the parent network.
    #[serde(default)]
    pub targets: TargetFigures,
}

/// The last training step's loss and value accuracy, for the generation summary.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LastStep {
    /// Total loss.
    pub loss: f32,
    /// Value accuracy.
    pub value_accuracy: f32,
}

/// A shard read once: its training positions and the figures of its games.
struct CachedShard {
    games: u64,
    samples: Vec<PackedSample>,
    figures: SelfplayFigures,
    /// KL(target || prior) of each sample under the network that played it; empty unless
    /// `replay.policy_surprise_weight` is set.
    surprise: Vec<f32>,
}

/// The trainer's state between generations: the shards it has read, by key.
pub struct RunTrainer<'a> {
    run: &'a Run,
    cache: HashMap<String, CachedShard>,
    /// The last network loaded to measure shards' policy surprise, with its generation.
    surprise_network: Option<(u32, Network)>,
}

impl<'a> RunTrainer<'a> {
    /// A trainer of `run` with nothing read yet.
    pub fn new(run: &'a Run) -> RunTrainer<'a> {
        RunTrainer { run, cache: HashMap::new(), surprise_network: None }
    }

    fn load(&mut self, key: &str) -> Result<&CachedShard, SelfplayError> {
        if !self.cache.contains_key(key) {
            let run = self.run;
            let bytes = run.store.get(key)?.ok_or_else(|| run.error(key, "listed but not found"))?;
            let games = decode_shard(&bytes, Path::new(&run.store.describe(key)))?;
            let mut samples = Vec::new();
            let mut figures = SelfplayFigures::default();
            for game in &games {
                let replayed =
                    game_samples(&run.rules, game, run.config.target_settings()).map_err(|e| run.error(key, e))?;
                figures.add(game, &replayed);
                samples.extend(replayed.samples);
            }
            let surprise = if run.config.replay.policy_surprise_weight > 0.0 {
                let (generation, ..) = layout::parse_shard_key(key).ok_or_else(|| run.error(key, "not a shard key"))?;
                self.policy_surprise(generation, &samples)?
            } else {
                Vec::new()
            };
            self.cache.insert(key.to_string(), CachedShard { games: games.len() as u64, samples, figures, surprise });
        }
        self.cache.get(key).ok_or_else(|| self.run.error(key, "not cached"))
    }

    /// KL(target || prior) of each sample, the prior being that of model `generation`, which
    /// played the games (the model is loaded once for all its shards). A pure function of the
    /// run's files, so a resumed trainer draws the same positions.
    fn policy_surprise(&mut self, generation: u32, samples: &[PackedSample]) -> Result<Vec<f32>, SelfplayError> {
        let network = match self.surprise_network.take() {
            Some((g, network)) if g == generation => network,
            _ => self.run.load_model(generation)?.0,
        };
        let cells = self.run.codec.cells() as usize;
        let mut surprise = Vec::with_capacity(samples.len());
        for chunk in samples.chunks(256) {
            let unpacked: Vec<TrainingSample> = chunk.iter().map(|s| s.unpack(cells)).collect();
            let (priors, _) = network_outputs(&network, &unpacked)?;
            surprise.extend(unpacked.iter().zip(&priors).map(|(s, prior)| kl_divergence(&s.policy, prior) as f32));
        }
        self.surprise_network = Some((generation, network));
        Ok(surprise)
    }

    /// What trained models `1..=g`, in generation order.
    pub fn history(&self, g: u32) -> Result<Vec<TrainingInputs>, SelfplayError> {
        (1..=g)
            .map(|k| {
                let key = layout::inputs_key(k);
                let bytes = self
                    .run
                    .store
                    .get(&key)?
                    .ok_or_else(|| self.run.error(&key, "not found (model published without it?)"))?;
                serde_json::from_slice(&bytes).map_err(|e| self.run.error(&key, e.to_string()))
            })
            .collect()
    }

    /// The shards not used by `history` among the games played while models in the replay
    /// window of model `g + 1` were the newest (each read once), and their games. Older games
    /// would be out of the window anyway, and the listing stays short however long the run.
    pub fn fresh_shards(&mut self, g: u32, history: &[TrainingInputs]) -> Result<(Vec<ShardUse>, u64), SelfplayError> {
        let used: BTreeSet<&str> = history.iter().flat_map(|h| h.shards.iter().map(|s| s.key.as_str())).collect();
        let oldest = (g + 1).saturating_sub(self.run.config.replay.window_generations);
        let mut listing = Vec::new();
        for k in oldest..=g {
            listing.extend(self.run.store.list(&layout::shards_dir(k))?);
        }
        let mut fresh = Vec::new();
        let mut games = 0;
        for object in listing {
            if layout::parse_shard_key(&object.key).is_none() || used.contains(object.key.as_str()) {
                continue;
            }
            let shard = self.load(&object.key)?;
            games += shard.games;
            fresh.push(ShardUse { key: object.key.clone(), games: shard.games, positions: shard.samples.len() as u64 });
        }
        Ok((fresh, games))
    }

    /// Removes what a trainer killed while publishing model `g` left (no card: nobody trusts
    /// it), so that the generation is trained again from its inputs.
    pub fn remove_leftovers(&self, g: u32) -> Result<(), SelfplayError> {
        let store = &self.run.store;
        for key in [
            layout::model_key(g, "safetensors"),
            layout::inputs_key(g),
            layout::optimizer_key(g),
            layout::train_metrics_key(g),
        ] {
            if store.exists(&key)? {
                tracing::info!(
                    "removing {}, left by a trainer stopped before publishing model {g}",
                    store.describe(&key)
                );
                store.delete(&key)?;
            }
        }
        Ok(())
    }

    /// Trains model `g + 1` from model `g` (and its optimizer state) on the window: the new
    /// shards `fresh` and those of the newest `replay.window_generations - 1` earlier
    /// generations, taking as many batches as the sampling ratio asks for the new positions.
    /// Seeded by the run seed and `g` alone, so the same inputs give the same weights. Puts the
    /// optimizer state, the step metrics and the inputs record, then publishes the model.
    pub fn train_next(
        &mut self,
        g: u32,
        history: &[TrainingInputs],
        fresh: Vec<ShardUse>,
        observer: &dyn Observer,
    ) -> Result<TrainingInputs, SelfplayError> {
        let run = self.run;
        let config = &run.config;
        let next = g + 1;
        let first = next.saturating_sub(config.replay.window_generations) + 1;
        let mut window: Vec<PackedSample> = Vec::new();
        let mut surprise: Vec<f32> = Vec::new();
        let mut figures = SelfplayFigures::default();
        for key in history.iter().filter(|h| h.generation >= first).flat_map(|h| h.shards.iter().map(|s| &s.key)) {
            let cached = self.load(key)?;
            window.extend(cached.samples.iter().cloned());
            surprise.extend_from_slice(&cached.surprise);
        }
        for shard in &fresh {
            let cached = self.load(&shard.key)?;
            window.extend(cached.samples.iter().cloned());
            surprise.extend_from_slice(&cached.surprise);
            figures = figures.merged(&cached.figures);
        }
        let draw = WindowDraw::new(&surprise, config.replay.policy_surprise_weight, window.len());
        let new_positions: u64 = fresh.iter().map(|s| s.positions).sum();
        if new_positions == 0 {
            return Err(run.error(
                &layout::shards_dir(g),
                "the new games hold no training positions (selfplay.full_search_fraction too small?)",
            ));
        }
        let (network, _) = run.load_model(g)?;
        let mut trainer = camelot_net::Trainer::new(&network, run.codec, config.training.clone())?;
        if g > 0 {
            let key = layout::optimizer_key(g);
            let bytes = run.store.get(&key)?.ok_or_else(|| run.error(&key, "not found"))?;
            restore_training_state(&bytes, Path::new(&run.store.describe(&key)), &mut trainer)?;
        }
        let cells = run.codec.cells() as usize;
        let targets = {
            let fresh_samples: Vec<&PackedSample> =
                fresh.iter().flat_map(|shard| self.cache.get(&shard.key)).flat_map(|c| c.samples.iter()).collect();
            measure_targets(&network, &fresh_samples, cells)?
        };
        let batch = config.replay.batch_size as usize;
        let steps = ((new_positions as f64 * config.replay.sample_reuse as f64) / batch as f64).ceil().max(1.0) as u64;
        observer.event(Event::Phase { generation: next, name: "training", total: steps });
        let mut rng = ChaCha8Rng::seed_from_u64(run.seed(200, g as u64));
        let mut rows = Vec::with_capacity(steps as usize);
        let mut last = TrainStats::default();
        for _ in 0..steps {
            let samples: Vec<_> = (0..batch).map(|_| window[draw.index(&mut rng)].unpack(cells)).collect();
            let refs: Vec<_> = samples.iter().collect();
            last = trainer.train_step(&refs, &mut rng)?;
            rows.push(TrainRow {
                generation: next,
                step: trainer.step(),
                loss: last.total,
                policy_loss: last.policy,
                value_loss: last.value,
                material_loss: last.material,
                plies_left_loss: last.plies_left,
                ownership_loss: last.ownership,
                value_accuracy: last.value_accuracy,
                learning_rate: last.learning_rate,
            });
            observer.event(Event::Progress {
                done: 1,
                message: format!("loss {:.3} (policy {:.3}, value {:.3})", last.total, last.policy, last.value),
            });
        }
        let inputs = TrainingInputs {
            generation: next,
            parent: g,
            new_games: fresh.iter().map(|s| s.games).sum(),
            new_positions,
            window_positions: window.len() as u64,
            steps,
            shards: fresh,
            selfplay: figures,
            last_step: Some(LastStep { loss: last.total, value_accuracy: last.value_accuracy }),
            targets,
        };
        // Everything that describes model `next` first, its card last.
        let store = &run.store;
        store.put_new(&layout::optimizer_key(next), training_state_bytes(&trainer)?)?;
        let metrics_key = layout::train_metrics_key(next);
        store.put_new(&metrics_key, csv_bytes(&rows).map_err(|e| run.error(&metrics_key, e))?)?;
        let inputs_key = layout::inputs_key(next);
        let json = serde_json::to_vec_pretty(&inputs).map_err(|e| run.error(&inputs_key, e.to_string()))?;
        store.put_new(&inputs_key, json)?;
        let info = CheckpointInfo {
            variant: config.variant.clone(),
            parent: Some(format!("{g:06}")),
            step: trainer.step(),
            generation: Some(next as u64),
            play: Some(config.play_settings()),
        };
        run.publish_model(&trainer.network(), &info, next)?;
        // Keep in memory only the shards the next window still samples from.
        let keep: BTreeSet<&str> = history
            .iter()
            .chain(std::iter::once(&inputs))
            .filter(|h| h.generation + config.replay.window_generations > next + 1)
            .flat_map(|h| h.shards.iter().map(|s| s.key.as_str()))
            .collect();
        self.cache.retain(|key, _| keep.contains(key.as_str()));
        let summary = format!(
            "model {next} published: read {} shards, {} games, {} positions (window {}), {steps} steps, loss {:.3}",
            inputs.shards.len(),
            inputs.new_games,
            inputs.new_positions,
            inputs.window_positions,
            last.total
        );
        tracing::info!("trainer: {summary}");
        observer.event(Event::PhaseDone(summary));
        Ok(inputs)
    }
}

/// How the trainer draws positions from the window: uniformly, or each in proportion to
/// `1 - share + share x surprise / mean surprise` (`replay.policy_surprise_weight`), so that the
/// weights average 1 and a position the search did not correct keeps `1 - share` of an even
/// chance.
#[derive(Debug)]
enum WindowDraw {
    Uniform(usize),
    Weighted { cumulative: Vec<f64> },
}

impl WindowDraw {
    fn new(surprise: &[f32], share: f32, len: usize) -> WindowDraw {
        if share <= 0.0 || surprise.len() != len || len == 0 {
            return WindowDraw::Uniform(len);
        }
        let mean = surprise.iter().map(|&k| k.max(0.0) as f64).sum::<f64>() / len as f64;
        if !(mean > 0.0 && mean.is_finite()) {
            return WindowDraw::Uniform(len);
        }
        let share = share as f64;
        let mut total = 0.0;
        let cumulative = surprise
            .iter()
            .map(|&k| {
                total += 1.0 - share + share * k.max(0.0) as f64 / mean;
                total
            })
            .collect();
        WindowDraw::Weighted { cumulative }
    }

    /// The index of the next position drawn (uniform draws use the generator as the trainer
    /// always has, so runs without surprise weighting keep their positions bit for bit).
    fn index(&self, rng: &mut ChaCha8Rng) -> usize {
        match self {
            WindowDraw::Uniform(len) => rng.random_range(0..*len),
            WindowDraw::Weighted { cumulative } => {
                let total = cumulative.last().copied().unwrap_or(0.0);
                let x = rng.random::<f64>() * total;
                cumulative.partition_point(|&c| c <= x).min(cumulative.len().saturating_sub(1))
            }
        }
    }
}

/// Positions of a generation's new games that [`TargetFigures`] measures (spread evenly over
/// them): enough for the means to settle, few enough to cost a fraction of a training step's
/// time per generation.
const MEASURED_POSITIONS: usize = 1024;

/// The [`TargetFigures`] of `samples` under `network` (the one that played them).
fn measure_targets(network: &Network, samples: &[&PackedSample], cells: usize) -> Result<TargetFigures, SelfplayError> {
    let stride = samples.len().div_ceil(MEASURED_POSITIONS).max(1);
    let chosen: Vec<TrainingSample> = samples.iter().step_by(stride).map(|s| s.unpack(cells)).collect();
    let (mut priors, mut wdl) = (Vec::with_capacity(chosen.len()), Vec::with_capacity(chosen.len()));
    for chunk in chosen.chunks(256) {
        let (p, w) = network_outputs(network, chunk)?;
        priors.extend(p);
        wdl.extend(w);
    }
    Ok(TargetFigures::measure(&chosen, &priors, &wdl))
}

/// Per sample: the network's prior over its legal actions, and its predicted win/draw/loss.
type PriorsAndWdl = (Vec<Vec<f32>>, Vec<[f32; 3]>);

/// The network's outputs for `samples`, in one forward pass.
fn network_outputs(network: &Network, samples: &[TrainingSample]) -> Result<PriorsAndWdl, SelfplayError> {
    let actions = network.grid().actions();
    let planes: Vec<f32> = samples.iter().flat_map(|s| s.planes.iter().copied()).collect();
    let raw = network.forward(&planes, samples.len())?;
    let mut priors = Vec::with_capacity(samples.len());
    let mut wdl = Vec::with_capacity(samples.len());
    for (k, sample) in samples.iter().enumerate() {
        let mut prior = vec![0.0; sample.legal.len()];
        masked_softmax(&raw.policy_logits[k * actions..(k + 1) * actions], &sample.legal, &mut prior);
        priors.push(prior);
        wdl.push([raw.wdl[3 * k], raw.wdl[3 * k + 1], raw.wdl[3 * k + 2]]);
    }
    Ok((priors, wdl))
}

/// What a trainer process did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrainerSummary {
    /// The newest model when it returned.
    pub generation: u32,
    /// Models it published.
    pub published: u32,
}

/// A trainer process: publishes model 0 on a new run, then, for each next generation, waits
/// until unused shards of the models in the replay window hold at least `selfplay.games`
/// games, trains on the window and publishes the model. Returns when the run's last model is
/// published or a stop is requested.
pub fn trainer(run: &Run, options: &RoleOptions) -> Result<TrainerSummary, SelfplayError> {
    run.ensure_initial_model()?;
    let mut trainer = RunTrainer::new(run);
    let mut summary = TrainerSummary::default();
    loop {
        let g = run.newest_model()?.unwrap_or(0);
        summary.generation = g;
        if g >= run.config.generations || options.stop.load(Ordering::Relaxed) {
            return Ok(summary);
        }
        trainer.remove_leftovers(g + 1)?;
        let history = trainer.history(g)?;
        if summary.published == 0 && g > 0 {
            tracing::info!("trainer: resuming from model {g}, the last one published");
        }
        tracing::info!("trainer: waiting for {} new games to train model {}", run.config.selfplay.games, g + 1);
        let fresh = loop {
            let (fresh, games) = trainer.fresh_shards(g, &history)?;
            if games >= run.config.selfplay.games as u64 {
                break fresh;
            }
            if !nap(options) {
                return Ok(summary);
            }
        };
        trainer.train_next(g, &history, fresh, &Silent)?;
        summary.published += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frequencies(draw: &WindowDraw, len: usize, draws: usize) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut counts = vec![0usize; len];
        for _ in 0..draws {
            counts[draw.index(&mut rng)] += 1;
        }
        counts.iter().map(|&c| c as f64 / draws as f64).collect()
    }

    #[test]
    fn surprise_weighting_draws_positions_in_proportion_to_their_weight() {
        // Mean surprise 1: weights 1 - s + s x k, i.e. 0.5, 1.0, 1.5 and 1.0 at s = 0.5.
        let surprise = [0.0, 1.0, 2.0, 1.0];
        let draw = WindowDraw::new(&surprise, 0.5, 4);
        for (got, want) in frequencies(&draw, 4, 200_000).iter().zip([0.125, 0.25, 0.375, 0.25]) {
            assert!((got - want).abs() < 0.005, "{got} against {want}");
        }
        // All of the weight on surprise: an uncorrected position is never drawn.
        let draw = WindowDraw::new(&surprise, 1.0, 4);
        assert_eq!(frequencies(&draw, 4, 10_000)[0], 0.0);
    }

    #[test]
    fn without_surprise_weighting_the_draws_are_the_uniform_ones_of_before() {
        let draw = WindowDraw::new(&[], 0.0, 10);
        let mut a = ChaCha8Rng::seed_from_u64(3);
        let mut b = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..100 {
            assert_eq!(draw.index(&mut a), b.random_range(0..10));
        }
        // Surprise all zero (nothing to weigh by) and a share of 0 both fall back to uniform.
        assert!(matches!(WindowDraw::new(&[0.0; 5], 0.5, 5), WindowDraw::Uniform(5)));
        assert!(matches!(WindowDraw::new(&[1.0; 5], 0.0, 5), WindowDraw::Uniform(5)));
    }
}
