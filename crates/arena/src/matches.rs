//! Matches between two players: shared random openings, both colour assignments, parallel
//! games, reproducible from one seed.

use crate::error::ArenaError;
use crate::eval::{material, EvalWeights};
use crate::lockstep::{run_lockstep, GameSetup, LockstepConfig, DEFAULT_GAMES_PER_THREAD};
use crate::mcts::ModelStore;
use crate::player::Player;
use crate::spec::PlayerSpec;
use camelot_rules::{Color, Game, Outcome, Position, Record, Ruleset};
use camelot_tournament::{GameResult, ResultRow, Tally};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// How a match is played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchConfig {
    /// Games in all. Game `2k` and `2k + 1` share opening `k`; in even games A has White.
    pub games: u32,
    /// Worker threads (at least 1). Results do not depend on it.
    pub threads: usize,
    /// Master seed: every opening and every player's random stream derives from it and the
    /// game's index.
    pub seed: u64,
    /// Random plies played from the start position before the players take over.
    pub opening_plies: u32,
    /// Safety cap on a game's plies (0: none). The rules end every game on their own (the
    /// no-progress rule), so the cap is rarely reached; a capped game is adjudicated on
    /// material: more material wins, equal material draws.
    pub max_plies: u32,
    /// Games in flight per thread when a network player takes part, their leaves evaluated
    /// together (at least 1; results do not depend on it).
    pub games_per_thread: usize,
}

impl Default for MatchConfig {
    fn default() -> MatchConfig {
        MatchConfig {
            games: 40,
            threads: 1,
            seed: 1,
            opening_plies: 4,
            max_plies: 2000,
            games_per_thread: DEFAULT_GAMES_PER_THREAD,
        }
    }
}

/// A finished match.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// Player A's spec, canonical.
    pub a: String,
    /// Player B's spec, canonical.
    pub b: String,
    /// Every game, by index (the results file's rows; opening `index / 2`).
    pub games: Vec<ResultRow>,
}

impl MatchReport {
    /// Whether A has White in game `index` (the even ones).
    pub fn a_is_white(index: usize) -> bool {
        index.is_multiple_of(2)
    }

    /// A's score in game `index`: 1 win, 1/2 draw, 0 loss.
    pub fn score_a(&self, index: usize) -> f64 {
        let white = self.games[index].result.white_score();
        if MatchReport::a_is_white(index) {
            white
        } else {
            1.0 - white
        }
    }

    /// The results from A's point of view.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for index in 0..self.games.len() {
            t.add(self.score_a(index));
        }
        t
    }
}

/// The workspace's one seed derivation (re-exported: players, matches and arenas seed from it).
pub use camelot_search::derive_seed;

pub(crate) const STREAM_OPENING: u64 = 1;
pub(crate) const STREAM_A: u64 = 2;
pub(crate) const STREAM_B: u64 = 3;

/// A game after `plies` uniformly random moves from the start, drawn from `seed`. An opening
/// that ends the game is drawn again (up to 100 times; then the longest unfinished prefix of
/// the last attempt is kept).
pub fn random_opening(rules: &Arc<Ruleset>, plies: u32, seed: u64) -> Game {
    let mut last = Game::new(Arc::clone(rules));
    for attempt in 0..100 {
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, 0, attempt));
        let mut game = Game::new(Arc::clone(rules));
        for _ in 0..plies {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            game.play(moves[rng.random_range(0..moves.len())]);
        }
        if game.outcome().is_none() {
            return game;
        }
        game.undo();
        last = game;
    }
    last
}

/// A game played out from `game` (an opening) between two players: the result by the rules
/// (or by material at the ply cap), plies, and the record's move text.
pub(crate) struct Finished {
    /// The result by the rules, `None` when adjudicated at the ply cap.
    pub outcome: Option<Outcome>,
    /// The winner, adjudication included.
    pub winner: Option<Color>,
    /// Plies played, the opening included.
    pub plies: u32,
    /// The record's move text, result included.
    pub moves_text: String,
}

/// Whether `game` is over, and how: `Some((outcome, winner))` when the rules ended it
/// (`outcome` set) or it reached `max_plies` (0: no cap; `outcome` `None`, adjudicated on
/// material: more material wins, equal material draws); `None` while it goes on.
pub(crate) fn adjudicate(game: &Game, max_plies: u32) -> Option<(Option<Outcome>, Option<Color>)> {
    if let Some(outcome) = game.outcome() {
        return Some((Some(outcome), outcome.winner));
    }
    if max_plies > 0 && game.moves().len() as u32 >= max_plies {
        return Some((None, ply_cap_winner(game.position())));
    }
    None
}

/// The winner of a game stopped at a ply cap, the workspace's one ply-cap rule (arenas,
/// matches, evaluations and self-play alike): more material wins, equal material draws, a
/// man counting 100 and a knight 160 (the default [`EvalWeights`]).
pub fn ply_cap_winner(pos: &Position) -> Option<Color> {
    let weights = EvalWeights::default();
    let lead = material(pos, Color::White, &weights) - material(pos, Color::Black, &weights);
    (lead != 0).then_some(if lead > 0 { Color::White } else { Color::Black })
}

impl Finished {
    /// The result of `game`, which [`adjudicate`] says is over (a game still going is
    /// recorded as a draw at the cap).
    pub(crate) fn of(game: Game, max_plies: u32) -> Finished {
        let (outcome, winner) = adjudicate(&game, max_plies).unwrap_or((None, None));
        let plies = game.moves().len() as u32;
        let mut record = Record::of_game(game);
        if outcome.is_none() {
            record.result = Some(
                match winner {
                    Some(Color::White) => "1-0",
                    Some(Color::Black) => "0-1",
                    None => "1/2-1/2",
                }
                .to_string(),
            );
        }
        Finished { outcome, winner, plies, moves_text: record.moves_text() }
    }

    /// The game as a results-file row.
    pub(crate) fn into_row(self, rules: &Ruleset, white: String, black: String, seed: u64, opening: u32) -> ResultRow {
        let result = match self.winner {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        };
        let reason = match (self.outcome, self.winner) {
            (Some(outcome), _) => outcome.to_string(),
            (None, Some(c)) => format!("{} wins: adjudicated on material at the ply cap", c.name()),
            (None, None) => "draw: adjudicated on material at the ply cap".to_string(),
        };
        ResultRow {
            variant: rules.name().to_string(),
            white,
            black,
            result,
            plies: self.plies,
            reason,
            seed,
            opening,
            moves: self.moves_text,
        }
    }
}

/// Plays `game` to its end: `white` and `black` choose in turn; a game still going at
/// `max_plies` (0: no cap) is adjudicated on material.
pub(crate) fn play_out(
    rules: &Ruleset,
    mut game: Game,
    white: &mut dyn Player,
    black: &mut dyn Player,
    max_plies: u32,
) -> Result<Finished, ArenaError> {
    while adjudicate(&game, max_plies).is_none() {
        let player: &mut dyn Player = if game.position().turn() == Color::White { &mut *white } else { &mut *black };
        let choice = player.choose(&game)?;
        if !game.legal_moves().contains(&choice.mv) {
            return Err(ArenaError::IllegalChoice { player: player.name(), cpn: rules.to_cpn(game.position()) });
        }
        game.play(choice.mv);
    }
    Ok(Finished::of(game, max_plies))
}

/// Game `index` of a match: opening `index / 2`, A White in even games; each player's random
/// stream derives from the seed and the game's index.
fn setup(rules: &Arc<Ruleset>, a: &PlayerSpec, b: &PlayerSpec, config: &MatchConfig, index: u32) -> GameSetup {
    let opening = index / 2;
    let game = random_opening(rules, config.opening_plies, derive_seed(config.seed, STREAM_OPENING, opening as u64));
    let rng = |stream| ChaCha8Rng::seed_from_u64(derive_seed(config.seed, stream, index as u64));
    let (a_rng, b_rng) = (rng(STREAM_A), rng(STREAM_B));
    if index.is_multiple_of(2) {
        GameSetup { game, specs: [a.clone(), b.clone()], rngs: [a_rng, b_rng] }
    } else {
        GameSetup { game, specs: [b.clone(), a.clone()], rngs: [b_rng, a_rng] }
    }
}

/// Plays a match of `config.games` games between `a` and `b` on `config.threads` threads, up
/// to [`MatchConfig::games_per_thread`] games at once per thread when a network player takes
/// part (their searches share network calls). `on_game` is called with each game's index and
/// row as it finishes (in finishing order, from worker threads); the report lists the games by index. The same seed
/// gives the same games whatever the thread count, except for players limited by time rather
/// than depth or simulations.
pub fn play_match(
    rules: Arc<Ruleset>,
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    on_game: &(dyn Fn(usize, &ResultRow) + Sync),
) -> Result<MatchReport, ArenaError> {
    if config.games == 0 {
        return Err(ArenaError::Config("--games must be at least 1".to_string()));
    }
    let models = ModelStore::new();
    // Fail before starting threads if either player cannot be built.
    for spec in [a, b] {
        spec.build_with(&rules, ChaCha8Rng::seed_from_u64(0), &models)?;
    }
    let lockstep = LockstepConfig {
        threads: config.threads,
        games_per_thread: config.games_per_thread,
        max_plies: config.max_plies,
    };
    let games = run_lockstep(
        &rules,
        config.games as usize,
        &lockstep,
        &models,
        &|index| Ok(setup(&rules, a, b, config, index as u32)),
        &|index, finished| {
            let (white, black) = if MatchReport::a_is_white(index) { (a, b) } else { (b, a) };
            let row = finished.into_row(&rules, white.to_string(), black.to_string(), config.seed, index as u32 / 2);
            on_game(index, &row);
            Ok(row)
        },
    )?;
    Ok(MatchReport { a: a.to_string(), b: b.to_string(), games })
}
