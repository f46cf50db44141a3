//! Board shapes as data: which cells of the 16 x 16 grid exist, where the castles are, and the
//! step and leap tables that move generation walks.

use crate::bitboard::Bitboard;
use crate::square::{Color, Square, DIRECTION_DELTAS};

/// Marks "no square" in the step and leap tables. Grid cell 255 (P16) is on no board.
pub(crate) const NO_SQUARE: u8 = 255;

/// A board shape: the squares that exist and the two castles.
#[derive(Clone, Debug)]
pub struct Board {
    name: &'static str,
    files: u8,
    ranks: u8,
    squares: Bitboard,
    castles: [Bitboard; 2],
    /// `step[sq][d]`: the neighbour of `sq` in direction `d`, or [`NO_SQUARE`].
    pub(crate) step: Box<[[u8; 8]; 256]>,
    /// `leap[sq][d]`: the square two steps away in direction `d` when both it and the square
    /// between exist, else [`NO_SQUARE`].
    pub(crate) leap: Box<[[u8; 8]; 256]>,
    /// `neighbors[sq]`: the on-board squares adjacent to `sq`. A leap from `sq` over a
    /// neighbour `m` lands on `2m - sq` in grid indices (off the board when that leaves it: the
    /// spare grid files absorb sideways overflow).
    pub(crate) neighbors: Box<[Bitboard; 256]>,
}

impl Board {
    /// Builds a board from its rows: `rows[r] = (first file, last file)` of rank `r + 1`.
    /// Each side's castle is its home edge rank (rank 1 for White, the last rank for Black).
    pub fn from_rows(name: &'static str, files: u8, rows: &[(u8, u8)]) -> Board {
        assert!(files <= 14 && rows.len() <= 16, "board exceeds the 14 x 16 grid");
        let ranks = rows.len() as u8;
        let mut squares = Bitboard::EMPTY;
        for (rank, &(first, last)) in rows.iter().enumerate() {
            for file in first..=last {
                squares.insert(Square::new(file, rank as u8));
            }
        }
        let rank_set = |rank: u8| -> Bitboard { squares.iter().filter(|sq| sq.rank() == rank).collect() };
        let castles = [rank_set(0), rank_set(ranks - 1)];
        let mut step = Box::new([[NO_SQUARE; 8]; 256]);
        let mut leap = Box::new([[NO_SQUARE; 8]; 256]);
        for sq in squares {
            for (d, (df, dr)) in DIRECTION_DELTAS.iter().enumerate() {
                let at = |k: i8| -> Option<Square> {
                    let f = sq.file() as i8 + df * k;
                    let r = sq.rank() as i8 + dr * k;
                    if !(0..16).contains(&f) || !(0..16).contains(&r) {
                        return None;
                    }
                    let s = Square::new(f as u8, r as u8);
                    squares.contains(s).then_some(s)
                };
                if let Some(mid) = at(1) {
                    step[sq.index()][d] = mid.index() as u8;
                    if let Some(target) = at(2) {
                        leap[sq.index()][d] = target.index() as u8;
                    }
                }
            }
        }
        let mut neighbors = Box::new([Bitboard::EMPTY; 256]);
        for sq in 0..256 {
            for &t in &step[sq] {
                if t != NO_SQUARE {
                    neighbors[sq].insert(Square::from_index(t as usize));
                }
            }
        }
        Board { name, files, ranks, squares, castles, step, leap, neighbors }
    }

    /// The standard Camelot board: 160 squares, files A-L, ranks 1-16.
    pub fn camelot() -> Board {
        let mut rows = vec![(5, 6), (2, 9), (1, 10)];
        rows.extend(std::iter::repeat_n((0, 11), 10));
        rows.extend([(1, 10), (2, 9), (5, 6)]);
        Board::from_rows("camelot", 12, &rows)
    }

    /// The Chivalry board: 176 squares, files A-N, ranks 1-16.
    pub fn chivalry() -> Board {
        let mut rows = vec![(6, 7), (3, 10), (2, 11), (1, 12)];
        rows.extend(std::iter::repeat_n((0, 13), 8));
        rows.extend([(1, 12), (2, 11), (3, 10), (6, 7)]);
        Board::from_rows("chivalry", 14, &rows)
    }

    /// The Cam board: 67 squares, files A-G, ranks 1-13, one-square castles.
    pub fn cam() -> Board {
        let mut rows = vec![(3, 3), (2, 4), (1, 5)];
        rows.extend(std::iter::repeat_n((0, 6), 7));
        rows.extend([(1, 5), (2, 4), (3, 3)]);
        Board::from_rows("cam", 7, &rows)
    }

    /// The Camette board: 23 squares, files A-E, ranks 1-7, one-square castles.
    pub fn camette() -> Board {
        let rows = [(2, 2), (1, 3), (0, 4), (0, 4), (0, 4), (1, 3), (2, 2)];
        Board::from_rows("camette", 5, &rows)
    }

    /// The shape's name (`camelot`, `chivalry`, `cam`, `camette`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Width of the bounding box in files.
    pub fn files(&self) -> u8 {
        self.files
    }

    /// Height of the bounding box in ranks.
    pub fn ranks(&self) -> u8 {
        self.ranks
    }

    /// Every square of the board.
    pub fn squares(&self) -> Bitboard {
        self.squares
    }

    /// Whether `sq` is on the board.
    #[inline]
    pub fn contains(&self, sq: Square) -> bool {
        self.squares.contains(sq)
    }

    /// The castle that `color` defends (on its home edge).
    #[inline]
    pub fn own_castle(&self, color: Color) -> Bitboard {
        self.castles[color.index()]
    }

    /// The castle that `color` attacks.
    #[inline]
    pub fn opp_castle(&self, color: Color) -> Bitboard {
        self.castles[color.opponent().index()]
    }

    /// The squares of `rank` (zero-based), lowest file first.
    pub fn rank_squares(&self, rank: u8) -> impl Iterator<Item = Square> + '_ {
        (0..self.files).map(move |f| Square::new(f, rank)).filter(move |sq| self.contains(*sq))
    }

    /// The neighbour of `sq` in direction `d`, if on the board.
    #[inline]
    pub fn step(&self, sq: Square, d: usize) -> Option<Square> {
        let t = self.step[sq.index()][d];
        (t != NO_SQUARE).then(|| Square::from_index(t as usize))
    }

    /// The landing square of a leap from `sq` in direction `d`, if it and the square leapt
    /// over are on the board.
    #[inline]
    pub fn leap(&self, sq: Square, d: usize) -> Option<Square> {
        let t = self.leap[sq.index()][d];
        (t != NO_SQUARE).then(|| Square::from_index(t as usize))
    }

    /// The set mirrored left to right.
    pub fn mirror_files(&self, bb: Bitboard) -> Bitboard {
        bb.iter().map(|sq| sq.mirror_file(self.files)).collect()
    }

    /// The set mirrored top to bottom.
    pub fn mirror_ranks(&self, bb: Bitboard) -> Bitboard {
        bb.iter().map(|sq| sq.mirror_rank(self.ranks)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_counts_match_the_rule_book() {
        assert_eq!(Board::camelot().squares().count(), 160);
        assert_eq!(Board::chivalry().squares().count(), 176);
        assert_eq!(Board::cam().squares().count(), 67);
        assert_eq!(Board::camette().squares().count(), 23);
    }

    #[test]
    fn castles_can_never_be_leapt_over() {
        for board in [Board::camelot(), Board::chivalry(), Board::cam(), Board::camette()] {
            let castles = board.own_castle(Color::White) | board.own_castle(Color::Black);
            for sq in board.squares() {
                for d in 0..8 {
                    if let (Some(mid), Some(_)) = (board.step(sq, d), board.leap(sq, d)) {
                        assert!(!castles.contains(mid), "{}: leap over castle {mid}", board.name());
                    }
                }
            }
        }
    }

    #[test]
    fn boards_are_symmetric() {
        for board in [Board::camelot(), Board::chivalry(), Board::cam(), Board::camette()] {
            assert_eq!(board.mirror_files(board.squares()), board.squares());
            assert_eq!(board.mirror_ranks(board.squares()), board.squares());
        }
    }
}
