//! A player's wins, draws and losses, and the score with its 95% interval.

/// Wins, draws and losses from one player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl Tally {
    /// Counts one game with score 1, 1/2 or 0.
    pub fn add(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    /// Games counted.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Mean score in `[0, 1]` (0 for no games).
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.0;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
    }

    /// Half-width of the 95% interval of the mean score, in `[0, 1]` units: `1.96 * sqrt(v / n)`
    /// with `v` the variance of the per-game scores (1, 1/2, 0) about their mean, divided by
    /// `n` (normal approximation, as cutechess-cli computes it).
    pub fn interval95(&self) -> f64 {
        let n = self.games() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let m = self.score();
        let variance = (self.wins as f64 * (1.0 - m).powi(2)
            + self.draws as f64 * (0.5 - m).powi(2)
            + self.losses as f64 * m.powi(2))
            / n;
        1.96 * (variance / n).sqrt()
    }

    /// `score: 97.5% (W/D/L 39/0/1) +- 4.8`: the score and the interval's half-width in
    /// percentage points.
    pub fn summary_line(&self) -> String {
        format!(
            "score: {:.1}% (W/D/L {}/{}/{}) +- {:.1}",
            self.score() * 100.0,
            self.wins,
            self.draws,
            self.losses,
            self.interval95() * 100.0
        )
    }
}
