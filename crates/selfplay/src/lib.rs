//! camelot-selfplay: training camelot-zero from scratch, as one pipeline over one run store.
//!
//! * [`worker`]: self-play workers play many games at once with one batched network call per
//!   round ([`play`]) and write immutable replay shards ([`record`]).
//! * [`trainer`]: samples a window of recent positions ([`replay`]) and publishes the next
//!   model with the record of what trained it.
//! * [`evaluator`]: plays each new model against a fixed set of opponents, and through the SPRT
//!   gate, with the arena's one game driver.
//! * [`pipeline`]: `camelot train`, the three in one process, generation-synchronous, so that
//!   a run survives `kill -9` and one worker thread gives the same games and weights bit for
//!   bit; [`roles`]: what the same three need as separate processes.
//! * [`run`] opens a run over its [`store`] (a local directory or an S3 bucket); [`layout`]
//!   names every object of it; [`metrics`] and [`plots`] are the derived CSV files and PNGs;
//!   [`solved`] measures a player on solved positions; [`starts`] says where games begin.
#![warn(missing_docs)]

pub mod config;
mod error;
pub mod evaluator;
pub mod layout;
pub mod metrics;
pub mod pipeline;
pub mod play;
pub mod plots;
pub mod record;
pub mod replay;
pub mod roles;
pub mod run;
pub mod solved;
pub mod starts;
pub mod store;
pub mod trainer;
pub mod worker;

pub use config::RunConfig;
pub use error::SelfplayError;
pub use pipeline::{run, Event, Observer, RunOptions, RunSummary, Silent};
pub use run::{GateDecision, Run, RunState};
