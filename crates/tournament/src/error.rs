//! The crate's one error type: every variant names the file, the line and column, the player
//! or the setting at fault.

use std::path::PathBuf;

/// Why a results file, a rating fit or a plot failed.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// An I/O error on a file.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// A line of a results file that is not a valid row.
    #[error("{}:{line}: {reason}", path.display())]
    BadRow {
        /// The file.
        path: PathBuf,
        /// The line number (1-based; the header is line 1).
        line: usize,
        /// What is wrong, naming the column.
        reason: String,
    },
    /// No games to rate.
    #[error("no games to rate")]
    NoGames,
    /// Players not linked by games: their relative ratings are unknown.
    #[error("players not connected by games: {{{}}} never met {{{}}}, directly or through others", .first.join(", "), .second.join(", "))]
    Disconnected {
        /// One group of players.
        first: Vec<String>,
        /// Players outside that group.
        second: Vec<String>,
    },
    /// The requested anchor did not play.
    #[error("anchor `{0}` played no game in these results")]
    UnknownAnchor(String),
    /// The Newton iteration failed (a singular information matrix: e.g. every game drawn and
    /// `prior_draws` 0).
    #[error("the rating fit did not converge: {0}")]
    NoConvergence(String),
    /// No player in the table is a checkpoint with a generation number.
    #[error("no checkpoint player (mcts:model=.../NNNNNN) to plot by generation")]
    NoGenerations,
    /// Drawing or encoding a PNG failed.
    #[error("{}: {reason}", path.display())]
    Draw {
        /// The PNG's path.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl TournamentError {
    /// An I/O error on `path`, for `map_err`.
    pub(crate) fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> TournamentError + '_ {
        move |error| TournamentError::Io { path: path.to_path_buf(), error }
    }
}
