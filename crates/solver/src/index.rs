//! A perfect index of the positions of a small variant: every placement with at most the
//! set-up's pieces of each kind, with White to move, numbered densely by material class and
//! combinatorial rank. A position with Black to move is indexed as its colour-flipped twin
//! ([`Position::flip_colors`]: colours swapped, board reflected top to bottom), which is the
//! same game seen from the other side, so one table serves both sides and is half the size.
//!
//! Counters are not part of the index: on one-square castles there are no castle moves, and the
//! no-progress counter is treated as `crate::solve` documents.

use crate::error::SolverError;
use camelot_rules::{Color, Piece, Position, Role, Ruleset, Square};

/// The most squares a board may have for this index (placements are 32-bit masks).
pub const MAX_SQUARES: usize = 32;

/// A placement of the four kinds of piece as masks over the board's squares in index order:
/// White knights, White men, Black knights, Black men.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub struct Placement(pub [u32; 4]);

impl Placement {
    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> u32 {
        self.0[0] | self.0[1] | self.0[2] | self.0[3]
    }

    /// Piece counts per kind, the material class.
    #[inline]
    pub fn counts(&self) -> [u32; 4] {
        self.0.map(u32::count_ones)
    }
}

/// The index of one variant: its squares, the size of each material class and where each
/// class starts.
#[derive(Clone, Debug)]
pub struct Index {
    squares: Vec<Square>,
    grid_to_local: [u8; 256],
    flip: Vec<u8>,
    mirror: Vec<u8>,
    /// Most pieces of each kind (from the set-up).
    max: [u32; 4],
    /// `binom[n][k]`.
    binom: Vec<Vec<u64>>,
    /// Start of each class, by class number; one more entry: the total.
    base: Vec<u64>,
}

const KINDS: [Piece; 4] = [
    Piece { color: Color::White, role: Role::Knight },
    Piece { color: Color::White, role: Role::Man },
    Piece { color: Color::Black, role: Role::Knight },
    Piece { color: Color::Black, role: Role::Man },
];

impl Index {
    /// The index of `rules`' variant. Fails if the board has more than [`MAX_SQUARES`]
    /// squares or one-square castles are missing (castle moves would need a counter).
    pub fn new(rules: &Ruleset) -> Result<Index, SolverError> {
        let squares: Vec<Square> = rules.board().squares().iter().collect();
        if squares.len() > MAX_SQUARES {
            return Err(SolverError::Unsupported {
                variant: rules.name().to_string(),
                reason: format!("{} squares; the solver's index holds at most {MAX_SQUARES}", squares.len()),
            });
        }
        if rules.has_castle_moves() {
            return Err(SolverError::Unsupported {
                variant: rules.name().to_string(),
                reason: "two-square castles: castle moves would have to be in the index".to_string(),
            });
        }
        let mut grid_to_local = [u8::MAX; 256];
        for (i, sq) in squares.iter().enumerate() {
            grid_to_local[sq.index()] = i as u8;
        }
        let ranks = rules.board().ranks();
        let flip = squares.iter().map(|sq| grid_to_local[sq.mirror_rank(ranks).index()]).collect();
        let files = rules.board().files();
        let mirror = squares.iter().map(|sq| grid_to_local[sq.mirror_file(files).index()]).collect();
        let max = KINDS.map(|k| rules.setup(k.color, k.role).count());
        let n = squares.len();
        let mut binom = vec![vec![0u64; n + 2]; n + 2];
        for i in 0..=n + 1 {
            binom[i][0] = 1;
            for j in 1..=i {
                binom[i][j] = binom[i - 1][j - 1] + if j < i { binom[i - 1][j] } else { 0 };
            }
        }
        let mut index = Index { squares, grid_to_local, flip, mirror, max, binom, base: Vec::new() };
        let mut base = vec![0u64];
        for class in 0..index.classes() {
            let size = index.class_size(index.class_counts(class));
            base.push(base[class] + size);
        }
        index.base = base;
        Ok(index)
    }

    /// Number of material classes.
    pub fn classes(&self) -> usize {
        self.max.iter().map(|m| *m as usize + 1).product()
    }

    /// The piece counts of class number `class`.
    pub fn class_counts(&self, class: usize) -> [u32; 4] {
        let mut c = class;
        let mut counts = [0; 4];
        for k in (0..4).rev() {
            let radix = self.max[k] as usize + 1;
            counts[k] = (c % radix) as u32;
            c /= radix;
        }
        counts
    }

    /// The class number of `counts`.
    pub fn class_of(&self, counts: [u32; 4]) -> usize {
        (0..4).fold(0, |acc, k| acc * (self.max[k] as usize + 1) + counts[k] as usize)
    }

    fn class_size(&self, counts: [u32; 4]) -> u64 {
        let mut free = self.squares.len();
        let mut size = 1u64;
        for c in counts {
            size *= self.binom[free][c as usize];
            free -= c as usize;
        }
        size
    }

    /// Index of the first position of `class`.
    pub fn class_start(&self, class: usize) -> u64 {
        self.base[class]
    }

    /// Positions in all (the index's range).
    pub fn len(&self) -> u64 {
        *self.base.last().unwrap_or(&0)
    }

    /// Whether the index is empty (never, for a real variant).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of squares.
    pub fn square_count(&self) -> usize {
        self.squares.len()
    }

    /// The placement of `pos`, colour-flipped when Black is to move, so that the mover is
    /// always White.
    pub fn placement(&self, pos: &Position) -> Placement {
        let mut masks = [0u32; 4];
        for (k, kind) in KINDS.iter().enumerate() {
            for sq in pos.role(kind.color, kind.role) {
                masks[k] |= 1 << self.grid_to_local[sq.index()];
            }
        }
        let p = Placement(masks);
        if pos.turn() == Color::Black {
            self.flip(p)
        } else {
            p
        }
    }

    /// Colours swapped and the board reflected top to bottom.
    pub fn flip(&self, p: Placement) -> Placement {
        let reflect = |m: u32| map_bits(m, &self.flip);
        Placement([reflect(p.0[2]), reflect(p.0[3]), reflect(p.0[0]), reflect(p.0[1])])
    }

    /// The placement mirrored left to right (an exact symmetry of every variant).
    pub fn mirror(&self, p: Placement) -> Placement {
        Placement(p.0.map(|m| map_bits(m, &self.mirror)))
    }

    /// The canonical index of a placement with White to move: the smaller of its own index and
    /// its mirror image's, so that a table holds one of each mirrored pair.
    pub fn canonical(&self, p: &Placement) -> u64 {
        self.rank(p).min(self.rank(&self.mirror(*p)))
    }

    /// Whether `p` fits the index (no more pieces of a kind than the set-up, no overlaps).
    pub fn fits(&self, p: &Placement) -> bool {
        let counts = p.counts();
        let disjoint = p.0.iter().map(|m| m.count_ones()).sum::<u32>() == p.occupied().count_ones();
        disjoint && (0..4).all(|k| counts[k] <= self.max[k])
    }

    /// The index of a placement with White to move. It must fit ([`Index::fits`]).
    pub fn rank(&self, p: &Placement) -> u64 {
        let counts = p.counts();
        let mut free: u32 = if self.squares.len() == 32 { u32::MAX } else { (1 << self.squares.len()) - 1 };
        let mut free_count = self.squares.len();
        let mut r = 0u64;
        for (k, &mask) in p.0.iter().enumerate() {
            let c = counts[k] as usize;
            let mut sub = 0u64;
            let mut rest = mask;
            let mut i = 0;
            while rest != 0 {
                let s = rest.trailing_zeros();
                rest &= rest - 1;
                let rel = (free & ((1u32 << s) - 1)).count_ones() as usize;
                i += 1;
                sub += self.binom[rel][i];
            }
            r = r * self.binom[free_count][c] + sub;
            free &= !mask;
            free_count -= c;
        }
        self.base[self.class_of(counts)] + r
    }

    /// The canonical index of `pos` (of its colour-flipped twin when Black is to move).
    pub fn index_of(&self, pos: &Position) -> u64 {
        self.canonical(&self.placement(pos))
    }

    /// The class number of index `i`.
    pub fn class_of_index(&self, i: u64) -> usize {
        self.base.partition_point(|&b| b <= i) - 1
    }

    /// The placement at index `i` (< [`Index::len`]).
    pub fn unrank(&self, i: u64) -> Placement {
        let class = self.class_of_index(i);
        let counts = self.class_counts(class);
        let mut r = i - self.base[class];
        // Split the rank into one combination rank per kind, last kind first.
        let mut free_counts = [0usize; 4];
        let mut free_count = self.squares.len();
        for k in 0..4 {
            free_counts[k] = free_count;
            free_count -= counts[k] as usize;
        }
        let mut subs = [0u64; 4];
        for k in (0..4).rev() {
            let size = self.binom[free_counts[k]][counts[k] as usize];
            subs[k] = r % size;
            r /= size;
        }
        let mut free: u32 = if self.squares.len() == 32 { u32::MAX } else { (1 << self.squares.len()) - 1 };
        let mut masks = [0u32; 4];
        for k in 0..4 {
            let mut sub = subs[k];
            let mut mask = 0u32;
            let mut c = free_counts[k];
            for i in (1..=counts[k] as usize).rev() {
                // Largest `c` with binom[c][i] <= sub.
                c -= 1;
                while self.binom[c][i] > sub {
                    c -= 1;
                }
                sub -= self.binom[c][i];
                mask |= 1 << select(free, c as u32);
            }
            masks[k] = mask;
            free &= !mask;
        }
        Placement(masks)
    }

    /// The position of a placement, White to move, counters at zero, move 1.
    pub fn position(&self, rules: &Ruleset, p: &Placement) -> Position {
        let mut pos = Position::empty();
        for (k, kind) in KINDS.iter().enumerate() {
            let mut rest = p.0[k];
            while rest != 0 {
                let i = rest.trailing_zeros();
                rest &= rest - 1;
                pos.put(self.squares[i as usize], *kind);
            }
        }
        pos.rehash(rules);
        pos
    }
}

/// `m` with bit `i` moved to bit `to[i]`.
fn map_bits(m: u32, to: &[u8]) -> u32 {
    let mut out = 0u32;
    let mut rest = m;
    while rest != 0 {
        let i = rest.trailing_zeros();
        rest &= rest - 1;
        out |= 1 << to[i as usize];
    }
    out
}

/// The square index of the `n`-th (0-based) set bit of `mask`.
fn select(mask: u32, n: u32) -> u32 {
    let mut rest = mask;
    for _ in 0..n {
        rest &= rest - 1;
    }
    rest.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn camette() -> (Ruleset, Index) {
        let rules = Ruleset::variant("camette").expect("camette");
        let index = Index::new(&rules).expect("index");
        (rules, index)
    }

    #[test]
    fn camette_index_counts_every_placement() {
        let (_, index) = camette();
        // Sum over (knights, men) of each side of the multinomial placements of 23 squares.
        assert_eq!(index.len(), 904_336_449);
        assert_eq!(index.classes(), 64);
    }

    proptest! {
        #[test]
        fn rank_inverts_unrank(i in 0u64..904_336_449) {
            let (rules, index) = camette();
            let p = index.unrank(i);
            prop_assert!(index.fits(&p));
            prop_assert_eq!(index.rank(&p), i);
            let pos = index.position(&rules, &p);
            prop_assert_eq!(index.placement(&pos), p);
            // The canonical index is shared by the mirror image and by the colour-flipped twin.
            let c = index.index_of(&pos);
            prop_assert!(c <= i);
            prop_assert_eq!(index.index_of(&pos.mirror_files(&rules)), c);
            prop_assert_eq!(index.index_of(&pos.flip_colors(&rules)), c);
        }
    }
}
