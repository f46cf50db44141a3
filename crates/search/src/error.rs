//! The search's error type.

use crate::eval::EvalError;

/// Everything that can make a search call fail. After an error the trees stay usable: leaves
/// that were waiting for evaluation are rolled back.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// A configuration field is out of range.
    #[error("invalid search configuration: {field} {reason}")]
    InvalidConfig {
        /// The offending field of [`crate::SearchConfig`].
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A root handed to the search is already a finished game.
    #[error("root {tree} is a finished game; there is nothing to search")]
    TerminalRoot {
        /// Index of the tree in the batch.
        tree: usize,
    },
    /// A state that is not terminal listed no legal action (a bug in the `GameState`).
    #[error("a non-terminal state in tree {tree} has no legal actions")]
    NoLegalActions {
        /// Index of the tree in the batch.
        tree: usize,
    },
    /// A state listed an action outside the action space (a bug in the `GameState`).
    #[error("tree {tree}: legal action {action} is outside the action space of size {space}")]
    ActionOutOfRange {
        /// Index of the tree in the batch.
        tree: usize,
        /// The offending action.
        action: u32,
        /// The game's action-space size.
        space: u32,
    },
    /// The evaluator failed.
    #[error("evaluator failed: {0}")]
    Evaluator(#[source] EvalError),
    /// The evaluator returned unusable numbers for a state.
    #[error("evaluator output for batch entry {index} is invalid: {reason}")]
    InvalidEvaluation {
        /// Index of the state in the evaluator's batch.
        index: usize,
        /// What is wrong (negative or non-finite numbers, all priors zero...).
        reason: &'static str,
    },
    /// [`crate::Tree::advance`] got an action that is not legal at the root.
    #[error("action {action} is not legal at the root")]
    IllegalAction {
        /// The rejected action.
        action: u32,
    },
}
