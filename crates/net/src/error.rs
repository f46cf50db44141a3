//! The one error type of camelot-net.

use std::path::PathBuf;

/// What can go wrong building, running, training, saving or loading a network.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// An architecture or training setting out of range; the message names the key.
    #[error("network config: {0}")]
    Config(String),
    /// A `--device` string this build cannot serve.
    #[error("device `{spec}`: {reason}")]
    Device {
        /// The device as the user wrote it.
        spec: String,
        /// Why it cannot be used.
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
    /// A checkpoint that is missing, truncated, corrupt or made for something else.
    #[error("checkpoint {}: {reason}", path.display())]
    Checkpoint {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Training produced a loss that is not a finite number (NaN or infinite): the weights
    /// are lost and nothing after this step may be saved.
    #[error("training diverged: {0}")]
    Diverged(String),
    /// A batch whose sizes disagree with the network.
    #[error("batch: {0}")]
    Batch(String),
}

impl NetError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> NetError {
        NetError::Io { path: path.into(), error }
    }

    pub(crate) fn checkpoint(path: impl Into<PathBuf>, reason: impl Into<String>) -> NetError {
        NetError::Checkpoint { path: path.into(), reason: reason.into() }
    }
}
