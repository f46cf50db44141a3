//! The one error type of camelot-selfplay.

use std::path::PathBuf;

/// What can stop a training run.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    /// A config value out of range or a config file that does not parse; names the key.
    #[error("{}: {message}", file.display())]
    Config {
        /// The config file (or run.toml).
        file: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The run directory holds something this run cannot continue from.
    #[error("run {}: {message}", dir.display())]
    Run {
        /// What is wrong.
        message: String,
        /// The run directory.
        dir: PathBuf,
    },
    /// A file that is corrupt or truncated.
    #[error("{}: {reason}", path.display())]
    Corrupt {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file at fault.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// An object of a run store (local or remote) could not be read, written or listed.
    #[error("{object}: {message}")]
    Store {
        /// The object (or prefix) at fault, as a path or URL.
        object: String,
        /// What went wrong.
        message: String,
    },
    /// A create-only put found the name taken: someone else wrote that object first.
    #[error("{object}: already exists; not overwriting it")]
    Exists {
        /// The object.
        object: String,
    },
    /// The network failed.
    #[error(transparent)]
    Net(#[from] camelot_net::NetError),
    /// The search failed.
    #[error("search: {0}")]
    Search(String),
    /// A baseline player failed.
    #[error(transparent)]
    Arena(#[from] camelot_arena::ArenaError),
    /// A solved-positions file could not be read.
    #[error(transparent)]
    Solver(#[from] camelot_solver::SolverError),
}

impl SelfplayError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> SelfplayError {
        SelfplayError::Io { path: path.into(), error }
    }
}
