//! Move notation (RULES.md section 8): canonical paths, writing and reading moves.
//!
//! A move is written as its whole path: `I8-J9`, `C6-E8-G8`, `F6xD8xD10xF12`,
//! `D7-F5-H7-H9xF11xD11`. Among the legal paths that make a move, the canonical one has the
//! fewest legs, ties broken by the smallest string. Input may name a move by any path whose legs
//! are well formed and that makes a legal move; the engine always writes the canonical path.

use crate::bitboard::Bitboard;
use crate::board::NO_SQUARE;
use crate::error::{Error, Result};
use crate::movegen::{Context, Move, MoveKind};
use crate::position::Position;
use crate::ruleset::{ChargeRule, Ruleset};
use crate::square::{Role, Square, DIRECTION_DELTAS};
use std::cmp::Ordering;
use std::fmt;

/// A move's path: the origin, then every landing square. Legs before `first_jump` are steps or
/// canter legs (`-`), the rest jump legs (`x`).
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub struct Path {
    /// Origin then landings.
    pub squares: Vec<Square>,
    /// Index of the first jump leg (`squares.len() - 1` when nothing is captured).
    pub first_jump: usize,
}

impl Path {
    /// Number of legs.
    pub fn legs(&self) -> usize {
        self.squares.len() - 1
    }

    /// Whether leg `i` (from `squares[i]` to `squares[i + 1]`) is a jump.
    pub fn is_jump_leg(&self, i: usize) -> bool {
        i >= self.first_jump
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(self.squares.len() * 4);
        for (i, sq) in self.squares.iter().enumerate() {
            if i > 0 {
                s.push(if self.is_jump_leg(i - 1) { 'x' } else { '-' });
            }
            sq.push_name(&mut s);
        }
        f.write_str(&s)
    }
}

/// Many paths in two flat buffers (no allocation per path): path `i` is
/// `squares[start .. start + len]` for `entries[i] = (start, len, first_jump)`.
#[derive(Clone, Debug, Default)]
pub struct FlatPaths {
    squares: Vec<Square>,
    /// (start in `squares`, number of squares, first jump leg) per path.
    entries: Vec<(u32, u16, u16)>,
}

impl FlatPaths {
    /// Empties the buffers, keeping their capacity.
    pub fn clear(&mut self) {
        self.squares.clear();
        self.entries.clear();
    }

    /// Number of paths.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no path.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Path `i`: its squares (origin first) and the index of its first jump leg (its number of
    /// legs when it captures nothing).
    pub fn get(&self, i: usize) -> (&[Square], usize) {
        let (start, len, first_jump) = self.entries[i];
        (&self.squares[start as usize..start as usize + len as usize], first_jump as usize)
    }

    /// Appends `squares` as path `self.len()`.
    fn push(&mut self, squares: &[Square], first_jump: usize) {
        let start = self.squares.len() as u32;
        self.squares.extend_from_slice(squares);
        self.entries.push((start, squares.len() as u16, first_jump as u16));
    }
}

/// Orders candidate paths: fewest legs, then smallest written string.
pub(crate) fn path_order(a: &Path, b: &Path) -> Ordering {
    a.legs().cmp(&b.legs()).then_with(|| {
        let len = a.squares.len();
        written_keys(a.squares.iter().copied(), len, a.first_jump).cmp(written_keys(
            b.squares.iter().copied(),
            len,
            b.first_jump,
        ))
    })
}

/// A path of `len` squares (jump legs from `first_jump`) written as one number per square, such
/// that two paths of the same length compare as their written strings (`C6-E8xG10`) do,
/// without writing them: move generation compares candidate paths often.
///
/// Each number holds a square's name and the separator after it (none after the last), packed
/// big-endian into the top bytes. A separator is never a digit, so one such group is never a
/// proper prefix of another unless it ends its string: comparing group by group is comparing
/// the strings byte by byte.
pub(crate) fn written_keys(
    squares: impl Iterator<Item = Square>,
    len: usize,
    first_jump: usize,
) -> impl Iterator<Item = u32> {
    squares.enumerate().map(move |(i, square)| {
        let rank = square.rank() + 1;
        let mut bytes = [0u8; 4];
        bytes[0] = b'A' + square.file();
        let mut at = 1;
        if rank >= 10 {
            bytes[at] = b'1';
            at += 1;
        }
        bytes[at] = b'0' + rank % 10;
        if i + 1 < len {
            // Leg `i` starts here.
            bytes[at + 1] = if i >= first_jump { b'x' } else { b'-' };
        }
        u32::from_be_bytes(bytes)
    })
}

/// [`Square::name_order`] of every cell, by index.
const NAME_ORDER: [u16; 256] = {
    let mut table = [0; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = Square::from_index(i).name_order();
        i += 1;
    }
    table
};

/// The eight neighbours of a cell as bits of the 64 cells that start 17 below it.
const NEIGHBOURS: u64 = 1 | 1 << 1 | 1 << 2 | 1 << 16 | 1 << 18 | 1 << 32 | 1 << 33 | 1 << 34;

/// Canonical canter paths from one origin to every square it reaches: each square's parent on
/// the fewest-legs, smallest-string path. Built breadth-first with each layer kept in path
/// order, so a square's first discoverer is its best parent (paths of equal length compare by
/// their parent's path first, then by the last square's name).
#[derive(Clone)]
pub(crate) struct CanterTree {
    pub(crate) origin: Square,
    /// Parent of each reached square (entries of other squares are stale).
    pub(crate) parent: [u8; 256],
    /// Every square the tree reaches (the origin excluded).
    pub(crate) reached: Bitboard,
    /// The origin, then the reached squares in path order (breadth-first queue).
    queue: [u8; 256],
}

impl CanterTree {
    /// An empty tree, to be filled by [`Context::fill_canter_tree`].
    pub(crate) fn new() -> CanterTree {
        CanterTree {
            origin: Square::from_index(0),
            parent: [NO_SQUARE; 256],
            reached: Bitboard::EMPTY,
            queue: [0; 256],
        }
    }

    /// The canonical path from the origin to `target`, if the canter reaches it.
    pub(crate) fn path_to(&self, target: Square) -> Option<Vec<Square>> {
        let mut path = Vec::new();
        self.path_into(target, &mut path).then_some(path)
    }

    /// Appends the canonical path from the origin to `target` to `out`; false (and `out`
    /// unchanged) if the canter does not reach it.
    pub(crate) fn path_into(&self, target: Square, out: &mut Vec<Square>) -> bool {
        if target != self.origin && !self.reached.contains(target) {
            return false;
        }
        let start = out.len();
        let mut at = target;
        out.push(at);
        while at != self.origin {
            at = Square::from_index(self.parent[at.index()] as usize);
            out.push(at);
        }
        out[start..].reverse();
        true
    }
}

impl Context<'_> {
    /// The canter tree from `origin` under the same landing and continuation limits as
    /// [`Context::canter_reach`].
    pub(crate) fn canter_tree(
        &self,
        origin: Square,
        friends: Bitboard,
        landing_ok: Bitboard,
        expand_ok: Bitboard,
    ) -> Box<CanterTree> {
        let mut tree = Box::new(CanterTree::new());
        self.fill_canter_tree(&mut tree, origin, friends, landing_ok, expand_ok);
        tree
    }

    /// Fills `tree` (reused, so that the hot path neither allocates nor clears 256-entry
    /// tables) with the canter tree from `origin`: see [`Context::canter_tree`].
    pub(crate) fn fill_canter_tree(
        &self,
        tree: &mut CanterTree,
        origin: Square,
        friends: Bitboard,
        landing_ok: Bitboard,
        expand_ok: Bitboard,
    ) {
        // `open` (landings not reached yet), `expand` and `friends` as plain words, with a word
        // of zeros on either side (cell `i` is bit `i + 64`): a leap's landing and a square's
        // window of neighbours then need no bounds check, and cells off the grid are neither
        // open nor friendly.
        let landing = (landing_ok & !Bitboard::from_square(origin)).0;
        let mut open = [0, landing[0], landing[1], landing[2], landing[3], 0];
        let expand = expand_ok.0;
        let friends = [0, friends.0[0], friends.0[1], friends.0[2], friends.0[3], 0];
        // The queue holds each layer in path order: parents leave it in path order and append
        // their children in name order, so a square's first discoverer is its best parent.
        let queue = &mut tree.queue;
        let parent = &mut tree.parent;
        queue[0] = origin.index() as u8;
        let (mut head, mut tail) = (0usize, 1usize);
        while head < tail {
            let s = queue[head] as usize;
            head += 1;
            if head > 1 && (expand[s >> 6] >> (s & 63)) & 1 == 0 {
                continue;
            }
            // Every open landing beyond a friendly neighbour (with its name order), then in
            // name order.
            let mut found = [(0u16, 0u8); 8];
            let mut n = 0;
            // Friendly neighbours as bits of the 64 cells from `s - 17` (the eight neighbours
            // sit at 0, 1, 2, 16, 18, 32, 33, 34).
            let start = s + 64 - 17;
            let pair = friends[start >> 6] as u128 | (friends[(start >> 6) + 1] as u128) << 64;
            let mut mids = (pair >> (start & 63)) as u64 & NEIGHBOURS;
            while mids != 0 {
                let b = mids.trailing_zeros() as usize;
                mids &= mids - 1;
                // The leap over cell `s - 17 + b` lands on `s + 2 * (b - 17)`, at padded bit `p`.
                let p = s + 64 + 2 * b - 34;
                let bit = 1u64 << (p & 63);
                if open[p >> 6] & bit != 0 {
                    open[p >> 6] &= !bit;
                    let t = p - 64;
                    let key = NAME_ORDER[t];
                    // Insertion into the few found so far, by name.
                    let mut i = n;
                    while i > 0 && found[i - 1].0 > key {
                        found[i] = found[i - 1];
                        i -= 1;
                    }
                    found[i] = (key, t as u8);
                    n += 1;
                }
            }
            for &(_, t) in &found[..n] {
                parent[t as usize] = s as u8;
                queue[tail] = t;
                tail += 1;
            }
        }
        tree.origin = origin;
        tree.reached =
            Bitboard([landing[0] & !open[1], landing[1] & !open[2], landing[2] & !open[3], landing[3] & !open[4]]);
    }

    /// The friends, landings and continuations of a charge's canter legs by the knight on
    /// `origin`, whose hot landings are `hot` (RULES.md 5.C and the charge flags).
    pub(crate) fn charge_limits(&self, origin: Square, hot: Bitboard) -> (Bitboard, Bitboard, Bitboard) {
        let flags = self.rules.flags();
        let friends = self.mine & !Bitboard::from_square(origin);
        let mut landing = self.empty | Bitboard::from_square(origin);
        if !flags.charge_may_enter_own_castle_if_capturing {
            landing &= !self.own_castle;
        }
        let mut expand = !self.opp_castle;
        if flags.charge_rule == ChargeRule::Immediate {
            expand &= !hot;
        }
        (friends, landing, expand)
    }

    /// The friends, landings and continuations of the quiet canters of the piece on `origin`
    /// (a knight's `hot` landings handled as RULES.md 5.C says; men pass no hot squares).
    pub(crate) fn quiet_limits(&self, origin: Square, hot: Bitboard) -> (Bitboard, Bitboard, Bitboard) {
        let friends = self.mine & !Bitboard::from_square(origin);
        let landing = (self.empty | Bitboard::from_square(origin)) & !self.own_castle;
        let expand = !self.opp_castle;
        match self.rules.flags().charge_rule {
            ChargeRule::Later => (friends, landing & !hot, expand),
            ChargeRule::Immediate => (friends, landing, expand & !hot),
            ChargeRule::Final => (friends, landing, expand),
        }
    }

    /// The tree of quiet canters of the piece on `origin` (RULES.md 5.C for knights) and the
    /// squares where such a canter may end (under `immediate` and `final` the tree also holds
    /// landings next to a capture, which a quiet canter may not stop on).
    fn quiet_canter_tree(&self, origin: Square) -> (Box<CanterTree>, Bitboard) {
        let hot = if self.knights.contains(origin) { self.hot_for(origin) } else { Bitboard::EMPTY };
        let (friends, landing, expand) = self.quiet_limits(origin, hot);
        let tree = self.canter_tree(origin, friends, landing, expand);
        let dests = tree.reached & !hot;
        (tree, dests)
    }

    /// Every capture path of the piece on `origin` (plain jumps if `can_jump`, and charges if
    /// it is a knight), with each charge's canter part canonical, passed to `visit`.
    pub(crate) fn capture_paths(&self, origin: Square, can_jump: bool, visit: &mut dyn FnMut(Square, Bitboard, Path)) {
        let empty = self.empty | Bitboard::from_square(origin);
        let mut buf = [0u8; 32];
        let mut emit = |prefix: &[Square], to: Square, captured: Bitboard, jumps: &[u8]| {
            let mut squares = prefix.to_vec();
            squares.extend(jumps.iter().map(|&s| Square::from_index(s as usize)));
            visit(to, captured, Path { first_jump: prefix.len() - 1, squares });
        };
        if can_jump {
            self.jumps(origin, self.theirs, empty, &mut buf, 0, &mut |to, c, j| emit(&[origin], to, c, j));
        }
        if self.knights.contains(origin) {
            let (starts, _) = self.knight_canters(origin, false);
            if starts.is_empty() {
                return;
            }
            let (friends, landing, expand) = self.charge_limits(origin, self.hot_for(origin));
            let tree = self.canter_tree(origin, friends, landing, expand);
            for start in starts {
                if let Some(prefix) = tree.path_to(start) {
                    self.jumps(start, self.theirs, empty, &mut buf, 0, &mut |to, c, j| emit(&prefix, to, c, j));
                }
            }
        }
    }
}

impl Context<'_> {
    /// The canonical path among the capture paths of the piece on `origin` that end on `to`
    /// having captured `captures`.
    pub(crate) fn best_capture_path(&self, origin: Square, to: Square, captures: Bitboard) -> Option<Path> {
        let can_jump = self.obligations().jumpers.contains(origin);
        let mut best: Option<Path> = None;
        self.capture_paths(origin, can_jump, &mut |end, captured, path| {
            if end == to && captured == captures && best.as_ref().is_none_or(|b| path_order(&path, b) == Ordering::Less)
            {
                best = Some(path);
            }
        });
        best
    }
}

impl Ruleset {
    /// The canonical path of `mv`, a legal move in `pos`.
    pub fn canonical_path(&self, pos: &Position, mv: &Move) -> Path {
        let cx = Context::new(self, pos);
        let simple = || Path { squares: vec![mv.from, mv.to], first_jump: 1 };
        match mv.kind {
            MoveKind::Step | MoveKind::CastleMove => simple(),
            MoveKind::Canter => match cx.quiet_canter_tree(mv.from).0.path_to(mv.to) {
                Some(squares) => Path { first_jump: squares.len() - 1, squares },
                None => simple(),
            },
            MoveKind::Jump | MoveKind::Charge => {
                cx.best_capture_path(mv.from, mv.to, mv.captures).unwrap_or_else(simple)
            }
        }
    }

    /// The move written in notation (its canonical path).
    pub fn move_to_string(&self, pos: &Position, mv: &Move) -> String {
        self.canonical_path(pos, mv).to_string()
    }

    /// Every legal move with its canonical path, sorted by the written path (RULES.md 8).
    pub fn legal_moves_with_paths(&self, pos: &Position) -> Vec<(Move, Path)> {
        let mut moves = Vec::new();
        let mut paths = FlatPaths::default();
        self.legal_moves_and_paths(pos, &mut moves, &mut paths);
        let mut keyed: Vec<(String, Move, Path)> = moves
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                let (squares, first_jump) = paths.get(i);
                let p = Path { squares: squares.to_vec(), first_jump };
                (p.to_string(), m, p)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, m, p)| (m, p)).collect()
    }

    /// Every legal move and, at the same index of `paths`, its canonical path, in no particular
    /// order; both buffers are cleared first and reused, so the search's hot path builds move
    /// lists without allocating per move. Paths are built per piece: one canter tree gives the
    /// piece's canters and their paths at once, one capture search its captures' paths.
    pub fn legal_moves_and_paths(&self, pos: &Position, moves: &mut Vec<Move>, paths: &mut FlatPaths) {
        moves.clear();
        paths.clear();
        let cx = Context::new(self, pos);
        let ob = cx.obligations();
        let movable = ob.movers & !cx.opp_castle;
        let quiet = !ob.must_capture;
        let mut buf = Vec::with_capacity(16);
        // Pass 1: moves, with the canters' paths; other moves get theirs in pass 2 (a capture
        // that returns to its origin may still be taken over by another piece's path).
        const LATER: (u32, u16, u16) = (0, 0, 0);
        for origin in movable {
            let can_jump = ob.jumpers.contains(origin);
            let charge_starts =
                if cx.knights.contains(origin) { cx.knight_canters(origin, false).0 } else { Bitboard::EMPTY };
            if can_jump || charge_starts.any() {
                cx.push_captures(origin, can_jump, charge_starts, moves);
                paths.entries.resize(moves.len(), LATER);
            }
            if quiet && cx.may_canter(origin) {
                let (tree, dests) = cx.quiet_canter_tree(origin);
                for to in dests {
                    moves.push(Move { captures: Bitboard::EMPTY, from: origin, to, kind: MoveKind::Canter });
                    buf.clear();
                    tree.path_into(to, &mut buf);
                    paths.push(&buf, buf.len() - 1);
                }
            }
        }
        if quiet {
            self.push_steps(&cx, &ob, pos, moves);
            paths.entries.resize(moves.len(), LATER);
        }
        if ob.exit_castle {
            let mut keep = moves.iter().map(|m| !cx.own_castle.contains(m.to));
            paths.entries.retain(|_| keep.next().unwrap_or(false));
            moves.retain(|m| !cx.own_castle.contains(m.to));
        }
        // Pass 2: steps and captures.
        let mut captures: Vec<(Square, Bitboard, Path)> = Vec::new();
        let mut captures_of: Option<Square> = None;
        for (i, mv) in moves.iter().enumerate() {
            if paths.entries[i] != LATER {
                continue;
            }
            let start = paths.squares.len() as u32;
            let mut first_jump = 1;
            let mut found = false;
            if mv.is_capture() {
                if captures_of != Some(mv.from) {
                    captures_of = Some(mv.from);
                    captures.clear();
                    cx.capture_paths(mv.from, ob.jumpers.contains(mv.from), &mut |to, captured, path| match captures
                        .iter_mut()
                        .find(|(t, c, _)| *t == to && *c == captured)
                    {
                        Some(entry) if path_order(&path, &entry.2) == Ordering::Less => entry.2 = path,
                        Some(_) => {}
                        None => captures.push((to, captured, path)),
                    });
                }
                if let Some((_, _, p)) = captures.iter().find(|(t, c, _)| *t == mv.to && *c == mv.captures) {
                    paths.squares.extend_from_slice(&p.squares);
                    first_jump = p.first_jump;
                    found = true;
                }
            }
            if !found {
                paths.squares.extend([mv.from, mv.to]);
                first_jump = if mv.is_capture() { 0 } else { 1 };
            }
            let len = paths.squares.len() as u32 - start;
            paths.entries[i] = (start, len as u16, first_jump as u16);
        }
    }

    /// Reads a move written as a path (`C6-E8-G8`, `f6xd8`), optionally preceded by a move
    /// number (`12.` or `12...`) and followed by annotations (`!`, `?`, `!?`, ...). The move
    /// number, when given, must match the position. Errors say why the move is refused.
    pub fn parse_move(&self, pos: &Position, text: &str) -> Result<Move> {
        let body = strip_move_number(pos, text)?;
        let body = body.trim_end_matches(['!', '?']);
        let path = parse_path(self, body).map_err(|reason| Error::mv(text, reason))?;
        let mv = self.simulate_path(pos, &path).map_err(|reason| Error::mv(text, reason))?;
        let mut legal = Vec::new();
        self.legal_moves(pos, &mut legal);
        let same = |m: &&Move| {
            m.captures == mv.captures
                && ((m.from == mv.from && m.to == mv.to) || (m.from == m.to && mv.from == mv.to && mv.is_capture()))
        };
        if let Some(found) = legal.iter().find(same) {
            return Ok(*found);
        }
        Err(Error::mv(text, self.explain_illegal(pos, &path, &mv)))
    }

    /// Plays out `path` leg by leg on `pos`, checking each leg's shape, and returns the move it
    /// makes (whose legality as a whole is checked by the caller).
    fn simulate_path(&self, pos: &Position, path: &Path) -> std::result::Result<Move, String> {
        let us = pos.turn();
        let origin = path.squares[0];
        let piece = match pos.piece_at(origin) {
            Some(p) if p.color == us => p,
            Some(_) => {
                return Err(format!("{origin} holds a {} piece; {} is to move", us.opponent().name(), us.name()))
            }
            None => return Err(format!("no {} piece on {origin}", us.name())),
        };
        let mut theirs = pos.pieces(us.opponent());
        let friends = pos.pieces(us) & !Bitboard::from_square(origin);
        let mut empty = self.board().squares() & !(theirs | friends);
        let mut captures = Bitboard::EMPTY;
        let mut cantered = false;
        let mut landed = Bitboard::EMPTY;
        let legs = path.legs();
        for i in 0..legs {
            let (a, b) = (path.squares[i], path.squares[i + 1]);
            let df = b.file() as i32 - a.file() as i32;
            let dr = b.rank() as i32 - a.rank() as i32;
            if !empty.contains(b) {
                return Err(format!("landing square {b} is occupied"));
            }
            if df.abs() <= 1 && dr.abs() <= 1 {
                if legs > 1 || path.is_jump_leg(i) {
                    return Err(format!("{a}-{b} is a single step: it must be the whole move, written with -"));
                }
                let kind = if self.board().opp_castle(us).contains(a) && self.board().opp_castle(us).contains(b) {
                    MoveKind::CastleMove
                } else {
                    MoveKind::Step
                };
                return Ok(Move { captures, from: origin, to: b, kind });
            }
            let is_leap = (df.abs() == 2 || df == 0) && (dr.abs() == 2 || dr == 0);
            if !is_leap {
                return Err(format!("{a} to {b} is neither a step nor a leap in a straight line"));
            }
            let d = DIRECTION_DELTAS
                .iter()
                .position(|&(x, y)| x as i32 * 2 == df && y as i32 * 2 == dr)
                .expect("a leap has one of the eight directions");
            let mid = self.board().step(a, d).ok_or_else(|| format!("{a} to {b} leaves the board"))?;
            if path.is_jump_leg(i) {
                if !theirs.contains(mid) {
                    return Err(format!("no enemy piece on {mid} to jump"));
                }
                if cantered && piece.role == Role::Man {
                    return Err("a man never combines a canter with a jump".to_string());
                }
                theirs.remove(mid);
                empty.insert(mid);
                captures.insert(mid);
            } else {
                if captures.any() {
                    return Err(format!("a canter leg ({a}-{b}) cannot follow a jump"));
                }
                if !friends.contains(mid) {
                    return Err(format!("no friendly piece on {mid} to canter over"));
                }
                if landed.contains(b) {
                    return Err(format!("a canter never lands twice on the same square ({b})"));
                }
                landed.insert(b);
                cantered = true;
            }
            empty.insert(a);
            empty.remove(b);
        }
        let to = *path.squares.last().expect("paths have at least two squares");
        let kind = match (cantered, captures.any()) {
            (true, true) => MoveKind::Charge,
            (false, true) => MoveKind::Jump,
            _ => MoveKind::Canter,
        };
        Ok(Move { captures, from: origin, to, kind })
    }

    /// Why a well-formed path does not make a legal move.
    fn explain_illegal(&self, pos: &Position, path: &Path, mv: &Move) -> String {
        let cx = Context::new(self, pos);
        let ob = cx.obligations();
        let flags = self.flags();
        let us = pos.turn();
        if let (true, Some(x)) = (ob.exit_castle, ob.movers.first()) {
            if mv.from != x {
                return format!("the {} piece on {x} stands in its own castle and must move out first", us.name());
            }
            if cx.own_castle.contains(mv.to) {
                return format!("the piece on {x} must end its move outside its own castle");
            }
        }
        if cx.opp_castle.contains(mv.from) {
            let limit = flags.max_castle_moves.map_or("unlimited".to_string(), |n| n.to_string());
            return format!(
                "a piece in the opponent's castle may only move to the other castle square, while castle moves \
                 remain ({} used, limit {limit})",
                pos.castle_moves(us)
            );
        }
        if !mv.is_capture() && cx.own_castle.contains(mv.to) {
            return format!("a piece may not step or canter into its own castle ({})", mv.to);
        }
        if ob.must_capture && !mv.is_capture() {
            let jumper = ob.jumpers.first().map_or(String::new(), |s| format!(" (the piece on {s} can jump)"));
            return format!("a capture is compulsory{jumper}");
        }
        if mv.kind == MoveKind::Canter && mv.from == mv.to {
            return "a canter may not end on its origin".to_string();
        }
        if mv.is_capture() {
            if flags.single_capture_per_move && mv.captures.count() > 1 {
                return "only one capture per move in this ruleset (single_capture_per_move)".to_string();
            }
            let remaining = pos.pieces(us.opponent()) & !mv.captures;
            let empty = (cx.empty | mv.captures | Bitboard::from_square(mv.from)) & !Bitboard::from_square(mv.to);
            let can_continue = (0..8).any(|d| {
                matches!((self.board().step(mv.to, d), self.board().leap(mv.to, d)),
                    (Some(mid), Some(t)) if remaining.contains(mid) && (empty | Bitboard::from_square(mv.to)).contains(t))
            });
            if can_continue && !cx.opp_castle.contains(mv.to) {
                return format!("the jump must continue from {}", mv.to);
            }
        }
        if pos.knights().contains(mv.from) && !mv.is_capture() {
            let hot = cx.hot_for(mv.from);
            if let Some(sq) = path.squares[1..].iter().find(|s| hot.contains(**s)) {
                return format!(
                    "the canter lands on {sq}, where a jump is available, so the move must capture \
                     (charge_rule={})",
                    flags.charge_rule.name()
                );
            }
        }
        if mv.kind == MoveKind::Charge && flags.charge_rule == ChargeRule::Immediate {
            return "under charge_rule=immediate the knight must start jumping at its first canter landing \
                    next to a capture"
                .to_string();
        }
        "not a legal move in this position".to_string()
    }
}

/// Removes a leading move number (`12.` for White, `12....` or `12...` for Black), checking it
/// against the position; returns the rest (empty for a lone number).
pub fn strip_move_number<'t>(pos: &Position, text: &'t str) -> Result<&'t str> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Ok(text);
    }
    let rest = &text[digits..];
    let dots = rest.bytes().take_while(|&b| b == b'.').count();
    if dots == 0 {
        return Err(Error::mv(text, "a move number must be followed by `.` (White) or `...` (Black)"));
    }
    let number: u32 = text[..digits].parse().map_err(|_| Error::mv(text, "move number out of range"))?;
    let black = dots >= 3;
    let expected_black = pos.turn() == crate::Color::Black;
    if number != pos.fullmove() || black != expected_black {
        return Err(Error::mv(
            text,
            format!(
                "the move number says {number}{} but the position is at {}{} ({} to move)",
                if black { "..." } else { "." },
                pos.fullmove(),
                if expected_black { "..." } else { "." },
                pos.turn().name()
            ),
        ));
    }
    Ok(&rest[dots..])
}

/// Splits `C6-E8xG8` into squares and leg kinds; errors name the part at fault.
fn parse_path(rules: &Ruleset, text: &str) -> std::result::Result<Path, String> {
    if text.is_empty() {
        return Err("empty move".to_string());
    }
    let mut squares = Vec::new();
    let mut seps = Vec::new();
    let mut rest = text;
    loop {
        let end = rest.find(['-', 'x', 'X']).unwrap_or(rest.len());
        let name = &rest[..end];
        let sq = Square::parse(name).ok_or_else(|| format!("`{name}` is not a square name"))?;
        if !rules.board().contains(sq) {
            return Err(format!("{sq} is not a square of the {} board", rules.board().name()));
        }
        squares.push(sq);
        if end == rest.len() {
            break;
        }
        seps.push(rest.as_bytes()[end] != b'-');
        rest = &rest[end + 1..];
    }
    if squares.len() < 2 {
        return Err("a move needs an origin and at least one landing square, e.g. F6-F7".to_string());
    }
    let first_jump = seps.iter().position(|&j| j).unwrap_or(seps.len());
    if seps[first_jump..].iter().any(|&j| !j) {
        return Err("a canter leg (-) cannot follow a jump leg (x)".to_string());
    }
    Ok(Path { squares, first_jump })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn path(indices: &[u8], first_jump: usize) -> Path {
        let squares: Vec<Square> = indices.iter().map(|&i| Square::from_index(i as usize)).collect();
        let first_jump = first_jump.min(squares.len() - 1);
        Path { squares, first_jump }
    }

    /// Paths of `len` squares that differ late and in ranks 1, 9-16 (where names change
    /// length), so that equal prefixes and near ties are common.
    fn similar_paths(len: usize) -> impl Strategy<Value = (Vec<u8>, Vec<u8>, usize, usize)> {
        let square = (0u8..3, prop_oneof![Just(0u8), 8u8..16]).prop_map(|(file, rank)| file + rank * 16);
        (proptest::collection::vec(square.clone(), len), proptest::collection::vec(square, len), 0..len, 0..len, 0..len)
            .prop_map(|(a, mut b, shared, ja, jb)| {
                b[..shared].copy_from_slice(&a[..shared]);
                (a, b, ja, jb)
            })
    }

    proptest! {
        /// Paths order as their written strings do.
        #[test]
        fn paths_order_as_their_strings(
            (a, b, ja, jb) in (2usize..8).prop_flat_map(similar_paths),
        ) {
            let (a, b) = (path(&a, ja), path(&b, jb));
            let by_string = a.legs().cmp(&b.legs()).then_with(|| a.to_string().cmp(&b.to_string()));
            prop_assert_eq!(path_order(&a, &b), by_string, "{} {}", a, b);
        }

        /// Paths of any lengths and squares order as their written strings do.
        #[test]
        fn any_paths_order_as_their_strings(
            a in proptest::collection::vec(any::<u8>(), 2..12),
            b in proptest::collection::vec(any::<u8>(), 2..12),
            ja in 0usize..12,
            jb in 0usize..12,
        ) {
            let (a, b) = (path(&a, ja), path(&b, jb));
            let by_string = a.legs().cmp(&b.legs()).then_with(|| a.to_string().cmp(&b.to_string()));
            prop_assert_eq!(path_order(&a, &b), by_string);
        }
    }
}
