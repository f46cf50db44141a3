//! Self-play workers, trainer and evaluator as separate processes over one run store (DESIGN.md,
//! "Scaling beyond one machine"). They share the building blocks of `camelot train` (a
//! self-play group and its shard, the training step, the evaluation games, checkpoint bytes)
//! and talk only through objects that are each written once:
//!
//! - `run.toml`: the frozen config, put by the first trainer; the others wait for it.
//! - `models/NNNNNN.safetensors` then `models/NNNNNN.json`: only the trainer writes them, the
//!   card last; a model exists once its card does, and readers find the newest by listing
//!   `models/`.
//! - `selfplay/NNNNNN/WWWWW-SSSSSS.shard`: games of model NNNNNN by worker WWWWW, its SSSSSS-th
//!   shard. A restarted worker lists its own shards and goes on after the last; if a name is
//!   taken anyway (two processes with one id) the put fails and the shard takes the next number.
//! - `train/NNNNNN.inputs.json`: which shards (and how many positions) trained model NNNNNN,
//!   put before the model; `train/NNNNNN.optim`, `metrics/train-NNNNNN.csv` beside it.
//! - `arena/evaluation-NNNNNN.csv`: the evaluator's games of model NNNNNN.
//!
//! A trainer killed before a model's card leaves objects that no reader trusts (no card, or
//! inputs of a generation without a model); the restarted trainer, the only writer of `models/`
//! and `train/`, removes them and trains that generation again from its last published model.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camelot_game::CamelotState;
use camelot_net::checkpoint::{checkpoint_bytes, network_from_bytes, parse_card, training_state_bytes};
use camelot_net::{grid_of, CheckpointInfo, Device, ModelCard, Network};
use camelot_rules::Ruleset;
use serde::{Deserialize, Serialize};

use crate::config::{Gate, RunConfig};
use crate::error::SelfplayError;
use crate::play::{derive_seed, play_selfplay_group, with_network_threads};
use crate::record::{decode_shard, encode_shard};
use crate::replay::{game_samples, PackedSample};
use crate::run::{
    csv_bytes, evaluation_games, result_fields, train_on_window, Silent, TrainedGeneration, TRAIN_HEADER,
};
use crate::store::RunStore;

/// What every role needs besides the store.
#[derive(Clone, Debug)]
pub struct RoleOptions {
    /// Device of the network.
    pub device: Device,
    /// How long to wait between two looks at the store (new models, new shards, run.toml).
    pub poll: Duration,
    /// Set by SIGTERM/SIGINT: a worker stops after the shard it is playing, the others at once
    /// (between steps, never in the middle of a put).
    pub stop: Arc<AtomicBool>,
}

/// Key of model `g`'s weights or card (`ext` = `safetensors` or `json`).
pub fn model_key(g: u32, ext: &str) -> String {
    format!("models/{g:06}.{ext}")
}

/// Key of the record of what trained model `g`.
pub fn inputs_key(g: u32) -> String {
    format!("train/{g:06}.inputs.json")
}

/// Key of worker `worker`'s shard number `seq`, played by model `g`.
pub fn shard_key(g: u32, worker: u32, seq: u64) -> String {
    format!("selfplay/{g:06}/{worker:05}-{seq:06}.shard")
}

/// Key of the evaluator's results for model `g`.
pub fn evaluation_key(g: u32) -> String {
    format!("arena/evaluation-{g:06}.csv")
}

/// `(generation, worker, seq)` of a distributed worker's shard key, if it is one.
pub fn parse_shard_key(key: &str) -> Option<(u32, u32, u64)> {
    let rest = key.strip_prefix("selfplay/")?.strip_suffix(".shard")?;
    let (g, name) = rest.split_once('/')?;
    let (worker, seq) = name.split_once('-')?;
    Some((g.parse().ok()?, worker.parse().ok()?, seq.parse().ok()?))
}

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
}

fn store_error(store: &RunStore, key: &str, message: impl Into<String>) -> SelfplayError {
    SelfplayError::Store { object: store.describe(key), message: message.into() }
}

/// The run's config from `run.toml`, if it is there yet.
pub fn read_run_config(store: &RunStore) -> Result<Option<RunConfig>, SelfplayError> {
    let Some(bytes) = store.get("run.toml")? else { return Ok(None) };
    let text = String::from_utf8(bytes).map_err(|_| store_error(store, "run.toml", "not UTF-8"))?;
    RunConfig::parse(&text, Path::new(&store.describe("run.toml"))).map(Some)
}

/// The newest published model (the highest `models/NNNNNN.json`), if any.
pub fn newest_model(store: &RunStore) -> Result<Option<u32>, SelfplayError> {
    let listing = store.list("models")?;
    Ok(listing.iter().filter_map(|o| o.key.strip_prefix("models/")?.strip_suffix(".json")?.parse::<u32>().ok()).max())
}

/// Loads published model `g` from the store, checked as `load_checkpoint` checks files.
pub fn load_model(store: &RunStore, g: u32, device: &Device) -> Result<(Network, ModelCard), SelfplayError> {
    let (card_key, weights_key) = (model_key(g, "json"), model_key(g, "safetensors"));
    let card_bytes = store.get(&card_key)?.ok_or_else(|| store_error(store, &card_key, "not found"))?;
    let card = parse_card(&card_bytes, Path::new(&store.describe(&card_key)))?;
    let weights = store.get(&weights_key)?.ok_or_else(|| store_error(store, &weights_key, "not found"))?;
    let network = network_from_bytes(&card, weights, Path::new(&store.describe(&weights_key)), device)?;
    Ok((network, card))
}

/// Sleeps `poll`, in short naps so that a stop request is seen soon; false if stopped.
fn nap(options: &RoleOptions) -> bool {
    let until = Instant::now() + options.poll;
    while Instant::now() < until {
        if options.stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(100)));
    }
    !options.stop.load(Ordering::Relaxed)
}

/// Waits for `run.toml` and model 0 (started by the trainer); None if stopped first.
fn wait_for_run(store: &RunStore, options: &RoleOptions) -> Result<Option<RunConfig>, SelfplayError> {
    let mut told = false;
    loop {
        if let Some(config) = read_run_config(store)? {
            if newest_model(store)?.is_some() {
                check_distributable(&config, store)?;
                return Ok(Some(config));
            }
        }
        if !told {
            tracing::info!("waiting for the trainer to start the run at {}", store.location());
            told = true;
        }
        if !nap(options) {
            return Ok(None);
        }
    }
}

/// The SPRT gate needs every worker to wait for the gate's verdict on each model, and games
/// against earlier networks need a worker to load them all: only the generation-synchronous
/// `camelot train` has them.
fn check_distributable(config: &RunConfig, store: &RunStore) -> Result<(), SelfplayError> {
    if config.selfplay.past_opponents > 0.0 {
        return Err(SelfplayError::Config {
            file: store.describe("run.toml").into(),
            message: "selfplay.past_opponents is supported by `camelot train` only, not by separate roles".into(),
        });
    }
    if config.evaluation.gate == Gate::Sprt {
        return Err(SelfplayError::Config {
            file: store.describe("run.toml").into(),
            message: "evaluation.gate = \"sprt\" is supported by `camelot train` only, not by separate roles".into(),
        });
    }
    Ok(())
}

fn ruleset(config: &RunConfig, store: &RunStore) -> Result<Arc<Ruleset>, SelfplayError> {
    Ruleset::variant(&config.variant).map(Arc::new).map_err(|e| SelfplayError::Config {
        file: store.describe("run.toml").into(),
        message: format!("variant: {e}"),
    })
}

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    /// Shards written by this process.
    pub shards: u64,
    /// Games in them.
    pub games: u64,
    /// Whether it stopped because the run reached its last generation (rather than a signal).
    pub run_finished: bool,
}

/// A self-play worker: plays one group of `selfplay.parallel_games` games at a time with the
/// newest model (looking for a newer one between groups), writes each group as one shard, and
/// returns once the run's last model is published or a stop is requested (after finishing
/// the shard in progress).
pub fn selfplay_worker(store: &RunStore, worker: u32, options: &RoleOptions) -> Result<WorkerSummary, SelfplayError> {
    let mut summary = WorkerSummary::default();
    let Some(config) = wait_for_run(store, options)? else { return Ok(summary) };
    let rules = ruleset(&config, store)?;
    // Go on after this worker's own last shard (from an earlier life of this worker id).
    let mut seq = store
        .list("selfplay")?
        .iter()
        .filter_map(|o| parse_shard_key(&o.key))
        .filter(|&(_, w, _)| w == worker)
        .map(|(_, _, s)| s + 1)
        .max()
        .unwrap_or(0);
    let mut loaded: Option<(u32, Network, String)> = None;
    while !options.stop.load(Ordering::Relaxed) {
        let Some(newest) = newest_model(store)? else { break };
        if newest >= config.generations {
            summary.run_finished = true;
            break;
        }
        if loaded.as_ref().is_none_or(|(g, _, _)| *g != newest) {
            let (network, card) = load_model(store, newest, &options.device)?;
            tracing::info!("worker {worker}: playing with model {newest}");
            loaded = Some((newest, network, card.weights_sha256));
        }
        let Some((g, network, hash)) = loaded.as_ref() else { break };
        let started = Instant::now();
        let seed = derive_seed(config.seed, 1_000_000 + worker as u64, seq);
        let count = config.selfplay.parallel_games;
        let out = with_network_threads(config.network_threads(), || {
            play_selfplay_group(&rules, network, hash, &config, seed, count, &[])
        })?;
        let positions: usize = out.games.iter().map(|game| game.targets.len()).sum();
        let bytes = encode_shard(&out.games)?;
        loop {
            let key = shard_key(*g, worker, seq);
            seq += 1;
            match store.put_new(&key, bytes.clone()) {
                Ok(()) => {
                    tracing::info!(
                        "worker {worker}: {key}: {} games, {positions} positions in {:.1} s",
                        out.games.len(),
                        started.elapsed().as_secs_f64()
                    );
                    break;
                }
                Err(SelfplayError::Exists { object }) => {
                    tracing::warn!("worker {worker}: {object} exists (another process with this worker id?)")
                }
                Err(e) => return Err(e),
            }
        }
        summary.shards += 1;
        summary.games += out.games.len() as u64;
    }
    Ok(summary)
}

/// What a trainer did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrainerSummary {
    /// The newest model when it returned.
    pub generation: u32,
    /// Models it published.
    pub published: u32,
}

/// The replay data the trainer has read: every shard's training positions, by key.
struct ShardCache {
    shards: HashMap<String, (u64, Vec<PackedSample>)>,
}

impl ShardCache {
    fn load(
        &mut self,
        store: &RunStore,
        rules: &Arc<Ruleset>,
        key: &str,
    ) -> Result<&(u64, Vec<PackedSample>), SelfplayError> {
        if !self.shards.contains_key(key) {
            let bytes = store.get(key)?.ok_or_else(|| store_error(store, key, "listed but not found"))?;
            let name = store.describe(key);
            let games = decode_shard(&bytes, Path::new(&name))?;
            let mut samples = Vec::new();
            for game in &games {
                samples.extend(game_samples(rules, game).map_err(|e| store_error(store, key, e))?);
            }
            self.shards.insert(key.to_string(), (games.len() as u64, samples));
        }
        self.shards.get(key).ok_or_else(|| store_error(store, key, "not cached"))
    }
}

/// Opens the run for the trainer: puts `run.toml` from `config` on a new run, or checks that
/// `config` (if given) matches the one there.
pub fn open_store_run(store: &RunStore, config: Option<&RunConfig>) -> Result<RunConfig, SelfplayError> {
    let existing = match read_run_config(store)? {
        Some(existing) => existing,
        None => {
            let config = config.ok_or_else(|| {
                store_error(store, "run.toml", "not found: start the first trainer with --config to create the run")
            })?;
            match store.put_new("run.toml", config.to_toml().into_bytes()) {
                Ok(()) | Err(SelfplayError::Exists { .. }) => {}
                Err(e) => return Err(e),
            }
            read_run_config(store)?.ok_or_else(|| store_error(store, "run.toml", "vanished after being written"))?
        }
    };
    if let Some(config) = config {
        let diff = existing.differences(config);
        if !diff.is_empty() {
            return Err(store_error(
                store,
                "run.toml",
                format!("the config differs from the run's in:\n  {}\n(start a new run)", diff.join("\n  ")),
            ));
        }
    }
    check_distributable(&existing, store)?;
    Ok(existing)
}

/// Removes what a trainer killed while publishing model `g` left (no card: nobody trusts it).
fn remove_leftovers(store: &RunStore, g: u32) -> Result<(), SelfplayError> {
    for key in
        [model_key(g, "safetensors"), inputs_key(g), format!("train/{g:06}.optim"), format!("metrics/train-{g:06}.csv")]
    {
        if store.exists(&key)? {
            tracing::info!("removing {}, left by a trainer stopped before publishing model {g}", store.describe(&key));
            store.delete(&key)?;
        }
    }
    Ok(())
}

/// Puts model `g` (weights, then the card that publishes it).
fn publish_model(
    store: &RunStore,
    network: &Network,
    info: &CheckpointInfo,
    g: u32,
) -> Result<ModelCard, SelfplayError> {
    let weights_key = model_key(g, "safetensors");
    let bytes = checkpoint_bytes(network, info, Path::new(&store.describe(&weights_key)))?;
    store.put_new(&weights_key, bytes.weights)?;
    store.put_new(&model_key(g, "json"), bytes.card_json)?;
    Ok(bytes.card)
}

/// The trainer: creates the run (config and model 0) if new, then, for each next generation,
/// waits until unused shards of the models in the replay window (the newest
/// `replay.window_generations`) hold at least `selfplay.games` games, trains on the window with
/// as many steps as the sampling ratio asks for their positions, and publishes the model.
/// Returns when the run's last model is published or a stop is requested.
pub fn trainer(
    store: &RunStore,
    config: Option<&RunConfig>,
    options: &RoleOptions,
) -> Result<TrainerSummary, SelfplayError> {
    let config = open_store_run(store, config)?;
    let rules = ruleset(&config, store)?;
    let codec = CamelotState::new(rules.clone()).codec();
    let device = &options.device;
    let mut summary = TrainerSummary::default();
    if newest_model(store)?.is_none() {
        remove_leftovers(store, 0)?;
        let network = Network::new(&config.network, grid_of(&codec), device, derive_seed(config.seed, 0, 0))?;
        let info = CheckpointInfo { variant: config.variant.clone(), parent: None, step: 0, generation: Some(0) };
        publish_model(store, &network, &info, 0)?;
        tracing::info!("trainer: model 0 (untrained {}) published", config.network.label());
    }
    let mut cache = ShardCache { shards: HashMap::new() };
    loop {
        let g = newest_model(store)?.unwrap_or(0);
        summary.generation = g;
        if g >= config.generations || options.stop.load(Ordering::Relaxed) {
            return Ok(summary);
        }
        let next = g + 1;
        remove_leftovers(store, next)?;
        // What earlier generations used: their inputs, in generation order.
        let mut history: Vec<TrainingInputs> = Vec::new();
        for k in 1..=g {
            let key = inputs_key(k);
            let bytes =
                store.get(&key)?.ok_or_else(|| store_error(store, &key, "not found (model published without it?)"))?;
            history.push(serde_json::from_slice(&bytes).map_err(|e| store_error(store, &key, e.to_string()))?);
        }
        let used: BTreeSet<&str> = history.iter().flat_map(|h| h.shards.iter().map(|s| s.key.as_str())).collect();
        if summary.published == 0 && g > 0 {
            tracing::info!("trainer: resuming from model {g}, the last one published");
        }
        tracing::info!("trainer: waiting for {} new games to train model {next}", config.selfplay.games);
        // Wait for enough unused shards (read as they come, each once). Only the shards of the
        // models inside the replay window are listed: older games would be out of the window
        // anyway, and the listing stays as short as a few generations however long the run.
        let oldest = next.saturating_sub(config.replay.window_generations);
        let fresh = loop {
            let mut fresh = Vec::new();
            let mut games = 0;
            let mut listing = Vec::new();
            for k in oldest..=g {
                listing.extend(store.list(&format!("selfplay/{k:06}"))?);
            }
            for object in listing {
                if parse_shard_key(&object.key).is_none() || used.contains(object.key.as_str()) {
                    continue;
                }
                let (n, samples) = cache.load(store, &rules, &object.key)?;
                games += n;
                fresh.push(ShardUse { key: object.key.clone(), games: *n, positions: samples.len() as u64 });
            }
            if games >= config.selfplay.games as u64 {
                break fresh;
            }
            if !nap(options) {
                return Ok(summary);
            }
        };
        // The window: the new shards of the newest `window_generations` generations, this one's included.
        let first = next.saturating_sub(config.replay.window_generations) + 1;
        let mut window: Vec<PackedSample> = Vec::new();
        for inputs in history.iter().filter(|h| h.generation >= first) {
            for shard in &inputs.shards {
                window.extend(cache.load(store, &rules, &shard.key)?.1.iter().cloned());
            }
        }
        for shard in &fresh {
            window.extend(cache.load(store, &rules, &shard.key)?.1.iter().cloned());
        }
        let new_positions: u64 = fresh.iter().map(|s| s.positions).sum();
        if new_positions == 0 {
            return Err(SelfplayError::Run {
                message: "the new games hold no training positions (selfplay.full_search_fraction too small?)".into(),
                dir: store.location().into(),
            });
        }
        let (network, _) = load_model(store, g, device)?;
        let optimizer_key = format!("train/{g:06}.optim");
        let optimizer = if g > 0 {
            Some(store.get(&optimizer_key)?.ok_or_else(|| store_error(store, &optimizer_key, "not found"))?)
        } else {
            None
        };
        let optimizer_name = store.describe(&optimizer_key);
        let optimizer = optimizer.as_deref().map(|bytes| (bytes, Path::new(&optimizer_name)));
        let TrainedGeneration { trainer, rows, last, steps } =
            train_on_window(&config, &network, codec, optimizer, &window, new_positions as usize, g, &Silent)?;
        let inputs = TrainingInputs {
            generation: next,
            parent: g,
            new_games: fresh.iter().map(|s| s.games).sum(),
            new_positions,
            window_positions: window.len() as u64,
            steps,
            shards: fresh,
        };
        // Everything that describes model `next` first, its card last.
        store.put_new(&format!("train/{next:06}.optim"), training_state_bytes(&trainer)?)?;
        let metrics = csv_bytes(&TRAIN_HEADER, &rows).map_err(|e| store_error(store, "metrics", e))?;
        store.put_new(&format!("metrics/train-{next:06}.csv"), metrics)?;
        let json =
            serde_json::to_vec_pretty(&inputs).map_err(|e| store_error(store, &inputs_key(next), e.to_string()))?;
        store.put_new(&inputs_key(next), json)?;
        let info = CheckpointInfo {
            variant: config.variant.clone(),
            parent: Some(format!("{g:06}")),
            step: trainer.step(),
            generation: Some(next as u64),
        };
        publish_model(store, &trainer.network(), &info, next)?;
        summary.published += 1;
        // Keep in memory only the shards the next window still samples from.
        let keep: BTreeSet<&str> = history
            .iter()
            .filter(|h| h.generation + config.replay.window_generations > next + 1)
            .flat_map(|h| h.shards.iter().map(|s| s.key.as_str()))
            .chain(inputs.shards.iter().map(|s| s.key.as_str()))
            .collect();
        cache.shards.retain(|key, _| keep.contains(key.as_str()));
        tracing::info!(
            "trainer: model {next} published: read {} shards, {} games, {} positions (window {}), {steps} steps, loss {:.3}",
            inputs.shards.len(),
            inputs.new_games,
            inputs.new_positions,
            inputs.window_positions,
            last.total
        );
    }
}

/// What an evaluator did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvaluatorSummary {
    /// Models it evaluated.
    pub evaluated: Vec<u32>,
}

/// The evaluator: plays each published model without results against the previous one and
/// the configured baselines and puts `arena/evaluation-NNNNNN.csv` (the arena's results
/// format); returns once the run's last model is evaluated or a stop is requested.
pub fn evaluator(store: &RunStore, options: &RoleOptions) -> Result<EvaluatorSummary, SelfplayError> {
    let mut summary = EvaluatorSummary::default();
    let Some(config) = wait_for_run(store, options)? else { return Ok(summary) };
    let rules = ruleset(&config, store)?;
    loop {
        let newest = newest_model(store)?.unwrap_or(0);
        for g in 1..=newest {
            if options.stop.load(Ordering::Relaxed) {
                return Ok(summary);
            }
            let key = evaluation_key(g);
            if store.exists(&key)? {
                continue;
            }
            let (new, _) = load_model(store, g, &options.device)?;
            let (previous, _) = load_model(store, g - 1, &options.device)?;
            let initial = || load_model(store, 0, &options.device).map(|(network, _)| network);
            let (rows, scores) = evaluation_games(&config, &rules, &new, &previous, &initial, g, &Silent)?;
            let header: Vec<&str> = camelot_arena::RESULTS_HEADER.split(',').collect();
            let rows: Vec<Vec<String>> = rows.iter().map(result_fields).collect();
            let bytes = csv_bytes(&header, &rows).map_err(|e| store_error(store, &key, e))?;
            match store.put_new(&key, bytes) {
                Ok(()) | Err(SelfplayError::Exists { .. }) => {}
                Err(e) => return Err(e),
            }
            tracing::info!("evaluator: model {g}: {}", scores.join(", "));
            summary.evaluated.push(g);
        }
        if newest >= config.generations && store.exists(&evaluation_key(config.generations))? {
            return Ok(summary);
        }
        if !nap(options) {
            return Ok(summary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_keys_round_trip_and_other_names_are_not_shards() {
        assert_eq!(parse_shard_key(&shard_key(3, 17, 42)), Some((3, 17, 42)));
        assert_eq!(shard_key(3, 17, 42), "selfplay/000003/00017-000042.shard");
        // `camelot train`'s own shards are named by group alone.
        assert_eq!(parse_shard_key("selfplay/000003/00001.shard"), None);
        assert_eq!(parse_shard_key("selfplay/000003/00017-000042.shard#1"), None);
    }
}
