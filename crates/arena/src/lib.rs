//! camelot-arena: the players that every trained network is measured against, and matches
//! between them.
//!
//! * [`Player`]: one trait for every player; [`Player::choose`] reads a
//!   [`camelot_rules::Game`] (so repetition and the no-progress rule are seen exactly as the
//!   rules see them) and returns a [`Choice`]: the move, and where the player has one, its
//!   evaluation and principal line for display.
//! * [`PlayerSpec`]: players are named by spec strings, `name[:key=value,...]`:
//!   `random`, `greedy`, `alphabeta:depth=3`, `alphabeta:ms=200`, `uct:sims=1000`, `human`
//!   (only `camelot play` can seat one) and `mcts:model=PATH,sims=200` (parsed, but refused
//!   until the network exists). Errors name the key at fault.
//! * [`eval`]: the documented hand-made evaluation that `alphabeta` searches with.
//! * [`play_match`]: games between two specs over shared seeded random openings, each played
//!   with both colour assignments, in parallel threads, reproducible from one seed whatever the
//!   thread count; [`Tally`] gives the score with a 95% interval.
//! * [`input`]: reading a person's moves (an unambiguous prefix such as origin and destination
//!   is enough) and commands, for the terminal game.
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
//! let report = play_match(rules, &a, &b, &config, &|_| {}).expect("the match runs");
//! let tally = report.tally();
//! assert_eq!(tally.games(), 4);
//! println!("{}", tally.summary_line()); // score: 100.0% (W/D/L 4/0/0) +- 0.0
//! ```
#![warn(missing_docs)]

mod alphabeta;
mod basic;
mod error;
pub mod eval;
pub mod input;
mod matches;
mod player;
mod spec;
mod uct;

pub use alphabeta::{AlphaBeta, AlphaBetaConfig};
pub use basic::{Greedy, RandomPlayer};
pub use error::{ArenaError, SpecError};
pub use matches::{derive_seed, play_match, random_opening, GameReport, MatchConfig, MatchReport, Tally};
pub use player::{principal_line_text, Choice, Evaluation, Player};
pub use spec::{PlayerSpec, PLAYER_NAMES};
pub use uct::{Uct, UctConfig};
