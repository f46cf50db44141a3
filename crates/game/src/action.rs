//! The action encoding (DESIGN.md, "The Game trait and the action encoding").

use camelot_rules::{Board, Color, Leg, Square, DIRECTION_DELTAS};

/// A decision as the search sees it: a leg from a square in a direction, or `stop`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Decision {
    /// End the move here (the path so far is a complete move that could continue).
    Stop,
    /// Move the piece on `from` by `distance` (1: step, 2: leap) squares towards `direction`
    /// (an index into [`camelot_rules::DIRECTIONS`], absolute board orientation).
    Leg {
        /// Square the leg starts from.
        from: Square,
        /// Direction index, 0..8 (N, NE, E, SE, S, SW, W, NW).
        direction: u8,
        /// 1 or 2.
        distance: u8,
    },
}

/// Maps legs to action indices for one board: `cell * 16 + direction * 2 + (distance - 1)`,
/// with `stop` last. Cells are the board's bounding grid, `rank * files + file`, both seen by
/// the mover: for Black, ranks are counted from Black's edge and north and south swap.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ActionCodec {
    files: u8,
    ranks: u8,
}

/// The direction with the same file delta and the opposite rank delta (north <-> south).
const FLIP_VERTICAL: [u8; 8] = [4, 3, 2, 1, 0, 7, 6, 5];

/// Largest grid offset of a leg: a leap of two ranks and two files.
const MAX_OFFSET: isize = 2 * 16 + 2;

/// Marks a grid offset that is no leg.
const NO_LEG: u8 = u8::MAX;

/// `LEG_CODES[mover][offset + MAX_OFFSET]`: `direction * 2 + (distance - 1)` of the leg with
/// that grid offset, the direction as `mover` sees it.
const LEG_CODES: [[u8; 2 * MAX_OFFSET as usize + 1]; 2] = {
    let mut codes = [[NO_LEG; 2 * MAX_OFFSET as usize + 1]; 2];
    let mut direction = 0;
    while direction < 8 {
        let (df, dr) = DIRECTION_DELTAS[direction];
        let mut distance = 1;
        while distance <= 2 {
            let offset = distance * (dr as isize * 16 + df as isize);
            let index = (offset + MAX_OFFSET) as usize;
            let flipped = FLIP_VERTICAL[direction] as usize;
            codes[0][index] = (direction * 2 + distance as usize - 1) as u8;
            codes[1][index] = (flipped * 2 + distance as usize - 1) as u8;
            distance += 1;
        }
        direction += 1;
    }
    codes
};

impl ActionCodec {
    /// The codec for `board`'s bounding grid.
    pub fn new(board: &Board) -> ActionCodec {
        ActionCodec { files: board.files(), ranks: board.ranks() }
    }

    /// Width of the grid in cells.
    pub fn files(&self) -> u8 {
        self.files
    }

    /// Height of the grid in cells.
    pub fn ranks(&self) -> u8 {
        self.ranks
    }

    /// Cells of the bounding grid.
    pub fn cells(&self) -> u32 {
        self.files as u32 * self.ranks as u32
    }

    /// Size of the action space: 16 per cell and `stop`.
    pub fn action_space(&self) -> u32 {
        self.cells() * 16 + 1
    }

    /// The `stop` action.
    pub fn stop(&self) -> u32 {
        self.cells() * 16
    }

    /// The cell of `sq` in `mover`'s view.
    #[inline]
    pub fn cell(&self, sq: Square, mover: Color) -> u32 {
        let rank = match mover {
            Color::White => sq.rank(),
            Color::Black => self.ranks - 1 - sq.rank(),
        };
        rank as u32 * self.files as u32 + sq.file() as u32
    }

    /// The square of `cell` in `mover`'s view.
    pub fn square(&self, cell: u32, mover: Color) -> Square {
        let file = (cell % self.files as u32) as u8;
        let rank = (cell / self.files as u32) as u8;
        let rank = match mover {
            Color::White => rank,
            Color::Black => self.ranks - 1 - rank,
        };
        Square::new(file, rank)
    }

    /// The action of a leg played by `mover`.
    #[inline]
    pub fn encode_leg(&self, leg: Leg, mover: Color) -> u32 {
        // A leg's grid offset (rank * 16 + file, from -34 to 34) names its direction and
        // distance; the search encodes every leg of every turn it builds, so a table lookup.
        let offset = leg.to.index() as isize - leg.from.index() as isize;
        let code = LEG_CODES[mover.index()][(offset + MAX_OFFSET) as usize];
        debug_assert!(code != NO_LEG, "a leg is a step or a leap");
        self.cell(leg.from, mover) * 16 + code as u32
    }

    /// What action `action` means for `mover`, or `None` outside the action space.
    pub fn decode(&self, action: u32, mover: Color) -> Option<Decision> {
        if action == self.stop() {
            return Some(Decision::Stop);
        }
        if action > self.stop() {
            return None;
        }
        let cell = action / 16;
        let mut direction = ((action % 16) / 2) as u8;
        if mover == Color::Black {
            direction = FLIP_VERTICAL[direction as usize];
        }
        Some(Decision::Leg { from: self.square(cell, mover), direction, distance: (action % 2) as u8 + 1 })
    }

    /// The landing square of a decoded leg, if it stays on the grid.
    pub fn target(from: Square, direction: u8, distance: u8) -> Option<Square> {
        let (df, dr) = DIRECTION_DELTAS[direction as usize];
        let f = from.file() as i8 + df * distance as i8;
        let r = from.rank() as i8 + dr * distance as i8;
        ((0..16).contains(&f) && (0..16).contains(&r)).then(|| Square::new(f as u8, r as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camelot_rules::{Ruleset, VARIANT_NAMES};

    #[test]
    fn every_leg_round_trips_for_both_colours() {
        for name in VARIANT_NAMES {
            let rules = Ruleset::variant(name).expect("variant");
            let board = rules.board();
            let codec = ActionCodec::new(board);
            let mut seen = std::collections::HashSet::new();
            for from in board.squares() {
                for d in 0..8 {
                    for (distance, to) in [(1u8, board.step(from, d)), (2u8, board.leap(from, d))] {
                        let Some(to) = to else { continue };
                        for mover in Color::BOTH {
                            let action = codec.encode_leg(Leg { from, to, jump: false }, mover);
                            assert!(action < codec.stop());
                            assert!(seen.insert((action, mover)), "{name}: two legs share action {action}");
                            let decoded = codec.decode(action, mover).expect("in range");
                            assert_eq!(decoded, Decision::Leg { from, direction: d as u8, distance });
                            assert_eq!(ActionCodec::target(from, d as u8, distance), Some(to));
                        }
                    }
                }
            }
            assert_eq!(codec.decode(codec.stop(), Color::White), Some(Decision::Stop));
            assert_eq!(codec.decode(codec.stop() + 1, Color::White), None);
        }
    }

    #[test]
    fn black_sees_the_board_turned() {
        let rules = Ruleset::variant("camelot").expect("variant");
        let codec = ActionCodec::new(rules.board());
        assert_eq!(codec.action_space(), 12 * 16 * 16 + 1);
        let sq = |s: &str| Square::parse(s).expect("square");
        // White's D6-D7 (north) and Black's D11-D10 (south, towards White) are the same action.
        let white = codec.encode_leg(Leg { from: sq("D6"), to: sq("D7"), jump: false }, Color::White);
        let black = codec.encode_leg(Leg { from: sq("D11"), to: sq("D10"), jump: false }, Color::Black);
        assert_eq!(white, black);
    }
}
