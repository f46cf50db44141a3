//! A position's value and the moves that keep it.

use crate::error::SolverError;
use crate::solve::Table;
use crate::value::Value;
use camelot_rules::{Position, Ruleset};

/// One legal move and the mover's value after it.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveValue {
    /// The move in the project's notation (its canonical path).
    pub notation: String,
    /// The value for the side that made the move, with the distance counted from before it.
    pub value: Value,
}

/// What the table says about a position.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The value for the side to move.
    pub value: Value,
    /// Every legal move, sorted by notation (none when the game is over).
    pub moves: Vec<MoveValue>,
}

impl Probe {
    /// The moves that keep the value: in a won position every move to a position lost for the
    /// opponent (any distance: the win is still forced), in a drawn position every move to a
    /// drawn one, in a lost position the moves of longest resistance (every move loses, so only
    /// delaying the loss is a choice). Sorted by notation.
    pub fn keeping(&self) -> Vec<&str> {
        self.moves.iter().filter(|m| keeps(self.value, m.value)).map(|m| m.notation.as_str()).collect()
    }
}

/// Whether a move whose value for the mover is `after` keeps the position's value `before`
/// (see [`Probe::keeping`]).
pub fn keeps(before: Value, after: Value) -> bool {
    match (before, after) {
        (Value::Win(_), Value::Win(_)) | (Value::Draw, Value::Draw) => true,
        (Value::Loss(d), Value::Loss(e)) => d == e,
        _ => false,
    }
}

/// Looks `pos` up in `table`, with the value after each legal move.
pub fn probe(table: &Table, rules: &Ruleset, pos: &Position) -> Result<Probe, SolverError> {
    let missing = |p: &Position| SolverError::Position {
        cpn: rules.to_cpn(p),
        reason: "not reachable from the position the table was solved from, so not in the table".to_string(),
    };
    let value = table.value(pos).ok_or_else(|| missing(pos))?;
    let mut moves = Vec::new();
    if !matches!(value, Value::Loss(0)) && rules.static_outcome(pos).is_none() {
        for (mv, path) in rules.legal_moves_with_paths(pos) {
            let mut next = *pos;
            rules.play(&mut next, &mv);
            let after = table.value(&next).ok_or_else(|| missing(&next))?;
            moves.push(MoveValue { notation: path.to_string(), value: after.parent() });
        }
    }
    Ok(Probe { value, moves })
}
