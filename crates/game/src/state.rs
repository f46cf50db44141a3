//! The decision-level Camelot state the search walks.

use crate::action::{ActionCodec, Decision};
use camelot_rules::{Color, FlatPaths, Game, LegTrie, Move, Outcome, Path, Position, Ruleset, Square};
use camelot_search::{Game as SearchGame, Outcome as SearchOutcome, Player};
use std::sync::Arc;

/// One hash of the game's history: the positions that can still repeat.
#[derive(Debug)]
struct History {
    hash: u64,
    previous: Option<Arc<History>>,
}

/// Everything about the position at the start of a turn, shared by every state inside it.
#[derive(Debug)]
struct Turn {
    position: Position,
    moves: Vec<Move>,
    trie: LegTrie,
    outcome: Option<Outcome>,
    history: Arc<History>,
}

impl Turn {
    fn new(rules: &Ruleset, position: Position, previous: Option<Arc<History>>) -> Turn {
        // Positions before the last capture or castle entry cannot recur, so history stops there.
        let previous = if position.no_progress_plies() == 0 { None } else { previous };
        let history = Arc::new(History { hash: position.hash(), previous });
        let mut outcome = rules.static_outcome(&position);
        let mut moves = Vec::new();
        let mut paths = FlatPaths::default();
        if outcome.is_none() {
            rules.legal_moves_and_paths(&position, &mut moves, &mut paths);
            outcome = rules.outcome(&position, !moves.is_empty(), occurrences(&history, &position));
            if outcome.is_some() {
                moves.clear();
                paths.clear();
            }
        }
        let trie = LegTrie::from_paths(&paths);
        Turn { position, moves, trie, outcome, history }
    }

    /// The trie node where move `index` ends.
    fn node_of(&self, index: usize) -> u32 {
        (0..self.trie.len() as u32)
            .find(|&n| self.trie.complete(n) == Some(index as u32))
            .expect("every move ends at a node")
    }
}

/// How often `position` occurs in `history` (which starts with it), same side to move only.
fn occurrences(history: &Arc<History>, position: &Position) -> u32 {
    let window = position.no_progress_plies() as usize + 1;
    let mut count = 0;
    let mut at = Some(history);
    let mut i = 0;
    while let (Some(node), true) = (at, i < window) {
        if i % 2 == 0 && node.hash == position.hash() {
            count += 1;
        }
        at = node.previous.as_ref();
        i += 1;
    }
    count
}

/// The position inside a move: the legs made so far played out on the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MidMove {
    /// The board after the legs so far (side to move unchanged).
    pub position: Position,
    /// Where the moving piece stands now.
    pub moving: Square,
    /// Where it started.
    pub origin: Square,
    /// Legs made so far.
    pub legs: usize,
}

/// A Camelot game state at one decision: the position at the start of the turn, and how far
/// into the turn's trie of legs the mover has gone. Cheap to clone (two reference counts and
/// an index), as the search clones one per expanded node.
#[derive(Clone, Debug)]
pub struct CamelotState {
    rules: Arc<Ruleset>,
    codec: ActionCodec,
    turn: Arc<Turn>,
    node: u32,
}

impl CamelotState {
    /// The variant's start position.
    pub fn new(rules: Arc<Ruleset>) -> CamelotState {
        let start = Position::start(&rules);
        CamelotState::from_position(rules, start)
    }

    /// A state at the start of a turn in `position` (earlier history unknown).
    pub fn from_position(rules: Arc<Ruleset>, position: Position) -> CamelotState {
        let codec = ActionCodec::new(rules.board());
        let turn = Arc::new(Turn::new(&rules, position, None));
        CamelotState { rules, codec, turn, node: 0 }
    }

    /// A state at the current position of `game`, with its history for repetitions.
    pub fn from_game(game: &Game) -> CamelotState {
        let rules = game.rules().clone();
        let positions = game.positions();
        let mut history: Option<Arc<History>> = None;
        for p in &positions[..positions.len() - 1] {
            let previous = if p.no_progress_plies() == 0 { None } else { history };
            history = Some(Arc::new(History { hash: p.hash(), previous }));
        }
        let codec = ActionCodec::new(rules.board());
        let turn = Arc::new(Turn::new(&rules, *game.position(), history));
        CamelotState { rules, codec, turn, node: 0 }
    }

    /// The ruleset.
    pub fn rules(&self) -> &Arc<Ruleset> {
        &self.rules
    }

    /// The action codec of this variant.
    pub fn codec(&self) -> ActionCodec {
        self.codec
    }

    /// The position at the start of the current turn.
    pub fn position(&self) -> &Position {
        &self.turn.position
    }

    /// Whether a move is under way (at least one leg made).
    pub fn is_mid_move(&self) -> bool {
        self.node != 0
    }

    /// The turn's legal moves, in the trie's order (the indices that
    /// [`CamelotState::actions_for_move`] takes).
    pub fn legal_moves(&self) -> &[Move] {
        &self.turn.moves
    }

    /// The canonical path of move `index` of [`CamelotState::legal_moves`].
    pub fn path_of(&self, index: usize) -> Path {
        let legs = self.turn.trie.legs_to(self.turn.node_of(index));
        let mut squares = vec![legs[0].from];
        squares.extend(legs.iter().map(|l| l.to));
        let first_jump = legs.iter().position(|l| l.jump).unwrap_or(legs.len());
        Path { squares, first_jump }
    }

    /// The result, once the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        self.turn.outcome
    }

    /// The board after the legs made so far in this turn.
    pub fn mid_move(&self) -> Option<MidMove> {
        if self.node == 0 {
            return None;
        }
        let legs = self.turn.trie.legs_to(self.node);
        let mut position = self.turn.position;
        let origin = legs[0].from;
        let piece = position.piece_at(origin).expect("the moving piece stands on the origin");
        let mut board_pieces: Vec<(Square, camelot_rules::Piece)> = position
            .occupied()
            .iter()
            .filter(|&s| s != origin)
            .filter_map(|s| Some((s, position.piece_at(s)?)))
            .collect();
        let mut moving = origin;
        for leg in &legs {
            if leg.jump {
                let mid = Square::from_index((leg.from.index() + leg.to.index()) / 2);
                board_pieces.retain(|(s, _)| *s != mid);
            }
            moving = leg.to;
        }
        let mut rebuilt = Position::empty();
        for (s, p) in board_pieces {
            rebuilt.put(s, p);
        }
        rebuilt.put(moving, piece);
        rebuilt.set_turn(position.turn());
        for c in Color::BOTH {
            rebuilt.set_castle_moves(c, position.castle_moves(c));
        }
        rebuilt.set_counters(position.no_progress_plies(), position.fullmove());
        rebuilt.rehash(&self.rules);
        position = rebuilt;
        Some(MidMove { position, moving, origin, legs: legs.len() })
    }

    /// The actions that play move `index` of [`CamelotState::legal_moves`] from the start of
    /// the turn (a `stop` after the last leg where the path could continue).
    pub fn actions_for_move(&self, index: usize) -> Vec<u32> {
        let mover = self.turn.position.turn();
        let node = self.turn.node_of(index);
        let mut actions: Vec<u32> =
            self.turn.trie.legs_to(node).into_iter().map(|leg| self.codec.encode_leg(leg, mover)).collect();
        if self.turn.trie.has_children(node) {
            actions.push(self.codec.stop());
        }
        actions
    }

    /// Plays a whole move (one of [`CamelotState::legal_moves`]) from the start of the turn.
    pub fn play_move(&mut self, mv: &Move) {
        debug_assert_eq!(self.node, 0, "whole moves are played from the start of a turn");
        let index = self.turn.moves.iter().position(|m| m == mv).expect("a legal move");
        self.complete(index as u32);
    }

    fn complete(&mut self, index: u32) {
        let mv = self.turn.moves[index as usize];
        let mut next = self.turn.position;
        self.rules.play(&mut next, &mv);
        self.turn = Arc::new(Turn::new(&self.rules, next, Some(self.turn.history.clone())));
        self.node = 0;
    }

    fn player(color: Color) -> Player {
        match color {
            Color::White => Player::First,
            Color::Black => Player::Second,
        }
    }
}

impl SearchGame for CamelotState {
    fn action_space(&self) -> u32 {
        self.codec.action_space()
    }

    fn legal_actions(&self, out: &mut Vec<u32>) {
        let mover = self.turn.position.turn();
        let trie = &self.turn.trie;
        out.extend(trie.children(self.node).map(|(leg, _)| self.codec.encode_leg(leg, mover)));
        if trie.can_stop(self.node) {
            out.push(self.codec.stop());
        }
    }

    fn apply(&mut self, action: u32) {
        let mover = self.turn.position.turn();
        let trie = &self.turn.trie;
        match self.codec.decode(action, mover) {
            Some(Decision::Stop) => {
                let index = trie.complete(self.node).expect("stop is legal only where a move ends");
                self.complete(index);
            }
            Some(Decision::Leg { from, direction, distance }) => {
                let to = ActionCodec::target(from, direction, distance).expect("a legal leg stays on the board");
                let child = trie.child(self.node, from, to).expect("apply is given a legal action");
                if trie.has_children(child) {
                    self.node = child;
                } else {
                    let index = trie.complete(child).expect("a leaf of the trie completes a move");
                    self.complete(index);
                }
            }
            None => panic!("action {action} is outside the action space"),
        }
    }

    fn to_move(&self) -> Player {
        CamelotState::player(self.turn.position.turn())
    }

    fn terminal(&self) -> Option<SearchOutcome> {
        self.turn.outcome.map(|o| match o.winner {
            Some(c) => SearchOutcome::Win(CamelotState::player(c)),
            None => SearchOutcome::Draw,
        })
    }

    fn hash(&self) -> u64 {
        self.turn.position.hash() ^ (self.node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}
