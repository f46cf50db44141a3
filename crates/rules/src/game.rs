//! A game in progress: the positions so far, for repetition, undo and records.

use crate::error::Result;
use crate::movegen::Move;
use crate::outcome::Outcome;
use crate::position::Position;
use crate::ruleset::Ruleset;
use std::sync::Arc;

/// A game: a ruleset, a start position and the moves played since.
#[derive(Clone, Debug)]
pub struct Game {
    rules: Arc<Ruleset>,
    positions: Vec<Position>,
    moves: Vec<Move>,
}

impl Game {
    /// A game from the variant's starting position.
    pub fn new(rules: Arc<Ruleset>) -> Game {
        let start = Position::start(&rules);
        Game::from_position(rules, start)
    }

    /// A game from `start` (whose earlier history is unknown).
    pub fn from_position(rules: Arc<Ruleset>, start: Position) -> Game {
        Game { rules, positions: vec![start], moves: Vec::new() }
    }

    /// The ruleset.
    pub fn rules(&self) -> &Arc<Ruleset> {
        &self.rules
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.positions.last().expect("a game always has its start position")
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// The moves played, in order.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Every position so far, the start first.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// The legal moves of the side to move (none once the game is over).
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut moves = Vec::new();
        if self.rules.static_outcome(self.position()).is_none() {
            self.rules.legal_moves(self.position(), &mut moves);
            if self.outcome_given(!moves.is_empty()).is_some() {
                moves.clear();
            }
        }
        moves
    }

    /// How often the current position has occurred in this game, counting itself. Only
    /// positions since the last capture or castle entry can repeat, so the scan stops there.
    pub fn occurrences(&self) -> u32 {
        crate::outcome::occurrences(self.positions.iter().rev().map(Position::hash), self.position())
    }

    /// The result if the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(outcome) = self.rules.static_outcome(self.position()) {
            return Some(outcome);
        }
        let mut moves = Vec::new();
        self.rules.legal_moves(self.position(), &mut moves);
        self.outcome_given(!moves.is_empty())
    }

    fn outcome_given(&self, has_legal_move: bool) -> Option<Outcome> {
        self.rules.outcome(self.position(), has_legal_move, self.occurrences())
    }

    /// Plays `mv`, which must be one of [`Game::legal_moves`].
    pub fn play(&mut self, mv: Move) {
        let mut next = *self.position();
        self.rules.play(&mut next, &mv);
        self.positions.push(next);
        self.moves.push(mv);
    }

    /// Reads a move in notation (any legal path, with or without move number and annotation)
    /// and plays it.
    pub fn play_text(&mut self, text: &str) -> Result<Move> {
        let mv = self.parse_move(text)?;
        self.play(mv);
        Ok(mv)
    }

    /// Reads a move in notation in the current position, refusing it once the game is over.
    pub fn parse_move(&self, text: &str) -> Result<Move> {
        if let Some(outcome) = self.outcome() {
            return Err(crate::Error::mv(text, format!("the game is over ({outcome})")));
        }
        self.rules.parse_move(self.position(), text)
    }

    /// Takes back the last move; returns it, or `None` at the start.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        self.positions.pop();
        Some(mv)
    }
}
