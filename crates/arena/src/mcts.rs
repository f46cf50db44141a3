//! `mcts`: the network-guided search of camelot-search playing from a checkpoint.
//!
//! A move is a chain of decisions (legs, then `stop` where the chain may go on): the player
//! searches each decision with [`MctsConfig::sims`] new simulations, reusing the subtree of
//! the decision just made, until the move is complete, then returns that whole move. Each
//! round of the search descends to [`MctsConfig::batch`] leaves of the tree (virtual loss
//! spreads them apart). [`Mcts`] is the one-game [`Player`] (`camelot play`, the engine);
//! matches and arenas search the trees of many games together instead, so that one forward
//! pass serves them all (`crate::lockstep`), with the same tree seeds and so the same moves.
//!
//! Checkpoints are loaded once per process and path through a [`ModelStore`]; a model path
//! whose last component is `latest` means the lexicographically largest `NNNNNN.safetensors`
//! in its directory ([`resolve_model_path`]).

use crate::error::ArenaError;
use crate::player::{legal_or_over, stop_requested, Choice, Evaluation, Player, StopFlag};
use camelot_game::CamelotState;
use camelot_net::{load_checkpoint, parse_device, ModelCard, NetEvaluator, Network, PlaySettings, Precision};
use camelot_rules::{Game, Ruleset};
use camelot_search::{GameState as _, SearchConfig, SearchResult, Searcher, TemperatureSchedule, Terminal, Tree};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Settings of `mcts`:
/// `mcts:model=PATH,sims=N[,gumbel[=no]][,mirror[=no]][,forced[=no]][,reuse[=no]][,m=M][,cscale=C][,cpuct=C][,ptemp=T][,temperature=T][,ms=M][,cache=K][,batch=B][,material=F][,mscale=S][,draw=P][,moves_left=C][,precision=P][,device=D]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    /// The checkpoint (with or without `.safetensors`; `DIR/latest` for the newest in `DIR`).
    pub model: String,
    /// New simulations per decision (`u32::MAX` with a time limit alone).
    pub sims: u32,
    /// Gumbel root search (sequential halving) instead of PUCT. `None`: as the model's card
    /// says (its `play`), else PUCT.
    pub gumbel: Option<bool>,
    /// Every evaluation averaged with the mirrored position's
    /// ([`NetEvaluator::with_mirror_average`]). `None`: as the model's card says (its `play`),
    /// else off.
    pub mirror: Option<bool>,
    /// Forced decisions pass through the tree without an evaluation
    /// (`SearchConfig::forced_pass`). `None`: as the model's card says (its `play`), else off.
    pub forced: Option<bool>,
    /// Tree reuse across moves: the subtree under the opponent's reply, kept from this
    /// player's last search, starts the next one, so its visits add to the `sims` new ones at
    /// no network cost (Leela Chess Zero's and KataGo's default). `None`: the default,
    /// [`MctsConfig::REUSE_DEFAULT`]; not a training setting, so no card holds it.
    pub reuse: Option<bool>,
    /// Gumbel: actions sampled at the root (sequential halving's first round).
    pub gumbel_m: u32,
    /// Gumbel: scale of the completed-Q transform (`SearchConfig::gumbel_c_scale`).
    pub gumbel_c_scale: f32,
    /// PUCT's exploration constant (`SearchConfig::c_puct`).
    pub c_puct: f32,
    /// Policy softmax temperature (`SearchConfig::policy_temperature`). `None`: as the model
    /// card says (`play.policy_temperature`), else 1, the network's priors as they are.
    pub policy_temperature: Option<f32>,
    /// Move temperature: 0 plays the most visited decision; `t > 0` samples in proportion to
    /// `visits^(1/t)` (PUCT) or adds Gumbel noise of scale `t` (Gumbel).
    pub temperature: f32,
    /// Time per move in milliseconds (searched in chunks of 32 simulations until spent).
    pub ms: Option<u64>,
    /// Entries of the evaluator's position cache.
    pub cache: usize,
    /// Leaves gathered from one game's tree per search round (all games searched together
    /// share one network call per round).
    pub batch: u32,
    /// Weight in `[0, 1]` of the network's predicted final material in the value the search
    /// sees ([`NetEvaluator::with_material_utility`]); 0 uses the value head alone. `None`:
    /// as the model was trained (its card's `play`), else 0.
    pub material: Option<f32>,
    /// Lead in material points at which the material utility weighs tanh(1)
    /// ([`NetEvaluator::with_material_scale`]); 0 linear. `None`: as the model was trained,
    /// else 0.
    pub material_scale: Option<f32>,
    /// Weight in `[0, 1]` of the network's predicted plies left in the value the search sees
    /// ([`NetEvaluator::with_moves_left_utility`]: short wins, long losses). `None`: as the
    /// model was trained, else 0.
    pub moves_left: Option<f32>,
    /// What a draw costs both sides in the search, in `[0, 1)` (`SearchConfig::draw_penalty`).
    /// `None`: as the model was trained, else 0.
    pub draw_penalty: Option<f32>,
    /// Arithmetic of the network's 3x3 convolutions on the CPU (`Network::with_precision`):
    /// `f32` as trained, or `int8` (2.5-2.7x the positions a second with AVX-512 VNNI).
    pub precision: Precision,
    /// Device: `cpu`, `cuda`, `cuda:N`, `wgpu`.
    pub device: String,
}

impl Default for MctsConfig {
    fn default() -> MctsConfig {
        MctsConfig {
            model: String::new(),
            sims: 200,
            gumbel: None,
            mirror: None,
            forced: None,
            reuse: None,
            gumbel_m: SearchConfig::default().gumbel_m,
            gumbel_c_scale: SearchConfig::default().gumbel_c_scale,
            c_puct: SearchConfig::default().c_puct,
            policy_temperature: None,
            temperature: 0.0,
            ms: None,
            cache: 50_000,
            batch: 8,
            material: None,
            material_scale: None,
            moves_left: None,
            draw_penalty: None,
            precision: Precision::F32,
            device: "cpu".to_string(),
        }
    }
}

impl MctsConfig {
    /// The player's network from `models`, at its precision, and the search settings its card
    /// says it was trained with.
    pub fn network(&self, models: &ModelStore, rules: &Ruleset) -> Result<(Network, Option<PlaySettings>), ArenaError> {
        let (network, trained) = models.network_as_trained(&self.model, &self.device, rules)?;
        let network = network
            .with_precision(self.precision)
            .map_err(|e| ArenaError::Model { path: self.model.clone(), reason: e.to_string() })?;
        Ok((network, trained))
    }

    /// Whether `mcts` players reuse their trees across moves unless told (`reuse`/`reuse=no`).
    /// Off until a measurement on unseen openings shows it at least as strong: every recorded
    /// figure was played with fresh trees (docs/BENCHMARKS.md, "Random openings in self-play
    /// from generation 40, and tree reuse at play").
    pub const REUSE_DEFAULT: bool = false;

    /// Whether this player starts each search from the subtree kept from its last move.
    pub fn reuse_in_effect(&self) -> bool {
        self.reuse.unwrap_or(Self::REUSE_DEFAULT)
    }

    /// The material utility in effect for a model trained with `trained`.
    pub fn material_in_effect(&self, trained: Option<&PlaySettings>) -> f32 {
        self.material.or(trained.map(|t| t.material_utility)).unwrap_or(0.0)
    }

    /// The material scale in effect for a model trained with `trained`.
    pub fn material_scale_in_effect(&self, trained: Option<&PlaySettings>) -> f32 {
        self.material_scale.or(trained.map(|t| t.material_scale)).unwrap_or(0.0)
    }

    /// The moves-left utility in effect for a model trained with `trained`.
    pub fn moves_left_in_effect(&self, trained: Option<&PlaySettings>) -> f32 {
        self.moves_left.or(trained.map(|t| t.moves_left_utility)).unwrap_or(0.0)
    }

    /// The draw penalty in effect for a model trained with `trained`.
    pub fn draw_penalty_in_effect(&self, trained: Option<&PlaySettings>) -> f32 {
        self.draw_penalty.or(trained.map(|t| t.draw_penalty)).unwrap_or(0.0)
    }

    /// Whether this player searches a model trained with `trained` by Gumbel root search.
    pub fn gumbel_in_effect(&self, trained: Option<&PlaySettings>) -> bool {
        self.gumbel.or(trained.map(|t| t.gumbel)).unwrap_or(false)
    }

    /// Whether this player averages each evaluation of a model trained with `trained` with the
    /// mirrored position's.
    pub fn mirror_in_effect(&self, trained: Option<&PlaySettings>) -> bool {
        self.mirror.or(trained.map(|t| t.mirror)).unwrap_or(false)
    }

    /// Whether this player passes forced decisions of a model trained with `trained` through
    /// the tree without an evaluation.
    pub fn forced_in_effect(&self, trained: Option<&PlaySettings>) -> bool {
        self.forced.or(trained.map(|t| t.forced)).unwrap_or(false)
    }

    /// The policy softmax temperature this player searches a model trained with `trained` at.
    pub fn policy_temperature_in_effect(&self, trained: Option<&PlaySettings>) -> f32 {
        self.policy_temperature.or(trained.map(|t| t.policy_temperature)).unwrap_or(1.0)
    }

    /// The search settings this player uses on a model trained with `trained`.
    pub fn search_config(&self, trained: Option<&PlaySettings>) -> SearchConfig {
        let gumbel = self.gumbel_in_effect(trained);
        SearchConfig {
            simulations: self.sims,
            gumbel,
            gumbel_m: self.gumbel_m,
            gumbel_c_scale: self.gumbel_c_scale,
            c_puct: self.c_puct,
            policy_temperature: self.policy_temperature_in_effect(trained),
            gumbel_scale: if gumbel { self.temperature } else { 0.0 },
            temperature: TemperatureSchedule::constant(if gumbel { 0.0 } else { self.temperature }),
            leaves_per_tree: self.batch,
            draw_penalty: self.draw_penalty_in_effect(trained),
            max_nodes: MAX_TREE_NODES,
            forced_pass: self.forced_in_effect(trained),
            ..SearchConfig::evaluation()
        }
    }

    /// The evaluator this player searches with: `network` (trained with `trained`) behind a
    /// cache of [`MctsConfig::cache`] positions, with the material utility in effect.
    pub fn evaluator(&self, network: Network, trained: Option<&PlaySettings>) -> NetEvaluator {
        NetEvaluator::new(network, self.cache)
            .with_material_utility(self.material_in_effect(trained))
            .with_material_scale(self.material_scale_in_effect(trained))
            .with_moves_left_utility(self.moves_left_in_effect(trained))
            .with_mirror_average(self.mirror_in_effect(trained))
    }
}

/// The checkpoint a model path names: `DIR/latest` (or `DIR/latest.safetensors`) is the
/// lexicographically largest `NNNNNN.safetensors` in `DIR` (returned without extension); any
/// other path is returned as given.
pub fn resolve_model_path(path: &str) -> Result<String, ArenaError> {
    let p = Path::new(path);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name != "latest" && name != "latest.safetensors" {
        return Ok(path.to_string());
    }
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let model_error = |reason: String| ArenaError::Model { path: dir.display().to_string(), reason };
    // `runs/x/latest` also finds `runs/x/models/NNNNNN`.
    let candidates = [dir.to_path_buf(), dir.join("models")];
    for candidate in &candidates {
        let entries = match std::fs::read_dir(candidate) {
            Ok(entries) => entries,
            Err(_) => continue,
        };
        let mut best: Option<String> = None;
        for entry in entries {
            let entry = entry.map_err(|e| model_error(format!("listing the directory: {e}")))?;
            let file = entry.file_name();
            let Some(file) = file.to_str() else { continue };
            let Some(stem) = file.strip_suffix(".safetensors") else { continue };
            if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            if best.as_deref().is_none_or(|b| stem > b) {
                best = Some(stem.to_string());
            }
        }
        if let Some(stem) = best {
            return Ok(candidate.join(stem).to_string_lossy().into_owned());
        }
    }
    Err(model_error("no NNNNNN.safetensors checkpoint here (nor under models/) to take as `latest`".to_string()))
}

/// A model held by a [`ModelStore`]: its weights, variant and the settings it was trained with.
struct StoredModel {
    network: Network,
    variant: String,
    play: Option<PlaySettings>,
}

/// Networks loaded so far, by checkpoint path and device, so that every game of an arena
/// shares one load of each checkpoint; and networks handed in by path ([`ModelStore::preload`]),
/// so that a training run plays its in-memory networks under the specs that name them.
#[derive(Default)]
pub struct ModelStore {
    loaded: Mutex<HashMap<(PathBuf, String), StoredModel>>,
    preloaded: Mutex<HashMap<PathBuf, StoredModel>>,
}

impl ModelStore {
    /// An empty store.
    pub fn new() -> ModelStore {
        ModelStore::default()
    }

    /// Makes the model on `card` with weights `network` the one that `model=PATH` names, on
    /// any device: the training run's evaluator plays networks it holds in memory (they may
    /// live in an object store, not in files) under the same specs that `camelot arena` reads
    /// from the run directory.
    pub fn preload(&self, path: &str, network: Network, card: &ModelCard) {
        let mut preloaded = self.preloaded.lock().unwrap_or_else(|e| e.into_inner());
        preloaded.insert(PathBuf::from(path), StoredModel { network, variant: card.variant.clone(), play: card.play });
    }

    /// The network of checkpoint `path` on `device`, loaded on first use. Fails if it cannot
    /// be loaded or was trained for another variant than `rules`.
    pub fn network(&self, path: &str, device: &str, rules: &Ruleset) -> Result<Network, ArenaError> {
        Ok(self.network_as_trained(path, device, rules)?.0)
    }

    /// The network of checkpoint `path` on `device` and the search settings its card says it
    /// was trained with (see [`ModelStore::network`]).
    pub fn network_as_trained(
        &self,
        path: &str,
        device: &str,
        rules: &Ruleset,
    ) -> Result<(Network, Option<PlaySettings>), ArenaError> {
        let check = |model: &StoredModel| {
            if model.variant != rules.name() {
                return Err(ArenaError::Model {
                    path: path.to_string(),
                    reason: format!("the model plays `{}`, this game is `{}`", model.variant, rules.name()),
                });
            }
            Ok((model.network.clone(), model.play))
        };
        if let Some(entry) = self.preloaded.lock().unwrap_or_else(|e| e.into_inner()).get(Path::new(path)) {
            return check(entry);
        }
        let resolved = PathBuf::from(resolve_model_path(path)?);
        let key = (resolved.clone(), device.to_string());
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if !loaded.contains_key(&key) {
            let dev = parse_device(device)
                .map_err(|e| ArenaError::Model { path: path.to_string(), reason: e.to_string() })?;
            let (network, card) = load_checkpoint(&resolved, &dev)
                .map_err(|e| ArenaError::Model { path: path.to_string(), reason: e.to_string() })?;
            loaded.insert(key.clone(), StoredModel { network, variant: card.variant, play: card.play });
        }
        check(&loaded[&key])
    }
}

/// The tree an `mcts` player kept after its last move (rooted at the position its move left),
/// carried through the opponent's reply to `root` (kept as it is where `root` is its root: the
/// player moves again from the position its move left). `None` when no legal reply leads to `root`
/// (a new game, a position set by hand, a take-back) or the histories differ: the search then
/// starts afresh. Where the search did not look at the reply, the tree goes on from an
/// unvisited root.
fn continue_tree(mut kept: Tree<CamelotState>, root: &CamelotState) -> Option<Tree<CamelotState>> {
    let from = kept.root_state().clone();
    if from.is_mid_move() || root.is_mid_move() {
        return None;
    }
    if from.is_same_turn(root) {
        return Some(kept);
    }
    let rules = from.rules();
    let reply = from.legal_moves().iter().position(|mv| {
        let mut after = *from.position();
        rules.play(&mut after, mv);
        after == *root.position()
    })?;
    for action in from.actions_for_move(reply) {
        kept.advance(action).ok()?;
    }
    kept.root_state().is_same_turn(root).then_some(kept)
}

/// The tree a move starts from: `kept` (the tree after the player's last move) carried
/// through the opponent's reply where [`continue_tree`] can, else a new one; seeded with `seed`
/// either way, so that a match's batched players and the one-game player search alike.
pub(crate) fn tree_for_move(kept: Option<Tree<CamelotState>>, root: &CamelotState, seed: u64) -> Tree<CamelotState> {
    match kept.and_then(|kept| continue_tree(kept, root)) {
        Some(mut tree) => {
            tree.reseed(seed);
            tree
        }
        None => Tree::new(root.clone(), seed),
    }
}

/// The `mcts` player.
pub struct Mcts {
    name: String,
    config: MctsConfig,
    searcher: Searcher,
    /// A searcher of 32 simulations, for time-limited search.
    chunk: Searcher,
    evaluator: NetEvaluator,
    rng: ChaCha8Rng,
    /// Set by another thread to end the search (the engine's `stop`).
    stop: Option<StopFlag>,
    /// The tree after this player's last move, for [`continue_tree`] (with `reuse` only).
    kept: Option<Tree<CamelotState>>,
}

/// Simulations per search call under a time limit.
const CHUNK: u32 = 32;

/// Tree nodes at most ([`SearchConfig::max_nodes`]): a node of a Camelot search costs about
/// 3.6 KB with its position and edges (measured in the opening: 85 MB for a 20,000-simulation
/// move, 30 MB for 5,000), so a move asked for billions of simulations stops here, near 1 GB,
/// instead of filling the memory.
pub const MAX_TREE_NODES: u32 = 1 << 18;

impl Mcts {
    /// An `mcts` player over `network`; `name` is its spec string.
    pub fn new(
        network: Network,
        trained: Option<&PlaySettings>,
        config: MctsConfig,
        rng: ChaCha8Rng,
        name: String,
    ) -> Result<Mcts, ArenaError> {
        let search = config.search_config(trained);
        let bad = |e: camelot_search::SearchError| ArenaError::Search { player: name.clone(), reason: e.to_string() };
        let searcher = Searcher::new(search.clone()).map_err(bad)?;
        let chunk = Searcher::new(SearchConfig { simulations: CHUNK, ..search }).map_err(bad)?;
        let evaluator = config.evaluator(network, trained);
        Ok(Mcts { name, config, searcher, chunk, evaluator, rng, stop: None, kept: None })
    }

    /// One decision's search: all simulations at once, or chunks until the deadline. A stop
    /// flag ends either within one network call (see [`Searcher::set_stop`]).
    fn search(&mut self, tree: &mut Tree<CamelotState>, deadline: Option<Instant>) -> Result<SearchResult, ArenaError> {
        let fail = |e: camelot_search::SearchError, name: &str| ArenaError::Search {
            player: name.to_string(),
            reason: e.to_string(),
        };
        if deadline.is_none() {
            return self.searcher.search_one(tree, &mut self.evaluator).map_err(|e| fail(e, &self.name));
        }
        let mut done = 0u32;
        loop {
            let result = self.chunk.search_one(tree, &mut self.evaluator).map_err(|e| fail(e, &self.name))?;
            done = done.saturating_add(result.simulations);
            let out_of_time = deadline.is_some_and(|d| Instant::now() >= d);
            let full = tree.node_count() >= MAX_TREE_NODES as usize;
            if done >= self.config.sims || out_of_time || full || result.proven.is_some() || stop_requested(&self.stop)
            {
                return Ok(result);
            }
        }
    }
}

impl Player for Mcts {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Result<Choice, ArenaError> {
        let moves = legal_or_over(game)?;
        let started = Instant::now();
        let deadline = self.config.ms.map(|ms| started + Duration::from_millis(ms));
        let root = CamelotState::from_game(game);
        let mut tree = tree_for_move(self.kept.take(), &root, self.rng.random());
        let reused = tree.root_visits();
        let mut state = root.clone();
        let mut actions = Vec::new();
        let mut first: Option<SearchResult> = None;
        let mut sims = 0u64;
        loop {
            let result = self.search(&mut tree, deadline)?;
            let action = result.action;
            sims += result.simulations as u64;
            first.get_or_insert(result);
            state.apply(action);
            actions.push(action);
            let done = !state.is_mid_move();
            if done && !self.config.reuse_in_effect() {
                break;
            }
            tree.advance(action)
                .map_err(|e| ArenaError::Search { player: self.name.clone(), reason: e.to_string() })?;
            if done {
                self.kept = Some(tree);
                break;
            }
        }
        let index =
            (0..moves.len().min(root.legal_moves().len())).find(|&i| root.actions_for_move(i) == actions).ok_or_else(
                || ArenaError::IllegalChoice { player: self.name.clone(), cpn: game.rules().to_cpn(game.position()) },
            )?;
        let mv = root.legal_moves()[index];
        let value = first.as_ref().map(|r| r.value).unwrap_or(camelot_search::Wdl::DRAW);
        // The solver's verdict on the turn's first decision, with its distance, where it has one.
        let proven = first.as_ref().and_then(|r| match (r.proven, r.proven_plies) {
            (Some(Terminal::Draw), _) => Some(Evaluation::Draw),
            (Some(Terminal::Win(side)), Some(plies)) if side == r.to_move => Some(Evaluation::WinIn(plies)),
            (Some(Terminal::Win(_)), Some(plies)) => Some(Evaluation::LossIn(plies)),
            _ => None,
        });
        let info = format!(
            "{sims} simulations over {} decisions ({reused} visits kept from the last move), {} ms, value W/D/L \
             {:.2}/{:.2}/{:.2}",
            actions.len(),
            started.elapsed().as_millis(),
            value.win,
            value.draw,
            value.loss
        );
        Ok(Choice {
            mv,
            evaluation: Some(proven.unwrap_or(Evaluation::ExpectedScore((value.win + 0.5 * value.draw) as f64))),
            principal_line: vec![mv],
            info,
        })
    }

    fn set_stop_flag(&mut self, stop: StopFlag) {
        self.searcher.set_stop(Some(stop.clone()));
        self.chunk.set_stop(Some(stop.clone()));
        self.stop = Some(stop);
    }
}

/// Builds an `mcts` player for `rules` from `config`, loading its network through `models`.
pub(crate) fn build(
    config: &MctsConfig,
    rules: &Arc<Ruleset>,
    rng: ChaCha8Rng,
    name: String,
    models: &ModelStore,
) -> Result<Box<dyn Player>, ArenaError> {
    let (network, trained) = config.network(models, rules)?;
    Ok(Box::new(Mcts::new(network, trained.as_ref(), config.clone(), rng, name)?))
}
