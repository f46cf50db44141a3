//! camelot-solver: exact game values of the small variants, the yardstick of the trainer.
//!
//! * [`index`]: a perfect index of a small board's placements (Camette: 904,336,449 entries),
//!   with the colour flip and the left-right mirror folded in.
//! * [`mod@solve`]: retrograde analysis of every position reachable from the start (or any roots):
//!   win, draw or loss for the side to move with the distance to the end in plies. The module
//!   says how repetition (a cycle is a draw) and the no-progress rule are treated.
//! * [`write_table`] / [`read_table`]: the table file (docs/FORMATS.md), written atomically.
//! * [`probe()`]: a position's value and each move's, and the value-keeping moves.
//! * [`sample_positions`]: test positions from varied games; [`PositionRecord`] their JSON
//!   lines; [`OptimalTally`] the scoring of `camelot bench optimal`.
//!
//! It depends on the rules alone, so it builds in seconds and knows nothing of players or
//! networks: the binary glues it to the arena's players.
#![warn(missing_docs)]

mod error;
pub mod index;
pub mod positions;
pub mod probe;
pub mod sample;
pub mod solve;
pub mod table_file;
pub mod value;

pub use error::SolverError;
pub use positions::{read_positions, write_positions, OptimalTally, PositionRecord};
pub use probe::{keeps, probe, MoveValue, Probe};
pub use sample::sample_positions;
pub use solve::{solve, Progress, Quiet, SolveStats, Table};
pub use table_file::{read_table, write_table};
pub use value::{describe, Value};
