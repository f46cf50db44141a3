//! Generic batched Monte Carlo tree search for camelot-zero.
//!
//! The search knows nothing of Camelot or of neural networks. It sees a [`GameState`] one
//! *decision* at a time (a Camelot move is a chain of legs, one leg per decision, so the same
//! player may decide several times in a row) and asks an [`Evaluator`] for priors and
//! win/draw/loss values, always for a whole batch of leaves.
//!
//! * [`Tree`]: one game's tree, kept between moves ([`Tree::advance`] reuses the subtree of
//!   the move played); arena-allocated with `u32` links: an expanded node's legal actions are
//!   contiguous 12-byte edges, and a child becomes a node only when a descent first chooses it
//!   (most never are); owns a seeded ChaCha8 stream, so results never depend on global state
//!   or on batch partners.
//! * [`Searcher`]: drives a batch of trees at once (the normal path, as in mctx): every round
//!   each tree descends to up to [`SearchConfig::leaves_per_tree`] new leaves, with virtual
//!   loss, and all leaves of all trees go to the evaluator in one call.
//! * Selection: PUCT with first-play urgency and Dirichlet root noise, or Gumbel root search
//!   (Gumbel-top-k, sequential halving, completed-Q targets, deterministic interior rule);
//!   an MCTS-solver proves wins, losses and draws.
//! * [`SearchResult`]: visits, policy target, value, proven outcome, chosen move (temperature
//!   schedule), principal variation.
//!
//! ```
//! use camelot_search::{GameState, Terminal, Side, SearchConfig, Searcher, Tree, UniformEvaluator};
//!
//! /// Players alternately add 1 or 2 to a counter; whoever reaches 4 wins.
//! #[derive(Clone)]
//! struct Race { total: u32, next: Side }
//!
//! impl GameState for Race {
//!     fn action_space(&self) -> u32 { 2 }
//!     fn legal_actions(&self, out: &mut Vec<u32>) { out.extend([0, 1]) }
//!     fn apply(&mut self, action: u32) {
//!         self.total += action + 1;
//!         if self.total < 4 { self.next = self.next.opponent(); }
//!     }
//!     fn to_move(&self) -> Side { self.next }
//!     fn terminal(&self) -> Option<Terminal> { (self.total >= 4).then_some(Terminal::Win(self.next)) }
//!     fn hash(&self) -> u64 { (self.total as u64) << 1 | self.next.index() as u64 }
//! }
//!
//! let mut searcher = Searcher::new(SearchConfig::evaluation()).unwrap();
//! let mut trees = vec![Tree::new(Race { total: 0, next: Side::First }, 7)];
//! let results = searcher.search(&mut trees, &mut UniformEvaluator).unwrap();
//! // From 0 the first player wins by going to 1: whatever the opponent adds, 4 is in reach.
//! assert_eq!(results[0].proven, Some(Terminal::Win(Side::First)));
//! assert_eq!(results[0].action, 0);
//! ```

#![warn(missing_docs)]

mod backup;
mod config;
mod error;
mod eval;
mod game;
mod gumbel;
mod noise;
mod search;
mod seed;
mod select;
mod tree;

pub use config::{SearchConfig, TemperatureSchedule};
pub use error::SearchError;
pub use eval::{EvalEntry, EvalError, Evaluations, Evaluator, RolloutEvaluator, UniformEvaluator, Wdl};
pub use game::{GameState, Side, Terminal};
pub use search::{SearchResult, Searcher};
pub use seed::derive_seed;
pub use tree::Tree;
