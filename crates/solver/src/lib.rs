//! camelot-solver: exact game values of the small variants.
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
