//! The trie of legs that the search walks (DESIGN.md, "The Game trait and the action encoding").
//!
//! A turn's legal moves, each written by its canonical path, are merged into a trie whose edges
//! are legs. A decision is one leg, or `stop` at a node where the path so far is a complete
//! move that could also continue (an optional further canter leg). Every legal move is reached
//! exactly once, and the side to move does not change inside the trie.

use crate::movegen::Move;
use crate::notation::Path;
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

/// A node of the trie: the legs that may follow, and the move completed here, if any.
#[derive(Clone, Debug, Default)]
pub struct TrieNode {
    /// The legs that may follow, with the index of the node each leads to.
    pub children: Vec<(Leg, u32)>,
    /// Index (into the move list the trie was built from) of the move that ends here.
    pub complete: Option<u32>,
    /// The node this one hangs from and the leg that leads here (`None` at the root).
    pub parent: Option<(u32, Leg)>,
}

impl TrieNode {
    /// Whether `stop` is a decision here: a move ends here and legs may still follow.
    pub fn can_stop(&self) -> bool {
        self.complete.is_some() && !self.children.is_empty()
    }
}

/// The legal moves of one turn as a trie of legs; node 0 is the root (no leg made yet).
#[derive(Clone, Debug)]
pub struct LegTrie {
    nodes: Vec<TrieNode>,
}

impl LegTrie {
    /// Builds the trie from moves and their canonical paths.
    pub fn new(moves: &[(Move, Path)]) -> LegTrie {
        let mut nodes = vec![TrieNode::default()];
        for (index, (_, path)) in moves.iter().enumerate() {
            let mut at = 0usize;
            for i in 0..path.legs() {
                let leg = Leg { from: path.squares[i], to: path.squares[i + 1], jump: path.is_jump_leg(i) };
                at = match nodes[at].children.iter().find(|(l, _)| *l == leg) {
                    Some(&(_, child)) => child as usize,
                    None => {
                        nodes.push(TrieNode { parent: Some((at as u32, leg)), ..TrieNode::default() });
                        let child = nodes.len() - 1;
                        nodes[at].children.push((leg, child as u32));
                        child
                    }
                };
            }
            nodes[at].complete = Some(index as u32);
        }
        LegTrie { nodes }
    }

    /// The root node (no leg made yet).
    pub fn root(&self) -> &TrieNode {
        &self.nodes[0]
    }

    /// Node `index`.
    pub fn node(&self, index: u32) -> &TrieNode {
        &self.nodes[index as usize]
    }

    /// The legs from the root to node `index`, in order.
    pub fn legs_to(&self, index: u32) -> Vec<Leg> {
        let mut legs = Vec::new();
        let mut at = index;
        while let Some((parent, leg)) = self.nodes[at as usize].parent {
            legs.push(leg);
            at = parent;
        }
        legs.reverse();
        legs
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the trie holds no move.
    pub fn is_empty(&self) -> bool {
        self.nodes[0].children.is_empty()
    }
}
