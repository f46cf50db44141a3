//! The crate's one error type: each variant says what could not be set up or written.

/// Why a front end could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    /// A player spec, ruleset or model that cannot be used, in words naming it.
    #[error("{0}")]
    Setup(String),
    /// Reading or writing a stream, or listening on an address, failed.
    #[error("{what}: {error}")]
    Io {
        /// What was being done (`reading standard input`, `listening on 127.0.0.1:8080`).
        what: String,
        /// The error.
        error: std::io::Error,
    },
}

impl FrontendError {
    /// An I/O error while doing `what`, for `map_err`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> FrontendError {
        let what = what.into();
        move |error| FrontendError::Io { what, error }
    }
}
