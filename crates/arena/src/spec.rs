//! Player spec strings: `name` or `name:key=value,key=value`.

use crate::alphabeta::{AlphaBeta, AlphaBetaConfig};
use crate::basic::{Greedy, RandomPlayer};
use crate::error::{ArenaError, SpecError};
use crate::mcts::{self, MctsConfig, ModelStore};
use crate::player::Player;
use crate::uct::{Uct, UctConfig};
use camelot_net::Precision;
use camelot_rules::Ruleset;
use camelot_search::SearchConfig;
use rand_chacha::ChaCha8Rng;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Every player name a spec may start with.
pub const PLAYER_NAMES: [&str; 6] = ["random", "greedy", "alphabeta", "uct", "human", "mcts"];

/// A parsed player spec. [`fmt::Display`] writes it back in canonical form (keys in a fixed
/// order, defaults left out), which is also the player's name in tables.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// `random`: a uniformly random legal move.
    Random,
    /// `greedy`: best material after one move, random tie-break.
    Greedy,
    /// `alphabeta:depth=N`, `alphabeta:ms=N` (both may be given; `tt=BITS` sizes the hash
    /// table, default 18 = 262144 entries). Without limits: depth 3.
    AlphaBeta(AlphaBetaConfig),
    /// `uct:sims=N` (default 1000), `ms=N` (a time limit; alone it lifts the simulation
    /// limit), `cap=N` rollout plies (default 40), `c=X` exploration (default 1.0).
    Uct(UctConfig),
    /// `human`: a person at the terminal (only `camelot play` can seat one).
    Human,
    /// `mcts:model=PATH,sims=N` (default 200) with optional `gumbel`, `mirror` (average each
    /// evaluation with the mirrored position's), `forced` (forced decisions pass through the
    /// tree without an evaluation), `m=M`, `cscale=C` (the
    /// Gumbel completed-Q scale, default 1), `cpuct=C` (PUCT exploration, default 1.5), `ptemp=T` (policy
    /// softmax temperature, 0.1 to 10, default 1), `temperature=T`,
    /// `ms=M`, `cache=K`, `batch=B`, `material=F` (0 to 1, default 0: the weight of the
    /// predicted final material in the search's value), `mscale=S` (0 to 100: the lead in
    /// material points the utility weighs at tanh(1); 0 linear), `draw=P` (0 to below 1, default 0:
    /// what a draw costs both sides in the search), `moves_left=C` (0 to 1: the weight of the
    /// predicted plies left, for short wins and long losses), `device=D`: the network's search (see
    /// [`MctsConfig`]).
    Mcts(MctsConfig),
}

/// The deepest search a spec (and an engine's `go depth`) may ask for, in plies.
pub const MAX_DEPTH: u32 = 64;
/// The longest time per move a spec (and an engine's `go`) may give, in milliseconds: a day.
pub const MAX_MS: u64 = 86_400_000;
/// The most simulations a spec (and an engine's `go nodes`) may ask for; `u32::MAX` stands for
/// "no simulation limit" under a time limit.
pub const MAX_SIMS: u32 = u32::MAX - 1;

const ALPHABETA_KEYS: &str = "depth, ms, tt";
const UCT_KEYS: &str = "sims, ms, cap, c";
const MCTS_KEYS: &str =
    "model, sims, gumbel, temperature, ms, cache, batch, m, cscale, cpuct, ptemp, mirror, forced, reuse, material, mscale, draw, moves_left, precision, device";

/// The `key=value` settings of one spec, each consumed once.
struct SpecSettings<'a> {
    player: &'a str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> SpecSettings<'a> {
    /// Reads `key=value,...`; a bare word in `flags` stands for `word=yes`.
    fn parse(player: &'a str, text: Option<&'a str>, flags: &[&str]) -> Result<SpecSettings<'a>, SpecError> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for part in text.unwrap_or("").split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = Some(part)
                .filter(|p| flags.contains(p))
                .map(|p| (p, "yes"))
                .or_else(|| part.split_once('='))
                .map(|(k, v)| (k.trim(), v.trim()))
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .ok_or_else(|| SpecError::Malformed { player: player.to_string(), text: part.to_string() })?;
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(SpecError::Duplicate { player: player.to_string(), key: key.to_string() });
            }
            pairs.push((key, value));
        }
        Ok(SpecSettings { player, pairs })
    }

    /// Fails on the first key not in `known`.
    fn only(&self, known: &[&str], known_text: &'static str) -> Result<(), SpecError> {
        match self.pairs.iter().find(|(k, _)| !known.contains(k)) {
            Some((key, _)) => {
                Err(SpecError::UnknownKey { player: self.player.to_string(), key: key.to_string(), known: known_text })
            }
            None => Ok(()),
        }
    }

    fn raw(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn bad(&self, key: &str, value: &str, expected: &'static str) -> SpecError {
        SpecError::BadValue {
            player: self.player.to_string(),
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }

    /// A yes/no key (the bare word is yes); left out, `None`, as where that means "as the
    /// model's card says".
    fn optional_flag(&self, key: &str) -> Result<Option<bool>, SpecError> {
        match self.raw(key) {
            None => Ok(None),
            Some("no") | Some("false") | Some("0") => Ok(Some(false)),
            Some("yes") | Some("true") | Some("1") => Ok(Some(true)),
            Some(v) => Err(self.bad(key, v, "yes or no (or the bare word)")),
        }
    }

    fn number<T: FromStr + PartialOrd>(
        &self,
        key: &str,
        min: T,
        max: T,
        expected: &'static str,
    ) -> Result<Option<T>, SpecError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => match v.parse::<T>() {
                Ok(n) if n >= min && n <= max => Ok(Some(n)),
                _ => Err(self.bad(key, v, expected)),
            },
        }
    }
}

impl PlayerSpec {
    /// Reads a spec string. Errors name the player and the key at fault.
    pub fn parse(text: &str) -> Result<PlayerSpec, SpecError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpecError::Empty);
        }
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (text, None),
        };
        let player = PLAYER_NAMES.iter().find(|p| **p == name).ok_or_else(|| SpecError::UnknownPlayer(name.into()))?;
        let flags: &[&str] = if *player == "mcts" { &["gumbel", "mirror", "forced", "reuse"] } else { &[] };
        let s = SpecSettings::parse(player, rest, flags)?;
        Ok(match *player {
            "random" | "greedy" | "human" => {
                s.only(&[], "none")?;
                match *player {
                    "random" => PlayerSpec::Random,
                    "greedy" => PlayerSpec::Greedy,
                    _ => PlayerSpec::Human,
                }
            }
            "alphabeta" => {
                s.only(&["depth", "ms", "tt"], ALPHABETA_KEYS)?;
                let depth = s.number::<u32>("depth", 1, MAX_DEPTH, "a whole number of plies from 1 to 64")?;
                let ms = s.number::<u64>("ms", 1, MAX_MS, "a whole number of milliseconds, at least 1")?;
                let tt_bits = s.number::<u32>("tt", 4, 26, "log2 of the hash table entries, 4 to 26")?;
                let default = AlphaBetaConfig::default();
                PlayerSpec::AlphaBeta(AlphaBetaConfig {
                    depth: if depth.is_none() && ms.is_none() { default.depth } else { depth },
                    ms,
                    tt_bits: tt_bits.unwrap_or(default.tt_bits),
                })
            }
            "uct" => {
                s.only(&["sims", "ms", "cap", "c"], UCT_KEYS)?;
                let default = UctConfig::default();
                let sims = s.number::<u32>("sims", 1, MAX_SIMS, "a whole number of simulations, at least 1")?;
                let ms = s.number::<u64>("ms", 1, MAX_MS, "a whole number of milliseconds, at least 1")?;
                let cap = s.number::<u32>("cap", 1, 100_000, "a whole number of rollout plies, at least 1")?;
                let c = s.number::<f64>("c", 0.0, 100.0, "an exploration constant from 0 to 100")?;
                PlayerSpec::Uct(UctConfig {
                    sims: sims.unwrap_or(if ms.is_some() { u32::MAX } else { default.sims }),
                    ms,
                    cap: cap.unwrap_or(default.cap),
                    c: c.unwrap_or(default.c),
                })
            }
            _ => {
                s.only(
                    &[
                        "model",
                        "sims",
                        "gumbel",
                        "mirror",
                        "forced",
                        "reuse",
                        "m",
                        "cscale",
                        "cpuct",
                        "ptemp",
                        "temperature",
                        "ms",
                        "cache",
                        "batch",
                        "material",
                        "mscale",
                        "draw",
                        "moves_left",
                        "precision",
                        "device",
                    ],
                    MCTS_KEYS,
                )?;
                let model = s.raw("model").ok_or(SpecError::MissingKey {
                    player: "mcts".to_string(),
                    key: "model",
                    hint: "e.g. mcts:model=runs/quick/latest,sims=200",
                })?;
                let d = MctsConfig::default();
                let sims = s.number::<u32>("sims", 1, MAX_SIMS, "a whole number of simulations, at least 1")?;
                let ms = s.number::<u64>("ms", 1, MAX_MS, "a whole number of milliseconds, at least 1")?;
                let temperature = s.number::<f32>("temperature", 0.0, 100.0, "a temperature from 0 to 100")?;
                let cache = s.number::<usize>("cache", 0, 1 << 30, "a number of cached positions (0: none)")?;
                let batch = s.number::<u32>("batch", 1, 4096, "leaves per tree and search round, 1 to 4096")?;
                let gumbel_m = s.number::<u32>("m", 2, 4096, "a number of root actions, 2 to 4096")?;
                let gumbel_c_scale = s.number::<f32>("cscale", 0.001, 100.0, "a scale from 0.001 to 100")?;
                let c_puct = s.number::<f32>("cpuct", 0.0, 100.0, "an exploration constant from 0 to 100")?;
                let policy_temperature = {
                    let range = SearchConfig::POLICY_TEMPERATURES;
                    s.number::<f32>("ptemp", *range.start(), *range.end(), "a policy temperature from 0.1 to 10")?
                };
                let material = s.number::<f32>("material", 0.0, 1.0, "a weight from 0 to 1")?;
                let material_scale =
                    s.number::<f32>("mscale", 0.0, 100.0, "a lead in material points from 0 (linear) to 100")?;
                let draw = s.number::<f32>("draw", 0.0, 0.999, "a draw penalty from 0 to below 1")?;
                let moves_left = s.number::<f32>("moves_left", 0.0, 1.0, "a weight from 0 to 1")?;
                let precision = match s.raw("precision") {
                    None => d.precision,
                    Some(text) => Precision::parse(text).ok_or_else(|| s.bad("precision", text, "f32 or int8"))?,
                };
                PlayerSpec::Mcts(MctsConfig {
                    model: model.to_string(),
                    sims: sims.unwrap_or(if ms.is_some() { u32::MAX } else { d.sims }),
                    gumbel: s.optional_flag("gumbel")?,
                    mirror: s.optional_flag("mirror")?,
                    forced: s.optional_flag("forced")?,
                    reuse: s.optional_flag("reuse")?,
                    gumbel_m: gumbel_m.unwrap_or(d.gumbel_m),
                    gumbel_c_scale: gumbel_c_scale.unwrap_or(d.gumbel_c_scale),
                    c_puct: c_puct.unwrap_or(d.c_puct),
                    policy_temperature,
                    temperature: temperature.unwrap_or(d.temperature),
                    ms,
                    cache: cache.unwrap_or(d.cache),
                    batch: batch.unwrap_or(d.batch),
                    material,
                    material_scale,
                    moves_left,
                    draw_penalty: draw,
                    precision,
                    device: s.raw("device").unwrap_or(&d.device).to_string(),
                })
            }
        })
    }

    /// The same spec with a `model=DIR/latest` replaced by the checkpoint it names now
    /// ([`mcts::resolve_model_path`]), so that results record which model actually played.
    pub fn resolved(&self) -> Result<PlayerSpec, ArenaError> {
        match self {
            PlayerSpec::Mcts(c) => {
                Ok(PlayerSpec::Mcts(MctsConfig { model: mcts::resolve_model_path(&c.model)?, ..c.clone() }))
            }
            other => Ok(other.clone()),
        }
    }

    /// Whether this is the terminal player.
    pub fn is_human(&self) -> bool {
        matches!(self, PlayerSpec::Human)
    }

    /// Builds the player for `rules`; it draws any randomness from `rng`. Fails for `human`
    /// (see `camelot play`). An `mcts` player loads its checkpoint here; to share one load
    /// between many games use [`PlayerSpec::build_with`].
    pub fn build(&self, rules: &Arc<Ruleset>, rng: ChaCha8Rng) -> Result<Box<dyn Player>, ArenaError> {
        self.build_with(rules, rng, &ModelStore::new())
    }

    /// Like [`PlayerSpec::build`], taking networks from `models` (loaded on first use).
    pub fn build_with(
        &self,
        rules: &Arc<Ruleset>,
        rng: ChaCha8Rng,
        models: &ModelStore,
    ) -> Result<Box<dyn Player>, ArenaError> {
        let name = self.to_string();
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer::new(rng)),
            PlayerSpec::Greedy => Box::new(Greedy::new(rng)),
            PlayerSpec::AlphaBeta(config) => Box::new(AlphaBeta::new(Arc::clone(rules), *config, name)),
            PlayerSpec::Uct(config) => Box::new(Uct::new(Arc::clone(rules), *config, rng, name)),
            PlayerSpec::Human => return Err(ArenaError::HumanNeedsTerminal),
            PlayerSpec::Mcts(config) => return mcts::build(config, rules, rng, name, models),
        })
    }
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<PlayerSpec, SpecError> {
        PlayerSpec::parse(text)
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<String> = Vec::new();
        let name = match self {
            PlayerSpec::Random => "random",
            PlayerSpec::Greedy => "greedy",
            PlayerSpec::Human => "human",
            PlayerSpec::AlphaBeta(c) => {
                keys.extend(c.depth.map(|d| format!("depth={d}")));
                keys.extend(c.ms.map(|ms| format!("ms={ms}")));
                if c.tt_bits != AlphaBetaConfig::default().tt_bits {
                    keys.push(format!("tt={}", c.tt_bits));
                }
                "alphabeta"
            }
            PlayerSpec::Uct(c) => {
                let d = UctConfig::default();
                if c.sims != u32::MAX {
                    keys.push(format!("sims={}", c.sims));
                }
                keys.extend(c.ms.map(|ms| format!("ms={ms}")));
                if c.cap != d.cap {
                    keys.push(format!("cap={}", c.cap));
                }
                if c.c != d.c {
                    keys.push(format!("c={}", c.c));
                }
                "uct"
            }
            PlayerSpec::Mcts(c) => {
                let d = MctsConfig::default();
                keys.push(format!("model={}", c.model));
                if c.sims != u32::MAX {
                    keys.push(format!("sims={}", c.sims));
                }
                // Yes/no keys: the bare word, `=no`, or left out (as the model's card says).
                for (key, flag) in
                    [("gumbel", c.gumbel), ("mirror", c.mirror), ("forced", c.forced), ("reuse", c.reuse)]
                {
                    keys.extend(flag.map(|on| if on { key.to_string() } else { format!("{key}=no") }));
                }
                if c.gumbel_m != d.gumbel_m {
                    keys.push(format!("m={}", c.gumbel_m));
                }
                if c.gumbel_c_scale != d.gumbel_c_scale {
                    keys.push(format!("cscale={}", c.gumbel_c_scale));
                }
                if c.c_puct != d.c_puct {
                    keys.push(format!("cpuct={}", c.c_puct));
                }
                keys.extend(c.policy_temperature.map(|t| format!("ptemp={t}")));
                if c.temperature != d.temperature {
                    keys.push(format!("temperature={}", c.temperature));
                }
                keys.extend(c.ms.map(|ms| format!("ms={ms}")));
                if c.cache != d.cache {
                    keys.push(format!("cache={}", c.cache));
                }
                if c.batch != d.batch {
                    keys.push(format!("batch={}", c.batch));
                }
                // Given or not is meaningful: not given plays the model as it was trained.
                keys.extend(c.material.map(|m| format!("material={m}")));
                keys.extend(c.material_scale.map(|s| format!("mscale={s}")));
                keys.extend(c.draw_penalty.map(|p| format!("draw={p}")));
                keys.extend(c.moves_left.map(|c| format!("moves_left={c}")));
                if c.precision != d.precision {
                    keys.push(format!("precision={}", c.precision.name()));
                }
                if c.device != d.device {
                    keys.push(format!("device={}", c.device));
                }
                "mcts"
            }
        };
        if keys.is_empty() {
            f.write_str(name)
        } else {
            write!(f, "{name}:{}", keys.join(","))
        }
    }
}
