//! The steady state of the search allocates nothing: once the arenas, the batch buffers and
//! the result vectors have grown, a repeated search (with tree reuse) makes no heap
//! allocation. Measured with a counting global allocator; this file holds a single test so
//! that no other test thread allocates meanwhile.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use camelot_search::{RolloutEvaluator, SearchConfig, SearchResult, Searcher, Tree, UniformEvaluator};
use common::tictactoe::TicTacToe;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One round: new game on every tree, search, play the chosen move (reusing the subtree),
/// search again, play, search again. An even number of moves per round keeps each tree's
/// two arenas in the same roles from round to round.
fn round<E: camelot_search::Evaluator<TicTacToe>>(
    searcher: &mut Searcher,
    trees: &mut [Tree<TicTacToe>],
    evaluator: &mut E,
    results: &mut Vec<SearchResult>,
) {
    for (i, t) in trees.iter_mut().enumerate() {
        t.reset(TicTacToe::new());
        t.reseed(i as u64);
    }
    for _ in 0..2 {
        searcher.search_into(trees, evaluator, results).expect("search");
        for (t, r) in trees.iter_mut().zip(results.iter()) {
            t.advance(r.action).expect("legal");
        }
    }
    searcher.search_into(trees, evaluator, results).expect("search");
}

#[test]
fn steady_state_search_does_not_allocate() {
    for config in [
        SearchConfig { simulations: 400, leaves_per_tree: 4, ..SearchConfig::default() },
        SearchConfig { simulations: 200, gumbel: true, ..SearchConfig::default() },
    ] {
        let mut searcher = Searcher::new(config).expect("valid config");
        let mut trees: Vec<Tree<TicTacToe>> = (0..8).map(|i| Tree::new(TicTacToe::new(), i)).collect();
        let mut results = Vec::new();
        let mut uniform = UniformEvaluator;
        let mut rollouts = RolloutEvaluator::new(1);
        // Warm up: grow every buffer (the counter does see those allocations).
        let start = ALLOCATIONS.load(Ordering::Relaxed);
        round(&mut searcher, &mut trees, &mut uniform, &mut results);
        assert!(ALLOCATIONS.load(Ordering::Relaxed) > start);
        for _ in 0..2 {
            round(&mut searcher, &mut trees, &mut uniform, &mut results);
            round(&mut searcher, &mut trees, &mut rollouts, &mut results);
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        round(&mut searcher, &mut trees, &mut uniform, &mut results);
        round(&mut searcher, &mut trees, &mut rollouts, &mut results);
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(after - before, 0, "allocations in the steady state");
        assert!(results.iter().all(|r| r.simulations > 0));
    }
}
