//! The `info` line written after a search: what the player reported, in the fields front ends
//! of UCI-shaped protocols read (`depth`, `nodes`, `time`, `score`, `pv`).

use camelot_arena::{Choice, Evaluation};

/// Expected scores are kept this far from 0 and 1 before they become a score in centipawns,
/// which would be infinite at the ends.
const SCORE_CLAMP: f64 = 0.001;

/// The `score` field of an evaluation from the mover's view:
///
/// * a heuristic score in hundredths of a man is `cp` as it is (a man plays the part of a pawn);
/// * a proven win in `p` plies is `mate` in `(p + 1) / 2` of the mover's own moves, a proven loss
///   `mate` with the opponent's moves negated, as UCI counts them;
/// * a proven draw is `cp 0`;
/// * an expected score `s` (Monte Carlo players) is the rating difference that predicts it,
///   `cp round(400 log10(s / (1 - s)))`, `s` kept within [0.001, 0.999] (so within +-1200).
pub fn score_field(evaluation: &Evaluation) -> String {
    match *evaluation {
        Evaluation::Heuristic(cp) => format!("cp {cp}"),
        Evaluation::WinIn(plies) => format!("mate {}", plies.div_ceil(2).max(1)),
        Evaluation::LossIn(plies) => format!("mate -{}", plies.div_ceil(2).max(1)),
        Evaluation::Draw => "cp 0".to_string(),
        Evaluation::ExpectedScore(s) => {
            let s = if s.is_nan() { 0.5 } else { s.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP) };
            format!("cp {}", (400.0 * (s / (1.0 - s)).log10()).round() as i64)
        }
    }
}

/// Search figures found in a player's statistics text (`depth 5, 31204 nodes, 80 ms` from
/// `alphabeta`, `400 simulations over 2 decisions, ...` from `mcts`). Players write that text
/// for people; this reads the two figures every front end shows and leaves out what is absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchFigures {
    /// `depth N`.
    pub depth: Option<u64>,
    /// `N nodes` or `N simulations`.
    pub nodes: Option<u64>,
}

impl SearchFigures {
    /// Reads the figures from a player's statistics text.
    pub fn read(statistics: &str) -> SearchFigures {
        let words: Vec<&str> =
            statistics.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
        let mut figures = SearchFigures::default();
        for pair in words.windows(2) {
            match (pair[0], pair[1]) {
                ("depth", n) => figures.depth = figures.depth.or(n.parse().ok()),
                (n, "nodes" | "simulations") => figures.nodes = figures.nodes.or(n.parse().ok()),
                _ => {}
            }
        }
        figures
    }
}

/// The `info` line for `choice`: `info [depth D] [nodes N] time T [score ...] pv MOVES`.
/// `principal_line` is the player's line in notation (the move alone when it has none).
pub fn info_line(choice: &Choice, elapsed_ms: u128, principal_line: &str) -> String {
    let figures = SearchFigures::read(&choice.info);
    let mut line = String::from("info");
    if let Some(depth) = figures.depth {
        line.push_str(&format!(" depth {depth}"));
    }
    if let Some(nodes) = figures.nodes {
        line.push_str(&format!(" nodes {nodes}"));
    }
    line.push_str(&format!(" time {elapsed_ms}"));
    if let Some(evaluation) = &choice.evaluation {
        line.push_str(&format!(" score {}", score_field(evaluation)));
    }
    line.push_str(&format!(" pv {principal_line}"));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use camelot_rules::{Position, Ruleset};

    #[test]
    fn scores_in_centipawns_and_mates() {
        assert_eq!(score_field(&Evaluation::Heuristic(135)), "cp 135");
        assert_eq!(score_field(&Evaluation::Heuristic(-40)), "cp -40");
        assert_eq!(score_field(&Evaluation::WinIn(1)), "mate 1");
        assert_eq!(score_field(&Evaluation::WinIn(3)), "mate 2");
        assert_eq!(score_field(&Evaluation::LossIn(2)), "mate -1");
        assert_eq!(score_field(&Evaluation::LossIn(4)), "mate -2");
        assert_eq!(score_field(&Evaluation::Draw), "cp 0");
        assert_eq!(score_field(&Evaluation::ExpectedScore(0.5)), "cp 0");
        // 400 log10(0.76 / 0.24) = 200.2: the rating difference of a 76% score.
        assert_eq!(score_field(&Evaluation::ExpectedScore(0.76)), "cp 200");
        assert_eq!(score_field(&Evaluation::ExpectedScore(0.24)), "cp -200");
        assert_eq!(score_field(&Evaluation::ExpectedScore(1.0)), "cp 1200");
        assert_eq!(score_field(&Evaluation::ExpectedScore(f64::NAN)), "cp 0");
    }

    #[test]
    fn figures_from_each_player_statistics() {
        assert_eq!(
            SearchFigures::read("depth 5, 31204 nodes, 80 ms"),
            SearchFigures { depth: Some(5), nodes: Some(31204) }
        );
        assert_eq!(
            SearchFigures::read("400 simulations over 2 decisions, 93 ms, value W/D/L 0.40/0.20/0.40"),
            SearchFigures { depth: None, nodes: Some(400) }
        );
        assert_eq!(
            SearchFigures::read("1000 simulations, 31 visits to the move, 12 ms"),
            SearchFigures { depth: None, nodes: Some(1000) }
        );
        assert_eq!(SearchFigures::read("out of time, 88 nodes, 3 ms").nodes, Some(88));
        assert_eq!(SearchFigures::read("only move"), SearchFigures::default());
        assert_eq!(SearchFigures::read(""), SearchFigures::default());
    }

    #[test]
    fn info_line_has_the_fields_in_order() {
        let rules = Ruleset::variant("cam").expect("a variant");
        let pos = Position::start(&rules);
        let mut moves = Vec::new();
        rules.legal_moves(&pos, &mut moves);
        let mut choice = Choice::plain(moves[0]);
        assert_eq!(info_line(&choice, 7, "A1-A2"), "info time 7 pv A1-A2");
        choice.evaluation = Some(Evaluation::Heuristic(-25));
        choice.info = "depth 3, 1200 nodes, 7 ms".to_string();
        assert_eq!(info_line(&choice, 7, "A1-A2 B5-B4"), "info depth 3 nodes 1200 time 7 score cp -25 pv A1-A2 B5-B4");
    }
}
