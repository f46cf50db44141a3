//! Search parameters with their defaults.

use crate::SearchError;

/// Move temperature as a function of the move number: piecewise constant.
///
/// The temperature shapes how the search picks its move from the root visit counts in PUCT
/// mode: `0` plays the most visited action, `1` samples in proportion to visits, `t` samples in
/// proportion to `visits^(1/t)`. Self-play usually explores early (temperature 1 for the first
/// moves) and plays greedily later. The move number is the tree's counter
/// ([`crate::Tree::move_number`]), which counts decisions unless the caller sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct TemperatureSchedule {
    /// `(first move number, temperature)` steps sorted by move number; the first starts at 0.
    steps: Vec<(u32, f32)>,
}

impl TemperatureSchedule {
    /// The same temperature for every move.
    pub fn constant(temperature: f32) -> TemperatureSchedule {
        TemperatureSchedule { steps: vec![(0, temperature)] }
    }

    /// `before` for moves `0..until`, then `after`.
    pub fn step(before: f32, until: u32, after: f32) -> TemperatureSchedule {
        TemperatureSchedule { steps: vec![(0, before), (until, after)] }
    }

    /// A general schedule from `(first move number, temperature)` steps. The steps must be
    /// non-empty, start at move 0, have strictly increasing move numbers, and finite
    /// non-negative temperatures.
    pub fn piecewise(steps: Vec<(u32, f32)>) -> Result<TemperatureSchedule, SearchError> {
        let schedule = TemperatureSchedule { steps };
        schedule.validate()?;
        Ok(schedule)
    }

    /// The `(first move number, temperature)` steps.
    pub fn steps(&self) -> &[(u32, f32)] {
        &self.steps
    }

    /// The temperature at move `move_number`.
    pub fn at(&self, move_number: u32) -> f32 {
        let mut t = self.steps.first().map_or(0.0, |s| s.1);
        for &(from, temp) in &self.steps {
            if from <= move_number {
                t = temp;
            } else {
                break;
            }
        }
        t
    }

    fn validate(&self) -> Result<(), SearchError> {
        let bad = |reason: &str| SearchError::InvalidConfig { field: "temperature", reason: reason.to_string() };
        match self.steps.first() {
            None => return Err(bad("the schedule has no steps")),
            Some(&(from, _)) if from != 0 => return Err(bad("the first step must start at 0")),
            _ => {}
        }
        if self.steps.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(bad("move numbers must increase strictly"));
        }
        if self.steps.iter().any(|s| !s.1.is_finite() || s.1 < 0.0) {
            return Err(bad("temperatures must be finite and non-negative"));
        }
        Ok(())
    }
}

impl Default for TemperatureSchedule {
    /// Temperature 1 for the first 30 moves, then 0 (AlphaZero's self-play schedule).
    fn default() -> Self {
        TemperatureSchedule::step(1.0, 30, 0.0)
    }
}

/// Every tunable of the search, with self-play defaults ([`SearchConfig::default`]) and
/// match-play defaults ([`SearchConfig::evaluation`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// New simulations (leaf visits) per root per search call, not counting the root's own
    /// evaluation. With tree reuse the root keeps its earlier visits on top of these.
    /// Zero is allowed: the move then follows the priors alone.
    pub simulations: u32,
    /// Exploration constant of PUCT: `Q + c_puct * P * sqrt(N_parent) / (1 + N_child)`, with
    /// `Q` in `[-1, 1]`. Larger explores more.
    pub c_puct: f32,
    /// First-play urgency reduction: an unvisited child is valued at the parent's `Q` minus
    /// `fpu_reduction * sqrt(sum of priors of visited children)` (Leela Chess Zero's rule).
    /// Larger values make the search narrower.
    pub fpu_reduction: f32,
    /// Concentration of the Dirichlet noise mixed into the root priors (per action). PUCT
    /// mode only; Gumbel mode explores through its Gumbel samples instead.
    pub dirichlet_alpha: f32,
    /// Weight of the Dirichlet noise in the root priors, in `[0, 1]`; 0 switches noise off.
    pub dirichlet_fraction: f32,
    /// Temperature by move number for choosing the move from the visit counts. PUCT mode
    /// only: Gumbel mode plays the sequential-halving winner and explores through
    /// `gumbel_scale`.
    pub temperature: TemperatureSchedule,
    /// Use Gumbel root search (Gumbel-top-k, sequential halving, completed-Q policy target,
    /// deterministic interior selection) instead of PUCT with noise. Better at low
    /// simulation counts (Danihelka et al. 2022).
    pub gumbel: bool,
    /// Gumbel mode: number of root actions sampled without replacement (Gumbel-top-k) for
    /// sequential halving.
    pub gumbel_m: u32,
    /// Gumbel mode: scale of the Gumbel noise; 1 for self-play, 0 for deterministic play.
    pub gumbel_scale: f32,
    /// Gumbel mode: `c_visit` of the transform `sigma(q) = (c_visit + max N) * c_scale * q`.
    pub gumbel_c_visit: f32,
    /// Gumbel mode: `c_scale` of the same transform (Q mapped from `[-1, 1]` to `[0, 1]`).
    /// Gumbel's interior rule has no exploration bonus, so a large `c_scale` makes it nearly
    /// greedy in Q: with noisy values (random playouts) 1.0 plays poorly and mctx's 0.1 does
    /// much better; with a trained network the paper's 1.0 is the starting point.
    pub gumbel_c_scale: f32,
    /// Policy softmax temperature: a node's priors become `p^(1/T)`, renormalised, when it is
    /// expanded (Leela Chess Zero's policy temperature), at the root as everywhere. Above 1
    /// the search looks more often at moves the network rates low (an offer of a piece, the
    /// reply that punishes it); 1 keeps the network's priors. In `[0.1, 10]`.
    pub policy_temperature: f32,
    /// Leaves each tree may send to one evaluator call. Above 1, virtual loss steers the
    /// extra descents of a tree to different leaves; useful when few trees share a batch.
    pub leaves_per_tree: u32,
    /// Virtual loss: the value (as a loss of this size) each in-flight descent adds to the
    /// nodes on its path until its leaf is evaluated. Only matters when
    /// `leaves_per_tree > 1`.
    pub virtual_loss: f32,
    /// MCTS-solver: propagate proven wins, losses and draws up the tree, play proven wins,
    /// avoid proven losses.
    pub solver: bool,
    /// What a draw costs both players, in `[0, 1)`: the search values a result as
    /// `win - loss - draw_penalty * draw` from whichever side's view, so neither side steers
    /// for a draw it could avoid (contempt for both, not zero-sum). A self-play setting for
    /// games whose young networks drift into draws. The root value reported stays the plain
    /// `win - loss` (the per-action Q values include the penalty). PUCT's first-play urgency
    /// ignores it.
    pub draw_penalty: f32,
    /// Forced decisions pass through: a new node whose state has a single legal action is
    /// not sent to the evaluator; it is expanded at once with that action (prior 1) and the
    /// descent goes on to its child, so a simulation ends at the first state with a choice.
    /// Forced sequences (a compulsory capture, the only continuation of a jump) then cost no
    /// evaluation and no simulation, and a search sees that much deeper through them: the
    /// tree's analogue of an alpha-beta search's capture extension. Off by default.
    pub forced_pass: bool,
    /// Nodes a tree may hold: a search that finds its tree this large starts no further
    /// simulation (after at least one), so a huge simulation count cannot exhaust memory.
    /// `u32::MAX`: no bound. What a node costs depends on the game's state.
    pub max_nodes: u32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            simulations: 800,
            c_puct: 1.5,
            fpu_reduction: 0.25,
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            temperature: TemperatureSchedule::default(),
            gumbel: false,
            gumbel_m: 16,
            gumbel_scale: 1.0,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            policy_temperature: 1.0,
            leaves_per_tree: 1,
            virtual_loss: 1.0,
            solver: true,
            draw_penalty: 0.0,
            forced_pass: false,
            max_nodes: u32::MAX,
        }
    }
}

impl SearchConfig {
    /// The policy temperatures a search accepts ([`SearchConfig::policy_temperature`]): every
    /// reader of the setting (player specs, run configs) checks against this one range.
    pub const POLICY_TEMPERATURES: std::ops::RangeInclusive<f32> = 0.1..=10.0;

    /// Defaults for match play: no root noise, temperature 0, no Gumbel noise.
    pub fn evaluation() -> SearchConfig {
        SearchConfig {
            dirichlet_fraction: 0.0,
            temperature: TemperatureSchedule::constant(0.0),
            gumbel_scale: 0.0,
            ..SearchConfig::default()
        }
    }

    /// Checks every field; the search refuses a configuration that fails this.
    pub fn validate(&self) -> Result<(), SearchError> {
        fn check(ok: bool, field: &'static str, reason: &str) -> Result<(), SearchError> {
            if ok {
                Ok(())
            } else {
                Err(SearchError::InvalidConfig { field, reason: reason.to_string() })
            }
        }
        let finite_nonneg = |x: f32| x.is_finite() && x >= 0.0;
        check(finite_nonneg(self.c_puct), "c_puct", "must be finite and >= 0")?;
        check(self.fpu_reduction.is_finite(), "fpu_reduction", "must be finite")?;
        check((0.0..=1.0).contains(&self.dirichlet_fraction), "dirichlet_fraction", "must be in [0, 1]")?;
        check(
            self.dirichlet_fraction == 0.0 || (self.dirichlet_alpha.is_finite() && self.dirichlet_alpha > 0.0),
            "dirichlet_alpha",
            "must be finite and > 0 when noise is on",
        )?;
        self.temperature.validate()?;
        check(self.gumbel_m >= 1, "gumbel_m", "must be >= 1")?;
        check(finite_nonneg(self.gumbel_scale), "gumbel_scale", "must be finite and >= 0")?;
        check(finite_nonneg(self.gumbel_c_visit), "gumbel_c_visit", "must be finite and >= 0")?;
        check(finite_nonneg(self.gumbel_c_scale), "gumbel_c_scale", "must be finite and >= 0")?;
        check(
            Self::POLICY_TEMPERATURES.contains(&self.policy_temperature),
            "policy_temperature",
            "must be in [0.1, 10]",
        )?;
        check(self.leaves_per_tree >= 1, "leaves_per_tree", "must be >= 1")?;
        check(finite_nonneg(self.virtual_loss), "virtual_loss", "must be finite and >= 0")?;
        check((0.0..1.0).contains(&self.draw_penalty), "draw_penalty", "must be in [0, 1)")?;
        check(self.max_nodes >= 2, "max_nodes", "must be >= 2 (a root and one child)")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_lookup() {
        let s = TemperatureSchedule::piecewise(vec![(0, 1.0), (10, 0.5), (20, 0.0)]).unwrap();
        assert_eq!(s.at(0), 1.0);
        assert_eq!(s.at(9), 1.0);
        assert_eq!(s.at(10), 0.5);
        assert_eq!(s.at(1000), 0.0);
        assert!(TemperatureSchedule::piecewise(vec![]).is_err());
        assert!(TemperatureSchedule::piecewise(vec![(1, 1.0)]).is_err());
        assert!(TemperatureSchedule::piecewise(vec![(0, 1.0), (0, 0.0)]).is_err());
        assert!(TemperatureSchedule::piecewise(vec![(0, -1.0)]).is_err());
    }

    #[test]
    fn defaults_validate() {
        SearchConfig::default().validate().unwrap();
        SearchConfig::evaluation().validate().unwrap();
        let bad = SearchConfig { leaves_per_tree: 0, ..SearchConfig::default() };
        assert!(bad.validate().is_err());
        let bad = SearchConfig { c_puct: f32::NAN, ..SearchConfig::default() };
        assert!(bad.validate().is_err());
        for t in [0.0, 0.05, 10.5, f32::NAN, f32::INFINITY] {
            let bad = SearchConfig { policy_temperature: t, ..SearchConfig::default() };
            assert!(bad.validate().is_err(), "policy temperature {t} accepted");
        }
    }
}
