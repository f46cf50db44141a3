//! `SearchConfig::policy_temperature`: the root's priors (and every node's) are the
//! evaluator's raised to `1/T` and renormalised, so a search at `T > 1` spreads its visits
//! further down the policy, and `T = 1` leaves everything as it was.

use camelot_search::{EvalError, Evaluations, Evaluator, GameState, SearchConfig, Searcher, Side, Terminal, Tree, Wdl};

const PRIORS: [f32; 3] = [0.6, 0.3, 0.1];

/// Three actions a turn for four plies, then a draw: every line is worth the same, so only the
/// priors steer the visits.
#[derive(Clone, Debug)]
struct Level {
    plies: u32,
    path: u64,
}

impl GameState for Level {
    fn action_space(&self) -> u32 {
        3
    }
    fn legal_actions(&self, out: &mut Vec<u32>) {
        out.extend(0..3);
    }
    fn apply(&mut self, action: u32) {
        self.plies += 1;
        self.path = self.path * 3 + u64::from(action);
    }
    fn to_move(&self) -> Side {
        if self.plies % 2 == 0 {
            Side::First
        } else {
            Side::Second
        }
    }
    fn terminal(&self) -> Option<Terminal> {
        (self.plies == 4).then_some(Terminal::Draw)
    }
    fn hash(&self) -> u64 {
        self.path * 8 + u64::from(self.plies)
    }
}

/// The same priors everywhere (unnormalised, as a network's softmax need not sum exactly),
/// and a draw as the value.
struct FixedPolicy;

impl Evaluator<Level> for FixedPolicy {
    fn evaluate(&mut self, states: &[&Level], out: &mut Evaluations) -> Result<(), EvalError> {
        for entry in out.entries_mut().take(states.len()) {
            for (p, &q) in entry.priors.iter_mut().zip(&PRIORS) {
                *p = 2.0 * q;
            }
            *entry.value = Wdl::DRAW;
        }
        Ok(())
    }
}

fn search(policy_temperature: f32, gumbel: bool) -> (Vec<f32>, Vec<u32>) {
    let config = SearchConfig { simulations: 60, gumbel, policy_temperature, ..SearchConfig::evaluation() };
    let mut searcher = Searcher::new(config).expect("valid config");
    let mut tree = Tree::new(Level { plies: 0, path: 0 }, 7);
    let r = searcher.search_one(&mut tree, &mut FixedPolicy).expect("search");
    (r.priors, r.visits)
}

#[test]
fn the_root_priors_are_the_evaluators_tempered() {
    for gumbel in [false, true] {
        let (plain, _) = search(1.0, gumbel);
        for (got, want) in plain.iter().zip(PRIORS) {
            assert!((got - want).abs() < 1e-6, "T = 1 keeps the priors: {plain:?}");
        }
        let (flat, _) = search(2.0, gumbel);
        let roots = PRIORS.map(f32::sqrt);
        let sum: f32 = roots.iter().sum();
        for (got, want) in flat.iter().zip(roots.map(|r| r / sum)) {
            assert!((got - want).abs() < 1e-6, "T = 2: p^(1/2) normalised, got {flat:?}");
        }
    }
}

#[test]
fn a_higher_temperature_sends_more_visits_to_the_least_likely_action() {
    // PUCT: with every value equal, visits follow the priors the search holds.
    let (_, cold) = search(1.0, false);
    let (_, warm) = search(3.0, false);
    assert_eq!(cold.iter().sum::<u32>(), warm.iter().sum::<u32>());
    assert!(warm[2] > cold[2] && warm[0] < cold[0], "T = 1: {cold:?}, T = 3: {warm:?}");
}
