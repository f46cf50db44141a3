//! The batched search driver: many trees advance together, all their pending leaves go to
//! the evaluator in one call.

use crate::backup::{abandon, backup, propagate_proof, revert_path};
use crate::config::SearchConfig;
use crate::eval::{Evaluations, Evaluator, Wdl};
use crate::game::{GameState, Side, Terminal};
use crate::gumbel::{self, QRule};
use crate::noise;
use crate::select::{
    best_by_visits, best_proven, choose_by_temperature, gumbel_final_select, gumbel_root_select, puct_select,
};
use crate::tree::{Children, Edge, Kind, Node, Proof, Stats, Tree, NONE};
use crate::SearchError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What one search produced for one root.
///
/// All per-action vectors follow the root's legal-action order ([`SearchResult::actions`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The player to move at the root; every value below is from this player's view.
    pub to_move: Side,
    /// The root's legal actions.
    pub actions: Vec<u32>,
    /// Completed visits per action, earlier searches of a reused subtree included.
    pub visits: Vec<u32>,
    /// The evaluator's priors per action (normalised, before root noise).
    pub priors: Vec<f32>,
    /// Mean `win - loss` per action, `None` for an unvisited action (the exact value for a
    /// proven action when the solver is on).
    pub q: Vec<Option<f32>>,
    /// Policy training target: the visit distribution (PUCT) or the completed-Q improved
    /// policy `softmax(log prior + sigma(completed Q))` (Gumbel).
    pub policy: Vec<f32>,
    /// Root value (mean of everything backed up through the root; exact when proven).
    pub value: Wdl,
    /// The solver's verdict on the root, if it found one.
    pub proven: Option<Terminal>,
    /// For a root proven won or lost: the plies to the end under the proof, the root player's
    /// ply first (a win in one move: 1), by the shortest win or the longest resistance.
    pub proven_plies: Option<u32>,
    /// The move chosen: by the temperature schedule from visits (PUCT), or the sequential
    /// halving winner (Gumbel); a proven win always, a proven loss only if nothing else.
    pub action: u32,
    /// Principal variation: from the root, repeatedly the most visited child (a proven win
    /// first), while it has visits.
    pub principal_variation: Vec<u32>,
    /// Simulations completed by this search call.
    pub simulations: u32,
}

impl Default for SearchResult {
    fn default() -> Self {
        SearchResult {
            to_move: Side::First,
            actions: Vec::new(),
            visits: Vec::new(),
            priors: Vec::new(),
            q: Vec::new(),
            policy: Vec::new(),
            value: Wdl::DRAW,
            proven: None,
            proven_plies: None,
            action: 0,
            principal_variation: Vec::new(),
            simulations: 0,
        }
    }
}

/// What one descent from a root found from a root.
enum Descent {
    /// A new leaf that needs the evaluator.
    Leaf(u32),
    /// A node with a known value (terminal or proven): back it up now. Value is from the
    /// given player's view.
    Done(u32, Wdl, Side),
    /// Reached a leaf another descent of this round already waits on.
    Collision(u32),
}

/// The search engine: configuration plus reusable buffers. One per worker thread; it can
/// drive any number of trees, of any [`GameState`].
///
/// The normal call is [`Searcher::search`] over a batch of trees: every round, each tree
/// descends to up to [`SearchConfig::leaves_per_tree`] new leaves (virtual loss keeps them
/// apart), then all leaves of all trees go to the evaluator in one call, then the results are
/// backed up. Searching one tree is the special case of a batch of one.
#[derive(Debug)]
pub struct Searcher {
    config: SearchConfig,
    /// Set by another thread to end the search early ([`Searcher::set_stop`]).
    stop: Option<Arc<AtomicBool>>,
    evals: Evaluations,
    pending: Vec<(u32, u32)>,
    /// Sum of each pending leaf's priors (checked before anything is applied).
    prior_sums: Vec<f32>,
    legal: Vec<u32>,
    /// Whether `legal` already holds the legal actions of the leaf the last descent returned
    /// (listed there by `forced_pass`), so that queueing it need not list them again.
    legal_listed: bool,
    refs: Vec<usize>,
    sigma: Vec<f32>,
    probs: Vec<f32>,
    weights: Vec<f64>,
    noise: Vec<f32>,
    gamma: Vec<f64>,
}

impl Searcher {
    /// A searcher with `config`, which must pass [`SearchConfig::validate`].
    pub fn new(config: SearchConfig) -> Result<Searcher, SearchError> {
        config.validate()?;
        Ok(Searcher {
            config,
            stop: None,
            evals: Evaluations::new(),
            pending: Vec::new(),
            prior_sums: Vec::new(),
            legal: Vec::new(),
            legal_listed: false,
            refs: Vec::new(),
            sigma: Vec::new(),
            probs: Vec::new(),
            weights: Vec::new(),
            noise: Vec::new(),
            gamma: Vec::new(),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// A flag another thread may set to end this searcher's searches early: once it is set, a
    /// search starts no new simulation (past the first of each tree), finishes those in
    /// flight, and returns its result as at that point. An engine's `stop` thereby answers
    /// within one evaluator call, and an unstopped search is the same as without a flag.
    pub fn set_stop(&mut self, stop: Option<Arc<AtomicBool>>) {
        self.stop = stop;
    }

    /// Whether tree `t`'s search should start no further simulation short of its budget: a
    /// stop was asked for, or the tree has reached [`SearchConfig::max_nodes`].
    fn halted<G>(&self, t: &Tree<G>) -> bool {
        t.search.sims_started > 0
            && (t.nodes.len() >= self.config.max_nodes as usize
                || self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)))
    }

    /// Searches every tree in `trees` with [`SearchConfig::simulations`] new simulations each,
    /// sending the leaves of all trees to `evaluator` together; one result per tree.
    pub fn search<G: GameState, E: Evaluator<G> + ?Sized>(
        &mut self,
        trees: &mut [Tree<G>],
        evaluator: &mut E,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let mut results = Vec::new();
        self.search_into(trees, evaluator, &mut results)?;
        Ok(results)
    }

    /// Searches a single tree (a batch of one).
    pub fn search_one<G: GameState, E: Evaluator<G> + ?Sized>(
        &mut self,
        tree: &mut Tree<G>,
        evaluator: &mut E,
    ) -> Result<SearchResult, SearchError> {
        let mut results = Vec::with_capacity(1);
        self.search_into(std::slice::from_mut(tree), evaluator, &mut results)?;
        Ok(results.pop().unwrap_or_default())
    }

    /// Like [`Searcher::search`], writing into `results` (resized to `trees.len()`) and
    /// reusing its vectors, so that repeated searches allocate nothing.
    pub fn search_into<G: GameState, E: Evaluator<G> + ?Sized>(
        &mut self,
        trees: &mut [Tree<G>],
        evaluator: &mut E,
        results: &mut Vec<SearchResult>,
    ) -> Result<(), SearchError> {
        for (i, t) in trees.iter().enumerate() {
            if t.stats[0].kind == Kind::Terminal {
                return Err(SearchError::TerminalRoot { tree: i });
            }
        }
        for t in trees.iter_mut() {
            t.search.sims_started = 0;
            t.search.draw_penalty = self.config.draw_penalty as f64;
            t.search.sims_done = 0;
            t.search.gumbel_ready = false;
            if t.stats[0].kind == Kind::Expanded {
                self.prepare_root(t);
            }
        }
        loop {
            self.evals.clear();
            self.pending.clear();
            for ti in 0..trees.len() {
                if let Err(e) = self.gather(ti, &mut trees[ti]) {
                    self.rollback(trees);
                    return Err(e);
                }
            }
            if self.pending.is_empty() {
                break;
            }
            // One evaluator call for the whole batch.
            let mut refs: Vec<&G> = recycle(std::mem::take(&mut self.refs));
            for &(ti, node) in &self.pending {
                let t = &trees[ti as usize];
                refs.push(&t.states[t.nodes[node as usize].state as usize]);
            }
            let outcome = evaluator.evaluate(&refs, &mut self.evals);
            self.refs = recycle(refs);
            if let Err(e) = outcome {
                self.rollback(trees);
                return Err(SearchError::Evaluator(e));
            }
            if let Err(e) = self.check_evaluations() {
                self.rollback(trees);
                return Err(e);
            }
            for i in 0..self.pending.len() {
                let (ti, node) = self.pending[i];
                self.expand(&mut trees[ti as usize], i, node);
            }
        }
        results.resize_with(trees.len(), SearchResult::default);
        for (t, r) in trees.iter_mut().zip(results.iter_mut()) {
            self.fill_result(t, r);
        }
        Ok(())
    }

    /// Descends tree `ti` up to `leaves_per_tree` times, queueing new leaves and backing up
    /// known values at once.
    fn gather<G: GameState>(&mut self, ti: usize, t: &mut Tree<G>) -> Result<(), SearchError> {
        let mut leaves = 0;
        while leaves < self.config.leaves_per_tree {
            let root_ready = t.stats[0].kind == Kind::Expanded;
            if root_ready && (t.search.sims_started >= self.config.simulations || self.halted(t)) {
                break;
            }
            match self.descend(t) {
                Descent::Leaf(node) => {
                    if node != 0 {
                        t.search.sims_started += 1;
                    }
                    if let Err(e) = self.queue_leaf(ti, t, node) {
                        abandon(t, node);
                        return Err(e);
                    }
                    leaves += 1;
                }
                Descent::Done(node, wdl, persp) => {
                    t.search.sims_started += 1;
                    backup(&mut t.nodes, &mut t.stats, node, wdl, persp, self.config.draw_penalty);
                    t.search.sims_done += 1;
                }
                Descent::Collision(node) => {
                    revert_path(t, node);
                    break;
                }
            }
        }
        Ok(())
    }

    /// Lists the legal actions of leaf `node` into the evaluation batch.
    fn queue_leaf<G: GameState>(&mut self, ti: usize, t: &Tree<G>, node: u32) -> Result<(), SearchError> {
        let state = &t.states[t.nodes[node as usize].state as usize];
        if !std::mem::take(&mut self.legal_listed) {
            self.legal.clear();
            state.legal_actions(&mut self.legal);
        }
        if self.legal.is_empty() {
            return Err(SearchError::NoLegalActions { tree: ti });
        }
        let space = state.action_space();
        if let Some(&action) = self.legal.iter().find(|&&a| a >= space) {
            return Err(SearchError::ActionOutOfRange { tree: ti, action, space });
        }
        self.evals.push_state(&self.legal);
        self.pending.push((ti as u32, node));
        Ok(())
    }

    /// One descent from the root, adding one in-flight count to every node on the path.
    fn descend<G: GameState>(&mut self, t: &mut Tree<G>) -> Descent {
        let cfg = &self.config;
        let mut node = 0u32;
        self.legal_listed = false;
        t.stats[0].in_flight += 1;
        loop {
            let st = t.stats[node as usize];
            match st.kind {
                Kind::Terminal => return Descent::Done(node, st.proof.wdl(), t.nodes[node as usize].chooser),
                Kind::Pending => return Descent::Collision(node),
                Kind::Leaf => {
                    t.stats[node as usize].kind = Kind::Pending;
                    return Descent::Leaf(node);
                }
                Kind::Fresh => {
                    let n = t.nodes[node as usize];
                    let parent_state = t.nodes[n.parent as usize].state as usize;
                    let mut state = t.states[parent_state].clone();
                    state.apply(t.edges[n.edge as usize].action);
                    if let Some(outcome) = state.terminal() {
                        let proof = Proof::from_outcome(outcome, n.chooser);
                        t.stats[node as usize].kind = Kind::Terminal;
                        t.stats[node as usize].proof = proof;
                        t.nodes[node as usize].proof_plies = 1;
                        if cfg.solver {
                            propagate_proof(&mut t.nodes, &mut t.stats, &t.edges, n.parent);
                        }
                        return Descent::Done(node, proof.wdl(), n.chooser);
                    }
                    let nd = &mut t.nodes[node as usize];
                    nd.player = state.to_move();
                    t.stats[node as usize].same_player = nd.player == nd.chooser;
                    nd.state = t.states.len() as u32;
                    if cfg.forced_pass {
                        self.legal.clear();
                        state.legal_actions(&mut self.legal);
                        if let [action] = self.legal[..] {
                            // A forced decision: expanded without an evaluation, and the
                            // descent goes on through its one child (`forced_pass`).
                            t.states.push(state);
                            let first = t.edges.len() as u32;
                            t.edges.push(Edge::new(action, 1.0));
                            let st = &mut t.stats[node as usize];
                            st.first_edge = first;
                            st.num_edges = 1;
                            st.explored = 0;
                            st.prefix = true;
                            st.kind = Kind::Expanded;
                            continue;
                        }
                        self.legal_listed = true;
                    }
                    t.stats[node as usize].kind = Kind::Pending;
                    t.states.push(state);
                    return Descent::Leaf(node);
                }
                Kind::Expanded => {
                    let n = t.nodes[node as usize];
                    if cfg.solver && node != 0 && st.proof != Proof::Unknown {
                        return Descent::Done(node, st.proof.wdl(), n.chooser);
                    }
                    let children = Children::of(&st, &t.edges, &t.stats);
                    let pick = if !cfg.gumbel {
                        puct_select(&st, children, cfg)
                    } else if node == 0 && t.search.gumbel_ready {
                        let pick = gumbel_root_select(t, cfg, &mut self.sigma);
                        t.search.visits[pick] += 1;
                        pick
                    } else {
                        gumbel::interior_select(children, n.raw_value, QRule::of(cfg), &mut self.sigma, &mut self.probs)
                    };
                    if cfg.gumbel {
                        // Gumbel visits children in any order.
                        t.stats[node as usize].prefix = false;
                    } else if st.prefix && pick as u32 == st.explored {
                        t.stats[node as usize].explored += 1;
                    }
                    // A child becomes a node when a descent first chooses it.
                    let edge = st.first_edge as usize + pick;
                    let mut child = t.edges[edge].node;
                    if child == NONE {
                        child = t.nodes.len() as u32;
                        t.nodes.push(Node::child(node, edge as u32, n.player));
                        t.stats.push(Stats::new());
                        t.edges[edge].node = child;
                    }
                    node = child;
                    t.stats[node as usize].in_flight += 1;
                }
            }
        }
    }

    /// Rejects evaluator output that cannot be used (before anything is applied).
    fn check_evaluations(&mut self) -> Result<(), SearchError> {
        self.prior_sums.clear();
        for index in 0..self.pending.len() {
            if self.evals.value(index).normalized().is_none() {
                return Err(SearchError::InvalidEvaluation {
                    index,
                    reason: "value has a negative or non-finite entry, or sums to zero",
                });
            }
            // The sum in order (as the priors are normalised with it), then a check of each
            // prior that needs no branch per prior.
            let priors = self.evals.priors(index);
            let sum: f32 = priors.iter().sum();
            if priors.iter().fold(false, |bad, p| bad | !(p.is_finite() & (*p >= 0.0))) {
                return Err(SearchError::InvalidEvaluation { index, reason: "a prior is negative or not finite" });
            }
            if !(sum > 0.0 && sum.is_finite()) {
                return Err(SearchError::InvalidEvaluation { index, reason: "priors sum to zero or overflow" });
            }
            self.prior_sums.push(sum);
        }
        Ok(())
    }

    /// Creates the children of evaluated leaf `node` (batch entry `i`) and backs up its value.
    fn expand<G: GameState>(&mut self, t: &mut Tree<G>, i: usize, node: u32) {
        let mut value = self.evals.value(i).normalized().unwrap_or(Wdl::DRAW);
        let legal = self.evals.legal_actions(i);
        let priors = self.evals.priors(i);
        let inv = 1.0 / self.prior_sums[i];
        let player = t.nodes[node as usize].player;
        let first = t.edges.len() as u32;
        t.edges.extend(legal.iter().zip(priors).map(|(&a, &p)| Edge::new(a, p * inv)));
        if self.config.policy_temperature != 1.0 {
            temper_priors(&mut t.edges[first as usize..], 1.0 / self.config.policy_temperature);
        }
        t.nodes[node as usize].raw_value = value.value() - self.config.draw_penalty * value.draw;
        let st = &mut t.stats[node as usize];
        st.first_edge = first;
        st.num_edges = legal.len() as u32;
        st.explored = 0;
        st.kind = Kind::Expanded;
        st.prefix = priors.windows(2).all(|w| w[0] >= w[1]);
        // A win in one decision: that child is terminal and this node is won, whatever the
        // evaluator said (see `GameState::decisive_action`).
        let decisive =
            if self.config.solver { t.states[t.nodes[node as usize].state as usize].decisive_action() } else { None };
        if let Some(index) = decisive.and_then(|action| legal.iter().position(|&a| a == action)) {
            let edge = first + index as u32;
            t.edges[edge as usize].node = t.nodes.len() as u32;
            t.nodes.push(Node { proof_plies: 1, ..Node::child(node, edge, player) });
            let proof = Proof::from_outcome(Terminal::Win(player), player);
            t.stats.push(Stats { kind: Kind::Terminal, proof, ..Stats::new() });
            value = Terminal::Win(player).wdl_for(player);
            propagate_proof(&mut t.nodes, &mut t.stats, &t.edges, node);
        }
        backup(&mut t.nodes, &mut t.stats, node, value, player, self.config.draw_penalty);
        if node == 0 {
            self.prepare_root(t);
        } else {
            t.search.sims_done += 1;
        }
    }

    /// Per-search root set-up: fresh Dirichlet noise (PUCT) or Gumbel samples (Gumbel).
    fn prepare_root<G: GameState>(&mut self, t: &mut Tree<G>) {
        let cfg = &self.config;
        let range = t.stats[0].children();
        // Every root child gets its node now, so that the statistics PUCT reads at every
        // simulation of the search lie side by side (a child's node otherwise comes when a
        // descent first chooses it, among the nodes of other parts of the tree).
        let player = t.nodes[0].player;
        for edge in range.clone() {
            if t.edges[edge].node == NONE {
                t.edges[edge].node = t.nodes.len() as u32;
                t.nodes.push(Node::child(0, edge as u32, player));
                t.stats.push(Stats::new());
            }
        }
        let rs = &mut t.search;
        if rs.noised {
            for (edge, &p) in t.edges[range.clone()].iter_mut().zip(&rs.clean_priors) {
                edge.prior = p;
            }
            rs.noised = false;
        }
        rs.clean_priors.clear();
        rs.clean_priors.extend(t.edges[range.clone()].iter().map(|e| e.prior));
        if cfg.gumbel {
            let m = cfg.gumbel_m.min(range.len() as u32);
            if rs.table_key != (m, cfg.simulations) || rs.table.len() != cfg.simulations as usize {
                gumbel::considered_visit_sequence(m, cfg.simulations, &mut rs.table);
                rs.table_key = (m, cfg.simulations);
            }
            rs.gumbel.clear();
            rs.logits.clear();
            rs.visits.clear();
            let max_logit = rs.clean_priors.iter().map(|&p| gumbel::logit(p)).fold(f32::NEG_INFINITY, f32::max);
            for &p in &rs.clean_priors {
                let g = if cfg.gumbel_scale > 0.0 { cfg.gumbel_scale * noise::gumbel(&mut t.rng) } else { 0.0 };
                rs.gumbel.push(g);
                rs.logits.push(gumbel::logit(p) - max_logit);
                rs.visits.push(0);
            }
            rs.gumbel_ready = true;
        } else if cfg.dirichlet_fraction > 0.0 && range.len() > 1 {
            self.noise.clear();
            self.noise.extend_from_slice(&rs.clean_priors);
            noise::mix_dirichlet(
                &mut t.rng,
                &mut self.noise,
                cfg.dirichlet_alpha,
                cfg.dirichlet_fraction,
                &mut self.gamma,
            );
            for (edge, &p) in t.edges[range].iter_mut().zip(&self.noise) {
                edge.prior = p;
            }
            t.stats[0].prefix = false;
            rs.noised = true;
        }
    }

    /// Rolls back every queued leaf after an error, so the trees stay consistent.
    fn rollback<G: GameState>(&mut self, trees: &mut [Tree<G>]) {
        for &(ti, node) in &self.pending {
            abandon(&mut trees[ti as usize], node);
        }
        self.pending.clear();
        self.evals.clear();
    }

    /// Writes the result of tree `t` into `r`.
    fn fill_result<G: GameState>(&mut self, t: &mut Tree<G>, r: &mut SearchResult) {
        let cfg = &self.config;
        let root = t.nodes[0];
        let root_stats = t.stats[0];
        let range = root_stats.children();
        let edges = &t.edges[range.clone()];
        let children = Children { edges, stats: &t.stats };
        let solver = cfg.solver;

        r.to_move = root.player;
        r.actions.clear();
        r.actions.extend(edges.iter().map(|e| e.action));
        r.visits.clear();
        r.visits.extend(children.iter().map(|c| c.visits));
        r.priors.clear();
        if t.search.noised {
            r.priors.extend_from_slice(&t.search.clean_priors);
        } else {
            r.priors.extend(children.iter().map(|c| c.prior));
        }
        r.q.clear();
        r.q.extend(children.iter().map(|c| {
            if solver && c.proof != Proof::Unknown {
                Some(c.proof.utility(cfg.draw_penalty))
            } else if c.visits > 0 {
                Some(c.q() as f32)
            } else {
                None
            }
        }));
        r.proven = if solver { root_stats.proof.outcome(root.player) } else { None };
        r.value = match r.proven {
            Some(outcome) => outcome.wdl_for(root.player),
            // The plain value: the draw penalty taken back out of the utility sum.
            None if root_stats.visits > 0 => Wdl::from_value_draw(
                (root_stats.value_sum + cfg.draw_penalty as f64 * root.draw_sum) / root_stats.visits as f64,
                root.draw_sum / root_stats.visits as f64,
            ),
            None => Wdl::DRAW,
        };
        r.simulations = t.search.sims_done;

        // Policy target and move.
        r.policy.clear();
        let proven_choice = if solver { best_proven(children, &t.nodes) } else { None };
        r.proven_plies = match (r.proven, proven_choice) {
            (Some(Terminal::Win(_)), Some(i)) => Some(u32::from(t.nodes[edges[i].node as usize].proof_plies)),
            _ => None,
        };
        if cfg.gumbel && t.search.gumbel_ready {
            gumbel::completed_q(children, root.raw_value, QRule::of(cfg), &mut self.sigma);
            // The improved policy uses the clean priors (Gumbel mode never adds noise).
            gumbel::improved_policy(children, &self.sigma, &mut self.probs);
            r.policy.extend_from_slice(&self.probs);
            r.action = match proven_choice {
                Some(i) => edges[i].action,
                None => {
                    let i = gumbel_final_select(t, &self.sigma, solver);
                    edges[i].action
                }
            };
        } else {
            let total: u64 = children.iter().map(|c| c.visits as u64).sum();
            if total > 0 {
                r.policy.extend(children.iter().map(|c| (c.visits as f64 / total as f64) as f32));
            } else {
                r.policy.extend_from_slice(&r.priors);
            }
            let temperature = cfg.temperature.at(t.move_number);
            r.action = match proven_choice {
                Some(i) => edges[i].action,
                None => {
                    let i =
                        choose_by_temperature(children, &r.priors, temperature, solver, &mut t.rng, &mut self.weights);
                    edges[i].action
                }
            };
        }

        r.principal_variation.clear();
        let mut node = 0usize;
        while t.stats[node].kind == Kind::Expanded {
            let children = Children::of(&t.stats[node], &t.edges, &t.stats);
            let pick =
                solver.then(|| best_proven(children, &t.nodes)).flatten().unwrap_or_else(|| best_by_visits(children));
            if children.get(pick).visits == 0 {
                break;
            }
            let edge = children.edges[pick];
            r.principal_variation.push(edge.action);
            node = edge.node as usize;
        }
    }
}

/// Reuses a vector's allocation for another element type of the same size and alignment
/// (here `&G` and `usize`), so the per-round batch of state references allocates nothing.
/// Safe code: the standard library collects in place where it can, and allocates otherwise.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// Raises a node's normalised priors to `exponent` (the inverse policy temperature) and
/// renormalises them. The order of the priors is kept, so a sorted prefix stays sorted. The
/// largest prior is at least 1/n, so the sum stays positive for any temperature the
/// configuration admits; a zero prior stays zero.
fn temper_priors(edges: &mut [Edge], exponent: f32) {
    let mut sum = 0.0f32;
    for e in edges.iter_mut() {
        e.prior = e.prior.powf(exponent);
        sum += e.prior;
    }
    if sum > 0.0 && sum.is_finite() {
        let inv = 1.0 / sum;
        for e in edges.iter_mut() {
            e.prior *= inv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tempered_priors_flatten_above_one_and_sharpen_below() {
        let priors = [0.6f32, 0.3, 0.1, 0.0];
        let tempered = |t: f32| {
            let mut edges: Vec<Edge> = priors.iter().enumerate().map(|(a, &p)| Edge::new(a as u32, p)).collect();
            temper_priors(&mut edges, 1.0 / t);
            edges.iter().map(|e| e.prior).collect::<Vec<f32>>()
        };
        let flat = tempered(2.0);
        // p^(1/2) normalised: sqrt(0.6), sqrt(0.3), sqrt(0.1), 0 over their sum.
        let roots = [0.6f32.sqrt(), 0.3f32.sqrt(), 0.1f32.sqrt()];
        let sum: f32 = roots.iter().sum();
        for (got, want) in flat.iter().zip(roots.iter().map(|r| r / sum).chain([0.0])) {
            assert!((got - want).abs() < 1e-6, "{flat:?}");
        }
        assert!(flat[0] < 0.6 && flat[2] > 0.1, "T = 2 must flatten: {flat:?}");
        let sharp = tempered(0.5);
        assert!(sharp[0] > 0.6 && sharp[2] < 0.1, "T = 0.5 must sharpen: {sharp:?}");
        for p in [flat, sharp] {
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            assert!(p.windows(2).all(|w| w[0] >= w[1]), "order kept: {p:?}");
            assert_eq!(p[3], 0.0);
        }
    }
}
