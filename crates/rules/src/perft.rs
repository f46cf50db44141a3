//! Perft: the number of leaf nodes of the move tree to a given depth, the standard check of a
//! move generator. A node's children are its legal moves, deduplicated by resulting position;
//! a finished game has no children (RULES.md section 6, repetitions included).

use crate::movegen::Move;
use crate::position::Position;
use crate::ruleset::Ruleset;

impl Ruleset {
    /// Leaf count at `depth` from `pos` (whose earlier history is taken as unknown).
    pub fn perft(&self, pos: &Position, depth: u32) -> u64 {
        let mut history = vec![pos.hash()];
        let mut lists = vec![Vec::new(); depth as usize + 1];
        self.perft_inner(pos, depth, &mut history, &mut lists)
    }

    /// Per root move: its written form and the leaf count below it, sorted by the move string.
    pub fn perft_divide(&self, pos: &Position, depth: u32) -> Vec<(String, u64)> {
        if depth == 0 || self.finished(pos, &[pos.hash()], true) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut lists = vec![Vec::new(); depth as usize];
        for (mv, path) in self.legal_moves_with_paths(pos) {
            let mut child = *pos;
            self.play(&mut child, &mv);
            let mut history = vec![pos.hash(), child.hash()];
            out.push((path.to_string(), self.perft_inner(&child, depth - 1, &mut history, &mut lists)));
        }
        out
    }

    fn perft_inner(&self, pos: &Position, depth: u32, history: &mut Vec<u64>, lists: &mut [Vec<Move>]) -> u64 {
        if depth == 0 {
            return 1;
        }
        if self.finished(pos, history, true) {
            return 0;
        }
        let (list, rest) = lists.split_first_mut().expect("one move list per remaining ply");
        self.legal_moves(pos, list);
        if depth == 1 {
            return list.len() as u64;
        }
        let mut total = 0;
        for mv in list.iter() {
            let mut child = *pos;
            self.play(&mut child, mv);
            history.push(child.hash());
            total += self.perft_inner(&child, depth - 1, history, rest);
            history.pop();
        }
        total
    }

    /// Whether the game has ended at `pos` by a condition other than "no legal move" (which a
    /// caller sees as an empty move list). `history` ends with `pos`'s hash.
    pub(crate) fn finished(&self, pos: &Position, history: &[u64], has_legal_move: bool) -> bool {
        let occurrences = crate::outcome::occurrences(history.iter().rev().copied(), pos);
        self.outcome(pos, has_legal_move, occurrences).is_some()
    }
}
