//! Throughput of the search itself (no evaluator cost): simulations per second on one
//! thread with the uniform evaluator on tic-tac-toe. Prints figures, asserts no timings.
//!
//! `cargo test --release -p camelot-search --test bench -- --ignored --nocapture`

mod common;

use std::time::Instant;

use camelot_search::{GameState, SearchConfig, SearchResult, Searcher, Tree, UniformEvaluator};
use common::tictactoe::TicTacToe;

/// Self-play with tree reuse: `trees` games at once, `config.simulations` per decision,
/// games restarted as they end, until `total_searches` searches per tree are done.
fn self_play_rate(name: &str, config: SearchConfig, trees: usize, searches: usize) {
    let mut searcher = Searcher::new(config).expect("valid config");
    let mut batch: Vec<Tree<TicTacToe>> = (0..trees).map(|i| Tree::new(TicTacToe::new(), i as u64)).collect();
    let mut results: Vec<SearchResult> = Vec::new();
    let mut sims = 0u64;
    let mut nodes = 0usize;
    let start = Instant::now();
    for _ in 0..searches {
        searcher.search_into(&mut batch, &mut UniformEvaluator, &mut results).expect("search");
        for (t, r) in batch.iter_mut().zip(&results) {
            sims += r.simulations as u64;
            nodes = nodes.max(t.node_count());
            t.advance(r.action).expect("legal");
            if t.root_state().terminal().is_some() {
                t.reset(TicTacToe::new());
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{name:<48} {:>9.0} sims/s  ({sims} sims in {secs:.2} s, largest tree {nodes} nodes)", sims as f64 / secs);
}

/// Fresh trees every search: `simulations` from the empty board.
fn fresh_tree_rate(name: &str, config: SearchConfig, repeats: usize) {
    let mut searcher = Searcher::new(config).expect("valid config");
    let mut tree = Tree::new(TicTacToe::new(), 0);
    let mut sims = 0u64;
    let start = Instant::now();
    for _ in 0..repeats {
        tree.reset(TicTacToe::new());
        let r = searcher.search_one(&mut tree, &mut UniformEvaluator).expect("search");
        sims += r.simulations as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{name:<48} {:>9.0} sims/s  ({sims} sims in {secs:.2} s)", sims as f64 / secs);
}

#[test]
#[ignore = "benchmark; run with --ignored --nocapture"]
fn search_throughput() {
    let puct = SearchConfig { simulations: 800, solver: false, ..SearchConfig::default() };
    self_play_rate("PUCT 800/move, 1 tree, no solver", puct.clone(), 1, 2000);
    self_play_rate("PUCT 800/move, 64 trees, no solver", puct.clone(), 64, 40);
    self_play_rate("PUCT 800/move, 64 trees, solver", SearchConfig { solver: true, ..puct.clone() }, 64, 40);
    self_play_rate(
        "PUCT 800/move, 8 trees x 8 leaves, no solver",
        SearchConfig { leaves_per_tree: 8, ..puct.clone() },
        8,
        300,
    );
    self_play_rate(
        "Gumbel 64/move, 64 trees",
        SearchConfig { simulations: 64, gumbel: true, ..SearchConfig::default() },
        64,
        400,
    );
    fresh_tree_rate(
        "PUCT 20000 from the empty board, no solver",
        SearchConfig { simulations: 20_000, solver: false, ..SearchConfig::default() },
        100,
    );
}
