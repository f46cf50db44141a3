//! The rules crate's one error type. Every message names the rank, field, flag, square or token
//! at fault, so that a user can mend the input without reading code.

/// What went wrong while reading a variant, a flag, a position, a move or a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The variant name is not one of the rulesets.
    #[error("unknown variant `{0}` (known: {known})", known = crate::ruleset::VARIANT_NAMES.join(", "))]
    UnknownVariant(String),
    /// The flag name is not a ruleset flag.
    #[error("unknown ruleset flag `{0}` (known: {known})", known = crate::ruleset::FLAG_NAMES.join(", "))]
    UnknownFlag(String),
    /// A flag override that is not of the form `NAME=VALUE` or has a value of the wrong kind.
    #[error("flag `{flag}`: `{value}` is not {expected}")]
    BadFlagValue {
        /// The flag's name.
        flag: String,
        /// The value given.
        value: String,
        /// What the flag accepts.
        expected: &'static str,
    },
    /// Malformed position text.
    #[error("CPN {field}: {message}")]
    Cpn {
        /// The rank (`rank 12`) or field (`side to move`) at fault.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A move that cannot be read or is not legal in the position.
    #[error("move `{text}`: {reason}")]
    Move {
        /// The move as given.
        text: String,
        /// Why it was refused.
        reason: String,
    },
    /// A game record that cannot be read or replayed.
    #[error("record token {index} `{token}`: {reason}")]
    Record {
        /// One-based index of the token in the move text.
        index: usize,
        /// The token.
        token: String,
        /// Why it was refused.
        reason: String,
    },
}

impl Error {
    pub(crate) fn cpn(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Cpn { field: field.into(), message: message.into() }
    }

    pub(crate) fn mv(text: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Move { text: text.into(), reason: reason.into() }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
