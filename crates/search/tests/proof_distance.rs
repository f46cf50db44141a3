//! The solver's distances: among proven losses the search plays the one that resists longest,
//! and distances count plies (a move of several decisions is one ply), not decisions. (The
//! shortest of several proven wins: `select::tests`.)

use camelot_search::{EvalError, Evaluations, Evaluator, GameState, SearchConfig, Searcher, Side, Terminal, Tree, Wdl};

/// One node of a game given as a table: who decides, and where each action leads (or who
/// has won).
#[derive(Debug)]
enum Spot {
    Decide(Side, &'static [usize]),
    Won(Side),
}

use Side::{First, Second};
use Spot::{Decide, Won};

/// First to move at 0 loses whatever it does:
/// * action 0 (node 1): Second replies once, then First makes one move of four decisions
///   (nodes 3-6), then Second wins: lost in 4 plies over 7 decisions;
/// * action 1 (node 10): six single-decision plies, Second's last one winning: lost in 6
///   plies over 6 decisions.
///
/// Counting decisions would prefer action 0; counting plies, action 1.
const LOSING: &[Spot] = &[
    Decide(First, &[1, 10]),  // 0
    Decide(Second, &[3]),     // 1
    Won(Second),              // 2 (unused)
    Decide(First, &[4, 2]),   // 3: the long move's first decision (or a blunder into 2)
    Decide(First, &[5]),      // 4
    Decide(First, &[6]),      // 5
    Decide(First, &[7]),      // 6: the move's last decision
    Decide(Second, &[8]),     // 7
    Won(Second),              // 8
    Won(Second),              // 9 (unused)
    Decide(Second, &[11]),    // 10
    Decide(First, &[12, 16]), // 11
    Decide(Second, &[13]),    // 12
    Decide(First, &[14]),     // 13
    Decide(Second, &[15]),    // 14
    Won(Second),              // 15: after 6 plies
    Decide(Second, &[17]),    // 16
    Won(Second),              // 17: after 4 plies
];

#[derive(Clone, Debug)]
struct TableGame {
    table: &'static [Spot],
    at: usize,
}

impl GameState for TableGame {
    fn action_space(&self) -> u32 {
        2
    }
    fn legal_actions(&self, out: &mut Vec<u32>) {
        if let Decide(_, next) = &self.table[self.at] {
            out.extend(0..next.len() as u32);
        }
    }
    fn apply(&mut self, action: u32) {
        if let Decide(_, next) = &self.table[self.at] {
            self.at = next[action as usize];
        }
    }
    fn to_move(&self) -> Side {
        match self.table[self.at] {
            Decide(side, _) | Won(side) => side,
        }
    }
    fn terminal(&self) -> Option<Terminal> {
        match self.table[self.at] {
            Won(side) => Some(Terminal::Win(side)),
            Decide(..) => None,
        }
    }
    fn hash(&self) -> u64 {
        self.at as u64
    }
}

/// A draw everywhere, with the given share of the prior on action 0 (where there are two).
struct Favours(f32);

impl Evaluator<TableGame> for Favours {
    fn evaluate(&mut self, states: &[&TableGame], out: &mut Evaluations) -> Result<(), EvalError> {
        for entry in out.entries_mut().take(states.len()) {
            *entry.value = Wdl::DRAW;
            let first = self.0;
            for (i, p) in entry.priors.iter_mut().enumerate() {
                *p = if i == 0 { first } else { 1.0 - first };
            }
        }
        Ok(())
    }
}

fn search(table: &'static [Spot], gumbel: bool, prior_on_zero: f32) -> camelot_search::SearchResult {
    let config = SearchConfig { simulations: 200, gumbel, solver: true, ..SearchConfig::evaluation() };
    let mut searcher = Searcher::new(config).expect("valid config");
    let mut tree = Tree::new(TableGame { table, at: 0 }, 1);
    searcher.search_one(&mut tree, &mut Favours(prior_on_zero)).expect("search")
}

#[test]
fn a_lost_root_resists_longest_counting_plies_not_decisions() {
    for gumbel in [false, true] {
        // Left to visits and priors, the search would play the favoured action 0.
        let r = search(LOSING, gumbel, 0.95);
        assert_eq!(r.proven, Some(Terminal::Win(Second)), "gumbel {gumbel}: {r:?}");
        assert_eq!(r.action, 1, "gumbel {gumbel}: {r:?}");
        assert_eq!(r.proven_plies, Some(6), "gumbel {gumbel}");
        assert_eq!(r.principal_variation, vec![1, 0, 0, 0, 0, 0], "gumbel {gumbel}");
    }
}
