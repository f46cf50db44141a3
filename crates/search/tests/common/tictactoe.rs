//! Tic-tac-toe for the search, and a perfect minimax player.

use std::collections::HashMap;

use camelot_search::{GameState, Side, Terminal};
use rand::seq::IndexedRandom;
use rand::Rng;

/// Cells 0..9, row by row; action = cell. X (`Side::First`) moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TicTacToe {
    /// 0 empty, 1 X, 2 O.
    pub cells: [u8; 9],
    pub next: Side,
}

const LINES: [[usize; 3]; 8] = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

impl Default for TicTacToe {
    fn default() -> Self {
        TicTacToe::new()
    }
}

impl TicTacToe {
    pub fn new() -> TicTacToe {
        TicTacToe { cells: [0; 9], next: Side::First }
    }

    /// Builds a position from a 9-character string of `X`, `O` and `.`; the side to move is
    /// X when the counts are equal, O otherwise.
    pub fn from_str(s: &str) -> TicTacToe {
        let mut cells = [0u8; 9];
        for (i, ch) in s.chars().filter(|c| !c.is_whitespace()).enumerate() {
            cells[i] = match ch {
                'X' => 1,
                'O' => 2,
                _ => 0,
            };
        }
        let xs = cells.iter().filter(|&&c| c == 1).count();
        let os = cells.iter().filter(|&&c| c == 2).count();
        TicTacToe { cells, next: if xs == os { Side::First } else { Side::Second } }
    }

    fn winner(&self) -> Option<Side> {
        for l in LINES {
            let c = self.cells[l[0]];
            if c != 0 && c == self.cells[l[1]] && c == self.cells[l[2]] {
                return Some(if c == 1 { Side::First } else { Side::Second });
            }
        }
        None
    }

    pub fn code(&self) -> u32 {
        self.cells.iter().fold(0u32, |acc, &c| acc * 3 + c as u32)
    }
}

impl GameState for TicTacToe {
    fn action_space(&self) -> u32 {
        9
    }

    fn legal_actions(&self, out: &mut Vec<u32>) {
        for (i, &c) in self.cells.iter().enumerate() {
            if c == 0 {
                out.push(i as u32);
            }
        }
    }

    fn apply(&mut self, action: u32) {
        let cell = &mut self.cells[action as usize];
        assert_eq!(*cell, 0, "illegal move {action}");
        *cell = if self.next == Side::First { 1 } else { 2 };
        self.next = self.next.opponent();
    }

    fn to_move(&self) -> Side {
        self.next
    }

    fn terminal(&self) -> Option<Terminal> {
        if let Some(p) = self.winner() {
            return Some(Terminal::Win(p));
        }
        if self.cells.iter().all(|&c| c != 0) {
            return Some(Terminal::Draw);
        }
        None
    }

    fn hash(&self) -> u64 {
        // The board determines the side to move; mix the base-3 code.
        (self.code() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// Perfect play by memoised negamax.
#[derive(Default)]
pub struct Minimax {
    memo: HashMap<u32, i8>,
}

impl Minimax {
    pub fn new() -> Minimax {
        Minimax::default()
    }

    /// Game-theoretic value for the side to move: +1 win, 0 draw, -1 loss.
    pub fn value(&mut self, s: &TicTacToe) -> i8 {
        if let Some(o) = s.terminal() {
            return o.value_for(s.to_move()) as i8;
        }
        if let Some(&v) = self.memo.get(&s.code()) {
            return v;
        }
        let mut best = -2;
        let mut moves = Vec::new();
        s.legal_actions(&mut moves);
        for a in moves {
            let mut c = *s;
            c.apply(a);
            best = best.max(-self.value(&c));
        }
        self.memo.insert(s.code(), best);
        best
    }

    /// Value for the side to move at `s` of playing `a`.
    pub fn action_value(&mut self, s: &TicTacToe, a: u32) -> i8 {
        let mut c = *s;
        c.apply(a);
        -self.value(&c)
    }

    /// All optimal actions.
    pub fn best_actions(&mut self, s: &TicTacToe) -> Vec<u32> {
        let mut moves = Vec::new();
        s.legal_actions(&mut moves);
        let values: Vec<i8> = moves.iter().map(|&a| self.action_value(s, a)).collect();
        let best = *values.iter().max().expect("a legal move");
        moves.into_iter().zip(values).filter(|&(_, v)| v == best).map(|(a, _)| a).collect()
    }

    /// A uniformly random optimal action (random tie-breaks make the games differ).
    pub fn choose<R: Rng>(&mut self, s: &TicTacToe, rng: &mut R) -> u32 {
        *self.best_actions(s).choose(rng).expect("a legal move")
    }
}
