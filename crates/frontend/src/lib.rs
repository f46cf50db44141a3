//! camelot-frontend: the ways people and other programs play against camelot-zero's players.
//!
//! * [`engine`]: any player behind a line protocol in the shape of UGI (the game-neutral form
//!   of UCI), for board programs and match runners ([`engine::run_engine`]); the protocol is in
//!   docs/ENGINE.md.
//! * [`serve`]: a web page to play in the browser, served over HTTP/1.1 with limits on
//!   everything read ([`serve::Server`]); the JSON API is in docs/SERVE.md.
//! * [`input`]: reading a person's moves in the terminal game (an unambiguous prefix such as
//!   origin and destination is enough) and commands.
//!
//! The `camelot` binary parses the command lines and calls these; every player comes from an
//! arena spec string ([`camelot_arena::PlayerSpec`]).
#![warn(missing_docs)]

pub mod engine;
mod error;
pub mod input;
pub mod serve;

pub use error::FrontendError;

/// The player of `camelot engine` and `camelot serve` when none is given.
pub const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";
