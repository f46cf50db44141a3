//! Choosing: which child a descent follows (PUCT, the Gumbel root's sequential halving) and
//! which move a finished search plays (proven wins, visits, temperature).

use rand::Rng;

use crate::config::SearchConfig;
use crate::game::GameState;
use crate::gumbel::{self, QRule};
use crate::noise;
use crate::tree::{Child, Children, Node, Proof, Stats, Tree};

/// What PUCT makes of one child.
enum Rank {
    /// A proven win: take it.
    Take,
    /// A proven loss: never.
    Skip,
    Score(f32),
}

/// The best-scoring child so far (the first of equals).
struct Best {
    index: usize,
    score: f32,
}

impl Best {
    const NONE: Best = Best { index: usize::MAX, score: f32::NEG_INFINITY };

    /// Weighs child `i`; true where it is a proven win, to be taken at once.
    #[inline(always)]
    fn weigh(&mut self, i: usize, rank: Rank) -> bool {
        match rank {
            Rank::Take => true,
            Rank::Skip => false,
            Rank::Score(score) => {
                if self.index == usize::MAX || score > self.score {
                    self.index = i;
                    self.score = score;
                }
                false
            }
        }
    }
}

/// One child's PUCT score; `fpu` stands in for the value of a child without completed visits.
#[inline(always)]
fn puct_rank(c: &Child, fpu: f32, sqrt_n: f32, cfg: &SearchConfig) -> Rank {
    let n = c.visits + c.in_flight;
    if n == 0 && c.proof == Proof::Unknown {
        // Unvisited (most children): first-play urgency, and `x / 1 == x`.
        return Rank::Score(fpu + cfg.c_puct * c.prior * sqrt_n);
    }
    if cfg.solver {
        match c.proof {
            Proof::Win => return Rank::Take,
            Proof::Loss => return Rank::Skip,
            _ => {}
        }
    }
    let q = if cfg.solver && c.proof == Proof::Draw {
        -cfg.draw_penalty
    } else if n == 0 {
        fpu
    } else {
        ((c.value_sum - cfg.virtual_loss as f64 * c.in_flight as f64) / n as f64) as f32
    };
    Rank::Score(q + cfg.c_puct * c.prior * sqrt_n / (1 + n) as f32)
}

/// PUCT with first-play urgency, virtual loss and (optionally) solver rules; returns the
/// index within `children`.
#[inline]
pub(crate) fn puct_select(parent_stats: &Stats, children: Children, cfg: &SearchConfig) -> usize {
    let parent_n = (parent_stats.visits + parent_stats.in_flight) as f32;
    let sqrt_n = parent_n.sqrt();
    // Parent's value from the view of its own player to move (= its children's chooser).
    let parent_q = if parent_stats.same_player { parent_stats.q() } else { -parent_stats.q() } as f32;
    if parent_stats.prefix {
        if let Some(pick) = puct_select_prefix(parent_stats.explored, children, sqrt_n, parent_q, cfg) {
            return pick;
        }
    }
    puct_select_one_pass(children, sqrt_n, parent_q, cfg)
        .unwrap_or_else(|| puct_select_two_passes(children, sqrt_n, parent_q, cfg))
}

/// PUCT over every child in one pass over their statistics: the visited ones are scored as
/// they come; the unvisited ones all share the first-play urgency value, known only once every
/// visited prior is summed, so only the largest unvisited prior is kept, and the first
/// unvisited child that reaches its score (a pass over edges alone) is weighed last. The
/// same pick as [`puct_select_two_passes`]; `None` for a child with a proof and no visits
/// whose score needs the first-play urgency value (then that rule decides).
fn puct_select_one_pass(children: Children, sqrt_n: f32, parent_q: f32, cfg: &SearchConfig) -> Option<usize> {
    let mut visited_policy = 0.0f32;
    let mut best = Best::NONE;
    // The largest unvisited prior, the first child with it, and the largest unvisited prior
    // of the children before that one (only they could tie its score first).
    let (mut top_prior, mut top_index, mut before) = (f32::NEG_INFINITY, usize::MAX, f32::NEG_INFINITY);
    for (i, c) in children.iter().enumerate() {
        let n = c.visits + c.in_flight;
        if n == 0 {
            match c.proof {
                Proof::Unknown => {
                    if c.prior > top_prior {
                        before = top_prior;
                        top_prior = c.prior;
                        top_index = i;
                    }
                    continue;
                }
                Proof::Win if cfg.solver => return Some(i),
                Proof::Loss if cfg.solver => continue,
                Proof::Draw if cfg.solver => {}
                _ => return None,
            }
        } else {
            visited_policy += c.prior;
        }
        // With visits or a proven draw, no first-play urgency: the NaN is never read.
        if best.weigh(i, puct_rank(&c, f32::NAN, sqrt_n, cfg)) {
            return Some(i);
        }
    }
    if top_index != usize::MAX {
        let fpu = parent_q - cfg.fpu_reduction * visited_policy.sqrt();
        let unvisited_score = |prior: f32| fpu + cfg.c_puct * prior * sqrt_n;
        // Rounding keeps the score monotone in the prior: the best unvisited score is the one
        // of the largest prior, and the child that first reaches it is the one the two-pass
        // scan keeps. An earlier child reaches it only if the largest prior before the first
        // largest one rounds to the same score (rare): then they are looked through.
        let top = unvisited_score(top_prior);
        let first = if before != f32::NEG_INFINITY && unvisited_score(before) == top {
            (0..top_index)
                .find(|&i| {
                    let c = children.get(i);
                    c.visits + c.in_flight == 0 && c.proof == Proof::Unknown && unvisited_score(c.prior) == top
                })
                .unwrap_or(top_index)
        } else {
            top_index
        };
        if best.index == usize::MAX || top > best.score || (top == best.score && first < best.index) {
            best.index = first;
        }
    }
    Some(if best.index == usize::MAX {
        // Every child is a proven loss (only at the root): keep searching the most visited.
        gumbel::most_visited(children)
    } else {
        best.index
    })
}

/// PUCT in two passes over the children: the visited priors summed for the first-play
/// urgency value, then every child scored in order (the first best wins ties).
fn puct_select_two_passes(children: Children, sqrt_n: f32, parent_q: f32, cfg: &SearchConfig) -> usize {
    let mut visited_policy = 0.0f32;
    for c in children.iter() {
        if c.visits + c.in_flight > 0 {
            visited_policy += c.prior;
        }
    }
    let fpu = parent_q - cfg.fpu_reduction * visited_policy.sqrt();
    let mut best = Best::NONE;
    for (i, c) in children.iter().enumerate() {
        if best.weigh(i, puct_rank(&c, fpu, sqrt_n, cfg)) {
            return i;
        }
    }
    if best.index == usize::MAX {
        // Every child is a proven loss (only at the root): keep searching the most visited.
        gumbel::most_visited(children)
    } else {
        best.index
    }
}

/// PUCT on a prefix node, in one pass over its first `explored` children (which all have
/// nodes and visits, so none needs first-play urgency) and then child `explored`, the best
/// unvisited one: past it, every child is unvisited with no larger prior, so none can score
/// higher (nor tie it earlier). The same pick as [`puct_select`]'s full scan; `None` where a
/// child does not fit the prefix (that scan decides then).
#[inline]
fn puct_select_prefix(
    explored: u32,
    children: Children,
    sqrt_n: f32,
    parent_q: f32,
    cfg: &SearchConfig,
) -> Option<usize> {
    let explored = (explored as usize).min(children.len());
    let mut visited_policy = 0.0f32;
    let mut best = Best::NONE;
    for (i, edge) in children.edges[..explored].iter().enumerate() {
        let s = children.stats.get(edge.node as usize).filter(|s| s.visits + s.in_flight > 0)?;
        visited_policy += edge.prior;
        let c = Child::of(edge.prior, s);
        // With visits, no first-play urgency: the NaN is never read.
        if best.weigh(i, puct_rank(&c, f32::NAN, sqrt_n, cfg)) {
            return Some(i);
        }
    }
    if explored < children.len() {
        let fpu = parent_q - cfg.fpu_reduction * visited_policy.sqrt();
        if best.weigh(explored, puct_rank(&children.get(explored), fpu, sqrt_n, cfg)) {
            return Some(explored);
        }
    }
    if best.index == usize::MAX {
        // Every child scored is a proven loss (only at the root): keep searching the most visited.
        let scored = (explored + 1).min(children.len());
        Some(gumbel::most_visited(Children { edges: &children.edges[..scored], ..children }))
    } else {
        Some(best.index)
    }
}

/// Gumbel root selection by sequential halving: among the root children whose visit count in
/// this search equals the schedule's entry for this simulation, the highest
/// `gumbel + logit + sigma(completed Q)`.
pub(crate) fn gumbel_root_select<G: GameState>(t: &Tree<G>, cfg: &SearchConfig, sigma: &mut Vec<f32>) -> usize {
    let root = &t.nodes[0];
    let children = Children::of(&t.stats[0], &t.edges, &t.stats);
    let rs = &t.search;
    if cfg.solver {
        if let Some(i) = children.iter().position(|c| c.proof == Proof::Win) {
            return i;
        }
    }
    gumbel::completed_q(children, root.raw_value, QRule::of(cfg), sigma);
    let k = rs.sims_started as usize;
    let considered = rs.table.get(k).or(rs.table.last()).copied().unwrap_or(0);
    let score = |i: usize| rs.gumbel[i] + rs.logits[i] + sigma[i];
    let not_lost = |i: usize| !(cfg.solver && children.get(i).proof == Proof::Loss);
    let pick = |filter: &dyn Fn(usize) -> bool| -> Option<usize> {
        let mut best: Option<(usize, f32)> = None;
        for i in 0..children.len() {
            if filter(i) {
                let s = score(i);
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((i, s));
                }
            }
        }
        best.map(|(i, _)| i)
    };
    pick(&|i| rs.visits[i] == considered && not_lost(i))
        .or_else(|| pick(&not_lost))
        .or_else(|| pick(&|_| true))
        .unwrap_or(0)
}

/// Gumbel's final move: among the root children with the most visits in this search, the
/// highest `gumbel + logit + sigma(completed Q)`; proven losses only if nothing else.
pub(crate) fn gumbel_final_select<G: GameState>(t: &Tree<G>, sigma: &[f32], solver: bool) -> usize {
    let children = Children::of(&t.stats[0], &t.edges, &t.stats);
    let rs = &t.search;
    let not_lost = |i: usize| !(solver && children.get(i).proof == Proof::Loss);
    let any_alive = (0..children.len()).any(not_lost);
    let eligible = |i: usize| !any_alive || not_lost(i);
    let max_visits = (0..children.len()).filter(|&i| eligible(i)).map(|i| rs.visits[i]).max().unwrap_or(0);
    let mut best: Option<(usize, f32)> = None;
    for (i, &q) in sigma.iter().enumerate().take(children.len()) {
        if eligible(i) && rs.visits[i] == max_visits {
            let s = rs.gumbel[i] + rs.logits[i] + q;
            if best.is_none_or(|(_, b)| s > b) {
                best = Some((i, s));
            }
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// The child a proof decides on, if any: the proven win that ends the game soonest, or, when
/// every child is a proven loss, the one that resists longest (ties: most visits, then the
/// first). A shortest win does not dither where a longer one would do; a longest resistance
/// leaves an imperfect opponent the most chances.
pub(crate) fn best_proven(children: Children, nodes: &[Node]) -> Option<usize> {
    let plies = |i: usize| children.edges[i].proof_plies(nodes);
    let all_lost = children.len() > 0 && children.iter().all(|c| c.proof == Proof::Loss);
    let mut best: Option<(usize, u16, u32)> = None;
    for (i, c) in children.iter().enumerate() {
        let rank = match c.proof {
            Proof::Win => u16::MAX - plies(i),
            Proof::Loss if all_lost => plies(i),
            _ => continue,
        };
        if best.is_none_or(|(_, r, visits)| rank > r || (rank == r && c.visits > visits)) {
            best = Some((i, rank, c.visits));
        }
    }
    best.map(|(i, _, _)| i)
}

/// Most visits, ties broken by prior, then by order.
pub(crate) fn best_by_visits(children: Children) -> usize {
    let mut best = 0;
    let mut b = children.get(0);
    for (i, c) in children.iter().enumerate() {
        if c.visits > b.visits || (c.visits == b.visits && c.prior > b.prior) {
            best = i;
            b = c;
        }
    }
    best
}

/// Picks a root child from visit counts at `temperature` (0: most visited), avoiding proven
/// losses when the solver is on and something else exists. With no visits at all, the priors
/// stand in for visits.
pub(crate) fn choose_by_temperature<R: Rng>(
    children: Children,
    priors: &[f32],
    temperature: f32,
    solver: bool,
    rng: &mut R,
    weights: &mut Vec<f64>,
) -> usize {
    let lost = |c: &Child| solver && c.proof == Proof::Loss;
    let avoid_losses = children.iter().any(|c| !lost(&c));
    let total_visits: u64 = children.iter().map(|c| c.visits as u64).sum();
    weights.clear();
    weights.extend(children.iter().zip(priors).map(|(c, &p)| {
        if avoid_losses && lost(&c) {
            0.0
        } else if total_visits > 0 {
            c.visits as f64
        } else {
            p as f64
        }
    }));
    let max = weights.iter().copied().fold(0.0f64, f64::max);
    if max <= 0.0 {
        // Only excluded or zero-weight actions: fall back to the best non-lost by visits.
        return children.iter().position(|c| !(avoid_losses && lost(&c))).unwrap_or(0);
    }
    if temperature < 1e-3 {
        let mut best = 0;
        for i in 0..weights.len() {
            let better = weights[i] > weights[best] || (weights[i] == weights[best] && priors[i] > priors[best]);
            if better {
                best = i;
            }
        }
        return best;
    }
    let inv_t = 1.0 / temperature as f64;
    let mut total = 0.0;
    for w in weights.iter_mut() {
        *w = if *w > 0.0 { (*w / max).powf(inv_t) } else { 0.0 };
        total += *w;
    }
    let mut x = noise::open_unit(rng) * total;
    let mut last = 0;
    for (i, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            last = i;
            if x < w {
                return i;
            }
            x -= w;
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Edge;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// A proof decides by distance before visits: the shortest proven win, or with every child
    /// lost the longest resistance; with a child unproven and no win, nothing is decided.
    #[test]
    fn proofs_decide_by_distance_before_visits() {
        let child = |proof: Proof, visits: u32| Stats { proof, visits, ..Stats::new() };
        let node = |proof_plies: u16| Node { proof_plies, ..Node::child(0, 0, crate::game::Side::First) };
        let edges: Vec<Edge> = (0..3).map(|i| Edge { node: i, ..Edge::new(i, 1.0 / 3.0) }).collect();
        let pick = |stats: &[Stats], nodes: &[Node]| best_proven(Children { edges: &edges, stats }, nodes);
        let wins = [child(Proof::Win, 90), child(Proof::Win, 5), child(Proof::Unknown, 5)];
        assert_eq!(pick(&wins, &[node(5), node(1), node(0)]), Some(1));
        assert_eq!(pick(&wins, &[node(3), node(3), node(0)]), Some(0), "equal distances: most visits");
        let lost = [child(Proof::Loss, 90), child(Proof::Loss, 5), child(Proof::Loss, 5)];
        assert_eq!(pick(&lost, &[node(2), node(6), node(4)]), Some(1));
        let open = [child(Proof::Loss, 90), child(Proof::Loss, 5), child(Proof::Unknown, 5)];
        assert_eq!(pick(&open, &[node(2), node(6), node(0)]), None);
        let drawn = [child(Proof::Loss, 90), child(Proof::Draw, 5), child(Proof::Loss, 5)];
        assert_eq!(pick(&drawn, &[node(2), node(0), node(4)]), None);
    }

    /// The one-pass PUCT picks what the two-pass scan picks, ties and proven children included.
    #[test]
    fn one_pass_picks_what_two_passes_pick() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut fell_back = 0;
        for solver in [false, true] {
            let cfg = SearchConfig { solver, virtual_loss: 1.0, ..SearchConfig::default() };
            for _ in 0..20_000 {
                let len = rng.random_range(1..12);
                // Few distinct priors and values, in any order, so that ties are common; some
                // priors a float or two above another, so that scores round to ties.
                let mut edges: Vec<Edge> = (0..len)
                    .map(|i| {
                        let prior = rng.random_range(0..4) as f32 / 8.0;
                        let nudge = if rng.random_bool(0.3) { rng.random_range(1..3) } else { 0 };
                        Edge::new(i as u32, f32::from_bits(prior.to_bits() + nudge))
                    })
                    .collect();
                let mut stats = Vec::new();
                for edge in &mut edges {
                    if rng.random_bool(0.4) {
                        continue;
                    }
                    let mut c = Stats::new();
                    c.visits = rng.random_range(0..4);
                    c.in_flight = rng.random_range(0..2);
                    c.value_sum = rng.random_range(-2..=2) as f64 * 0.5 * c.visits.min(1) as f64;
                    if rng.random_bool(0.3) {
                        c.proof = [Proof::Win, Proof::Loss, Proof::Draw][rng.random_range(0..3)];
                    }
                    edge.node = stats.len() as u32;
                    stats.push(c);
                }
                let children = Children { edges: &edges, stats: &stats };
                let sqrt_n = (rng.random_range(1..40) as f32).sqrt();
                let parent_q = rng.random_range(-2..=2) as f32 * 0.5;
                let two = puct_select_two_passes(children, sqrt_n, parent_q, &cfg);
                match puct_select_one_pass(children, sqrt_n, parent_q, &cfg) {
                    Some(one) => assert_eq!(one, two, "{edges:?} {stats:?}"),
                    None => fell_back += 1,
                }
            }
        }
        // Only proven children without visits and without the solver need the other rule.
        assert!(fell_back < 10_000, "{fell_back}");
    }

    /// Scoring only up to the first unvisited child of a prefix node picks what scoring every
    /// child picks, ties and proven children included.
    #[test]
    fn prefix_scan_picks_what_the_full_scan_picks() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for solver in [false, true] {
            let cfg = SearchConfig { solver, virtual_loss: 1.0, ..SearchConfig::default() };
            for _ in 0..20_000 {
                let len = rng.random_range(1..12);
                let visited = rng.random_range(0..=len);
                // Few distinct priors and values, so that ties are common.
                let mut priors: Vec<f32> = (0..len).map(|_| rng.random_range(1..4) as f32 / 8.0).collect();
                priors.sort_by(|a, b| b.total_cmp(a));
                // The visited children have nodes; the unvisited ones only edges.
                let mut edges: Vec<Edge> = (0..len).map(|i| Edge::new(i as u32, priors[i])).collect();
                let mut stats = Vec::new();
                for edge in &mut edges[..visited] {
                    let mut c = Stats::new();
                    c.visits = rng.random_range(0..4);
                    c.in_flight = rng.random_range(u32::from(c.visits == 0)..2);
                    c.value_sum = rng.random_range(-2..=2) as f64 * 0.5;
                    if solver {
                        c.proof = [Proof::Unknown, Proof::Unknown, Proof::Win, Proof::Loss, Proof::Draw]
                            [rng.random_range(0..5)];
                    }
                    edge.node = stats.len() as u32;
                    stats.push(c);
                }
                let children = Children { edges: &edges, stats: &stats };
                let mut parent = Stats::new();
                parent.visits = stats.iter().map(|c| c.visits).sum::<u32>() + 1;
                parent.value_sum = rng.random_range(-2..=2) as f64 * 0.5;
                parent.same_player = rng.random_bool(0.5);
                let full = puct_select(&parent, children, &cfg);
                parent.prefix = true;
                parent.explored = visited as u32;
                assert_eq!(puct_select(&parent, children, &cfg), full, "{edges:?} {stats:?}");
            }
        }
    }
}
