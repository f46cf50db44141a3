//! `camelot arena`: many players, round robin or gauntlet, over a seeded book of random
//! openings (each played twice with the colours swapped); every game appended to
//! `DIR/results.csv`, which also makes the arena resumable; the ratings printed at the end.

use super::RulesArgs;
use anyhow::{bail, Context, Result};
use camelot_arena::{gauntlet, play_games, round_robin, ArenaConfig, ModelStore, PlayerSpec};
use camelot_tournament::{fit_ratings, results_path, FitOptions, ResultRow, ResultsFile};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Arguments of `camelot arena`.
#[derive(Args, Debug)]
pub struct ArenaArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Players: random, greedy, alphabeta:depth=2, uct:sims=400,
    /// mcts:model=runs/x/models/000017,sims=200 (`model=runs/x/latest` for the newest; more
    /// keys: gumbel or gumbel=no, mirror or mirror=no, m=M, cscale=C, cpuct=C, temperature=T,
    /// ms=M, cache=K, batch=B, material=F, draw=P, device=D; gumbel, mirror, material and draw
    /// default to the model card's).
    #[arg(long, num_args = 1.., required = true)]
    players: Vec<String>,
    /// Play this player against each of --players instead of a round robin.
    #[arg(long)]
    gauntlet: Option<String>,
    /// Games per pairing (an even number: each opening is played with both colour assignments).
    #[arg(long, default_value_t = 20)]
    games_per_pair: u32,
    #[command(flatten)]
    games: GameArgs,
    /// Directory of the arena: results.csv is appended there (games already in it are not
    /// replayed).
    #[arg(long)]
    out: PathBuf,
}

/// How the games of `arena` and `sprt` are played.
#[derive(Args, Debug)]
pub struct GameArgs {
    /// Worker threads (`sprt`: pairs are played in batches of this many, or with a network
    /// player enough to fill --games-per-thread, and counted in order).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Games each thread keeps in flight when a network (`mcts:`) player takes part: its
    /// searches in all of them share one network call per round. Results do not depend on it.
    #[arg(long, default_value_t = camelot_arena::DEFAULT_GAMES_PER_THREAD)]
    pub games_per_thread: usize,
    /// Seed of the opening book and of the players' random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random plies of each opening.
    #[arg(long, default_value_t = 4)]
    pub opening_plies: u32,
    /// Safety cap on plies per game, adjudicated on material (0: none).
    #[arg(long, default_value_t = 2000)]
    pub max_plies: u32,
}

impl GameArgs {
    /// The library's settings.
    pub fn config(&self) -> ArenaConfig {
        ArenaConfig {
            seed: self.seed,
            opening_plies: self.opening_plies,
            max_plies: self.max_plies,
            threads: self.threads,
            games_per_thread: self.games_per_thread,
        }
    }
}

fn parse_spec(text: &str) -> Result<PlayerSpec> {
    let spec = PlayerSpec::parse(text).with_context(|| format!("player `{text}`"))?;
    spec.resolved().with_context(|| format!("player `{text}`"))
}

/// Runs `camelot arena`.
pub fn run(args: ArenaArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    if args.games_per_pair == 0 || !args.games_per_pair.is_multiple_of(2) {
        bail!(
            "--games-per-pair must be a positive even number (each opening is played with both colours), got {}",
            args.games_per_pair
        );
    }
    let players = args.players.iter().map(|p| parse_spec(p)).collect::<Result<Vec<_>>>()?;
    let schedule = match &args.gauntlet {
        Some(hero) => gauntlet(&parse_spec(hero)?, &players, args.games_per_pair),
        None => {
            if players.len() < 2 {
                bail!("a round robin needs at least two --players (or give --gauntlet SPEC)");
            }
            round_robin(&players, args.games_per_pair)
        }
    };
    let config = args.games.config();
    let path = results_path(&args.out);
    let file = ResultsFile::open(&path)?;
    let todo: Vec<_> = schedule.iter().filter(|g| !file.contains(&g.key(rules.name(), config.seed))).cloned().collect();
    outln!(
        "arena: variant {}, {} games scheduled, {} already in {}, {} to play on {} threads (seed {}, {} opening plies)",
        rules.name(),
        schedule.len(),
        schedule.len() - todo.len(),
        path.display(),
        todo.len(),
        config.threads,
        config.seed,
        config.opening_plies
    )?;
    let started = Instant::now();
    let file = Mutex::new(file);
    let done = AtomicUsize::new(0);
    let total = todo.len();
    let models = ModelStore::new();
    let record = |row: &ResultRow| -> Result<(), camelot_arena::ArenaError> {
        file.lock().unwrap_or_else(|e| e.into_inner()).append(row)?;
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        errln!(
            "[{n}/{total}] {} - {}: {} ({} plies, opening {}, {:.0} s)",
            row.white,
            row.black,
            row.result,
            row.plies,
            row.opening,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    };
    play_games(&rules, &todo, &config, &models, &record)?;
    let file = file.into_inner().unwrap_or_else(|e| e.into_inner());
    errln!("{total} games in {:.1} s", started.elapsed().as_secs_f64());
    let rows: Vec<ResultRow> = file.rows().iter().filter(|r| r.variant == rules.name()).cloned().collect();
    let table = fit_ratings(&rows, &FitOptions::default())?;
    out!("{}", table.to_text())?;
    Ok(())
}
