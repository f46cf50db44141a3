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
use camelot_net::checkpoint::{load_training_state, save_training_state, write_atomic};
use camelot_net::{
    grid_of, load_checkpoint, save_checkpoint, CheckpointInfo, CheckpointPaths, Device, Network, TrainStats, Trainer,
};
use camelot_rules::Ruleset;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::error::SelfplayError;
use crate::play::{derive_seed, play_duel, play_selfplay_group, DuelPlayer};
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
    /// The log.
    pub fn log(&self) -> PathBuf {
        self.root.join("log.txt")
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
    let mut writer = csv::Writer::from_writer(Vec::new());
    let to_err = |e: csv::Error| corrupt(path, e.to_string());
    writer.write_record(header).map_err(to_err)?;
    for row in rows {
        writer.write_record(row).map_err(to_err)?;
    }
    let bytes = writer.into_inner().map_err(|e| corrupt(path, e.to_string()))?;
    write_atomic(path, &bytes, true)?;
    Ok(())
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
        if !CheckpointPaths::of(&dir.model(next)).card.exists() {
            let figures = selfplay(config, dir, &rules, &network, &card.weights_sha256, g, observer)?;
            last_train = Some(train(config, dir, &rules, &network, codec, g, &figures, observer)?);
        }
        if !dir.evaluation(next).exists() {
            let (new_network, _) = load_checkpoint(&dir.model(next), device)?;
            evaluate(config, dir, &rules, &new_network, &network, next, observer)?;
            let parts: Vec<PathBuf> = (1..=next).map(|k| dir.evaluation(k)).filter(|p| p.exists()).collect();
            merge_csv(&dir.results(), &parts)?;
            let parts: Vec<PathBuf> = (1..=next).map(|k| dir.train_metrics(k)).filter(|p| p.exists()).collect();
            merge_csv(&dir.metrics(), &parts)?;
            let parts: Vec<PathBuf> = (1..=next).map(|k| dir.generation_metrics(k)).filter(|p| p.exists()).collect();
            merge_csv(&dir.generations(), &parts)?;
            let (_, card) = load_checkpoint(&dir.model(next), device)?;
            let mut models = state.models.clone();
            models.truncate(next as usize);
            while models.len() < next as usize {
                models.push(String::new());
            }
            models.push(card.weights_sha256.clone());
            state = RunState { generation: next, train_step: card.step, models };
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

fn selfplay(
    config: &RunConfig,
    dir: &RunDir,
    rules: &Arc<Ruleset>,
    network: &Network,
    hash: &str,
    g: u32,
    observer: &dyn Observer,
) -> Result<SelfplayFigures, SelfplayError> {
    let s = &config.selfplay;
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
                let result = play_selfplay_group(rules, network, hash, config, seed, count)
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
    let batch = config.replay.batch_size as usize;
    let steps = ((new_positions as f64 * config.replay.sample_reuse as f64) / batch as f64).ceil().max(1.0) as u64;
    let mut trainer = Trainer::new(network, codec, config.training.clone())?;
    if g > 0 {
        load_training_state(&dir.optimizer(g), &mut trainer)?;
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
    let header = [
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
    write_csv(&dir.train_metrics(next), &header, &rows)?;
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

/// Plays network `next` against each configured opponent and records the games.
fn evaluate(
    config: &RunConfig,
    dir: &RunDir,
    rules: &Arc<Ruleset>,
    new: &Network,
    previous: &Network,
    next: u32,
    observer: &dyn Observer,
) -> Result<(), SelfplayError> {
    let e = &config.evaluation;
    observer.event(Event::Phase {
        generation: next,
        name: "evaluation",
        total: (e.games as u64) * e.opponents.len() as u64,
    });
    let search = config.evaluation_search();
    let me = DuelPlayer::Network(Box::new(new.clone()));
    let mut rows = Vec::new();
    let mut scores = Vec::new();
    for (o, opponent) in e.opponents.iter().enumerate() {
        let (other, name) = if opponent == "previous" {
            (DuelPlayer::Network(Box::new(previous.clone())), format!("{:06}", next - 1))
        } else {
            let spec = PlayerSpec::parse(opponent).map_err(|err| SelfplayError::Config {
                file: dir.config(),
                message: format!("evaluation.opponents: `{opponent}`: {err}"),
            })?;
            (DuelPlayer::Baseline(spec), opponent.clone())
        };
        if e.games == 0 {
            continue;
        }
        let seed = derive_seed(config.seed, 300 + next as u64, o as u64);
        let games = play_duel(rules, &me, &other, &search, e.games, e.opening_plies, config.selfplay.max_plies, seed)?;
        let total: f64 = games.iter().map(|g| g.score_a).sum();
        let score = total / games.len() as f64;
        observer
            .event(Event::Progress { done: games.len() as u64, message: format!("vs {name}: {:.1}%", 100.0 * score) });
        scores.push(format!("{name}={score:.3}"));
        for g in games {
            rows.push(vec![
                next.to_string(),
                format!("{next:06}"),
                name.clone(),
                g.index.to_string(),
                g.index.is_multiple_of(2).to_string(),
                g.score_a.to_string(),
                g.plies.to_string(),
                g.moves.join(" "),
            ]);
        }
    }
    let header = ["generation", "player", "opponent", "game", "player_white", "score", "plies", "moves"];
    // The generation row first, so that a finished evaluation file means a complete generation.
    let selfplay_part = dir.generation_metrics(next).with_extension("selfplay.csv");
    let mut generation_row: Vec<String> = match std::fs::read_to_string(&selfplay_part) {
        Ok(text) => text.lines().nth(1).map(|l| l.split(',').map(str::to_string).collect()).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    generation_row.resize(15, String::new());
    generation_row[0] = next.to_string();
    generation_row.push(format!("{} games per opponent at {} simulations", e.games, e.simulations));
    generation_row.push(scores.join(" "));
    write_csv(&dir.generation_metrics(next), &GENERATION_HEADER, &[generation_row])?;
    write_csv(&dir.evaluation(next), &header, &rows)?;
    let summary = format!("generation {next} evaluated: {}", scores.join(", "));
    tracing::info!("{summary}");
    observer.event(Event::PhaseDone(summary));
    Ok(())
}
