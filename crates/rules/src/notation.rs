//! Move notation (RULES.md section 8): paths, their order, and writing moves. The canonical
//! paths of canters and captures are found in `canonical.rs`; moves are read in
//! `move_input.rs`.
//!
//! A move is written as its whole path: `I8-J9`, `C6-E8-G8`, `F6xD8xD10xF12`,
//! `D7-F5-H7-H9xF11xD11`. Among the legal paths that make a move, the canonical one has the
//! fewest legs, ties broken by the smallest string. Input may name a move by any path whose legs
//! are well formed and that makes a legal move; the engine always writes the canonical path.

use crate::bitboard::Bitboard;
use crate::movegen::{Context, Move, MoveKind};
use crate::position::Position;
use crate::ruleset::Ruleset;
use crate::square::Square;
use std::cmp::Ordering;
use std::fmt;

/// A move's path: the origin, then every landing square. Legs before `first_jump` are steps or
/// canter legs (`-`), the rest jump legs (`x`).
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub struct Path {
    /// Origin then landings.
    pub squares: Vec<Square>,
    /// Index of the first jump leg (`squares.len() - 1` when nothing is captured).
    pub first_jump: usize,
}

impl Path {
    /// Number of legs.
    pub fn legs(&self) -> usize {
        self.squares.len() - 1
    }

    /// Whether leg `i` (from `squares[i]` to `squares[i + 1]`) is a jump.
    pub fn is_jump_leg(&self, i: usize) -> bool {
        i >= self.first_jump
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(self.squares.len() * 4);
        for (i, sq) in self.squares.iter().enumerate() {
            if i > 0 {
                s.push(if self.is_jump_leg(i - 1) { 'x' } else { '-' });
            }
            sq.push_name(&mut s);
        }
        f.write_str(&s)
    }
}

/// Many paths in two flat buffers (no allocation per path): path `i` is
/// `squares[start .. start + len]` for `entries[i] = (start, len, first_jump)`.
#[derive(Clone, Debug, Default)]
pub struct FlatPaths {
    squares: Vec<Square>,
    /// (start in `squares`, number of squares, first jump leg) per path.
    entries: Vec<(u32, u16, u16)>,
}

impl FlatPaths {
    /// Empties the buffers, keeping their capacity.
    pub fn clear(&mut self) {
        self.squares.clear();
        self.entries.clear();
    }

    /// Number of paths.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no path.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Path `i`: its squares (origin first) and the index of its first jump leg (its number of
    /// legs when it captures nothing).
    pub fn get(&self, i: usize) -> (&[Square], usize) {
        let (start, len, first_jump) = self.entries[i];
        (&self.squares[start as usize..start as usize + len as usize], first_jump as usize)
    }

    /// Appends `squares` as path `self.len()`.
    fn push(&mut self, squares: &[Square], first_jump: usize) {
        let start = self.squares.len() as u32;
        self.squares.extend_from_slice(squares);
        self.entries.push((start, squares.len() as u16, first_jump as u16));
    }
}

/// Orders candidate paths: fewest legs, then smallest written string.
pub(crate) fn path_order(a: &Path, b: &Path) -> Ordering {
    a.legs().cmp(&b.legs()).then_with(|| {
        let len = a.squares.len();
        written_keys(a.squares.iter().copied(), len, a.first_jump).cmp(written_keys(
            b.squares.iter().copied(),
            len,
            b.first_jump,
        ))
    })
}

/// A path of `len` squares (jump legs from `first_jump`) written as one number per square, such
/// that two paths of the same length compare as their written strings (`C6-E8xG10`) do,
/// without writing them: move generation compares candidate paths often.
///
/// Each number holds a square's name and the separator after it (none after the last), packed
/// big-endian into the top bytes. A separator is never a digit, so one such group is never a
/// proper prefix of another unless it ends its string: comparing group by group is comparing
/// the strings byte by byte.
pub(crate) fn written_keys(
    squares: impl Iterator<Item = Square>,
    len: usize,
    first_jump: usize,
) -> impl Iterator<Item = u32> {
    squares.enumerate().map(move |(i, square)| {
        let rank = square.rank() + 1;
        let mut bytes = [0u8; 4];
        bytes[0] = b'A' + square.file();
        let mut at = 1;
        if rank >= 10 {
            bytes[at] = b'1';
            at += 1;
        }
        bytes[at] = b'0' + rank % 10;
        if i + 1 < len {
            // Leg `i` starts here.
            bytes[at + 1] = if i >= first_jump { b'x' } else { b'-' };
        }
        u32::from_be_bytes(bytes)
    })
}

/// [`Square::name_order`] of every cell, by index.
pub(crate) const NAME_ORDER: [u16; 256] = {
    let mut table = [0; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = Square::from_index(i).name_order();
        i += 1;
    }
    table
};

impl Ruleset {
    /// The canonical path of `mv`, a legal move in `pos`.
    pub fn canonical_path(&self, pos: &Position, mv: &Move) -> Path {
        let cx = Context::new(self, pos);
        let simple = || Path { squares: vec![mv.from, mv.to], first_jump: 1 };
        match mv.kind {
            MoveKind::Step | MoveKind::CastleMove => simple(),
            MoveKind::Canter => match cx.quiet_canter_tree(mv.from).0.path_to(mv.to) {
                Some(squares) => Path { first_jump: squares.len() - 1, squares },
                None => simple(),
            },
            MoveKind::Jump | MoveKind::Charge => {
                cx.best_capture_path(mv.from, mv.to, mv.captures).unwrap_or_else(simple)
            }
        }
    }

    /// The move written in notation (its canonical path).
    pub fn move_to_string(&self, pos: &Position, mv: &Move) -> String {
        self.canonical_path(pos, mv).to_string()
    }

    /// Every legal move with its canonical path, sorted by the written path (RULES.md 8).
    pub fn legal_moves_with_paths(&self, pos: &Position) -> Vec<(Move, Path)> {
        let mut moves = Vec::new();
        let mut paths = FlatPaths::default();
        self.legal_moves_and_paths(pos, &mut moves, &mut paths);
        let mut keyed: Vec<(String, Move, Path)> = moves
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                let (squares, first_jump) = paths.get(i);
                let p = Path { squares: squares.to_vec(), first_jump };
                (p.to_string(), m, p)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, m, p)| (m, p)).collect()
    }

    /// Every legal move and, at the same index of `paths`, its canonical path, in no particular
    /// order; both buffers are cleared first and reused, so the search's hot path builds move
    /// lists without allocating per move. Paths are built per piece: one canter tree gives the
    /// piece's canters and their paths at once, one capture search its captures' paths.
    pub fn legal_moves_and_paths(&self, pos: &Position, moves: &mut Vec<Move>, paths: &mut FlatPaths) {
        moves.clear();
        paths.clear();
        let cx = Context::new(self, pos);
        let ob = cx.obligations();
        let movable = ob.movers & !cx.opp_castle;
        let quiet = !ob.must_capture;
        let mut buf = Vec::with_capacity(16);
        // Pass 1: moves, with the canters' paths; other moves get theirs in pass 2 (a capture
        // that returns to its origin may still be taken over by another piece's path).
        const LATER: (u32, u16, u16) = (0, 0, 0);
        for origin in movable {
            let can_jump = ob.jumpers.contains(origin);
            let charge_starts =
                if cx.knights.contains(origin) { cx.knight_canters(origin, false).0 } else { Bitboard::EMPTY };
            if can_jump || charge_starts.any() {
                cx.push_captures(origin, can_jump, charge_starts, moves);
                paths.entries.resize(moves.len(), LATER);
            }
            if quiet && cx.may_canter(origin) {
                let (tree, dests) = cx.quiet_canter_tree(origin);
                for to in dests {
                    moves.push(Move { captures: Bitboard::EMPTY, from: origin, to, kind: MoveKind::Canter });
                    buf.clear();
                    tree.path_into(to, &mut buf);
                    paths.push(&buf, buf.len() - 1);
                }
            }
        }
        if quiet {
            self.push_steps(&cx, &ob, pos, moves);
            paths.entries.resize(moves.len(), LATER);
        }
        if ob.exit_castle {
            let mut keep = moves.iter().map(|m| !cx.own_castle.contains(m.to));
            paths.entries.retain(|_| keep.next().unwrap_or(false));
            moves.retain(|m| !cx.own_castle.contains(m.to));
        }
        // Pass 2: steps and captures.
        let mut captures: Vec<(Square, Bitboard, Path)> = Vec::new();
        let mut captures_of: Option<Square> = None;
        for (i, mv) in moves.iter().enumerate() {
            if paths.entries[i] != LATER {
                continue;
            }
            let start = paths.squares.len() as u32;
            let mut first_jump = 1;
            let mut found = false;
            if mv.is_capture() {
                if captures_of != Some(mv.from) {
                    captures_of = Some(mv.from);
                    captures.clear();
                    cx.capture_paths(mv.from, ob.jumpers.contains(mv.from), &mut |to, captured, path| match captures
                        .iter_mut()
                        .find(|(t, c, _)| *t == to && *c == captured)
                    {
                        Some(entry) if path_order(&path, &entry.2) == Ordering::Less => entry.2 = path,
                        Some(_) => {}
                        None => captures.push((to, captured, path)),
                    });
                }
                if let Some((_, _, p)) = captures.iter().find(|(t, c, _)| *t == mv.to && *c == mv.captures) {
                    paths.squares.extend_from_slice(&p.squares);
                    first_jump = p.first_jump;
                    found = true;
                }
            }
            if !found {
                paths.squares.extend([mv.from, mv.to]);
                first_jump = if mv.is_capture() { 0 } else { 1 };
            }
            let len = paths.squares.len() as u32 - start;
            paths.entries[i] = (start, len as u16, first_jump as u16);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn path(indices: &[u8], first_jump: usize) -> Path {
        let squares: Vec<Square> = indices.iter().map(|&i| Square::from_index(i as usize)).collect();
        let first_jump = first_jump.min(squares.len() - 1);
        Path { squares, first_jump }
    }

    /// Paths of `len` squares that differ late and in ranks 1, 9-16 (where names change
    /// length), so that equal prefixes and near ties are common.
    fn similar_paths(len: usize) -> impl Strategy<Value = (Vec<u8>, Vec<u8>, usize, usize)> {
        let square = (0u8..3, prop_oneof![Just(0u8), 8u8..16]).prop_map(|(file, rank)| file + rank * 16);
        (proptest::collection::vec(square.clone(), len), proptest::collection::vec(square, len), 0..len, 0..len, 0..len)
            .prop_map(|(a, mut b, shared, ja, jb)| {
                b[..shared].copy_from_slice(&a[..shared]);
                (a, b, ja, jb)
            })
    }

    proptest! {
        /// Paths order as their written strings do.
        #[test]
        fn paths_order_as_their_strings(
            (a, b, ja, jb) in (2usize..8).prop_flat_map(similar_paths),
        ) {
            let (a, b) = (path(&a, ja), path(&b, jb));
            let by_string = a.legs().cmp(&b.legs()).then_with(|| a.to_string().cmp(&b.to_string()));
            prop_assert_eq!(path_order(&a, &b), by_string, "{} {}", a, b);
        }

        /// Paths of any lengths and squares order as their written strings do.
        #[test]
        fn any_paths_order_as_their_strings(
            a in proptest::collection::vec(any::<u8>(), 2..12),
            b in proptest::collection::vec(any::<u8>(), 2..12),
            ja in 0usize..12,
            jb in 0usize..12,
        ) {
            let (a, b) = (path(&a, ja), path(&b, jb));
            let by_string = a.legs().cmp(&b.legs()).then_with(|| a.to_string().cmp(&b.to_string()));
            prop_assert_eq!(path_order(&a, &b), by_string);
        }
    }
}
