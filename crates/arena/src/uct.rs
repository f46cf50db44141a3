//! `uct`: plain Monte Carlo tree search over whole moves with random rollouts (UCB1 selection,
//! one node expanded per simulation), played directly on the rules.
//!
//! Each simulation walks down the tree by UCB1, expands one untried move (untried moves are
//! taken in a seeded random order), then plays uniformly random legal moves from there for at
//! most `cap` plies. A rollout that ends by the rules scores 1, 1/2 or 0; one that reaches the
//! cap is adjudicated on material (men 100, knights 160): White's score is
//! `1/2 + tanh(d / 200) / 2` for White's material lead `d`, so one man up scores about 0.73.
//! Repetition and the no-progress rule are judged over the game's history, the tree path and
//! the rollout. The move played is the most visited; its mean score is the evaluation shown.
//!
//! This works on whole moves with the rules crate alone (not the decision-level
//! `camelot-search`), which keeps it a reference independent of the network's search.

use crate::error::ArenaError;
use crate::eval::{material, EvalWeights};
use crate::player::{legal_or_over, stop_requested, Choice, Evaluation, Player, StopFlag};
use camelot_rules::{Color, Game, Move, Outcome, Position, Ruleset};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Settings of `uct`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UctConfig {
    /// Simulations per move.
    pub sims: u32,
    /// Time per move in milliseconds (stops early when reached); `None`: no time limit.
    pub ms: Option<u64>,
    /// Rollout length cap in plies, after which the rollout is adjudicated on material.
    pub cap: u32,
    /// UCB1 exploration constant.
    pub c: f64,
}

impl Default for UctConfig {
    fn default() -> UctConfig {
        UctConfig { sims: 1000, ms: None, cap: 40, c: 1.0 }
    }
}

struct Node {
    pos: Position,
    mv: Option<Move>,
    children: Vec<u32>,
    untried: Vec<Move>,
    visits: u32,
    /// Sum of White's scores (1 win, 1/2 draw, 0 loss) over the simulations through here.
    white_score: f64,
    terminal: Option<Outcome>,
}

/// The `uct` player.
pub struct Uct {
    config: UctConfig,
    name: String,
    rules: Arc<Ruleset>,
    rng: ChaCha8Rng,
    weights: EvalWeights,
    nodes: Vec<Node>,
    history: Vec<u64>,
    scratch: Vec<Move>,
    /// Set by another thread to end the search (the engine's `stop`).
    stop: Option<StopFlag>,
}

/// Tree nodes at most: each holds a position and its untried moves (about 5 KB in a Camelot
/// opening, measured), so a search asked for billions of simulations stops here, under 700 MB,
/// instead of filling the memory.
const MAX_NODES: usize = 1 << 17;

fn white_score(outcome: Outcome) -> f64 {
    match outcome.winner {
        Some(Color::White) => 1.0,
        Some(Color::Black) => 0.0,
        None => 0.5,
    }
}

fn occurrences(history: &[u64], pos: &Position) -> u32 {
    let window = pos.no_progress_plies() as usize;
    history.iter().rev().take(window + 1).step_by(2).filter(|&&h| h == pos.hash()).count() as u32
}

impl Uct {
    /// A `uct` player for `rules` drawing from `rng`. `name` is its spec string.
    pub fn new(rules: Arc<Ruleset>, config: UctConfig, rng: ChaCha8Rng, name: String) -> Uct {
        Uct {
            config,
            name,
            rules,
            rng,
            weights: EvalWeights::default(),
            nodes: Vec::new(),
            history: Vec::new(),
            scratch: Vec::new(),
            stop: None,
        }
    }

    /// A node for `pos`, reached by `mv`; `history` ends with `pos`'s hash.
    fn make_node(&mut self, pos: Position, mv: Option<Move>) -> u32 {
        let rules = &self.rules;
        let mut untried = Vec::new();
        let terminal = match rules.static_outcome(&pos) {
            Some(o) => Some(o),
            None => {
                rules.legal_moves(&pos, &mut untried);
                rules.outcome(&pos, !untried.is_empty(), occurrences(&self.history, &pos))
            }
        };
        if terminal.is_some() {
            untried.clear();
        }
        untried.shuffle(&mut self.rng);
        self.nodes.push(Node { pos, mv, children: Vec::new(), untried, visits: 0, white_score: 0.0, terminal });
        (self.nodes.len() - 1) as u32
    }

    fn select(&self, parent: u32) -> u32 {
        let node = &self.nodes[parent as usize];
        let mover_is_white = node.pos.turn() == Color::White;
        let log_n = (node.visits.max(1) as f64).ln();
        let mut best = node.children[0];
        let mut best_value = f64::NEG_INFINITY;
        for &c in &node.children {
            let child = &self.nodes[c as usize];
            let n = child.visits.max(1) as f64;
            let mean = child.white_score / n;
            let q = if mover_is_white { mean } else { 1.0 - mean };
            let value = q + self.config.c * (log_n / n).sqrt();
            if value > best_value {
                best_value = value;
                best = c;
            }
        }
        best
    }

    /// A random playout from `pos` (whose hash ends `self.history`), White's score.
    fn rollout(&mut self, start: &Position) -> f64 {
        let rules = Arc::clone(&self.rules);
        let mark = self.history.len();
        let mut pos = *start;
        let mut score = None;
        for _ in 0..self.config.cap {
            let outcome = match rules.static_outcome(&pos) {
                Some(o) => Some(o),
                None => {
                    rules.legal_moves(&pos, &mut self.scratch);
                    rules.outcome(&pos, !self.scratch.is_empty(), occurrences(&self.history, &pos))
                }
            };
            if let Some(o) = outcome {
                score = Some(white_score(o));
                break;
            }
            let mv = self.scratch[self.rng.random_range(0..self.scratch.len())];
            rules.play(&mut pos, &mv);
            self.history.push(pos.hash());
        }
        let score = score.unwrap_or_else(|| match rules.static_outcome(&pos) {
            Some(o) => white_score(o),
            None => {
                let lead = material(&pos, Color::White, &self.weights) - material(&pos, Color::Black, &self.weights);
                0.5 + 0.5 * (lead as f64 / 200.0).tanh()
            }
        });
        self.history.truncate(mark);
        score
    }
}

impl Player for Uct {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Result<Choice, ArenaError> {
        let moves = legal_or_over(game)?;
        let started = Instant::now();
        let deadline = self.config.ms.map(|ms| started + Duration::from_millis(ms));
        self.nodes.clear();
        self.history.clear();
        self.history.extend(game.positions().iter().map(|p| p.hash()));
        let base = self.history.len();
        let root = self.make_node(*game.position(), None);
        let mut sims = 0;
        let mut path = Vec::new();
        while sims < self.config.sims.max(1) {
            let out_of_time = deadline.is_some_and(|d| Instant::now() >= d);
            if sims > 0 && (out_of_time || self.nodes.len() >= MAX_NODES || stop_requested(&self.stop)) {
                break;
            }
            sims += 1;
            path.clear();
            path.push(root);
            self.history.truncate(base);
            let mut at = root;
            loop {
                let node = &self.nodes[at as usize];
                if node.terminal.is_some() {
                    break;
                }
                if !node.untried.is_empty() {
                    let mv = self.nodes[at as usize].untried.pop().expect("checked non-empty");
                    let mut pos = self.nodes[at as usize].pos;
                    self.rules.play(&mut pos, &mv);
                    self.history.push(pos.hash());
                    let child = self.make_node(pos, Some(mv));
                    self.nodes[at as usize].children.push(child);
                    path.push(child);
                    at = child;
                    break;
                }
                at = self.select(at);
                self.history.push(self.nodes[at as usize].pos.hash());
                path.push(at);
            }
            let leaf = &self.nodes[at as usize];
            let score = match leaf.terminal {
                Some(o) => white_score(o),
                None => {
                    let pos = leaf.pos;
                    self.rollout(&pos)
                }
            };
            for &n in &path {
                let node = &mut self.nodes[n as usize];
                node.visits += 1;
                node.white_score += score;
            }
        }

        let most_visited = |nodes: &[Node], at: u32| -> Option<u32> {
            nodes[at as usize].children.iter().copied().max_by_key(|&c| nodes[c as usize].visits)
        };
        let best = most_visited(&self.nodes, root).expect("at least one simulation expands a child");
        let child = &self.nodes[best as usize];
        let mv = child.mv.expect("children carry their move");
        debug_assert!(moves.contains(&mv));
        let mean = child.white_score / child.visits.max(1) as f64;
        let expected = if game.position().turn() == Color::White { mean } else { 1.0 - mean };
        let mut line = vec![mv];
        let mut at = best;
        while let Some(next) = most_visited(&self.nodes, at) {
            if self.nodes[next as usize].visits < 2 || line.len() >= 12 {
                break;
            }
            line.push(self.nodes[next as usize].mv.expect("children carry their move"));
            at = next;
        }
        let info =
            format!("{sims} simulations, {} visits to the move, {} ms", child.visits, started.elapsed().as_millis());
        Ok(Choice { mv, evaluation: Some(Evaluation::ExpectedScore(expected)), principal_line: line, info })
    }

    fn set_stop_flag(&mut self, stop: StopFlag) {
        self.stop = Some(stop);
    }
}
