//! A position: placement, side to move and the counters that the rules read.

use crate::bitboard::Bitboard;
use crate::ruleset::Ruleset;
use crate::square::{Color, Piece, Role, Square};

/// A position. It is plain data (`Copy`): the [`Ruleset`] that interprets it is passed beside it,
/// so that search trees can copy positions without reference counting.
///
/// A piece of the side to move standing in its own castle is the piece that must leave it this
/// turn (RULES.md 5.A); no extra field is needed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Position {
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) knights: Bitboard,
    pub(crate) turn: Color,
    pub(crate) castle_moves: [u32; 2],
    pub(crate) no_progress: u32,
    pub(crate) fullmove: u32,
    pub(crate) hash: u64,
}

impl Position {
    /// The variant's starting position.
    pub fn start(rules: &Ruleset) -> Position {
        let mut pos = Position {
            by_color: [Bitboard::EMPTY; 2],
            knights: Bitboard::EMPTY,
            turn: Color::White,
            castle_moves: [0; 2],
            no_progress: 0,
            fullmove: 1,
            hash: 0,
        };
        for color in Color::BOTH {
            for role in [Role::Knight, Role::Man] {
                for sq in rules.setup(color, role) {
                    pos.put(sq, Piece { color, role });
                }
            }
        }
        pos.hash = pos.compute_hash(rules);
        pos
    }

    /// An empty board, White to move, counters at zero, move 1. Used by parsers and tests to
    /// build positions piece by piece; call [`Position::rehash`] after the last change.
    pub fn empty() -> Position {
        Position {
            by_color: [Bitboard::EMPTY; 2],
            knights: Bitboard::EMPTY,
            turn: Color::White,
            castle_moves: [0; 2],
            no_progress: 0,
            fullmove: 1,
            hash: 0,
        }
    }

    /// Puts `piece` on `sq` (which must be empty). Does not update the hash.
    pub fn put(&mut self, sq: Square, piece: Piece) {
        self.by_color[piece.color.index()].insert(sq);
        if piece.role == Role::Knight {
            self.knights.insert(sq);
        }
    }

    /// Sets the side to move. Does not update the hash.
    pub fn set_turn(&mut self, color: Color) {
        self.turn = color;
    }

    /// Sets the castle moves `color` has used. Does not update the hash.
    pub fn set_castle_moves(&mut self, color: Color, count: u32) {
        self.castle_moves[color.index()] = count;
    }

    /// Sets the plies played without progress and the move number.
    pub fn set_counters(&mut self, no_progress_plies: u32, fullmove: u32) {
        self.no_progress = no_progress_plies;
        self.fullmove = fullmove;
    }

    /// Recomputes the hash after direct edits.
    pub fn rehash(&mut self, rules: &Ruleset) {
        self.hash = self.compute_hash(rules);
    }

    /// The side to move.
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// Squares of `color`'s pieces.
    #[inline]
    pub fn pieces(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// Squares of every piece.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// Squares of the knights of both sides.
    #[inline]
    pub fn knights(&self) -> Bitboard {
        self.knights
    }

    /// Squares of `color`'s pieces of `role`.
    #[inline]
    pub fn role(&self, color: Color, role: Role) -> Bitboard {
        match role {
            Role::Knight => self.by_color[color.index()] & self.knights,
            Role::Man => self.by_color[color.index()] & !self.knights,
        }
    }

    /// The piece on `sq`, if any.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let color = if self.by_color[0].contains(sq) {
            Color::White
        } else if self.by_color[1].contains(sq) {
            Color::Black
        } else {
            return None;
        };
        let role = if self.knights.contains(sq) { Role::Knight } else { Role::Man };
        Some(Piece { color, role })
    }

    /// Castle moves `color` has made this game.
    #[inline]
    pub fn castle_moves(&self, color: Color) -> u32 {
        self.castle_moves[color.index()]
    }

    /// Plies since the last capture or move onto the mover's opponent's castle.
    #[inline]
    pub fn no_progress_plies(&self) -> u32 {
        self.no_progress
    }

    /// The move number: 1 at the start, increased after each Black move.
    #[inline]
    pub fn fullmove(&self) -> u32 {
        self.fullmove
    }

    /// Zobrist hash of placement, side to move and castle moves used: exactly the data that
    /// decides repetition (RULES.md 6.6).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The hash recomputed from scratch (incremental updates must always equal it).
    pub fn compute_hash(&self, rules: &Ruleset) -> u64 {
        let z = rules.zobrist();
        let mut h = 0;
        for color in Color::BOTH {
            for role in [Role::Knight, Role::Man] {
                for sq in self.role(color, role) {
                    h ^= z.piece(color, role, sq);
                }
            }
            h ^= z.castle_moves(color, self.castle_moves[color.index()]);
        }
        if self.turn == Color::Black {
            h ^= z.black_to_move;
        }
        h
    }

    /// The position mirrored left to right (an exact symmetry of every variant).
    pub fn mirror_files(&self, rules: &Ruleset) -> Position {
        let board = rules.board();
        let mut p = *self;
        p.by_color = [board.mirror_files(self.by_color[0]), board.mirror_files(self.by_color[1])];
        p.knights = board.mirror_files(self.knights);
        p.hash = p.compute_hash(rules);
        p
    }

    /// The position with colours swapped and the board reflected top to bottom: the same game
    /// seen from the other side.
    pub fn flip_colors(&self, rules: &Ruleset) -> Position {
        let board = rules.board();
        let mut p = *self;
        p.by_color = [board.mirror_ranks(self.by_color[1]), board.mirror_ranks(self.by_color[0])];
        p.knights = board.mirror_ranks(self.knights);
        p.turn = self.turn.opponent();
        p.castle_moves = [self.castle_moves[1], self.castle_moves[0]];
        p.hash = p.compute_hash(rules);
        p
    }
}
