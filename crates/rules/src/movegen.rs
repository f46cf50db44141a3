//! Whole-move generation (RULES.md sections 3-5 and 8).
//!
//! A move is identified by the position it leads to: for a given piece that is its landing square
//! and the set of pieces it captures. Canters are found by flood fill over landing squares (all
//! canter paths between two squares give the same position), jumps by depth-first search over
//! jump legs; a piece's captures are deduplicated by (landing, captured set). Paths are not built
//! here: [`crate::notation`] rebuilds the canonical path of a move only when it is written.

use crate::bitboard::Bitboard;
use crate::board::NO_SQUARE;
use crate::position::Position;
use crate::ruleset::{ChargeRule, Ruleset};
use crate::square::{Color, Square};

/// What kind of move a [`Move`] is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum MoveKind {
    /// A plain step to an adjacent square.
    Step,
    /// A step between the two squares of the opponent's castle.
    CastleMove,
    /// One or more canter legs.
    Canter,
    /// One or more jump legs.
    Jump,
    /// A knight's charge: canter legs, then jump legs.
    Charge,
}

/// A legal whole move: the moving piece's origin and landing square and what it captures.
/// Two moves that give the same position are the same move, so these fields identify it, with
/// one exception: a capture that brings its piece back to its origin (`from == to`) leaves the
/// same position whichever piece makes it, so such moves are identified by their captures
/// alone and listed once, under the piece of their canonical path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    /// Squares of the captured pieces.
    pub captures: Bitboard,
    /// Where the moving piece starts.
    pub from: Square,
    /// Where it ends (may equal `from` after a jump that comes back round).
    pub to: Square,
    /// Step, castle move, canter, jump or charge.
    pub kind: MoveKind,
}

impl Move {
    /// Whether the move captures.
    #[inline]
    pub fn is_capture(&self) -> bool {
        self.captures.any()
    }
}

/// Everything the generator reads about one position, computed once per call.
pub(crate) struct Context<'a> {
    pub(crate) rules: &'a Ruleset,
    step: &'a [[u8; 8]; 256],
    leap: &'a [[u8; 8]; 256],
    pub(crate) neighbors: &'a [Bitboard; 256],
    pub(crate) us: Color,
    pub(crate) mine: Bitboard,
    pub(crate) theirs: Bitboard,
    pub(crate) knights: Bitboard,
    pub(crate) empty: Bitboard,
    pub(crate) own_castle: Bitboard,
    pub(crate) opp_castle: Bitboard,
    /// Squares from which a jump leg exists on the current board (the moving piece in place).
    jump_from: Bitboard,
    /// Our pieces with at least one first canter leg (landing in any empty square): the others
    /// need no flood fill.
    canter_from: Bitboard,
}

/// Which pieces may move this turn and whether the move must capture (RULES.md 5.A and 5.B).
pub(crate) struct Obligations {
    /// Pieces that may move.
    pub(crate) movers: Bitboard,
    /// Pieces that can jump now.
    pub(crate) jumpers: Bitboard,
    /// The move must capture.
    pub(crate) must_capture: bool,
    /// A piece stands in its own castle and must leave it (5.A).
    pub(crate) exit_castle: bool,
}

impl<'a> Context<'a> {
    pub(crate) fn new(rules: &'a Ruleset, pos: &Position) -> Context<'a> {
        let board = rules.board();
        let us = pos.turn();
        let mine = pos.pieces(us);
        let theirs = pos.pieces(us.opponent());
        let empty = board.squares() & !(mine | theirs);
        let mut jump_from = Bitboard::EMPTY;
        let mut canter_from = Bitboard::EMPTY;
        crate::for_each_direction!(D => {
            let landing_behind = empty.shift(-2 * D);
            jump_from |= theirs.shift(-D) & landing_behind;
            canter_from |= mine.shift(-D) & landing_behind;
        });
        canter_from &= mine;
        Context {
            rules,
            step: &board.step,
            leap: &board.leap,
            neighbors: &board.neighbors,
            us,
            mine,
            theirs,
            knights: pos.knights(),
            empty,
            own_castle: board.own_castle(us),
            opp_castle: board.opp_castle(us),
            jump_from,
            canter_from,
        }
    }

    pub(crate) fn obligations(&self) -> Obligations {
        let jumpers = self.jump_from & self.mine & !self.opp_castle;
        let in_castle = self.mine & self.own_castle;
        if in_castle.any() {
            Obligations {
                movers: in_castle,
                jumpers: jumpers & in_castle,
                must_capture: (jumpers & in_castle).any(),
                exit_castle: true,
            }
        } else {
            Obligations { movers: self.mine, jumpers, must_capture: jumpers.any(), exit_castle: false }
        }
    }

    /// Canter landings from which the piece that started on `origin` could jump (RULES.md 5.C's
    /// hot landings): the jump table with `origin` counted empty.
    pub(crate) fn hot_for(&self, origin: Square) -> Bitboard {
        let mut hot = self.jump_from;
        let o = origin.index();
        for d in 0..8 {
            let mid = self.step[o][d];
            let target = self.leap[o][d];
            if target != NO_SQUARE && self.theirs.contains(Square::from_index(mid as usize)) {
                hot.insert(Square::from_index(target as usize));
            }
        }
        hot & !self.opp_castle
    }

    /// Landings reachable from `origin` by canter legs over `friends`, landing only on
    /// `landing_ok` and continuing only from `expand_ok` (the origin is always expanded). The
    /// origin itself is never a landing: returning there is never a move nor needed for one.
    pub(crate) fn canter_reach(
        &self,
        origin: Square,
        friends: Bitboard,
        landing_ok: Bitboard,
        expand_ok: Bitboard,
    ) -> Bitboard {
        // Breadth-first over squares; `open` holds the landings not reached yet.
        let mut open = landing_ok & !Bitboard::from_square(origin);
        let mut queue = [0u8; 256];
        queue[0] = origin.index() as u8;
        let (mut head, mut tail) = (0usize, 1usize);
        while head < tail {
            let s = queue[head] as usize;
            head += 1;
            for mid in self.neighbors[s] & friends {
                let Some(t) = beyond(s, mid) else { continue };
                if open.contains(t) {
                    open.remove(t);
                    if expand_ok.contains(t) {
                        queue[tail] = t.index() as u8;
                        tail += 1;
                    }
                }
            }
        }
        landing_ok & !Bitboard::from_square(origin) & !open
    }

    /// The canter landings a charge by the knight on `origin` may start jumping from, and, when
    /// `want_canters`, the legal pure-canter destinations of that knight (RULES.md 4.2, 4.4,
    /// 5.C); callers that need only the charges skip the extra flood fills.
    pub(crate) fn knight_canters(&self, origin: Square, want_canters: bool) -> (Bitboard, Bitboard) {
        if !self.canter_from.contains(origin) {
            return (Bitboard::EMPTY, Bitboard::EMPTY);
        }
        let flags = self.rules.flags();
        let friends = self.mine & !Bitboard::from_square(origin);
        let empty = self.empty | Bitboard::from_square(origin);
        let hot = self.hot_for(origin);
        let landing = empty & !self.own_castle;
        let same_landing = !flags.charge_may_enter_own_castle_if_capturing;
        let charge_landing = if same_landing { landing } else { empty };
        let expand = !self.opp_castle;
        match flags.charge_rule {
            ChargeRule::Later | ChargeRule::Final => {
                let reach = self.canter_reach(origin, friends, charge_landing, expand);
                let starts = reach & hot;
                if !want_canters {
                    return (starts, Bitboard::EMPTY);
                }
                let canters = match flags.charge_rule {
                    ChargeRule::Final if same_landing => reach & !hot,
                    ChargeRule::Final => self.canter_reach(origin, friends, landing, expand) & !hot,
                    _ if starts.is_empty() && same_landing => reach,
                    _ => self.canter_reach(origin, friends, landing & !hot, expand),
                };
                (starts, canters)
            }
            ChargeRule::Immediate => {
                let reach = self.canter_reach(origin, friends, charge_landing, expand & !hot);
                if !want_canters {
                    return (reach & hot, Bitboard::EMPTY);
                }
                let plain =
                    if same_landing { reach } else { self.canter_reach(origin, friends, landing, expand & !hot) };
                (reach & hot, plain & !hot)
            }
        }
    }

    /// Whether the piece on `origin` has a first canter leg at all (landing anywhere empty).
    #[inline]
    pub(crate) fn may_canter(&self, origin: Square) -> bool {
        self.canter_from.contains(origin)
    }

    /// Pure-canter destinations of a man on `origin` (men are not subject to 5.C).
    pub(crate) fn man_canters(&self, origin: Square) -> Bitboard {
        if !self.canter_from.contains(origin) {
            return Bitboard::EMPTY;
        }
        let friends = self.mine & !Bitboard::from_square(origin);
        let landing = (self.empty | Bitboard::from_square(origin)) & !self.own_castle;
        self.canter_reach(origin, friends, landing, !self.opp_castle)
    }

    /// Depth-first search over jump legs from `at`, calling `on_end(landing, captured, path)` for
    /// every complete jump sequence; `path` holds the landing squares of the jump legs.
    /// `theirs` and `empty` are the board as the sequence has left it (the mover off the board);
    /// `path[..depth]` the landings so far (a jump captures at most one side's pieces, <= 20).
    pub(crate) fn jumps<F: FnMut(Square, Bitboard, &[u8])>(
        &self,
        at: Square,
        theirs: Bitboard,
        empty: Bitboard,
        path: &mut [u8; 32],
        depth: usize,
        on_end: &mut F,
    ) {
        let flags = self.rules.flags();
        let captured_any = depth > 0;
        if captured_any
            && (flags.single_capture_per_move
                || self.opp_castle.contains(at)
                || (flags.own_castle_jump_ends && self.own_castle.contains(at)))
        {
            on_end(at, self.theirs & !theirs, &path[..depth]);
            return;
        }
        let s = at.index();
        let mut continued = false;
        if !self.opp_castle.contains(at) {
            for mid in self.neighbors[s] & theirs {
                let Some(t) = beyond(s, mid) else { continue };
                if empty.contains(t) {
                    continued = true;
                    let mid_bb = Bitboard::from_square(mid);
                    path[depth] = t.index() as u8;
                    self.jumps(t, theirs & !mid_bb, empty | mid_bb, path, depth + 1, on_end);
                }
            }
        }
        if !continued && captured_any {
            on_end(at, self.theirs & !theirs, &path[..depth]);
        }
    }

    /// Every capturing move of the piece on `origin`: plain jumps if it can jump, and charges
    /// from `charge_starts` (a knight's hot canter landings). Deduplicated by resulting
    /// position; a plain jump is kept over a charge that gives the same position, as it has
    /// fewer legs.
    pub(crate) fn push_captures(&self, origin: Square, can_jump: bool, charge_starts: Bitboard, out: &mut Vec<Move>) {
        let start = out.len();
        let empty = self.empty | Bitboard::from_square(origin);
        let mut path = [0u8; 32];
        let push = |out: &mut Vec<Move>, to: Square, captures: Bitboard, kind: MoveKind| {
            if to == origin {
                // A capture that brings its piece back to its origin leaves the same position
                // whichever piece makes it: one move, listed under the piece of its canonical
                // path. Such moves are rare, so the paths are compared only then.
                if let Some(i) = out.iter().position(|m| m.from == m.to && m.captures == captures) {
                    let other = out[i].from;
                    if other != origin {
                        let ours = self.best_capture_path(origin, origin, captures);
                        let theirs = self.best_capture_path(other, other, captures);
                        if let (Some(ours), Some(theirs)) = (ours, theirs) {
                            if (ours.legs(), ours.to_string()) < (theirs.legs(), theirs.to_string()) {
                                let kind = if ours.first_jump == 0 { MoveKind::Jump } else { MoveKind::Charge };
                                out[i] = Move { captures, from: origin, to, kind };
                            }
                        }
                    }
                    return;
                }
            } else if out[start..].iter().any(|m| m.to == to && m.captures == captures) {
                return;
            }
            out.push(Move { captures, from: origin, to, kind });
        };
        if can_jump {
            self.jumps(origin, self.theirs, empty, &mut path, 0, &mut |to, captures, _| {
                push(out, to, captures, MoveKind::Jump)
            });
        }
        for landing in charge_starts {
            self.jumps(landing, self.theirs, empty, &mut path, 0, &mut |to, captures, _| {
                push(out, to, captures, MoveKind::Charge)
            });
        }
    }
}

/// The landing square of a leap from grid index `from` over its neighbour `mid`, if it lies in
/// the grid (whether it is on the board is the caller's set test: the spare grid files absorb
/// sideways overflow).
#[inline(always)]
pub(crate) fn beyond(from: usize, mid: Square) -> Option<Square> {
    let t = 2 * mid.index() as isize - from as isize;
    (0..256).contains(&t).then(|| Square::from_index(t as usize))
}

impl Ruleset {
    /// Squares from which a piece of the side to move could make a jump leg on this board: an
    /// enemy neighbour with an empty square beyond (the "hot" squares of RULES.md 5.C, and the
    /// pieces that can jump). The network sees them as an input plane.
    pub fn jump_squares(&self, pos: &Position) -> Bitboard {
        Context::new(self, pos).jump_from & self.board().squares() & !self.board().opp_castle(pos.turn())
    }

    /// Whether the side to move must capture this turn (RULES.md 5.A and 5.B).
    pub fn must_capture(&self, pos: &Position) -> bool {
        Context::new(self, pos).obligations().must_capture
    }

    /// Fills `out` with every legal move of the side to move, each once (RULES.md section 8),
    /// in no particular order. An empty list means the side to move has no legal move; it does
    /// not check whether the game has already ended (see [`crate::Game`] and
    /// [`Ruleset::outcome`]).
    pub fn legal_moves(&self, pos: &Position, out: &mut Vec<Move>) {
        out.clear();
        let cx = Context::new(self, pos);
        let ob = cx.obligations();
        let movable = ob.movers & !cx.opp_castle;
        let quiet = !ob.must_capture;
        for origin in movable {
            let can_jump = ob.jumpers.contains(origin);
            let (charge_starts, canters) = if cx.knights.contains(origin) {
                cx.knight_canters(origin, quiet)
            } else {
                (Bitboard::EMPTY, if quiet { cx.man_canters(origin) } else { Bitboard::EMPTY })
            };
            if can_jump || charge_starts.any() {
                cx.push_captures(origin, can_jump, charge_starts, out);
            }
            if quiet {
                for to in canters {
                    out.push(Move { captures: Bitboard::EMPTY, from: origin, to, kind: MoveKind::Canter });
                }
            }
        }
        if quiet {
            self.push_steps(&cx, &ob, pos, out);
        }
        if ob.exit_castle {
            out.retain(|m| !cx.own_castle.contains(m.to));
        }
    }

    /// Plain steps and castle moves.
    pub(crate) fn push_steps(&self, cx: &Context<'_>, ob: &Obligations, pos: &Position, out: &mut Vec<Move>) {
        self.for_each_step(cx, ob, pos, |from, to, kind| out.push(Move { captures: Bitboard::EMPTY, from, to, kind }));
    }

    /// Calls `visit(from, to, kind)` for every plain step and castle move, steps by direction
    /// then landing, castle moves last.
    #[inline]
    pub(crate) fn for_each_step(
        &self,
        cx: &Context<'_>,
        ob: &Obligations,
        pos: &Position,
        mut visit: impl FnMut(Square, Square, MoveKind),
    ) {
        let movable = ob.movers & !cx.opp_castle;
        let step_targets = cx.empty & !cx.own_castle;
        crate::for_each_direction!(D => {
            for to in movable.shift(D) & step_targets {
                visit(Square::from_index((to.index() as i32 - D) as usize), to, MoveKind::Step);
            }
        });
        let in_opp_castle = ob.movers & cx.opp_castle;
        if in_opp_castle.any() && self.has_castle_moves() {
            let used = pos.castle_moves(cx.us);
            if self.flags().max_castle_moves.is_none_or(|max| used < max) {
                for from in in_opp_castle {
                    for to in cx.opp_castle & cx.empty {
                        visit(from, to, MoveKind::CastleMove);
                    }
                }
            }
        }
    }

    /// Plays `mv` (which must be legal in `pos`) and updates every counter and the hash.
    pub fn play(&self, pos: &mut Position, mv: &Move) {
        let z = self.zobrist();
        let us = pos.turn;
        let them = us.opponent();
        let role = if pos.knights.contains(mv.from) { crate::Role::Knight } else { crate::Role::Man };
        pos.by_color[us.index()].remove(mv.from);
        pos.by_color[us.index()].insert(mv.to);
        pos.hash ^= z.piece(us, role, mv.from) ^ z.piece(us, role, mv.to);
        if role == crate::Role::Knight {
            pos.knights.remove(mv.from);
            pos.knights.insert(mv.to);
        }
        for sq in mv.captures {
            let captured_role = if pos.knights.contains(sq) { crate::Role::Knight } else { crate::Role::Man };
            pos.hash ^= z.piece(them, captured_role, sq);
            pos.by_color[them.index()].remove(sq);
            pos.knights.remove(sq);
        }
        if mv.kind == MoveKind::CastleMove {
            let used = pos.castle_moves[us.index()];
            let now = used.saturating_add(1);
            pos.hash ^= z.castle_moves(us, used) ^ z.castle_moves(us, now);
            pos.castle_moves[us.index()] = now;
        }
        // Entering the opponent's castle is progress (RULES.md 6.7); so is a castle move while
        // castle moves are limited. With `max_castle_moves=unlimited` a castle move is not, or
        // shuttling between the castle squares would never end the game [choice].
        let castle_progress = mv.kind != MoveKind::CastleMove || self.flags().max_castle_moves.is_some();
        if mv.is_capture() || (self.board().opp_castle(us).contains(mv.to) && castle_progress) {
            pos.no_progress = 0;
        } else {
            // Counters stop at the largest the CPN reader takes, so that every position
            // written can be read back.
            pos.no_progress = pos.no_progress.saturating_add(1).min(crate::cpn::MAX_COUNTER);
        }
        if us == Color::Black {
            pos.fullmove = pos.fullmove.saturating_add(1).min(crate::cpn::MAX_COUNTER);
        }
        pos.turn = them;
        pos.hash ^= z.black_to_move;
    }
}
