//! Playing games: a self-play group (many games of one worker searched together, their leaves
//! sent to the network as one batch) and an evaluation duel (a network against another network
//! or a baseline player, games batched the same way).

use std::sync::Arc;
use std::time::{Duration, Instant};

use camelot_arena::PlayerSpec;
use camelot_game::CamelotState;
use camelot_net::{NetEvaluator, Network};
use camelot_rules::{Color, Game as RulesGame, Record, Ruleset};
use camelot_search::{
    EvalError, Evaluations, Evaluator, Game as _, Outcome, Player, SearchConfig, SearchResult, Searcher, Tree,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::RunConfig;
use crate::error::SelfplayError;
use crate::record::{DecisionTarget, GameEnd, GameRecord, PastOpponentRecord};

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

/// Seed of item `index` of stream `stream` under `seed` (SplitMix64 mixing, so nearby inputs
/// give unrelated seeds).
pub fn derive_seed(seed: u64, stream: u64, index: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn search_error(e: impl std::fmt::Display) -> SelfplayError {
    SelfplayError::Search(e.to_string())
}

fn color_sign(player: Player) -> i8 {
    match player {
        Player::First => 1,
        Player::Second => -1,
    }
}

struct Slot {
    tree: Tree<CamelotState>,
    record: GameRecord,
    rng: ChaCha8Rng,
    done: bool,
    /// In a game against an earlier network: its index in the group's opponents and the
    /// side it plays.
    opponent: Option<(usize, Player)>,
    /// Who built the current tree: `None` the learner, `Some(k)` opponent `k`. A tree is
    /// only reused by the network that built it (its priors and values are that network's).
    tree_owner: Option<usize>,
    /// Trees built so far, for the seeds of fresh ones.
    trees_built: u64,
}

/// An earlier network that plays one side of some self-play games, so the learner keeps
/// meeting the plans it has stopped playing itself (OpenAI Five's and AlphaStar's remedy for
/// strategy forgetting). Only the learner's decisions become training targets.
pub struct PastOpponent<'a> {
    /// Its generation.
    pub generation: u32,
    /// The network.
    pub network: &'a Network,
    /// SHA-256 of its weights.
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

/// Plays `count` self-play games together with `network` (one batch of leaves per round),
/// seeded by `group_seed`; the same inputs give the same games.
pub fn play_selfplay_group(
    rules: &Arc<Ruleset>,
    network: &Network,
    network_hash: &str,
    config: &RunConfig,
    group_seed: u64,
    count: u32,
    opponents: &[PastOpponent<'_>],
) -> Result<GroupOutput, SelfplayError> {
    let started = Instant::now();
    let s = &config.selfplay;
    // A fresh cache per group keeps a group's games independent of what ran before, so a
    // group replayed after a crash is identical.
    let new_evaluator = |network: &Network| {
        TimedEvaluator::new(
            NetEvaluator::new(network.clone(), s.cache as usize).with_material_utility(s.material_utility),
        )
    };
    // Evaluator 0 is the learner's; evaluator k + 1 is opponent k's.
    let mut evaluators: Vec<TimedEvaluator<NetEvaluator>> =
        std::iter::once(network).chain(opponents.iter().map(|o| o.network)).map(new_evaluator).collect();
    let mut full = Searcher::new(config.full_search()).map_err(search_error)?;
    let mut fast = Searcher::new(config.fast_search()).map_err(search_error)?;
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
                let side = if opponent_rng.random::<bool>() { Player::First } else { Player::Second };
                (k, side)
            });
            let opponent_record = opponent.map(|(k, side)| PastOpponentRecord {
                generation: opponents[k].generation,
                network: opponents[k].hash.to_string(),
                side: color_sign(side),
            });
            Slot {
                tree: Tree::new(start.clone(), seed),
                record: GameRecord {
                    seed,
                    actions: Vec::new(),
                    targets: Vec::new(),
                    winner: 0,
                    end: GameEnd::Rules,
                    plies: 0,
                    playthrough,
                    would_resign: 0,
                    network: network_hash.to_string(),
                    opponent: opponent_record,
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
    // Slots to search this round, by (network: 0 the learner, k + 1 opponent k; full search).
    let mut buckets: Vec<[Vec<usize>; 2]> = vec![[Vec::new(), Vec::new()]; evaluators.len()];
    while slots.iter().any(|slot| !slot.done) {
        for bucket in buckets.iter_mut() {
            bucket[0].clear();
            bucket[1].clear();
        }
        for (i, slot) in slots.iter_mut().enumerate() {
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
    record.actions.push(result.action as u16);
    slot.tree.advance(result.action).map_err(search_error)?;
    let state = slot.tree.root_state();
    if !state.is_mid_move() {
        record.plies += 1;
    }
    if let Some(outcome) = state.terminal() {
        record.winner = match outcome {
            Outcome::Win(p) => color_sign(p),
            Outcome::Draw => 0,
        };
        record.end = GameEnd::Rules;
        slot.done = true;
    } else if record.plies >= s.max_plies {
        record.winner = 0;
        record.end = GameEnd::PlyCap;
        slot.done = true;
    }
    Ok(())
}

/// [`play_duel`] split over `workers` threads (each with `network_threads` threads for its
/// network passes), in parts of whole opening pairs; the same games as one call.
pub fn play_duel_parallel(
    rules: &Arc<Ruleset>,
    a: &DuelPlayer,
    b: &DuelPlayer,
    config: &DuelConfig,
    workers: usize,
    network_threads: usize,
) -> Result<Vec<DuelGame>, SelfplayError> {
    let pairs = config.games.div_ceil(2);
    let workers = (workers.max(1) as u32).min(pairs.max(1));
    let per_worker = pairs.div_ceil(workers) * 2;
    let parts: Vec<DuelConfig> = (0..workers)
        .map(|w| w * per_worker)
        .filter(|&start| start < config.games)
        .map(|start| DuelConfig {
            games: per_worker.min(config.games - start),
            first_game: config.first_game + start,
            ..config.clone()
        })
        .collect();
    let results: Vec<Result<Vec<DuelGame>, SelfplayError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|part| scope.spawn(move || with_network_threads(network_threads, || play_duel(rules, a, b, part))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(SelfplayError::Search("an evaluation worker panicked".into()))))
            .collect()
    });
    let mut games = Vec::with_capacity(config.games as usize);
    for part in results {
        games.extend(part?);
    }
    Ok(games)
}

/// One side of an evaluation duel.
pub enum DuelPlayer {
    /// A network with the evaluation search.
    Network(Box<Network>),
    /// A baseline player by spec (`greedy`, `random`, `alphabeta:depth=2`, ...).
    Baseline(PlayerSpec),
}

/// A finished duel game, from side A's view.
#[derive(Clone, Debug, PartialEq)]
pub struct DuelGame {
    /// Index of the game (`2k` and `2k + 1` share opening `k`; A has White in even games).
    pub index: u32,
    /// A's score: 1, 1/2 or 0.
    pub score_a: f64,
    /// Whole moves played, the opening included.
    pub plies: u32,
    /// How the game ended, in words.
    pub reason: String,
    /// The game's record text (numbered moves and the result), the opening included.
    pub record: String,
}

/// How duel games are played.
#[derive(Clone, Debug)]
pub struct DuelConfig {
    /// The network players' search.
    pub search: SearchConfig,
    /// Games (an even number plays each opening with both colour assignments).
    pub games: u32,
    /// Random plies of each opening.
    pub opening_plies: u32,
    /// Games reaching this many plies are draws.
    pub max_plies: u32,
    /// Seed of the openings and the players' random streams.
    pub seed: u64,
    /// The network players' material utility (see `NetEvaluator::with_material_utility`).
    pub material_utility: f32,
    /// Index of the first game (games `first_game..first_game + games`): openings and random
    /// streams follow the index, so a duel split into parts plays the same games.
    pub first_game: u32,
}

/// Plays `config.games` games between `a` and `b` from paired random openings, all at once:
/// every network's leaves go to it in one batch per round. Games reaching `max_plies` are
/// draws.
pub fn play_duel(
    rules: &Arc<Ruleset>,
    a: &DuelPlayer,
    b: &DuelPlayer,
    config: &DuelConfig,
) -> Result<Vec<DuelGame>, SelfplayError> {
    let DuelConfig { ref search, games, opening_plies, max_plies, seed, material_utility, first_game } = *config;
    struct Match {
        game: RulesGame,
        a_white: bool,
        tree: Option<Tree<CamelotState>>,
        start: Option<CamelotState>,
        decisions: Vec<u32>,
        baseline: [Option<Box<dyn camelot_arena::Player>>; 2],
        done: Option<f64>,
    }
    let players = [a, b];
    let mut evaluators: Vec<Option<NetEvaluator>> = players
        .iter()
        .map(|p| match p {
            DuelPlayer::Network(n) => {
                Some(NetEvaluator::new((**n).clone(), 100_000).with_material_utility(material_utility))
            }
            DuelPlayer::Baseline(_) => None,
        })
        .collect();
    let mut searchers =
        [Searcher::new(search.clone()).map_err(search_error)?, Searcher::new(search.clone()).map_err(search_error)?];
    let mut matches = Vec::with_capacity(games as usize);
    for index in first_game..first_game + games {
        let opening = camelot_arena::random_opening(rules, opening_plies, derive_seed(seed, 2, (index / 2) as u64));
        let mut baseline: [Option<Box<dyn camelot_arena::Player>>; 2] = [None, None];
        for (side, p) in players.iter().enumerate() {
            if let DuelPlayer::Baseline(spec) = p {
                baseline[side] = Some(
                    spec.build(rules, ChaCha8Rng::seed_from_u64(derive_seed(seed, 3 + side as u64, index as u64)))?,
                );
            }
        }
        matches.push(Match {
            game: opening,
            a_white: index.is_multiple_of(2),
            tree: None,
            start: None,
            decisions: Vec::new(),
            baseline,
            done: None,
        });
    }
    let side_to_move = |m: &Match| -> usize {
        let white = m.game.position().turn() == Color::White;
        if white == m.a_white {
            0
        } else {
            1
        }
    };
    let score = |m: &Match| -> Option<f64> {
        let winner = match m.game.outcome() {
            Some(o) => o.winner,
            None if m.game.moves().len() as u32 >= max_plies => None,
            None => return None,
        };
        Some(match winner {
            None => 0.5,
            Some(c) if (c == Color::White) == m.a_white => 1.0,
            Some(_) => 0.0,
        })
    };
    let mut results = Vec::new();
    loop {
        // Baselines move at once; games over are scored.
        for m in matches.iter_mut().filter(|m| m.done.is_none()) {
            loop {
                if let Some(s) = score(m) {
                    m.done = Some(s);
                    break;
                }
                let side = side_to_move(m);
                match &mut m.baseline[side] {
                    Some(player) => {
                        let choice = player.choose(&m.game)?;
                        m.game.play(choice.mv);
                    }
                    None => break,
                }
            }
        }
        if matches.iter().all(|m| m.done.is_some()) {
            break;
        }
        for side in 0..2 {
            let Some(evaluator) = evaluators[side].as_mut() else { continue };
            let waiting: Vec<usize> = (0..matches.len())
                .filter(|&i| {
                    matches[i].done.is_none() && score(&matches[i]).is_none() && side_to_move(&matches[i]) == side
                })
                .collect();
            if waiting.is_empty() {
                continue;
            }
            let mut trees: Vec<Tree<CamelotState>> = waiting
                .iter()
                .map(|&i| {
                    let m = &mut matches[i];
                    m.tree.take().unwrap_or_else(|| {
                        let state = CamelotState::from_game(&m.game);
                        m.start = Some(state.clone());
                        m.decisions.clear();
                        Tree::new(state, derive_seed(seed, 5, (first_game as usize + i) as u64))
                    })
                })
                .collect();
            searchers[side].search_into(&mut trees, evaluator, &mut results).map_err(search_error)?;
            for ((&i, mut tree), result) in waiting.iter().zip(trees).zip(&results) {
                let m = &mut matches[i];
                tree.advance(result.action).map_err(search_error)?;
                m.decisions.push(result.action);
                if tree.root_state().is_mid_move() {
                    m.tree = Some(tree);
                    continue;
                }
                // The move is complete: find it among the turn's moves and play it.
                let start = m.start.take().ok_or_else(|| SelfplayError::Search("a move without its start".into()))?;
                let index = (0..start.legal_moves().len())
                    .find(|&k| start.actions_for_move(k) == m.decisions)
                    .ok_or_else(|| SelfplayError::Search("the search's decisions name no legal move".into()))?;
                m.game.play(start.legal_moves()[index]);
            }
        }
    }
    Ok(matches
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let outcome = m.game.outcome();
            let reason = match outcome {
                Some(o) => o.to_string(),
                None => format!("draw at the ply cap ({max_plies})"),
            };
            let plies = m.game.moves().len() as u32;
            let mut record = Record::of_game(m.game);
            if outcome.is_none() {
                record.result = Some("1/2-1/2".to_string());
            }
            DuelGame {
                index: first_game + i as u32,
                score_a: m.done.unwrap_or(0.5),
                plies,
                reason,
                record: record.moves_text(),
            }
        })
        .collect())
}
