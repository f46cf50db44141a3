//! The one trait behind every player, and what a player returns.

use crate::error::ArenaError;
use camelot_rules::{Game, Move, Position, Ruleset};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag another thread sets to end a search early (the engine's `stop`): a player that
/// searches looks at it where it looks at its clock and plays the best move found so far.
pub type StopFlag = Arc<AtomicBool>;

/// Whether `stop` is given and set.
pub(crate) fn stop_requested(stop: &Option<StopFlag>) -> bool {
    stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// A player: anything that picks a legal move in a game in progress.
///
/// Players see the whole [`Game`], not only the position, so that the repetition and
/// no-progress rules are judged exactly as the rules judge them. A player may keep state
/// between moves (a transposition table, a random stream); one player object plays one side of
/// one game at a time. `Send` lets a match run its games on worker threads.
pub trait Player: Send {
    /// The player's spec string (`alphabeta:depth=3`), for tables and logs.
    fn name(&self) -> String;

    /// Picks a move for the side to move. Fails with [`ArenaError::GameOver`] if the game has
    /// ended.
    fn choose(&mut self, game: &Game) -> Result<Choice, ArenaError>;

    /// Makes every later search end soon after `stop` is set. Players that do not search
    /// (random, greedy) have nothing to end and ignore it.
    fn set_stop_flag(&mut self, _stop: StopFlag) {}
}

/// A player's decision: the move, and, where the player has them, its evaluation of the
/// position and the line of play it expects (for display after an engine move).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The move to play: one of the game's legal moves.
    pub mv: Move,
    /// The player's evaluation, from the mover's point of view.
    pub evaluation: Option<Evaluation>,
    /// The expected line, starting with `mv` (empty when the player has none).
    pub principal_line: Vec<Move>,
    /// Search statistics for people (`depth 5, 31204 nodes`), empty when there are none.
    pub info: String,
}

impl Choice {
    /// A bare move with no evaluation, line or statistics.
    pub fn plain(mv: Move) -> Choice {
        Choice { mv, evaluation: None, principal_line: Vec::new(), info: String::new() }
    }
}

/// How good a player thinks the position is for the side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Evaluation {
    /// A heuristic score in hundredths of a man (a man is worth 100); shown as `+1.35`.
    Heuristic(i32),
    /// A proven win in this many plies.
    WinIn(u32),
    /// A proven loss in this many plies.
    LossIn(u32),
    /// A proven draw.
    Draw,
    /// An expected score in `[0, 1]` (win 1, draw 1/2, loss 0), as Monte Carlo players estimate.
    ExpectedScore(f64),
}

impl fmt::Display for Evaluation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Evaluation::Heuristic(cp) => write!(f, "{:+.2}", cp as f64 / 100.0),
            Evaluation::WinIn(plies) => write!(f, "win in {plies} plies"),
            Evaluation::LossIn(plies) => write!(f, "loss in {plies} plies"),
            Evaluation::Draw => write!(f, "draw"),
            Evaluation::ExpectedScore(s) => write!(f, "expected score {:.1}%", s * 100.0),
        }
    }
}

/// Writes a line of moves played from `pos` in notation, separated by spaces. It stops at the
/// first move that is not legal where it stands (a stale line from a hash table).
pub fn principal_line_text(rules: &Ruleset, pos: &Position, line: &[Move]) -> String {
    let mut pos = *pos;
    let mut out = Vec::with_capacity(line.len());
    let mut legal = Vec::new();
    for mv in line {
        rules.legal_moves(&pos, &mut legal);
        if !legal.contains(mv) {
            break;
        }
        out.push(rules.move_to_string(&pos, mv));
        rules.play(&mut pos, mv);
    }
    out.join(" ")
}

/// The game's legal moves, or [`ArenaError::GameOver`] if it has ended.
pub(crate) fn legal_or_over(game: &Game) -> Result<Vec<Move>, ArenaError> {
    let moves = game.legal_moves();
    if moves.is_empty() {
        if let Some(outcome) = game.outcome() {
            return Err(ArenaError::GameOver(outcome));
        }
        // The rules say a side without a legal move has lost, so this cannot happen; report it
        // as over rather than panic.
        return Err(ArenaError::Config("no legal move but the game is not over".to_string()));
    }
    Ok(moves)
}
