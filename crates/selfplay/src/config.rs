//! The run configuration (`configs/*.toml`): every setting of self-play, training and
//! evaluation, validated with errors that name the key.

use std::path::Path;

use camelot_arena::MctsConfig;
use camelot_net::{NetConfig, PlaySettings, TrainConfig};
use camelot_search::{SearchConfig, TemperatureSchedule};
use serde::{Deserialize, Serialize};

use crate::error::SelfplayError;

/// A whole run's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Ruleset name (`camelot`, `cam`, `camette`, ...).
    pub variant: String,
    /// Master seed: every game, sample and initial weight derives from it.
    pub seed: u64,
    /// Generations to train (the run ends when network `generations` exists).
    pub generations: u32,
    /// Architecture of the network.
    pub network: NetConfig,
    /// Self-play settings.
    pub selfplay: SelfplayConfig,
    /// Which positions train each generation.
    pub replay: ReplayConfig,
    /// The training step (optimizer, schedule, loss weights, augmentation).
    #[serde(default)]
    pub training: TrainConfig,
    /// The per-generation evaluation.
    pub evaluation: EvaluationConfig,
    /// How users' `mcts:` players play the run's networks unless told otherwise (written in
    /// each model card's `play`).
    #[serde(default)]
    pub play: PlayConfig,
}

/// The root rule the run's networks are played with by default (`mcts:model=M,sims=N`,
/// `camelot play`, `engine`, `serve`); the searched value's settings (material utility, draw
/// penalty, moves left) are always self-play's. Not self-play's root rule as such: which rule
/// plays a network best depends on the network. Measured at 200 simulations against
/// alphabeta:depth=2 on tuning seeds (docs/BENCHMARKS.md, "Gumbel or PUCT at play"),
/// quick.toml's generation 24 scores 66.0% with PUCT and 54.5% with Gumbel, hour.toml's
/// generation 60 74.5% and 82.3%, though both were trained with Gumbel searches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayConfig {
    /// Gumbel root search (sequential halving over the player's `m` actions, 16 unless given)
    /// instead of PUCT.
    #[serde(default)]
    pub gumbel: bool,
    /// Every evaluation averaged with the mirrored position's
    /// (`NetEvaluator::with_mirror_average`): twice the network's work per evaluation.
    #[serde(default)]
    pub mirror: bool,
    /// Decisions with a single legal action pass through the tree without an evaluation
    /// (`SearchConfig::forced_pass`): the simulations go to states with a choice, so a
    /// compulsory capture's recapture is seen. Measured at 200 simulations against
    /// alphabeta:depth=2, up in seven of eight paired matches (-5 to +7 points, mean +3.5),
    /// three of them hour.toml's generation 60 (docs/BENCHMARKS.md, "hour.toml plays with the
    /// forced pass", "Camette: the forced pass"); on Camette, 0.5 to 2.0 points more value kept.
    #[serde(default)]
    pub forced: bool,
    /// Policy softmax temperature of the search (`SearchConfig::policy_temperature`): 1 keeps
    /// the network's priors, above 1 flattens them so the search looks more often at the moves
    /// the network rates low. In `[0.1, 10]`.
    #[serde(default = "policy_temperature")]
    pub policy_temperature: f32,
}

impl Default for PlayConfig {
    fn default() -> PlayConfig {
        PlayConfig { gumbel: false, mirror: false, forced: false, policy_temperature: policy_temperature() }
    }
}

fn policy_temperature() -> f32 {
    camelot_search::SearchConfig::default().policy_temperature
}

/// How self-play games are played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfplayConfig {
    /// Games per generation.
    pub games: u32,
    /// Worker threads.
    #[serde(default = "one")]
    pub workers: u32,
    /// Games each worker plays at once, their leaves evaluated in one network batch; also the
    /// games of one replay shard.
    pub parallel_games: u32,
    /// Simulations of a full search (whose decisions become policy targets).
    pub simulations: u32,
    /// Simulations of a fast search (playout cap randomization, KataGo); 0 or equal to
    /// `simulations` with `full_search_fraction = 1` switches it off.
    #[serde(default)]
    pub fast_simulations: u32,
    /// Share of decisions searched fully; the others get `fast_simulations`, no noise, and
    /// are not trained on.
    #[serde(default = "one_f32")]
    pub full_search_fraction: f32,
    /// Gumbel root search instead of PUCT with Dirichlet noise.
    #[serde(default)]
    pub gumbel: bool,
    /// Gumbel: actions sampled at the root.
    #[serde(default = "sixteen")]
    pub gumbel_m: u32,
    /// Gumbel: `c_scale` of the completed-Q transform `(c_visit + max N) * c_scale * q`, q in
    /// `[0, 1]`. How far the improved policy (the policy target) moves from the prior per unit
    /// of value: at a few visits per action, values differ mostly by the value head's noise,
    /// and a large scale turns that noise into confident targets.
    #[serde(default = "gumbel_c_scale")]
    pub gumbel_c_scale: f32,
    /// PUCT exploration constant.
    #[serde(default = "c_puct")]
    pub c_puct: f32,
    /// Dirichlet noise concentration (PUCT).
    #[serde(default = "dirichlet_alpha")]
    pub dirichlet_alpha: f32,
    /// Dirichlet noise weight (PUCT).
    #[serde(default = "dirichlet_fraction")]
    pub dirichlet_fraction: f32,
    /// Move temperature for the first `temperature_decisions` decisions of a game (PUCT).
    #[serde(default = "one_f32")]
    pub temperature: f32,
    /// Decisions played at `temperature`.
    #[serde(default = "thirty")]
    pub temperature_decisions: u32,
    /// Temperature after that.
    #[serde(default)]
    pub final_temperature: f32,
    /// Ply cap: a game reaching it is adjudicated on material (more material wins, equal
    /// material draws; `camelot_arena::ply_cap_winner`, the rule of every arena).
    pub max_plies: u32,
    /// A side whose searched value (win - loss) falls below this resigns; none: never.
    #[serde(default)]
    pub resign_threshold: Option<f32>,
    /// Share of games that never resign, to measure how often resigning would have been wrong.
    #[serde(default = "playthrough")]
    pub resign_playthrough: f32,
    /// No resignation before this many plies.
    #[serde(default = "twenty")]
    pub resign_min_plies: u32,
    /// Leaves each tree sends per batch (virtual loss above 1).
    #[serde(default = "one")]
    pub leaves_per_tree: u32,
    /// Whether a decision with a single legal action (a compulsory capture, the only way on
    /// with a jump) passes through the search tree without a network evaluation
    /// (`SearchConfig::forced_pass`), as `play.forced` does at play. Measured 2.5 points weaker
    /// against alphabeta:depth=2 on two reseeded hour.toml branches, 0.1 to 1.4 points more
    /// value kept on three reseeded Camette runs (docs/BENCHMARKS.md): camette.toml sets it,
    /// quick.toml and hour.toml do not.
    #[serde(default)]
    pub forced_pass: bool,
    /// Entries of each worker's evaluation cache.
    #[serde(default = "cache")]
    pub cache: u32,
    /// CPU threads each worker's network passes may use (0: the machine's cores divided among
    /// the workers, at least 1). One thread per worker scales best on a CPU: small batches
    /// gain little from splitting one pass over cores and lose to their synchronisation.
    #[serde(default)]
    pub network_threads: u32,
    /// Arithmetic of the network's 3x3 convolutions in self-play and evaluation on the CPU
    /// (`camelot_net::Precision`): `"f32"` (default), or `"int8"`, 8-bit activations and
    /// weights summed exactly, 2.5-2.7x the positions a second where the CPU has AVX-512
    /// VNNI (docs/BENCHMARKS.md, "An 8-bit network on the CPU"). Later networks may use
    /// another (`precision_schedule`).
    #[serde(default)]
    pub precision: camelot_net::Precision,
    /// Weight of the network's predicted final material in the value the search sees (0: off;
    /// KataGo's score utility in spirit, see `NetEvaluator::with_material_utility`). Self-play
    /// and evaluation games both use it; the targets are the games' results.
    #[serde(default)]
    pub material_utility: f32,
    /// Lead in material points (a man one, a knight two) at which the material utility weighs
    /// tanh(1) = 0.76 (`NetEvaluator::with_material_scale`); 0 (default): linear, the lead / 14,
    /// where a man weighs 0.07 and the search can hardly tell a hanging piece from noise.
    #[serde(default)]
    pub material_scale: f32,
    /// Weight of the network's predicted plies left in the value the search sees (0: off;
    /// lc0's moves-left head in spirit, see `NetEvaluator::with_moves_left_utility`): short
    /// wins and long losses are preferred. Self-play and evaluation games both use it.
    #[serde(default)]
    pub moves_left_utility: f32,
    /// Share of games in which an earlier network, drawn uniformly from generations 0 to the
    /// one before the playing network, plays one side (drawn at random); only the playing
    /// network's decisions are trained on. 0 (default): pure self-play.
    #[serde(default)]
    pub past_opponents: f32,
    /// Share of games that begin from a scattered set-up instead of the variant's: each
    /// side's pieces on random squares outside the castles, either side to move
    /// (`crate::starts`), so that castle ends occur in self-play. 0 (default): every game
    /// from the set-up. Evaluation games always start from the set-up.
    #[serde(default)]
    pub scattered_starts: f32,
    /// Games not begun from a scattered start open with `k` uniformly random legal moves, `k`
    /// drawn uniformly from `0..=random_opening_plies`, before the network plays (the random
    /// plies are not trained on; the record's start is the position they reach). Self-play
    /// alone keeps to the openings its network prefers (`crate::starts::random_opening`; on
    /// Camette it lifted the value head, not the moves played). 0 (default): every game from
    /// the set-up.
    #[serde(default)]
    pub random_opening_plies: u32,
    /// What a draw costs both sides in the search, in `[0, 1)` (0: off; see
    /// `SearchConfig::draw_penalty`): against young networks' drift into no-progress draws.
    /// Self-play and evaluation games both use it; targets are unchanged (a draw is 0).
    #[serde(default)]
    pub draw_penalty: f32,
    /// Whether a game the no-progress rule ends is scored on material for training, as a
    /// capped game is (more material wins; equal material draws), instead of as the rules'
    /// draw. Both end the same way: nobody could make progress, and the side ahead is the
    /// one the position favours. Off (default): the rules' draw.
    #[serde(default)]
    pub no_progress_on_material: bool,
    /// Generations, counted from the untrained network's (0), whose fast searches carry the
    /// full search's noise. An untrained network's preferences are arbitrary: without noise,
    /// three decisions in four follow them, and a network that happens to prefer retreating
    /// plays generation 0 into no-progress draws that teach nothing. Measured on quick.toml it
    /// makes generation 0 decisive from every seed but no later network stronger
    /// (docs/BENCHMARKS.md, "One seed is not a recipe"). 0 (default): never.
    #[serde(default)]
    pub fast_noise_generations: u32,
    /// More simulations for the full searches later in the run: from the games of network
    /// `from_generation` on, `simulations` replaces `selfplay.simulations` (the last step
    /// reached applies; fast searches keep `fast_simulations`). A search only improves on the
    /// prior it starts from by what its simulations find: early networks gain nothing from
    /// more (96 simulations at generation 10 of quick.toml did no better), while from
    /// generation 18 on twice the simulations lifted quick.toml's generation 26 by about 10
    /// points against alphabeta depth 2, and from generation 40 hour.toml's generation 60 by
    /// 21 points against depth 3 (docs/BENCHMARKS.md, "More simulations once the loop
    /// plateaus" and "quick.toml: 64 simulations from generation 18"). KataGo raises its
    /// visits over a run the same way. Empty (default): `simulations` throughout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub simulations_schedule: Vec<SimulationStep>,
    /// Another arithmetic for later networks: from network `from_generation` on, its self-play
    /// and evaluation games use `precision` instead of `selfplay.precision` (the last step
    /// reached applies). A run's first generations, whose trajectory any change redraws, keep
    /// the arithmetic they were measured in, and the rest take half the time (hour.toml's run
    /// continued in `int8` from generation 60: 25 s a generation against about 52 s in `f32`;
    /// docs/BENCHMARKS.md, "What the 8-bit network's time buys past generation 60"). Empty
    /// (default): `precision` throughout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub precision_schedule: Vec<PrecisionStep>,
}

/// One step of [`SelfplayConfig::precision_schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionStep {
    /// The first network (by generation) whose games use this arithmetic.
    pub from_generation: u32,
    /// Its arithmetic.
    pub precision: camelot_net::Precision,
}

/// One step of [`SelfplayConfig::simulations_schedule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationStep {
    /// The first network (by generation) whose self-play games search this much.
    pub from_generation: u32,
    /// Simulations of its full searches.
    pub simulations: u32,
}

impl SelfplayConfig {
    /// Simulations of a full search in the self-play games of network `generation`.
    pub fn simulations_in(&self, generation: u32) -> u32 {
        step_reached(&self.simulations_schedule, generation, |step| step.from_generation)
            .map_or(self.simulations, |step| step.simulations)
    }

    /// Arithmetic of the network `generation` in its self-play and evaluation games.
    pub fn precision_in(&self, generation: u32) -> camelot_net::Precision {
        step_reached(&self.precision_schedule, generation, |step| step.from_generation)
            .map_or(self.precision, |step| step.precision)
    }
}

/// The last step of a schedule whose `from_generation` the network `generation` has reached.
fn step_reached<S>(steps: &[S], generation: u32, from: impl Fn(&S) -> u32) -> Option<&S> {
    steps.iter().rev().find(|step| from(step) <= generation)
}

/// The first step of a schedule that does not come after the one before it: its index and why.
fn misordered_step<S>(steps: &[S], from: impl Fn(&S) -> u32) -> Option<(usize, String)> {
    steps.windows(2).position(|pair| from(&pair[1]) <= from(&pair[0])).map(|i| {
        let (before, step) = (from(&steps[i]), from(&steps[i + 1]));
        (i + 1, format!("from_generation {step} must come after the step before ({before})"))
    })
}

/// Which positions each generation trains on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    /// Positions per training step.
    pub batch_size: u32,
    /// How many times each new position is sampled on average (the sampling ratio): training
    /// steps per generation = new positions x this / batch size.
    pub sample_reuse: f32,
    /// Generations of self-play games in the window sampled from (the newest included).
    pub window_generations: u32,
    /// Share of the search's root value in each position's value target, the rest being the
    /// game's result (0, the default: the result alone).
    #[serde(default)]
    pub root_value_weight: f32,
    /// Plies ahead whose material balance the material head learns to predict (0, the
    /// default: the game's end). A few plies make it a learned judge of which pieces hang,
    /// which the search's material utility then weighs (see `replay::game_samples`).
    #[serde(default)]
    pub material_horizon: u32,
    /// Share of each position's sampling weight given in proportion to its policy surprise,
    /// KL(target || prior) under the network that played its game (KataGo's policy surprise
    /// weighting: positions where the search corrected the prior most are drawn more often);
    /// the rest is uniform, and the weights average 1 over the window. 0, the default: every
    /// position is drawn alike.
    #[serde(default)]
    pub policy_surprise_weight: f32,
}

/// The evaluation after each generation: the new network against the previous one and
/// against baseline players, through paired openings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvaluationConfig {
    /// Games per opponent (even: each opening with both colours).
    pub games: u32,
    /// Games per opponent for the run's last generation (default: `games`): a fixed ladder
    /// of anchors rates every generation cheaply and the last one tightly, as a user reads
    /// the result against players they know.
    #[serde(default)]
    pub final_games: Option<u32>,
    /// The opponents (labels of `opponents`) the last generation plays `final_games`
    /// against; the others get `games` as in every generation (default: all of them). The
    /// last generation's interval is set by the anchors that take a share of its games: games
    /// it wins every time (`random`, `greedy`) or against the previous network add time, not
    /// precision.
    #[serde(default)]
    pub final_opponents: Option<Vec<String>>,
    /// Simulations per decision of the network players.
    pub simulations: u32,
    /// Opponents: `previous` (the last generation's network), `initial` (generation 0, the
    /// untrained network) or baseline specs (`greedy`,
    /// `random`, `alphabeta:depth=2`, ...).
    pub opponents: Vec<String>,
    /// Random plies of each opening.
    #[serde(default = "four")]
    pub opening_plies: u32,
    /// Ply cap of evaluation games, adjudicated on material as in every arena (0: the
    /// self-play cap).
    #[serde(default)]
    pub max_plies: u32,
    /// Whether a new network must prove itself before it plays the next generation's games:
    /// `none` (always promoted) or `sprt` (an SPRT against the network playing now, at the
    /// evaluation's search; rejected networks keep training but do not play).
    #[serde(default)]
    pub gate: Gate,
    /// The gate's SPRT: Elo of H0 and H1, error rates, and the most game pairs it may play
    /// before it rejects (a test that has not accepted H1 by then fails the gate).
    #[serde(default)]
    pub sprt: GateSprt,
    /// Solved test positions (`camelot solve --sample-positions`, JSON lines; a path relative
    /// to the working directory of the evaluating process): each generation's network, at the
    /// evaluation's search, moves in them and its share of value-keeping moves and its value
    /// head's accuracy join `generations.csv` and `plots/solved.png`. None: not measured.
    #[serde(default)]
    pub solved_positions: Option<String>,
    /// How many of the solved positions to use, spread evenly over the file (0: all).
    #[serde(default)]
    pub solved_sample: u32,
    /// The player fixed at 0 Elo in `plots/elo.png` (one of `opponents`; default: `random`
    /// when it plays). Every interval is relative to it, through the chain of games between:
    /// networks that win every game against `random`, `greedy` and `uct` stay about +-200 Elo
    /// from `random` however many games they play, so the interval of what the ladder
    /// measures is read against the anchor nearest the networks (`camelot ratings --anchor`).
    #[serde(default)]
    pub rating_anchor: Option<String>,
}

/// Promotion rule of new networks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    /// Every new network plays the next generation.
    #[default]
    None,
    /// A new network plays only after an SPRT accepts that it is stronger.
    Sprt,
}

/// Settings of the SPRT gate (`evaluation.sprt`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateSprt {
    /// Elo difference of the null hypothesis.
    pub elo0: f64,
    /// Elo difference of the alternative.
    pub elo1: f64,
    /// False-acceptance rate of H1.
    pub alpha: f64,
    /// False-acceptance rate of H0.
    pub beta: f64,
    /// Most game pairs before the gate gives up (and rejects).
    pub max_pairs: u32,
}

impl Default for GateSprt {
    fn default() -> GateSprt {
        GateSprt { elo0: 0.0, elo1: 30.0, alpha: 0.05, beta: 0.05, max_pairs: 200 }
    }
}

fn one() -> u32 {
    1
}
fn one_f32() -> f32 {
    1.0
}
fn four() -> u32 {
    4
}
fn sixteen() -> u32 {
    16
}
fn gumbel_c_scale() -> f32 {
    camelot_search::SearchConfig::default().gumbel_c_scale
}
fn twenty() -> u32 {
    20
}
fn thirty() -> u32 {
    30
}
fn c_puct() -> f32 {
    1.5
}
fn dirichlet_alpha() -> f32 {
    0.3
}
fn dirichlet_fraction() -> f32 {
    0.25
}
fn playthrough() -> f32 {
    0.1
}
fn cache() -> u32 {
    200_000
}

impl RunConfig {
    /// How the replay window turns game records into targets (the ownership target only for
    /// a network with the head).
    pub fn target_settings(&self) -> crate::replay::TargetSettings {
        crate::replay::TargetSettings {
            root_value_weight: self.replay.root_value_weight,
            material_horizon: self.replay.material_horizon,
            ownership: self.network.ownership,
        }
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<RunConfig, SelfplayError> {
        let text = std::fs::read_to_string(path).map_err(|e| SelfplayError::io(path, e))?;
        RunConfig::parse(&text, path)
    }

    /// Reads a config file with `KEY=VALUE` overrides (`selfplay.games=128`; the value is
    /// read as TOML, else taken as a string), then validates it.
    pub fn load_with_overrides(path: &Path, overrides: &[String]) -> Result<RunConfig, SelfplayError> {
        let text = std::fs::read_to_string(path).map_err(|e| SelfplayError::io(path, e))?;
        if overrides.is_empty() {
            return RunConfig::parse(&text, path);
        }
        let config_error = |message: String| SelfplayError::Config { file: path.to_path_buf(), message };
        let mut value: toml::Table = toml::from_str(&text).map_err(|e| config_error(e.to_string()))?;
        for line in overrides {
            let (key, raw) = line
                .split_once('=')
                .ok_or_else(|| config_error(format!("--set `{line}`: expected KEY=VALUE, e.g. selfplay.games=128")))?;
            let parsed = toml::from_str::<toml::Table>(&format!("v = {raw}"))
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(raw.to_string()));
            let mut table = &mut value;
            let parts: Vec<&str> = key.trim().split('.').collect();
            for (i, part) in parts.iter().enumerate() {
                if part.is_empty() {
                    return Err(config_error(format!("--set `{line}`: empty part in the key")));
                }
                if i + 1 == parts.len() {
                    table.insert(part.to_string(), parsed.clone());
                } else {
                    let entry = table.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                    table = entry
                        .as_table_mut()
                        .ok_or_else(|| config_error(format!("--set `{line}`: `{part}` is not a table")))?;
                }
            }
        }
        let config: RunConfig =
            value.try_into().map_err(|e: toml::de::Error| config_error(format!("after --set: {e}")))?;
        config.validate().map_err(config_error)?;
        Ok(config)
    }

    /// Parses and validates config text (`file` names it in errors).
    pub fn parse(text: &str, file: &Path) -> Result<RunConfig, SelfplayError> {
        let config: RunConfig = toml::from_str(text)
            .map_err(|e| SelfplayError::Config { file: file.to_path_buf(), message: e.to_string() })?;
        config.validate().map_err(|message| SelfplayError::Config { file: file.to_path_buf(), message })?;
        Ok(config)
    }

    /// The config as TOML (what `run.toml` holds).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Checks every value, naming the first key at fault.
    pub fn validate(&self) -> Result<(), String> {
        let key = |k: &str, why: &str| Err(format!("{k}: {why}"));
        if camelot_rules::Ruleset::variant(&self.variant).is_err() {
            return key("variant", &format!("unknown variant `{}`", self.variant));
        }
        if self.generations == 0 {
            return key("generations", "must be at least 1");
        }
        self.network.validate().map_err(|e| format!("network: {e}"))?;
        self.training.validate().map_err(|e| format!("training: {e}"))?;
        let s = &self.selfplay;
        if s.games == 0 {
            return key("selfplay.games", "must be at least 1");
        }
        if s.workers == 0 || s.workers > 256 {
            return key("selfplay.workers", "must be between 1 and 256");
        }
        if s.parallel_games == 0 {
            return key("selfplay.parallel_games", "must be at least 1");
        }
        if s.simulations == 0 {
            return key("selfplay.simulations", "must be at least 1");
        }
        if !(s.full_search_fraction > 0.0 && s.full_search_fraction <= 1.0) {
            return key("selfplay.full_search_fraction", "must be in (0, 1]");
        }
        if s.full_search_fraction < 1.0 && s.fast_simulations == 0 {
            return key("selfplay.fast_simulations", "must be at least 1 when full_search_fraction < 1");
        }
        if s.fast_simulations > s.simulations {
            return key("selfplay.fast_simulations", "must not exceed selfplay.simulations");
        }
        if let Some((i, why)) = misordered_step(&s.simulations_schedule, |step| step.from_generation) {
            return key(&format!("selfplay.simulations_schedule[{i}]"), &why);
        }
        for (i, step) in s.simulations_schedule.iter().enumerate() {
            let step_key = format!("selfplay.simulations_schedule[{i}]");
            if step.simulations == 0 || step.simulations < s.fast_simulations {
                let why = format!(
                    "simulations {} must be at least 1 and at least selfplay.fast_simulations ({})",
                    step.simulations, s.fast_simulations
                );
                return key(&step_key, &why);
            }
        }
        if let Some((i, why)) = misordered_step(&s.precision_schedule, |step| step.from_generation) {
            return key(&format!("selfplay.precision_schedule[{i}]"), &why);
        }
        if s.gumbel && s.gumbel_m < 2 {
            return key("selfplay.gumbel_m", "must be at least 2");
        }
        if !camelot_search::SearchConfig::POLICY_TEMPERATURES.contains(&self.play.policy_temperature) {
            return key("play.policy_temperature", "must be a temperature from 0.1 to 10");
        }
        if !(s.gumbel_c_scale > 0.0 && s.gumbel_c_scale.is_finite()) {
            return key("selfplay.gumbel_c_scale", "must be a positive number");
        }
        if s.c_puct.is_nan() || s.c_puct <= 0.0 {
            return key("selfplay.c_puct", "must be positive");
        }
        if s.dirichlet_alpha.is_nan() || s.dirichlet_alpha <= 0.0 {
            return key("selfplay.dirichlet_alpha", "must be positive");
        }
        if !(0.0..=1.0).contains(&s.dirichlet_fraction) {
            return key("selfplay.dirichlet_fraction", "must be in [0, 1]");
        }
        for (k, t) in [("selfplay.temperature", s.temperature), ("selfplay.final_temperature", s.final_temperature)] {
            if !(t >= 0.0 && t.is_finite()) {
                return key(k, "must be zero or positive");
            }
        }
        if s.max_plies == 0 {
            return key("selfplay.max_plies", "must be at least 1");
        }
        if let Some(t) = s.resign_threshold {
            if !(-1.0..=0.0).contains(&t) {
                return key("selfplay.resign_threshold", "must be in [-1, 0]");
            }
        }
        if !(0.0..=1.0).contains(&s.resign_playthrough) {
            return key("selfplay.resign_playthrough", "must be in [0, 1]");
        }
        if !(0.0..1.0).contains(&s.draw_penalty) {
            return key("selfplay.draw_penalty", "must be in [0, 1)");
        }
        if !(0.0..=1.0).contains(&s.moves_left_utility) {
            return key("selfplay.moves_left_utility", "must be in [0, 1]");
        }
        if !(0.0..=1.0).contains(&s.material_utility) {
            return key("selfplay.material_utility", "must be in [0, 1]");
        }
        if !(0.0..=100.0).contains(&s.material_scale) {
            return key("selfplay.material_scale", "must be a lead in points from 0 (linear) to 100");
        }
        if !(0.0..=1.0).contains(&s.scattered_starts) {
            return key("selfplay.scattered_starts", "must be in [0, 1]");
        }
        if s.random_opening_plies > s.max_plies {
            return key("selfplay.random_opening_plies", "must be at most selfplay.max_plies");
        }
        if !(0.0..=1.0).contains(&s.past_opponents) {
            return key("selfplay.past_opponents", "must be in [0, 1]");
        }
        if s.network_threads > 1024 {
            return key("selfplay.network_threads", "must be at most 1024 (0: automatic)");
        }
        if s.leaves_per_tree == 0 {
            return key("selfplay.leaves_per_tree", "must be at least 1");
        }
        let r = &self.replay;
        if r.batch_size == 0 {
            return key("replay.batch_size", "must be at least 1");
        }
        if !(r.sample_reuse > 0.0 && r.sample_reuse.is_finite()) {
            return key("replay.sample_reuse", "must be positive");
        }
        if !(0.0..=1.0).contains(&r.root_value_weight) {
            return key("replay.root_value_weight", "must be between 0 and 1");
        }
        if !(0.0..=1.0).contains(&r.policy_surprise_weight) {
            return key("replay.policy_surprise_weight", "must be between 0 and 1");
        }
        if r.window_generations == 0 {
            return key("replay.window_generations", "must be at least 1");
        }
        let e = &self.evaluation;
        if e.simulations == 0 {
            return key("evaluation.simulations", "must be at least 1");
        }
        if !e.games.is_multiple_of(2) {
            return key("evaluation.games", "must be even (each opening is played with both colours)");
        }
        if e.final_games.is_some_and(|g| !g.is_multiple_of(2)) {
            return key("evaluation.final_games", "must be even (each opening is played with both colours)");
        }
        if let Some(finals) = &e.final_opponents {
            if let Some(stray) = finals.iter().find(|f| !e.opponents.contains(f)) {
                return key("evaluation.final_opponents", &format!("{stray:?} is not one of evaluation.opponents"));
            }
        }
        if let Some(anchor) = &e.rating_anchor {
            if !e.opponents.iter().any(|o| o == anchor) || anchor == "previous" || anchor == "initial" {
                return key(
                    "evaluation.rating_anchor",
                    "must be one of evaluation.opponents other than previous and initial",
                );
            }
        }
        if e.gate == Gate::Sprt {
            let g = &e.sprt;
            if !(g.elo0.is_finite() && g.elo1.is_finite() && g.elo1 > g.elo0) {
                return key("evaluation.sprt.elo1", "must be finite and above evaluation.sprt.elo0");
            }
            for (k, v) in [("evaluation.sprt.alpha", g.alpha), ("evaluation.sprt.beta", g.beta)] {
                if !(v > 0.0 && v < 0.5) {
                    return key(k, "must be in (0, 0.5)");
                }
            }
            if g.max_pairs == 0 {
                return key("evaluation.sprt.max_pairs", "must be at least 1");
            }
        }
        for spec in &e.opponents {
            if spec != "previous" && spec != "initial" {
                let parsed = camelot_arena::PlayerSpec::parse(spec)
                    .map_err(|err| format!("evaluation.opponents: `{spec}`: {err}"))?;
                if parsed.is_human() {
                    return key("evaluation.opponents", "`human` cannot play unattended");
                }
            }
        }
        Ok(())
    }

    /// The search of a full self-play decision.
    pub fn full_search(&self) -> SearchConfig {
        let s = &self.selfplay;
        SearchConfig {
            simulations: s.simulations,
            c_puct: s.c_puct,
            dirichlet_alpha: s.dirichlet_alpha,
            dirichlet_fraction: s.dirichlet_fraction,
            temperature: TemperatureSchedule::step(s.temperature, s.temperature_decisions, s.final_temperature),
            gumbel: s.gumbel,
            gumbel_m: s.gumbel_m,
            gumbel_c_scale: s.gumbel_c_scale,
            leaves_per_tree: s.leaves_per_tree,
            draw_penalty: s.draw_penalty,
            forced_pass: s.forced_pass,
            ..SearchConfig::default()
        }
    }

    /// The full search of the self-play games of `generation`'s network: [`Self::full_search`]
    /// with the simulations `selfplay.simulations_schedule` gives that generation.
    pub fn full_search_in(&self, generation: u32) -> SearchConfig {
        SearchConfig { simulations: self.selfplay.simulations_in(generation), ..self.full_search() }
    }

    /// The search of a fast decision (playout cap randomization): fewer simulations, no
    /// noise; the move is still chosen by the temperature schedule.
    pub fn fast_search(&self) -> SearchConfig {
        SearchConfig {
            simulations: self.selfplay.fast_simulations.max(1),
            dirichlet_fraction: 0.0,
            // No Gumbel noise either: a fast decision is not a training target, so noise
            // there buys no exploration worth its cost and makes three moves in four
            // near-random at a handful of simulations.
            gumbel_scale: 0.0,
            ..self.full_search()
        }
    }

    /// The fast search of the self-play games of `generation`'s network: [`Self::fast_search`],
    /// with the full search's noise in the first `selfplay.fast_noise_generations`.
    pub fn fast_search_in(&self, generation: u32) -> SearchConfig {
        let fast = self.fast_search();
        if generation < self.selfplay.fast_noise_generations {
            let full = self.full_search();
            SearchConfig { dirichlet_fraction: full.dirichlet_fraction, gumbel_scale: full.gumbel_scale, ..fast }
        } else {
            fast
        }
    }

    /// The network player of the evaluation games, for the checkpoint `model`: the
    /// evaluation's simulations, the self-play search's root rule, `m`, completed-Q scale,
    /// PUCT constant and leaves per tree, no noise, the best move; material utility and draw
    /// penalty as trained (the model card's, which are this config's), the forced pass as
    /// played (`play.forced`). Its spec string names
    /// the network in results, and its search is the one the evaluation plays (one definition
    /// for both). `generation` is the network's, which sets its arithmetic
    /// (`selfplay.precision_schedule`).
    pub fn evaluation_player(&self, model: &str, generation: u32) -> MctsConfig {
        let s = &self.selfplay;
        MctsConfig {
            model: model.to_string(),
            sims: self.evaluation.simulations,
            gumbel: Some(s.gumbel),
            gumbel_m: if s.gumbel { s.gumbel_m } else { MctsConfig::default().gumbel_m },
            gumbel_c_scale: s.gumbel_c_scale,
            c_puct: s.c_puct,
            batch: s.leaves_per_tree,
            // Left to the card (which says `play.forced`) unless on, so that runs without it
            // keep their players' names.
            forced: self.play.forced.then_some(true),
            policy_temperature: Some(self.play.policy_temperature).filter(|&t| t != 1.0),
            // The ladder plays the networks at self-play's arithmetic (its time is the run's).
            precision: s.precision_in(generation),
            ..MctsConfig::default()
        }
    }

    /// The search settings the run's models are trained with (the searched value's) and
    /// played with (`[play]`'s root rule), written in their cards: the defaults of any
    /// `mcts:` player of them.
    pub fn play_settings(&self) -> PlaySettings {
        PlaySettings {
            material_utility: self.selfplay.material_utility,
            material_scale: self.selfplay.material_scale,
            draw_penalty: self.selfplay.draw_penalty,
            moves_left_utility: self.selfplay.moves_left_utility,
            gumbel: self.play.gumbel,
            mirror: self.play.mirror,
            forced: self.play.forced,
            material_horizon: Some(self.replay.material_horizon).filter(|&h| h > 0),
            policy_temperature: self.play.policy_temperature,
        }
    }

    /// Ply cap of the evaluation games.
    pub fn evaluation_max_plies(&self) -> u32 {
        if self.evaluation.max_plies == 0 {
            self.selfplay.max_plies
        } else {
            self.evaluation.max_plies
        }
    }

    /// CPU threads for each self-play worker's network passes.
    pub fn network_threads(&self) -> usize {
        match self.selfplay.network_threads {
            0 => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                (cores / self.selfplay.workers.max(1) as usize).max(1)
            }
            n => n as usize,
        }
    }

    /// Keys whose values differ between two configs, as `key: old -> new` lines.
    pub fn differences(&self, other: &RunConfig) -> Vec<String> {
        let a = toml::Value::try_from(self).unwrap_or(toml::Value::Boolean(false));
        let b = toml::Value::try_from(other).unwrap_or(toml::Value::Boolean(false));
        let mut out = Vec::new();
        diff_values("", &a, &b, &mut out);
        out
    }
}

fn diff_values(prefix: &str, a: &toml::Value, b: &toml::Value, out: &mut Vec<String>) {
    match (a, b) {
        (toml::Value::Table(x), toml::Value::Table(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => diff_values(&name, v, w, out),
                    (Some(v), None) => out.push(format!("{name}: {v} -> (absent)")),
                    (None, Some(w)) => out.push(format!("{name}: (absent) -> {w}")),
                    (None, None) => {}
                }
            }
        }
        _ if a != b => out.push(format!("{prefix}: {a} -> {b}")),
        _ => {}
    }
}
