//! Games played in lockstep, so that network players evaluate positions in batches across
//! games.
//!
//! Each worker thread keeps up to `games_per_thread` games in flight. A round of the worker:
//! every player that moves alone ([`Player::choose`]: the baselines, and `mcts` players with
//! a time limit, whose budget is per move, not per round) moves in each of its games until a
//! network player is to move or the game ends; then, for each network player, the search trees
//! of every game where it is to move get one decision's search together through
//! [`Searcher::search_into`], so all their pending leaves reach its network in one
//! [`NetEvaluator`] batch per search round. A game without a network player is played to its
//! end as soon as a worker takes it: it gains nothing from waiting for others.
//!
//! A game's moves do not depend on which games it shares a worker or a batch with, nor on the
//! thread count: each network player draws a new tree seed per move from its own random stream
//! in that game (as [`crate::Mcts`] does), trees are searched independently of each other, and
//! the network's output for a position does not depend on the batch it is in (nor on whether it
//! came from the position cache). The arena tests check that a batched game equals the same
//! game played by the one-game [`crate::Mcts`] player.

use crate::error::ArenaError;
use crate::matches::{adjudicate, Finished};
use crate::mcts::{tree_for_move, MctsConfig, ModelStore};
use crate::player::Player;
use crate::spec::PlayerSpec;
use camelot_game::CamelotState;
use camelot_net::NetEvaluator;
use camelot_rules::{Color, Game, Ruleset};
use camelot_search::{SearchResult, Searcher, Tree};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Games a worker thread keeps in flight when they have a network player, unless told
/// otherwise: enough that a small network's forward pass is not dominated by its fixed cost.
pub const DEFAULT_GAMES_PER_THREAD: usize = 32;

/// One game to play: the opening, and White's and Black's specs with their random streams.
pub(crate) struct GameSetup {
    /// The game after its opening plies.
    pub game: Game,
    /// White's and Black's specs.
    pub specs: [PlayerSpec; 2],
    /// White's and Black's random streams.
    pub rngs: [ChaCha8Rng; 2],
}

/// How [`run_lockstep`] plays its games.
pub(crate) struct LockstepConfig {
    /// Worker threads.
    pub threads: usize,
    /// Games with a network player in flight per worker (at least 1).
    pub games_per_thread: usize,
    /// Safety cap on plies (0: none); see [`adjudicate`].
    pub max_plies: u32,
}

/// Whether `spec` is searched together with other games: an `mcts` player limited by
/// simulations alone (a time limit is per move, so such a player searches on its own).
pub(crate) fn is_batched(spec: &PlayerSpec) -> bool {
    matches!(spec, PlayerSpec::Mcts(config) if config.ms.is_none())
}

/// A network player of one worker: its search and its network's evaluator, shared by every
/// game of that worker where it plays.
struct NetPlayer {
    name: String,
    searcher: Searcher,
    evaluator: NetEvaluator,
    /// Whether its seats keep their trees across moves ([`MctsConfig::reuse_in_effect`]).
    reuse: bool,
}

/// A network player's move in progress: the position it started from and the decisions made
/// so far (the tree, reused from one decision of the move to the next, travels beside it).
struct Turn {
    start: CamelotState,
    decisions: Vec<u32>,
}

/// One side of a game in flight.
// Two seats per game in flight: the size of the random stream inline costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Seat {
    /// Moves through [`Player::choose`].
    Alone(Box<dyn Player>),
    /// Network player `net` of the worker; `rng` gives a tree seed per move; `turn` holds the
    /// move in progress (boxed: a tree is large and most seats wait with none); `kept` the
    /// tree after the seat's last move, for the next (with tree reuse).
    Batched {
        net: usize,
        rng: ChaCha8Rng,
        turn: Option<Box<(Turn, Tree<CamelotState>)>>,
        kept: Option<Box<Tree<CamelotState>>>,
    },
}

struct Active {
    index: usize,
    game: Game,
    /// White's and Black's seats.
    seats: [Seat; 2],
}

fn side(game: &Game) -> usize {
    match game.position().turn() {
        Color::White => 0,
        Color::Black => 1,
    }
}

fn search_error(player: &str, e: impl std::fmt::Display) -> ArenaError {
    ArenaError::Search { player: player.to_string(), reason: e.to_string() }
}

/// Plays game `a` until a network player is to move (false) or the game has ended (true).
fn move_alone(rules: &Ruleset, max_plies: u32, a: &mut Active) -> Result<bool, ArenaError> {
    loop {
        if adjudicate(&a.game, max_plies).is_some() {
            return Ok(true);
        }
        let Seat::Alone(player) = &mut a.seats[side(&a.game)] else { return Ok(false) };
        let choice = player.choose(&a.game)?;
        if !a.game.legal_moves().contains(&choice.mv) {
            return Err(ArenaError::IllegalChoice { player: player.name(), cpn: rules.to_cpn(a.game.position()) });
        }
        a.game.play(choice.mv);
    }
}

/// What the workers share.
struct Shared<'a> {
    rules: &'a Arc<Ruleset>,
    config: &'a LockstepConfig,
    models: &'a ModelStore,
    count: usize,
    next: AtomicUsize,
    failed: AtomicBool,
    setup: &'a (dyn Fn(usize) -> Result<GameSetup, ArenaError> + Sync),
    finish: &'a (dyn Fn(usize, Finished) -> Result<(), ArenaError> + Sync),
}

/// The state of one worker thread.
struct Worker<'a, 'b> {
    shared: &'b Shared<'a>,
    nets: Vec<NetPlayer>,
    active: Vec<Active>,
    results: Vec<SearchResult>,
}

impl Worker<'_, '_> {
    /// The index of network player `spec` in this worker, created on first use.
    fn net_player(&mut self, spec: &PlayerSpec, config: &MctsConfig) -> Result<usize, ArenaError> {
        let name = spec.to_string();
        if let Some(i) = self.nets.iter().position(|n| n.name == name) {
            return Ok(i);
        }
        let (network, trained) = config.network(self.shared.models, self.shared.rules)?;
        let searcher = Searcher::new(config.search_config(trained.as_ref())).map_err(|e| search_error(&name, e))?;
        self.nets.push(NetPlayer {
            name,
            searcher,
            evaluator: config.evaluator(network, trained.as_ref()),
            reuse: config.reuse_in_effect(),
        });
        Ok(self.nets.len() - 1)
    }

    fn seat(&mut self, spec: &PlayerSpec, rng: ChaCha8Rng) -> Result<Seat, ArenaError> {
        match spec {
            PlayerSpec::Mcts(config) if is_batched(spec) => {
                Ok(Seat::Batched { net: self.net_player(spec, config)?, rng, turn: None, kept: None })
            }
            _ => Ok(Seat::Alone(spec.build_with(self.shared.rules, rng, self.shared.models)?)),
        }
    }

    fn report(&self, a: Active) -> Result<(), ArenaError> {
        (self.shared.finish)(a.index, Finished::of(a.game, self.shared.config.max_plies))
    }

    /// Takes new games until this worker has `capacity` in flight; games without a network
    /// player are played out at once.
    fn refill(&mut self, capacity: usize) -> Result<(), ArenaError> {
        while self.active.len() < capacity && !self.shared.failed.load(Ordering::Relaxed) {
            let index = self.shared.next.fetch_add(1, Ordering::Relaxed);
            if index >= self.shared.count {
                return Ok(());
            }
            let GameSetup { game, specs: [white, black], rngs: [white_rng, black_rng] } = (self.shared.setup)(index)?;
            let seats = [self.seat(&white, white_rng)?, self.seat(&black, black_rng)?];
            let mut active = Active { index, game, seats };
            if move_alone(self.shared.rules, self.shared.config.max_plies, &mut active)? {
                self.report(active)?;
            } else {
                self.active.push(active);
            }
        }
        Ok(())
    }

    /// One decision's search for every game in flight whose mover is network player `net`, all
    /// trees together; completed moves are played.
    fn search_round(&mut self, net: usize) -> Result<(), ArenaError> {
        let max_plies = self.shared.config.max_plies;
        let mut waiting = Vec::new();
        let mut turns = Vec::new();
        let mut trees = Vec::new();
        for (i, a) in self.active.iter_mut().enumerate() {
            if adjudicate(&a.game, max_plies).is_some() {
                continue;
            }
            let Seat::Batched { net: n, rng, turn, kept } = &mut a.seats[side(&a.game)] else { continue };
            if *n != net {
                continue;
            }
            let (t, tree) = turn.take().map(|boxed| *boxed).unwrap_or_else(|| {
                // A new move: the kept tree carried through the opponent's reply, or a new one;
                // seeded as the one-game player seeds it.
                let start = CamelotState::from_game(&a.game);
                let tree = tree_for_move(kept.take().map(|tree| *tree), &start, rng.random());
                (Turn { start, decisions: Vec::new() }, tree)
            });
            waiting.push(i);
            turns.push(t);
            trees.push(tree);
        }
        if waiting.is_empty() {
            return Ok(());
        }
        let player = &mut self.nets[net];
        player
            .searcher
            .search_into(&mut trees, &mut player.evaluator, &mut self.results)
            .map_err(|e| search_error(&player.name, e))?;
        let (name, reuse) = (&player.name, player.reuse);
        for (((i, mut turn), mut tree), result) in waiting.into_iter().zip(turns).zip(trees).zip(&self.results) {
            turn.decisions.push(result.action);
            tree.advance(result.action).map_err(|e| search_error(name, e))?;
            let a = &mut self.active[i];
            if tree.root_state().is_mid_move() {
                if let Seat::Batched { turn: slot, .. } = &mut a.seats[side(&a.game)] {
                    *slot = Some(Box::new((turn, tree)));
                }
                continue;
            }
            // The move is complete: find it among the turn's moves and play it.
            let index = (0..turn.start.legal_moves().len()).find(|&k| turn.start.actions_for_move(k) == turn.decisions);
            let Some(index) = index else {
                let cpn = self.shared.rules.to_cpn(a.game.position());
                return Err(ArenaError::IllegalChoice { player: name.clone(), cpn });
            };
            let mover = side(&a.game);
            a.game.play(turn.start.legal_moves()[index]);
            if reuse {
                if let Seat::Batched { kept, .. } = &mut a.seats[mover] {
                    *kept = Some(Box::new(tree));
                }
            }
        }
        Ok(())
    }

    fn run(&mut self, capacity: usize) -> Result<(), ArenaError> {
        let (rules, max_plies) = (self.shared.rules, self.shared.config.max_plies);
        loop {
            if self.shared.failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            self.refill(capacity)?;
            if self.active.is_empty() {
                return Ok(());
            }
            for net in 0..self.nets.len() {
                self.search_round(net)?;
            }
            // Players that move alone answer; finished games leave.
            let mut i = 0;
            while i < self.active.len() {
                if move_alone(rules, max_plies, &mut self.active[i])? {
                    let a = self.active.remove(i);
                    self.report(a)?;
                } else {
                    i += 1;
                }
            }
        }
    }
}

/// Plays games `0..count` (`setup(i)` gives game `i`) on `config.threads` worker threads in
/// lockstep; `finish(i, game)` turns each finished game into a result as it ends (from the
/// worker threads, in finishing order). Returns the results by index, or the first error
/// (after which no new game starts).
pub(crate) fn run_lockstep<T: Send>(
    rules: &Arc<Ruleset>,
    count: usize,
    config: &LockstepConfig,
    models: &ModelStore,
    setup: &(dyn Fn(usize) -> Result<GameSetup, ArenaError> + Sync),
    finish: &(dyn Fn(usize, Finished) -> Result<T, ArenaError> + Sync),
) -> Result<Vec<T>, ArenaError> {
    let threads = config.threads.clamp(1, count.max(1));
    // Spread the games evenly: a worker that took them all would leave the others idle.
    let capacity = config.games_per_thread.clamp(1, count.div_ceil(threads).max(1));
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let store = |index: usize, game: Finished| -> Result<(), ArenaError> {
        let value = finish(index, game)?;
        results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(value);
        Ok(())
    };
    let shared = Shared {
        rules,
        config,
        models,
        count,
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        setup,
        finish: &store,
    };
    let first_error: Mutex<Option<ArenaError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut worker = Worker { shared: &shared, nets: Vec::new(), active: Vec::new(), results: Vec::new() };
                if let Err(err) = worker.run(capacity) {
                    shared.failed.store(true, Ordering::Relaxed);
                    first_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(err);
                }
            });
        }
    });
    if let Some(err) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(err);
    }
    Ok(results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect())
}
