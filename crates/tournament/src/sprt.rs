//! SPRT: a sequential test between two Elo hypotheses on game pairs, as fishtest runs it.
//!
//! Games come in pairs over one opening with the colours swapped, so a pair's score for A is
//! one of 0, 1/2, 1, 3/2, 2: the *pentanomial* counts. Pairs are independent even when the
//! opening favours one colour, which keeps the variance honest (trinomial per-game counts
//! overstate it).
//!
//! Hypotheses are stated in logistic Elo: `H0: elo = elo0` against `H1: elo = elo1`, an Elo
//! difference `e` meaning an expected score `s(e) = 1 / (1 + 10^(-e/400))`. The test is the
//! generalized SPRT of fishtest (M. Van den Bergh): for each hypothesis, the pentanomial
//! distribution nearest to the observed frequencies whose mean pair score is `s` is found by
//! maximum likelihood (`p_k = f_k / (1 + λ (x_k - s))`, `λ` solving the mean constraint); the
//! log-likelihood ratio is `N · Σ f_k ln(p1_k / p0_k)`. The test stops with H1 accepted when
//! the LLR reaches `ln((1 - beta) / alpha)` and with H0 accepted when it falls to
//! `ln(beta / (1 - alpha))`.

/// A test's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtConfig {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1 (greater than `elo0`).
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
}

impl Default for SprtConfig {
    fn default() -> SprtConfig {
        SprtConfig { elo0: 0.0, elo1: 30.0, alpha: 0.05, beta: 0.05 }
    }
}

impl SprtConfig {
    /// Checks the settings; the message names the field at fault.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.elo0.is_finite() && self.elo1.is_finite() && self.elo1 > self.elo0) {
            return Err(format!("--elo1 ({}) must be greater than --elo0 ({})", self.elo1, self.elo0));
        }
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v < 0.5) {
                return Err(format!("--{name} ({v}) must be between 0 and 0.5"));
            }
        }
        Ok(())
    }

    /// `(lower, upper)`: accept H0 at or below `ln(beta / (1 - alpha))`, H1 at or above
    /// `ln((1 - beta) / alpha)`.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }
}

/// Where a test stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtStatus {
    /// Neither bound reached yet.
    Continue,
    /// H0 accepted: A is not `elo1` stronger (it is about `elo0` or worse).
    AcceptH0,
    /// H1 accepted: A is about `elo1` stronger (or more).
    AcceptH1,
}

/// The expected score of an Elo difference on the logistic scale.
pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The Elo difference of an expected score on the logistic scale.
pub fn logistic_elo(score: f64) -> f64 {
    let s = score.clamp(1e-9, 1.0 - 1e-9);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Pair scores per game (A's pair score / 2): 0, 1/4, 1/2, 3/4, 1.
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// The pentanomial counts of a running test, and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Sprt {
    config: SprtConfig,
    /// Pairs by A's pair score in half points: index 0 (lost both) to 4 (won both).
    counts: [u64; 5],
}

impl Sprt {
    /// A test with no pairs yet.
    pub fn new(config: SprtConfig) -> Sprt {
        Sprt { config, counts: [0; 5] }
    }

    /// The settings.
    pub fn config(&self) -> &SprtConfig {
        &self.config
    }

    /// The pentanomial counts: pairs in which A scored 0, 1/2, 1, 3/2, 2.
    pub fn counts(&self) -> [u64; 5] {
        self.counts
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Adds one pair from A's scores in its two games (each 0, 1/2 or 1).
    pub fn add_pair(&mut self, first: f64, second: f64) {
        let half_points = ((first + second) * 2.0).round().clamp(0.0, 4.0) as usize;
        self.counts[half_points] += 1;
    }

    /// A's mean score per game so far (1/2 with no pairs).
    pub fn score(&self) -> f64 {
        let n = self.pairs();
        if n == 0 {
            return 0.5;
        }
        self.counts.iter().zip(PAIR_SCORES).map(|(&c, x)| c as f64 * x).sum::<f64>() / n as f64
    }

    /// The log-likelihood ratio of H1 against H0 (0 with no pairs).
    pub fn llr(&self) -> f64 {
        let n = self.pairs();
        if n == 0 {
            return 0.0;
        }
        // A small prior on every cell (as fishtest does) keeps empty cells from pinning the
        // constrained fits at the boundary.
        let prior = 1e-3;
        let total = n as f64 + 5.0 * prior;
        let freq: [f64; 5] = std::array::from_fn(|k| (self.counts[k] as f64 + prior) / total);
        let s0 = logistic_score(self.config.elo0);
        let s1 = logistic_score(self.config.elo1);
        let p0 = constrained_mle(&freq, s0);
        let p1 = constrained_mle(&freq, s1);
        let per_pair: f64 = (0..5).map(|k| freq[k] * (p1[k] / p0[k]).ln()).sum();
        n as f64 * per_pair
    }

    /// Where the test stands.
    pub fn status(&self) -> SprtStatus {
        let (lower, upper) = self.config.bounds();
        let llr = self.llr();
        if llr >= upper {
            SprtStatus::AcceptH1
        } else if llr <= lower {
            SprtStatus::AcceptH0
        } else {
            SprtStatus::Continue
        }
    }

    /// One line for a person: pairs, pentanomial counts, score, LLR and bounds.
    pub fn summary_line(&self) -> String {
        let (lower, upper) = self.config.bounds();
        let c = self.counts;
        format!(
            "pairs {} [{} {} {} {} {}] score {:.1}% ({:+.1} Elo) LLR {:+.3} [{:.3}, {:.3}]",
            self.pairs(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            100.0 * self.score(),
            logistic_elo(self.score()),
            self.llr(),
            lower,
            upper
        )
    }
}

/// The distribution over [`PAIR_SCORES`] with mean `s` that is nearest to `freq` in the
/// maximum-likelihood sense: `p_k = f_k / (1 + λ (x_k - s))`, with `λ` found by bisection on
/// `Σ f_k (x_k - s) / (1 + λ (x_k - s)) = 0` (decreasing in `λ` on the interval where every
/// denominator is positive).
fn constrained_mle(freq: &[f64; 5], s: f64) -> [f64; 5] {
    let d: [f64; 5] = std::array::from_fn(|k| PAIR_SCORES[k] - s);
    let max = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = d.iter().copied().fold(f64::INFINITY, f64::min);
    // 1 + λ d_k > 0 for all k: λ in (-1/max, -1/min) (max > 0 > min as 0 < s < 1).
    let eps = 1e-12;
    let mut lo = -1.0 / max + eps;
    let mut hi = -1.0 / min - eps;
    let f = |lambda: f64| -> f64 { (0..5).map(|k| freq[k] * d[k] / (1.0 + lambda * d[k])).sum() };
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = 0.5 * (lo + hi);
    let mut p: [f64; 5] = std::array::from_fn(|k| freq[k] / (1.0 + lambda * d[k]));
    let sum: f64 = p.iter().sum();
    p.iter_mut().for_each(|x| *x /= sum);
    p
}
