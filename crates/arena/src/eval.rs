//! The hand-made evaluation that `alphabeta` searches with, and the material count that
//! `greedy` and the rollouts of `uct` use.
//!
//! Scores are in hundredths of a man (a man is worth [`EvalWeights::man`] = 100) and always from the
//! point of view of the side to move. For each side the evaluation adds:
//!
//! * **material**: 100 per man, [`EvalWeights::knight`] (160) per knight. Knights are worth more
//!   because only they can charge (a canter followed by a jump), which makes them the main
//!   attacking pieces; 1.6 men is a common estimate among Camelot players.
//! * **advance**: per piece, `advance_man` (men) or `advance_knight` (knights) times how much
//!   closer it stands to the enemy castle than the far edge (Chebyshev distance to the nearest
//!   enemy castle square), plus `near_castle` per step inside distance 3 of it. This is what
//!   makes a side try to win (occupy the castle) instead of shuffling to a no-progress draw.
//! * **castle occupancy**: `castle` per piece standing in the enemy castle: two of them (one on
//!   the small boards) win, and a piece there cannot be captured.
//! * **mobility**: `mobility` per plain step and per first canter leg available (counted with
//!   bitboard shifts, without generating moves): cramped sides lose.
//! * **threats**: the side *not* to move scores `threat` per piece of the side to move that it
//!   could jump if it were its turn: a hanging piece. (The side to move has no plain jump at a
//!   leaf: captures are compulsory, so the search goes on through every capture first.)
//!
//! Terminal positions are not scored here: the search scores them from the rules' outcome.

use camelot_rules::{Bitboard, Color, Position, Role, Ruleset, Square, DIRECTIONS};

/// The evaluation's weights, in hundredths of a man.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalWeights {
    /// A man.
    pub man: i32,
    /// A knight.
    pub knight: i32,
    /// Per step of progress of a man toward the enemy castle.
    pub advance_man: i32,
    /// Per step of progress of a knight toward the enemy castle.
    pub advance_knight: i32,
    /// Per step inside Chebyshev distance 3 of the enemy castle (any piece).
    pub near_castle: i32,
    /// Per piece standing in the enemy castle.
    pub castle: i32,
    /// Per plain step or first canter leg available.
    pub mobility: i32,
    /// For the side not to move, per enemy piece it could jump.
    pub threat: i32,
}

impl Default for EvalWeights {
    fn default() -> EvalWeights {
        EvalWeights {
            man: 100,
            knight: 160,
            advance_man: 4,
            advance_knight: 2,
            near_castle: 30,
            castle: 250,
            mobility: 1,
            threat: 35,
        }
    }
}

/// Material of `color` with the given weights.
#[inline]
pub fn material(pos: &Position, color: Color, weights: &EvalWeights) -> i32 {
    pos.role(color, Role::Man).count() as i32 * weights.man
        + pos.role(color, Role::Knight).count() as i32 * weights.knight
}

/// The evaluation for one ruleset: weights plus per-square tables built once.
#[derive(Clone, Debug)]
pub struct Heuristic {
    weights: EvalWeights,
    board: Bitboard,
    own_castle: [Bitboard; 2],
    opp_castle: [Bitboard; 2],
    /// `man_square[color][square]`: advance and near-castle bonus of a man there.
    man_square: [[i32; 256]; 2],
    /// The same for a knight.
    knight_square: [[i32; 256]; 2],
}

impl Heuristic {
    /// The evaluation of `rules` with the default weights.
    pub fn new(rules: &Ruleset) -> Heuristic {
        Heuristic::with_weights(rules, EvalWeights::default())
    }

    /// The evaluation of `rules` with `weights`.
    pub fn with_weights(rules: &Ruleset, weights: EvalWeights) -> Heuristic {
        let board = rules.board();
        let far = board.ranks() as i32 - 1;
        let mut man_square = [[0; 256]; 2];
        let mut knight_square = [[0; 256]; 2];
        for color in Color::BOTH {
            let targets: Vec<Square> = board.opp_castle(color).iter().collect();
            for sq in board.squares() {
                let distance = targets
                    .iter()
                    .map(|t| {
                        let df = (t.file() as i32 - sq.file() as i32).abs();
                        let dr = (t.rank() as i32 - sq.rank() as i32).abs();
                        df.max(dr)
                    })
                    .min()
                    .unwrap_or(far);
                let progress = (far - distance).max(0);
                let near = (3 - distance).max(0) * weights.near_castle;
                man_square[color.index()][sq.index()] = progress * weights.advance_man + near;
                knight_square[color.index()][sq.index()] = progress * weights.advance_knight + near;
            }
        }
        Heuristic {
            weights,
            board: board.squares(),
            own_castle: [board.own_castle(Color::White), board.own_castle(Color::Black)],
            opp_castle: [board.opp_castle(Color::White), board.opp_castle(Color::Black)],
            man_square,
            knight_square,
        }
    }

    /// The weights in use.
    pub fn weights(&self) -> &EvalWeights {
        &self.weights
    }

    /// The position's value for the side to move, in hundredths of a man.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let us = pos.turn();
        let them = us.opponent();
        let mut score = self.side(pos, us) - self.side(pos, them);
        score -= self.weights.threat * self.jumpable_by(pos, them).count() as i32;
        score
    }

    /// Everything but threats for one side.
    fn side(&self, pos: &Position, color: Color) -> i32 {
        let c = color.index();
        let w = &self.weights;
        let men = pos.role(color, Role::Man);
        let knights = pos.role(color, Role::Knight);
        let mut score = men.count() as i32 * w.man + knights.count() as i32 * w.knight;
        for sq in men {
            score += self.man_square[c][sq.index()];
        }
        for sq in knights {
            score += self.knight_square[c][sq.index()];
        }
        score += (pos.pieces(color) & self.opp_castle[c]).count() as i32 * w.castle;
        score += w.mobility * self.mobility(pos, color);
        score
    }

    /// Plain steps plus first canter legs of `color` (ignoring the turn's capture obligation).
    fn mobility(&self, pos: &Position, color: Color) -> i32 {
        let c = color.index();
        let mine = pos.pieces(color);
        let movers = mine & !self.opp_castle[c];
        let targets = self.board & !pos.occupied() & !self.own_castle[c];
        let mut count = 0;
        for d in DIRECTIONS {
            count += (movers.shift(d) & targets).count();
            count += ((movers.shift(d) & mine).shift(d) & targets).count();
        }
        count as i32
    }

    /// Pieces of `color`'s opponent that `color` could jump now if it were its turn.
    pub fn jumpable_by(&self, pos: &Position, color: Color) -> Bitboard {
        let attackers = pos.pieces(color) & !self.opp_castle[color.index()];
        let victims = pos.pieces(color.opponent());
        let empty = self.board & !pos.occupied();
        let mut out = Bitboard::EMPTY;
        for d in DIRECTIONS {
            out |= attackers.shift(d) & victims & empty.shift(-d);
        }
        out
    }
}
