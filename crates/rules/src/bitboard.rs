//! A set of squares as a 256-bit bitboard.
//!
//! Every board of the family fits a 16-file by 16-rank grid (Chivalry, the largest, is 14 x 16),
//! so a square is `rank * 16 + file` and a leap never wraps onto the board: the two spare files
//! on the right absorb every step or leap that leaves the board sideways.

use crate::square::Square;
use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A set of squares, one bit per cell of the 16 x 16 grid.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Bitboard(pub [u64; 4]);

impl Bitboard {
    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard([0; 4]);
    /// Every cell of the grid, on the board or not.
    pub const FULL: Bitboard = Bitboard([u64::MAX; 4]);

    /// The set holding one square.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        let i = sq.index();
        let mut words = [0u64; 4];
        words[i >> 6] = 1u64 << (i & 63);
        Bitboard(words)
    }

    /// Whether the set holds `sq`.
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        let i = sq.index();
        (self.0[i >> 6] >> (i & 63)) & 1 != 0
    }

    /// Adds `sq`.
    #[inline]
    pub fn insert(&mut self, sq: Square) {
        let i = sq.index();
        self.0[i >> 6] |= 1u64 << (i & 63);
    }

    /// Removes `sq`.
    #[inline]
    pub fn remove(&mut self, sq: Square) {
        let i = sq.index();
        self.0[i >> 6] &= !(1u64 << (i & 63));
    }

    /// Flips membership of `sq`.
    #[inline]
    pub fn toggle(&mut self, sq: Square) {
        let i = sq.index();
        self.0[i >> 6] ^= 1u64 << (i & 63);
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        (self.0[0] | self.0[1] | self.0[2] | self.0[3]) == 0
    }

    /// Whether the set is non-empty.
    #[inline]
    pub const fn any(self) -> bool {
        !self.is_empty()
    }

    /// Number of squares in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0[0].count_ones() + self.0[1].count_ones() + self.0[2].count_ones() + self.0[3].count_ones()
    }

    /// The lowest square of the set, if any.
    #[inline]
    pub fn first(self) -> Option<Square> {
        for (w, word) in self.0.iter().enumerate() {
            if *word != 0 {
                return Some(Square::from_index(w * 64 + word.trailing_zeros() as usize));
            }
        }
        None
    }

    /// Whether the set holds more than one square.
    #[inline]
    pub fn more_than_one(self) -> bool {
        self.count() > 1
    }

    /// Every cell moved by `offset` grid cells (positive towards higher indices); cells pushed
    /// out of the grid are dropped.
    #[inline(always)]
    pub fn shift(self, offset: i32) -> Bitboard {
        if offset >= 0 {
            self.shl(offset as u32)
        } else {
            self.shr((-offset) as u32)
        }
    }

    #[inline(always)]
    fn shl(self, k: u32) -> Bitboard {
        debug_assert!(k < 64);
        if k == 0 {
            return self;
        }
        let w = self.0;
        Bitboard([
            w[0] << k,
            (w[1] << k) | (w[0] >> (64 - k)),
            (w[2] << k) | (w[1] >> (64 - k)),
            (w[3] << k) | (w[2] >> (64 - k)),
        ])
    }

    #[inline(always)]
    fn shr(self, k: u32) -> Bitboard {
        debug_assert!(k < 64);
        if k == 0 {
            return self;
        }
        let w = self.0;
        Bitboard([
            (w[0] >> k) | (w[1] << (64 - k)),
            (w[1] >> k) | (w[2] << (64 - k)),
            (w[2] >> k) | (w[3] << (64 - k)),
            w[3] >> k,
        ])
    }

    /// Iterates over the squares from the lowest index up.
    #[inline]
    pub fn iter(self) -> Squares {
        Squares { words: self.0, word: 0 }
    }
}

/// Iterator over the squares of a [`Bitboard`], lowest first.
pub struct Squares {
    words: [u64; 4],
    word: usize,
}

impl Iterator for Squares {
    type Item = Square;

    #[inline]
    fn next(&mut self) -> Option<Square> {
        while self.word < 4 {
            let w = self.words[self.word];
            if w != 0 {
                self.words[self.word] = w & (w - 1);
                return Some(Square::from_index(self.word * 64 + w.trailing_zeros() as usize));
            }
            self.word += 1;
        }
        None
    }
}

impl IntoIterator for Bitboard {
    type Item = Square;
    type IntoIter = Squares;
    fn into_iter(self) -> Squares {
        self.iter()
    }
}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Self {
        let mut bb = Bitboard::EMPTY;
        for sq in iter {
            bb.insert(sq);
        }
        bb
    }
}

macro_rules! bitop {
    ($tr:ident, $f:ident, $tra:ident, $fa:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard([
                    self.0[0] $op rhs.0[0],
                    self.0[1] $op rhs.0[1],
                    self.0[2] $op rhs.0[2],
                    self.0[3] $op rhs.0[3],
                ])
            }
        }
        impl $tra for Bitboard {
            #[inline]
            fn $fa(&mut self, rhs: Bitboard) {
                *self = *self $op rhs;
            }
        }
    };
}
bitop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bitop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bitop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard([!self.0[0], !self.0[1], !self.0[2], !self.0[3]])
    }
}

impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_move_every_bit_and_drop_overflow() {
        let a = Square::new(3, 3);
        let bb = Bitboard::from_square(a);
        assert_eq!(bb.shift(17).first(), Some(Square::new(4, 4)));
        assert_eq!(bb.shift(-17).first(), Some(Square::new(2, 2)));
        assert_eq!(bb.shift(64 - 16).first(), Some(Square::new(3, 6)));
        let top = Bitboard::from_square(Square::new(15, 15));
        assert!(top.shift(1).is_empty());
        let bottom = Bitboard::from_square(Square::new(0, 0));
        assert!(bottom.shift(-1).is_empty());
        // Crossing a word boundary (rank 3 -> rank 4 is bit 63 -> 64 region).
        let b = Bitboard::from_square(Square::new(15, 3));
        assert_eq!(b.shift(1).first(), Some(Square::new(0, 4)));
        assert_eq!(b.shift(1).shift(-1), b);
    }

    #[test]
    fn iteration_and_count_agree() {
        let squares = [Square::new(0, 0), Square::new(5, 3), Square::new(13, 15), Square::new(7, 9)];
        let bb: Bitboard = squares.iter().copied().collect();
        assert_eq!(bb.count(), 4);
        let mut sorted = squares.to_vec();
        sorted.sort();
        assert_eq!(bb.iter().collect::<Vec<_>>(), sorted);
    }
}
