//! The search tree: an arena of nodes with `u32` links, children stored contiguously, plus the
//! states of expanded nodes. Trees persist between moves ([`Tree::advance`]) so a search can
//! reuse the subtree of the move that was played.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::eval::Wdl;
use crate::game::{GameState, Side, Terminal};
use crate::SearchError;

/// Marks a missing link.
pub(crate) const NONE: u32 = u32::MAX;

/// Life cycle of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Created with its parent's expansion; no state yet.
    Fresh,
    /// Has its state, not evaluated, not waiting (only a new root).
    Leaf,
    /// Waiting for the evaluator in the current round.
    Pending,
    /// Evaluated; its children exist.
    Expanded,
    /// The game is over here; the outcome is in `proof`.
    Terminal,
}

/// Game-theoretic status of a node, seen by its *chooser* (the player who picked the edge
/// into it; for the root, its own player to move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Proof {
    Unknown,
    Win,
    Loss,
    Draw,
}

impl Proof {
    pub(crate) fn from_outcome(outcome: Terminal, chooser: Side) -> Proof {
        match outcome {
            Terminal::Win(p) if p == chooser => Proof::Win,
            Terminal::Win(_) => Proof::Loss,
            Terminal::Draw => Proof::Draw,
        }
    }

    /// The same status seen by the other player.
    pub(crate) fn flip(self) -> Proof {
        match self {
            Proof::Win => Proof::Loss,
            Proof::Loss => Proof::Win,
            other => other,
        }
    }

    /// The exact utility of a proven status for the search (a draw costs `draw_penalty`).
    pub(crate) fn utility(self, draw_penalty: f32) -> f32 {
        match self {
            Proof::Draw => -draw_penalty,
            other => other.wdl().value(),
        }
    }

    /// The exact value of a proven status (`DRAW` for unknown, never used then).
    pub(crate) fn wdl(self) -> Wdl {
        match self {
            Proof::Win => Wdl::WIN,
            Proof::Loss => Wdl::LOSS,
            Proof::Draw | Proof::Unknown => Wdl::DRAW,
        }
    }

    /// The outcome of the game for a status seen by `chooser`.
    pub(crate) fn outcome(self, chooser: Side) -> Option<Terminal> {
        match self {
            Proof::Unknown => None,
            Proof::Win => Some(Terminal::Win(chooser)),
            Proof::Loss => Some(Terminal::Win(chooser.opponent())),
            Proof::Draw => Some(Terminal::Draw),
        }
    }
}

/// One legal action of an expanded node, and the child node it leads to once a descent has
/// chosen it. A node has about a hundred children in Camelot and most are never visited: an
/// edge is 12 bytes where a node with its statistics is 64, so an expansion writes a fifth of
/// the memory it would if every child were a node (lc0 splits edges from nodes alike).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Edge {
    pub action: u32,
    /// The evaluator's prior, normalised (root noise mixed in while `RootSearch::noised`).
    pub prior: f32,
    /// The child node, `NONE` until a descent chooses this edge (a root child's is made when a
    /// search prepares the root).
    pub node: u32,
}

impl Edge {
    /// An edge with no node yet.
    #[inline]
    pub(crate) fn new(action: u32, prior: f32) -> Edge {
        Edge { action, prior, node: NONE }
    }

    /// The proof distance of the child this edge leads to ([`Node::proof_plies`]; 0 with no
    /// node yet).
    #[inline]
    pub(crate) fn proof_plies(&self, nodes: &[Node]) -> u16 {
        if self.node == NONE {
            0
        } else {
            nodes[self.node as usize].proof_plies
        }
    }
}

/// One node: the edge that leads to it and its place in the tree; its statistics are in the
/// tree's parallel [`Stats`] array.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub parent: u32,
    /// Index into the tree's state arena, `NONE` until the state exists.
    pub state: u32,
    /// Index of the edge into this node in the tree's edge arena (`NONE` for the root).
    pub edge: u32,
    /// Sum of backed-up draw probabilities.
    pub draw_sum: f64,
    /// The evaluator's value of this node, from the view of `player` (Gumbel's mixed value).
    pub raw_value: f32,
    /// Side to move at this node (meaningful once the state exists and is not terminal).
    pub player: Side,
    /// Side who chose the edge into this node; for the root, `player`.
    pub chooser: Side,
    /// For a node proven won or lost: the plies to the end of the game under the proof,
    /// counting the chooser's ply that the edge into this node belongs to (a move that ends
    /// the game: 1). Lets the solver prefer the shortest win and the longest resistance.
    /// 0 while unproven and for a draw. The root's is never read (after tree reuse it may
    /// count a ply of its former chooser): the search reports its chosen child's.
    pub proof_plies: u16,
}

/// What a descent reads of each node, in one dense array parallel to the nodes: the numbers
/// that rank it among its siblings, and its kind and edges, so that going down one level needs
/// nothing but this array and the edges.
///
/// Statistics are kept from the view of the node's chooser, so a parent ranks its children by
/// their own numbers, whoever moves next.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stats {
    /// Sum of backed-up `win - loss` values, chooser's view.
    pub value_sum: f64,
    pub visits: u32,
    /// Descents through this node whose leaf is still waiting for evaluation.
    pub in_flight: u32,
    /// The node's edges: `edges[first_edge..first_edge + num_edges]` once expanded.
    pub first_edge: u32,
    pub num_edges: u32,
    /// Where `prefix` holds: how many leading children have visits or descents in flight
    /// (the first unvisited child is this one).
    pub explored: u32,
    pub proof: Proof,
    pub kind: Kind,
    /// Whether the player to move here is the node's chooser (the sign of its value for its
    /// children's choice).
    pub same_player: bool,
    /// Whether the children's priors do not increase with their index and the visited ones
    /// (in flight included) are the first `explored`: then child `explored` is the best
    /// unvisited one, and PUCT need not score the children after it. Set at expansion where the
    /// priors allow (a uniform evaluator's always do); PUCT keeps it true, anything that
    /// visits or unvisits children out of order (root noise, Gumbel, an abandoned leaf) clears it.
    pub prefix: bool,
}

impl Stats {
    /// A fresh node with no visit yet.
    #[inline]
    pub(crate) fn new() -> Stats {
        Stats {
            value_sum: 0.0,
            visits: 0,
            in_flight: 0,
            first_edge: NONE,
            num_edges: 0,
            explored: 0,
            proof: Proof::Unknown,
            kind: Kind::Fresh,
            same_player: true,
            prefix: false,
        }
    }

    /// Index range of the node's edges in the edge arena.
    #[inline]
    pub(crate) fn children(&self) -> std::ops::Range<usize> {
        if self.num_edges == 0 {
            0..0
        } else {
            self.first_edge as usize..(self.first_edge + self.num_edges) as usize
        }
    }

    /// Mean `win - loss` over completed visits, chooser's view.
    #[inline]
    pub(crate) fn q(&self) -> f64 {
        mean_value(self.value_sum, self.visits)
    }
}

/// A value sum over `visits` visits as a mean (0 with no visit).
#[inline]
fn mean_value(value_sum: f64, visits: u32) -> f64 {
    if visits == 0 {
        0.0
    } else {
        value_sum / visits as f64
    }
}

/// What the selection rules read of one child, whether its node exists yet or not.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Child {
    pub prior: f32,
    pub visits: u32,
    pub in_flight: u32,
    pub proof: Proof,
    /// Sum of backed-up `win - loss` values, chooser's view.
    pub value_sum: f64,
}

impl Child {
    /// The child whose node has statistics `stats`, reached through an edge with `prior`.
    #[inline]
    pub(crate) fn of(prior: f32, stats: &Stats) -> Child {
        Child {
            prior,
            visits: stats.visits,
            in_flight: stats.in_flight,
            proof: stats.proof,
            value_sum: stats.value_sum,
        }
    }

    /// Mean `win - loss` over completed visits, chooser's view.
    #[inline]
    pub(crate) fn q(&self) -> f64 {
        mean_value(self.value_sum, self.visits)
    }
}

/// The children of one node: its edges, with the tree's statistics for those that have a node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Children<'a> {
    pub edges: &'a [Edge],
    pub stats: &'a [Stats],
}

impl<'a> Children<'a> {
    /// The children of the node whose statistics are `parent`.
    #[inline]
    pub(crate) fn of(parent: &Stats, edges: &'a [Edge], stats: &'a [Stats]) -> Children<'a> {
        Children { edges: &edges[parent.children()], stats }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.edges.len()
    }

    /// Child `i` (an edge without a node reads as unvisited and unproven).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Child {
        let edge = self.edges[i];
        if edge.node == NONE {
            Child { prior: edge.prior, visits: 0, in_flight: 0, proof: Proof::Unknown, value_sum: 0.0 }
        } else {
            Child::of(edge.prior, &self.stats[edge.node as usize])
        }
    }

    /// Every child, in edge order.
    #[inline]
    pub(crate) fn iter(&self) -> impl Iterator<Item = Child> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl Node {
    fn root(player: Side) -> Node {
        Node {
            parent: NONE,
            state: 0,
            edge: NONE,
            draw_sum: 0.0,
            raw_value: 0.0,
            player,
            chooser: player,
            proof_plies: 0,
        }
    }

    /// A fresh child of `parent` through edge `edge`, chosen by `chooser`.
    #[inline]
    pub(crate) fn child(parent: u32, edge: u32, chooser: Side) -> Node {
        Node { parent, state: NONE, edge, draw_sum: 0.0, raw_value: 0.0, player: chooser, chooser, proof_plies: 0 }
    }
}

/// Per-search bookkeeping of a tree's root.
#[derive(Clone, Debug, Default)]
pub(crate) struct RootSearch {
    /// Descents started in this search call (root evaluation not counted).
    pub sims_started: u32,
    /// Descents backed up in this search call.
    pub sims_done: u32,
    /// Whether the root priors currently contain Dirichlet noise (clean copy below).
    pub noised: bool,
    /// The root children's priors before noise.
    pub clean_priors: Vec<f32>,
    /// Whether the Gumbel fields below describe the current root in this search.
    pub gumbel_ready: bool,
    /// Gumbel sample per root child, scaled by `gumbel_scale`.
    pub gumbel: Vec<f32>,
    /// `ln(prior)` per root child, shifted so the largest is 0.
    pub logits: Vec<f32>,
    /// Visits to each root child in this search, in-flight ones included.
    pub visits: Vec<u32>,
    /// Considered-visit schedule of sequential halving for `table_key`.
    pub table: Vec<u32>,
    /// `(considered actions, simulations)` that `table` was built for.
    pub table_key: (u32, u32),
    /// The draw penalty of the last search (see `SearchConfig::draw_penalty`): value sums
    /// include it, so re-rooting under the other player needs it.
    pub draw_penalty: f64,
}

/// One game's search tree, kept between moves.
///
/// A tree owns its root state, its nodes and states (arenas reused across searches, so the
/// steady state allocates nothing), and its own random stream, seeded by the caller: a tree's
/// search results depend only on its seed, its history and the evaluator, never on the other
/// trees searched in the same batch.
#[derive(Clone, Debug)]
pub struct Tree<G> {
    pub(crate) nodes: Vec<Node>,
    pub(crate) stats: Vec<Stats>,
    pub(crate) edges: Vec<Edge>,
    pub(crate) states: Vec<G>,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) move_number: u32,
    pub(crate) search: RootSearch,
    spare_nodes: Vec<Node>,
    spare_stats: Vec<Stats>,
    spare_edges: Vec<Edge>,
    spare_states: Vec<G>,
    old_index: Vec<u32>,
    legal: Vec<u32>,
}

impl<G: GameState> Tree<G> {
    /// A tree rooted at `state` whose randomness (root noise, Gumbel samples, move sampling)
    /// comes from a ChaCha8 stream seeded with `seed`.
    pub fn new(state: G, seed: u64) -> Tree<G> {
        Tree::with_rng(state, ChaCha8Rng::seed_from_u64(seed))
    }

    /// A tree rooted at `state` using the given random stream.
    pub fn with_rng(state: G, rng: ChaCha8Rng) -> Tree<G> {
        let mut tree = Tree {
            nodes: Vec::new(),
            stats: Vec::new(),
            edges: Vec::new(),
            states: Vec::new(),
            rng,
            move_number: 0,
            search: RootSearch::default(),
            spare_nodes: Vec::new(),
            spare_stats: Vec::new(),
            spare_edges: Vec::new(),
            spare_states: Vec::new(),
            old_index: Vec::new(),
            legal: Vec::new(),
        };
        tree.reset_root(state);
        tree
    }

    /// Replaces the whole tree by a new root `state` (a new game), keeping the allocations and
    /// continuing the random stream. Resets the move number to 0.
    pub fn reset(&mut self, state: G) {
        self.reset_root(state);
        self.move_number = 0;
    }

    /// Restarts the random stream from `seed`.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn reset_root(&mut self, state: G) {
        self.nodes.clear();
        self.stats.clear();
        self.edges.clear();
        self.states.clear();
        let player = state.to_move();
        let (kind, proof) = match state.terminal() {
            Some(outcome) => (Kind::Terminal, Proof::from_outcome(outcome, player)),
            None => (Kind::Leaf, Proof::Unknown),
        };
        self.states.push(state);
        self.nodes.push(Node::root(player));
        self.stats.push(Stats { proof, kind, ..Stats::new() });
        self.search.noised = false;
        self.search.gumbel_ready = false;
    }

    /// The state at the root.
    pub fn root_state(&self) -> &G {
        &self.states[self.nodes[0].state as usize]
    }

    /// The move number the temperature schedule reads: starts at 0, +1 per
    /// [`Tree::advance`]; games whose moves span several decisions may set it to count whole
    /// moves instead.
    pub fn move_number(&self) -> u32 {
        self.move_number
    }

    /// Sets the move number (see [`Tree::move_number`]).
    pub fn set_move_number(&mut self, move_number: u32) {
        self.move_number = move_number;
    }

    /// Number of nodes in the tree: the root, its children once a search has prepared it, and
    /// every other child a descent has chosen (other edges not chosen yet are not nodes).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Completed visits of the root, its own evaluation included.
    pub fn root_visits(&self) -> u32 {
        self.stats[0].visits
    }

    /// Plays `action` at the root: the child becomes the new root and keeps its subtree and
    /// statistics (tree reuse), everything else is dropped. Works whether or not the root
    /// has been searched; call it for the opponent's moves too.
    pub fn advance(&mut self, action: u32) -> Result<(), SearchError> {
        let root = self.stats[0];
        if root.kind == Kind::Terminal {
            return Err(SearchError::IllegalAction { action });
        }
        if root.kind == Kind::Expanded {
            let edge = root
                .children()
                .find(|&e| self.edges[e].action == action)
                .ok_or(SearchError::IllegalAction { action })?;
            let child = self.edges[edge].node;
            if child != NONE && self.stats[child as usize].kind == Kind::Expanded {
                self.compact(child);
            } else {
                let mut state = self.root_state().clone();
                state.apply(action);
                self.reset_root(state);
            }
        } else {
            self.legal.clear();
            self.states[self.nodes[0].state as usize].legal_actions(&mut self.legal);
            if !self.legal.contains(&action) {
                return Err(SearchError::IllegalAction { action });
            }
            let mut state = self.root_state().clone();
            state.apply(action);
            self.reset_root(state);
        }
        self.move_number += 1;
        Ok(())
    }

    /// Copies the subtree under `new_root` into the spare arenas (breadth first, each node's
    /// edges kept contiguous) and swaps them in.
    fn compact(&mut self, new_root: u32) {
        self.spare_nodes.clear();
        self.spare_stats.clear();
        self.spare_edges.clear();
        self.spare_states.clear();
        self.old_index.clear();
        let mut root = self.nodes[new_root as usize];
        let mut root_stats = self.stats[new_root as usize];
        root.parent = NONE;
        root.edge = NONE;
        if root.chooser != root.player {
            // Utility sums are `v - penalty * d` for each side: the other side's is
            // `-v - penalty * d`.
            root_stats.value_sum = -root_stats.value_sum - 2.0 * self.search.draw_penalty * root.draw_sum;
            root_stats.proof = root_stats.proof.flip();
            root.chooser = root.player;
            root_stats.same_player = true;
        }
        self.spare_nodes.push(root);
        self.spare_stats.push(root_stats);
        self.old_index.push(new_root);
        let mut i = 0;
        while i < self.spare_nodes.len() {
            let old = self.nodes[self.old_index[i] as usize];
            if old.state != NONE {
                let idx = self.spare_states.len() as u32;
                self.spare_states.push(self.states[old.state as usize].clone());
                self.spare_nodes[i].state = idx;
            }
            let old_stats = self.stats[self.old_index[i] as usize];
            if old_stats.num_edges > 0 {
                self.spare_stats[i].first_edge = self.spare_edges.len() as u32;
                for e in old_stats.children() {
                    let mut edge = self.edges[e];
                    if edge.node != NONE {
                        let mut node = self.nodes[edge.node as usize];
                        node.parent = i as u32;
                        node.edge = self.spare_edges.len() as u32;
                        self.spare_nodes.push(node);
                        self.spare_stats.push(self.stats[edge.node as usize]);
                        self.old_index.push(edge.node);
                        edge.node = self.spare_nodes.len() as u32 - 1;
                    }
                    self.spare_edges.push(edge);
                }
            }
            i += 1;
        }
        std::mem::swap(&mut self.nodes, &mut self.spare_nodes);
        std::mem::swap(&mut self.stats, &mut self.spare_stats);
        std::mem::swap(&mut self.edges, &mut self.spare_edges);
        std::mem::swap(&mut self.states, &mut self.spare_states);
        self.search.noised = false;
        self.search.gumbel_ready = false;
    }
}
