//! Playing self-play games: a group of games of one worker searched together, their leaves
//! sent to the network as one batch per round. (Games between players, evaluations included,
//! go through the arena's driver.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use camelot_game::CamelotState;
use camelot_net::{NetEvaluator, Network};
use camelot_rules::{Color, EndReason, Ruleset};
use camelot_search::{
    derive_seed, EvalError, Evaluations, Evaluator, GameState as _, SearchResult, Searcher, Side, Terminal, Tree,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::RunConfig;
use crate::error::SelfplayError;
use crate::record::{DecisionTarget, GameEnd, GameRecord, PastOpponentRecord};
use crate::starts::{random_opening, scattered_start};

/// An evaluator that measures the time spent inside another.
pub struct TimedEvaluator<E> {
    inner: E,
    /// Time spent in evaluation calls.
    pub elapsed: Duration,
    /// States evaluated.
    pub states: u64,
}

impl<E> TimedEvaluator<E> {
    /// Wraps `inner`.
    pub fn new(inner: E) -> TimedEvaluator<E> {
        TimedEvaluator { inner, elapsed: Duration::ZERO, states: 0 }
    }
}

impl<E: Evaluator<CamelotState>> Evaluator<CamelotState> for TimedEvaluator<E> {
    fn evaluate(&mut self, states: &[&CamelotState], out: &mut Evaluations) -> Result<(), EvalError> {
        let started = Instant::now();
        let result = self.inner.evaluate(states, out);
        self.elapsed += started.elapsed();
        self.states += states.len() as u64;
        result
    }
}

/// Runs `work` with rayon (and so burn's CPU backend) limited to `threads` threads, in a pool
/// of its own: each self-play worker gets one, so that workers do not fight over one global
/// pool.
pub fn with_network_threads<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
    match rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build() {
        Ok(pool) => pool.install(work),
        // No pool (threads could not start): the global one still gives correct results.
        Err(_) => work(),
    }
}

fn search_error(e: impl std::fmt::Display) -> SelfplayError {
    SelfplayError::Search(e.to_string())
}

fn color_sign(player: Side) -> i8 {
    match player {
        Side::First => 1,
        Side::Second => -1,
    }
}

struct Slot {
    tree: Tree<CamelotState>,
    record: GameRecord,
    rng: ChaCha8Rng,
    done: bool,
    /// In a game against an earlier network: its index in the group's opponents and the
    /// side it plays.
    opponent: Option<(usize, Side)>,
    /// Who built the current tree: `None` the learner, `Some(k)` opponent `k`. A tree is
    /// only reused by the network that built it (its priors and values are that network's).
    tree_owner: Option<usize>,
    /// Trees built so far, for the seeds of fresh ones.
    trees_built: u64,
}

/// A network of a self-play group: the learner, whose games the group plays and trains on,
/// or an earlier network that plays one side of some of them, so the learner keeps meeting
/// the plans it has stopped playing itself (OpenAI Five's and AlphaStar's remedy for strategy
/// forgetting). Only the learner's decisions become training targets.
pub struct SelfplayNetwork<'a> {
    /// Its generation (0: untrained); the learner's selects the fast search's noise.
    pub generation: u32,
    /// The network.
    pub network: &'a Network,
    /// SHA-256 of its weights, recorded with each game.
    pub hash: &'a str,
}

/// What a self-play group produced and what it cost.
#[derive(Debug, Default)]
pub struct GroupOutput {
    /// The finished games.
    pub games: Vec<GameRecord>,
    /// Time in the network.
    pub network_time: Duration,
    /// Whole time of the group.
    pub total_time: Duration,
    /// States the network evaluated (cache hits included).
    pub evaluations: u64,
}

/// Plays `count` self-play games together with `learner`'s network (one batch of leaves per
/// round), seeded by `group_seed`; the same inputs give the same games.
pub fn play_selfplay_group(
    rules: &Arc<Ruleset>,
    learner: &SelfplayNetwork<'_>,
    config: &RunConfig,
    group_seed: u64,
    count: u32,
    opponents: &[SelfplayNetwork<'_>],
) -> Result<GroupOutput, SelfplayError> {
    let started = Instant::now();
    let s = &config.selfplay;
    // Opponents play at the learner's arithmetic: the group's games are its generation's.
    let precision = s.precision_in(learner.generation);
    // A fresh cache per group keeps a group's games independent of what ran before, so a
    // group replayed after a crash is identical.
    let new_evaluator = |network: &Network| -> Result<TimedEvaluator<NetEvaluator>, SelfplayError> {
        Ok(TimedEvaluator::new(
            NetEvaluator::new(network.with_precision(precision)?, s.cache as usize)
                .with_material_utility(s.material_utility)
                .with_material_scale(s.material_scale)
                .with_moves_left_utility(s.moves_left_utility),
        ))
    };
    // Evaluator 0 is the learner's; evaluator k + 1 is opponent k's.
    let mut evaluators: Vec<TimedEvaluator<NetEvaluator>> = std::iter::once(learner.network)
        .chain(opponents.iter().map(|o| o.network))
        .map(new_evaluator)
        .collect::<Result<_, _>>()?;
    let mut full = Searcher::new(config.full_search_in(learner.generation)).map_err(search_error)?;
    let mut fast = Searcher::new(config.fast_search_in(learner.generation)).map_err(search_error)?;
    let start = CamelotState::new(rules.clone());
    let mut slots: Vec<Slot> = (0..count)
        .map(|i| {
            let seed = derive_seed(group_seed, 1, i as u64);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let playthrough = rng.random::<f32>() < s.resign_playthrough;
            // A stream of its own, so that games without opponents are those of a run
            // without the setting.
            let mut opponent_rng = ChaCha8Rng::seed_from_u64(derive_seed(group_seed, 7, i as u64));
            let opponent = (!opponents.is_empty() && opponent_rng.random::<f32>() < s.past_opponents).then(|| {
                let k = opponent_rng.random_range(0..opponents.len());
                let side = if opponent_rng.random::<bool>() { Side::First } else { Side::Second };
                (k, side)
            });
            // A stream of its own too, for the same reason.
            let mut start_rng = ChaCha8Rng::seed_from_u64(derive_seed(group_seed, 9, i as u64));
            let scattered = (s.scattered_starts > 0.0 && start_rng.random::<f32>() < s.scattered_starts)
                .then(|| scattered_start(rules, &mut start_rng))
                .flatten();
            // Where the game begins when not at the set-up: a scattered start, else the
            // position some random plies reach.
            let begin = match scattered {
                None if s.random_opening_plies > 0 => random_opening(rules, s.random_opening_plies, &mut start_rng),
                other => other,
            };
            let opponent_record = opponent.map(|(k, side)| PastOpponentRecord {
                generation: opponents[k].generation,
                network: opponents[k].hash.to_string(),
                side: color_sign(side),
            });
            let first = match begin {
                Some(position) => CamelotState::from_position(rules.clone(), position),
                None => start.clone(),
            };
            Slot {
                tree: Tree::new(first, seed),
                record: GameRecord {
                    seed,
                    actions: Vec::new(),
                    targets: Vec::new(),
                    winner: 0,
                    end: GameEnd::Rules,
                    plies: 0,
                    playthrough,
                    would_resign: 0,
                    network: learner.hash.to_string(),
                    opponent: opponent_record,
                    start: begin.map(|position| rules.to_cpn(&position)),
                },
                rng,
                done: false,
                opponent,
                tree_owner: None,
                trees_built: 1,
            }
        })
        .collect();
    let mut results: Vec<SearchResult> = Vec::new();
    let mut legal = Vec::new();
    // Slots to search this round, by (network: 0 the learner, k + 1 opponent k; full search).
    let mut buckets: Vec<[Vec<usize>; 2]> = vec![[Vec::new(), Vec::new()]; evaluators.len()];
    while slots.iter().any(|slot| !slot.done) {
        for bucket in buckets.iter_mut() {
            bucket[0].clear();
            bucket[1].clear();
        }
        for (i, slot) in slots.iter_mut().enumerate() {
            play_forced(slot, config, &mut legal)?;
            if !slot.done {
                let is_full = s.full_search_fraction >= 1.0 || slot.rng.random::<f32>() < s.full_search_fraction;
                let mover = slot.tree.root_state().to_move();
                let owner = slot.opponent.filter(|&(_, side)| side == mover).map(|(k, _)| k);
                if owner != slot.tree_owner {
                    let state = slot.tree.root_state().clone();
                    let decisions = slot.tree.move_number();
                    slot.tree = Tree::new(state, derive_seed(slot.record.seed, 8, slot.trees_built));
                    // The temperature schedule counts the game's decisions, not the tree's.
                    slot.tree.set_move_number(decisions);
                    slot.trees_built += 1;
                    slot.tree_owner = owner;
                }
                buckets[owner.map_or(0, |k| k + 1)][usize::from(is_full)].push(i);
            }
        }
        for (network_index, bucket) in buckets.iter().enumerate() {
            let evaluator = &mut evaluators[network_index];
            for (indices, searcher, is_full) in [(&bucket[1], &mut full, true), (&bucket[0], &mut fast, false)] {
                if indices.is_empty() {
                    continue;
                }
                let placeholder = || Tree::new(start.clone(), 0);
                let mut trees: Vec<Tree<CamelotState>> =
                    indices.iter().map(|&i| std::mem::replace(&mut slots[i].tree, placeholder())).collect();
                let searched = searcher.search_into(&mut trees, evaluator, &mut results);
                for (&i, tree) in indices.iter().zip(trees) {
                    slots[i].tree = tree;
                }
                searched.map_err(search_error)?;
                for (&i, result) in indices.iter().zip(&results) {
                    step_selfplay(&mut slots[i], result, is_full, network_index == 0, config)?;
                }
            }
        }
    }
    Ok(GroupOutput {
        games: slots.into_iter().map(|slot| slot.record).collect(),
        network_time: evaluators.iter().map(|e| e.elapsed).sum(),
        total_time: started.elapsed(),
        evaluations: evaluators.iter().map(|e| e.states).sum(),
    })
}

/// Records one searched decision of a self-play game and plays it. Only the learner's
/// decisions (`by_learner`) become targets, and only it may resign: an earlier network's
/// search is not what the learner should imitate.
fn step_selfplay(
    slot: &mut Slot,
    result: &SearchResult,
    is_full: bool,
    by_learner: bool,
    config: &RunConfig,
) -> Result<(), SelfplayError> {
    let s = &config.selfplay;
    let record = &mut slot.record;
    let mover = result.to_move;
    if is_full && by_learner {
        record.targets.push(DecisionTarget {
            decision: record.actions.len() as u32,
            legal: result.actions.iter().map(|&a| a as u16).collect(),
            policy: result.policy.clone(),
            root_value: [result.value.win, result.value.draw, result.value.loss],
        });
    }
    if let Some(threshold) = s.resign_threshold.filter(|_| record.opponent.is_none()) {
        if record.plies >= s.resign_min_plies && result.value.value() < threshold {
            if record.playthrough {
                if record.would_resign == 0 {
                    record.would_resign = color_sign(mover);
                }
            } else {
                record.winner = -color_sign(mover);
                record.end = GameEnd::Resigned;
                slot.done = true;
                return Ok(());
            }
        }
    }
    play_action(slot, result.action, config)
}

/// Plays the decisions of `slot` that have a single legal action, until one has a choice or
/// the game ends. They are not searched (a search of one action costs network calls and
/// decides nothing) and are no training targets (a target with all mass on the only action
/// teaches nothing, and the masked softmax gives it probability 1 anyway).
fn play_forced(slot: &mut Slot, config: &RunConfig, legal: &mut Vec<u32>) -> Result<(), SelfplayError> {
    while !slot.done {
        legal.clear();
        slot.tree.root_state().legal_actions(legal);
        if legal.len() != 1 {
            break;
        }
        play_action(slot, legal[0], config)?;
    }
    Ok(())
}

/// The winner a self-play game that the rules ended at `state` with `outcome` is trained as
/// (1 White, -1 Black, 0 draw): the rules' result, except that with `no_progress_on_material`
/// a no-progress draw goes to the side with more material (the ply cap's rule,
/// [`camelot_arena::ply_cap_winner`]).
pub fn training_winner(state: &CamelotState, outcome: Terminal, no_progress_on_material: bool) -> i8 {
    match outcome {
        Terminal::Win(p) => color_sign(p),
        Terminal::Draw
            if no_progress_on_material && state.outcome().is_some_and(|o| o.reason == EndReason::NoProgress) =>
        {
            material_winner(state.position())
        }
        Terminal::Draw => 0,
    }
}

/// The ply cap's adjudication of `pos` as a record's winner (1 White, -1 Black, 0 draw).
fn material_winner(pos: &camelot_rules::Position) -> i8 {
    match camelot_arena::ply_cap_winner(pos) {
        Some(Color::White) => 1,
        Some(Color::Black) => -1,
        None => 0,
    }
}

/// Plays `action` in `slot`'s game and records how the game ended, if it did: by the rules
/// (a no-progress draw scored on material with `selfplay.no_progress_on_material`), or at the
/// ply cap, where material decides ([`camelot_arena::ply_cap_winner`], the rule of
/// every arena), so that a capped game with a material lead is a win for the side ahead.
fn play_action(slot: &mut Slot, action: u32, config: &RunConfig) -> Result<(), SelfplayError> {
    let record = &mut slot.record;
    record.actions.push(action as u16);
    slot.tree.advance(action).map_err(search_error)?;
    let state = slot.tree.root_state();
    if !state.is_mid_move() {
        record.plies += 1;
    }
    if let Some(outcome) = state.terminal() {
        record.winner = training_winner(state, outcome, config.selfplay.no_progress_on_material);
        record.end = GameEnd::Rules;
        slot.done = true;
    } else if record.plies >= config.selfplay.max_plies {
        record.winner = material_winner(state.position());
        record.end = GameEnd::PlyCap;
        slot.done = true;
    }
    Ok(())
}
