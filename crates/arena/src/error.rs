//! The crate's errors. Spec errors name the player and the key at fault, so that a user can
//! mend a command line without reading code.

/// A player spec string that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The spec is empty.
    #[error("empty player spec (known players: {known})", known = crate::spec::PLAYER_NAMES.join(", "))]
    Empty,
    /// The name before `:` is not a player.
    #[error("unknown player `{0}` (known players: {known})", known = crate::spec::PLAYER_NAMES.join(", "))]
    UnknownPlayer(String),
    /// A setting that the player does not have.
    #[error("player `{player}` has no setting `{key}` (its settings: {known})")]
    UnknownKey {
        /// The player's name.
        player: String,
        /// The key given.
        key: String,
        /// The keys the player accepts.
        known: &'static str,
    },
    /// A setting not written as `key=value`.
    #[error("player `{player}`: setting `{text}` is not of the form key=value")]
    Malformed {
        /// The player's name.
        player: String,
        /// The text at fault.
        text: String,
    },
    /// A setting given twice.
    #[error("player `{player}`: setting `{key}` is given twice")]
    Duplicate {
        /// The player's name.
        player: String,
        /// The repeated key.
        key: String,
    },
    /// A value of the wrong kind or out of range.
    #[error("player `{player}`: `{key}={value}` is not valid: `{key}` must be {expected}")]
    BadValue {
        /// The player's name.
        player: String,
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What the key accepts.
        expected: &'static str,
    },
    /// A required setting is missing.
    #[error("player `{player}` needs the setting `{key}` ({hint})")]
    MissingKey {
        /// The player's name.
        player: String,
        /// The missing key.
        key: &'static str,
        /// An example.
        hint: &'static str,
    },
}

/// Why a player could not be built or could not move, or a match could not run.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// The spec could not be read.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A checkpoint that cannot be found, loaded or used here.
    #[error("model `{path}`: {reason}")]
    Model {
        /// The model path as given.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The search refused its settings or failed.
    #[error("player `{player}`: search failed: {reason}")]
    Search {
        /// The player's spec.
        player: String,
        /// What went wrong.
        reason: String,
    },
    /// The results file could not be read or written, or ratings not fitted.
    #[error(transparent)]
    Tournament(#[from] camelot_tournament::TournamentError),
    /// `human` outside the terminal game.
    #[error("player `human` can only sit at `camelot play`, which reads the person's moves from the terminal")]
    HumanNeedsTerminal,
    /// A player was asked to move in a finished game.
    #[error("the game is over: {0}")]
    GameOver(camelot_rules::Outcome),
    /// A player returned a move that is not legal (a bug in that player).
    #[error("player `{player}` chose an illegal move in {cpn}")]
    IllegalChoice {
        /// The player's name.
        player: String,
        /// The position, as CPN.
        cpn: String,
    },
    /// A match setting that cannot work.
    #[error("match setting: {0}")]
    Config(String),
}
