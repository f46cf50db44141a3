//! Rulesets as data: a board shape, a set-up and the flags of RULES.md section 7. A new variant
//! is a new value of [`Ruleset`], not new code paths.

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::error::{Error, Result};
use crate::square::{Color, Role, Square};
use std::fmt;

/// The variant names accepted by [`Ruleset::variant`], default first.
pub const VARIANT_NAMES: [&str; 6] = ["camelot", "camelot-cz", "chivalry", "chivalry-1888", "cam", "camette"];

/// The flag names accepted by [`Ruleset::set_flag`].
pub const FLAG_NAMES: [&str; 10] = [
    "charge_rule",
    "own_castle_jump_ends",
    "single_capture_per_move",
    "charge_may_enter_own_castle_if_capturing",
    "max_castle_moves",
    "castle_squares_to_win",
    "min_pieces_to_win",
    "material_draw",
    "repetition_draw",
    "no_progress_plies",
];

/// How a knight's canter next to a capture is treated (RULES.md 5.C).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum ChargeRule {
    /// [WCF] If any canter landing offers a jump, the move must capture, possibly later.
    Later,
    /// [CZ] At the first canter landing that offers a jump, the knight must jump from there.
    Immediate,
    /// Lenient: the canter may pass such landings but may not stop on one without jumping.
    Final,
}

impl ChargeRule {
    /// The flag value's name.
    pub fn name(self) -> &'static str {
        match self {
            ChargeRule::Later => "later",
            ChargeRule::Immediate => "immediate",
            ChargeRule::Final => "final",
        }
    }
}

/// The flags of RULES.md section 7: every point where rule sheets differ.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Flags {
    /// RULES.md 5.C.
    pub charge_rule: ChargeRule,
    /// A jump ends on landing in the mover's own castle.
    pub own_castle_jump_ends: bool,
    /// A jump or charge ends after its first capture (5.D).
    pub single_capture_per_move: bool,
    /// The canter legs of a charge may land in the mover's own castle when the move captures.
    pub charge_may_enter_own_castle_if_capturing: bool,
    /// Castle moves each side may make in a game; `None` is unlimited.
    pub max_castle_moves: Option<u32>,
    /// Squares of the opponent's castle a side must occupy to win.
    pub castle_squares_to_win: u32,
    /// Pieces a side needs to win by capturing all or by stalemating the opponent.
    pub min_pieces_to_win: u32,
    /// One piece against one or none is a draw.
    pub material_draw: bool,
    /// The third occurrence of a position is a draw.
    pub repetition_draw: bool,
    /// Plies without a capture or a move onto the opponent's castle that draw the game.
    pub no_progress_plies: u32,
}

impl Flags {
    /// The World Camelot Federation's flags (the `camelot` column).
    pub const WCF: Flags = Flags {
        charge_rule: ChargeRule::Later,
        own_castle_jump_ends: false,
        single_capture_per_move: false,
        charge_may_enter_own_castle_if_capturing: false,
        max_castle_moves: Some(2),
        castle_squares_to_win: 2,
        min_pieces_to_win: 2,
        material_draw: true,
        repetition_draw: true,
        no_progress_plies: 100,
    };
}

/// A variant: board shape, White's set-up (Black's is its reflection) and flags.
#[derive(Clone)]
pub struct Ruleset {
    name: String,
    board: Board,
    white_knights: Vec<Square>,
    white_men: Vec<Square>,
    flags: Flags,
    zobrist: Zobrist,
}

impl Ruleset {
    /// The ruleset named `name` (one of [`VARIANT_NAMES`]) with its default flags.
    pub fn variant(name: &str) -> Result<Ruleset> {
        let sq = |s: &str| Square::parse(s).expect("set-up squares are valid names");
        let squares = |list: &str| list.split_whitespace().map(sq).collect::<Vec<_>>();
        let camelot = || (Board::camelot(), squares("C6 D7 I7 J6"), squares("D6 E6 F6 G6 H6 I6 E7 F7 G7 H7"));
        let chivalry =
            || (Board::chivalry(), squares("C6 D6 K6 L6 C7 D7 K7 L7"), squares("E6 F6 G6 H6 I6 J6 E7 F7 G7 H7 I7 J7"));
        let small = Flags { castle_squares_to_win: 1, min_pieces_to_win: 1, material_draw: false, ..Flags::WCF };
        let ((board, knights, men), flags) = match name {
            "camelot" => (camelot(), Flags::WCF),
            "camelot-cz" => {
                (camelot(), Flags { charge_rule: ChargeRule::Immediate, own_castle_jump_ends: true, ..Flags::WCF })
            }
            "chivalry" => (chivalry(), Flags::WCF),
            "chivalry-1888" => (
                chivalry(),
                Flags {
                    single_capture_per_move: true,
                    charge_may_enter_own_castle_if_capturing: true,
                    max_castle_moves: None,
                    ..Flags::WCF
                },
            ),
            "cam" => ((Board::cam(), squares("C4 E4"), squares("B5 C5 D5 E5 F5")), small),
            "camette" => ((Board::camette(), squares("C2"), squares("B3 C3 D3")), small),
            _ => return Err(Error::UnknownVariant(name.to_string())),
        };
        Ok(Ruleset {
            name: name.to_string(),
            board,
            white_knights: knights,
            white_men: men,
            flags,
            zobrist: Zobrist::new(),
        })
    }

    /// The variant with `overrides` (`NAME=VALUE` strings) applied in order.
    pub fn with_overrides<S: AsRef<str>>(name: &str, overrides: &[S]) -> Result<Ruleset> {
        let mut rules = Ruleset::variant(name)?;
        for o in overrides {
            let o = o.as_ref();
            let (flag, value) = o.split_once('=').ok_or_else(|| Error::BadFlagValue {
                flag: o.to_string(),
                value: String::new(),
                expected: "of the form NAME=VALUE",
            })?;
            rules.set_flag(flag.trim(), value.trim())?;
        }
        Ok(rules)
    }

    /// Overrides one flag by name, e.g. `set_flag("charge_rule", "final")`.
    pub fn set_flag(&mut self, flag: &str, value: &str) -> Result<()> {
        let bad =
            |expected: &'static str| Error::BadFlagValue { flag: flag.to_string(), value: value.to_string(), expected };
        let boolean = || match value {
            "yes" | "true" | "1" | "on" => Ok(true),
            "no" | "false" | "0" | "off" => Ok(false),
            _ => Err(bad("yes/no (or true/false)")),
        };
        let number = || value.parse::<u32>().map_err(|_| bad("a non-negative integer"));
        let f = &mut self.flags;
        match flag {
            "charge_rule" => {
                f.charge_rule = match value {
                    "later" => ChargeRule::Later,
                    "immediate" => ChargeRule::Immediate,
                    "final" => ChargeRule::Final,
                    _ => return Err(bad("later, immediate or final")),
                }
            }
            "own_castle_jump_ends" => f.own_castle_jump_ends = boolean()?,
            "single_capture_per_move" => f.single_capture_per_move = boolean()?,
            "charge_may_enter_own_castle_if_capturing" => f.charge_may_enter_own_castle_if_capturing = boolean()?,
            "max_castle_moves" => {
                f.max_castle_moves = match value {
                    "unlimited" | "-" => None,
                    _ => Some(value.parse().map_err(|_| bad("a non-negative integer or `unlimited`"))?),
                }
            }
            "castle_squares_to_win" => {
                let n = number()?;
                let size = self.board.own_castle(Color::White).count();
                if n == 0 || n > size {
                    return Err(bad("between 1 and the castle's size"));
                }
                f.castle_squares_to_win = n;
            }
            "min_pieces_to_win" => f.min_pieces_to_win = number()?,
            "material_draw" => f.material_draw = boolean()?,
            "repetition_draw" => f.repetition_draw = boolean()?,
            "no_progress_plies" => {
                let n = number()?;
                if n == 0 {
                    return Err(bad("a positive integer"));
                }
                f.no_progress_plies = n;
            }
            _ => return Err(Error::UnknownFlag(flag.to_string())),
        }
        Ok(())
    }

    /// The variant's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The board shape.
    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The flags in force.
    #[inline]
    pub fn flags(&self) -> &Flags {
        &self.flags
    }

    /// Whether castles have two squares, so that castle moves exist and CPN writes `W/B`.
    pub fn has_castle_moves(&self) -> bool {
        self.board.own_castle(Color::White).count() > 1
    }

    /// The squares of `color`'s pieces of `role` in the set-up.
    pub fn setup(&self, color: Color, role: Role) -> Bitboard {
        let list = match role {
            Role::Knight => &self.white_knights,
            Role::Man => &self.white_men,
        };
        let white: Bitboard = list.iter().copied().collect();
        match color {
            Color::White => white,
            Color::Black => self.board.mirror_ranks(white),
        }
    }

    /// Every flag as `name=value`, in [`FLAG_NAMES`] order.
    pub fn flag_values(&self) -> Vec<(&'static str, String)> {
        let f = &self.flags;
        let yn = |b: bool| if b { "yes" } else { "no" }.to_string();
        vec![
            ("charge_rule", f.charge_rule.name().to_string()),
            ("own_castle_jump_ends", yn(f.own_castle_jump_ends)),
            ("single_capture_per_move", yn(f.single_capture_per_move)),
            ("charge_may_enter_own_castle_if_capturing", yn(f.charge_may_enter_own_castle_if_capturing)),
            ("max_castle_moves", f.max_castle_moves.map_or("unlimited".to_string(), |n| n.to_string())),
            ("castle_squares_to_win", f.castle_squares_to_win.to_string()),
            ("min_pieces_to_win", f.min_pieces_to_win.to_string()),
            ("material_draw", yn(f.material_draw)),
            ("repetition_draw", yn(f.repetition_draw)),
            ("no_progress_plies", f.no_progress_plies.to_string()),
        ]
    }

    #[inline]
    pub(crate) fn zobrist(&self) -> &Zobrist {
        &self.zobrist
    }
}

impl fmt::Debug for Ruleset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ruleset").field("name", &self.name).field("flags", &self.flags).finish()
    }
}

/// Zobrist keys: one per (colour, role, square), one for the side to move, and a key derived
/// from each side's castle-move count (counts are unbounded under `max_castle_moves=unlimited`).
#[derive(Clone)]
pub(crate) struct Zobrist {
    pieces: Box<[[[u64; 256]; 2]; 2]>,
    pub(crate) black_to_move: u64,
}

/// SplitMix64: a fixed, well-mixed sequence, so hashes are the same in every build and run.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Zobrist {
    fn new() -> Zobrist {
        let mut state = 0x00CA_3E10_7A5E_ED00_u64;
        let mut pieces = Box::new([[[0u64; 256]; 2]; 2]);
        for color in pieces.iter_mut() {
            for role in color.iter_mut() {
                for key in role.iter_mut() {
                    *key = splitmix64(&mut state);
                }
            }
        }
        Zobrist { pieces, black_to_move: splitmix64(&mut state) }
    }

    #[inline]
    pub(crate) fn piece(&self, color: Color, role: Role, sq: Square) -> u64 {
        self.pieces[color.index()][(role == Role::Man) as usize][sq.index()]
    }

    #[inline]
    pub(crate) fn castle_moves(&self, color: Color, count: u32) -> u64 {
        if count == 0 {
            return 0;
        }
        let mut state = ((color.index() as u64 + 1) << 32) ^ count as u64 ^ 0xC457_1E00_0000_0000;
        splitmix64(&mut state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_builds_with_its_flags() {
        for name in VARIANT_NAMES {
            let r = Ruleset::variant(name).expect("variant");
            let white = r.setup(Color::White, Role::Knight) | r.setup(Color::White, Role::Man);
            let black = r.setup(Color::Black, Role::Knight) | r.setup(Color::Black, Role::Man);
            assert_eq!(white.count(), black.count());
            assert!((white & black).is_empty());
            assert_eq!(white & r.board().squares(), white, "{name}: set-up off the board");
        }
        assert_eq!(Ruleset::variant("camelot-cz").map(|r| r.flags().charge_rule).ok(), Some(ChargeRule::Immediate));
        assert!(Ruleset::variant("chess").is_err());
    }

    #[test]
    fn flags_override_by_name() {
        let r = Ruleset::with_overrides("camelot", &["charge_rule=final", "max_castle_moves=unlimited"]).expect("ok");
        assert_eq!(r.flags().charge_rule, ChargeRule::Final);
        assert_eq!(r.flags().max_castle_moves, None);
        let err = Ruleset::with_overrides("camelot", &["charge_rule=sometimes"]).expect_err("bad value");
        assert!(err.to_string().contains("charge_rule"));
        assert!(Ruleset::with_overrides("camelot", &["castling=yes"]).is_err());
        assert!(Ruleset::with_overrides("camelot", &["material_draw"]).is_err());
    }
}
