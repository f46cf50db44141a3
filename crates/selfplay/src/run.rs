//! A training run opened over its store: the frozen config, the ruleset, and the models, the
//! gate's decisions and the training records that every role reads the same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use camelot_game::{ActionCodec, CamelotState};
use camelot_net::checkpoint::{check_weights, checkpoint_bytes, network_from_bytes, parse_card};
use camelot_net::{grid_of, CheckpointInfo, Device, ModelCard, Network};
use camelot_rules::Ruleset;
use camelot_search::derive_seed;
use serde::{Deserialize, Serialize};

use crate::config::{Gate, RunConfig};
use crate::error::SelfplayError;
use crate::layout;
use crate::record::{decode_shard, GameRecord};
use crate::store::RunStore;

/// What `state.json` records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Newest network with its evaluation done.
    pub generation: u32,
    /// Training steps behind it.
    pub train_step: u64,
    /// SHA-256 of each network's weights, by generation.
    pub models: Vec<String>,
}

/// The SPRT gate's decision on one network (`arena/gate-NNNNNN.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateDecision {
    /// The network tested.
    pub generation: u32,
    /// The network it was tested against (the one playing self-play then).
    pub against: u32,
    /// Promoted: it plays the next generation's games.
    pub accepted: bool,
    /// `H1` (stronger), `H0` (not stronger) or `limit` (out of pairs without a verdict).
    pub verdict: String,
    /// Game pairs played.
    pub pairs: u64,
    /// Its score against `against`.
    pub score: f64,
    /// The final log-likelihood ratio.
    pub llr: f64,
}

/// A run: its store, frozen config, ruleset and device.
pub struct Run {
    /// Where the run lives.
    pub store: RunStore,
    /// The frozen config (`run.toml`).
    pub config: RunConfig,
    /// The config's ruleset.
    pub rules: Arc<Ruleset>,
    /// The action encoding of the ruleset.
    pub codec: ActionCodec,
    /// Device of the networks.
    pub device: Device,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run").field("store", &self.store).finish()
    }
}

impl Run {
    /// Opens the run in `store` with `config`: a new run puts `run.toml` (and refuses a place
    /// that holds files of something else); an existing one must have the same config, or,
    /// with `allow_config_change`, takes the new one and logs what changed.
    pub fn create_or_resume(
        store: RunStore,
        config: &RunConfig,
        allow_config_change: bool,
        device: Device,
    ) -> Result<Run, SelfplayError> {
        match read_config(&store)? {
            None => {
                refuse_foreign(&store)?;
                match store.put_new(layout::CONFIG, config.to_toml().into_bytes()) {
                    Ok(()) | Err(SelfplayError::Exists { .. }) => {}
                    Err(e) => return Err(e),
                }
                let frozen = read_config(&store)?
                    .ok_or_else(|| store_error(&store, layout::CONFIG, "vanished after being written"))?;
                Run::with_config(store, frozen, device)
            }
            Some(old) => {
                let diff = old.differences(config);
                if !diff.is_empty() {
                    if !allow_config_change {
                        return Err(store_error(
                            &store,
                            layout::CONFIG,
                            format!(
                                "the config differs from the run's in:\n  {}\n(start a new run, or pass \
                                 --allow-config-change to `camelot train`)",
                                diff.join("\n  ")
                            ),
                        ));
                    }
                    let generation = read_state(&store)?.generation;
                    let mut log = match store.get(layout::CONFIG_CHANGES)? {
                        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                        None => String::new(),
                    };
                    log.push_str(&format!("changed at generation {generation}:\n  {}\n", diff.join("\n  ")));
                    store.put_replace(layout::CONFIG_CHANGES, log.into_bytes())?;
                    store.put_replace(layout::CONFIG, config.to_toml().into_bytes())?;
                }
                Run::with_config(store, config.clone(), device)
            }
        }
    }

    /// Opens an existing run with the config it has, if `run.toml` is there yet.
    pub fn open_existing(store: RunStore, device: Device) -> Result<Option<Run>, SelfplayError> {
        match read_config(&store)? {
            Some(config) => Run::with_config(store, config, device).map(Some),
            None => Ok(None),
        }
    }

    fn with_config(store: RunStore, config: RunConfig, device: Device) -> Result<Run, SelfplayError> {
        let rules = Ruleset::variant(&config.variant).map(Arc::new).map_err(|e| SelfplayError::Config {
            file: store.describe(layout::CONFIG).into(),
            message: format!("variant: {e}"),
        })?;
        let codec = CamelotState::new(rules.clone()).codec();
        let run = Run { store, config, rules, codec, device };
        run.refuse_old_layout()?;
        Ok(run)
    }

    /// A run directory written before shards were numbered by worker is refused: its shards
    /// and files are named otherwise, and resuming it would mix two layouts.
    fn refuse_old_layout(&self) -> Result<(), SelfplayError> {
        if let Some(old) = self.store.list("selfplay")?.iter().find(|o| layout::is_old_layout_shard(&o.key)) {
            return Err(self.error(
                &old.key,
                "a shard of the run layout before 2026-12 (named by group alone): finish this run with the \
                 camelot that started it, or start a new run in another directory",
            ));
        }
        Ok(())
    }

    /// An error about the run's object `key`.
    pub fn error(&self, key: &str, message: impl Into<String>) -> SelfplayError {
        store_error(&self.store, key, message)
    }

    /// The newest published model (the highest `models/NNNNNN.json`), if any.
    pub fn newest_model(&self) -> Result<Option<u32>, SelfplayError> {
        let listing = self.store.list("models")?;
        Ok(listing
            .iter()
            .filter_map(|o| o.key.strip_prefix("models/")?.strip_suffix(".json")?.parse::<u32>().ok())
            .max())
    }

    /// Whether model `g` is published (its card exists).
    pub fn has_model(&self, g: u32) -> Result<bool, SelfplayError> {
        self.store.exists(&layout::model_key(g, "json"))
    }

    /// The card of published model `g`.
    pub fn load_card(&self, g: u32) -> Result<ModelCard, SelfplayError> {
        let key = layout::model_key(g, "json");
        let bytes = self.store.get(&key)?.ok_or_else(|| self.error(&key, "not found"))?;
        parse_card(&bytes, Path::new(&self.store.describe(&key))).map_err(Into::into)
    }

    /// Loads published model `g`, checked as `load_checkpoint` checks files.
    pub fn load_model(&self, g: u32) -> Result<(Network, ModelCard), SelfplayError> {
        let card = self.load_card(g)?;
        let weights_key = layout::model_key(g, "safetensors");
        let weights = self.store.get(&weights_key)?.ok_or_else(|| self.error(&weights_key, "not found"))?;
        let network = network_from_bytes(&card, weights, Path::new(&self.store.describe(&weights_key)), &self.device)?;
        Ok((network, card))
    }

    /// Checks every published model's weights against its card (hash, finite values) and each
    /// card against the hash `state.json` recorded for it, so that a resumed run (a finished
    /// one included) never trusts or reports as done a checkpoint damaged since it was written.
    pub fn verify_models(&self) -> Result<(), SelfplayError> {
        let Some(newest) = self.newest_model()? else { return Ok(()) };
        let state = read_state(&self.store)?;
        for g in 0..=newest {
            let card = self.load_card(g)?;
            let weights_key = layout::model_key(g, "safetensors");
            let weights = self.store.get(&weights_key)?.ok_or_else(|| self.error(&weights_key, "not found"))?;
            check_weights(&card, &weights, Path::new(&self.store.describe(&weights_key)))?;
            if state.models.get(g as usize).is_some_and(|recorded| *recorded != card.weights_sha256) {
                return Err(self.error(
                    &layout::model_key(g, "json"),
                    format!("the weights' SHA-256 differs from the one {} recorded (replaced?)", layout::STATE),
                ));
            }
        }
        Ok(())
    }

    /// Puts model `g`: the weights, then the card that publishes it.
    pub fn publish_model(&self, network: &Network, info: &CheckpointInfo, g: u32) -> Result<ModelCard, SelfplayError> {
        let weights_key = layout::model_key(g, "safetensors");
        let bytes = checkpoint_bytes(network, info, Path::new(&self.store.describe(&weights_key)))?;
        self.store.put_new(&weights_key, bytes.weights)?;
        self.store.put_new(&layout::model_key(g, "json"), bytes.card_json)?;
        Ok(bytes.card)
    }

    /// Publishes the untrained model 0 if the run has no model yet (after removing what a
    /// writer killed while publishing it left).
    pub fn ensure_initial_model(&self) -> Result<(), SelfplayError> {
        if self.newest_model()?.is_some() {
            return Ok(());
        }
        let stale = layout::model_key(0, "safetensors");
        if self.store.exists(&stale)? {
            self.store.delete(&stale)?;
        }
        let network = Network::new(&self.config.network, grid_of(&self.codec), &self.device, self.seed(0, 0))?;
        let info = CheckpointInfo {
            variant: self.config.variant.clone(),
            parent: None,
            step: 0,
            generation: Some(0),
            play: Some(self.config.play_settings()),
        };
        self.publish_model(&network, &info, 0)?;
        tracing::info!("model 0 (untrained {}) published", self.config.network.label());
        Ok(())
    }

    /// Seed `index` of stream `stream` under the run's seed.
    pub fn seed(&self, stream: u64, index: u64) -> u64 {
        derive_seed(self.config.seed, stream, index)
    }

    /// The gate's decision on model `g`, if the gate has run on it.
    pub fn read_gate(&self, g: u32) -> Result<Option<GateDecision>, SelfplayError> {
        let key = layout::gate_key(g);
        match self.store.get(&key)? {
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| self.error(&key, e.to_string())),
            None => Ok(None),
        }
    }

    /// The network that plays the games of generation `g` (while `g` is the newest model): the
    /// newest model up to `g` that the gate did not reject (`g` itself without a gate). `None`
    /// while the gate has not yet decided on `g`.
    pub fn playing_generation(&self, g: u32) -> Result<Option<u32>, SelfplayError> {
        if self.config.evaluation.gate != Gate::Sprt {
            return Ok(Some(g));
        }
        let mut k = g;
        while k > 0 {
            match self.read_gate(k)? {
                None if k == g => return Ok(None),
                Some(decision) if !decision.accepted => k -= 1,
                _ => return Ok(Some(k)),
            }
        }
        Ok(Some(0))
    }

    /// The player spec that names model `g` in results: `camelot arena` run inside the run
    /// directory plays the same network with the same search (the path is relative to the run,
    /// so a run can be moved or compared with another).
    pub fn player_spec(&self, g: u32) -> String {
        camelot_arena::PlayerSpec::Mcts(self.config.evaluation_player(&layout::model_stem(g), g)).to_string()
    }

    /// Every game played while model `g` was the newest, in shard-key order.
    pub fn generation_games(&self, g: u32) -> Result<Vec<GameRecord>, SelfplayError> {
        let mut games = Vec::new();
        for object in self.store.list(&layout::shards_dir(g))? {
            if layout::parse_shard_key(&object.key).is_none() {
                continue;
            }
            let bytes = self.store.get(&object.key)?.ok_or_else(|| self.error(&object.key, "listed but not found"))?;
            games.extend(decode_shard(&bytes, Path::new(&self.store.describe(&object.key)))?);
        }
        Ok(games)
    }

    /// The run's local directory, if it is one.
    pub fn local_root(&self) -> Option<PathBuf> {
        self.store.local_root().map(Path::to_path_buf)
    }
}

/// The run's config from `run.toml`, if it is there yet.
pub fn read_config(store: &RunStore) -> Result<Option<RunConfig>, SelfplayError> {
    let Some(bytes) = store.get(layout::CONFIG)? else { return Ok(None) };
    let text = String::from_utf8(bytes).map_err(|_| store_error(store, layout::CONFIG, "not UTF-8"))?;
    RunConfig::parse(&text, Path::new(&store.describe(layout::CONFIG))).map(Some)
}

/// Reads `state.json` (a default state if absent).
pub fn read_state(store: &RunStore) -> Result<RunState, SelfplayError> {
    match store.get(layout::STATE)? {
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| store_error(store, layout::STATE, e.to_string())),
        None => Ok(RunState::default()),
    }
}

/// A place without `run.toml` that already holds run files is not made a run: its files were
/// not written by this run, and the run would overwrite the merged ones.
fn refuse_foreign(store: &RunStore) -> Result<(), SelfplayError> {
    for key in [layout::STATE, layout::METRICS, layout::GENERATIONS, layout::RESULTS] {
        if store.exists(key)? {
            return Err(store_error(store, key, "exists, but there is no run.toml beside it: not a run to resume"));
        }
    }
    for dir in ["models", "selfplay", "train", "metrics"] {
        if let Some(object) = store.list(dir)?.first() {
            return Err(store_error(
                store,
                &object.key,
                "exists, but there is no run.toml in the run: not a run to resume (use an empty directory)",
            ));
        }
    }
    Ok(())
}

pub(crate) fn store_error(store: &RunStore, key: &str, message: impl Into<String>) -> SelfplayError {
    SelfplayError::Store { object: store.describe(key), message: message.into() }
}
