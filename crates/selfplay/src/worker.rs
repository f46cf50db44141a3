//! Self-play workers: groups of games played with the playing network and written as shards.
//! `camelot train` plays a generation's numbered groups on its worker threads
//! ([`play_generation`]); a `camelot selfplay` process plays groups with the newest model until
//! the run ends ([`selfplay_worker`]). Both go through [`play_group`].

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use camelot_net::Network;

use crate::error::SelfplayError;
use crate::layout;
use crate::pipeline::{Event, Observer};
use crate::play::{play_selfplay_group, with_network_threads, GroupOutput, SelfplayNetwork};
use crate::record::{encode_shard, GameRecord};
use crate::roles::{nap, RoleOptions};
use crate::run::Run;

/// The networks of a generation's self-play: the playing one and, with
/// `selfplay.past_opponents`, every earlier one, each with its weights' hash.
pub struct Players {
    /// The playing network's generation.
    pub generation: u32,
    /// The playing network.
    pub network: Network,
    /// Its hash.
    pub hash: String,
    /// Earlier networks (generation, network, hash).
    pub past: Vec<(u32, Network, String)>,
}

impl Players {
    /// Loads network `playing` and, if the run plays against the past, networks `0..playing`.
    pub fn load(run: &Run, playing: u32) -> Result<Players, SelfplayError> {
        let (network, card) = run.load_model(playing)?;
        let past = if run.config.selfplay.past_opponents > 0.0 {
            (0..playing)
                .map(|k| {
                    let (network, card) = run.load_model(k)?;
                    Ok((k, network, card.weights_sha256))
                })
                .collect::<Result<Vec<_>, SelfplayError>>()?
        } else {
            Vec::new()
        };
        Ok(Players { generation: playing, network, hash: card.weights_sha256, past })
    }
}

/// Plays one group of `selfplay.parallel_games` games from `seed`, all searched together.
pub fn play_group(run: &Run, players: &Players, seed: u64) -> Result<GroupOutput, SelfplayError> {
    let past: Vec<SelfplayNetwork<'_>> = players
        .past
        .iter()
        .map(|(generation, network, hash)| SelfplayNetwork { generation: *generation, network, hash })
        .collect();
    let count = run.config.selfplay.parallel_games;
    with_network_threads(run.config.network_threads(), || {
        let learner =
            SelfplayNetwork { generation: players.generation, network: &players.network, hash: &players.hash };
        play_selfplay_group(&run.rules, &learner, &run.config, seed, count, &past)
    })
}

/// `camelot train`'s self-play of generation `g` (the games that train model `g + 1`): the
/// groups `0..ceil(selfplay.games / parallel_games)` not yet in the store, each seeded by the
/// run seed, `g` and its number, on `selfplay.workers` threads, so that the same run gives the
/// same shards whoever plays them and whenever it was interrupted.
pub fn play_generation(run: &Run, g: u32, players: &Players, observer: &dyn Observer) -> Result<(), SelfplayError> {
    let s = &run.config.selfplay;
    let groups = s.games.div_ceil(s.parallel_games);
    observer.event(Event::Phase { generation: g, name: "selfplay", total: groups as u64 * s.parallel_games as u64 });
    if players.generation != g {
        tracing::info!(
            "generation {g} self-play with network {} (the gate rejected the newer ones)",
            players.generation
        );
    }
    let next_group = AtomicU32::new(0);
    let failure: Mutex<Option<SelfplayError>> = Mutex::new(None);
    let timing: Mutex<(Duration, Duration)> = Mutex::new((Duration::ZERO, Duration::ZERO));
    std::thread::scope(|scope| {
        for _ in 0..s.workers.min(groups) {
            scope.spawn(|| loop {
                let group = next_group.fetch_add(1, Ordering::Relaxed);
                if group >= groups || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                    return;
                }
                let key = layout::shard_key(g, layout::LOCAL_WORKER, group as u64);
                let result = run.store.exists(&key).and_then(|exists| {
                    if exists {
                        return Ok(None);
                    }
                    let out = play_group(run, players, run.seed(100 + g as u64, group as u64))?;
                    run.store.put_new(&key, encode_shard(&out.games)?)?;
                    Ok(Some(out))
                });
                match result {
                    Ok(None) => observer.event(Event::Progress {
                        done: s.parallel_games as u64,
                        message: format!("shard {group} already played"),
                    }),
                    Ok(Some(out)) => {
                        if let Ok(mut t) = timing.lock() {
                            t.0 += out.network_time;
                            t.1 += out.total_time;
                        }
                        observer.event(Event::Progress { done: out.games.len() as u64, message: share(&out) });
                    }
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let (network, total) = timing.into_inner().unwrap_or_else(|e| e.into_inner());
    let summary = format!(
        "generation {g} self-play done: network {:.0}% of the time",
        100.0 * network.as_secs_f64() / total.as_secs_f64().max(1e-9)
    );
    tracing::info!("{summary}");
    observer.event(Event::PhaseDone(summary));
    Ok(())
}

fn share(out: &GroupOutput) -> String {
    let positions: usize = out.games.iter().map(|g: &GameRecord| g.targets.len()).sum();
    let share = out.network_time.as_secs_f64() / out.total_time.as_secs_f64().max(1e-9);
    format!("{positions} positions, network {:.0}% of the time", 100.0 * share)
}

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    /// Shards written by this process.
    pub shards: u64,
    /// Games in them.
    pub games: u64,
    /// Whether it stopped because the run reached its last generation (rather than a signal).
    pub run_finished: bool,
}

/// A self-play worker process: plays one group at a time with the playing network of the
/// newest model (waiting, with the SPRT gate, for its verdict), writes each group as one shard
/// `selfplay/NEWEST/WORKER-SEQ.shard`, and returns once the run's last model is published or a
/// stop is requested (after finishing the shard in progress).
pub fn selfplay_worker(run: &Run, worker: u32, options: &RoleOptions) -> Result<WorkerSummary, SelfplayError> {
    let mut summary = WorkerSummary::default();
    // Go on after this worker's own last shard (from an earlier life of this worker id).
    let mut seq = run
        .store
        .list("selfplay")?
        .iter()
        .filter_map(|o| layout::parse_shard_key(&o.key))
        .filter(|&(_, w, _)| w == worker)
        .map(|(_, _, s)| s + 1)
        .max()
        .unwrap_or(0);
    let mut loaded: Option<Players> = None;
    let mut waiting_told = None;
    while !options.stop.load(Ordering::Relaxed) {
        let Some(newest) = run.newest_model()? else { break };
        if newest >= run.config.generations {
            summary.run_finished = true;
            break;
        }
        let Some(playing) = run.playing_generation(newest)? else {
            if waiting_told != Some(newest) {
                tracing::info!("worker {worker}: waiting for the gate's verdict on model {newest}");
                waiting_told = Some(newest);
            }
            if !nap(options) {
                break;
            }
            continue;
        };
        if loaded.as_ref().is_none_or(|p| p.generation != playing) {
            tracing::info!("worker {worker}: playing with model {playing}");
            loaded = Some(Players::load(run, playing)?);
        }
        let Some(players) = loaded.as_ref() else { break };
        let started = Instant::now();
        let seed = run.seed(1_000_000 + worker as u64, seq);
        let out = play_group(run, players, seed)?;
        let bytes = encode_shard(&out.games)?;
        // A name taken anyway (two processes with one id) moves on to the next number.
        loop {
            let key = layout::shard_key(newest, worker, seq);
            seq += 1;
            match run.store.put_new(&key, bytes.clone()) {
                Ok(()) => {
                    let positions: usize = out.games.iter().map(|game| game.targets.len()).sum();
                    tracing::info!(
                        "worker {worker}: {key}: {} games, {positions} positions in {:.1} s",
                        out.games.len(),
                        started.elapsed().as_secs_f64()
                    );
                    break;
                }
                Err(SelfplayError::Exists { object }) => {
                    tracing::warn!("worker {worker}: {object} exists (another process with this worker id?)")
                }
                Err(e) => return Err(e),
            }
        }
        summary.shards += 1;
        summary.games += out.games.len() as u64;
    }
    Ok(summary)
}
