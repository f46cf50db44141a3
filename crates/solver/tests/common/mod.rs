//! An independent check of solved values: depth-limited negamax over distance to the end, with a
//! transposition table keyed by the rules' own Zobrist hash. It shares no code with the solver
//! (no index, no retrograde), only the rules.

use camelot_rules::{Position, Ruleset};
use camelot_solver::Value;
use std::collections::HashMap;

/// Proves values of distance up to a depth: `Some(value)` when the value's distance is at most
/// the depth searched, `None` when it is a draw or lies deeper.
pub struct Negamax<'a> {
    rules: &'a Ruleset,
    /// hash -> (depth searched, result)
    table: HashMap<u64, (u32, Option<Value>)>,
}

impl<'a> Negamax<'a> {
    pub fn new(rules: &'a Ruleset) -> Negamax<'a> {
        Negamax { rules, table: HashMap::new() }
    }

    pub fn value(&mut self, pos: &Position, depth: u32) -> Option<Value> {
        if let Some(&(searched, result)) = self.table.get(&pos.hash()) {
            match result {
                Some(v) => return Some(v),
                None if searched >= depth => return None,
                None => {}
            }
        }
        let result = self.search(pos, depth);
        self.table.insert(pos.hash(), (depth, result));
        result
    }

    fn search(&mut self, pos: &Position, depth: u32) -> Option<Value> {
        let mut moves = Vec::new();
        if self.rules.static_outcome(pos).is_some() {
            return Some(Value::Loss(0));
        }
        self.rules.legal_moves(pos, &mut moves);
        if moves.is_empty() {
            return Some(Value::Loss(0));
        }
        if depth == 0 {
            return None;
        }
        let mut best_win: Option<u32> = None;
        let mut longest_loss = 0;
        let mut all_won = true;
        for mv in &moves {
            let mut next = *pos;
            self.rules.play(&mut next, mv);
            match self.value(&next, depth - 1) {
                Some(Value::Loss(d)) => best_win = Some(best_win.map_or(d + 1, |b| b.min(d + 1))),
                Some(Value::Win(d)) => longest_loss = longest_loss.max(d + 1),
                _ => all_won = false,
            }
        }
        match best_win {
            // Children were searched to `depth - 1`, so every loss among them within that is
            // known and the shortest win is exact up to `depth`. A longer one found through the
            // table (from deeper searches) may have a shorter twin not yet seen: unknown.
            Some(d) if d <= depth => Some(Value::Win(d)),
            Some(_) => None,
            None if all_won => Some(Value::Loss(longest_loss)),
            None => None,
        }
    }
}
