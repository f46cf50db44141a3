//! How strong is the `mcts` player's search when its evaluator is already good? A diagnostic
//! for issue work on strength, not a player: it replaces the network by the hand-made
//! evaluation of `alphabeta` (`camelot_arena::eval`) and plays the leg-by-leg search at a given
//! number of simulations per decision against `alphabeta:depth=D`.
//!
//! ```text
//! cargo run --release -p camelot-arena --features diagnostics --example search_ceiling -- \
//!     GAMES SIMS DEPTH [static|quiescent] [PRIOR_TEMPERATURE] [material]
//! ```
//!
//! * `static`: the value is `logistic(evaluation / 200)` of the board (inside a move, of the
//!   board the legs so far left).
//! * `quiescent`: the evaluation after the forced captures are played out (as alpha-beta's
//!   capture search does); inside a move, the best completion of the move.
//! * `PRIOR_TEMPERATURE` > 0: priors are a softmax over each action's quiescent value / T
//!   (a one-decision look-ahead, standing in for a trained policy); 0 or absent: uniform.
//! * `material`: the evaluation counts material alone (no advance, castle, mobility, threats).
//!
//! Games start from the match openings (4 random plies, seeded like `camelot match`), each
//! opening played with both colours, on two threads. The last line is the search's score.

use camelot_arena::eval::{EvalWeights, Heuristic};
use camelot_arena::{ply_cap_winner, random_opening, AlphaBeta, AlphaBetaConfig, Player};
use camelot_game::CamelotState;
use camelot_rules::{Color, Outcome, Position, Ruleset};
use camelot_search::{
    EvalError, Evaluations, Evaluator, GameState, SearchConfig, Searcher, TemperatureSchedule, Terminal, Tree, Wdl,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Scores beyond any material count: a decided game.
const DECIDED: i32 = 100_000;
/// Capture sequences are followed this many plies at most.
const MAX_CAPTURE_PLIES: u32 = 12;
/// Evaluation points per unit of the logistic's argument.
const VALUE_SCALE: f32 = 200.0;

thread_local! {
    static QUIESCENT: RefCell<HashMap<u64, i32>> = RefCell::new(HashMap::new());
}

/// The hand-made evaluation as the search's evaluator.
struct HandMade {
    rules: Arc<Ruleset>,
    heuristic: Heuristic,
    quiescent: bool,
    prior_temperature: f32,
}

fn decided(outcome: Outcome, pos: &Position) -> i32 {
    match outcome.winner {
        None => 0,
        Some(winner) if winner == pos.turn() => DECIDED,
        Some(_) => -DECIDED,
    }
}

impl HandMade {
    /// The evaluation of `pos` for its side to move once forced captures are played out.
    fn quiescent_score(&self, pos: &Position, ply: u32) -> i32 {
        if let Some(score) = QUIESCENT.with_borrow(|cache| cache.get(&pos.hash()).copied()) {
            return score;
        }
        let mut moves = Vec::new();
        let score = if let Some(outcome) = self.rules.static_outcome(pos) {
            decided(outcome, pos)
        } else {
            self.rules.legal_moves(pos, &mut moves);
            if let Some(outcome) = self.rules.outcome(pos, !moves.is_empty(), 1) {
                decided(outcome, pos)
            } else if ply >= MAX_CAPTURE_PLIES || !moves.iter().all(|m| m.is_capture()) {
                self.heuristic.evaluate(pos)
            } else {
                let mut best = i32::MIN;
                for mv in &moves {
                    let mut child = *pos;
                    self.rules.play(&mut child, mv);
                    best = best.max(-self.quiescent_score(&child, ply + 1));
                }
                best
            }
        };
        QUIESCENT.with_borrow_mut(|cache| {
            if cache.len() > 4_000_000 {
                cache.clear();
            }
            cache.insert(pos.hash(), score);
        });
        score
    }

    /// The quiescent score of a decision state for its mover: inside a move, its best completion.
    fn state_score(&self, state: &CamelotState) -> i32 {
        if !state.is_mid_move() {
            return self.quiescent_score(state.position(), 0);
        }
        let mut actions = Vec::new();
        state.legal_actions(&mut actions);
        actions.into_iter().map(|a| self.after(state, a)).max().unwrap_or(0)
    }

    /// The mover's quiescent score after `action`.
    fn after(&self, state: &CamelotState, action: u32) -> i32 {
        let mut child = state.clone();
        child.apply(action);
        match child.terminal() {
            Some(Terminal::Draw) => 0,
            Some(Terminal::Win(_)) => DECIDED,
            None if child.is_mid_move() => self.state_score(&child),
            None => -self.quiescent_score(child.position(), 0),
        }
    }

    fn static_score(&self, state: &CamelotState) -> i32 {
        let pos = state.mid_move().map_or(*state.position(), |m| m.position);
        self.heuristic.evaluate(&pos)
    }
}

impl Evaluator<CamelotState> for HandMade {
    fn evaluate(&mut self, states: &[&CamelotState], out: &mut Evaluations) -> Result<(), EvalError> {
        for (state, entry) in states.iter().zip(out.entries_mut()) {
            let score = if self.quiescent { self.state_score(state) } else { self.static_score(state) };
            let win = 1.0 / (1.0 + (-(score as f32) / VALUE_SCALE).exp());
            *entry.value = Wdl::new(win, 0.0, 1.0 - win);
            if self.prior_temperature > 0.0 {
                let logits: Vec<f32> = entry
                    .legal
                    .iter()
                    .map(|&a| (self.after(state, a) as f32).clamp(-3000.0, 3000.0) / self.prior_temperature)
                    .collect();
                let max = logits.iter().copied().fold(f32::MIN, f32::max);
                for (p, l) in entry.priors.iter_mut().zip(logits) {
                    *p = (l - max).exp();
                }
            } else {
                entry.priors.fill(1.0);
            }
        }
        Ok(())
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str, default: T) -> T {
    match args.get(i) {
        None => default,
        Some(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("search_ceiling: argument {i} ({name}): cannot read `{text}`");
            std::process::exit(2)
        }),
    }
}

/// Plays one game from opening `g / 2`, the search White in even games; A's score.
fn play(rules: &Arc<Ruleset>, g: u64, sims: u32, depth: u32, mut evaluator: HandMade) -> f64 {
    let mut game = random_opening(rules, 4, 9000 + g / 2);
    let search_is_white = g.is_multiple_of(2);
    let config = AlphaBetaConfig { depth: Some(depth), ms: None, tt_bits: 18 };
    let mut alphabeta = AlphaBeta::new(rules.clone(), config, format!("alphabeta:depth={depth}"));
    let search = SearchConfig {
        simulations: sims,
        gumbel: false,
        leaves_per_tree: 8,
        temperature: TemperatureSchedule::constant(0.0),
        ..SearchConfig::evaluation()
    };
    let mut searcher = Searcher::new(search).expect("a valid search configuration");
    while game.outcome().is_none() && game.moves().len() < 300 {
        if (game.position().turn() == Color::White) != search_is_white {
            let choice = alphabeta.choose(&game).expect("alpha-beta moves in a game in progress");
            game.play(choice.mv);
            continue;
        }
        let root = CamelotState::from_game(&game);
        let mut tree = Tree::new(root.clone(), g);
        let mut state = root.clone();
        let mut actions = Vec::new();
        loop {
            let result = searcher.search_one(&mut tree, &mut evaluator).expect("the search runs");
            state.apply(result.action);
            actions.push(result.action);
            if !state.is_mid_move() {
                break;
            }
            tree.advance(result.action).expect("the chosen action is in the tree");
        }
        let moves = root.legal_moves();
        let index = (0..moves.len()).find(|&i| root.actions_for_move(i) == actions).expect("a legal move");
        game.play(moves[index]);
    }
    let winner = match game.outcome() {
        Some(outcome) => outcome.winner,
        None => ply_cap_winner(game.position()),
    };
    let score = match winner {
        None => 0.5,
        Some(c) if (c == Color::White) == search_is_white => 1.0,
        Some(_) => 0.0,
    };
    eprintln!(
        "game {g}: search as {}: {score} after {} plies",
        if search_is_white { "White" } else { "Black" },
        game.moves().len()
    );
    score
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let games: u64 = arg(&args, 1, "GAMES", 20);
    let sims: u32 = arg(&args, 2, "SIMS", 200);
    let depth: u32 = arg(&args, 3, "DEPTH", 2);
    let quiescent = args.get(4).is_some_and(|m| m == "quiescent");
    let prior_temperature: f32 = arg(&args, 5, "PRIOR_TEMPERATURE", 0.0);
    let material_only = args.get(6).is_some_and(|m| m == "material");
    if sims == 0 || !(prior_temperature >= 0.0 && prior_temperature.is_finite()) {
        eprintln!("search_ceiling: SIMS must be at least 1 and PRIOR_TEMPERATURE finite and >= 0");
        std::process::exit(2);
    }
    let rules = Arc::new(Ruleset::variant("camelot").expect("the camelot variant"));
    let weights = if material_only {
        EvalWeights {
            advance_man: 0,
            advance_knight: 0,
            near_castle: 0,
            castle: 0,
            mobility: 0,
            threat: 0,
            ..EvalWeights::default()
        }
    } else {
        EvalWeights::default()
    };
    let scores: Vec<f64> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2u64)
            .map(|t| {
                let rules = rules.clone();
                scope.spawn(move || {
                    (t..games)
                        .step_by(2)
                        .map(|g| {
                            let evaluator = HandMade {
                                rules: rules.clone(),
                                heuristic: Heuristic::with_weights(&rules, weights),
                                quiescent,
                                prior_temperature,
                            };
                            play(&rules, g, sims, depth, evaluator)
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().expect("a game thread")).collect()
    });
    let total: f64 = scores.iter().sum();
    println!(
        "search at {sims} simulations, {} value{}{}, against alphabeta:depth={depth}: {:.1}% of {} games",
        if quiescent { "quiescent" } else { "static" },
        if material_only { " (material only)" } else { "" },
        if prior_temperature > 0.0 { format!(", look-ahead priors at T={prior_temperature}") } else { String::new() },
        100.0 * total / scores.len().max(1) as f64,
        scores.len()
    );
}
