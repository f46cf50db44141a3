//! A turn's trie of legs built straight from move generation, the search's hot path: the same
//! trie, node for node, as [`LegTrie::from_paths`] over [`Ruleset::legal_moves_and_paths`]
//! (which stays the reference), without listing moves and paths first.
//!
//! Per piece, in the reference's order: its captures (one search gives each capture and its
//! canonical path), then its quiet canters, whose part of the trie is the piece's canter tree
//! itself (each tree square becomes a trie node the first time a destination's path passes
//! it); then every step as a leaf under the root. A knight's charge tree and its quiet canter
//! tree are one tree unless a hot landing makes them differ.
//!
//! The search's variant defers what a descent rarely reaches: the canters of a piece with no
//! capture and no hot landing in reach are only their first legs, and the rest of the piece's
//! canter tree is built when a descent plays one of them
//! ([`Ruleset::leg_trie_deferring_canters`], [`Ruleset::deferred_canter_trie`]).

use crate::bitboard::Bitboard;
use crate::canonical::CanterTree;
use crate::movegen::Context;
use crate::notation::{written_keys, FlatPaths};
use crate::position::Position;
use crate::ruleset::{ChargeRule, Ruleset};
use crate::square::{Square, DIRECTIONS};
use crate::trie::{Leg, LegTrie, Node, NONE};
use std::cmp::Ordering;

/// Reusable buffers for [`Ruleset::leg_trie`]: with one per thread, building a trie allocates
/// only the trie it returns.
pub struct TrieScratch {
    nodes: Vec<Node>,
    last_child: Vec<u32>,
    insert: TreeInsert,
    tree: Box<CanterTree>,
    quiet: Box<CanterTree>,
    /// The current piece's captures; their paths are slices of `squares`.
    captures: Vec<Capture>,
    squares: Vec<Square>,
    /// Origin and captured set of every capture so far that returns to its origin.
    returning: Vec<(Square, Bitboard)>,
    path: Vec<Square>,
}

impl Default for TrieScratch {
    fn default() -> Self {
        TrieScratch::new()
    }
}

impl TrieScratch {
    /// Empty buffers.
    pub fn new() -> TrieScratch {
        TrieScratch {
            nodes: Vec::new(),
            last_child: Vec::new(),
            insert: TreeInsert { node_of: Box::new([(0, NONE); 256]), stamp: 0, chain: Vec::new() },
            tree: Box::new(CanterTree::new()),
            quiet: Box::new(CanterTree::new()),
            captures: Vec::new(),
            squares: Vec::new(),
            returning: Vec::new(),
            path: Vec::new(),
        }
    }
}

/// Buffers for inserting a canter tree.
struct TreeInsert {
    /// Trie node of each square of the tree being inserted, valid where its stamp is `stamp`
    /// (so nothing is cleared between trees).
    node_of: Box<[(u32, u32); 256]>,
    stamp: u32,
    /// Squares of a path not in the trie yet, last first.
    chain: Vec<u8>,
}

/// One capture of the current piece: where it lands, what it takes, and its best path so far
/// (`squares[start..start + len]`, jump legs from `first_jump`).
struct Capture {
    to: Square,
    captured: Bitboard,
    start: u32,
    len: u32,
    first_jump: u32,
}

/// The trie under construction.
struct Out<'a> {
    nodes: &'a mut Vec<Node>,
    last_child: &'a mut Vec<u32>,
    moves: u32,
}

impl<'a> Out<'a> {
    /// A trie of the root alone, built into `nodes` (cleared) with `last_child` as scratch.
    fn start(nodes: &'a mut Vec<Node>, last_child: &'a mut Vec<u32>) -> Out<'a> {
        nodes.clear();
        last_child.clear();
        nodes.push(Node::ROOT);
        last_child.push(NONE);
        Out { nodes, last_child, moves: 0 }
    }

    /// Appends a child of `parent` (after its other children) reached by `leg`.
    #[inline]
    fn add(&mut self, parent: u32, leg: Leg) -> u32 {
        let child = self.nodes.len() as u32;
        self.nodes.push(Node { leg, deferred: false, parent, first_child: NONE, next_sibling: NONE, complete: NONE });
        self.last_child.push(NONE);
        match self.last_child[parent as usize] {
            NONE => self.nodes[parent as usize].first_child = child,
            last => self.nodes[last as usize].next_sibling = child,
        }
        self.last_child[parent as usize] = child;
        child
    }

    /// Appends a step: a move of one leg under the root, linked to the next node appended.
    /// Steps come last and are appended in a row ([`Out::link_steps`] then links the row to the
    /// root): a turn has about fifty, and linking each one as it comes was most of their cost.
    /// Their own `last_child` entries would never be read, so they are not kept.
    #[inline]
    fn push_step(&mut self, leg: Leg) {
        let next = self.nodes.len() as u32 + 1;
        self.nodes.push(Node {
            leg,
            deferred: false,
            parent: LegTrie::ROOT,
            first_child: NONE,
            next_sibling: next,
            complete: self.moves,
        });
        self.moves += 1;
    }

    /// Ends the row of steps pushed from node `first` on and hangs it after the root's other
    /// children.
    fn link_steps(&mut self, first: u32) {
        let Some(last) = self.nodes.len().checked_sub(1).filter(|&last| last >= first as usize) else {
            return;
        };
        self.nodes[last].next_sibling = NONE;
        match self.last_child[LegTrie::ROOT as usize] {
            NONE => self.nodes[LegTrie::ROOT as usize].first_child = first,
            previous => self.nodes[previous as usize].next_sibling = first,
        }
        self.last_child[LegTrie::ROOT as usize] = last as u32;
    }

    /// Appends a root child for the current piece, whose first root child is `*first`.
    #[inline]
    fn add_under(&mut self, parent: u32, leg: Leg, first: &mut u32) -> u32 {
        let child = self.add(parent, leg);
        if parent == LegTrie::ROOT && *first == NONE {
            *first = child;
        }
        child
    }

    /// Appends a deferred first leg of the current piece: a move whose continuations are left
    /// out.
    #[inline]
    fn push_deferred(&mut self, leg: Leg, first: &mut u32) {
        let child = self.add_under(LegTrie::ROOT, leg, first);
        self.nodes[child as usize].deferred = true;
        self.complete(child);
    }

    /// Marks `node` as the end of the next move.
    #[inline]
    fn complete(&mut self, node: u32) {
        self.nodes[node as usize].complete = self.moves;
        self.moves += 1;
    }

    /// Inserts a path of the current piece, whose root children start at `*first` (`NONE`
    /// before its first one): every root child after it belongs to the same piece.
    fn insert(&mut self, squares: &[Square], first_jump: usize, first: &mut u32) {
        let mut at = LegTrie::ROOT;
        for i in 0..squares.len() - 1 {
            let leg = Leg { from: squares[i], to: squares[i + 1], jump: i >= first_jump };
            let mut c = if at == LegTrie::ROOT { *first } else { self.nodes[at as usize].first_child };
            while c != NONE {
                let l = self.nodes[c as usize].leg;
                if l.from == leg.from && l.to == leg.to {
                    break;
                }
                c = self.nodes[c as usize].next_sibling;
            }
            at = if c != NONE { c } else { self.add_under(at, leg, first) };
        }
        self.complete(at);
    }

    /// Inserts the canter paths of `tree` to `dests`, in square order, for a piece with no
    /// other path inserted yet: a tree square gets its trie node when the first path passes it.
    fn insert_tree(&mut self, tree: &CanterTree, dests: Bitboard, scratch: &mut TreeInsert, first: &mut u32) {
        let origin = tree.origin.index();
        scratch.stamp = scratch.stamp.wrapping_add(1);
        if scratch.stamp == 0 {
            scratch.node_of.fill((0, NONE));
            scratch.stamp = 1;
        }
        let (node_of, stamp, chain) = (&mut *scratch.node_of, scratch.stamp, &mut scratch.chain);
        for d in dests {
            chain.clear();
            let mut s = d.index();
            let mut at = LegTrie::ROOT;
            while s != origin {
                if node_of[s].0 == stamp {
                    at = node_of[s].1;
                    break;
                }
                chain.push(s as u8);
                s = tree.parent[s] as usize;
            }
            for &c in chain.iter().rev() {
                let from = Square::from_index(tree.parent[c as usize] as usize);
                let leg = Leg { from, to: Square::from_index(c as usize), jump: false };
                at = self.add_under(at, leg, first);
                node_of[c as usize] = (stamp, at);
            }
            self.complete(at);
        }
    }
}

/// Every cell next to a piece of `mine`: no canter lands elsewhere (a leg lands just beyond
/// the friend it leaps). A superset where a shift wraps past the grid's edge, which only
/// costs a deferral.
fn canter_landings(mine: Bitboard) -> Bitboard {
    let mut near = Bitboard::EMPTY;
    crate::for_each_direction!(D => {
        near |= mine.shift(D);
    });
    near
}

/// Per direction of [`DIRECTIONS`], the pieces of `mine` that can leap that way over a friend
/// onto `landing`. Exact on the board: the grid's spare files (a board is at most 14 wide)
/// take a shift's overflow past an edge, and neither set holds them.
fn first_canter_origins(mine: Bitboard, landing: Bitboard) -> [Bitboard; 8] {
    // A loop, not `DIRECTIONS.map`: the array adaptor cost three times the shifts here.
    let mut origins = [Bitboard::EMPTY; 8];
    for (slot, &offset) in origins.iter_mut().zip(&DIRECTIONS) {
        *slot = mine & mine.shift(-offset) & landing.shift(-2 * offset);
    }
    origins
}

/// The cells whose file and rank have the parities of `origin`'s: canter legs (two cells
/// each way) never leave them.
fn same_parity(origin: Square) -> Bitboard {
    let files = if origin.file() & 1 == 0 { 0x5555_5555_5555_5555u64 } else { 0xAAAA_AAAA_AAAA_AAAA };
    // A word holds four ranks of 16 cells and starts at an even rank.
    let ranks = if origin.rank() & 1 == 0 { 0x0000_FFFF_0000_FFFFu64 } else { 0xFFFF_0000_FFFF_0000 };
    Bitboard([files & ranks; 4])
}

impl Ruleset {
    /// The trie of legs of every legal move in `pos` (RULES.md section 8), as
    /// [`LegTrie::from_paths`] builds it from [`Ruleset::legal_moves_and_paths`] (same nodes,
    /// same order, same move numbers), built without listing moves and paths first.
    pub fn leg_trie(&self, pos: &Position, scratch: &mut TrieScratch) -> LegTrie {
        self.leg_trie_with(pos, scratch, false)
    }

    /// The trie of [`Ruleset::leg_trie`] less what lies below the first canter legs of a piece
    /// that cannot capture and has no landing a charge could start from (every such man, and a
    /// knight out of contact): each such leg is a deferred leaf ([`LegTrie::is_deferred`]), a
    /// complete move, and [`Ruleset::deferred_canter_trie`] builds the rest of that piece's
    /// canters when a search goes there. A search builds a trie at nearly every new leaf and
    /// descends below few of its first legs, and canter trees were a third of its work
    /// (docs/BENCHMARKS.md).
    ///
    /// The same first legs as the full trie, each piece's in the same place among the root's
    /// children, except that a deferred piece's first canter legs come in direction order (N,
    /// NE, ..., NW): the full trie orders them by the destinations below them, which needs
    /// the tree this skips. Move numbers (`complete`) count moves but name none here.
    pub fn leg_trie_deferring_canters(&self, pos: &Position, scratch: &mut TrieScratch) -> LegTrie {
        self.leg_trie_with(pos, scratch, true)
    }

    /// The quiet canters of the piece on `origin` as a trie of their own (its root is the
    /// piece before its first leg): the continuation of its deferred legs in
    /// [`Ruleset::leg_trie_deferring_canters`]'s trie of `pos`. Its nodes and order are those
    /// of the piece's canters in the full trie; move numbers count this trie's moves only.
    pub fn deferred_canter_trie(&self, pos: &Position, origin: Square, scratch: &mut TrieScratch) -> LegTrie {
        let cx = Context::new(self, pos);
        debug_assert!(cx.mine.contains(origin), "a piece of the side to move");
        let mut out = Out::start(&mut scratch.nodes, &mut scratch.last_child);
        // Without hot landings, a knight's canters are a man's: the same limits, and every
        // square of the tree ends a move (a piece lands only outside its own castle, so also
        // when it must leave its castle): `dests` of the full build.
        let (friends, landing, expand) = cx.quiet_limits(origin, Bitboard::EMPTY);
        cx.fill_canter_tree(&mut scratch.tree, origin, friends, landing, expand);
        debug_assert!(
            !cx.knights.contains(origin) || (scratch.tree.reached & cx.hot_for(origin)).is_empty(),
            "a deferred knight's canters reach no hot landing"
        );
        let mut first = NONE;
        out.insert_tree(&scratch.tree, scratch.tree.reached, &mut scratch.insert, &mut first);
        let moves = out.moves;
        LegTrie { nodes: scratch.nodes.clone(), moves }
    }

    fn leg_trie_with(&self, pos: &Position, scratch: &mut TrieScratch, defer: bool) -> LegTrie {
        match self.build_leg_trie(pos, scratch, defer) {
            Some(moves) => LegTrie { nodes: scratch.nodes.clone(), moves },
            None => {
                // Two pieces can make the same capture back to their origins: the reference's
                // rule for that rare case is kept in one place.
                let mut moves = Vec::new();
                let mut paths = FlatPaths::default();
                self.legal_moves_and_paths(pos, &mut moves, &mut paths);
                LegTrie::from_paths(&paths)
            }
        }
    }

    /// Builds the trie into `s.nodes`; the number of moves, or `None` where two pieces share a
    /// capture that returns to its origin.
    ///
    /// With `defer`, the quiet canters of a piece without captures or hot landings become
    /// deferred first legs (see [`Ruleset::leg_trie_deferring_canters`]).
    fn build_leg_trie(&self, pos: &Position, s: &mut TrieScratch, defer: bool) -> Option<u32> {
        let cx = Context::new(self, pos);
        let ob = cx.obligations();
        let flags = self.flags();
        let same_landing = !flags.charge_may_enter_own_castle_if_capturing;
        let movable = ob.movers & !cx.opp_castle;
        let quiet = !ob.must_capture;
        s.returning.clear();
        let mut out = Out::start(&mut s.nodes, &mut s.last_child);
        let empty = cx.empty;
        // Where a canter could land, for knights that might be deferred (computed once).
        let mut near_mine: Option<Bitboard> = None;
        // Per direction, the pieces with a first canter leg that way (computed once).
        let mut first_canters: Option<[Bitboard; 8]> = None;
        for origin in movable {
            let can_jump = ob.jumpers.contains(origin);
            let may_canter = cx.may_canter(origin);
            let knight = cx.knights.contains(origin);
            let hot = if knight && may_canter { cx.hot_for(origin) } else { Bitboard::EMPTY };
            // A piece that cannot capture and whose canters cannot reach a hot landing (every
            // man; a knight out of contact) has quiet canters only, each first leg a move, and
            // the same canters as a man: they may be deferred.
            let defer_canters = defer
                && quiet
                && may_canter
                && !can_jump
                && (hot.is_empty()
                    || (hot & *near_mine.get_or_insert_with(|| canter_landings(cx.mine)) & same_parity(origin))
                        .is_empty());
            let mut starts = Bitboard::EMPTY;
            if knight && may_canter && !defer_canters {
                let (friends, landing, expand) = cx.charge_limits(origin, hot);
                cx.fill_canter_tree(&mut s.tree, origin, friends, landing, expand);
                starts = s.tree.reached & hot;
            }
            let mut first = NONE;
            if can_jump || starts.any() {
                s.captures.clear();
                s.squares.clear();
                let mut shared = false;
                let mut buf = [0u8; 32];
                let around = empty | Bitboard::from_square(origin);
                let mut record = |prefix: &[Square], to: Square, captured: Bitboard, jumps: &[u8]| {
                    if to == origin {
                        if s.returning.iter().any(|&(o, c)| o != origin && c == captured) {
                            shared = true;
                        }
                        s.returning.push((origin, captured));
                    }
                    if ob.exit_castle && cx.own_castle.contains(to) {
                        return;
                    }
                    let legs = prefix.len() - 1 + jumps.len();
                    let found = s.captures.iter().position(|c| c.to == to && c.captured == captured);
                    if let Some(i) = found {
                        let c = &s.captures[i];
                        let better = match legs.cmp(&(c.len as usize - 1)) {
                            Ordering::Less => true,
                            Ordering::Greater => false,
                            Ordering::Equal => {
                                let old = &s.squares[c.start as usize..(c.start + c.len) as usize];
                                let new =
                                    prefix.iter().copied().chain(jumps.iter().map(|&j| Square::from_index(j as usize)));
                                let old = written_keys(old.iter().copied(), legs + 1, c.first_jump as usize);
                                written_keys(new, legs + 1, prefix.len() - 1).cmp(old) == Ordering::Less
                            }
                        };
                        if !better {
                            return;
                        }
                    }
                    let start = s.squares.len() as u32;
                    s.squares.extend_from_slice(prefix);
                    s.squares.extend(jumps.iter().map(|&j| Square::from_index(j as usize)));
                    let c = Capture { to, captured, start, len: legs as u32 + 1, first_jump: prefix.len() as u32 - 1 };
                    match found {
                        Some(i) => s.captures[i] = c,
                        None => s.captures.push(c),
                    }
                };
                if can_jump {
                    cx.jumps(origin, cx.theirs, around, &mut buf, 0, &mut |to, c, j| record(&[origin], to, c, j));
                }
                for start in starts {
                    s.path.clear();
                    s.tree.path_into(start, &mut s.path);
                    let prefix = &s.path;
                    cx.jumps(start, cx.theirs, around, &mut buf, 0, &mut |to, c, j| record(prefix, to, c, j));
                }
                if shared {
                    return None;
                }
                for c in &s.captures {
                    let path = &s.squares[c.start as usize..(c.start + c.len) as usize];
                    out.insert(path, c.first_jump as usize, &mut first);
                }
            }
            if defer_canters {
                // The first legs of the piece's canter tree: a leap over a friend onto a square
                // where it may land (empty, outside its own castle), each a move itself.
                let leapers =
                    first_canters.get_or_insert_with(|| first_canter_origins(cx.mine, empty & !cx.own_castle));
                for (d, &offset) in DIRECTIONS.iter().enumerate() {
                    if leapers[d].contains(origin) {
                        let to = Square::from_index((origin.index() as i32 + 2 * offset) as usize);
                        out.push_deferred(Leg { from: origin, to, jump: false }, &mut first);
                    }
                }
            } else if quiet && may_canter {
                let shared_tree =
                    knight && same_landing && (flags.charge_rule != ChargeRule::Later || starts.is_empty());
                let tree: &CanterTree = if shared_tree {
                    &s.tree
                } else {
                    let (friends, landing, expand) = cx.quiet_limits(origin, hot);
                    let tree = if knight { &mut s.quiet } else { &mut s.tree };
                    cx.fill_canter_tree(tree, origin, friends, landing, expand);
                    tree
                };
                let mut dests = tree.reached & !hot;
                if ob.exit_castle {
                    dests &= !cx.own_castle;
                }
                if first == NONE {
                    out.insert_tree(tree, dests, &mut s.insert, &mut first);
                } else {
                    for to in dests {
                        s.path.clear();
                        tree.path_into(to, &mut s.path);
                        out.insert(&s.path, s.path.len() - 1, &mut first);
                    }
                }
            }
        }
        if quiet {
            let first_step = out.nodes.len() as u32;
            self.for_each_step(&cx, &ob, pos, |from, to, _| {
                if !(ob.exit_castle && cx.own_castle.contains(to)) {
                    out.push_step(Leg { from, to, jump: false });
                }
            });
            out.link_steps(first_step);
        }
        Some(out.moves)
    }
}
