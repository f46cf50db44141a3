//! The network as the search's batched [`Evaluator`]: one forward pass per batch of leaves,
//! illegal actions masked, softmax over the legal ones, and an LRU cache of recent positions.

use std::num::NonZeroUsize;

use camelot_game::{mirror_action, mirror_planes, CamelotState, InputKey};
use camelot_search::{EvalError, Evaluations, Evaluator, Wdl};
use lru::LruCache;

use crate::model::{AUX_OUTPUTS, MATERIAL_TARGET_POINTS};
use crate::network::Network;

/// Cached result of one state: priors over its legal actions (in the search's order) and value.
struct CachedEval {
    priors: Box<[f32]>,
    value: Wdl,
}

/// Counters of an evaluator's work, for benchmarks and progress displays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvalStats {
    /// States asked for.
    pub requests: u64,
    /// States answered from the cache.
    pub cache_hits: u64,
    /// Forward passes run.
    pub batches: u64,
}

/// Evaluates Camelot states with a [`Network`].
pub struct NetEvaluator {
    network: Network,
    // Keyed by everything the input planes show, so a hit returns what a forward pass would:
    // games that share an evaluator cannot change each other's moves.
    cache: Option<LruCache<InputKey, CachedEval>>,
    planes: Vec<f32>,
    misses: Vec<usize>,
    stats: EvalStats,
    material_utility: f32,
    material_scale: f32,
    moves_left_utility: f32,
    mirror_average: bool,
    mixed_logits: Vec<f32>,
}

impl NetEvaluator {
    /// An evaluator over `network` with an LRU cache of `cache_entries` states (0: no cache).
    pub fn new(network: Network, cache_entries: usize) -> NetEvaluator {
        NetEvaluator {
            network,
            cache: NonZeroUsize::new(cache_entries).map(LruCache::new),
            planes: Vec::new(),
            misses: Vec::new(),
            stats: EvalStats::default(),
            material_utility: 0.0,
            material_scale: 0.0,
            moves_left_utility: 0.0,
            mirror_average: false,
            mixed_logits: Vec::new(),
        }
    }

    /// Evaluates every position twice, as it is and mirrored left to right (the board's one
    /// symmetry), and averages the two: policy logits (each action with its mirror), W/D/L
    /// and the auxiliary outputs. The network was trained on both views (mirror augmentation),
    /// so the two answers differ only by its errors, which the average halves where they are
    /// independent; KataGo averages over its symmetries the same way when analysing. It costs
    /// a forward pass of twice the rows per batch.
    pub fn with_mirror_average(mut self, on: bool) -> NetEvaluator {
        self.mirror_average = on;
        self
    }

    /// Whether positions are averaged with their mirror (see
    /// [`NetEvaluator::with_mirror_average`]).
    pub fn mirror_average(&self) -> bool {
        self.mirror_average
    }

    /// Blends the network's predicted final material into the value the search sees, in the
    /// manner of KataGo's score utility: the search's scalar value becomes
    /// `(1 - f) * (win - loss) + f * clamp(material, -1, 1)`, with the draw probability taking
    /// the rest. It breaks the symmetry of games that end in draws at a ply cap: the value head
    /// learns only "draw" from them, the material head learns who was ahead. `f` is clamped to
    /// [0, 1]; 0 (the default) leaves the value as the network gives it. A model without
    /// auxiliary heads ignores it.
    pub fn with_material_utility(mut self, f: f32) -> NetEvaluator {
        self.material_utility = if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.0 };
        self
    }

    /// Sets how the material prediction enters the blend of
    /// [`NetEvaluator::with_material_utility`]: 0 (the default) takes it as the head gives it,
    /// the lead in material points / 14 clamped to [-1, 1], so a man is worth 0.07; `s > 0`
    /// takes `tanh(lead in points / s)`, so a lead of `s` points (a man counts one, a knight
    /// two) weighs tanh(1) = 0.76. A search that must see a hanging man against the value
    /// head's noise needs the second: at 0.07 a man hardly moves a Q value.
    pub fn with_material_scale(mut self, s: f32) -> NetEvaluator {
        self.material_scale = if s.is_finite() { s.max(0.0) } else { 0.0 };
        self
    }

    /// Makes the search prefer short wins and long losses, in the manner of lc0's moves-left
    /// head: the win and loss probabilities are scaled by `1 - c * p`, where `p` is the
    /// network's predicted plies left / 100 (clamped to [0, 1]), and the draw takes the rest,
    /// so the scalar value becomes `(win - loss) * (1 - c * p)`. A position the value head calls
    /// lost whatever the move (where every move keeps the value "loss") is then played to last
    /// longest, giving the opponent the most room to go wrong, and a won one is converted
    /// instead of drifting; a proven end in the tree (p = 0) keeps its full value. `c` is
    /// clamped to [0, 1]; 0 (the default) leaves the value as the network gives it. A model
    /// without auxiliary heads ignores it.
    pub fn with_moves_left_utility(mut self, c: f32) -> NetEvaluator {
        self.moves_left_utility = if c.is_finite() { c.clamp(0.0, 1.0) } else { 0.0 };
        self
    }

    /// The material utility weight (see [`NetEvaluator::with_material_utility`]).
    pub fn material_utility(&self) -> f32 {
        self.material_utility
    }

    /// The material scale (see [`NetEvaluator::with_material_scale`]).
    pub fn material_scale(&self) -> f32 {
        self.material_scale
    }

    /// The network.
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// Work done so far.
    pub fn stats(&self) -> EvalStats {
        self.stats
    }

    /// Forgets every cached result (call it after the network changes).
    pub fn clear_cache(&mut self) {
        if let Some(cache) = &mut self.cache {
            cache.clear();
        }
    }
}

/// The material head's output (the lead in points / 14) on the utility's scale: as it is for
/// `scale` 0, else `tanh(14 m / scale)` (see [`NetEvaluator::with_material_scale`]).
fn scale_material(m: f32, scale: f32) -> f32 {
    if scale > 0.0 {
        (MATERIAL_TARGET_POINTS * m / scale).tanh()
    } else {
        m
    }
}

/// `wdl` with a share `f` of its mass replaced by the material prediction (see
/// [`NetEvaluator::with_material_utility`]): win and loss scaled by `1 - f`, then `f * m` added
/// to win (m > 0) or `f * -m` to loss (m < 0); draw keeps the remainder, so the result is still
/// a distribution and `win - loss = (1 - f)(w - l) + f m`.
fn blend_material(wdl: Wdl, material: Option<f32>, f: f32) -> Wdl {
    let Some(m) = material.filter(|m| f > 0.0 && m.is_finite()) else { return wdl };
    let m = m.clamp(-1.0, 1.0);
    let win = (1.0 - f) * wdl.win + f * m.max(0.0);
    let loss = (1.0 - f) * wdl.loss + f * (-m).max(0.0);
    Wdl::new(win, (1.0 - win - loss).max(0.0), loss)
}

/// `wdl` with its decisive mass shrunk towards a draw by `1 - c * p`, `p` the predicted plies
/// left / 100 clamped to [0, 1] (see [`NetEvaluator::with_moves_left_utility`]).
fn shorten_decided(wdl: Wdl, plies_left: Option<f32>, c: f32) -> Wdl {
    let Some(p) = plies_left.filter(|p| c > 0.0 && p.is_finite()) else { return wdl };
    let keep = 1.0 - c * p.clamp(0.0, 1.0);
    let (win, loss) = (wdl.win * keep, wdl.loss * keep);
    Wdl::new(win, (1.0 - win - loss).max(0.0), loss)
}

/// Softmax of `logits` at `legal` into `priors` (illegal actions never enter the sum): the
/// network's prior over a position's legal actions.
pub fn masked_softmax(logits: &[f32], legal: &[u32], priors: &mut [f32]) {
    let max = legal.iter().map(|&a| logits[a as usize]).fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for (p, &a) in priors.iter_mut().zip(legal) {
        *p = (logits[a as usize] - max).exp();
        sum += *p;
    }
    if sum > 0.0 && sum.is_finite() {
        priors.iter_mut().for_each(|p| *p /= sum);
    } else {
        // Logits that overflowed: fall back to uniform rather than hand the search NaN.
        priors.fill(1.0 / legal.len().max(1) as f32);
    }
}

impl Evaluator<CamelotState> for NetEvaluator {
    fn evaluate(&mut self, states: &[&CamelotState], out: &mut Evaluations) -> Result<(), EvalError> {
        self.stats.requests += states.len() as u64;
        self.misses.clear();
        for (i, state) in states.iter().enumerate() {
            let hit = self.cache.as_mut().and_then(|cache| cache.get(&state.input_key()));
            match hit {
                Some(cached) if cached.priors.len() == out.legal_actions(i).len() => {
                    let entry = out.entry_mut(i);
                    entry.priors.copy_from_slice(&cached.priors);
                    *entry.value = cached.value;
                    self.stats.cache_hits += 1;
                }
                _ => self.misses.push(i),
            }
        }
        if self.misses.is_empty() {
            return Ok(());
        }
        let per = self.network.planes_len();
        let rows = self.misses.len();
        let views = if self.mirror_average { 2 } else { 1 };
        self.planes.resize(views * rows * per, 0.0);
        for (slot, &i) in self.misses.iter().enumerate() {
            states[i].encode_planes(&mut self.planes[slot * per..(slot + 1) * per]);
        }
        if self.mirror_average {
            // Rows `rows..2 rows` are the same positions mirrored.
            let (plain, mirrored) = self.planes.split_at_mut(rows * per);
            mirrored.copy_from_slice(plain);
            for (slot, &i) in self.misses.iter().enumerate() {
                mirror_planes(&states[i].codec(), &mut mirrored[slot * per..(slot + 1) * per]);
            }
        }
        let raw = self.network.forward(&self.planes, views * rows)?;
        self.stats.batches += 1;
        let actions = self.network.grid().actions();
        let aux_len = AUX_OUTPUTS.len();
        for (slot, &i) in self.misses.iter().enumerate() {
            let logits = &raw.policy_logits[slot * actions..(slot + 1) * actions];
            let entry = out.entry_mut(i);
            let mut wdl = [raw.wdl[slot * 3], raw.wdl[slot * 3 + 1], raw.wdl[slot * 3 + 2]];
            let mut material = raw.aux.get(slot * aux_len).copied();
            let mut plies_left = raw.aux.get(slot * aux_len + 1).copied();
            if self.mirror_average {
                let m = rows + slot;
                let mirrored_logits = &raw.policy_logits[m * actions..(m + 1) * actions];
                let codec = states[i].codec();
                // Only the legal actions' entries are read by the softmax below.
                self.mixed_logits.resize(actions, 0.0);
                for &a in entry.legal.iter() {
                    let mirrored = mirror_action(&codec, a) as usize;
                    self.mixed_logits[a as usize] = 0.5 * (logits[a as usize] + mirrored_logits[mirrored]);
                }
                masked_softmax(&self.mixed_logits, entry.legal, entry.priors);
                for (k, w) in wdl.iter_mut().enumerate() {
                    *w = 0.5 * (*w + raw.wdl[m * 3 + k]);
                }
                let average = |x: Option<f32>, y: Option<f32>| x.zip(y).map(|(x, y)| 0.5 * (x + y));
                material = average(material, raw.aux.get(m * aux_len).copied());
                plies_left = average(plies_left, raw.aux.get(m * aux_len + 1).copied());
            } else {
                masked_softmax(logits, entry.legal, entry.priors);
            }
            let material = material.map(|m| scale_material(m, self.material_scale));
            let value = blend_material(Wdl::new(wdl[0], wdl[1], wdl[2]), material, self.material_utility);
            *entry.value = shorten_decided(value, plies_left, self.moves_left_utility);
            if let Some(cache) = &mut self.cache {
                let cached = CachedEval { priors: entry.priors.to_vec().into_boxed_slice(), value: *entry.value };
                cache.put(states[i].input_key(), cached);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{blend_material, masked_softmax, scale_material, shorten_decided};
    use camelot_search::Wdl;

    #[test]
    fn the_moves_left_utility_prefers_short_wins_and_long_losses() {
        let won = Wdl::new(0.9, 0.1, 0.0);
        let lost = Wdl::new(0.0, 0.1, 0.9);
        assert_eq!(shorten_decided(won, Some(0.3), 0.0), won);
        assert_eq!(shorten_decided(won, None, 0.5), won);
        let value = |wdl: Wdl, p: f32| shorten_decided(wdl, Some(p), 0.2).value();
        // Sooner wins and later losses are worth more; the order of wins over draws over
        // losses is kept.
        assert!(value(won, 0.05) > value(won, 0.4) && value(won, 0.4) > value(won, 3.0));
        assert!(value(lost, 0.6) > value(lost, 0.1) && value(lost, 0.1) > value(lost, -1.0));
        assert!(value(won, 1.0) > 0.5 && value(lost, 1.0) < -0.5);
        for (wdl, p) in [(won, 0.3), (lost, 0.7), (Wdl::new(0.3, 0.4, 0.3), 0.5)] {
            let s = shorten_decided(wdl, Some(p), 0.2);
            assert!((s.win + s.draw + s.loss - 1.0).abs() < 1e-6, "{s:?}");
            assert!((s.value() - wdl.value() * (1.0 - 0.2 * p)).abs() < 1e-6, "{s:?}");
        }
    }

    #[test]
    fn material_blend_keeps_a_distribution_and_moves_the_value() {
        let wdl = Wdl::new(0.2, 0.5, 0.3);
        assert_eq!(blend_material(wdl, Some(0.8), 0.0), wdl);
        assert_eq!(blend_material(wdl, None, 0.5), wdl);
        for (m, f) in [(0.8f32, 0.3f32), (-2.0, 0.5), (0.0, 1.0), (1.0, 1.0)] {
            let b = blend_material(wdl, Some(m), f);
            assert!((b.win + b.draw + b.loss - 1.0).abs() < 1e-6, "{b:?}");
            assert!(b.win >= 0.0 && b.draw >= 0.0 && b.loss >= 0.0, "{b:?}");
            let expected = (1.0 - f) * (wdl.win - wdl.loss) + f * m.clamp(-1.0, 1.0);
            assert!((b.value() - expected).abs() < 1e-6, "{b:?} vs {expected}");
        }
    }

    #[test]
    fn a_material_scale_makes_a_man_count_and_keeps_the_order_of_leads() {
        // The head's output is the lead in points / 14: one man is 1/14.
        let man = 1.0 / super::MATERIAL_TARGET_POINTS;
        assert_eq!(scale_material(man, 0.0), man, "scale 0 is the head's own linear value");
        // At scale 2, a lead of two points weighs tanh(1), one man tanh(0.5).
        assert!((scale_material(2.0 * man, 2.0) - 1f32.tanh()).abs() < 1e-6);
        assert!((scale_material(-man, 2.0) + 0.5f32.tanh()).abs() < 1e-6);
        let leads = [-8.0f32, -3.0, -1.0, -0.1, 0.0, 0.1, 1.0, 3.0, 8.0];
        for pair in leads.windows(2) {
            assert!(scale_material(pair[0] * man, 2.0) < scale_material(pair[1] * man, 2.0), "{pair:?}");
        }
        // Past a few men it saturates (in f32, at exactly 1 from about 18 points) and never beyond.
        assert!([-40.0f32, -20.0, 20.0, 40.0].iter().all(|&l| scale_material(l * man, 2.0).abs() <= 1.0));
        assert_eq!(scale_material(0.0, 2.0), 0.0);
    }

    #[test]
    fn masked_softmax_ignores_illegal_actions() {
        let logits = [0.0, 100.0, 1.0, 2.0];
        let legal = [0, 2, 3];
        let mut priors = [0.0; 3];
        masked_softmax(&logits, &legal, &mut priors);
        let e = [1.0f32, 1f32.exp(), 2f32.exp()];
        let sum: f32 = e.iter().sum();
        for (p, e) in priors.iter().zip(e) {
            assert!((p - e / sum).abs() < 1e-6, "{priors:?}");
        }
    }
}
