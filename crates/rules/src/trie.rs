//! The trie of legs that the search walks (DESIGN.md, "The Game trait and the action encoding").
//!
//! A turn's legal moves, each written by its canonical path, are merged into a trie whose edges
//! are legs. A decision is one leg, or `stop` at a node where the path so far is a complete
//! move that could also continue (an optional further canter leg). Every legal move is reached
//! exactly once, and the side to move does not change inside the trie.
//!
//! Nodes live in one vector with sibling links, so building a trie allocates once, however many
//! moves it holds: the search builds one at every new turn.

use crate::movegen::Move;
use crate::notation::{FlatPaths, Path};
use crate::square::Square;

/// One leg: where the moving piece goes next, and whether it jumps.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Leg {
    /// Square the leg starts from.
    pub from: Square,
    /// Square it lands on.
    pub to: Square,
    /// Whether the leg is a jump (captures the piece between).
    pub jump: bool,
}

pub(crate) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) leg: Leg,
    /// The legs below this first leg are not in this trie (see [`LegTrie::is_deferred`]).
    pub(crate) deferred: bool,
    pub(crate) parent: u32,
    pub(crate) first_child: u32,
    pub(crate) next_sibling: u32,
    pub(crate) complete: u32,
}

impl Node {
    /// The root: no leg made yet.
    pub(crate) const ROOT: Node = Node {
        leg: Leg { from: Square::from_index(0), to: Square::from_index(0), jump: false },
        deferred: false,
        parent: NONE,
        first_child: NONE,
        next_sibling: NONE,
        complete: NONE,
    };
}

/// The legal moves of one turn as a trie of legs; node 0 is the root (no leg made yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegTrie {
    pub(crate) nodes: Vec<Node>,
    /// Number of moves (nodes with a `complete` index).
    pub(crate) moves: u32,
}

/// Iterator over a node's children: each leg and the node it leads to.
pub struct Children<'a> {
    trie: &'a LegTrie,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = (Leg, u32);

    #[inline]
    fn next(&mut self) -> Option<(Leg, u32)> {
        if self.next == NONE {
            return None;
        }
        let index = self.next;
        let node = &self.trie.nodes[index as usize];
        self.next = node.next_sibling;
        Some((node.leg, index))
    }
}

/// Scratch state while a trie is built: each node's last child (to append in order) and an
/// open-addressing table of the root's children by leg (at most 20 pieces x 16 legs = 320, so
/// the table never fills).
struct Build {
    last_child: Vec<u32>,
    root: [u32; 512],
}

impl Build {
    fn new(moves: usize) -> Build {
        let mut last_child = Vec::with_capacity(moves * 2 + 1);
        last_child.push(NONE);
        Build { last_child, root: [NONE; 512] }
    }

    /// The table slot of root leg `leg`: the slot holding it, or the empty slot where it goes.
    fn root_slot(&self, nodes: &[Node], leg: Leg) -> usize {
        let mut slot = (leg.from.index() * 97 + leg.to.index() * 13) & 511;
        loop {
            let child = self.root[slot];
            if child == NONE {
                return slot;
            }
            let l = nodes[child as usize].leg;
            if l.from == leg.from && l.to == leg.to {
                return slot;
            }
            slot = (slot + 1) & 511;
        }
    }
}

impl LegTrie {
    /// Builds the trie from moves and their canonical paths; node `complete` values index
    /// `moves`.
    pub fn new(moves: &[(Move, Path)]) -> LegTrie {
        let mut trie = LegTrie::with_root(moves.len());
        let mut build = Build::new(moves.len());
        for (index, (_, path)) in moves.iter().enumerate() {
            trie.insert(&path.squares, path.first_jump, index as u32, &mut build);
        }
        trie
    }

    /// Builds the trie from flat paths (see [`crate::Ruleset::legal_moves_and_paths`]);
    /// node `complete` values index the paths.
    pub fn from_paths(paths: &FlatPaths) -> LegTrie {
        let mut trie = LegTrie::with_root(paths.len());
        let mut build = Build::new(paths.len());
        for index in 0..paths.len() {
            let (squares, first_jump) = paths.get(index);
            trie.insert(squares, first_jump, index as u32, &mut build);
        }
        trie
    }

    /// The trie of no move at all (a finished game's turn).
    pub fn empty() -> LegTrie {
        LegTrie::with_root(0)
    }

    fn with_root(moves: usize) -> LegTrie {
        let mut nodes = Vec::with_capacity(moves * 2 + 1);
        nodes.push(Node::ROOT);
        LegTrie { nodes, moves: moves as u32 }
    }

    fn insert(&mut self, squares: &[Square], first_jump: usize, index: u32, build: &mut Build) {
        let mut at = 0u32;
        for i in 0..squares.len() - 1 {
            let leg = Leg { from: squares[i], to: squares[i + 1], jump: i >= first_jump };
            // The root may have a hundred children: find them through the build's hash table.
            let slot = if at == 0 { Some(build.root_slot(&self.nodes, leg)) } else { None };
            let existing = match slot {
                Some(slot) => (build.root[slot] != NONE).then_some(build.root[slot]),
                None => self.child(at, leg.from, leg.to),
            };
            at = match existing {
                Some(child) => child,
                None => {
                    let child = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        leg,
                        deferred: false,
                        parent: at,
                        first_child: NONE,
                        next_sibling: NONE,
                        complete: NONE,
                    });
                    build.last_child.push(NONE);
                    // Append, so children keep insertion order.
                    match build.last_child[at as usize] {
                        NONE => self.nodes[at as usize].first_child = child,
                        last => self.nodes[last as usize].next_sibling = child,
                    }
                    build.last_child[at as usize] = child;
                    if let Some(slot) = slot {
                        build.root[slot] = child;
                    }
                    child
                }
            };
        }
        self.nodes[at as usize].complete = index;
    }

    /// The root node's index (no leg made yet).
    pub const ROOT: u32 = 0;

    /// The legs that may follow `node`, with the node each leads to.
    #[inline]
    pub fn children(&self, node: u32) -> Children<'_> {
        Children { trie: self, next: self.nodes[node as usize].first_child }
    }

    /// The child of `node` reached by the leg `from`-`to`.
    #[inline]
    pub fn child(&self, node: u32, from: Square, to: Square) -> Option<u32> {
        self.children(node).find(|(leg, _)| leg.from == from && leg.to == to).map(|(_, c)| c)
    }

    /// Whether legs may follow `node`.
    #[inline]
    pub fn has_children(&self, node: u32) -> bool {
        self.nodes[node as usize].first_child != NONE
    }

    /// Index of the move that ends at `node`, if one does.
    #[inline]
    pub fn complete(&self, node: u32) -> Option<u32> {
        let c = self.nodes[node as usize].complete;
        (c != NONE).then_some(c)
    }

    /// Whether `node` is a first leg whose continuations were left out of this trie: a first
    /// canter leg in a trie from [`crate::Ruleset::leg_trie_deferring_canters`]. The leg
    /// itself is a complete move; [`crate::Ruleset::deferred_canter_trie`] holds the legs that
    /// may follow it. Never true in a trie from any other constructor.
    #[inline]
    pub fn is_deferred(&self, node: u32) -> bool {
        self.nodes[node as usize].deferred
    }

    /// Whether `stop` is a decision at `node`: a move ends here and legs may still follow.
    #[inline]
    pub fn can_stop(&self, node: u32) -> bool {
        self.complete(node).is_some() && self.has_children(node)
    }

    /// The node `node` hangs from and the leg that leads to it (`None` at the root).
    #[inline]
    pub fn parent(&self, node: u32) -> Option<(u32, Leg)> {
        let n = &self.nodes[node as usize];
        (n.parent != NONE).then_some((n.parent, n.leg))
    }

    /// The legs from the root to `node`, in order.
    pub fn legs_to(&self, node: u32) -> Vec<Leg> {
        let mut legs = Vec::new();
        let mut at = node;
        while let Some((parent, leg)) = self.parent(at) {
            legs.push(leg);
            at = parent;
        }
        legs.reverse();
        legs
    }

    /// Number of legal moves: the nodes where a move ends, numbered `0..moves()`.
    #[inline]
    pub fn moves(&self) -> usize {
        self.moves as usize
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the trie holds no move.
    pub fn is_empty(&self) -> bool {
        !self.has_children(Self::ROOT)
    }
}
