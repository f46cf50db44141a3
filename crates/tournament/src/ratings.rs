//! Ratings: maximum-likelihood Bradley-Terry Elo with draws and a first-move advantage, with
//! 95% confidence intervals and the likelihood of superiority of each pair.
//!
//! # The model
//!
//! Davidson's extension of Bradley-Terry to draws, with a white-advantage term. With strengths
//! `g_i = 10^(r_i / 400)` (`r_i` in Elo), white advantage `h` (Elo) and draw parameter `nu`, a
//! game with `i` White against `j` Black ends
//!
//! ```text
//!   White wins  with probability  g_i·H / Z
//!   draw                          nu·sqrt(g_i·H·g_j) / Z       (H = 10^(h / 400))
//!   Black wins                    g_j / Z                       Z = the sum of the three
//! ```
//!
//! So `r_i - r_j` is the Elo difference on the win/loss odds scale (as in BayesElo): an edge of
//! 400 makes wins ten times likelier than losses, whatever the draw rate. The log-likelihood is
//! a multinomial logit with linear predictors, hence concave; [`fit_ratings`] maximises it by
//! Newton's method with a backtracking line search. The covariance of the estimates is the
//! inverse of the negative Hessian at the maximum (the observed information); a player's
//! interval is `1.96` standard errors of its rating *relative to the anchor*, whose own interval
//! is 0.
//!
//! Three details keep the fit finite on small samples: each pair of players that met gets
//! [`FitOptions::prior_draws`] virtual draws (half with each colour assignment), as BayesElo
//! does, so a 20-0 sweep gives a large finite gap instead of an infinite one; `ln nu` has a
//! weak normal prior (sd 2 around `nu = 1`), so that virtual draws alone cannot drive it and a
//! rating off to infinity together; and players must
//! be connected by games (otherwise their relative ratings are unknown: an error says which
//! groups never met).
//!
//! The anchor is [`FitOptions::anchor`] when given, else `random` at 0 when it played, else the
//! first player in the rows. Intervals are relative to the anchor, so a player's interval
//! holds every link of the chain of games between it and the anchor: a network that beats
//! `random`, `greedy` and `uct` in every game is placed only loosely above them, however many
//! games it plays against the alpha-beta anchors. Anchoring at the fixed player nearest in
//! strength (`--anchor alphabeta:depth=2`) gives the interval of the measurement itself.

use crate::error::TournamentError;
use crate::results::ResultRow;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Natural-log units per Elo point: `ln(10) / 400`.
const NATURAL_PER_ELO: f64 = std::f64::consts::LN_10 / 400.0;

/// Standard deviation of the weak normal prior on `ln nu` (centred on `nu = 1`). Without it,
/// results with no real draws and no losses for some player leave a ridge along which the
/// rating and `ln nu` run off together; with it they stay finite. Its pull is negligible once
/// a few dozen games are drawn or decided both ways.
const NU_PRIOR_SD: f64 = 2.0;

/// How to fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// Virtual draws added to every pair of players that met (split evenly between the two
    /// colour assignments). 0 gives the plain maximum-likelihood estimate, which is infinite
    /// when a player won or lost every game.
    pub prior_draws: f64,
    /// The player fixed at 0 Elo (default: `random` when it played, else the first player in
    /// the rows).
    pub anchor: Option<String>,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions { prior_draws: 1.0, anchor: None }
    }
}

/// One player's line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerRating {
    /// The player's spec string.
    pub spec: String,
    /// Rating in Elo (the anchor is 0).
    pub elo: f64,
    /// Half-width of the 95% confidence interval, in Elo (relative to the anchor).
    pub ci95: f64,
    /// Games played.
    pub games: u32,
    /// Games won, drawn and lost.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl PlayerRating {
    /// Mean score in `[0, 1]`.
    pub fn score(&self) -> f64 {
        if self.games == 0 {
            return 0.0;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games as f64
    }
}

/// The fitted ratings.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingTable {
    /// Players sorted by rating, best first.
    pub players: Vec<PlayerRating>,
    /// The player fixed at 0.
    pub anchor: String,
    /// White's advantage in Elo, and its 95% half-width.
    pub white_advantage: (f64, f64),
    /// Davidson's draw parameter `nu` (a draw between equal players without colour advantage
    /// has probability `nu / (2 + nu)`).
    pub draw_nu: f64,
    /// Games rated (virtual draws not counted).
    pub games: u32,
    /// Covariance of the ratings in Elo², indexed like `players`.
    pub covariance: Vec<Vec<f64>>,
}

/// The standard normal distribution function.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// The error function (Abramowitz and Stegun 7.1.26 refined by one Newton-free correction:
/// absolute error below 1.5e-7, plenty for probabilities printed to 0.1%).
fn erf(x: f64) -> f64 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp())
}

impl RatingTable {
    /// The index of `spec` in [`RatingTable::players`].
    pub fn index_of(&self, spec: &str) -> Option<usize> {
        self.players.iter().position(|p| p.spec == spec)
    }

    /// The standard error of `r_a - r_b` in Elo.
    pub fn difference_sd(&self, a: usize, b: usize) -> f64 {
        let c = &self.covariance;
        (c[a][a] + c[b][b] - 2.0 * c[a][b]).max(0.0).sqrt()
    }

    /// Likelihood of superiority: the probability that player `a` is stronger than player `b`
    /// (indices into [`RatingTable::players`]), `Phi((r_a - r_b) / sd(r_a - r_b))`.
    pub fn los(&self, a: usize, b: usize) -> f64 {
        let diff = self.players[a].elo - self.players[b].elo;
        let sd = self.difference_sd(a, b);
        if sd == 0.0 {
            return if diff > 0.0 {
                1.0
            } else if diff < 0.0 {
                0.0
            } else {
                0.5
            };
        }
        normal_cdf(diff / sd)
    }

    /// The table as text: one player per line, `SPEC ELO +-CI games score W/D/L`, best first;
    /// then white's advantage and the draw parameter; then the likelihood of superiority of
    /// each player over the others (row over column, in percent).
    pub fn to_text(&self) -> String {
        let width = self.players.iter().map(|p| p.spec.len()).max().unwrap_or(6).max(6);
        let label_width = width + 1 + format!("#{}", self.players.len()).len();
        let mut out = String::new();
        for p in &self.players {
            let _ = writeln!(
                out,
                "{:<width$} {:>7.1} +-{:<6.1} {:>5} games {:>5.1}%  W/D/L {}/{}/{}",
                p.spec,
                p.elo,
                p.ci95,
                p.games,
                100.0 * p.score(),
                p.wins,
                p.draws,
                p.losses
            );
        }
        let _ = writeln!(
            out,
            "\n{} games; anchor {} = 0; white advantage {:+.1} +-{:.1} Elo; draw nu {:.3} (equal players draw {:.1}%)",
            self.games,
            self.anchor,
            self.white_advantage.0,
            self.white_advantage.1,
            self.draw_nu,
            100.0 * self.draw_nu / (2.0 + self.draw_nu)
        );
        if self.players.len() > 1 {
            let _ = writeln!(out, "likelihood of superiority (row better than column, %):");
            let _ = write!(out, "{:<label_width$}", "");
            for j in 0..self.players.len() {
                let _ = write!(out, " {:>6}", format!("#{}", j + 1));
            }
            let _ = writeln!(out);
            for i in 0..self.players.len() {
                let _ = write!(out, "{:<label_width$}", format!("#{} {}", i + 1, self.players[i].spec));
                for j in 0..self.players.len() {
                    if i == j {
                        let _ = write!(out, " {:>6}", "-");
                    } else {
                        let _ = write!(out, " {:>6.1}", 100.0 * self.los(i, j));
                    }
                }
                let _ = writeln!(out);
            }
        }
        out
    }
}

/// Games between an ordered pair (white, black), from White's point of view.
#[derive(Clone, Copy, Default)]
struct Counts {
    wins: f64,
    draws: f64,
    losses: f64,
}

/// Parameter layout: ratings `0..n` (natural units), then white advantage, then `ln nu`.
struct RatingModel {
    n: usize,
    pairs: Vec<((usize, usize), Counts)>,
}

impl RatingModel {
    fn params(&self) -> usize {
        self.n + 2
    }

    /// Each outcome's linear predictor (white wins, draw, black wins) is `X[k] . beta` over
    /// the slots `[white's rating, black's rating, white advantage, ln nu]`.
    const X: [[f64; 4]; 3] = [[1.0, 0.0, 1.0, 0.0], [0.5, 0.5, 0.5, 1.0], [0.0, 1.0, 0.0, 0.0]];

    /// The parameter indices of the slots of [`RatingModel::X`] for White `w` and Black `b`.
    fn slots(&self, w: usize, b: usize) -> [usize; 4] {
        [w, b, self.n, self.n + 1]
    }

    /// Log-probabilities of white wins, draw, black wins.
    fn log_probs(&self, beta: &[f64], w: usize, b: usize) -> [f64; 3] {
        let idx = self.slots(w, b);
        let u = RatingModel::X.map(|x| (0..4).map(|s| x[s] * beta[idx[s]]).sum::<f64>());
        let m = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + u.iter().map(|x| (x - m).exp()).sum::<f64>().ln();
        u.map(|x| x - lse)
    }

    fn log_likelihood(&self, beta: &[f64]) -> f64 {
        let nu = beta[self.n + 1] / NU_PRIOR_SD;
        let mut ll = -0.5 * nu * nu;
        for &((w, b), c) in &self.pairs {
            let lp = self.log_probs(beta, w, b);
            ll += c.wins * lp[0] + c.draws * lp[1] + c.losses * lp[2];
        }
        ll
    }

    /// Gradient and Hessian of the log-likelihood (dense): for a multinomial logit,
    /// `sum_k n_k X_k - N E[X]` and `-N Cov[X]`.
    fn derivatives(&self, beta: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
        let p = self.params();
        let mut grad = vec![0.0; p];
        let mut hess = vec![vec![0.0; p]; p];
        grad[self.n + 1] = -beta[self.n + 1] / (NU_PRIOR_SD * NU_PRIOR_SD);
        hess[self.n + 1][self.n + 1] = -1.0 / (NU_PRIOR_SD * NU_PRIOR_SD);
        for &((w, b), c) in &self.pairs {
            let prob = self.log_probs(beta, w, b).map(f64::exp);
            let total = c.wins + c.draws + c.losses;
            let counts = [c.wins, c.draws, c.losses];
            let idx = self.slots(w, b);
            let xs = &RatingModel::X;
            let mean: [f64; 4] = std::array::from_fn(|s| (0..3).map(|k| prob[k] * xs[k][s]).sum());
            for s in 0..4 {
                let observed: f64 = (0..3).map(|k| counts[k] * xs[k][s]).sum();
                grad[idx[s]] += observed - total * mean[s];
                for t in 0..4 {
                    let second: f64 = (0..3).map(|k| prob[k] * xs[k][s] * xs[k][t]).sum();
                    hess[idx[s]][idx[t]] -= total * (second - mean[s] * mean[t]);
                }
            }
        }
        (grad, hess)
    }
}

/// Cholesky factor `L` (lower) of a symmetric positive definite matrix, or `None`.
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - s;
                if !(d > 0.0 && d.is_finite()) {
                    return None;
                }
                l[i][j] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves `L L^T x = b`.
fn cholesky_solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = l.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// Fits Bradley-Terry-Davidson ratings with a white advantage to `rows` (see the module
/// documentation). Players are named by their spec strings as written in the rows.
pub fn fit_ratings(rows: &[ResultRow], options: &FitOptions) -> Result<RatingTable, TournamentError> {
    if rows.is_empty() {
        return Err(TournamentError::NoGames);
    }
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut id = |name: &str| -> usize {
        if let Some(&i) = index.get(name) {
            return i;
        }
        names.push(name.to_string());
        index.insert(name.to_string(), names.len() - 1);
        names.len() - 1
    };
    let mut ordered: HashMap<(usize, usize), Counts> = HashMap::new();
    let mut tallies: Vec<(u32, u32, u32)> = Vec::new();
    for row in rows {
        let (w, b) = (id(&row.white), id(&row.black));
        let c = ordered.entry((w, b)).or_default();
        tallies.resize(tallies.len().max(w.max(b) + 1), (0, 0, 0));
        match row.result {
            crate::results::GameResult::WhiteWins => {
                c.wins += 1.0;
                tallies[w].0 += 1;
                tallies[b].2 += 1;
            }
            crate::results::GameResult::Draw => {
                c.draws += 1.0;
                tallies[w].1 += 1;
                tallies[b].1 += 1;
            }
            crate::results::GameResult::BlackWins => {
                c.losses += 1.0;
                tallies[w].2 += 1;
                tallies[b].0 += 1;
            }
        }
    }
    let n = names.len();
    // Connectivity (self-play rows, white == black, link nothing).
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &(w, b) in ordered.keys() {
        let (rw, rb) = (find(&mut parent, w), find(&mut parent, b));
        parent[rw] = rb;
    }
    let root0 = find(&mut parent, 0);
    let (first, second): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| find(&mut parent, i) == root0);
    if !second.is_empty() {
        return Err(TournamentError::Disconnected {
            first: first.iter().map(|&i| names[i].clone()).collect(),
            second: second.iter().map(|&i| names[i].clone()).collect(),
        });
    }
    let anchor = if let Some(a) = &options.anchor {
        *index.get(a).ok_or_else(|| TournamentError::UnknownAnchor(a.clone()))?
    } else if let Some(&r) = index.get("random") {
        r
    } else {
        0
    };

    // Virtual draws for every unordered pair that met.
    let mut pairs: Vec<((usize, usize), Counts)> = Vec::new();
    let mut met: Vec<(usize, usize)> =
        ordered.keys().filter(|(w, b)| w != b).map(|&(w, b)| (w.min(b), w.max(b))).collect();
    met.sort_unstable();
    met.dedup();
    for &(i, j) in &met {
        for (w, b) in [(i, j), (j, i)] {
            let mut c = ordered.get(&(w, b)).copied().unwrap_or_default();
            c.draws += options.prior_draws / 2.0;
            pairs.push(((w, b), c));
        }
    }
    pairs.retain(|(_, c)| c.wins + c.draws + c.losses > 0.0);
    let model = RatingModel { n, pairs };

    // Free parameters: everything but the anchor's rating.
    let free: Vec<usize> = (0..model.params()).filter(|&i| i != anchor).collect();
    let mut beta = vec![0.0; model.params()];
    let mut ll = model.log_likelihood(&beta);
    let mut converged = false;
    for _ in 0..200 {
        let (grad, hess) = model.derivatives(&beta);
        let neg: Vec<Vec<f64>> = free.iter().map(|&i| free.iter().map(|&j| -hess[i][j]).collect()).collect();
        let g: Vec<f64> = free.iter().map(|&i| grad[i]).collect();
        let l = cholesky(&neg).ok_or_else(|| {
            TournamentError::NoConvergence("the information matrix is singular (too few decisive games?)".to_string())
        })?;
        let step = cholesky_solve(&l, &g);
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            let mut trial = beta.clone();
            for (k, &i) in free.iter().enumerate() {
                trial[i] += t * step[k];
            }
            let trial_ll = model.log_likelihood(&trial);
            if trial_ll.is_finite() && trial_ll >= ll - 1e-12 {
                beta = trial;
                ll = trial_ll;
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        let size = step.iter().map(|s| (s * t).abs()).fold(0.0, f64::max);
        if !accepted || size < 1e-10 {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(TournamentError::NoConvergence("200 Newton steps without settling".to_string()));
    }
    let (_, hess) = model.derivatives(&beta);
    let neg: Vec<Vec<f64>> = free.iter().map(|&i| free.iter().map(|&j| -hess[i][j]).collect()).collect();
    let l = cholesky(&neg).ok_or_else(|| {
        TournamentError::NoConvergence("the information matrix is singular at the optimum".to_string())
    })?;
    // Covariance over the free parameters: solve for each unit vector.
    let m = free.len();
    let mut cov_free = vec![vec![0.0; m]; m];
    for k in 0..m {
        let mut e = vec![0.0; m];
        e[k] = 1.0;
        let col = cholesky_solve(&l, &e);
        for (i, v) in col.into_iter().enumerate() {
            cov_free[i][k] = v;
        }
    }
    let slot = |p: usize| free.iter().position(|&f| f == p);
    let scale = 1.0 / NATURAL_PER_ELO;
    let cov = |a: usize, b: usize| match (slot(a), slot(b)) {
        (Some(i), Some(j)) => cov_free[i][j] * scale * scale,
        _ => 0.0,
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| beta[b].total_cmp(&beta[a]).then(a.cmp(&b)));
    let players = order
        .iter()
        .map(|&i| {
            let (wins, draws, losses) = tallies.get(i).copied().unwrap_or_default();
            PlayerRating {
                spec: names[i].clone(),
                elo: beta[i] * scale,
                ci95: 1.96 * cov(i, i).max(0.0).sqrt(),
                games: wins + draws + losses,
                wins,
                draws,
                losses,
            }
        })
        .collect();
    let covariance = order.iter().map(|&a| order.iter().map(|&b| cov(a, b)).collect()).collect();
    Ok(RatingTable {
        players,
        anchor: names[anchor].clone(),
        white_advantage: (beta[n] * scale, 1.96 * cov(n, n).max(0.0).sqrt()),
        draw_nu: beta[n + 1].exp(),
        games: rows.len() as u32,
        covariance,
    })
}

/// The generation number of a checkpoint player: the digits of the model file's name in
/// `mcts:model=runs/x/models/000017,...` (17), if the spec names one.
pub fn generation_of(spec: &str) -> Option<u64> {
    let model = spec.strip_prefix("mcts:")?.split(',').find_map(|kv| kv.strip_prefix("model="))?;
    let name = model.rsplit(['/', '\\']).next()?;
    let stem = name.strip_suffix(".safetensors").unwrap_or(name);
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok()
}
