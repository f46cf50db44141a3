//! The parts of Gumbel search (Danihelka et al. 2022, "Policy improvement by planning with
//! Gumbel") as small functions, after mctx: the sequential-halving visit schedule, the
//! completed-Q transform, and the deterministic interior selection.

use crate::tree::{Child, Children, Proof};

/// Smallest logit used for a zero prior, so that scores stay finite.
pub(crate) const MIN_LOGIT: f32 = -1.0e9;

/// Fills `out` with the sequential-halving schedule for `m` considered actions and `sims`
/// simulations: entry `k` is the visit count an action must have to be eligible at root
/// simulation `k`. Same sequence as mctx's `get_sequence_of_considered_visits`.
pub(crate) fn considered_visit_sequence(m: u32, sims: u32, out: &mut Vec<u32>) {
    out.clear();
    if m <= 1 {
        out.extend(0..sims);
        return;
    }
    let log2max = 32 - (m - 1).leading_zeros(); // ceil(log2(m)) for m >= 2
    let mut considered = m;
    let mut visits = 0u32;
    while (out.len() as u32) < sims {
        let extra = (sims / (log2max * considered)).max(1);
        for _ in 0..extra {
            for _ in 0..considered {
                out.push(visits);
            }
            visits += 1;
        }
        considered = (considered / 2).max(2);
    }
    out.truncate(sims as usize);
}

/// How children's values enter completed Q: the `sigma` transform's constants, whether
/// the solver's proofs replace sampled means, and what a draw costs (see
/// `SearchConfig::draw_penalty`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct QRule {
    pub c_visit: f32,
    pub c_scale: f32,
    pub solver: bool,
    pub draw_penalty: f32,
}

impl QRule {
    pub(crate) fn of(config: &crate::SearchConfig) -> QRule {
        QRule {
            c_visit: config.gumbel_c_visit,
            c_scale: config.gumbel_c_scale,
            solver: config.solver,
            draw_penalty: config.draw_penalty,
        }
    }
}

/// Writes into `out` the transformed completed Q-values `sigma(q)` of `children`, from the
/// view of their parent's player (the children's chooser).
///
/// Visited children keep their mean value (their exact value when proven and `solver` is on);
/// unvisited ones get the mixed value of `raw_value` (the parent's network value) and the
/// prior-weighted visited Q-values, as in mctx's `qtransform_completed_by_mix_value`. The
/// completed values are mapped from the known value range `[-1, 1]` to `[0, 1]` (MuZero's
/// normalisation with known bounds, as in the paper) and multiplied by
/// `(c_visit + max visits) * c_scale`.
///
/// mctx instead rescales by the siblings' own min and max, with `c_scale = 0.1`; with the
/// paper's `c_scale = 1` that rescaling would make every node's improved policy one-hot on
/// its best child after a single visit, whatever the size of the gap.
pub(crate) fn completed_q(children: Children, raw_value: f32, rule: QRule, out: &mut Vec<f32>) {
    let QRule { c_visit, c_scale, solver, draw_penalty } = rule;
    out.clear();
    let q_of = |c: &Child| -> f64 {
        if solver && c.proof != Proof::Unknown {
            c.proof.utility(draw_penalty) as f64
        } else {
            c.q()
        }
    };
    let mut sum_visits = 0u64;
    let mut max_visits = 0u32;
    let mut sum_probs = 0.0f64;
    let mut weighted = 0.0f64;
    for c in children.iter() {
        max_visits = max_visits.max(c.visits);
        if c.visits > 0 {
            sum_visits += c.visits as u64;
            let p = (c.prior as f64).max(f64::MIN_POSITIVE);
            sum_probs += p;
            weighted += p * q_of(&c);
        }
    }
    let mixed = if sum_visits > 0 {
        (raw_value as f64 + sum_visits as f64 * (weighted / sum_probs)) / (sum_visits as f64 + 1.0)
    } else {
        raw_value as f64
    };
    let scale = (c_visit as f64 + max_visits as f64) * c_scale as f64;
    for c in children.iter() {
        let q = if c.visits > 0 { q_of(&c) } else { mixed };
        let unit = ((q + 1.0) * 0.5).clamp(0.0, 1.0);
        out.push((scale * unit) as f32);
    }
}

/// `ln(prior)`, floored at [`MIN_LOGIT`].
#[inline]
pub(crate) fn logit(prior: f32) -> f32 {
    if prior > 0.0 {
        prior.ln().max(MIN_LOGIT)
    } else {
        MIN_LOGIT
    }
}

/// Softmax of `logit(prior) + sigma[i]` over `children`, into `out` (over `sigma` in place
/// would do, but the caller still needs `sigma` at the root).
pub(crate) fn improved_policy(children: Children, sigma: &[f32], out: &mut Vec<f32>) {
    out.clear();
    let mut max = f32::NEG_INFINITY;
    for (c, s) in children.iter().zip(sigma) {
        let z = logit(c.prior) + s;
        max = max.max(z);
        out.push(z);
    }
    let mut sum = 0.0f32;
    for z in out.iter_mut() {
        *z = (*z - max).exp();
        sum += *z;
    }
    if sum > 0.0 {
        for z in out.iter_mut() {
            *z /= sum;
        }
    }
}

/// Index (within `children`) chosen by the deterministic interior rule
/// `argmax(pi'(a) - N(a) / (1 + sum N))`, where `pi'` is the improved policy; in-flight
/// descents count as visits so that batched descents spread out. Proven losses are skipped
/// and a proven win is taken at once when `solver` is on.
pub(crate) fn interior_select(
    children: Children,
    raw_value: f32,
    rule: QRule,
    sigma: &mut Vec<f32>,
    probs: &mut Vec<f32>,
) -> usize {
    if rule.solver {
        if let Some(i) = children.iter().position(|c| c.proof == Proof::Win) {
            return i;
        }
    }
    completed_q(children, raw_value, rule, sigma);
    improved_policy(children, sigma, probs);
    let total: u64 = children.iter().map(|c| (c.visits + c.in_flight) as u64).sum();
    let denom = 1.0 + total as f32;
    let mut best = usize::MAX;
    let mut best_score = f32::NEG_INFINITY;
    for (i, (c, p)) in children.iter().zip(probs.iter()).enumerate() {
        if rule.solver && c.proof == Proof::Loss {
            continue;
        }
        let score = p - (c.visits + c.in_flight) as f32 / denom;
        if best == usize::MAX || score > best_score {
            best = i;
            best_score = score;
        }
    }
    if best == usize::MAX {
        // Every child is a proven loss: any will do; take the most visited.
        most_visited(children)
    } else {
        best
    }
}

/// Index of the child with the most completed visits (first on ties).
pub(crate) fn most_visited(children: Children) -> usize {
    let mut best = 0;
    let mut best_visits = 0;
    for (i, c) in children.iter().enumerate() {
        if c.visits > best_visits {
            best = i;
            best_visits = c.visits;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Edge, Stats};

    fn seq(m: u32, sims: u32) -> Vec<u32> {
        let mut out = Vec::new();
        considered_visit_sequence(m, sims, &mut out);
        out
    }

    // The expected sequences are mctx's own test cases (seq_halving_test.py).
    #[test]
    fn halving_matches_mctx() {
        assert_eq!(seq(8, 24), vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
        let mut extra = vec![0; 8];
        extra.extend([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
        extra.extend([4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10]);
        extra.extend([11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17]);
        assert_eq!(seq(8, 47), extra);
        assert_eq!(seq(8, 2), vec![0, 0]);
        assert_eq!(seq(8, 13), vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2]);
        assert_eq!(seq(7, 24), vec![0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8]);
        assert_eq!(seq(0, 16), (0..16).collect::<Vec<_>>());
        assert_eq!(seq(1, 16), (0..16).collect::<Vec<_>>());
    }

    /// Edges and node statistics for children `(prior, visits, q)`; an unvisited child gets no
    /// node, as in a tree.
    fn family(children: &[(f32, u32, f64)]) -> (Vec<Edge>, Vec<Stats>) {
        let mut edges = Vec::new();
        let mut stats = Vec::new();
        for (action, &(prior, visits, q)) in children.iter().enumerate() {
            let mut edge = Edge::new(action as u32, prior);
            if visits > 0 {
                edge.node = stats.len() as u32;
                stats.push(Stats { visits, value_sum: q * visits as f64, ..Stats::new() });
            }
            edges.push(edge);
        }
        (edges, stats)
    }

    #[test]
    fn completed_q_uses_mixed_value_for_unvisited() {
        // Two visited children with q = 1 and q = -1 and priors 0.25 each; raw value 0.5.
        let (edges, stats) = family(&[(0.25, 2, 1.0), (0.25, 2, -1.0), (0.5, 0, 0.0)]);
        let children = Children { edges: &edges, stats: &stats };
        let mut out = Vec::new();
        completed_q(children, 0.5, QRule { c_visit: 50.0, c_scale: 1.0, solver: false, draw_penalty: 0.0 }, &mut out);
        // weighted q = 0, mixed = (0.5 + 4 * 0) / 5 = 0.1; mapped from [-1, 1] to [0, 1]:
        // 1 -> 1, -1 -> 0, 0.1 -> 0.55; times (50 + 2) * 1.
        assert!((out[0] - 52.0).abs() < 1e-4);
        assert!(out[1].abs() < 1e-4);
        assert!((out[2] - 0.55 * 52.0).abs() < 1e-3);
        // Unvisited everywhere: the raw value fills in.
        let (edges, stats) = family(&[(0.5, 0, 0.0), (0.5, 0, 0.0)]);
        let fresh = Children { edges: &edges, stats: &stats };
        completed_q(fresh, -0.5, QRule { c_visit: 50.0, c_scale: 0.1, solver: false, draw_penalty: 0.0 }, &mut out);
        assert!((out[0] - 0.25 * 5.0).abs() < 1e-5 && out[0] == out[1]);
    }

    #[test]
    fn interior_rule_tracks_improved_policy() {
        // With equal Q everywhere, repeated selection should visit in proportion to priors:
        // every child has a node here, so that visits can be counted on it.
        let edges: Vec<Edge> = [0.5, 0.3, 0.2]
            .iter()
            .enumerate()
            .map(|(i, &p)| Edge { node: i as u32, ..Edge::new(i as u32, p) })
            .collect();
        let mut stats = vec![Stats::new(); 3];
        let (mut s, mut p) = (Vec::new(), Vec::new());
        for _ in 0..100 {
            let i = interior_select(
                Children { edges: &edges, stats: &stats },
                0.0,
                QRule { c_visit: 50.0, c_scale: 1.0, solver: false, draw_penalty: 0.0 },
                &mut s,
                &mut p,
            );
            stats[i].visits += 1;
        }
        assert_eq!(stats.iter().map(|c| c.visits).collect::<Vec<_>>(), [50, 30, 20]);
    }
}
