//! Backing up: a finished descent's value to the root, proofs to the ancestors, and the
//! undoing of descents that ended without a value.

use crate::eval::Wdl;
use crate::game::Side;
use crate::tree::{Edge, Kind, Node, Proof, Stats, Tree};

/// Adds one completed visit with value `wdl` (seen by `persp`) to `node` and its ancestors,
/// each with the sign of its own chooser, and removes the in-flight mark of the descent.
#[inline]
pub(crate) fn backup(nodes: &mut [Node], stats: &mut [Stats], mut node: u32, wdl: Wdl, persp: Side, draw_penalty: f32) {
    let v = wdl.value() as f64;
    let d = wdl.draw as f64;
    let cost = draw_penalty as f64 * d;
    loop {
        let n = &mut nodes[node as usize];
        let st = &mut stats[node as usize];
        st.visits += 1;
        st.in_flight = st.in_flight.saturating_sub(1);
        st.value_sum += if n.chooser == persp { v } else { -v } - cost;
        n.draw_sum += d;
        if node == 0 {
            break;
        }
        node = n.parent;
    }
}

/// Recomputes the proof status of `node` and its ancestors after a child was proven:
/// a node is won if one child is won for its player, lost if all children are lost,
/// drawn if all are proven and the best is a draw. A won node's distance to the end is its
/// shortest winning child's, a lost node's its longest-resisting child's (see
/// [`Node::proof_plies`]), plus the ply that ends at the node when its player is not its
/// chooser.
pub(crate) fn propagate_proof(nodes: &mut [Node], stats: &mut [Stats], edges: &[Edge], mut node: u32) {
    loop {
        let n = nodes[node as usize];
        let (mut any_win, mut all_proven, mut any_draw) = (false, true, false);
        let (mut shortest_win, mut longest_loss) = (u16::MAX, 0u16);
        let st = stats[node as usize];
        for edge in &edges[st.children()] {
            let proof = if edge.node == crate::tree::NONE { Proof::Unknown } else { stats[edge.node as usize].proof };
            let plies = edge.proof_plies(nodes);
            match proof {
                Proof::Win => {
                    any_win = true;
                    shortest_win = shortest_win.min(plies);
                }
                Proof::Draw => any_draw = true,
                Proof::Loss => longest_loss = longest_loss.max(plies),
                Proof::Unknown => all_proven = false,
            }
        }
        let (for_player, plies) = if any_win {
            (Proof::Win, shortest_win)
        } else if !all_proven {
            (Proof::Unknown, 0)
        } else if any_draw {
            (Proof::Draw, 0)
        } else {
            (Proof::Loss, longest_loss)
        };
        let proof = if n.chooser == n.player { for_player } else { for_player.flip() };
        // The chooser's ply ends where the player to move changes.
        let plies = match proof {
            Proof::Win | Proof::Loss if n.chooser != n.player => plies.saturating_add(1),
            Proof::Win | Proof::Loss => plies,
            Proof::Draw | Proof::Unknown => 0,
        };
        if proof == st.proof && plies == n.proof_plies {
            return;
        }
        stats[node as usize].proof = proof;
        nodes[node as usize].proof_plies = plies;
        if node == 0 {
            return;
        }
        node = n.parent;
    }
}

/// Undoes the in-flight marks of a descent that ended at `node` without a backup.
pub(crate) fn revert_path<G>(t: &mut Tree<G>, mut node: u32) {
    loop {
        let st = &mut t.stats[node as usize];
        st.in_flight = st.in_flight.saturating_sub(1);
        if node == 0 {
            return;
        }
        let parent = t.nodes[node as usize].parent;
        if parent == 0 && t.search.gumbel_ready {
            let i = (t.nodes[node as usize].edge - t.stats[0].first_edge) as usize;
            if let Some(v) = t.search.visits.get_mut(i) {
                *v = v.saturating_sub(1);
            }
        }
        node = parent;
    }
}

/// Takes back a queued leaf: its descent is undone and it returns to its unevaluated kind.
pub(crate) fn abandon<G>(t: &mut Tree<G>, node: u32) {
    revert_path(t, node);
    if node == 0 {
        t.stats[0].kind = Kind::Leaf;
    } else {
        // Its siblings after it may have visits: the visited ones need not be a prefix now.
        let parent = t.nodes[node as usize].parent;
        t.stats[parent as usize].prefix = false;
        t.stats[node as usize].kind = Kind::Fresh;
        t.nodes[node as usize].state = crate::tree::NONE;
        t.search.sims_started = t.search.sims_started.saturating_sub(1);
    }
}
