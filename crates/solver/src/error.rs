//! The solver crate's one error type. Messages name the file, line, position or field at fault.

use std::path::PathBuf;

/// What went wrong while solving, reading or writing a table, or reading test positions.
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    /// The variant is outside what the solver's index can hold.
    #[error("variant `{variant}` cannot be solved: {reason}")]
    Unsupported {
        /// The variant's name.
        variant: String,
        /// Why not.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A table file that is not what its header says.
    #[error("{}: {reason}", path.display())]
    BadTable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A line of a positions file that cannot be read.
    #[error("{}:{line}: {reason}", path.display())]
    BadLine {
        /// The file.
        path: PathBuf,
        /// One-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A position the rules refuse, or one outside the table.
    #[error("position `{cpn}`: {reason}")]
    Position {
        /// The position as given.
        cpn: String,
        /// Why it was refused.
        reason: String,
    },
    /// The output file exists and overwriting was not asked for.
    #[error("{} exists; pass --force to overwrite it", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
}
