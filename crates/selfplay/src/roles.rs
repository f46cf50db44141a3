//! What the separate role processes (`camelot selfplay`, `camelot trainer`, `camelot
//! evaluator`) share: their options, waiting for the run to exist, and napping between looks at
//! the store. The roles themselves are in [`crate::worker`], [`crate::trainer`] and
//! [`crate::evaluator`], the same code `camelot train` runs in one process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camelot_net::Device;

use crate::error::SelfplayError;
use crate::run::{read_config, Run};
use crate::store::RunStore;

/// What every role needs besides the store.
#[derive(Clone, Debug)]
pub struct RoleOptions {
    /// Device of the network.
    pub device: Device,
    /// How long to wait between two looks at the store (new models, new shards, run.toml).
    pub poll: Duration,
    /// Set by SIGTERM/SIGINT: a worker stops after the shard it is playing, the others at once
    /// (between steps, never in the middle of a put).
    pub stop: Arc<AtomicBool>,
}

/// Sleeps `poll`, in short naps so that a stop request is seen soon; false if stopped.
pub fn nap(options: &RoleOptions) -> bool {
    let until = Instant::now() + options.poll;
    while Instant::now() < until {
        if options.stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(100)));
    }
    !options.stop.load(Ordering::Relaxed)
}

/// Waits for `run.toml` and model 0 (put by the trainer or `camelot train`); None if stopped
/// first.
pub fn wait_for_run(store: RunStore, options: &RoleOptions) -> Result<Option<Run>, SelfplayError> {
    let told = std::cell::Cell::new(false);
    let wait = || {
        if !told.replace(true) {
            tracing::info!("waiting for the trainer to start the run");
        }
        nap(options)
    };
    while read_config(&store)?.is_none() {
        if !wait() {
            return Ok(None);
        }
    }
    let run = Run::open_existing(store, options.device.clone())?
        .ok_or_else(|| SelfplayError::Store { object: "run.toml".into(), message: "vanished".into() })?;
    while run.newest_model()?.is_none() {
        if !wait() {
            return Ok(None);
        }
    }
    Ok(Some(run))
}
