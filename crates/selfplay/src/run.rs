//! The generation loop and the run directory (DESIGN.md, "Run directory"): self-play with the
//! newest network, training on a window of recent games, a checkpoint, an evaluation, and
//! again. Every file is written once under its final name through a temporary file (or
//! rebuilt whole and renamed), and every phase can be redone from its inputs with the same
//! result, so a run killed at any moment and started again finishes as if never stopped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camelot_arena::PlayerSpec;
use camelot_game::CamelotState;
use camelot_net::checkpoint::{read_card, restore_training_state, save_training_state, write_atomic};
use camelot_net::{
    grid_of, load_checkpoint, save_checkpoint, CheckpointInfo, CheckpointPaths, Device, Network, TrainStats, Trainer,
};
use camelot_rules::Ruleset;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::config::{Gate, RunConfig};
use crate::error::SelfplayError;
use crate::play::{
    derive_seed, play_duel_parallel, play_selfplay_group, with_network_threads, DuelConfig, DuelGame, DuelPlayer,
    PastOpponent,
};
use crate::record::{encode_shard, read_shard, GameEnd, GameRecord};
use crate::replay::{game_samples, PackedSample};

/// The files of a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run at `root`.
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }
    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The frozen config.
    pub fn config(&self) -> PathBuf {
        self.root.join("run.toml")
    }
    /// Progress summary, replaced atomically.
    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }
    /// Checkpoint of generation `g` (without extension).
    pub fn model(&self, g: u32) -> PathBuf {
        self.root.join("models").join(format!("{g:06}"))
    }
    /// Optimizer state after training generation `g`'s network.
    pub fn optimizer(&self, g: u32) -> PathBuf {
        self.root.join("train").join(format!("{g:06}.optim"))
    }
    /// Shards of the games played by network `g`.
    pub fn shards(&self, g: u32) -> PathBuf {
        self.root.join("selfplay").join(format!("{g:06}"))
    }
    /// Shard `group` of generation `g`.
    pub fn shard(&self, g: u32, group: u32) -> PathBuf {
        self.shards(g).join(format!("{group:05}.shard"))
    }
    /// Per-step training metrics of the training that produced network `g`.
    pub fn train_metrics(&self, g: u32) -> PathBuf {
        self.root.join("metrics").join(format!("train-{g:06}.csv"))
    }
    /// The generation summary of network `g` (self-play that made its data, evaluation).
    pub fn generation_metrics(&self, g: u32) -> PathBuf {
        self.root.join("metrics").join(format!("generation-{g:06}.csv"))
    }
    /// Evaluation games of network `g`.
    pub fn evaluation(&self, g: u32) -> PathBuf {
        self.root.join("arena").join(format!("evaluation-{g:06}.csv"))
    }
    /// All training metrics, one row per step.
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.csv")
    }
    /// All generation summaries, one row per generation.
    pub fn generations(&self) -> PathBuf {
        self.root.join("generations.csv")
    }
    /// Every evaluation game.
    pub fn results(&self) -> PathBuf {
        self.root.join("arena").join("results.csv")
    }
    /// The SPRT gate's decision on network `g` (`gate = "sprt"` only).
    pub fn gate(&self, g: u32) -> PathBuf {
        self.root.join("arena").join(format!("gate-{g:06}.json"))
    }
    /// The player spec that names network `g` in the results: `camelot arena` takes it as is
    /// from inside the run directory (the model path is relative to it, so that a run can be
    /// moved or compared with another).
    pub fn player_spec(&self, g: u32, config: &RunConfig) -> String {
        player_spec(g, config)
    }
    /// The log.
    pub fn log(&self) -> PathBuf {
        self.root.join("log.txt")
    }
}

/// The player spec that names network `g` of a run in evaluation results (see
/// [`RunDir::player_spec`]); the same for a local and a distributed run.
pub fn player_spec(g: u32, config: &RunConfig) -> String {
    {
        let mut spec = format!("mcts:model=models/{g:06},sims={}", config.evaluation.simulations);
        if config.selfplay.gumbel {
            spec.push_str(",gumbel");
        }
        if config.selfplay.material_utility > 0.0 {
            spec.push_str(&format!(",material={}", config.selfplay.material_utility));
        }
        if config.selfplay.draw_penalty > 0.0 {
            spec.push_str(&format!(",draw={}", config.selfplay.draw_penalty));
        }
        spec
    }
}

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

/// Reads network `g`'s gate decision, if the gate ran on it.
pub fn read_gate(dir: &RunDir, g: u32) -> Result<Option<GateDecision>, SelfplayError> {
    let path = dir.gate(g);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| corrupt(&path, e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SelfplayError::io(&path, e)),
    }
}

/// The network that plays generation `g`'s self-play: the newest network up to `g` that the
/// gate did not reject (every network, without a gate).
pub fn playing_generation(dir: &RunDir, g: u32) -> Result<u32, SelfplayError> {
    let mut k = g;
    while k > 0 {
        match read_gate(dir, k)? {
            Some(decision) if !decision.accepted => k -= 1,
            _ => return Ok(k),
        }
    }
    Ok(0)
}

/// What the loop reports as it goes (the command line draws progress bars from it).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A phase starts: `total` units of work (games, steps).
    Phase {
        /// Generation of the network being made or played with.
        generation: u32,
        /// `selfplay`, `training` or `evaluation`.
        name: &'static str,
        /// Units of work.
        total: u64,
    },
    /// `done` more units finished; `message` tells the latest figures.
    Progress {
        /// Units finished.
        done: u64,
        /// A short status line.
        message: String,
    },
    /// A phase ended with this summary.
    PhaseDone(String),
}

/// Receives [`Event`]s; must be shareable between worker threads.
pub trait Observer: Sync {
    /// Called for each event.
    fn event(&self, event: Event);
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _event: Event) {}
}

/// Options of [`run`] that are not part of the config.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Device of the network.
    pub device: Device,
    /// Continue even though the config differs from the run's `run.toml`.
    pub allow_config_change: bool,
    /// Stop after this many generations of this invocation (for tests), if set.
    pub stop_after: Option<u32>,
}

fn corrupt(path: &Path, reason: impl Into<String>) -> SelfplayError {
    SelfplayError::Corrupt { path: path.to_path_buf(), reason: reason.into() }
}

fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), SelfplayError> {
    let bytes = csv_bytes(header, rows).map_err(|e| corrupt(path, e))?;
    write_atomic(path, &bytes, true)?;
    Ok(())
}

/// A CSV file's bytes: `header`, then `rows`.
pub(crate) fn csv_bytes(header: &[&str], rows: &[Vec<String>]) -> Result<Vec<u8>, String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header).map_err(|e| e.to_string())?;
    for row in rows {
        writer.write_record(row).map_err(|e| e.to_string())?;
    }
    writer.into_inner().map_err(|e| e.to_string())
}

/// Concatenates the CSV parts `parts` (same header) into `path`, atomically.
fn merge_csv(path: &Path, parts: &[PathBuf]) -> Result<(), SelfplayError> {
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let text = std::fs::read_to_string(part).map_err(|e| SelfplayError::io(part, e))?;
        let body = if i == 0 { text.as_str() } else { text.split_once('\n').map_or("", |(_, rest)| rest) };
        out.extend_from_slice(body.as_bytes());
    }
    write_atomic(path, &out, true)?;
    Ok(())
}

/// Opens (or creates) the run directory for `config`: a new run freezes the config into
/// `run.toml`; an existing one must have the same config unless `allow_config_change`, and the
/// change is then logged into `config-changes.log`.
pub fn open_run(dir: &RunDir, config: &RunConfig, allow_config_change: bool) -> Result<(), SelfplayError> {
    std::fs::create_dir_all(dir.root()).map_err(|e| SelfplayError::io(dir.root(), e))?;
    let frozen = dir.config();
    if frozen.exists() {
        let old = RunConfig::load(&frozen)?;
        let diff = old.differences(config);
        if !diff.is_empty() {
            if !allow_config_change {
                return Err(SelfplayError::Run {
                    message: format!(
                        "the config differs from its run.toml in:\n  {}\n(start a new run, or pass --allow-config-change)",
                        diff.join("\n  ")
                    ),
                    dir: dir.root().to_path_buf(),
                });
            }
            let log = dir.root().join("config-changes.log");
            let mut text = std::fs::read_to_string(&log).unwrap_or_default();
            text.push_str(&format!(
                "changed at generation {}:\n  {}\n",
                read_state(dir)?.generation,
                diff.join("\n  ")
            ));
            write_atomic(&log, text.as_bytes(), true)?;
            write_atomic(&frozen, config.to_toml().as_bytes(), true)?;
        }
    } else {
        write_atomic(&frozen, config.to_toml().as_bytes(), false)?;
    }
    Ok(())
}

/// Reads `state.json` (a default state if absent).
pub fn read_state(dir: &RunDir) -> Result<RunState, SelfplayError> {
    let path = dir.state();
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| corrupt(&path, e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunState::default()),
        Err(e) => Err(SelfplayError::io(&path, e)),
    }
}

/// Every game of generation `g`'s shards, in shard order.
pub fn read_generation_games(dir: &RunDir, g: u32) -> Result<Vec<GameRecord>, SelfplayError> {
    let shards = dir.shards(g);
    let mut names: Vec<PathBuf> = match std::fs::read_dir(&shards) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "shard"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(SelfplayError::io(&shards, e)),
    };
    names.sort();
    let mut games = Vec::new();
    for name in names {
        games.extend(read_shard(&name)?);
    }
    Ok(games)
}

/// Summary of a finished [`run`] invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Newest generation.
    pub generation: u32,
    /// Training steps taken in all.
    pub train_step: u64,
    /// The last training step's figures, if this invocation trained.
    pub last_train: Option<TrainStats>,
}

/// Self-play figures of one generation.
#[derive(Clone, Debug, Default)]
struct SelfplayFigures {
    games: u32,
    positions: u64,
    plies: u64,
    white: u32,
    draws: u32,
    black: u32,
    resigned: u32,
    capped: u32,
    playthrough_would_resign: u32,
    false_resignations: u32,
    /// Games against earlier networks, and the playing network's points in them.
    past_games: u32,
    past_points: f64,
    network_seconds: f64,
    total_seconds: f64,
}

impl SelfplayFigures {
    fn of(games: &[GameRecord]) -> SelfplayFigures {
        let mut f = SelfplayFigures { games: games.len() as u32, ..SelfplayFigures::default() };
        for g in games {
            f.positions += g.targets.len() as u64;
            f.plies += g.plies as u64;
            match g.winner {
                1 => f.white += 1,
                -1 => f.black += 1,
                _ => f.draws += 1,
            }
            if let Some(opponent) = &g.opponent {
                f.past_games += 1;
                f.past_points += match g.winner * opponent.side {
                    0 => 0.5,
                    x if x < 0 => 1.0,
                    _ => 0.0,
                };
            }
            match g.end {
                GameEnd::Resigned => f.resigned += 1,
                GameEnd::PlyCap => f.capped += 1,
                GameEnd::Rules => {}
            }
            if g.playthrough && g.would_resign != 0 {
                f.playthrough_would_resign += 1;
                // Resigning would have been wrong if the side that wanted to resign did not lose.
                if g.winner != -g.would_resign {
                    f.false_resignations += 1;
                }
            }
        }
        f
    }
}

/// Runs (or resumes) the training run in `dir` until network `config.generations` is
/// trained and evaluated.
pub fn run(
    config: &RunConfig,
    dir: &RunDir,
    options: &RunOptions,
    observer: &dyn Observer,
) -> Result<RunSummary, SelfplayError> {
    open_run(dir, config, options.allow_config_change)?;
    let rules = Arc::new(
        Ruleset::variant(&config.variant)
            .map_err(|e| SelfplayError::Config { file: dir.config(), message: format!("variant: {e}") })?,
    );
    let codec = CamelotState::new(rules.clone()).codec();
    let device = &options.device;

    if !CheckpointPaths::of(&dir.model(0)).card.exists() {
        let network = Network::new(&config.network, grid_of(&codec), device, derive_seed(config.seed, 0, 0))?;
        let info = CheckpointInfo { variant: config.variant.clone(), parent: None, step: 0, generation: Some(0) };
        save_checkpoint(&dir.model(0), &network, &info)?;
        tracing::info!("generation 0: untrained network {} saved", config.network.label());
    }
    let mut last_train = None;
    let mut done_here = 0;
    let mut state = read_state(dir)?;
    for g in 0..config.generations {
        let next = g + 1;
        let (network, card) = load_checkpoint(&dir.model(g), device)?;
        // Self-play uses the newest promoted network; training always continues from the
        // newest trained one (as AlphaGo Zero's gate does).
        let playing = playing_generation(dir, g)?;
        let (player, player_card) =
            if playing == g { (network.clone(), card.clone()) } else { load_checkpoint(&dir.model(playing), device)? };
        if !CheckpointPaths::of(&dir.model(next)).card.exists() {
            if playing != g {
                tracing::info!("generation {g} self-play with network {playing} (the gate rejected the newer ones)");
            }
            let past = past_opponents(config, dir, playing, device)?;
            let figures = selfplay(config, dir, &rules, &player, &player_card.weights_sha256, &past, g, observer)?;
            last_train = Some(train(config, dir, &rules, &network, codec, g, &figures, observer)?);
        }
        let evaluated_here = !dir.evaluation(next).exists();
        if evaluated_here {
            let (new_network, _) = load_checkpoint(&dir.model(next), device)?;
            let gate_against = (config.evaluation.gate == Gate::Sprt).then_some((playing, &player));
            evaluate(config, dir, &rules, &new_network, &network, next, gate_against, observer)?;
        }
        // The bookkeeping after an evaluation is redone until state.json records it, so a
        // kill between the evaluation file and state.json leaves nothing behind.
        if evaluated_here || state.generation < next {
            let parts: Vec<PathBuf> = (1..=next).map(|k| dir.evaluation(k)).filter(|p| p.exists()).collect();
            merge_csv(&dir.results(), &parts)?;
            let parts: Vec<PathBuf> = (1..=next).map(|k| dir.train_metrics(k)).filter(|p| p.exists()).collect();
            merge_csv(&dir.metrics(), &parts)?;
            let parts: Vec<PathBuf> = (1..=next).map(|k| dir.generation_metrics(k)).filter(|p| p.exists()).collect();
            merge_csv(&dir.generations(), &parts)?;
            // Plots are derived from the files above: a failure to draw is reported, not fatal.
            let (_, failures) = crate::plots::draw_run_plots(dir);
            for failure in failures {
                tracing::warn!("plot not drawn: {failure}");
            }
            let mut models = Vec::with_capacity(next as usize + 1);
            let mut train_step = 0;
            for k in 0..=next {
                let card = read_card(&dir.model(k))?;
                models.push(card.weights_sha256);
                train_step = card.step;
            }
            state = RunState { generation: next, train_step, models };
            let json = serde_json::to_vec_pretty(&state).map_err(|e| corrupt(&dir.state(), e.to_string()))?;
            write_atomic(&dir.state(), &json, true)?;
            done_here += 1;
            if options.stop_after.is_some_and(|n| done_here >= n) {
                break;
            }
        }
    }
    Ok(RunSummary { generation: state.generation, train_step: state.train_step, last_train })
}

/// The earlier networks that may play one side of a self-play game of network `playing`
/// (generations `0..playing`), with their weights' hashes; none when
/// `selfplay.past_opponents` is 0.
fn past_opponents(
    config: &RunConfig,
    dir: &RunDir,
    playing: u32,
    device: &Device,
) -> Result<Vec<(u32, Network, String)>, SelfplayError> {
    if config.selfplay.past_opponents <= 0.0 {
        return Ok(Vec::new());
    }
    (0..playing)
        .map(|k| {
            let (network, card) = load_checkpoint(&dir.model(k), device)?;
            Ok((k, network, card.weights_sha256))
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn selfplay(
    config: &RunConfig,
    dir: &RunDir,
    rules: &Arc<Ruleset>,
    network: &Network,
    hash: &str,
    past: &[(u32, Network, String)],
    g: u32,
    observer: &dyn Observer,
) -> Result<SelfplayFigures, SelfplayError> {
    let s = &config.selfplay;
    let opponents: Vec<PastOpponent<'_>> = past
        .iter()
        .map(|(generation, network, hash)| PastOpponent { generation: *generation, network, hash })
        .collect();
    let groups = s.games.div_ceil(s.parallel_games);
    observer.event(Event::Phase { generation: g, name: "selfplay", total: s.games as u64 });
    let next_group = AtomicU32::new(0);
    let failure: Mutex<Option<SelfplayError>> = Mutex::new(None);
    let timing: Mutex<(Duration, Duration)> = Mutex::new((Duration::ZERO, Duration::ZERO));
    std::fs::create_dir_all(dir.shards(g)).map_err(|e| SelfplayError::io(dir.shards(g), e))?;
    std::thread::scope(|scope| {
        for _ in 0..s.workers.min(groups) {
            scope.spawn(|| loop {
                let group = next_group.fetch_add(1, Ordering::Relaxed);
                if group >= groups || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                    return;
                }
                let count = s.parallel_games.min(s.games - group * s.parallel_games);
                let path = dir.shard(g, group);
                if path.exists() {
                    observer.event(Event::Progress {
                        done: count as u64,
                        message: format!("shard {group} already played"),
                    });
                    continue;
                }
                let seed = derive_seed(config.seed, 100 + g as u64, group as u64);
                let result = with_network_threads(config.network_threads(), || {
                    play_selfplay_group(rules, network, hash, config, seed, count, &opponents)
                })
                .and_then(|out| Ok((encode_shard(&out.games)?, out)))
                .and_then(|(bytes, out)| {
                    write_atomic(&path, &bytes, false)?;
                    Ok(out)
                });
                match result {
                    Ok(out) => {
                        if let Ok(mut t) = timing.lock() {
                            t.0 += out.network_time;
                            t.1 += out.total_time;
                        }
                        let positions: usize = out.games.iter().map(|g| g.targets.len()).sum();
                        let share = out.network_time.as_secs_f64() / out.total_time.as_secs_f64().max(1e-9);
                        observer.event(Event::Progress {
                            done: count as u64,
                            message: format!("{positions} positions, network {:.0}% of the time", 100.0 * share),
                        });
                    }
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let games = read_generation_games(dir, g)?;
    let mut figures = SelfplayFigures::of(&games);
    let (network_time, total_time) = timing.into_inner().unwrap_or_else(|e| e.into_inner());
    figures.network_seconds = network_time.as_secs_f64();
    figures.total_seconds = total_time.as_secs_f64();
    let summary = format!(
        "generation {g} self-play: {} games, {} positions, {:.1} plies per game, W/D/B {}/{}/{}, {} resigned, {} capped, \
         network {:.0}% of the time",
        figures.games,
        figures.positions,
        figures.plies as f64 / figures.games.max(1) as f64,
        figures.white,
        figures.draws,
        figures.black,
        figures.resigned,
        figures.capped,
        100.0 * figures.network_seconds / figures.total_seconds.max(1e-9)
    );
    let summary = if figures.past_games > 0 {
        format!(
            "{summary}; {} games against earlier networks, scored {:.1}%",
            figures.past_games,
            100.0 * figures.past_points / figures.past_games as f64
        )
    } else {
        summary
    };
    tracing::info!("{summary}");
    observer.event(Event::PhaseDone(summary));
    Ok(figures)
}

/// Trains network `g + 1` from network `g` on the replay window and saves it.
#[allow(clippy::too_many_arguments)]
fn train(
    config: &RunConfig,
    dir: &RunDir,
    rules: &Arc<Ruleset>,
    network: &Network,
    codec: camelot_game::ActionCodec,
    g: u32,
    figures: &SelfplayFigures,
    observer: &dyn Observer,
) -> Result<TrainStats, SelfplayError> {
    let next = g + 1;
    let first = (g + 1).saturating_sub(config.replay.window_generations);
    let mut window: Vec<PackedSample> = Vec::new();
    let mut new_positions = 0usize;
    for k in first..=g {
        for game in read_generation_games(dir, k)? {
            let samples = game_samples(rules, &game).map_err(|e| corrupt(&dir.shards(k), e))?;
            if k == g {
                new_positions += samples.len();
            }
            window.extend(samples);
        }
    }
    if window.is_empty() {
        return Err(SelfplayError::Run {
            message: format!(
                "generation {g}'s games hold no training positions (selfplay.full_search_fraction too small?)"
            ),
            dir: dir.root().to_path_buf(),
        });
    }
    let optimizer = if g > 0 {
        let path = dir.optimizer(g);
        Some((std::fs::read(&path).map_err(|e| SelfplayError::io(&path, e))?, path))
    } else {
        None
    };
    let optimizer = optimizer.as_ref().map(|(bytes, path)| (bytes.as_slice(), path.as_path()));
    let TrainedGeneration { trainer, rows, last, steps } =
        train_on_window(config, network, codec, optimizer, &window, new_positions, g, observer)?;
    write_csv(&dir.train_metrics(next), &TRAIN_HEADER, &rows)?;
    // Generation summary, completed by the evaluation.
    let self_row = vec![
        next.to_string(),
        figures.games.to_string(),
        figures.positions.to_string(),
        format!("{:.2}", figures.plies as f64 / figures.games.max(1) as f64),
        figures.white.to_string(),
        figures.draws.to_string(),
        figures.black.to_string(),
        figures.resigned.to_string(),
        figures.capped.to_string(),
        figures.playthrough_would_resign.to_string(),
        figures.false_resignations.to_string(),
        window.len().to_string(),
        steps.to_string(),
        format!("{:.6}", last.total),
        format!("{:.4}", last.value_accuracy),
    ];
    write_csv(&dir.generation_metrics(next).with_extension("selfplay.csv"), &GENERATION_HEADER[..15], &[self_row])?;
    save_training_state(&dir.optimizer(next), &trainer)?;
    let info = CheckpointInfo {
        variant: config.variant.clone(),
        parent: Some(format!("{g:06}")),
        step: trainer.step(),
        generation: Some(next as u64),
    };
    let path = dir.model(next);
    for stale in [CheckpointPaths::of(&path).weights] {
        // Weights without a card are a save cut short: the card is written last.
        if stale.exists() {
            std::fs::remove_file(&stale).map_err(|e| SelfplayError::io(&stale, e))?;
        }
    }
    save_checkpoint(&path, &trainer.network(), &info)?;
    let summary = format!(
        "generation {next} trained: {steps} steps on a window of {} positions, loss {:.3}",
        window.len(),
        last.total
    );
    tracing::info!("{summary}");
    observer.event(Event::PhaseDone(summary));
    Ok(last)
}

/// What training one generation produced.
pub(crate) struct TrainedGeneration {
    /// The trainer after its last step (network and optimizer state).
    pub trainer: Trainer,
    /// One `metrics/train-*.csv` row per step ([`TRAIN_HEADER`]).
    pub rows: Vec<Vec<String>>,
    /// The last step's figures.
    pub last: TrainStats,
    /// Steps taken.
    pub steps: u64,
}

/// Columns of the per-step training metrics.
pub(crate) const TRAIN_HEADER: [&str; 9] = [
    "generation",
    "step",
    "loss",
    "policy_loss",
    "value_loss",
    "material_loss",
    "plies_left_loss",
    "value_accuracy",
    "learning_rate",
];

/// The training step shared by `camelot train` and the distributed trainer: network `g + 1`
/// from network `g` (with its optimizer state, named in errors by the path given) on
/// `window`, taking as many batches as the sampling ratio asks for `new_positions` new
/// positions (`replay.sample_reuse`). Seeded by the run seed and `g` alone, so the same inputs
/// give the same weights.
#[allow(clippy::too_many_arguments)]
pub(crate) fn train_on_window(
    config: &RunConfig,
    network: &Network,
    codec: camelot_game::ActionCodec,
    optimizer: Option<(&[u8], &Path)>,
    window: &[PackedSample],
    new_positions: usize,
    g: u32,
    observer: &dyn Observer,
) -> Result<TrainedGeneration, SelfplayError> {
    let next = g + 1;
    let batch = config.replay.batch_size as usize;
    let steps = ((new_positions as f64 * config.replay.sample_reuse as f64) / batch as f64).ceil().max(1.0) as u64;
    let mut trainer = Trainer::new(network, codec, config.training.clone())?;
    if let Some((bytes, name)) = optimizer {
        restore_training_state(bytes, name, &mut trainer)?;
    }
    observer.event(Event::Phase { generation: next, name: "training", total: steps });
    let cells = codec.cells() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(config.seed, 200, g as u64));
    let mut rows = Vec::with_capacity(steps as usize);
    let mut last = TrainStats::default();
    for _ in 0..steps {
        let samples: Vec<_> = (0..batch).map(|_| window[rng.random_range(0..window.len())].unpack(cells)).collect();
        let refs: Vec<_> = samples.iter().collect();
        last = trainer.train_step(&refs, &mut rng)?;
        rows.push(vec![
            next.to_string(),
            trainer.step().to_string(),
            format!("{:.6}", last.total),
            format!("{:.6}", last.policy),
            format!("{:.6}", last.value),
            format!("{:.6}", last.material),
            format!("{:.6}", last.plies_left),
            format!("{:.4}", last.value_accuracy),
            format!("{:.6e}", last.learning_rate),
        ]);
        observer.event(Event::Progress {
            done: 1,
            message: format!("loss {:.3} (policy {:.3}, value {:.3})", last.total, last.policy, last.value),
        });
    }
    Ok(TrainedGeneration { trainer, rows, last, steps })
}

/// Columns of `generations.csv`.
const GENERATION_HEADER: [&str; 17] = [
    "generation",
    "selfplay_games",
    "positions",
    "plies_per_game",
    "white_wins",
    "draws",
    "black_wins",
    "resigned",
    "ply_capped",
    "playthrough_would_resign",
    "false_resignations",
    "window_positions",
    "train_steps",
    "final_loss",
    "value_accuracy",
    "evaluation",
    "evaluation_scores",
];

/// Plays network `next` against each configured opponent (and, with the SPRT gate, against
/// the network playing self-play now) and records the games in the arena's results format.
#[allow(clippy::too_many_arguments)]
fn evaluate(
    config: &RunConfig,
    dir: &RunDir,
    rules: &Arc<Ruleset>,
    new: &Network,
    previous: &Network,
    next: u32,
    gate_against: Option<(u32, &Network)>,
    observer: &dyn Observer,
) -> Result<(), SelfplayError> {
    let e = &config.evaluation;
    observer.event(Event::Phase {
        generation: next,
        name: "evaluation",
        total: (e.games as u64) * e.opponents.len() as u64,
    });
    let initial = || load_checkpoint(&dir.model(0), new.device()).map(|(network, _)| network).map_err(Into::into);
    let (mut rows, scores) = evaluation_games(config, rules, new, previous, &initial, next, observer)?;
    let me = DuelPlayer::Network(Box::new(new.clone()));
    let duel = |games: u32, seed: u64| duel_config(config, games, seed);
    let mut gate_line = String::new();
    if let Some((against, player)) = gate_against {
        let decision = run_gate(config, dir, rules, &me, player, next, against, &duel, &mut rows, observer)?;
        gate_line = format!(
            " gate: {} vs {:06} after {} pairs ({:.1}%, LLR {:+.2})",
            if decision.accepted { "promoted" } else { "rejected" },
            against,
            decision.pairs,
            100.0 * decision.score,
            decision.llr
        );
        let json = serde_json::to_vec_pretty(&decision).map_err(|err| corrupt(&dir.gate(next), err.to_string()))?;
        write_atomic(&dir.gate(next), &json, true)?;
    }
    // The generation row first, so that a finished evaluation file means a complete generation.
    let selfplay_part = dir.generation_metrics(next).with_extension("selfplay.csv");
    let mut generation_row: Vec<String> = match std::fs::read_to_string(&selfplay_part) {
        Ok(text) => text.lines().nth(1).map(|l| l.split(',').map(str::to_string).collect()).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    generation_row.resize(15, String::new());
    generation_row[0] = next.to_string();
    generation_row.push(format!("{} games per opponent at {} simulations", e.games, e.simulations));
    generation_row.push(format!("{}{gate_line}", scores.join(" ")));
    write_csv(&dir.generation_metrics(next), &GENERATION_HEADER, &[generation_row])?;
    let header: Vec<&str> = camelot_arena::RESULTS_HEADER.split(',').collect();
    let rows: Vec<Vec<String>> = rows.iter().map(result_fields).collect();
    write_csv(&dir.evaluation(next), &header, &rows)?;
    let summary = format!("generation {next} evaluated: {}{gate_line}", scores.join(", "));
    tracing::info!("{summary}");
    observer.event(Event::PhaseDone(summary));
    Ok(())
}

/// The evaluation games' settings (`games` games from `seed`).
fn duel_config(config: &RunConfig, games: u32, seed: u64) -> DuelConfig {
    DuelConfig {
        search: config.evaluation_search(),
        games,
        opening_plies: config.evaluation.opening_plies,
        max_plies: config.evaluation_max_plies(),
        seed,
        material_utility: config.selfplay.material_utility,
        first_game: 0,
    }
}

/// The evaluation shared by `camelot train` and the distributed evaluator: network `next`
/// against each configured opponent (`previous`, `initial`, baselines), seeded by the run seed
/// and `next` alone. Returns the games as arena results rows and one `label=score` per
/// opponent.
pub(crate) fn evaluation_games(
    config: &RunConfig,
    rules: &Arc<Ruleset>,
    new: &Network,
    previous: &Network,
    initial: &dyn Fn() -> Result<Network, SelfplayError>,
    next: u32,
    observer: &dyn Observer,
) -> Result<(Vec<camelot_arena::ResultRow>, Vec<String>), SelfplayError> {
    let e = &config.evaluation;
    let me = DuelPlayer::Network(Box::new(new.clone()));
    let my_name = player_spec(next, config);
    let (workers, threads) = (config.selfplay.workers as usize, config.network_threads());
    let mut rows = Vec::new();
    let mut scores = Vec::new();
    for (o, opponent) in e.opponents.iter().enumerate() {
        let (other, name, label) = if opponent == "previous" {
            (DuelPlayer::Network(Box::new(previous.clone())), player_spec(next - 1, config), opponent.clone())
        } else if opponent == "initial" {
            (DuelPlayer::Network(Box::new(initial()?)), player_spec(0, config), opponent.clone())
        } else {
            let spec = PlayerSpec::parse(opponent).map_err(|err| SelfplayError::Config {
                file: PathBuf::from("run.toml"),
                message: format!("evaluation.opponents: `{opponent}`: {err}"),
            })?;
            (DuelPlayer::Baseline(spec), opponent.clone(), opponent.clone())
        };
        if e.games == 0 {
            continue;
        }
        let settings = duel_config(config, e.games, derive_seed(config.seed, 300 + next as u64, o as u64));
        let games = play_duel_parallel(rules, &me, &other, &settings, workers, threads)?;
        let score = games.iter().map(|g| g.score_a).sum::<f64>() / games.len() as f64;
        observer
            .event(Event::Progress { done: games.len() as u64, message: format!("vs {label}: {:.1}%", 100.0 * score) });
        scores.push(format!("{label}={score:.3}"));
        rows.extend(games.iter().map(|g| result_row(rules, g, &my_name, &name, settings.seed)));
    }
    Ok((rows, scores))
}

/// An evaluation game as a row of the arena's results file (A is `a_name`, White in even games).
fn result_row(rules: &Ruleset, game: &DuelGame, a_name: &str, b_name: &str, seed: u64) -> camelot_arena::ResultRow {
    use camelot_arena::GameResult;
    let a_white = game.index.is_multiple_of(2);
    let white_score = if a_white { game.score_a } else { 1.0 - game.score_a };
    let result = if white_score > 0.75 {
        GameResult::WhiteWins
    } else if white_score < 0.25 {
        GameResult::BlackWins
    } else {
        GameResult::Draw
    };
    let (white, black) = if a_white { (a_name, b_name) } else { (b_name, a_name) };
    camelot_arena::ResultRow {
        variant: rules.name().to_string(),
        white: white.to_string(),
        black: black.to_string(),
        result,
        plies: game.plies,
        reason: game.reason.clone(),
        seed,
        opening: game.index / 2,
        moves: game.record.clone(),
    }
}

pub(crate) fn result_fields(row: &camelot_arena::ResultRow) -> Vec<String> {
    vec![
        row.variant.clone(),
        row.white.clone(),
        row.black.clone(),
        row.result.as_str().to_string(),
        row.plies.to_string(),
        row.reason.clone(),
        row.seed.to_string(),
        row.opening.to_string(),
        row.moves.clone(),
    ]
}

/// The SPRT gate: game pairs of network `next` against network `against` (the one playing
/// self-play now), counted in order, until the test accepts H0 or H1 or runs out of pairs.
/// Pairs are played in batches of 16 (32 games searched together) with fresh openings each.
#[allow(clippy::too_many_arguments)]
fn run_gate(
    config: &RunConfig,
    dir: &RunDir,
    rules: &Arc<Ruleset>,
    me: &DuelPlayer,
    against_network: &Network,
    next: u32,
    against: u32,
    duel: &dyn Fn(u32, u64) -> DuelConfig,
    rows: &mut Vec<camelot_arena::ResultRow>,
    observer: &dyn Observer,
) -> Result<GateDecision, SelfplayError> {
    use camelot_arena::{Sprt, SprtConfig, SprtStatus};
    const PAIRS_PER_BATCH: u32 = 16;
    let g = &config.evaluation.sprt;
    let mut sprt = Sprt::new(SprtConfig { elo0: g.elo0, elo1: g.elo1, alpha: g.alpha, beta: g.beta });
    let other = DuelPlayer::Network(Box::new(against_network.clone()));
    let (my_name, other_name) = (dir.player_spec(next, config), dir.player_spec(against, config));
    observer.event(Event::Phase { generation: next, name: "gate", total: g.max_pairs as u64 });
    let (workers, threads) = (config.selfplay.workers as usize, config.network_threads());
    let mut batch = 0u64;
    let status = 'test: loop {
        let left = g.max_pairs as u64 - sprt.pairs();
        if left == 0 {
            break SprtStatus::Continue;
        }
        let pairs = (PAIRS_PER_BATCH as u64).min(left) as u32;
        let settings = duel(2 * pairs, derive_seed(config.seed, 400 + next as u64, batch));
        batch += 1;
        let games = play_duel_parallel(rules, me, &other, &settings, workers, threads)?;
        for pair in games.chunks(2) {
            if let [first, second] = pair {
                sprt.add_pair(first.score_a, second.score_a);
                rows.extend(pair.iter().map(|game| result_row(rules, game, &my_name, &other_name, settings.seed)));
                observer.event(Event::Progress { done: 1, message: sprt.summary_line() });
                if sprt.status() != SprtStatus::Continue {
                    break 'test sprt.status();
                }
            }
        }
    };
    let verdict = match status {
        SprtStatus::AcceptH1 => "H1",
        SprtStatus::AcceptH0 => "H0",
        SprtStatus::Continue => "limit",
    };
    tracing::info!("generation {next} gate against {against}: {verdict}, {}", sprt.summary_line());
    Ok(GateDecision {
        generation: next,
        against,
        accepted: status == SprtStatus::AcceptH1,
        verdict: verdict.to_string(),
        pairs: sprt.pairs(),
        score: sprt.score(),
        llr: sprt.llr(),
    })
}

/// What [`check_network`] measured against one opponent.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The opponent as named in the results (`000000`, `random`, ...).
    pub opponent: String,
    /// The games, as results rows (the checked network is A).
    pub rows: Vec<camelot_arena::ResultRow>,
    /// The checked network's wins, draws and losses.
    pub tally: camelot_arena::Tally,
}

/// Plays network `generation` of the run in `dir` against `opponent` over `games` games (paired
/// openings, colours swapped) with the run's own evaluation search, ply cap and material
/// utility: the figures a run's config promises. `opponent` is `initial` (generation 0),
/// `previous`, a generation number, or a baseline spec (`random`, `greedy`, ...).
pub fn check_network(
    config: &RunConfig,
    dir: &RunDir,
    device: &Device,
    generation: u32,
    opponent: &str,
    games: u32,
    seed: u64,
) -> Result<CheckReport, SelfplayError> {
    let rules = Arc::new(
        Ruleset::variant(&config.variant)
            .map_err(|e| SelfplayError::Config { file: dir.config(), message: format!("variant: {e}") })?,
    );
    let (network, _) = load_checkpoint(&dir.model(generation), device)?;
    let other_generation = match opponent {
        "initial" => Some(0),
        "previous" => Some(generation.saturating_sub(1)),
        text => text.parse::<u32>().ok(),
    };
    let (other, label, name) = match other_generation {
        Some(g) => {
            let (net, _) = load_checkpoint(&dir.model(g), device)?;
            (DuelPlayer::Network(Box::new(net)), format!("{g:06}"), dir.player_spec(g, config))
        }
        None => {
            let spec = PlayerSpec::parse(opponent).map_err(|e| SelfplayError::Run {
                message: format!("opponent `{opponent}`: {e}"),
                dir: dir.root().into(),
            })?;
            (DuelPlayer::Baseline(spec), opponent.to_string(), opponent.to_string())
        }
    };
    let settings = duel_config(config, games, seed);
    let me = DuelPlayer::Network(Box::new(network));
    let played =
        play_duel_parallel(&rules, &me, &other, &settings, config.selfplay.workers as usize, config.network_threads())?;
    let mut tally = camelot_arena::Tally::default();
    played.iter().for_each(|g| tally.add(g.score_a));
    let my_name = dir.player_spec(generation, config);
    let rows = played.iter().map(|g| result_row(&rules, g, &my_name, &name, seed)).collect();
    Ok(CheckReport { opponent: label, rows, tally })
}
