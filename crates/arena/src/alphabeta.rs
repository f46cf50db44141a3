//! `alphabeta`: iterative-deepening principal-variation search with a transposition table,
//! move ordering and a capture search, over the hand-made evaluation of [`crate::eval`].
//!
//! * **Rules exactly**: every node asks the rules for its outcome, with the number of earlier
//!   occurrences counted over the game's history and the search path, so threefold repetition
//!   and the no-progress rule end lines as they end games. Wins score `WIN - ply` and losses
//!   `-(WIN - ply)`: a quicker win and a slower loss are preferred. Draws score 0.
//! * **Capture search**: captures are compulsory in Camelot, so at the horizon a side that must
//!   capture cannot "stand pat": the search goes on through forced captures (up to a ply limit)
//!   and evaluates the first position where the side to move has a free choice.
//! * **Move ordering**: the hash-table move, then captures (most material taken first), then
//!   moves into the enemy castle, then two killer moves per ply, then the history heuristic.
//! * **Transposition table**: keyed by [`camelot_rules::Position::hash`] (placement, side to
//!   move, castle moves used; not the no-progress counter, so a stored score may be slightly
//!   off close to the no-progress limit, as in chess engines). Its move is only used after it
//!   is found in the node's legal list, so a hash collision cannot play an illegal move.
//! * **Limits**: a fixed depth (`depth=N`), a time per move (`ms=N`: a new iteration starts
//!   only in the first half of the budget and a running one is abandoned at the deadline), or
//!   both. Fixed depth is deterministic; time is not.

use crate::error::ArenaError;
use crate::eval::Heuristic;
use crate::player::{legal_or_over, stop_requested, Choice, Evaluation, Player, StopFlag};
use camelot_rules::{Color, Game, Move, Outcome, Position, Ruleset};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Score of a win at the root; a win `p` plies away scores `WIN - p`.
const WIN: i32 = 1_000_000;
/// Deepest ply the search reaches, capture search included.
const MAX_PLY: usize = 96;
/// Scores beyond this are wins or losses.
const WIN_BOUND: i32 = WIN - 1000;
const INF: i32 = WIN + 1;

/// Settings of `alphabeta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlphaBetaConfig {
    /// Maximum nominal depth in plies (capture search goes further); `None`: as deep as time
    /// allows (at most 64).
    pub depth: Option<u32>,
    /// Time per move in milliseconds; `None`: no time limit.
    pub ms: Option<u64>,
    /// log2 of the transposition table's entry count.
    pub tt_bits: u32,
}

impl Default for AlphaBetaConfig {
    fn default() -> AlphaBetaConfig {
        AlphaBetaConfig { depth: Some(3), ms: None, tt_bits: 18 }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    mv: Option<Move>,
    score: i32,
    depth: i16,
    bound: Bound,
}

/// The `alphabeta` player. It keeps its hash table, killers and history between moves of one
/// game.
pub struct AlphaBeta {
    config: AlphaBetaConfig,
    name: String,
    eval: Heuristic,
    rules: Arc<Ruleset>,
    tt: Vec<Option<Entry>>,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// Hashes of the game's positions, then of the search path; the last is the current node.
    stack: Vec<u64>,
    pv: Vec<Vec<Move>>,
    buffers: Vec<Vec<Move>>,
    nodes: u64,
    deadline: Option<Instant>,
    /// Set by another thread to end the search (the engine's `stop`).
    stop: Option<StopFlag>,
    stopped: bool,
}

impl AlphaBeta {
    /// An `alphabeta` player for `rules`. `name` is its spec string.
    pub fn new(rules: Arc<Ruleset>, config: AlphaBetaConfig, name: String) -> AlphaBeta {
        let eval = Heuristic::new(&rules);
        AlphaBeta {
            config,
            name,
            eval,
            rules,
            tt: vec![None; 1usize << config.tt_bits.clamp(4, 26)],
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![0; 256 * 256],
            stack: Vec::new(),
            pv: vec![Vec::new(); MAX_PLY + 1],
            buffers: vec![Vec::new(); MAX_PLY + 1],
            nodes: 0,
            deadline: None,
            stop: None,
            stopped: false,
        }
    }

    /// Nodes visited by the last search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    fn terminal_score(outcome: Outcome, to_move: Color, ply: usize) -> i32 {
        match outcome.winner {
            None => 0,
            Some(w) if w == to_move => WIN - ply as i32,
            Some(_) => -(WIN - ply as i32),
        }
    }

    /// Occurrences of the current node's position (the top of the stack), counting itself,
    /// exactly as [`Game::occurrences`] counts them.
    fn occurrences(&self, pos: &Position) -> u32 {
        let window = pos.no_progress_plies() as usize;
        let h = pos.hash();
        self.stack.iter().rev().take(window + 1).step_by(2).filter(|&&x| x == h).count() as u32
    }

    fn tt_index(&self, key: u64) -> usize {
        (key as usize) & (self.tt.len() - 1)
    }

    fn order(&self, pos: &Position, moves: &mut [Move], tt_move: Option<Move>, ply: usize) {
        let w = self.eval.weights();
        let opp_castle = self.rules.board().opp_castle(pos.turn());
        let killers = self.killers[ply];
        let key = |mv: &Move| -> i64 {
            if Some(*mv) == tt_move {
                return i64::MAX;
            }
            if mv.is_capture() {
                let knights = (mv.captures & pos.knights()).count() as i64;
                let men = mv.captures.count() as i64 - knights;
                return 10_000_000 + knights * w.knight as i64 + men * w.man as i64;
            }
            if opp_castle.contains(mv.to) {
                return 9_000_000;
            }
            if killers[0] == Some(*mv) {
                return 8_000_001;
            }
            if killers[1] == Some(*mv) {
                return 8_000_000;
            }
            self.history[mv.from.index() * 256 + mv.to.index()] as i64
        };
        moves.sort_by_cached_key(|mv| std::cmp::Reverse(key(mv)));
    }

    fn negamax(&mut self, pos: &Position, depth: i32, ply: usize, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        self.pv[ply].clear();
        if self.nodes & 1023 == 0
            && (self.deadline.is_some_and(|deadline| Instant::now() >= deadline) || stop_requested(&self.stop))
        {
            self.stopped = true;
        }
        if self.stopped {
            return 0;
        }
        let rules = Arc::clone(&self.rules);
        if let Some(outcome) = rules.static_outcome(pos) {
            return Self::terminal_score(outcome, pos.turn(), ply);
        }
        let mut moves = std::mem::take(&mut self.buffers[ply]);
        rules.legal_moves(pos, &mut moves);
        if let Some(outcome) = rules.outcome(pos, !moves.is_empty(), self.occurrences(pos)) {
            self.buffers[ply] = moves;
            return Self::terminal_score(outcome, pos.turn(), ply);
        }
        let must_capture = moves.iter().all(|m| m.is_capture());
        if (depth <= 0 && !must_capture) || ply >= MAX_PLY - 1 {
            self.buffers[ply] = moves;
            return self.eval.evaluate(pos);
        }

        let key = pos.hash();
        let slot = self.tt_index(key);
        let mut tt_move = None;
        if let Some(e) = self.tt[slot].filter(|e| e.key == key) {
            tt_move = e.mv.filter(|m| moves.contains(m));
            if ply > 0 && e.depth as i32 >= depth {
                let score = from_tt(e.score, ply);
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cut {
                    if let Some(m) = tt_move {
                        self.pv[ply].push(m);
                    }
                    self.buffers[ply] = moves;
                    return score;
                }
            }
        }
        self.order(pos, &mut moves, tt_move, ply);

        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = None;
        for (i, mv) in moves.iter().enumerate() {
            let mut child = *pos;
            rules.play(&mut child, mv);
            self.stack.push(child.hash());
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha)
            } else {
                let s = -self.negamax(&child, depth - 1, ply + 1, -alpha - 1, -alpha);
                if s > alpha && s < beta && !self.stopped {
                    -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha)
                } else {
                    s
                }
            };
            self.stack.pop();
            if self.stopped {
                self.buffers[ply] = moves;
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(*mv);
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(*mv);
                    head[ply].extend_from_slice(&tail[0]);
                    if alpha >= beta {
                        if !mv.is_capture() {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(*mv) {
                                k[1] = k[0];
                                k[0] = Some(*mv);
                            }
                            let h = &mut self.history[mv.from.index() * 256 + mv.to.index()];
                            *h = (*h + depth.max(1) * depth.max(1)).min(1_000_000);
                        }
                        break;
                    }
                }
            }
        }
        self.buffers[ply] = moves;
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha0 {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt[slot] =
            Some(Entry { key, mv: best_move, score: to_tt(best, ply), depth: depth.clamp(-100, 100) as i16, bound });
        best
    }
}

/// Win scores are stored relative to the node, read back relative to the root.
fn to_tt(score: i32, ply: usize) -> i32 {
    if score > WIN_BOUND {
        score + ply as i32
    } else if score < -WIN_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn from_tt(score: i32, ply: usize) -> i32 {
    if score > WIN_BOUND {
        score - ply as i32
    } else if score < -WIN_BOUND {
        score + ply as i32
    } else {
        score
    }
}

fn evaluation_of(score: i32) -> Evaluation {
    if score > WIN_BOUND {
        Evaluation::WinIn((WIN - score) as u32)
    } else if score < -WIN_BOUND {
        Evaluation::LossIn((WIN + score) as u32)
    } else {
        Evaluation::Heuristic(score)
    }
}

impl Player for AlphaBeta {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Result<Choice, ArenaError> {
        let moves = legal_or_over(game)?;
        let started = Instant::now();
        self.deadline = self.config.ms.map(|ms| started + Duration::from_millis(ms));
        self.stopped = false;
        self.nodes = 0;
        for h in self.history.iter_mut() {
            *h /= 4;
        }
        for k in self.killers.iter_mut() {
            *k = [None; 2];
        }
        self.stack.clear();
        self.stack.extend(game.positions().iter().map(|p| p.hash()));
        let root = *game.position();
        let max_depth = self.config.depth.unwrap_or(64).clamp(1, 64) as i32;

        let mut best: Option<(Move, i32, Vec<Move>, i32)> = None;
        if moves.len() == 1 && self.config.ms.is_some() {
            let mv = moves[0];
            return Ok(Choice { mv, evaluation: None, principal_line: vec![mv], info: "only move".to_string() });
        }
        for depth in 1..=max_depth {
            let score = self.negamax(&root, depth, 0, -INF, INF);
            if self.stopped {
                break;
            }
            let line = self.pv[0].clone();
            let mv = line.first().copied().filter(|m| moves.contains(m)).unwrap_or(moves[0]);
            best = Some((mv, score, line, depth));
            if score.abs() > WIN_BOUND {
                break; // a proven result does not change with depth
            }
            if let Some(ms) = self.config.ms {
                if started.elapsed() >= Duration::from_millis(ms / 2) {
                    break;
                }
            }
        }
        let elapsed = started.elapsed().as_millis();
        Ok(match best {
            Some((mv, score, line, depth)) => Choice {
                mv,
                evaluation: Some(evaluation_of(score)),
                principal_line: if line.first() == Some(&mv) { line } else { vec![mv] },
                info: format!("depth {depth}, {} nodes, {elapsed} ms", self.nodes),
            },
            // Not even depth 1 finished in time: fall back to the best-ordered move.
            None => {
                let mut ordered = moves.clone();
                self.order(&root, &mut ordered, None, 0);
                Choice {
                    mv: ordered[0],
                    evaluation: None,
                    principal_line: vec![ordered[0]],
                    info: format!("out of time, {} nodes, {elapsed} ms", self.nodes),
                }
            }
        })
    }

    fn set_stop_flag(&mut self, stop: StopFlag) {
        self.stop = Some(stop);
    }
}
