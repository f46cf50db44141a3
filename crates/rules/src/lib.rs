//! camelot-rules: the rules core of camelot-zero.
//!
//! Rulesets are data ([`Ruleset`]): a board shape, a set-up and the flags of the rule book
//! (`RULES.md`), so Camelot, Chivalry, Cam and Camette share one move generator. Positions are
//! plain `Copy` data on 256-bit bitboards; [`Ruleset::legal_moves`] lists whole moves, each once
//! per resulting position; notation, CPN, game records, perft and the trie of legs that the
//! search walks are built on that. [`fsio`] holds the one crash-safe file write that every
//! crate uses.
#![warn(missing_docs)]

mod bitboard;
mod board;
mod canonical;
mod cpn;
mod error;
pub mod fsio;
mod game;
mod move_input;
mod movegen;
mod notation;
mod outcome;
mod perft;
mod playout;
mod position;
mod record;
mod ruleset;
mod square;
mod trie;
mod trie_build;

pub use bitboard::{Bitboard, Squares};
pub use board::Board;
pub use error::{Error, Result};
pub use game::Game;
pub use move_input::strip_move_number;
pub use movegen::{Move, MoveKind};
pub use notation::{FlatPaths, Path};
pub use outcome::{EndReason, Outcome};
pub use playout::{random_playout, PlayoutStats};
pub use position::Position;
pub use record::Record;
pub use ruleset::{ChargeRule, Flags, Ruleset, FLAG_NAMES, VARIANT_NAMES};
pub use square::{Color, Piece, Role, Square, DIRECTIONS, DIRECTION_DELTAS, GRID};
pub use trie::{Children, Leg, LegTrie};
pub use trie_build::TrieScratch;
