//! Squares, colours, pieces and the eight directions.

use std::fmt;

/// Width of the internal grid: a square's index is `rank * GRID + file`.
pub const GRID: usize = 16;

/// A cell of the 16 x 16 grid that holds every board of the family. Whether it is on a given
/// board is the board's business ([`crate::Board::contains`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square at zero-based `file` (A = 0) and `rank` (rank 1 = 0).
    #[inline]
    pub const fn new(file: u8, rank: u8) -> Square {
        debug_assert!(file < 16 && rank < 16);
        Square(rank * GRID as u8 + file)
    }

    /// The square with grid index `index` (< 256).
    #[inline]
    pub const fn from_index(index: usize) -> Square {
        debug_assert!(index < 256);
        Square(index as u8)
    }

    /// Grid index, `rank * 16 + file`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Zero-based file (A = 0).
    #[inline]
    pub const fn file(self) -> u8 {
        self.0 & 15
    }

    /// Zero-based rank (rank 1 = 0).
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 >> 4
    }

    /// Parses a square name such as `F6` or `f16` (grid coordinates only; the board decides
    /// whether the square exists).
    pub fn parse(text: &str) -> Option<Square> {
        let bytes = text.as_bytes();
        if bytes.len() < 2 || bytes.len() > 3 {
            return None;
        }
        let letter = bytes[0].to_ascii_uppercase();
        if !letter.is_ascii_uppercase() || letter > b'P' {
            return None;
        }
        let digits = &text[1..];
        if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
            return None;
        }
        let rank: u8 = digits.parse().ok()?;
        if !(1..=16).contains(&rank) {
            return None;
        }
        Some(Square::new(letter - b'A', rank - 1))
    }

    /// Appends the square's name (`F6`) to `out`.
    pub fn push_name(self, out: &mut String) {
        out.push((b'A' + self.file()) as char);
        let rank = self.rank() + 1;
        if rank >= 10 {
            out.push('1');
        }
        out.push((b'0' + rank % 10) as char);
    }

    /// The square's rank in the byte order of square names (`E1` < `E10` < `E16` < `E2`), which
    /// orders paths of equal length (RULES.md 8).
    #[inline]
    pub const fn name_order(self) -> u16 {
        let rank = self.rank() as u16 + 1;
        // Within a file: "1" < "10".."16" < "2" < ... < "9" as strings.
        let within = match rank {
            1 => 0,
            10..=16 => rank - 9,
            _ => rank + 6,
        };
        self.file() as u16 * 32 + within
    }

    /// The square mirrored left to right on a board `files` wide.
    #[inline]
    pub const fn mirror_file(self, files: u8) -> Square {
        Square::new(files - 1 - self.file(), self.rank())
    }

    /// The square mirrored top to bottom on a board `ranks` high.
    #[inline]
    pub const fn mirror_rank(self, ranks: u8) -> Square {
        Square::new(self.file(), ranks - 1 - self.rank())
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(3);
        self.push_name(&mut s);
        f.write_str(&s)
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A side. White moves first and defends the castle on rank 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Color {
    /// The side that moves first.
    White = 0,
    /// The second side.
    Black = 1,
}

impl Color {
    /// Both colours, White first.
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];

    /// The other side.
    #[inline]
    pub const fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `white` or `black`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    fn not(self) -> Color {
        self.opponent()
    }
}

/// The two kinds of piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Role {
    /// A knight: may combine a canter with a jump (a knight's charge).
    Knight,
    /// A man.
    Man,
}

/// A piece: a colour and a role.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    /// Whose piece.
    pub color: Color,
    /// Knight or man.
    pub role: Role,
}

impl Piece {
    /// The CPN letter: `K`/`M` for White, `k`/`m` for Black.
    pub const fn letter(self) -> char {
        match (self.color, self.role) {
            (Color::White, Role::Knight) => 'K',
            (Color::White, Role::Man) => 'M',
            (Color::Black, Role::Knight) => 'k',
            (Color::Black, Role::Man) => 'm',
        }
    }

    /// The piece named by a CPN letter.
    pub const fn from_letter(c: char) -> Option<Piece> {
        let (color, role) = match c {
            'K' => (Color::White, Role::Knight),
            'M' => (Color::White, Role::Man),
            'k' => (Color::Black, Role::Knight),
            'm' => (Color::Black, Role::Man),
            _ => return None,
        };
        Some(Piece { color, role })
    }
}

/// The eight king directions as grid offsets, in a fixed order: N, NE, E, SE, S, SW, W, NW.
/// Direction `d` and `(d + 4) % 8` are opposite.
pub const DIRECTIONS: [i32; 8] = [16, 17, 1, -15, -16, -17, -1, 15];

/// Runs `$body` once per direction with `$offset` bound to that direction's grid offset as a
/// constant, so that bitboard shifts compile to fixed shift counts (a loop over
/// [`DIRECTIONS`] leaves them variable and branchy on hot paths).
#[macro_export]
macro_rules! for_each_direction {
    ($offset:ident => $body:block) => {{
        {
            const $offset: i32 = 16;
            $body
        }
        {
            const $offset: i32 = 17;
            $body
        }
        {
            const $offset: i32 = 1;
            $body
        }
        {
            const $offset: i32 = -15;
            $body
        }
        {
            const $offset: i32 = -16;
            $body
        }
        {
            const $offset: i32 = -17;
            $body
        }
        {
            const $offset: i32 = -1;
            $body
        }
        {
            const $offset: i32 = 15;
            $body
        }
    }};
}

/// File and rank deltas of [`DIRECTIONS`], in the same order.
pub const DIRECTION_DELTAS: [(i8, i8); 8] = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for rank in 0..16 {
            for file in 0..16 {
                let sq = Square::new(file, rank);
                assert_eq!(Square::parse(&sq.to_string()), Some(sq));
                assert_eq!(Square::parse(&sq.to_string().to_lowercase()), Some(sq));
            }
        }
        assert_eq!(Square::parse("F06"), None);
        assert_eq!(Square::parse("Q1"), None);
        assert_eq!(Square::parse("A17"), None);
        assert_eq!(Square::parse("A0"), None);
    }

    #[test]
    fn name_order_is_string_order() {
        let mut squares: Vec<Square> = (0..256).map(Square::from_index).collect();
        squares.sort_by_key(|s| s.name_order());
        let names: Vec<String> = squares.iter().map(|s| s.to_string()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }

    #[test]
    fn directions_match_deltas() {
        for (offset, (df, dr)) in DIRECTIONS.iter().zip(DIRECTION_DELTAS) {
            assert_eq!(*offset, dr as i32 * 16 + df as i32);
        }
    }
}
