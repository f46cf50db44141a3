//! camelot-game: Camelot as the search and the network see it.
//!
//! The search works on *decisions*: one leg of a move, or `stop` where the path so far is a
//! complete move that could also continue. [`CamelotState`] walks the rules' trie of legs
//! ([`camelot_rules::LegTrie`]) and implements [`camelot_search::GameState`]; [`ActionCodec`] maps
//! legs to the fixed action space `cell * 16 + direction * 2 + (distance - 1)`, plus one `stop`
//! action, with cells and directions in the mover's view (Black's board turned so that every
//! mover plays up), so the network's policy outputs index the same actions for both colours.
#![warn(missing_docs)]

mod action;
mod planes;
mod sample;
mod state;

pub use action::{ActionCodec, Decision};
pub use planes::{
    mirror_action, mirror_matches, mirror_planes, ownership_target, planes_len, InputKey, ENCODING_VERSION, PLANES,
    PLANE_NAMES,
};
pub use sample::random_game_states;
pub use state::{CamelotState, MidMove};
