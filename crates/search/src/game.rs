//! The decision-level game interface the search runs on.

use crate::Wdl;

/// One of the two players.
///
/// The search never assumes that players alternate: it asks the state whose decision it is
/// ([`GameState::to_move`]) and backs values up with the sign that player needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// Side index 0, the player who starts (White in Camelot).
    First,
    /// Side index 1.
    Second,
}

impl Side {
    /// Both players in index order, for loops over players.
    pub const BOTH: [Side; 2] = [Side::First, Side::Second];

    /// The player's index: 0 for [`Side::First`], 1 for [`Side::Second`].
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }

    /// The player with index `index` (0 or 1), or `None` for any other index.
    #[inline]
    pub fn from_index(index: usize) -> Option<Side> {
        match index {
            0 => Some(Side::First),
            1 => Some(Side::Second),
            _ => None,
        }
    }

    /// The other player.
    #[inline]
    pub fn opponent(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Terminal {
    /// The given player won.
    Win(Side),
    /// Nobody won.
    Draw,
}

impl Terminal {
    /// The outcome as win/draw/loss probabilities (all mass on one entry) seen by `player`.
    #[inline]
    pub fn wdl_for(self, player: Side) -> Wdl {
        match self {
            Terminal::Win(winner) if winner == player => Wdl::WIN,
            Terminal::Win(_) => Wdl::LOSS,
            Terminal::Draw => Wdl::DRAW,
        }
    }

    /// The outcome as a scalar for `player`: +1 win, 0 draw, -1 loss.
    #[inline]
    pub fn value_for(self, player: Side) -> f32 {
        self.wdl_for(player).value()
    }
}

/// A game state as the search sees it: one *decision* at a time.
///
/// A decision is one element of a fixed action space of size [`GameState::action_space`], named by a
/// `u32` index. A game whose moves are chains (a Camelot move is a path of legs) exposes one
/// leg per decision, plus a `stop` action where a chain may end early; the player to move may
/// therefore stay the same for several consecutive decisions. The search handles that: values
/// are backed up with the sign of the player whose decision each node is, never by alternating
/// plies.
///
/// States are cloned into search trees (one clone per expanded node), so keep them compact and
/// cheap to clone; a state without heap data makes the search allocation-free in steady state.
///
/// Contract the search relies on:
/// * a state for which [`GameState::terminal`] returns `None` has at least one legal action;
/// * [`GameState::legal_actions`] is deterministic, lists no action twice, and every action is
///   below [`GameState::action_space`];
/// * [`GameState::apply`] is only called with an action from the current legal list.
pub trait GameState: Clone {
    /// Size of the fixed action space: every legal action is an index below this.
    ///
    /// A method rather than a constant so that one type can serve several board sizes
    /// (Camelot variants have different bounding grids).
    fn action_space(&self) -> u32;

    /// Pushes this state's legal actions onto `out`, which the caller passes in empty.
    ///
    /// The order defines the order of priors exchanged with an [`crate::Evaluator`], so it
    /// must be deterministic. Filling a caller-provided buffer keeps the hot path free of
    /// allocation. Not called on terminal states.
    fn legal_actions(&self, out: &mut Vec<u32>);

    /// Plays `action`, which must be one of [`GameState::legal_actions`].
    ///
    /// Implementations may panic on an illegal action; the search never passes one.
    fn apply(&mut self, action: u32);

    /// The player whose decision this is. Meaningful only while the game is not over.
    fn to_move(&self) -> Side;

    /// The outcome if the game is over, `None` while it goes on.
    fn terminal(&self) -> Option<Terminal>;

    /// An action that ends the game at once with a win for the player to move, if the game
    /// can tell cheaply; `None` otherwise (the default). Must be one of
    /// [`GameState::legal_actions`], and applying it must give [`GameState::terminal`] a win for the
    /// mover. Not called on terminal states.
    ///
    /// With the solver on, the search marks such a child won as it expands its parent,
    /// without visiting it ("decisive moves", Teytaud and Teytaud 2010). A few simulations then
    /// never miss a win in one decision, and a decision whose resulting position is visited
    /// once is known lost if it hands the opponent one, however low the network's prior on
    /// the winning action.
    fn decisive_action(&self) -> Option<u32> {
        None
    }

    /// A 64-bit hash of the whole state (position and mid-move state), for caches and
    /// transposition tables.
    ///
    /// The search's correctness never depends on it; [`crate::RolloutEvaluator`] uses it to
    /// seed its playouts, so equal hashes give equal rollout values.
    fn hash(&self) -> u64;
}
