//! `camelot train`: the self-play workers, the trainer and the evaluator in one process over
//! one run store, generation-synchronous. Generation `g` plays its numbered self-play groups,
//! trains model `g + 1` on them and evaluates it, then merges the per-generation files and
//! replaces `state.json`. Every object of a phase is put once under its final name and every
//! phase can be redone from its inputs with the same result, so a run killed at any moment and
//! started again finishes as if never stopped; the separate role processes can take over the
//! same run (and the other way round), since they read and write the same objects.

use camelot_net::Device;

use crate::error::SelfplayError;
use crate::layout;
use crate::run::{read_state, Run, RunState};
use crate::store::RunStore;
use crate::trainer::RunTrainer;
use crate::worker::{play_generation, Players};
use crate::{evaluator, RunConfig};

/// What the loop reports as it goes (the command line draws progress bars from it).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A phase starts: `total` units of work (games, steps).
    Phase {
        /// Generation of the network being made or played with.
        generation: u32,
        /// `selfplay`, `training`, `evaluation` or `gate`.
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

/// Summary of a finished [`run`] invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Newest generation.
    pub generation: u32,
    /// Training steps taken in all.
    pub train_step: u64,
}

/// Runs (or resumes) the training run in `store` until model `config.generations` is trained
/// and evaluated.
pub fn run(
    config: &RunConfig,
    store: RunStore,
    options: &RunOptions,
    observer: &dyn Observer,
) -> Result<RunSummary, SelfplayError> {
    let run = Run::create_or_resume(store, config, options.allow_config_change, options.device.clone())?;
    run.ensure_initial_model()?;
    run.verify_models()?;
    let mut trainer = RunTrainer::new(&run);
    let mut done_here = 0;
    let mut state = read_state(&run.store)?;
    for g in 0..run.config.generations {
        let next = g + 1;
        if !run.has_model(next)? {
            trainer.remove_leftovers(next)?;
            // The gate decided on `g` in the previous generation's evaluation.
            let playing = run.playing_generation(g)?.unwrap_or(g);
            play_generation(&run, g, &Players::load(&run, playing)?, observer)?;
            let history = trainer.history(g)?;
            let (fresh, games) = trainer.fresh_shards(g, &history)?;
            if games < run.config.selfplay.games as u64 {
                return Err(run.error(
                    &layout::shards_dir(g),
                    format!("{games} games after self-play, {} expected", run.config.selfplay.games),
                ));
            }
            let inputs = trainer.train_next(g, &history, fresh, observer)?;
            tracing::info!("generation {g} self-play: {}", inputs.selfplay.summary());
        }
        let evaluated_here = !run.store.exists(&layout::evaluation_key(next))?;
        if evaluated_here {
            evaluator::evaluate(&run, next, observer)?;
        }
        // The bookkeeping after an evaluation is redone until state.json records it, so a kill
        // between the evaluation file and state.json leaves nothing behind.
        if evaluated_here || state.generation < next {
            state = merge_generation_files(&run, next)?;
            done_here += 1;
            if options.stop_after.is_some_and(|n| done_here >= n) {
                break;
            }
        }
    }
    Ok(RunSummary { generation: state.generation, train_step: state.train_step })
}

/// Rebuilds the merged files from the per-generation ones of models `1..=newest`, redraws the
/// plots (local runs; a failure to draw is reported, not fatal) and replaces `state.json`.
pub fn merge_generation_files(run: &Run, newest: u32) -> Result<RunState, SelfplayError> {
    for (merged, part) in [
        (layout::RESULTS, layout::evaluation_key as fn(u32) -> String),
        (layout::METRICS, layout::train_metrics_key),
        (layout::GENERATIONS, layout::generation_metrics_key),
    ] {
        let mut parts = Vec::new();
        for k in 1..=newest {
            let key = part(k);
            if let Some(bytes) = run.store.get(&key)? {
                parts.push((run.store.describe(&key), bytes));
            }
        }
        let out = crate::metrics::merge_csv(&parts).map_err(|e| run.error(merged, e))?;
        run.store.put_replace(merged, out)?;
    }
    if let Some(root) = run.local_root() {
        let (_, failures) = crate::plots::draw_run_plots(&root, run.config.evaluation.rating_anchor.as_deref());
        for failure in failures {
            tracing::warn!("plot not drawn: {failure}");
        }
    }
    let mut models = Vec::with_capacity(newest as usize + 1);
    let mut train_step = 0;
    for k in 0..=newest {
        let card = run.load_card(k)?;
        models.push(card.weights_sha256);
        train_step = card.step;
    }
    let state = RunState { generation: newest, train_step, models };
    let json = serde_json::to_vec_pretty(&state).map_err(|e| run.error(layout::STATE, e.to_string()))?;
    run.store.put_replace(layout::STATE, json)?;
    Ok(state)
}
