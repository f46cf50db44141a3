//! End of the game (RULES.md section 6).

use crate::position::Position;
use crate::ruleset::Ruleset;
use crate::square::Color;
use std::fmt;

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum EndReason {
    /// The winner occupies the required squares of the opponent's castle (6.1).
    CastleOccupied,
    /// Neither side has more than one piece (6.2).
    MaterialDraw,
    /// The loser has no pieces left (6.3).
    AllCaptured,
    /// The side to move has no legal move (6.4).
    NoLegalMove,
    /// The same position occurred for the third time (6.6).
    Repetition,
    /// `no_progress_plies` plies without a capture or a move onto the opponent's castle (6.7).
    NoProgress,
}

impl EndReason {
    /// A short description for people.
    pub fn describe(self) -> &'static str {
        match self {
            EndReason::CastleOccupied => "occupies the opponent's castle",
            EndReason::MaterialDraw => "neither side has more than one piece",
            EndReason::AllCaptured => "all opposing pieces captured",
            EndReason::NoLegalMove => "the side to move has no legal move",
            EndReason::Repetition => "the same position occurred three times",
            EndReason::NoProgress => "no capture or castle entry within the no-progress limit",
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Why the game ended.
    pub reason: EndReason,
}

impl Outcome {
    /// The result token of game records: `1-0`, `0-1` or `1/2-1/2`.
    pub fn result_token(&self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(c) => write!(f, "{} wins: {}", c.name(), self.reason.describe()),
            None => write!(f, "draw: {}", self.reason.describe()),
        }
    }
}

impl Ruleset {
    /// The end conditions that need neither the move list nor the game's history (6.1-6.3),
    /// checked as after the last mover's move.
    pub fn static_outcome(&self, pos: &Position) -> Option<Outcome> {
        let flags = self.flags();
        let mover = pos.turn().opponent();
        let opponent = pos.turn();
        let in_castle = pos.pieces(mover) & self.board().opp_castle(mover);
        if in_castle.count() >= flags.castle_squares_to_win {
            return Some(Outcome { winner: Some(mover), reason: EndReason::CastleOccupied });
        }
        if flags.material_draw && pos.pieces(Color::White).count() <= 1 && pos.pieces(Color::Black).count() <= 1 {
            return Some(Outcome { winner: None, reason: EndReason::MaterialDraw });
        }
        if pos.pieces(opponent).is_empty() {
            // RULES.md 7 applies `min_pieces_to_win` to capture-all as well; with the default flags
            // the material draw has already caught every case where it would matter.
            let winner = (pos.pieces(mover).count() >= flags.min_pieces_to_win).then_some(mover);
            return Some(Outcome { winner, reason: EndReason::AllCaptured });
        }
        None
    }

    /// Every end condition in the order of RULES.md section 6, given whether the side to move
    /// has a legal move and how often the current position has occurred (counting itself).
    pub fn outcome(&self, pos: &Position, has_legal_move: bool, occurrences: u32) -> Option<Outcome> {
        if let Some(outcome) = self.static_outcome(pos) {
            return Some(outcome);
        }
        let flags = self.flags();
        if !has_legal_move {
            let mover = pos.turn().opponent();
            let winner = (pos.pieces(mover).count() >= flags.min_pieces_to_win).then_some(mover);
            return Some(Outcome { winner, reason: EndReason::NoLegalMove });
        }
        if flags.repetition_draw && occurrences >= 3 {
            return Some(Outcome { winner: None, reason: EndReason::Repetition });
        }
        if pos.no_progress_plies() >= flags.no_progress_plies {
            return Some(Outcome { winner: None, reason: EndReason::NoProgress });
        }
        None
    }
}

/// How often `pos` has occurred, counting itself, given the hashes of the game's positions from
/// the newest (`pos` itself) back. Only positions with the same side to move, and none before
/// the last capture or castle entry, can equal it, so the scan takes every second hash within
/// the no-progress window.
pub(crate) fn occurrences(newest_first: impl Iterator<Item = u64>, pos: &Position) -> u32 {
    let window = pos.no_progress_plies() as usize + 1;
    newest_first.take(window).step_by(2).filter(|&h| h == pos.hash()).count() as u32
}
