//! The two simplest baselines: `random` and `greedy`.

use crate::error::ArenaError;
use crate::eval::{material, EvalWeights};
use crate::player::{legal_or_over, Choice, Evaluation, Player};
use camelot_rules::{Game, Move};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// `random`: a uniformly random legal move.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: ChaCha8Rng,
}

impl RandomPlayer {
    /// A random player drawing from `rng`.
    pub fn new(rng: ChaCha8Rng) -> RandomPlayer {
        RandomPlayer { rng }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn choose(&mut self, game: &Game) -> Result<Choice, ArenaError> {
        let moves = legal_or_over(game)?;
        Ok(Choice::plain(moves[self.rng.random_range(0..moves.len())]))
    }
}

/// `greedy`: the move after which its material lead (men 100, knights 160) is largest, a move
/// that wins the game at once before any other; ties broken at random.
#[derive(Clone, Debug)]
pub struct Greedy {
    rng: ChaCha8Rng,
    weights: EvalWeights,
}

impl Greedy {
    /// A greedy player breaking ties with `rng`.
    pub fn new(rng: ChaCha8Rng) -> Greedy {
        Greedy { rng, weights: EvalWeights::default() }
    }
}

impl Player for Greedy {
    fn name(&self) -> String {
        "greedy".to_string()
    }

    fn choose(&mut self, game: &Game) -> Result<Choice, ArenaError> {
        let moves = legal_or_over(game)?;
        let rules = game.rules();
        let us = game.position().turn();
        let mut best: Vec<Move> = Vec::new();
        let mut best_score = i32::MIN;
        for mv in moves {
            let mut next = *game.position();
            rules.play(&mut next, &mv);
            let wins = rules.static_outcome(&next).is_some_and(|o| o.winner == Some(us));
            let score = if wins {
                i32::MAX
            } else {
                material(&next, us, &self.weights) - material(&next, us.opponent(), &self.weights)
            };
            if score > best_score {
                best_score = score;
                best.clear();
            }
            if score == best_score {
                best.push(mv);
            }
        }
        let mv = best[self.rng.random_range(0..best.len())];
        let evaluation = if best_score == i32::MAX { Evaluation::WinIn(1) } else { Evaluation::Heuristic(best_score) };
        Ok(Choice { mv, evaluation: Some(evaluation), principal_line: vec![mv], info: String::new() })
    }
}
