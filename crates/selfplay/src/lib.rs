//! camelot-selfplay: training camelot-zero from scratch. Self-play workers play many games at
//! once with one batched network call per round ([`play`]), write immutable replay shards
//! ([`record`]); the trainer samples a window of recent positions ([`replay`]) and saves the
//! next checkpoint; an evaluation plays it against the previous network and baselines; the
//! generation loop ([`run`]) ties them together in a run directory that survives `kill -9`.
//! The same parts run as separate processes ([`roles`]: workers, trainer, evaluator) over a
//! run store ([`store`]) that is a local directory or an S3 bucket.
#![warn(missing_docs)]

pub mod config;
mod error;
pub mod play;
pub mod plots;
pub mod record;
pub mod replay;
pub mod roles;
pub mod run;
pub mod store;

pub use config::RunConfig;
pub use error::SelfplayError;
pub use run::{
    check_network, playing_generation, read_gate, run, CheckReport, Event, GateDecision, Observer, RunDir, RunOptions,
    RunState, RunSummary, Silent,
};
