//! The network's input planes (DESIGN.md, "Network input"), as plain arrays, and the left-right
//! mirror of planes and actions used to augment training data. Shared by the network, the
//! exporter and any other consumer, so the encoding lives in one place.
//!
//! Every plane covers the variant's bounding grid in the mover's view (Black's board turned so
//! that the mover plays up, as in [`ActionCodec`]); plane `p`, cell `c` is `out[p * cells + c]`.

use crate::action::{ActionCodec, Decision};
use crate::state::CamelotState;
use camelot_rules::{Bitboard, Color, Move, Position, Role, Ruleset};
use std::cell::RefCell;

/// Version of the encoding below; models record it and refuse a mismatch. Version 2 added
/// the four planes of what each side's moves would capture and reach (16-19).
pub const ENCODING_VERSION: u32 = 2;

/// Number of input planes.
pub const PLANES: usize = 20;

/// What each plane holds, in order (for model cards and documentation).
pub const PLANE_NAMES: [&str; PLANES] = [
    "my knights",
    "my men",
    "their knights",
    "their men",
    "on board",
    "my castle (the one I defend)",
    "their castle (the one I attack)",
    "moving piece (inside a move)",
    "origin of the move (inside a move)",
    "jump squares: an enemy neighbour with an empty square beyond",
    "constant: inside a move",
    "constant: a capture is compulsory",
    "constant: my castle moves used / limit",
    "constant: their castle moves used / limit",
    "constant: no-progress plies / limit",
    "constant: earlier occurrences of this position / 2",
    "my pieces their moves would capture, were it their turn",
    "their pieces my moves would capture",
    "squares their moves would reach, were it their turn",
    "squares my moves would reach",
];

thread_local! {
    static MOVES: RefCell<Vec<Move>> = const { RefCell::new(Vec::new()) };
}

/// What `color`'s legal moves on `pos`'s board would capture and where they would end, were
/// it `color`'s turn: the rules' own answer (charges and chains of jumps included), which a
/// small network cannot work out from the pieces alone within a few layers. These are facts
/// of the rules, like KataGo's liberty and ladder planes, not an evaluation: nothing says what
/// they are worth.
fn reach(rules: &Ruleset, pos: &Position, color: Color) -> (Bitboard, Bitboard) {
    let mut as_color = *pos;
    as_color.set_turn(color);
    MOVES.with_borrow_mut(|moves| {
        rules.legal_moves(&as_color, moves);
        moves.iter().fold((Bitboard::EMPTY, Bitboard::EMPTY), |(captured, reached), mv| {
            (captured | mv.captures, reached | Bitboard::from_square(mv.to))
        })
    })
}

/// Number of floats one position's planes take.
pub fn planes_len(codec: &ActionCodec) -> usize {
    PLANES * codec.cells() as usize
}

/// Everything a state's input planes show, as a key for caches of network outputs: two states
/// with equal keys have equal planes (up to 64-bit hash collisions). The state's hash covers
/// the pieces, the side to move, the castle moves and the place inside the move; the counters
/// below are the ones the hash leaves out (repetition detection needs them out), clamped where
/// their planes saturate so that states the network cannot tell apart share an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputKey {
    hash: u64,
    no_progress_plies: u32,
    occurrences: u32,
}

impl CamelotState {
    /// The key of this state's input planes (see [`InputKey`]).
    pub fn input_key(&self) -> InputKey {
        use camelot_search::GameState as _;
        let pos = self.mid_move().map_or(*self.position(), |m| m.position);
        InputKey {
            hash: self.hash(),
            no_progress_plies: pos.no_progress_plies().min(self.rules().flags().no_progress_plies),
            occurrences: self.occurrences().min(3),
        }
    }

    /// Writes this state's input planes into `out` (length [`planes_len`]); every value is
    /// overwritten.
    pub fn encode_planes(&self, out: &mut [f32]) {
        let codec = self.codec();
        let cells = codec.cells() as usize;
        assert_eq!(out.len(), PLANES * cells, "planes buffer of the wrong size");
        out.fill(0.0);
        let rules = self.rules();
        let board = rules.board();
        let mid = self.mid_move();
        let pos = mid.as_ref().map_or(*self.position(), |m| m.position);
        let me = pos.turn();
        let them = me.opponent();
        let mut set = |plane: usize, squares: Bitboard| {
            for sq in squares {
                out[plane * cells + codec.cell(sq, me) as usize] = 1.0;
            }
        };
        set(0, pos.role(me, Role::Knight));
        set(1, pos.role(me, Role::Man));
        set(2, pos.role(them, Role::Knight));
        set(3, pos.role(them, Role::Man));
        set(4, board.squares());
        set(5, board.own_castle(me));
        set(6, board.opp_castle(me));
        if let Some(m) = &mid {
            set(7, Bitboard::from_square(m.moving));
            set(8, Bitboard::from_square(m.origin));
        }
        set(9, rules.jump_squares(&pos));
        // Inside a move the board is the one the legs so far left, read as a fresh turn of
        // either side: what threatens what, not the rest of this move.
        let (they_capture, they_reach) = reach(rules, &pos, them);
        let (i_capture, i_reach) = reach(rules, &pos, me);
        set(16, they_capture);
        set(17, i_capture);
        set(18, they_reach);
        set(19, i_reach);
        let flags = rules.flags();
        let castle_share = |color: Color| match flags.max_castle_moves {
            Some(0) => 0.0,
            Some(max) => pos.castle_moves(color) as f32 / max as f32,
            None => (pos.castle_moves(color) as f32 / 10.0).min(1.0),
        };
        let constants = [
            (10, if mid.is_some() { 1.0 } else { 0.0 }),
            (11, if mid.is_none() && rules.must_capture(&pos) { 1.0 } else { 0.0 }),
            (12, castle_share(me)),
            (13, castle_share(them)),
            (14, (pos.no_progress_plies() as f32 / flags.no_progress_plies as f32).min(1.0)),
            (15, (self.occurrences().saturating_sub(1) as f32 / 2.0).min(1.0)),
        ];
        for (plane, value) in constants {
            out[plane * cells..(plane + 1) * cells].fill(value);
        }
    }
}

/// Who holds each cell of `pos` seen from `view` (the cell order of the planes of a position
/// `view` is to move in): 1 a piece of `view`'s, -1 one of the opponent's, 0 none, off-board
/// cells included. Of a game's last position, it is the ownership head's target.
pub fn ownership_target(codec: &ActionCodec, pos: &Position, view: Color) -> Vec<i8> {
    let mut out = vec![0i8; codec.cells() as usize];
    for (color, owner) in [(view, 1), (view.opponent(), -1)] {
        for sq in pos.pieces(color) {
            out[codec.cell(sq, view) as usize] = owner;
        }
    }
    out
}

/// Whether a training sample at a state may be mirrored left to right: the state is reached
/// from `turn_start` (the start of the same turn) by `decisions`, and has the legal actions
/// `legal`. The mirrored turn start must accept the mirrored decisions, and its legal actions
/// then must be exactly the mirrors of `legal`. Canonical paths (one path per set of captures
/// and destination, RULES.md) are not mirror-invariant, so now and then they are not: such a
/// sample mirrored would mark a non-canonical leg legal and give it target mass.
pub fn mirror_matches(turn_start: &CamelotState, decisions: &[u32], legal: &[u32]) -> bool {
    use camelot_search::GameState as _;
    let rules = turn_start.rules().clone();
    let codec = turn_start.codec();
    let start = turn_start.position().mirror_files(&rules);
    let mut mirrored = CamelotState::from_position(rules, start);
    let mut actions = Vec::new();
    for &decision in decisions {
        actions.clear();
        mirrored.legal_actions(&mut actions);
        let action = mirror_action(&codec, decision);
        if !actions.contains(&action) {
            return false;
        }
        mirrored.apply(action);
    }
    actions.clear();
    mirrored.legal_actions(&mut actions);
    let mut want: Vec<u32> = legal.iter().map(|&a| mirror_action(&codec, a)).collect();
    want.sort_unstable();
    actions.sort_unstable();
    want == actions
}

/// The same action on the board mirrored left to right (both views mirror alike: files
/// reverse, east and west swap).
pub fn mirror_action(codec: &ActionCodec, action: u32) -> u32 {
    // Mirrored direction: N, NW, W, SW, S, SE, E, NE for N, NE, E, SE, S, SW, W, NW.
    const MIRROR: [u32; 8] = [0, 7, 6, 5, 4, 3, 2, 1];
    match codec.decode(action, Color::White) {
        Some(Decision::Leg { .. }) => {
            let cell = action / 16;
            let files = codec.files() as u32;
            let mirrored_cell = (cell / files) * files + (files - 1 - cell % files);
            let direction = (action % 16) / 2;
            mirrored_cell * 16 + MIRROR[direction as usize] * 2 + action % 2
        }
        _ => action,
    }
}

/// Mirrors planes left to right in place.
pub fn mirror_planes(codec: &ActionCodec, planes: &mut [f32]) {
    let files = codec.files() as usize;
    for row in planes.chunks_mut(files) {
        row.reverse();
    }
}
