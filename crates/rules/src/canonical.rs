//! Canonical paths (RULES.md section 8) of canters and captures: the canter tree of one
//! origin, the capture paths of a piece, and the best of them by [`path_order`].

use crate::bitboard::Bitboard;
use crate::board::NO_SQUARE;
use crate::movegen::Context;
use crate::notation::{path_order, Path, NAME_ORDER};
use crate::ruleset::ChargeRule;
use crate::square::Square;
use std::cmp::Ordering;

/// The eight neighbours of a cell as bits of the 64 cells that start 17 below it.
const NEIGHBOURS: u64 = 1 | 1 << 1 | 1 << 2 | 1 << 16 | 1 << 18 | 1 << 32 | 1 << 33 | 1 << 34;

/// Canonical canter paths from one origin to every square it reaches: each square's parent on
/// the fewest-legs, smallest-string path. Built breadth-first with each layer kept in path
/// order, so a square's first discoverer is its best parent (paths of equal length compare by
/// their parent's path first, then by the last square's name).
#[derive(Clone)]
pub(crate) struct CanterTree {
    pub(crate) origin: Square,
    /// Parent of each reached square (entries of other squares are stale).
    pub(crate) parent: [u8; 256],
    /// Every square the tree reaches (the origin excluded).
    pub(crate) reached: Bitboard,
    /// The origin, then the reached squares in path order (breadth-first queue).
    queue: [u8; 256],
}

impl CanterTree {
    /// An empty tree, to be filled by [`Context::fill_canter_tree`].
    pub(crate) fn new() -> CanterTree {
        CanterTree {
            origin: Square::from_index(0),
            parent: [NO_SQUARE; 256],
            reached: Bitboard::EMPTY,
            queue: [0; 256],
        }
    }

    /// The canonical path from the origin to `target`, if the canter reaches it.
    pub(crate) fn path_to(&self, target: Square) -> Option<Vec<Square>> {
        let mut path = Vec::new();
        self.path_into(target, &mut path).then_some(path)
    }

    /// Appends the canonical path from the origin to `target` to `out`; false (and `out`
    /// unchanged) if the canter does not reach it.
    pub(crate) fn path_into(&self, target: Square, out: &mut Vec<Square>) -> bool {
        if target != self.origin && !self.reached.contains(target) {
            return false;
        }
        let start = out.len();
        let mut at = target;
        out.push(at);
        while at != self.origin {
            at = Square::from_index(self.parent[at.index()] as usize);
            out.push(at);
        }
        out[start..].reverse();
        true
    }
}

impl Context<'_> {
    /// The canter tree from `origin` under the same landing and continuation limits as
    /// [`Context::canter_reach`].
    pub(crate) fn canter_tree(
        &self,
        origin: Square,
        friends: Bitboard,
        landing_ok: Bitboard,
        expand_ok: Bitboard,
    ) -> Box<CanterTree> {
        let mut tree = Box::new(CanterTree::new());
        self.fill_canter_tree(&mut tree, origin, friends, landing_ok, expand_ok);
        tree
    }

    /// Fills `tree` (reused, so that the hot path neither allocates nor clears 256-entry
    /// tables) with the canter tree from `origin`: see [`Context::canter_tree`].
    pub(crate) fn fill_canter_tree(
        &self,
        tree: &mut CanterTree,
        origin: Square,
        friends: Bitboard,
        landing_ok: Bitboard,
        expand_ok: Bitboard,
    ) {
        // `open` (landings not reached yet), `expand` and `friends` as plain words, with a word
        // of zeros on either side (cell `i` is bit `i + 64`): a leap's landing and a square's
        // window of neighbours then need no bounds check, and cells off the grid are neither
        // open nor friendly.
        let landing = (landing_ok & !Bitboard::from_square(origin)).0;
        let mut open = [0, landing[0], landing[1], landing[2], landing[3], 0];
        let expand = expand_ok.0;
        let friends = [0, friends.0[0], friends.0[1], friends.0[2], friends.0[3], 0];
        // The queue holds each layer in path order: parents leave it in path order and append
        // their children in name order, so a square's first discoverer is its best parent.
        let queue = &mut tree.queue;
        let parent = &mut tree.parent;
        queue[0] = origin.index() as u8;
        let (mut head, mut tail) = (0usize, 1usize);
        while head < tail {
            let s = queue[head] as usize;
            head += 1;
            if head > 1 && (expand[s >> 6] >> (s & 63)) & 1 == 0 {
                continue;
            }
            // Every open landing beyond a friendly neighbour (with its name order), then in
            // name order.
            let mut found = [(0u16, 0u8); 8];
            let mut n = 0;
            // Friendly neighbours as bits of the 64 cells from `s - 17` (the eight neighbours
            // sit at 0, 1, 2, 16, 18, 32, 33, 34).
            let start = s + 64 - 17;
            let pair = friends[start >> 6] as u128 | (friends[(start >> 6) + 1] as u128) << 64;
            let mut mids = (pair >> (start & 63)) as u64 & NEIGHBOURS;
            while mids != 0 {
                let b = mids.trailing_zeros() as usize;
                mids &= mids - 1;
                // The leap over cell `s - 17 + b` lands on `s + 2 * (b - 17)`, at padded bit `p`.
                let p = s + 64 + 2 * b - 34;
                let bit = 1u64 << (p & 63);
                if open[p >> 6] & bit != 0 {
                    open[p >> 6] &= !bit;
                    let t = p - 64;
                    let key = NAME_ORDER[t];
                    // Insertion into the few found so far, by name.
                    let mut i = n;
                    while i > 0 && found[i - 1].0 > key {
                        found[i] = found[i - 1];
                        i -= 1;
                    }
                    found[i] = (key, t as u8);
                    n += 1;
                }
            }
            for &(_, t) in &found[..n] {
                parent[t as usize] = s as u8;
                queue[tail] = t;
                tail += 1;
            }
        }
        tree.origin = origin;
        tree.reached =
            Bitboard([landing[0] & !open[1], landing[1] & !open[2], landing[2] & !open[3], landing[3] & !open[4]]);
    }

    /// The friends, landings and continuations of a charge's canter legs by the knight on
    /// `origin`, whose hot landings are `hot` (RULES.md 5.C and the charge flags).
    pub(crate) fn charge_limits(&self, origin: Square, hot: Bitboard) -> (Bitboard, Bitboard, Bitboard) {
        let flags = self.rules.flags();
        let friends = self.mine & !Bitboard::from_square(origin);
        let mut landing = self.empty | Bitboard::from_square(origin);
        if !flags.charge_may_enter_own_castle_if_capturing {
            landing &= !self.own_castle;
        }
        let mut expand = !self.opp_castle;
        if flags.charge_rule == ChargeRule::Immediate {
            expand &= !hot;
        }
        (friends, landing, expand)
    }

    /// The friends, landings and continuations of the quiet canters of the piece on `origin`
    /// (a knight's `hot` landings handled as RULES.md 5.C says; men pass no hot squares).
    pub(crate) fn quiet_limits(&self, origin: Square, hot: Bitboard) -> (Bitboard, Bitboard, Bitboard) {
        let friends = self.mine & !Bitboard::from_square(origin);
        let landing = (self.empty | Bitboard::from_square(origin)) & !self.own_castle;
        let expand = !self.opp_castle;
        match self.rules.flags().charge_rule {
            ChargeRule::Later => (friends, landing & !hot, expand),
            ChargeRule::Immediate => (friends, landing, expand & !hot),
            ChargeRule::Final => (friends, landing, expand),
        }
    }

    /// The tree of quiet canters of the piece on `origin` (RULES.md 5.C for knights) and the
    /// squares where such a canter may end (under `immediate` and `final` the tree also holds
    /// landings next to a capture, which a quiet canter may not stop on).
    pub(crate) fn quiet_canter_tree(&self, origin: Square) -> (Box<CanterTree>, Bitboard) {
        let hot = if self.knights.contains(origin) { self.hot_for(origin) } else { Bitboard::EMPTY };
        let (friends, landing, expand) = self.quiet_limits(origin, hot);
        let tree = self.canter_tree(origin, friends, landing, expand);
        let dests = tree.reached & !hot;
        (tree, dests)
    }

    /// Every capture path of the piece on `origin` (plain jumps if `can_jump`, and charges if
    /// it is a knight), with each charge's canter part canonical, passed to `visit`.
    pub(crate) fn capture_paths(&self, origin: Square, can_jump: bool, visit: &mut dyn FnMut(Square, Bitboard, Path)) {
        let empty = self.empty | Bitboard::from_square(origin);
        let mut buf = [0u8; 32];
        let mut emit = |prefix: &[Square], to: Square, captured: Bitboard, jumps: &[u8]| {
            let mut squares = prefix.to_vec();
            squares.extend(jumps.iter().map(|&s| Square::from_index(s as usize)));
            visit(to, captured, Path { first_jump: prefix.len() - 1, squares });
        };
        if can_jump {
            self.jumps(origin, self.theirs, empty, &mut buf, 0, &mut |to, c, j| emit(&[origin], to, c, j));
        }
        if self.knights.contains(origin) {
            let (starts, _) = self.knight_canters(origin, false);
            if starts.is_empty() {
                return;
            }
            let (friends, landing, expand) = self.charge_limits(origin, self.hot_for(origin));
            let tree = self.canter_tree(origin, friends, landing, expand);
            for start in starts {
                if let Some(prefix) = tree.path_to(start) {
                    self.jumps(start, self.theirs, empty, &mut buf, 0, &mut |to, c, j| emit(&prefix, to, c, j));
                }
            }
        }
    }
}

impl Context<'_> {
    /// The canonical path among the capture paths of the piece on `origin` that end on `to`
    /// having captured `captures`.
    pub(crate) fn best_capture_path(&self, origin: Square, to: Square, captures: Bitboard) -> Option<Path> {
        let can_jump = self.obligations().jumpers.contains(origin);
        let mut best: Option<Path> = None;
        self.capture_paths(origin, can_jump, &mut |end, captured, path| {
            if end == to && captured == captures && best.as_ref().is_none_or(|b| path_order(&path, b) == Ordering::Less)
            {
                best = Some(path);
            }
        });
        best
    }
}
