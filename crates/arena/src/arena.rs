//! Arenas: many players, round robin or gauntlet, every game a [`ResultRow`].
//!
//! A schedule is a list of [`ScheduledGame`]s: White, Black and an opening index. Opening `k`
//! of seed `s` is the same position for every pairing (`k` random plies drawn from
//! `derive_seed(s, 1, k)`, as `camelot match` draws them), and every pairing plays each of its
//! openings twice with the colours swapped. A game's random streams derive from the seed, the
//! two specs and the opening, so a game is fixed by its [`camelot_tournament::GameKey`] whatever
//! the thread count or the order of play: that is what makes an arena resumable (skip the keys
//! already in `results.csv`) and reproducible.
//!
//! Games run on [`ArenaConfig::threads`] threads, each keeping up to
//! [`ArenaConfig::games_per_thread`] games with a network player in flight: every network
//! player's pending leaves, across all its games on that thread, go to its network in one
//! batch per search round (`crate::lockstep`). Which games share a batch changes nothing in
//! them.

use crate::error::ArenaError;
use crate::lockstep::{is_batched, run_lockstep, GameSetup, LockstepConfig, DEFAULT_GAMES_PER_THREAD};
use crate::matches::{derive_seed, play_out, random_opening, Finished, STREAM_A, STREAM_B, STREAM_OPENING};
use crate::mcts::ModelStore;
use crate::spec::PlayerSpec;
use camelot_rules::Ruleset;
use camelot_tournament::{GameKey, ResultRow};
use camelot_tournament::{Sprt, SprtConfig, SprtStatus};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// One game to play.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledGame {
    /// White.
    pub white: PlayerSpec,
    /// Black.
    pub black: PlayerSpec,
    /// Opening index in the seeded book.
    pub opening: u32,
}

impl ScheduledGame {
    /// The key its result row will have.
    pub fn key(&self, variant: &str, seed: u64) -> GameKey {
        GameKey {
            variant: variant.to_string(),
            white: self.white.to_string(),
            black: self.black.to_string(),
            seed,
            opening: self.opening,
        }
    }
}

/// How an arena's games are played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArenaConfig {
    /// Master seed of the openings and the players' random streams.
    pub seed: u64,
    /// Random plies of each opening.
    pub opening_plies: u32,
    /// Safety cap on plies (0: none); a capped game is adjudicated on material.
    pub max_plies: u32,
    /// Worker threads.
    pub threads: usize,
    /// Games in flight per thread when a network player takes part (at least 1; results do
    /// not depend on it).
    pub games_per_thread: usize,
}

impl Default for ArenaConfig {
    fn default() -> ArenaConfig {
        ArenaConfig {
            seed: 1,
            opening_plies: 4,
            max_plies: 2000,
            threads: 1,
            games_per_thread: DEFAULT_GAMES_PER_THREAD,
        }
    }
}

/// `pairs` game pairs between `a` and `b` over openings `first_opening..first_opening + pairs`:
/// in each pair `a` has White first, then `b`.
pub fn pair_schedule(a: &PlayerSpec, b: &PlayerSpec, pairs: u32, first_opening: u32) -> Vec<ScheduledGame> {
    (first_opening..first_opening + pairs)
        .flat_map(|opening| {
            [
                ScheduledGame { white: a.clone(), black: b.clone(), opening },
                ScheduledGame { white: b.clone(), black: a.clone(), opening },
            ]
        })
        .collect()
}

/// Interleaves the pairings opening by opening, so that a partial arena covers every pairing.
fn interleave(pairings: &[(PlayerSpec, PlayerSpec)], games_per_pair: u32) -> Vec<ScheduledGame> {
    let mut games = Vec::new();
    for opening in 0..games_per_pair.div_ceil(2) {
        for (a, b) in pairings {
            games.extend(pair_schedule(a, b, 1, opening));
        }
    }
    games
}

/// Every pair of `players` meets for `games_per_pair` games (rounded up to whole pairs).
pub fn round_robin(players: &[PlayerSpec], games_per_pair: u32) -> Vec<ScheduledGame> {
    let mut pairings = Vec::new();
    for (i, a) in players.iter().enumerate() {
        for b in &players[i + 1..] {
            pairings.push((a.clone(), b.clone()));
        }
    }
    interleave(&pairings, games_per_pair)
}

/// `hero` meets each of `opponents` for `games_per_pair` games (rounded up to whole pairs).
pub fn gauntlet(hero: &PlayerSpec, opponents: &[PlayerSpec], games_per_pair: u32) -> Vec<ScheduledGame> {
    let pairings: Vec<_> = opponents.iter().filter(|o| *o != hero).map(|o| (hero.clone(), o.clone())).collect();
    interleave(&pairings, games_per_pair)
}

/// A stable 64-bit hash of a string (FNV-1a), for deriving seeds from spec strings.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The opening and the players' random streams of a scheduled game: fixed by its key.
fn setup(rules: &Arc<Ruleset>, game: &ScheduledGame, config: &ArenaConfig) -> GameSetup {
    let opening =
        random_opening(rules, config.opening_plies, derive_seed(config.seed, STREAM_OPENING, game.opening as u64));
    let base = derive_seed(config.seed, fnv(&game.white.to_string()), fnv(&game.black.to_string()));
    let rng = |stream| ChaCha8Rng::seed_from_u64(derive_seed(base, stream, game.opening as u64));
    GameSetup { game: opening, specs: [game.white.clone(), game.black.clone()], rngs: [rng(STREAM_A), rng(STREAM_B)] }
}

fn row(rules: &Ruleset, game: &ScheduledGame, config: &ArenaConfig, finished: Finished) -> ResultRow {
    finished.into_row(rules, game.white.to_string(), game.black.to_string(), config.seed, game.opening)
}

/// Plays one scheduled game on its own (each player searching alone): the same game as
/// [`play_games`] plays for it.
pub fn play_scheduled_game(
    rules: &Arc<Ruleset>,
    game: &ScheduledGame,
    config: &ArenaConfig,
    models: &ModelStore,
) -> Result<ResultRow, ArenaError> {
    let GameSetup { game: opening, specs: [white, black], rngs: [white_rng, black_rng] } = setup(rules, game, config);
    let mut w = white.build_with(rules, white_rng, models)?;
    let mut b = black.build_with(rules, black_rng, models)?;
    let finished = play_out(rules, opening, w.as_mut(), b.as_mut(), config.max_plies)?;
    Ok(row(rules, game, config, finished))
}

/// Plays `games` on `config.threads` threads (network players' searches batched across the
/// games of a thread); `on_game` sees each row as its game finishes (from worker threads, in
/// finishing order; an error from it stops the arena). Returns the rows in schedule order.
/// Every player is built once before any thread starts, so a bad spec or checkpoint fails at
/// once.
pub fn play_games(
    rules: &Arc<Ruleset>,
    games: &[ScheduledGame],
    config: &ArenaConfig,
    models: &ModelStore,
    on_game: &(dyn Fn(&ResultRow) -> Result<(), ArenaError> + Sync),
) -> Result<Vec<ResultRow>, ArenaError> {
    let mut checked: Vec<String> = Vec::new();
    for g in games {
        for spec in [&g.white, &g.black] {
            let name = spec.to_string();
            if !checked.contains(&name) {
                spec.build_with(rules, ChaCha8Rng::seed_from_u64(0), models)?;
                checked.push(name);
            }
        }
    }
    let lockstep = LockstepConfig {
        threads: config.threads,
        games_per_thread: config.games_per_thread,
        max_plies: config.max_plies,
    };
    run_lockstep(rules, games.len(), &lockstep, models, &|i| Ok(setup(rules, &games[i], config)), &|i, finished| {
        let row = row(rules, &games[i], config, finished);
        on_game(&row)?;
        Ok(row)
    })
}

/// Plays `pairs` game pairs between `a` and `b` (openings `first_opening..`, colours swapped
/// within each pair): the trainer's per-generation evaluation. Rows come back in pair order,
/// `a` White in the first game of each pair. Use a different `first_opening` or seed per
/// generation to vary the openings.
#[allow(clippy::too_many_arguments)]
pub fn play_pairs(
    rules: &Arc<Ruleset>,
    a: &PlayerSpec,
    b: &PlayerSpec,
    pairs: u32,
    first_opening: u32,
    config: &ArenaConfig,
    models: &ModelStore,
    on_game: &(dyn Fn(&ResultRow) -> Result<(), ArenaError> + Sync),
) -> Result<Vec<ResultRow>, ArenaError> {
    play_games(rules, &pair_schedule(a, b, pairs, first_opening), config, models, on_game)
}

/// What [`run_sprt`] calls after each counted pair: the test so far and the pair's two rows.
pub type OnPair<'a> = dyn FnMut(&Sprt, &[ResultRow]) -> Result<(), ArenaError> + 'a;

/// A finished SPRT.
#[derive(Clone, Debug)]
pub struct SprtReport {
    /// The test as it stopped (counts, LLR).
    pub sprt: Sprt,
    /// The verdict: `Continue` when `max_pairs` ran out first.
    pub status: SprtStatus,
    /// The rows of the pairs the test counted, in pair order (pairs played past the stopping
    /// point are left out).
    pub rows: Vec<ResultRow>,
}

/// Plays game pairs between `a` and `b` (A White first in each pair) until the SPRT accepts H0
/// or H1, or `max_pairs` pairs (0: no limit) are counted. Pairs are played `config.threads`
/// at a time (two games each; with a network player, enough to fill
/// [`ArenaConfig::games_per_thread`] on every thread) but counted strictly in pair order, so
/// the stopping rule is the sequential one. `on_pair` sees the test after each pair with that pair's two rows; an error
/// from it stops the test. The trainer's `gate = "sprt"` calls this.
#[allow(clippy::too_many_arguments)]
pub fn run_sprt(
    rules: &Arc<Ruleset>,
    a: &PlayerSpec,
    b: &PlayerSpec,
    sprt_config: &SprtConfig,
    max_pairs: u32,
    config: &ArenaConfig,
    models: &ModelStore,
    on_pair: &mut OnPair<'_>,
) -> Result<SprtReport, ArenaError> {
    sprt_config.validate().map_err(ArenaError::Config)?;
    let mut sprt = Sprt::new(*sprt_config);
    let mut rows = Vec::new();
    let threads = config.threads.max(1);
    let pairs_per_thread = if is_batched(a) || is_batched(b) { (config.games_per_thread / 2).max(1) } else { 1 };
    let batch = (threads * pairs_per_thread) as u32;
    let mut next = 0u32;
    loop {
        let take = if max_pairs == 0 { batch } else { batch.min(max_pairs - next) };
        if take == 0 {
            return Ok(SprtReport { sprt, status: SprtStatus::Continue, rows });
        }
        let played = play_pairs(rules, a, b, take, next, config, models, &|_| Ok(()))?;
        for pair in played.chunks(2) {
            let score = |r: &ResultRow| {
                if r.white == pair[0].white {
                    r.result.white_score()
                } else {
                    1.0 - r.result.white_score()
                }
            };
            sprt.add_pair(score(&pair[0]), score(&pair[1]));
            rows.extend_from_slice(pair);
            on_pair(&sprt, pair)?;
            let status = sprt.status();
            if status != SprtStatus::Continue {
                return Ok(SprtReport { sprt, status, rows });
            }
        }
        next += take;
    }
}
