//! `SearchConfig::draw_penalty`: a draw costs both sides, so a sure draw loses to a slightly
//! unfavourable but open line once the penalty exceeds the gap; the reported value stays plain.

use camelot_search::{EvalError, Evaluations, Evaluator, GameState, SearchConfig, Searcher, Side, Terminal, Tree, Wdl};

const SAFE: u32 = 0;
const RISK: u32 = 1;

/// First chooses between a sure draw (`SAFE`, the game ends) and an open game (`RISK`: a
/// chain of single forced decisions that never ends within the search, valued by
/// [`OpenGame`]).
#[derive(Clone, Debug)]
struct Gamble {
    depth: u32,
    drawn: bool,
}

impl GameState for Gamble {
    fn action_space(&self) -> u32 {
        2
    }
    fn legal_actions(&self, out: &mut Vec<u32>) {
        if self.depth == 0 {
            out.extend([SAFE, RISK]);
        } else {
            out.push(SAFE);
        }
    }
    fn apply(&mut self, action: u32) {
        self.drawn = self.depth == 0 && action == SAFE;
        self.depth += 1;
    }
    fn to_move(&self) -> Side {
        if self.depth % 2 == 0 {
            Side::First
        } else {
            Side::Second
        }
    }
    fn terminal(&self) -> Option<Terminal> {
        self.drawn.then_some(Terminal::Draw)
    }
    fn hash(&self) -> u64 {
        u64::from(self.depth) * 2 + u64::from(self.drawn)
    }
}

/// Values every open position at 45% win, 55% loss for First, no draw.
struct OpenGame;

impl Evaluator<Gamble> for OpenGame {
    fn evaluate(&mut self, states: &[&Gamble], out: &mut Evaluations) -> Result<(), EvalError> {
        for (state, entry) in states.iter().zip(out.entries_mut()) {
            entry.priors.fill(1.0);
            let first = Wdl::new(0.45, 0.0, 0.55);
            *entry.value = if state.to_move() == Side::First { first } else { first.flip() };
        }
        Ok(())
    }
}

fn choice(draw_penalty: f32, gumbel: bool) -> (u32, f32, Wdl) {
    let config = SearchConfig { simulations: 64, gumbel, draw_penalty, ..SearchConfig::evaluation() };
    let mut searcher = Searcher::new(config).expect("valid config");
    let mut tree = Tree::new(Gamble { depth: 0, drawn: false }, 1);
    let r = searcher.search_one(&mut tree, &mut OpenGame).expect("search");
    let safe = r.actions.iter().position(|&a| a == SAFE).expect("legal");
    (r.action, r.q[safe].expect("the draw is proven or visited"), r.value)
}

#[test]
fn a_sure_draw_gives_way_to_an_open_game_when_draws_cost_more_than_the_gap() {
    for gumbel in [false, true] {
        // The open game is worth -0.1 to First: without a penalty the draw (0) is better.
        let (action, q_safe, _) = choice(0.0, gumbel);
        assert_eq!(action, SAFE, "gumbel {gumbel}");
        assert!(q_safe.abs() < 1e-6, "gumbel {gumbel}: {q_safe}");
        // A draw costing 0.3 makes it worse than the open game's -0.1.
        let (action, q_safe, value) = choice(0.3, gumbel);
        assert_eq!(action, RISK, "gumbel {gumbel}");
        assert!((q_safe + 0.3).abs() < 1e-6, "gumbel {gumbel}: {q_safe}");
        // The reported value is the plain one: a mix of the draw and the open game's 45/55.
        assert!(value.win > 0.0 && value.win < 0.45 && value.loss > value.win, "gumbel {gumbel}: {value:?}");
        assert!((value.win + value.draw + value.loss - 1.0).abs() < 1e-4, "{value:?}");
    }
}

#[test]
fn the_penalty_must_be_below_one() {
    for bad in [-0.1, 1.0, f32::NAN] {
        let config = SearchConfig { draw_penalty: bad, ..SearchConfig::evaluation() };
        assert!(Searcher::new(config).is_err(), "{bad}");
    }
}
