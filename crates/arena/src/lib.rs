//! camelot-arena: the players that every trained network is measured against, and matches
//! between them.
//!
//! * [`Player`]: one trait for every player; [`Player::choose`] reads a
//!   [`camelot_rules::Game`] (so repetition and the no-progress rule are seen exactly as the
//!   rules see them) and returns a [`Choice`]: the move, and where the player has one, its
//!   evaluation and principal line for display.
//! * [`PlayerSpec`]: players are named by spec strings, `name[:key=value,...]`:
//!   `random`, `greedy`, `alphabeta:depth=3`, `alphabeta:ms=200`, `uct:sims=1000`, `human`
//!   (only `camelot play` can seat one) and `mcts:model=PATH,sims=200[,gumbel]...` (a
//!   checkpoint's network search, [`MctsConfig`]). Errors name the key at fault.
//! * [`eval`]: the documented hand-made evaluation that `alphabeta` searches with.
//! * [`play_match`]: games between two specs over shared seeded random openings, each played
//!   with both colour assignments, in parallel threads, reproducible from one seed whatever the
//!   thread count; [`MatchReport::tally`] gives the score with a 95% interval. Each thread advances many
//!   games at once, and a network player's searches in all of them share one network call per
//!   search round.
//! * [`arena`]: schedules (round robin, gauntlet, game pairs) over one seeded opening book,
//!   played in parallel, each game a [`results::ResultRow`]; [`play_pairs`] is the trainer's
//!   per-generation evaluation and [`run_sprt`] its SPRT gate.
//! * Results files, ratings, SPRT, the score tally and the Elo plot live in
//!   `camelot-tournament` (no burn, no search).
//!
//! Randomness is always seeded and passed in ([`rand_chacha::ChaCha8Rng`]), never global.
//!
//! ```
//! use camelot_arena::{play_match, MatchConfig, PlayerSpec};
//! use camelot_rules::Ruleset;
//! use std::sync::Arc;
//!
//! let rules = Arc::new(Ruleset::variant("cam").expect("a variant"));
//! let a: PlayerSpec = "alphabeta:depth=2".parse().expect("a spec");
//! let b: PlayerSpec = "random".parse().expect("a spec");
//! let config = MatchConfig { games: 4, threads: 2, seed: 7, ..MatchConfig::default() };
//! let report = play_match(rules, &a, &b, &config, &|_, _| {}).expect("the match runs");
//! let tally = report.tally();
//! assert_eq!(tally.games(), 4);
//! println!("{}", tally.summary_line()); // score: 100.0% (W/D/L 4/0/0) +- 0.0
//! ```
#![warn(missing_docs)]

mod alphabeta;
pub mod arena;
mod basic;
mod error;
pub mod eval;
mod lockstep;
mod matches;
mod mcts;
mod player;
mod spec;
mod uct;

pub use alphabeta::{AlphaBeta, AlphaBetaConfig};
pub use arena::{
    gauntlet, pair_schedule, play_games, play_pairs, play_scheduled_game, round_robin, run_sprt, ArenaConfig, OnPair,
    ScheduledGame, SprtReport,
};
pub use basic::{Greedy, RandomPlayer};
pub use error::{ArenaError, SpecError};
pub use lockstep::DEFAULT_GAMES_PER_THREAD;
pub use matches::{derive_seed, play_match, ply_cap_winner, random_opening, MatchConfig, MatchReport};
pub use mcts::{resolve_model_path, Mcts, MctsConfig, ModelStore, MAX_TREE_NODES};
pub use player::{principal_line_text, Choice, Evaluation, Player, StopFlag};
pub use spec::{PlayerSpec, MAX_DEPTH, MAX_MS, MAX_SIMS, PLAYER_NAMES};
pub use uct::{Uct, UctConfig};
