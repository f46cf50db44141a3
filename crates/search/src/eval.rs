//! Leaf evaluation: the [`Evaluator`] trait, its batch buffer, and two simple evaluators.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::game::{GameState, Terminal};

/// Win/draw/loss probabilities, always from the point of view of one stated player.
///
/// Draws are common in Camelot, so values carry the draw mass separately instead of a single
/// scalar; [`Wdl::value`] gives the scalar `win - loss` the tree statistics use.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Wdl {
    /// Probability of winning.
    pub win: f32,
    /// Probability of a draw.
    pub draw: f32,
    /// Probability of losing.
    pub loss: f32,
}

impl Wdl {
    /// A certain win.
    pub const WIN: Wdl = Wdl { win: 1.0, draw: 0.0, loss: 0.0 };
    /// A certain draw.
    pub const DRAW: Wdl = Wdl { win: 0.0, draw: 1.0, loss: 0.0 };
    /// A certain loss.
    pub const LOSS: Wdl = Wdl { win: 0.0, draw: 0.0, loss: 1.0 };

    /// Builds a value from its three probabilities (not normalised).
    #[inline]
    pub fn new(win: f32, draw: f32, loss: f32) -> Wdl {
        Wdl { win, draw, loss }
    }

    /// The expected score `win - loss`, in `[-1, 1]`.
    #[inline]
    pub fn value(self) -> f32 {
        self.win - self.loss
    }

    /// The same value seen by the opponent (win and loss swapped).
    #[inline]
    pub fn flip(self) -> Wdl {
        Wdl { win: self.loss, draw: self.draw, loss: self.win }
    }

    /// Rebuilds a value from a scalar `win - loss` and a draw probability.
    pub(crate) fn from_value_draw(value: f64, draw: f64) -> Wdl {
        let draw = draw.clamp(0.0, 1.0);
        let value = value.clamp(-1.0, 1.0);
        let win = ((1.0 - draw + value) * 0.5).clamp(0.0, 1.0);
        let loss = ((1.0 - draw - value) * 0.5).clamp(0.0, 1.0);
        Wdl { win: win as f32, draw: draw as f32, loss: loss as f32 }
    }

    /// Scales the three entries to sum to one; `None` if any is negative or not finite, or
    /// all are zero.
    pub(crate) fn normalized(self) -> Option<Wdl> {
        let parts = [self.win, self.draw, self.loss];
        if parts.iter().any(|p| !p.is_finite() || *p < 0.0) {
            return None;
        }
        let sum = self.win + self.draw + self.loss;
        if sum <= 0.0 || !sum.is_finite() {
            return None;
        }
        Some(Wdl { win: self.win / sum, draw: self.draw / sum, loss: self.loss / sum })
    }
}

/// Error type an [`Evaluator`] may return (a failed GPU call, a closed channel...).
pub type EvalError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The batch buffer exchanged with an [`Evaluator`]: for state `i` of the batch, its legal
/// actions (filled by the search) and slots for its priors and value (filled by the evaluator).
///
/// Storing everything flat and reusing the buffer between calls keeps evaluation free of
/// allocation, and handing the evaluator the legal lists the search already generated saves
/// generating them twice. Priors start at zero and values at [`Wdl::DRAW`]; the search
/// normalises priors and values afterwards, and rejects a state whose priors are all zero.
#[derive(Clone, Debug, Default)]
pub struct Evaluations {
    legal: Vec<u32>,
    offsets: Vec<u32>,
    priors: Vec<f32>,
    values: Vec<Wdl>,
}

/// One state's slots in an [`Evaluations`] buffer, as handed to an evaluator.
#[derive(Debug)]
pub struct EvalEntry<'a> {
    /// The state's legal actions, in the order the priors must follow.
    pub legal: &'a [u32],
    /// One prior weight per legal action, to be filled (any non-negative scale).
    pub priors: &'a mut [f32],
    /// The state's value from the view of its player to move, to be filled.
    pub value: &'a mut Wdl,
}

impl Evaluations {
    /// An empty buffer.
    pub fn new() -> Evaluations {
        Evaluations { legal: Vec::new(), offsets: vec![0], priors: Vec::new(), values: Vec::new() }
    }

    /// Removes every state, keeping the allocations.
    pub fn clear(&mut self) {
        self.legal.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.priors.clear();
        self.values.clear();
    }

    /// Appends a state with legal actions `legal`; its priors start at zero and its value at
    /// a draw. Used by the search; public so that evaluators can be tested on their own.
    pub fn push_state(&mut self, legal: &[u32]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.legal.extend_from_slice(legal);
        self.priors.resize(self.legal.len(), 0.0);
        self.offsets.push(self.legal.len() as u32);
        self.values.push(Wdl::DRAW);
    }

    /// Number of states in the batch.
    #[inline]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the batch is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    #[inline]
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    /// Legal actions of state `i`. Panics if `i >= len()`.
    #[inline]
    pub fn legal_actions(&self, i: usize) -> &[u32] {
        &self.legal[self.range(i)]
    }

    /// Priors of state `i` as filled so far. Panics if `i >= len()`.
    #[inline]
    pub fn priors(&self, i: usize) -> &[f32] {
        &self.priors[self.range(i)]
    }

    /// Value of state `i` as filled so far. Panics if `i >= len()`.
    #[inline]
    pub fn value(&self, i: usize) -> Wdl {
        self.values[i]
    }

    /// Mutable slots of state `i`. Panics if `i >= len()`.
    #[inline]
    pub fn entry_mut(&mut self, i: usize) -> EvalEntry<'_> {
        let range = self.range(i);
        EvalEntry { legal: &self.legal[range.clone()], priors: &mut self.priors[range], value: &mut self.values[i] }
    }

    /// Mutable slots of every state, in batch order.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = EvalEntry<'_>> {
        let mut legal: &[u32] = &self.legal;
        let mut priors: &mut [f32] = &mut self.priors;
        self.offsets.windows(2).zip(self.values.iter_mut()).map(move |(w, value)| {
            let n = (w[1] - w[0]) as usize;
            let (l, rest_l) = legal.split_at(n);
            legal = rest_l;
            let (p, rest_p) = std::mem::take(&mut priors).split_at_mut(n);
            priors = rest_p;
            EvalEntry { legal: l, priors: p, value }
        })
    }
}

/// Evaluates a batch of leaf states: priors over each state's legal actions and a
/// win/draw/loss value from the view of each state's player to move.
///
/// The search gathers the pending leaves of *all* trees it is driving into one call, so an
/// implementation backed by a neural network runs one inference at full batch. Only
/// non-terminal states are passed. `out` has one entry per state, in the same order, with the
/// legal actions already listed ([`Evaluations::entry_mut`], [`Evaluations::entries_mut`]).
///
/// Results must not depend on which other states share the batch if batched and unbatched
/// searches are to agree exactly (floating-point batch effects of a GPU are the usual
/// exception).
pub trait Evaluator<G: GameState> {
    /// Fills priors and values in `out` for every state in `states`.
    fn evaluate(&mut self, states: &[&G], out: &mut Evaluations) -> Result<(), EvalError>;
}

impl<G: GameState, E: Evaluator<G> + ?Sized> Evaluator<G> for &mut E {
    fn evaluate(&mut self, states: &[&G], out: &mut Evaluations) -> Result<(), EvalError> {
        (**self).evaluate(states, out)
    }
}

impl<G: GameState, E: Evaluator<G> + ?Sized> Evaluator<G> for Box<E> {
    fn evaluate(&mut self, states: &[&G], out: &mut Evaluations) -> Result<(), EvalError> {
        (**self).evaluate(states, out)
    }
}

/// Uniform priors and a draw value for every state: the search's own cost with a free
/// evaluator, used by benchmarks and as a knowledge-free baseline.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl<G: GameState> Evaluator<G> for UniformEvaluator {
    fn evaluate(&mut self, _states: &[&G], out: &mut Evaluations) -> Result<(), EvalError> {
        for entry in out.entries_mut() {
            entry.priors.fill(1.0);
            *entry.value = Wdl::DRAW;
        }
        Ok(())
    }
}

/// Uniform priors and a value from seeded random playouts: classic UCT strength with no
/// learned knowledge, the baseline the tests play against perfect play.
///
/// Each playout picks uniformly random legal actions until the game ends or `max_plies`
/// decisions have been played (then it counts as a draw). The playouts of a state are seeded
/// from the evaluator's seed and the state's [`GameState::hash`], so a state's value does not depend
/// on the order of calls or on the other states in the batch: batched and unbatched searches
/// see the same values.
#[derive(Clone, Debug)]
pub struct RolloutEvaluator {
    seed: u64,
    max_plies: u32,
    rollouts: u32,
    scratch: Vec<u32>,
}

impl RolloutEvaluator {
    /// One playout per state, capped at 1000 decisions.
    pub fn new(seed: u64) -> RolloutEvaluator {
        RolloutEvaluator { seed, max_plies: 1000, rollouts: 1, scratch: Vec::new() }
    }

    /// Sets the number of decisions after which a playout stops and counts as a draw.
    pub fn with_max_plies(mut self, max_plies: u32) -> RolloutEvaluator {
        self.max_plies = max_plies;
        self
    }

    /// Sets the number of playouts averaged per state (at least one is played).
    pub fn with_rollouts(mut self, rollouts: u32) -> RolloutEvaluator {
        self.rollouts = rollouts.max(1);
        self
    }

    /// Value of `state` for its player to move, averaged over the configured playouts.
    pub fn rollout_value<G: GameState>(&mut self, state: &G) -> Wdl {
        let me = state.to_move();
        let mut rng = ChaCha8Rng::seed_from_u64(mix64(self.seed ^ mix64(state.hash())));
        let (mut win, mut draw, mut loss) = (0u32, 0u32, 0u32);
        for _ in 0..self.rollouts {
            let mut s = state.clone();
            let mut outcome = Terminal::Draw;
            for _ in 0..self.max_plies {
                if let Some(o) = s.terminal() {
                    outcome = o;
                    break;
                }
                self.scratch.clear();
                s.legal_actions(&mut self.scratch);
                if self.scratch.is_empty() {
                    // A contract violation by the game; count it as a draw rather than fail.
                    break;
                }
                let a = self.scratch[rng.random_range(0..self.scratch.len())];
                s.apply(a);
            }
            if let Some(o) = s.terminal() {
                outcome = o;
            }
            match outcome {
                Terminal::Win(p) if p == me => win += 1,
                Terminal::Win(_) => loss += 1,
                Terminal::Draw => draw += 1,
            }
        }
        let n = self.rollouts as f32;
        Wdl::new(win as f32 / n, draw as f32 / n, loss as f32 / n)
    }
}

impl<G: GameState> Evaluator<G> for RolloutEvaluator {
    fn evaluate(&mut self, states: &[&G], out: &mut Evaluations) -> Result<(), EvalError> {
        for (i, state) in states.iter().enumerate() {
            let value = self.rollout_value(*state);
            let entry = out.entry_mut(i);
            entry.priors.fill(1.0);
            *entry.value = value;
        }
        Ok(())
    }
}

/// SplitMix64 finaliser: spreads seeds and hashes over all 64 bits.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_follow_offsets() {
        let mut e = Evaluations::new();
        e.push_state(&[3, 4]);
        e.push_state(&[]);
        e.push_state(&[7, 8, 9]);
        let lens: Vec<usize> = e.entries_mut().map(|x| x.legal.len()).collect();
        assert_eq!(lens, vec![2, 0, 3]);
        for (k, entry) in e.entries_mut().enumerate() {
            entry.priors.fill(k as f32);
            *entry.value = Wdl::WIN;
        }
        assert_eq!(e.priors(2), &[2.0, 2.0, 2.0]);
        assert_eq!(e.legal_actions(2), &[7, 8, 9]);
        assert_eq!(e.value(1), Wdl::WIN);
        e.clear();
        assert!(e.is_empty());
    }

    #[test]
    fn wdl_round_trip() {
        let w = Wdl::new(0.5, 0.3, 0.2);
        let back = Wdl::from_value_draw(w.value() as f64, w.draw as f64);
        assert!((back.win - 0.5).abs() < 1e-6 && (back.loss - 0.2).abs() < 1e-6);
        assert_eq!(Wdl::new(0.0, 0.0, 0.0).normalized(), None);
        assert_eq!(Wdl::new(f32::NAN, 1.0, 0.0).normalized(), None);
        assert_eq!(Wdl::new(2.0, 0.0, 2.0).normalized(), Some(Wdl::new(0.5, 0.0, 0.5)));
    }
}
