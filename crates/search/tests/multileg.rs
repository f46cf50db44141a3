//! Games where one player makes several decisions in a row: values must be backed up with
//! the sign of whoever decides at each node, not by alternating plies.

mod common;

use camelot_search::{GameState, RolloutEvaluator, SearchConfig, Searcher, Side, Terminal, Tree, UniformEvaluator};
use common::chain_nim::{ChainNim, STOP, TAKE};

fn config(simulations: u32, solver: bool, gumbel: bool) -> SearchConfig {
    SearchConfig { simulations, solver, gumbel, ..SearchConfig::evaluation() }
}

/// Pile 4 after one stone this turn: stopping leaves the opponent a multiple of 4 (a win);
/// taking more leaves 3 or 2 (a loss). `STOP` passes the turn but `TAKE` does not, so an
/// alternating-sign backup would invert exactly this comparison.
#[test]
fn mid_move_values_have_the_movers_sign() {
    for gumbel in [false, true] {
        let state = ChainNim { pile: 4, taken: 1, next: Side::First };
        let mut searcher = Searcher::new(config(2000, false, gumbel)).expect("valid config");
        let mut tree = Tree::new(state, 1);
        let r = searcher.search_one(&mut tree, &mut RolloutEvaluator::new(1).with_rollouts(4)).expect("search");
        assert_eq!(r.to_move, Side::First);
        assert_eq!(r.action, STOP, "gumbel {gumbel}: {r:?}");
        let q = |a: u32| r.q[r.actions.iter().position(|&x| x == a).expect("legal")];
        let (q_stop, q_take) = (q(STOP).expect("visited"), q(TAKE).expect("visited"));
        assert!(q_stop > 0.5, "gumbel {gumbel}: q(stop) = {q_stop}");
        assert!(q_take < q_stop, "gumbel {gumbel}: q(take) = {q_take}");
        assert!(r.value.win > r.value.loss, "{:?}", r.value);
    }
}

/// From the start of a turn the winning line is a whole chain: take `pile % 4` stones, then
/// stop (if fewer than three). The principal variation must spell it out, the root value must
/// favour the mover, and after advancing along the chain (same player to move) the reused
/// root keeps the mover's view.
#[test]
fn search_finds_the_whole_winning_chain() {
    for pile in [5u32, 6, 7, 9, 10, 11] {
        let want = pile % 4;
        let mut expected: Vec<u32> = vec![TAKE; want as usize];
        if want < 3 {
            expected.push(STOP);
        }
        let mut searcher = Searcher::new(config(3000, false, false)).expect("valid config");
        let mut evaluator = RolloutEvaluator::new(2).with_rollouts(4);
        let mut tree = Tree::new(ChainNim::new(pile), 3);
        let r = searcher.search_one(&mut tree, &mut evaluator).expect("search");
        assert!(r.principal_variation.starts_with(&expected), "pile {pile}: pv {:?}", r.principal_variation);
        assert!(r.value.win > r.value.loss, "pile {pile}: {:?}", r.value);
        // Play the chain with tree reuse; the mover stays the same until the turn passes.
        for &a in &expected {
            assert_eq!(tree.root_state().to_move(), Side::First);
            let r = searcher.search_one(&mut tree, &mut evaluator).expect("search");
            assert_eq!(r.to_move, Side::First);
            assert_eq!(r.action, a, "pile {pile}");
            assert!(r.value.win > r.value.loss, "pile {pile}: {:?}", r.value);
            tree.advance(a).expect("legal");
        }
        assert_eq!(tree.root_state().to_move(), Side::Second);
        assert_eq!(tree.root_state().pile % 4, 0);
        let r = searcher.search_one(&mut tree, &mut evaluator).expect("search");
        assert_eq!(r.to_move, Side::Second);
        assert!(r.value.loss > r.value.win, "pile {pile}: {:?}", r.value);
    }
}

/// The solver proves every start-of-turn position: won for the mover unless the pile is a
/// multiple of 4. Mid-turn positions too.
#[test]
fn solver_proves_chain_nim() {
    let mut searcher = Searcher::new(config(20_000, true, false)).expect("valid config");
    for pile in 1..=12u32 {
        for taken in 0..3u32 {
            if taken > 0 && pile == 0 {
                continue;
            }
            let state = ChainNim { pile, taken, next: Side::Second };
            let mut tree = Tree::new(state, pile as u64);
            let r = searcher.search_one(&mut tree, &mut UniformEvaluator).expect("search");
            let winner = if state.mover_wins() { Side::Second } else { Side::First };
            assert_eq!(r.proven, Some(Terminal::Win(winner)), "{state:?}");
            if let Some(a) = state.winning_action() {
                assert_eq!(r.action, a, "{state:?}");
            }
        }
    }
}

/// The search, with either root rule, beats a perfect opponent from every winning start and
/// never loses a won position, playing both seats in turn.
#[test]
fn search_converts_wins_against_perfect_play() {
    for gumbel in [false, true] {
        let mut searcher = Searcher::new(config(2000, true, gumbel)).expect("valid config");
        let mut evaluator = RolloutEvaluator::new(5).with_rollouts(4);
        for pile in (5..=15u32).filter(|p| p % 4 != 0) {
            for search_side in Side::BOTH {
                // The winning side moves first.
                let mut state = ChainNim { pile, taken: 0, next: search_side };
                let mut tree = Tree::new(state, pile as u64);
                while state.terminal().is_none() {
                    let a = if state.to_move() == search_side {
                        searcher.search_one(&mut tree, &mut evaluator).expect("search").action
                    } else {
                        // Perfect player: any move loses, so take one and stop.
                        state.winning_action().unwrap_or(if state.taken == 0 { TAKE } else { STOP })
                    };
                    state.apply(a);
                    tree.advance(a).expect("legal");
                }
                assert_eq!(state.terminal(), Some(Terminal::Win(search_side)), "gumbel {gumbel} pile {pile}");
            }
        }
    }
}

/// Asks `inner`, counting the states it was given that had a single legal action.
struct CountingForced<E> {
    inner: E,
    forced: usize,
    states: usize,
}

impl<E: camelot_search::Evaluator<ChainNim>> camelot_search::Evaluator<ChainNim> for CountingForced<E> {
    fn evaluate(
        &mut self,
        states: &[&ChainNim],
        out: &mut camelot_search::Evaluations,
    ) -> Result<(), camelot_search::EvalError> {
        let mut legal = Vec::new();
        for s in states {
            legal.clear();
            s.legal_actions(&mut legal);
            self.forced += usize::from(legal.len() == 1);
        }
        self.states += states.len();
        self.inner.evaluate(states, out)
    }
}

/// With `forced_pass`, a state with one legal action (here every turn's first stone) is never
/// sent to the evaluator and costs no simulation: the search proves the same values from
/// every mid-turn position, with fewer evaluations, whichever root rule.
#[test]
fn forced_decisions_pass_through_without_evaluation() {
    for gumbel in [false, true] {
        for pile in 2..=12u32 {
            let state = ChainNim { pile, taken: 1, next: Side::First };
            let mut seen = Vec::new();
            for forced_pass in [false, true] {
                let cfg = SearchConfig { forced_pass, ..config(20_000, true, gumbel) };
                let mut searcher = Searcher::new(cfg).expect("valid config");
                let mut evaluator = CountingForced { inner: UniformEvaluator, forced: 0, states: 0 };
                let mut tree = Tree::new(state, u64::from(pile));
                let r = searcher.search_one(&mut tree, &mut evaluator).expect("search");
                let winner = if state.mover_wins() { Side::First } else { Side::Second };
                assert_eq!(r.proven, Some(Terminal::Win(winner)), "gumbel {gumbel} forced {forced_pass}: {state:?}");
                if let Some(a) = state.winning_action() {
                    assert_eq!(r.action, a, "gumbel {gumbel} forced {forced_pass}: {state:?}");
                }
                seen.push((evaluator.forced, evaluator.states));
            }
            let (off, on) = (seen[0], seen[1]);
            assert_eq!(on.0, 0, "gumbel {gumbel} pile {pile}: forced states evaluated: {seen:?}");
            if pile >= 4 {
                assert!(off.0 > 0 && on.1 < off.1, "gumbel {gumbel} pile {pile}: {seen:?}");
            }
        }
    }
}
