//! From a `go` command's limits to a player spec: the engine does not search itself, it plays
//! whatever player its spec names, so limits become that spec's own keys (`sims=`, `ms=`,
//! `depth=`). A limit the player has no key for is left out, with a note saying so.

use super::command::GoParams;
use camelot_arena::{AlphaBetaConfig, MctsConfig, PlayerSpec, UctConfig};
use camelot_rules::Color;

/// The share of the remaining clock a move gets when the front end does not say how many
/// moves remain until the next time control.
pub const DEFAULT_MOVES_TO_GO: u64 = 30;

/// The limits of one search, after the clock has been turned into a time for this move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Nodes (simulations for Monte Carlo players).
    pub nodes: Option<u64>,
    /// Plies, for players that search to a depth.
    pub depth: Option<u32>,
    /// Milliseconds for this move.
    pub ms: Option<u64>,
}

impl SearchLimits {
    /// The limits of `go` for the side `turn`. `movetime` and the mover's clock each give a
    /// time (less `overhead_ms`, kept back for reading, writing and the front end's latency);
    /// when both are given the smaller one counts. The other side's clock is not used.
    pub fn from_go(go: &GoParams, turn: Color, overhead_ms: u64) -> SearchLimits {
        let from_movetime = go.movetime.map(|ms| ms.saturating_sub(overhead_ms).max(1));
        let from_clock = go.time[turn.index()].map(|remaining| {
            clock_budget(remaining, go.increment[turn.index()].unwrap_or(0), go.moves_to_go, overhead_ms)
        });
        let ms = match (from_movetime, from_clock) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        SearchLimits { nodes: go.nodes, depth: go.depth, ms }
    }

    /// Whether `go` set no limit at all (the spec's own limits apply).
    pub fn is_empty(&self) -> bool {
        *self == SearchLimits::default()
    }
}

/// Time for one move from the clock: an equal share of what remains over the moves to go,
/// plus three quarters of the increment, never more than the clock less the overhead, and at
/// least one millisecond (a player needs some limit; a flagged clock is the front end's call).
pub fn clock_budget(remaining_ms: u64, increment_ms: u64, moves_to_go: Option<u32>, overhead_ms: u64) -> u64 {
    let moves = moves_to_go.map(u64::from).unwrap_or(DEFAULT_MOVES_TO_GO).max(1);
    let share = (remaining_ms / moves).saturating_add(increment_ms / 4 * 3);
    share.min(remaining_ms.saturating_sub(overhead_ms)).max(1)
}

/// `spec` with `limits` written into its keys, and a note for each limit it cannot take.
/// With no limits the spec is returned as it is.
///
/// * `alphabeta`: `movetime`/clock -> `ms` (the depth limit lifted unless `depth` is given too);
///   `depth` -> `depth` (the time limit lifted unless a time is given too); no node limit.
/// * `uct` and `mcts`: `nodes` -> `sims`, time -> `ms`; given alone, each lifts the other;
///   no depth limit.
/// * `random`, `greedy`: no limits.
pub fn limited_spec(spec: &PlayerSpec, limits: &SearchLimits) -> (PlayerSpec, Vec<String>) {
    let mut notes = Vec::new();
    if limits.is_empty() {
        return (spec.clone(), notes);
    }
    let mut ignored = |what: &str, player: &str| notes.push(format!("{player} has no {what} limit: `{what}` ignored"));
    let simulations = |nodes: Option<u64>, ms: Option<u64>, own: u32| match (nodes, ms) {
        (Some(n), _) => n.min(u64::from(u32::MAX - 1)) as u32,
        (None, Some(_)) => u32::MAX,
        (None, None) => own,
    };
    let limited = match spec {
        PlayerSpec::AlphaBeta(c) => {
            if limits.nodes.is_some() {
                ignored("nodes", "alphabeta");
            }
            let (depth, ms) = match (limits.depth, limits.ms) {
                (None, None) => (c.depth, c.ms),
                (depth, ms) => (depth.map(|d| d.clamp(1, 64)), ms),
            };
            PlayerSpec::AlphaBeta(AlphaBetaConfig { depth, ms, ..*c })
        }
        PlayerSpec::Uct(c) => {
            if limits.depth.is_some() {
                ignored("depth", "uct");
            }
            let timed = limits.nodes.is_some() || limits.ms.is_some();
            PlayerSpec::Uct(UctConfig {
                sims: simulations(limits.nodes, limits.ms, c.sims),
                ms: if timed { limits.ms } else { c.ms },
                ..*c
            })
        }
        PlayerSpec::Mcts(c) => {
            if limits.depth.is_some() {
                ignored("depth", "mcts");
            }
            let timed = limits.nodes.is_some() || limits.ms.is_some();
            PlayerSpec::Mcts(MctsConfig {
                sims: simulations(limits.nodes, limits.ms, c.sims),
                ms: if timed { limits.ms } else { c.ms },
                ..c.clone()
            })
        }
        other => {
            notes.push(format!("{other} has no search limits: the limits of `go` are ignored"));
            other.clone()
        }
    };
    (limited, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec(text: &str) -> PlayerSpec {
        PlayerSpec::parse(text).expect("a valid spec")
    }

    fn limited(text: &str, limits: SearchLimits) -> (String, Vec<String>) {
        let (spec, notes) = limited_spec(&spec(text), &limits);
        (spec.to_string(), notes)
    }

    const NODES: SearchLimits = SearchLimits { nodes: Some(300), depth: None, ms: None };
    const TIME: SearchLimits = SearchLimits { nodes: None, depth: None, ms: Some(250) };
    const DEPTH: SearchLimits = SearchLimits { nodes: None, depth: Some(5), ms: None };

    #[test]
    fn no_limits_keep_the_spec() {
        for text in ["alphabeta:depth=2", "uct:sims=50", "mcts:model=m,sims=10,gumbel", "random"] {
            assert_eq!(limited(text, SearchLimits::default()), (text.to_string(), vec![]));
        }
    }

    #[test]
    fn alphabeta_takes_time_and_depth_but_not_nodes() {
        assert_eq!(limited("alphabeta:depth=3", TIME).0, "alphabeta:ms=250");
        assert_eq!(limited("alphabeta:ms=1000", DEPTH).0, "alphabeta:depth=5");
        assert_eq!(
            limited("alphabeta:depth=3,tt=20", SearchLimits { depth: Some(2), ..TIME }).0,
            "alphabeta:depth=2,ms=250,tt=20"
        );
        let (text, notes) = limited("alphabeta:depth=3", NODES);
        assert_eq!(text, "alphabeta:depth=3");
        assert_eq!(notes, vec!["alphabeta has no nodes limit: `nodes` ignored".to_string()]);
    }

    #[test]
    fn monte_carlo_players_take_nodes_as_simulations_and_time_as_ms() {
        assert_eq!(limited("uct:sims=1000", NODES).0, "uct:sims=300");
        assert_eq!(limited("uct:ms=100", NODES).0, "uct:sims=300");
        assert_eq!(limited("uct:sims=1000", TIME).0, "uct:ms=250");
        assert_eq!(limited("uct", SearchLimits { nodes: Some(300), ..TIME }).0, "uct:sims=300,ms=250");
        assert_eq!(limited("mcts:model=m,sims=200,gumbel", NODES).0, "mcts:model=m,sims=300,gumbel");
        assert_eq!(limited("mcts:model=m,temperature=1", TIME).0, "mcts:model=m,temperature=1,ms=250");
        assert_eq!(
            limited("mcts:model=m", SearchLimits { nodes: Some(u64::MAX), ..NODES }).0,
            "mcts:model=m,sims=4294967294"
        );
        let (text, notes) = limited("mcts:model=m,sims=64", DEPTH);
        assert_eq!(text, "mcts:model=m,sims=64");
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn players_without_limits_say_so() {
        let (text, notes) = limited("greedy", TIME);
        assert_eq!(text, "greedy");
        assert_eq!(notes, vec!["greedy has no search limits: the limits of `go` are ignored".to_string()]);
    }

    #[test]
    fn movetime_and_clock_become_one_time() {
        let go = |movetime, wtime, btime| GoParams { movetime, time: [wtime, btime], ..GoParams::default() };
        let ms = |go: GoParams, turn| SearchLimits::from_go(&go, turn, 20).ms;
        assert_eq!(ms(go(Some(500), None, None), Color::White), Some(480));
        assert_eq!(ms(go(Some(5), None, None), Color::White), Some(1));
        assert_eq!(ms(go(None, Some(30_000), Some(60_000)), Color::White), Some(1000));
        assert_eq!(ms(go(None, Some(30_000), Some(60_000)), Color::Black), Some(2000));
        assert_eq!(ms(go(None, Some(30_000), None), Color::Black), None);
        assert_eq!(ms(go(Some(300), Some(30_000), None), Color::White), Some(280));
        let nodes = GoParams { nodes: Some(7), depth: Some(2), ..GoParams::default() };
        assert_eq!(
            SearchLimits::from_go(&nodes, Color::White, 20),
            SearchLimits { nodes: Some(7), depth: Some(2), ms: None }
        );
    }

    #[test]
    fn clock_budget_shares_the_clock_and_keeps_the_overhead() {
        assert_eq!(clock_budget(60_000, 0, None, 50), 2000);
        assert_eq!(clock_budget(60_000, 1000, None, 50), 2750);
        assert_eq!(clock_budget(10_000, 0, Some(5), 50), 2000);
        assert_eq!(clock_budget(1000, 0, Some(1), 50), 950);
        assert_eq!(clock_budget(30, 5000, None, 50), 1);
        assert_eq!(clock_budget(0, 0, Some(0), 0), 1);
    }

    proptest! {
        #[test]
        fn the_budget_never_oversteps_the_clock(
            remaining in 0u64..10_000_000,
            increment in 0u64..100_000,
            moves_to_go in proptest::option::of(0u32..200),
            overhead in 0u64..1000,
        ) {
            let budget = clock_budget(remaining, increment, moves_to_go, overhead);
            prop_assert!(budget >= 1);
            prop_assert!(budget <= remaining.saturating_sub(overhead).max(1));
        }
    }
}
