//! The evaluator: each new model against the configured opponents, and, with the SPRT gate,
//! against the network playing self-play now. Every game goes through the arena's one batched
//! driver ([`camelot_arena::play_games`], [`camelot_arena::run_sprt`]) with the run's networks
//! preloaded under the specs that name them, so a generation's evaluation is exactly what
//! `camelot arena` plays, inside the run directory, with the specs and seed in its rows.

use std::sync::atomic::Ordering;

use camelot_arena::{
    gauntlet, pair_schedule, play_games, run_sprt, ArenaConfig, ModelStore, PlayerSpec, ScheduledGame,
};
use camelot_solver::OptimalTally;
use camelot_tournament::{ResultRow, Sprt, SprtConfig, SprtStatus, Tally, RESULTS_HEADER};

use crate::error::SelfplayError;
use crate::layout;
use crate::metrics::{csv_bytes, GenerationRow};
use crate::pipeline::{Event, Observer, Silent};
use crate::roles::{nap, RoleOptions};
use crate::run::{GateDecision, Run};
use crate::solved::SolvedPositions;
use crate::trainer::TrainingInputs;

/// The seed stream of model `g`'s evaluation games (its index is the generation).
const EVALUATION_STREAM: u64 = 300;
/// The seed stream of the gate's games on model `g`.
const GATE_STREAM: u64 = 400;
/// The seed stream of model `g`'s players on the solved positions.
const SOLVED_STREAM: u64 = 500;

/// How the evaluation games of generation `g` are played: the run's opening plies and ply cap,
/// a seed of their own, `selfplay.workers` threads with `selfplay.parallel_games` games each in
/// flight. `camelot arena --seed S --opening-plies P --max-plies M` plays the same games.
pub fn arena_config(run: &Run, seed: u64) -> ArenaConfig {
    let e = &run.config.evaluation;
    ArenaConfig {
        seed,
        opening_plies: e.opening_plies,
        max_plies: run.config.evaluation_max_plies(),
        threads: run.config.selfplay.workers as usize,
        games_per_thread: run.config.selfplay.parallel_games as usize,
    }
}

/// The seed of model `g`'s evaluation games (recorded in each of their rows).
pub fn evaluation_seed(run: &Run, g: u32) -> u64 {
    run.seed(EVALUATION_STREAM, g as u64)
}

fn spec(run: &Run, text: &str) -> Result<PlayerSpec, SelfplayError> {
    PlayerSpec::parse(text).map_err(|e| SelfplayError::Config {
        file: run.store.describe(layout::CONFIG).into(),
        message: format!("`{text}`: {e}"),
    })
}

/// A model store holding the run's models `generations` under the paths their specs name.
fn models(run: &Run, generations: &[u32]) -> Result<ModelStore, SelfplayError> {
    let store = ModelStore::new();
    for &g in generations {
        let (network, card) = run.load_model(g)?;
        store.preload(&layout::model_stem(g), network, &card);
    }
    Ok(store)
}

/// The opponents of model `g`'s evaluation, as (label, spec), without repeats: at generation 1
/// `previous` and `initial` are both model 0, which plays once (under the first label).
fn opponents(run: &Run, g: u32) -> Result<Vec<(String, PlayerSpec)>, SelfplayError> {
    let mut out: Vec<(String, PlayerSpec)> = Vec::new();
    for label in &run.config.evaluation.opponents {
        let text = match label.as_str() {
            "previous" => run.player_spec(g - 1),
            "initial" => run.player_spec(0),
            other => other.to_string(),
        };
        let parsed = spec(run, &text)?;
        if !out.iter().any(|(_, s)| *s == parsed) {
            out.push((label.clone(), parsed));
        }
    }
    Ok(out)
}

/// Games per opponent of model `g`'s evaluation: `evaluation.final_games` for the run's last
/// generation (against `evaluation.final_opponents` when set), `evaluation.games` otherwise.
fn evaluation_games(run: &Run, g: u32, label: &str) -> u32 {
    let e = &run.config.evaluation;
    let is_final_opponent = e.final_opponents.as_ref().is_none_or(|finals| finals.iter().any(|f| f == label));
    if g == run.config.generations && is_final_opponent {
        e.final_games.unwrap_or(e.games)
    } else {
        e.games
    }
}

/// Model `g`'s games: those of the opponents whose count is not `evaluation.games` (the last
/// generation's final opponents) interleaved, then the others. Each group's openings are
/// numbered from 0, so the first `games` of a final opponent are the games every generation
/// plays.
fn ladder_schedule(run: &Run, g: u32, hero: &PlayerSpec, opponents: &[(String, PlayerSpec)]) -> Vec<ScheduledGame> {
    let e = &run.config.evaluation;
    let (finals, others): (Vec<_>, Vec<_>) =
        opponents.iter().partition(|(label, _)| evaluation_games(run, g, label) != e.games);
    let specs = |group: Vec<&(String, PlayerSpec)>| group.into_iter().map(|(_, s)| s.clone()).collect::<Vec<_>>();
    let mut schedule = gauntlet(hero, &specs(finals), e.final_games.unwrap_or(e.games));
    schedule.extend(gauntlet(hero, &specs(others), e.games));
    schedule
}

/// How many games model `g` played against its opponents, for `generations.csv`.
fn evaluation_games_text(run: &Run, g: u32) -> String {
    let e = &run.config.evaluation;
    match (e.final_games.filter(|_| g == run.config.generations), &e.final_opponents) {
        (Some(n), Some(finals)) if n != e.games && e.opponents.iter().any(|o| !finals.contains(o)) => {
            format!("{n} games against {}, {} against the others", finals.join(" "), e.games)
        }
        (Some(n), _) => format!("{n} games per opponent"),
        (None, _) => format!("{} games per opponent", e.games),
    }
}

/// The score of `hero` against `opponent` in `rows`.
pub fn tally(rows: &[ResultRow], hero: &str, opponent: &str) -> Tally {
    let mut tally = Tally::default();
    for row in rows {
        if row.white == hero && row.black == opponent {
            tally.add(row.result.white_score());
        } else if row.black == hero && row.white == opponent {
            tally.add(1.0 - row.result.white_score());
        }
    }
    tally
}

/// Evaluates model `g` (`g >= 1`) and puts its files: the gate's decision first (with the
/// gate), then the generation summary, then `arena/evaluation-NNNNNN.csv`, whose existence
/// means the generation is complete. Redone after a kill, it plays the same games and writes
/// the same bytes.
pub fn evaluate(run: &Run, g: u32, observer: &dyn Observer) -> Result<(), SelfplayError> {
    let e = &run.config.evaluation;
    let hero_text = run.player_spec(g);
    let hero = spec(run, &hero_text)?;
    let opponents = opponents(run, g)?;
    let gate_against = match e.gate {
        crate::config::Gate::Sprt => Some(run.playing_generation(g - 1)?.unwrap_or(0)),
        crate::config::Gate::None => None,
    };
    let mut generations = vec![g, g - 1, 0];
    generations.extend(gate_against);
    generations.sort_unstable();
    generations.dedup();
    let models = models(run, &generations)?;
    let schedule = ladder_schedule(run, g, &hero, &opponents);
    observer.event(Event::Phase { generation: g, name: "evaluation", total: schedule.len() as u64 });
    let config = arena_config(run, evaluation_seed(run, g));
    let progress = |_: &ResultRow| {
        observer.event(Event::Progress { done: 1, message: String::new() });
        Ok(())
    };
    let mut rows =
        if schedule.is_empty() { Vec::new() } else { play_games(&run.rules, &schedule, &config, &models, &progress)? };
    let mut scores: Vec<String> = opponents
        .iter()
        .map(|(label, s)| format!("{label}={:.3}", tally(&rows, &hero_text, &s.to_string()).score()))
        .collect();
    if let Some(against) = gate_against {
        let decision = gate(run, g, against, &hero, &models, &mut rows, observer)?;
        scores.push(format!(
            "gate: {} vs {against:06} after {} pairs ({:.1}%, LLR {:+.2})",
            if decision.accepted { "promoted" } else { "rejected" },
            decision.pairs,
            100.0 * decision.score,
            decision.llr
        ));
        let key = layout::gate_key(g);
        let json = serde_json::to_vec_pretty(&decision).map_err(|err| run.error(&key, err.to_string()))?;
        run.store.put_once(&key, json)?;
    }
    let solved = solved_figures(run, g, &hero, &models, observer)?;
    let mut row = generation_row(run, g, scores.join(" "))?;
    if let Some(tally) = &solved {
        row.value_kept = Some(tally.kept_share());
        row.value_head_accuracy = tally.value_head_share();
        row.plies_head_error = tally.plies_head_error();
        row.result_kept = Some(tally.result_kept_share());
        scores.push(format!(
            "value kept {:.1}% of {} solved positions (result kept {:.1}%)",
            100.0 * tally.kept_share(),
            tally.positions.iter().sum::<u64>(),
            100.0 * tally.result_kept_share()
        ));
    }
    let key = layout::generation_metrics_key(g);
    run.store.put_once(&key, csv_bytes(&[row]).map_err(|err| run.error(&key, err))?)?;
    run.store.put_once(&layout::evaluation_key(g), results_bytes(&rows))?;
    let summary = format!("generation {g} evaluated: {}", scores.join(", "));
    tracing::info!("{summary}");
    observer.event(Event::PhaseDone(summary));
    Ok(())
}

/// `rows` as a results file (docs/FORMATS.md, results.csv).
pub fn results_bytes(rows: &[ResultRow]) -> Vec<u8> {
    let mut text = format!("{RESULTS_HEADER}\n");
    rows.iter().for_each(|row| text.push_str(&row.to_line()));
    text.into_bytes()
}

/// The SPRT gate: game pairs of model `g` against model `against` (the one playing self-play
/// now) until the test accepts H0 or H1 or runs out of pairs; the counted pairs' rows join
/// `rows`.
fn gate(
    run: &Run,
    g: u32,
    against: u32,
    hero: &PlayerSpec,
    models: &ModelStore,
    rows: &mut Vec<ResultRow>,
    observer: &dyn Observer,
) -> Result<GateDecision, SelfplayError> {
    let s = &run.config.evaluation.sprt;
    let sprt_config = SprtConfig { elo0: s.elo0, elo1: s.elo1, alpha: s.alpha, beta: s.beta };
    let other = spec(run, &run.player_spec(against))?;
    observer.event(Event::Phase { generation: g, name: "gate", total: s.max_pairs as u64 });
    let config = arena_config(run, run.seed(GATE_STREAM, g as u64));
    let mut on_pair = |sprt: &Sprt, _: &[ResultRow]| {
        observer.event(Event::Progress { done: 1, message: sprt.summary_line() });
        Ok(())
    };
    let report = run_sprt(&run.rules, hero, &other, &sprt_config, s.max_pairs, &config, models, &mut on_pair)?;
    rows.extend(report.rows);
    let verdict = match report.status {
        SprtStatus::AcceptH1 => "H1",
        SprtStatus::AcceptH0 => "H0",
        SprtStatus::Continue => "limit",
    };
    tracing::info!("generation {g} gate against {against}: {verdict}, {}", report.sprt.summary_line());
    Ok(GateDecision {
        generation: g,
        against,
        accepted: report.status == SprtStatus::AcceptH1,
        verdict: verdict.to_string(),
        pairs: report.sprt.pairs(),
        score: report.sprt.score(),
        llr: report.sprt.llr(),
    })
}

/// Model `g`'s generation summary, from the record of what trained it.
fn generation_row(run: &Run, g: u32, scores: String) -> Result<GenerationRow, SelfplayError> {
    let key = layout::inputs_key(g);
    let bytes = run.store.get(&key)?.ok_or_else(|| run.error(&key, "not found (model published without it?)"))?;
    let inputs: TrainingInputs = serde_json::from_slice(&bytes).map_err(|e| run.error(&key, e.to_string()))?;
    let f = &inputs.selfplay;
    let e = &run.config.evaluation;
    Ok(GenerationRow {
        generation: g,
        selfplay_games: f.games,
        positions: f.positions,
        plies_per_game: f.plies as f64 / f.games.max(1) as f64,
        white_wins: f.white,
        draws: f.draws,
        black_wins: f.black,
        resigned: f.resigned,
        ply_capped: f.capped,
        castle: f.castle,
        all_captured: f.all_captured,
        no_legal_move: f.no_legal_move,
        material_draw: f.material_draw,
        repetition: f.repetition,
        no_progress: f.no_progress,
        playthrough_would_resign: f.playthrough_would_resign,
        false_resignations: f.false_resignations,
        unmirrorable: f.unmirrorable,
        target_entropy: inputs.targets.target_entropy,
        prior_entropy: inputs.targets.prior_entropy,
        kl_target_prior: inputs.targets.kl_target_prior,
        value_brier: inputs.targets.value_brier,
        value_calibration_error: inputs.targets.value_calibration_error,
        window_positions: inputs.window_positions,
        train_steps: inputs.steps,
        final_loss: inputs.last_step.map_or(f32::NAN, |s| s.loss),
        value_accuracy: inputs.last_step.map_or(f32::NAN, |s| s.value_accuracy),
        evaluation: format!("{} at {} simulations", evaluation_games_text(run, g), e.simulations),
        evaluation_scores: scores,
        value_kept: None,
        value_head_accuracy: None,
        plies_head_error: None,
        result_kept: None,
    })
}

/// Model `g`'s moves in the run's solved positions (`evaluation.solved_positions`), if any,
/// at the evaluation's search, on the self-play workers' threads.
fn solved_figures(
    run: &Run,
    g: u32,
    hero: &PlayerSpec,
    models: &ModelStore,
    observer: &dyn Observer,
) -> Result<Option<OptimalTally>, SelfplayError> {
    let e = &run.config.evaluation;
    let Some(file) = &e.solved_positions else { return Ok(None) };
    let positions = SolvedPositions::read(std::path::Path::new(file), e.solved_sample as usize)?;
    observer.event(Event::Phase { generation: g, name: "solved positions", total: positions.records.len() as u64 });
    let progress = || observer.event(Event::Progress { done: 1, message: String::new() });
    let seed = run.seed(SOLVED_STREAM, g as u64);
    let threads = run.config.selfplay.workers as usize;
    positions.tally(&run.rules, hero, models, seed, threads, &progress).map(|(tally, _)| Some(tally))
}

/// What an evaluator process did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvaluatorSummary {
    /// Models it evaluated.
    pub evaluated: Vec<u32>,
}

/// An evaluator process: evaluates each published model that has no evaluation yet, in
/// order (the gate's verdict on a model needs the one before); returns once the run's last
/// model is evaluated or a stop is requested.
pub fn evaluator(run: &Run, options: &RoleOptions) -> Result<EvaluatorSummary, SelfplayError> {
    let mut summary = EvaluatorSummary::default();
    loop {
        let newest = run.newest_model()?.unwrap_or(0);
        for g in 1..=newest {
            if options.stop.load(Ordering::Relaxed) {
                return Ok(summary);
            }
            if run.store.exists(&layout::evaluation_key(g))? {
                continue;
            }
            evaluate(run, g, &Silent)?;
            summary.evaluated.push(g);
        }
        if newest >= run.config.generations && run.store.exists(&layout::evaluation_key(run.config.generations))? {
            return Ok(summary);
        }
        if !nap(options) {
            return Ok(summary);
        }
    }
}

/// What [`check_network`] measured against one opponent.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The opponent as named in the results (`000000`, `random`, ...).
    pub opponent: String,
    /// The games, as results rows.
    pub rows: Vec<ResultRow>,
    /// The checked network's wins, draws and losses.
    pub tally: Tally,
}

/// Plays model `generation` of the run against `opponent` over `games` games (paired openings,
/// colours swapped) with the run's own evaluation player, ply cap and openings: the figures a
/// run's config promises. `opponent` is `initial` (model 0), `previous`, a generation number,
/// or a baseline spec (`random`, `greedy`, ...).
pub fn check_network(
    run: &Run,
    generation: u32,
    opponent: &str,
    games: u32,
    seed: u64,
) -> Result<CheckReport, SelfplayError> {
    let other_generation = match opponent {
        "initial" => Some(0),
        "previous" => Some(generation.saturating_sub(1)),
        text => text.parse::<u32>().ok(),
    };
    let (other, label, generations) = match other_generation {
        Some(k) => (spec(run, &run.player_spec(k))?, format!("{k:06}"), vec![generation, k]),
        None => (spec(run, opponent)?, opponent.to_string(), vec![generation]),
    };
    let hero_text = run.player_spec(generation);
    let hero = spec(run, &hero_text)?;
    let models = models(run, &generations)?;
    let config = arena_config(run, seed);
    let rows =
        play_games(&run.rules, &pair_schedule(&hero, &other, games.div_ceil(2), 0), &config, &models, &|_| Ok(()))?;
    let tally = tally(&rows, &hero_text, &other.to_string());
    Ok(CheckReport { opponent: label, rows, tally })
}
