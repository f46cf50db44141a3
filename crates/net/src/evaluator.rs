//! The network as the search's batched [`Evaluator`]: one forward pass per batch of leaves,
//! illegal actions masked, softmax over the legal ones, and an LRU cache of recent positions.

use std::num::NonZeroUsize;

use camelot_game::CamelotState;
use camelot_search::{EvalError, Evaluations, Evaluator, Game, Wdl};
use lru::LruCache;

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
    cache: Option<LruCache<u64, CachedEval>>,
    planes: Vec<f32>,
    misses: Vec<usize>,
    stats: EvalStats,
}

/// The cache key of a state: its hash (position and place inside the move) and how often the
/// position occurred before, since the input planes show that count.
fn cache_key(state: &CamelotState) -> u64 {
    state.hash() ^ (state.occurrences() as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)
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
        }
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

/// Softmax of `logits` at `legal` into `priors` (illegal actions never enter the sum).
fn masked_softmax(logits: &[f32], legal: &[u32], priors: &mut [f32]) {
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
            let hit = self.cache.as_mut().and_then(|cache| cache.get(&cache_key(state)));
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
        self.planes.resize(self.misses.len() * per, 0.0);
        for (slot, &i) in self.misses.iter().enumerate() {
            states[i].encode_planes(&mut self.planes[slot * per..(slot + 1) * per]);
        }
        let raw = self.network.forward(&self.planes, self.misses.len())?;
        self.stats.batches += 1;
        let actions = self.network.grid().actions();
        for (slot, &i) in self.misses.iter().enumerate() {
            let logits = &raw.policy_logits[slot * actions..(slot + 1) * actions];
            let wdl = &raw.wdl[slot * 3..slot * 3 + 3];
            let entry = out.entry_mut(i);
            masked_softmax(logits, entry.legal, entry.priors);
            *entry.value = Wdl::new(wdl[0], wdl[1], wdl[2]);
            if let Some(cache) = &mut self.cache {
                let cached = CachedEval { priors: entry.priors.to_vec().into_boxed_slice(), value: *entry.value };
                cache.put(cache_key(states[i]), cached);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::masked_softmax;

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
