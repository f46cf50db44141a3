//! The decision-level Camelot state the search walks.

use crate::action::{ActionCodec, Decision};
use camelot_rules::{
    Bitboard, Color, Game, LegTrie, Move, MoveKind, Outcome, Path, Position, Ruleset, Square, TrieScratch,
};
use camelot_search::{GameState, Side, Terminal};
use std::sync::{Arc, Mutex, OnceLock};

/// One hash of the game's history: the positions that can still repeat.
#[derive(Debug)]
struct History {
    hash: u64,
    previous: Option<Arc<History>>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<TrieScratch> = std::cell::RefCell::new(TrieScratch::new());
}

/// Everything about the position at the start of a turn, shared by every state inside it.
#[derive(Debug)]
struct Turn {
    position: Position,
    /// The turn's legal moves as a trie of legs, quiet canters deferred below their first leg
    /// where a piece has nothing else (see [`Ruleset::leg_trie_deferring_canters`]): what the
    /// search walks.
    trie: LegTrie,
    /// The canters of each piece whose deferred legs a state has entered, built then.
    canters: Mutex<Vec<(Square, Arc<LegTrie>)>>,
    /// The full trie, whose `complete` indices number the moves: built on first use, by the
    /// methods that name moves by index (not by the search).
    full: OnceLock<LegTrie>,
    outcome: Option<Outcome>,
    history: Arc<History>,
}

impl Turn {
    fn new(rules: &Ruleset, position: Position, previous: Option<Arc<History>>) -> Turn {
        // Positions before the last capture or castle entry cannot recur, so history stops there.
        let previous = if position.no_progress_plies() == 0 { None } else { previous };
        let history = Arc::new(History { hash: position.hash(), previous });
        let mut outcome = rules.static_outcome(&position);
        let trie = if outcome.is_none() {
            // The trie is built straight from move generation with the thread's scratch
            // buffers: a search builds a turn at nearly every expansion. The moves themselves
            // are not kept: a completed path names its move (see `move_at`).
            let trie = SCRATCH.with_borrow_mut(|scratch| rules.leg_trie_deferring_canters(&position, scratch));
            outcome = rules.outcome(&position, trie.moves() > 0, occurrences(&history, &position));
            if outcome.is_some() {
                LegTrie::empty()
            } else {
                trie
            }
        } else {
            LegTrie::empty()
        };
        Turn { position, trie, canters: Mutex::new(Vec::new()), full: OnceLock::new(), outcome, history }
    }

    /// The full trie of the turn's moves (none once the game is over).
    fn full(&self, rules: &Ruleset) -> &LegTrie {
        self.full.get_or_init(|| {
            if self.outcome.is_some() {
                LegTrie::empty()
            } else {
                SCRATCH.with_borrow_mut(|scratch| rules.leg_trie(&self.position, scratch))
            }
        })
    }

    /// The canters of the piece on `origin` below its deferred first legs, built by the first
    /// state that enters one and shared by the turn's other states.
    fn canters(&self, rules: &Ruleset, origin: Square) -> Arc<LegTrie> {
        // A poisoned lock only means another thread panicked while building: the list itself
        // is never left half-written.
        let mut built = self.canters.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, trie)) = built.iter().find(|(o, _)| *o == origin) {
            return trie.clone();
        }
        let trie =
            Arc::new(SCRATCH.with_borrow_mut(|scratch| rules.deferred_canter_trie(&self.position, origin, scratch)));
        built.push((origin, trie.clone()));
        trie
    }

    /// The move that ends at node `node` of `trie` (the turn's trie, its full trie or a
    /// piece's canters): its origin, landing and the pieces its jump legs take (the legs name it
    /// completely).
    fn move_at(&self, rules: &Ruleset, trie: &LegTrie, node: u32) -> Move {
        // Walked from the last leg up to the root: every new turn of a search starts here, so
        // the legs are not collected into a vector first.
        let (_, last) = trie.parent(node).expect("a move has at least one leg");
        let (to, mut from) = (last.to, last.from);
        let mut captures = Bitboard::EMPTY;
        let mut cantered = false;
        let mut at = node;
        while let Some((parent, leg)) = trie.parent(at) {
            if leg.jump {
                captures.insert(Square::from_index((leg.from.index() + leg.to.index()) / 2));
            } else if leg.from.file().abs_diff(leg.to.file()) == 2 || leg.from.rank().abs_diff(leg.to.rank()) == 2 {
                cantered = true;
            }
            from = leg.from;
            at = parent;
        }
        let opp_castle = rules.board().opp_castle(self.position.turn());
        let kind = match (cantered, captures.any()) {
            (true, true) => MoveKind::Charge,
            (false, true) => MoveKind::Jump,
            (true, false) => MoveKind::Canter,
            (false, false) if opp_castle.contains(from) && opp_castle.contains(to) => MoveKind::CastleMove,
            (false, false) => MoveKind::Step,
        };
        Move { captures, from, to, kind }
    }

    /// Full-trie nodes where moves end, by move index.
    fn move_nodes(&self, rules: &Ruleset) -> Vec<u32> {
        let full = self.full(rules);
        let mut nodes = vec![0; full.moves()];
        for n in 0..full.len() as u32 {
            if let Some(i) = full.complete(n) {
                nodes[i as usize] = n;
            }
        }
        nodes
    }

    /// The full-trie node where move `index` ends.
    fn node_of(&self, rules: &Ruleset, index: usize) -> u32 {
        let full = self.full(rules);
        (0..full.len() as u32).find(|&n| full.complete(n) == Some(index as u32)).expect("every move ends at a node")
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
/// into the turn's trie of legs the mover has gone. Cheap to clone (a few reference counts and
/// an index), as the search clones one per expanded node.
#[derive(Clone, Debug)]
pub struct CamelotState {
    rules: Arc<Ruleset>,
    codec: ActionCodec,
    turn: Arc<Turn>,
    /// The piece's canters this state is inside, past a deferred first leg of the turn's trie
    /// (`node` is then a node of this trie).
    canters: Option<Arc<LegTrie>>,
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
        CamelotState { rules, codec, turn, canters: None, node: 0 }
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
        CamelotState { rules, codec, turn, canters: None, node: 0 }
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

    /// Whether `other` is the same state at the start of a turn: the same variant and
    /// position, no leg made in either, and the same positions since the last capture or
    /// castle entry (the history that repetitions read, so that both end the game alike). A
    /// search tree kept from an earlier move may continue only into such a state.
    pub fn is_same_turn(&self, other: &CamelotState) -> bool {
        if self.node != 0
            || other.node != 0
            || self.turn.position != other.turn.position
            || self.rules.name() != other.rules.name()
        {
            return false;
        }
        let (mut a, mut b) = (Some(&self.turn.history), Some(&other.turn.history));
        loop {
            match (a, b) {
                (None, None) => return true,
                (Some(x), Some(y)) if x.hash == y.hash => {
                    a = x.previous.as_ref();
                    b = y.previous.as_ref();
                }
                _ => return false,
            }
        }
    }

    /// The turn's legal moves, by move index (the indices that
    /// [`CamelotState::actions_for_move`] and [`CamelotState::path_of`] take).
    pub fn legal_moves(&self) -> Vec<Move> {
        let full = self.turn.full(&self.rules);
        self.turn.move_nodes(&self.rules).into_iter().map(|n| self.turn.move_at(&self.rules, full, n)).collect()
    }

    /// The canonical path of move `index` of [`CamelotState::legal_moves`].
    pub fn path_of(&self, index: usize) -> Path {
        let legs = self.turn.full(&self.rules).legs_to(self.turn.node_of(&self.rules, index));
        let mut squares = vec![legs[0].from];
        squares.extend(legs.iter().map(|l| l.to));
        let first_jump = legs.iter().position(|l| l.jump).unwrap_or(legs.len());
        Path { squares, first_jump }
    }

    /// How often the position at the start of this turn has occurred, counting itself.
    pub fn occurrences(&self) -> u32 {
        occurrences(&self.turn.history, &self.turn.position)
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
        let legs = self.trie().legs_to(self.node);
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
        let full = self.turn.full(&self.rules);
        let node = self.turn.node_of(&self.rules, index);
        let mut actions: Vec<u32> =
            full.legs_to(node).into_iter().map(|leg| self.codec.encode_leg(leg, mover)).collect();
        if full.has_children(node) {
            actions.push(self.codec.stop());
        }
        actions
    }

    /// Plays a whole move (one of [`CamelotState::legal_moves`]) from the start of the turn.
    pub fn play_move(&mut self, mv: &Move) {
        debug_assert_eq!(self.node, 0, "whole moves are played from the start of a turn");
        let same = |m: &Move| m.from == mv.from && m.to == mv.to && m.captures == mv.captures;
        let legal = self.legal_moves().into_iter().find(same).expect("a legal move");
        self.play(&legal);
    }

    /// The trie `node` belongs to: a piece's canters past a deferred leg, or the turn's trie.
    fn trie(&self) -> &LegTrie {
        self.canters.as_deref().unwrap_or(&self.turn.trie)
    }

    /// Plays the move that ends at node `node` of this state's trie and starts the next turn.
    fn complete_at(&mut self, node: u32) {
        let mv = self.turn.move_at(&self.rules, self.trie(), node);
        self.play(&mv);
    }

    /// Plays `mv` (legal in this turn) and starts the next turn.
    fn play(&mut self, mv: &Move) {
        let mut next = self.turn.position;
        self.rules.play(&mut next, mv);
        self.turn = Arc::new(Turn::new(&self.rules, next, Some(self.turn.history.clone())));
        self.canters = None;
        self.node = 0;
    }

    fn player(color: Color) -> Side {
        match color {
            Color::White => Side::First,
            Color::Black => Side::Second,
        }
    }
}

impl GameState for CamelotState {
    fn action_space(&self) -> u32 {
        self.codec.action_space()
    }

    fn legal_actions(&self, out: &mut Vec<u32>) {
        let mover = self.turn.position.turn();
        let trie = self.trie();
        out.reserve(128);
        for (leg, _) in trie.children(self.node) {
            out.push(self.codec.encode_leg(leg, mover));
        }
        if trie.can_stop(self.node) {
            out.push(self.codec.stop());
        }
    }

    fn apply(&mut self, action: u32) {
        let mover = self.turn.position.turn();
        let trie = self.trie();
        match self.codec.decode(action, mover) {
            Some(Decision::Stop) => {
                debug_assert!(trie.can_stop(self.node), "stop is legal only where a move ends");
                self.complete_at(self.node);
            }
            Some(Decision::Leg { from, direction, distance }) => {
                let to = ActionCodec::target(from, direction, distance).expect("a legal leg stays on the board");
                let child = trie.child(self.node, from, to).expect("apply is given a legal action");
                if trie.is_deferred(child) {
                    // A deferred first canter leg: on into the piece's canters, built on first entry.
                    let canters = self.turn.canters(&self.rules, from);
                    let child =
                        canters.child(LegTrie::ROOT, from, to).expect("a deferred leg starts the piece's canters");
                    if canters.has_children(child) {
                        self.canters = Some(canters);
                        self.node = child;
                    } else {
                        let mv = self.turn.move_at(&self.rules, &canters, child);
                        self.play(&mv);
                    }
                } else if trie.has_children(child) {
                    self.node = child;
                } else {
                    debug_assert!(trie.complete(child).is_some(), "a leaf of the trie completes a move");
                    self.complete_at(child);
                }
            }
            None => panic!("action {action} is outside the action space"),
        }
    }

    fn to_move(&self) -> Side {
        CamelotState::player(self.turn.position.turn())
    }

    fn terminal(&self) -> Option<Terminal> {
        self.turn.outcome.map(|o| match o.winner {
            Some(c) => Terminal::Win(CamelotState::player(c)),
            None => Terminal::Draw,
        })
    }

    /// A leg that completes a winning move: one onto the last square of the opponent's castle
    /// the mover lacks, or a jump that takes the opponent's last piece. Wins by leaving the
    /// opponent without a legal move (rare, and costly to detect) are not looked for, nor
    /// capture-all when the opponent has more than three pieces: a move that takes four is
    /// too rare to be worth checking every jump for.
    fn decisive_action(&self) -> Option<u32> {
        let position = &self.turn.position;
        let mover = position.turn();
        let castle = self.rules.board().opp_castle(mover);
        let castle_win = (position.pieces(mover) & castle).count() + 1 >= self.rules.flags().castle_squares_to_win;
        let capture_win = position.pieces(mover.opponent()).count() <= 3;
        if !(castle_win || capture_win) {
            return None;
        }
        let trie = self.trie();
        let winner = Some(Terminal::Win(self.to_move()));
        for (leg, child) in trie.children(self.node) {
            // Only a leg that completes the move can end the game; entering the castle does (a
            // deferred leg may have continuations: playing it tells).
            let candidate = (castle_win && castle.contains(leg.to)) || (capture_win && leg.jump);
            if candidate && (trie.is_deferred(child) || !trie.has_children(child)) {
                let action = self.codec.encode_leg(leg, mover);
                let mut next = self.clone();
                next.apply(action);
                if next.terminal() == winner {
                    return Some(action);
                }
            }
        }
        None
    }

    fn hash(&self) -> u64 {
        // Inside a piece's canters, node numbers are that trie's: the piece's square tells them
        // from the turn trie's.
        let piece = self
            .canters
            .as_ref()
            .and_then(|c| c.children(LegTrie::ROOT).next())
            .map_or(0, |(leg, _)| leg.from.index() as u64 + 1);
        self.turn.position.hash() ^ (self.node as u64 | piece << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}
