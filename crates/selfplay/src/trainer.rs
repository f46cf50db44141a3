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
use crate::metrics::{csv_bytes, SelfplayFigures, TargetFigures, TrainRow};
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
}

/// The trainer's state between generations: the shards it has read, by key.
pub struct RunTrainer<'a> {
    run: &'a Run,
    cache: HashMap<String, CachedShard>,
}

impl<'a> RunTrainer<'a> {
    /// A trainer of `run` with nothing read yet.
    pub fn new(run: &'a Run) -> RunTrainer<'a> {
        RunTrainer { run, cache: HashMap::new() }
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
            self.cache.insert(key.to_string(), CachedShard { games: games.len() as u64, samples, figures });
        }
        self.cache.get(key).ok_or_else(|| self.run.error(key, "not cached"))
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
        let mut figures = SelfplayFigures::default();
        for key in history.iter().filter(|h| h.generation >= first).flat_map(|h| h.shards.iter().map(|s| &s.key)) {
            window.extend(self.load(key)?.samples.iter().cloned());
        }
        for shard in &fresh {
            let cached = self.load(&shard.key)?;
            window.extend(cached.samples.iter().cloned());
            figures = figures.merged(&cached.figures);
        }
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
            let samples: Vec<_> = (0..batch).map(|_| window[rng.random_range(0..window.len())].unpack(cells)).collect();
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

/// Positions of a generation's new games that [`TargetFigures`] measures (spread evenly over
/// them): enough for the means to settle, few enough to cost a fraction of a training step's
/// time per generation.
const MEASURED_POSITIONS: usize = 1024;

/// The [`TargetFigures`] of `samples` under `network` (the one that played them).
fn measure_targets(network: &Network, samples: &[&PackedSample], cells: usize) -> Result<TargetFigures, SelfplayError> {
    let stride = samples.len().div_ceil(MEASURED_POSITIONS).max(1);
    let chosen: Vec<TrainingSample> = samples.iter().step_by(stride).map(|s| s.unpack(cells)).collect();
    let actions = network.grid().actions();
    let (mut priors, mut wdl) = (Vec::with_capacity(chosen.len()), Vec::with_capacity(chosen.len()));
    for chunk in chosen.chunks(256) {
        let planes: Vec<f32> = chunk.iter().flat_map(|s| s.planes.iter().copied()).collect();
        let raw = network.forward(&planes, chunk.len())?;
        for (k, sample) in chunk.iter().enumerate() {
            let mut prior = vec![0.0; sample.legal.len()];
            masked_softmax(&raw.policy_logits[k * actions..(k + 1) * actions], &sample.legal, &mut prior);
            priors.push(prior);
            wdl.push([raw.wdl[3 * k], raw.wdl[3 * k + 1], raw.wdl[3 * k + 2]]);
        }
    }
    Ok(TargetFigures::measure(&chosen, &priors, &wdl))
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
