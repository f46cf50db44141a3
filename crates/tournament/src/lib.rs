//! camelot-tournament: the bookkeeping of games between players, with no network and no
//! search, so that rating a directory of results builds in seconds.
//!
//! * [`results`]: the crash-safe `results.csv` that arenas, SPRT runs and the trainer's
//!   evaluations all write (one synced line per game; a torn last line is ignored and cut; a
//!   game, by its [`GameKey`], is never recorded twice). Rows are [`ResultRow`]s, read and
//!   written by serde through the `csv` crate.
//! * [`ratings`]: maximum-likelihood Bradley-Terry-Davidson Elo with a white-advantage term,
//!   95% intervals and likelihood of superiority ([`fit_ratings`]).
//! * [`sprt`]: the pentanomial generalized SPRT of fishtest ([`Sprt`]).
//! * [`Tally`]: wins, draws and losses, and the score with a 95% interval.
//! * [`plot`]: Elo by generation as a PNG, written atomically.
//!
//! Every error is a [`TournamentError`] naming the file, line and column, or the player, at
//! fault.
//!
//! ```
//! use camelot_tournament::{fit_ratings, FitOptions, GameResult, ResultRow};
//!
//! let row = |white: &str, black: &str, result, opening| ResultRow {
//!     variant: "camelot".to_string(),
//!     white: white.to_string(),
//!     black: black.to_string(),
//!     result,
//!     plies: 40,
//!     reason: String::new(),
//!     seed: 1,
//!     opening,
//!     moves: String::new(),
//! };
//! let rows = vec![
//!     row("greedy", "random", GameResult::WhiteWins, 0),
//!     row("random", "greedy", GameResult::BlackWins, 0),
//!     row("greedy", "random", GameResult::Draw, 1),
//! ];
//! let table = fit_ratings(&rows, &FitOptions::default()).expect("connected players");
//! assert_eq!(table.anchor, "random");
//! assert!(table.players[0].spec == "greedy" && table.players[0].elo > 0.0);
//! ```
#![warn(missing_docs)]

mod error;
pub mod plot;
pub mod ratings;
pub mod results;
pub mod sprt;
mod tally;

pub use error::TournamentError;
pub use plot::{plot_elo_by_generation, register_bundled_font, write_png};
pub use ratings::{fit_ratings, generation_of, FitOptions, PlayerRating, RatingTable};
pub use results::{read_results, results_path, GameKey, GameResult, ResultRow, ResultsFile, RESULTS_HEADER};
pub use sprt::{Sprt, SprtConfig, SprtStatus};
pub use tally::Tally;
