//! Chain Nim: a game whose moves span several decisions by the same player.
//!
//! A pile of stones; a turn removes one to three stones, one stone per decision (`TAKE`),
//! and the player may `STOP` after the first stone. The turn passes after `STOP` or after the
//! third stone. Whoever takes the last stone wins, so the player to move at the start of a
//! turn loses exactly when the pile is a multiple of 4.

use camelot_search::{GameState, Side, Terminal};

/// Take one stone (and keep the turn if fewer than three were taken).
pub const TAKE: u32 = 0;
/// End the turn (legal after at least one stone this turn).
pub const STOP: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChainNim {
    pub pile: u32,
    /// Stones taken so far this turn (0..=2).
    pub taken: u32,
    pub next: Side,
}

impl ChainNim {
    pub fn new(pile: u32) -> ChainNim {
        ChainNim { pile, taken: 0, next: Side::First }
    }

    /// The perfect decision, if the player to move can win; `None` in a lost position.
    pub fn winning_action(&self) -> Option<u32> {
        if self.terminal().is_some() {
            return None;
        }
        // Piles the opponent may be left with: pile - more, more in min_more..=max_more.
        let min_more = if self.taken == 0 { 1 } else { 0 };
        let max_more = 3 - self.taken;
        for more in min_more..=max_more.min(self.pile) {
            if (self.pile - more) % 4 == 0 {
                return Some(if more == 0 { STOP } else { TAKE });
            }
        }
        None
    }

    /// Whether the player to move wins with perfect play.
    pub fn mover_wins(&self) -> bool {
        self.winning_action().is_some()
    }
}

impl GameState for ChainNim {
    fn action_space(&self) -> u32 {
        2
    }

    fn legal_actions(&self, out: &mut Vec<u32>) {
        if self.pile > 0 && self.taken < 3 {
            out.push(TAKE);
        }
        if self.taken > 0 {
            out.push(STOP);
        }
    }

    fn apply(&mut self, action: u32) {
        match action {
            TAKE => {
                assert!(self.pile > 0 && self.taken < 3, "illegal TAKE");
                self.pile -= 1;
                self.taken += 1;
                if self.pile > 0 && self.taken == 3 {
                    self.taken = 0;
                    self.next = self.next.opponent();
                }
            }
            STOP => {
                assert!(self.taken > 0, "illegal STOP");
                self.taken = 0;
                self.next = self.next.opponent();
            }
            _ => panic!("unknown action {action}"),
        }
    }

    fn to_move(&self) -> Side {
        self.next
    }

    fn terminal(&self) -> Option<Terminal> {
        // The player who took the last stone keeps `next` (see `apply`).
        (self.pile == 0).then_some(Terminal::Win(self.next))
    }

    fn hash(&self) -> u64 {
        ((self.pile as u64) << 8 | (self.taken as u64) << 1 | self.next.index() as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}
