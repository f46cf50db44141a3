//! The exact value of a position for the side to move, and its one-byte code in tables.

use std::fmt;

/// A game value for the side to move, with the distance to the end of the game in plies under
/// perfect play (the winner hurries, the loser delays).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Value {
    /// The side to move wins in this many plies (always odd: the winner makes the last move).
    Win(u32),
    /// Neither side can force a win: play goes round a cycle (repetition or no-progress draw).
    Draw,
    /// The side to move loses in this many plies (always even; 0: the game is over).
    Loss(u32),
}

/// The largest distance a one-byte code holds.
pub const MAX_DISTANCE: u32 = 254;

impl Value {
    /// The code in a table: 0 for a draw, `distance + 1` otherwise (wins are odd distances,
    /// losses even, so the code alone says which).
    pub fn code(self) -> u8 {
        match self {
            Value::Draw => 0,
            Value::Win(d) | Value::Loss(d) => (d.min(MAX_DISTANCE) + 1) as u8,
        }
    }

    /// The value of a code.
    pub fn from_code(code: u8) -> Value {
        match code {
            0 => Value::Draw,
            c => {
                let d = u32::from(c) - 1;
                if d % 2 == 1 {
                    Value::Win(d)
                } else {
                    Value::Loss(d)
                }
            }
        }
    }

    /// The value one ply earlier, seen by the side that moved into this position.
    pub fn parent(self) -> Value {
        match self {
            Value::Draw => Value::Draw,
            Value::Win(d) => Value::Loss(d + 1),
            Value::Loss(d) => Value::Win(d + 1),
        }
    }

    /// `win`, `draw` or `loss`.
    pub fn name(self) -> &'static str {
        match self {
            Value::Win(_) => "win",
            Value::Draw => "draw",
            Value::Loss(_) => "loss",
        }
    }

    /// The distance in plies, `None` for a draw.
    pub fn distance(self) -> Option<u32> {
        match self {
            Value::Win(d) | Value::Loss(d) => Some(d),
            Value::Draw => None,
        }
    }

    /// Reads `win`/`draw`/`loss` with a distance (none for a draw), as the positions file has
    /// them.
    pub fn from_parts(name: &str, distance: Option<u32>) -> Option<Value> {
        match (name, distance) {
            ("win", Some(d)) if d % 2 == 1 => Some(Value::Win(d)),
            ("loss", Some(d)) if d % 2 == 0 => Some(Value::Loss(d)),
            ("draw", None) => Some(Value::Draw),
            _ => None,
        }
    }
}

/// The value of a position stated for people by the side it favours: `White wins in 37 plies`,
/// `Black wins in 12 plies`, `draw`.
pub fn describe(value: Value, to_move: camelot_rules::Color) -> String {
    let side = |c: camelot_rules::Color| match c {
        camelot_rules::Color::White => "White",
        camelot_rules::Color::Black => "Black",
    };
    match value {
        Value::Win(d) => format!("{} wins in {d} plies", side(to_move)),
        Value::Loss(d) => format!("{} wins in {d} plies", side(to_move.opponent())),
        Value::Draw => "draw".to_string(),
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(d) => write!(f, "win in {d} plies"),
            Value::Draw => write!(f, "draw"),
            Value::Loss(d) => write!(f, "loss in {d} plies"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_parents_alternate() {
        for v in [Value::Draw, Value::Loss(0), Value::Win(1), Value::Loss(36), Value::Win(253)] {
            assert_eq!(Value::from_code(v.code()), v);
        }
        assert_eq!(Value::Loss(0).parent(), Value::Win(1));
        assert_eq!(Value::Win(1).parent(), Value::Loss(2));
        assert_eq!(Value::from_parts("win", Some(2)), None);
        assert_eq!(Value::from_parts("draw", None), Some(Value::Draw));
        assert_eq!(describe(Value::Loss(36), camelot_rules::Color::White), "Black wins in 36 plies");
    }
}
