//! Reference move generator, used by tests to cross-check the fast rules core.
//!
//! Written straight from the project's rule book (`RULES.md`), std only, sharing no code with
//! `crates/rules/src`. It is deliberately simple and slow, and it works by a different method from
//! a bitboard generator:
//!
//! 1. every legal *path* is enumerated leg by leg, by brute force, on a mailbox board
//!    (a `Vec` indexed by file and rank), following sections 3 and 4 of the rules;
//! 2. each candidate path is filtered by the whole-turn constraints of section 5;
//! 3. each legal path is applied to get the resulting position;
//! 4. paths are grouped by the resulting position, and each group (one move) is written by its
//!    canonical path: fewest legs, ties broken by the smallest string in byte order (section 8).
//!
//! Readings of points the rule book leaves open are noted where they are implemented.
#![allow(dead_code)]

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

/// A square: (file index, 0 = A; rank, 1-based).
type Sq = (i32, i32);

/// The 8 king directions.
const DIRS: [(i32, i32); 8] = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    White,
    Black,
}

impl Color {
    fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    fn index(self) -> usize {
        match self {
            Color::White => 0,
            Color::Black => 1,
        }
    }

    fn wins(self) -> String {
        match self {
            Color::White => "white wins".to_string(),
            Color::Black => "black wins".to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    color: Color,
    knight: bool,
}

impl Piece {
    fn letter(self) -> char {
        match (self.color, self.knight) {
            (Color::White, true) => 'K',
            (Color::White, false) => 'M',
            (Color::Black, true) => 'k',
            (Color::Black, false) => 'm',
        }
    }

    fn from_letter(c: char) -> Option<Piece> {
        let (color, knight) = match c {
            'K' => (Color::White, true),
            'M' => (Color::White, false),
            'k' => (Color::Black, true),
            'm' => (Color::Black, false),
            _ => return None,
        };
        Some(Piece { color, knight })
    }
}

/// `charge_rule` (RULES 5.C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeRule {
    Later,
    Immediate,
    Final,
}

/// Board geometry and White's set-up (Black's is White's reflected across the middle).
#[derive(Clone, Debug)]
struct Shape {
    width: i32,
    height: i32,
    /// `rows[rank - 1]` = (first file, last file), inclusive.
    rows: Vec<(i32, i32)>,
    white_knights: Vec<Sq>,
    white_men: Vec<Sq>,
}

/// A ruleset: board, set-up and the flags of RULES section 7.
#[derive(Clone, Debug)]
pub struct RefRules {
    pub variant: String,
    pub charge_rule: ChargeRule,
    pub own_castle_jump_ends: bool,
    pub single_capture_per_move: bool,
    pub charge_may_enter_own_castle_if_capturing: bool,
    /// `None` = unlimited.
    pub max_castle_moves: Option<u32>,
    pub castle_squares_to_win: usize,
    pub min_pieces_to_win: usize,
    pub material_draw: bool,
    /// Kept for completeness; a CPN carries no history, so the reference never applies it.
    pub repetition_draw: bool,
    /// `None` = no such rule.
    pub no_progress_plies: Option<u32>,
    shape: Shape,
}

fn parse_sq(name: &str) -> Option<Sq> {
    let mut chars = name.chars();
    let f = chars.next()?.to_ascii_uppercase();
    if !f.is_ascii_uppercase() {
        return None;
    }
    let rank: i32 = chars.as_str().parse().ok()?;
    Some((f as i32 - 'A' as i32, rank))
}

fn sq_name(sq: Sq) -> String {
    format!("{}{}", (b'A' + sq.0 as u8) as char, sq.1)
}

fn squares(names: &str) -> Vec<Sq> {
    names.split_whitespace().map(|n| parse_sq(n).expect("bad square in set-up")).collect()
}

/// Rows from (file letters "first last", number of ranks) runs, from rank 1 up.
fn rows(spec: &[(&str, usize)]) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for &(files, count) in spec {
        let b = files.as_bytes();
        let first = (b[0] - b'A') as i32;
        let last = (b[1] - b'A') as i32;
        for _ in 0..count {
            out.push((first, last));
        }
    }
    out
}

fn shape_of(variant: &str) -> Shape {
    match variant {
        "camelot" | "camelot-cz" => Shape {
            width: 12,
            height: 16,
            rows: rows(&[("FG", 1), ("CJ", 1), ("BK", 1), ("AL", 10), ("BK", 1), ("CJ", 1), ("FG", 1)]),
            white_knights: squares("C6 D7 I7 J6"),
            white_men: squares("D6 E6 F6 G6 H6 I6 E7 F7 G7 H7"),
        },
        "chivalry" | "chivalry-1888" => Shape {
            width: 14,
            height: 16,
            rows: rows(&[
                ("GH", 1),
                ("DK", 1),
                ("CL", 1),
                ("BM", 1),
                ("AN", 8),
                ("BM", 1),
                ("CL", 1),
                ("DK", 1),
                ("GH", 1),
            ]),
            white_knights: squares("C6 D6 K6 L6 C7 D7 K7 L7"),
            white_men: squares("E6 F6 G6 H6 I6 J6 E7 F7 G7 H7 I7 J7"),
        },
        "cam" => Shape {
            width: 7,
            height: 13,
            rows: rows(&[("DD", 1), ("CE", 1), ("BF", 1), ("AG", 7), ("BF", 1), ("CE", 1), ("DD", 1)]),
            white_knights: squares("C4 E4"),
            white_men: squares("B5 C5 D5 E5 F5"),
        },
        "camette" => Shape {
            width: 5,
            height: 7,
            rows: rows(&[("CC", 1), ("BD", 1), ("AE", 3), ("BD", 1), ("CC", 1)]),
            white_knights: squares("C2"),
            white_men: squares("B3 C3 D3"),
        },
        _ => panic!("unknown variant {variant:?}"),
    }
}

fn parse_bool(name: &str, value: &str) -> bool {
    match value {
        "true" | "yes" => true,
        "false" | "no" => false,
        _ => panic!("flag {name}: expected true|false, got {value:?}"),
    }
}

fn parse_num(name: &str, value: &str) -> u32 {
    value.parse().unwrap_or_else(|_| panic!("flag {name}: expected a number, got {value:?}"))
}

/// The ruleset of `variant` (RULES section 7), with flag overrides by name.
pub fn ref_rules(variant: &str, overrides: &[(&str, &str)]) -> RefRules {
    let shape = shape_of(variant);
    let small = matches!(variant, "cam" | "camette");
    let mut r = RefRules {
        variant: variant.to_string(),
        charge_rule: if variant == "camelot-cz" { ChargeRule::Immediate } else { ChargeRule::Later },
        own_castle_jump_ends: variant == "camelot-cz",
        single_capture_per_move: variant == "chivalry-1888",
        charge_may_enter_own_castle_if_capturing: variant == "chivalry-1888",
        max_castle_moves: match variant {
            "chivalry-1888" => None,
            // One-square castles: there are no castle moves at all.
            "cam" | "camette" => Some(0),
            _ => Some(2),
        },
        castle_squares_to_win: if small { 1 } else { 2 },
        min_pieces_to_win: if small { 1 } else { 2 },
        material_draw: !small,
        repetition_draw: true,
        no_progress_plies: Some(100),
        shape,
    };
    for &(name, value) in overrides {
        match name {
            "charge_rule" => {
                r.charge_rule = match value {
                    "later" => ChargeRule::Later,
                    "immediate" => ChargeRule::Immediate,
                    "final" => ChargeRule::Final,
                    _ => panic!("charge_rule: expected later|immediate|final, got {value:?}"),
                }
            }
            "own_castle_jump_ends" => r.own_castle_jump_ends = parse_bool(name, value),
            "single_capture_per_move" => r.single_capture_per_move = parse_bool(name, value),
            "charge_may_enter_own_castle_if_capturing" => {
                r.charge_may_enter_own_castle_if_capturing = parse_bool(name, value)
            }
            "max_castle_moves" => {
                r.max_castle_moves = match value {
                    "unlimited" => None,
                    _ => Some(parse_num(name, value)),
                }
            }
            "castle_squares_to_win" => r.castle_squares_to_win = parse_num(name, value) as usize,
            "min_pieces_to_win" => r.min_pieces_to_win = parse_num(name, value) as usize,
            "material_draw" => r.material_draw = parse_bool(name, value),
            "repetition_draw" => r.repetition_draw = parse_bool(name, value),
            "no_progress_plies" => {
                r.no_progress_plies = match value {
                    "none" | "off" | "unlimited" => None,
                    _ => Some(parse_num(name, value)),
                }
            }
            _ => panic!("unknown flag {name:?}"),
        }
    }
    r
}

/// A position: mailbox board plus the other CPN fields.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pos {
    /// Indexed by `RefRules::idx`; squares off the board are always `None`.
    cells: Vec<Option<Piece>>,
    side: Color,
    /// Castle moves used, indexed by `Color::index`.
    castle_moves: [u32; 2],
    no_progress: u32,
    move_number: u32,
}

impl Pos {
    /// The whole position as bytes: a cheap hash key, equal iff the positions are equal.
    fn key(&self) -> Vec<u8> {
        let mut k: Vec<u8> = self.cells.iter().map(|c| c.map_or(b'.', |p| p.letter() as u8)).collect();
        k.push(self.side.index() as u8);
        for n in [self.castle_moves[0], self.castle_moves[1], self.no_progress, self.move_number] {
            k.extend_from_slice(&n.to_le_bytes());
        }
        k
    }
}

impl RefRules {
    fn on_board(&self, sq: Sq) -> bool {
        let (f, r) = sq;
        if r < 1 || r > self.shape.height {
            return false;
        }
        let (lo, hi) = self.shape.rows[(r - 1) as usize];
        lo <= f && f <= hi
    }

    fn idx(&self, sq: Sq) -> usize {
        ((sq.1 - 1) * self.shape.width + sq.0) as usize
    }

    fn at(&self, cells: &[Option<Piece>], sq: Sq) -> Option<Piece> {
        cells[self.idx(sq)]
    }

    fn empty(&self, cells: &[Option<Piece>], sq: Sq) -> bool {
        self.at(cells, sq).is_none()
    }

    /// Every square, rank 1 first, files from A up.
    fn all_squares(&self) -> Vec<Sq> {
        let mut out = Vec::new();
        for r in 1..=self.shape.height {
            let (lo, hi) = self.shape.rows[(r - 1) as usize];
            for f in lo..=hi {
                out.push((f, r));
            }
        }
        out
    }

    /// The castle squares `c` defends: the whole of its home edge rank.
    fn own_castle(&self, c: Color) -> Vec<Sq> {
        let r = match c {
            Color::White => 1,
            Color::Black => self.shape.height,
        };
        let (lo, hi) = self.shape.rows[(r - 1) as usize];
        (lo..=hi).map(|f| (f, r)).collect()
    }

    fn opp_castle(&self, c: Color) -> Vec<Sq> {
        self.own_castle(c.other())
    }

    /// Same as `own_castle(c).contains(&sq)`, without building the list.
    fn in_own_castle(&self, c: Color, sq: Sq) -> bool {
        let home = match c {
            Color::White => 1,
            Color::Black => self.shape.height,
        };
        sq.1 == home && self.on_board(sq)
    }

    fn in_opp_castle(&self, c: Color, sq: Sq) -> bool {
        self.in_own_castle(c.other(), sq)
    }

    fn castle_size(&self) -> usize {
        self.own_castle(Color::White).len()
    }

    fn count(&self, cells: &[Option<Piece>], c: Color) -> usize {
        cells.iter().flatten().filter(|p| p.color == c).count()
    }

    fn start_pos(&self) -> Pos {
        let mut cells = vec![None; (self.shape.width * self.shape.height) as usize];
        for (list, knight) in [(&self.shape.white_knights, true), (&self.shape.white_men, false)] {
            for &(f, r) in list {
                let white = Piece { color: Color::White, knight };
                let black = Piece { color: Color::Black, knight };
                cells[self.idx((f, r))] = Some(white);
                cells[self.idx((f, self.shape.height + 1 - r))] = Some(black);
            }
        }
        Pos { cells, side: Color::White, castle_moves: [0, 0], no_progress: 0, move_number: 1 }
    }

    // ----- CPN (RULES section 9) -----

    fn parse_cpn(&self, cpn: &str) -> Pos {
        let fields: Vec<&str> = cpn.split_whitespace().collect();
        assert!(fields.len() == 3 || fields.len() == 5, "CPN {cpn:?}: expected 3 or 5 fields");
        let ranks: Vec<&str> = fields[0].split('/').collect();
        assert_eq!(ranks.len() as i32, self.shape.height, "CPN {cpn:?}: wrong number of ranks");
        let mut cells = vec![None; (self.shape.width * self.shape.height) as usize];
        for (i, text) in ranks.iter().enumerate() {
            let rank = self.shape.height - i as i32;
            let (lo, hi) = self.shape.rows[(rank - 1) as usize];
            let mut file = lo;
            let mut run = 0;
            let chars: Vec<char> = text.chars().collect();
            for (k, &ch) in chars.iter().enumerate() {
                if let Some(d) = ch.to_digit(10) {
                    run = run * 10 + d as i32;
                    let run_ends = k + 1 == chars.len() || !chars[k + 1].is_ascii_digit();
                    if run_ends {
                        assert!(run > 0, "CPN {cpn:?}: rank {rank}: empty run of 0");
                        file += run;
                        run = 0;
                    }
                } else {
                    let p = Piece::from_letter(ch)
                        .unwrap_or_else(|| panic!("CPN {cpn:?}: rank {rank}: unknown letter {ch:?}"));
                    assert!(file <= hi, "CPN {cpn:?}: rank {rank}: too many squares");
                    cells[self.idx((file, rank))] = Some(p);
                    file += 1;
                }
            }
            assert_eq!(file, hi + 1, "CPN {cpn:?}: rank {rank}: wrong number of squares");
        }
        let side = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            s => panic!("CPN {cpn:?}: bad side to move {s:?}"),
        };
        let castle_moves = if fields[2] == "-" {
            assert_eq!(self.castle_size(), 1, "CPN {cpn:?}: '-' castle moves on a two-square-castle board");
            [0, 0]
        } else {
            let (w, b) = fields[2].split_once('/').unwrap_or_else(|| panic!("CPN {cpn:?}: bad castle moves field"));
            [w.parse().expect("bad castle moves"), b.parse().expect("bad castle moves")]
        };
        let (no_progress, move_number) = if fields.len() == 5 {
            (fields[3].parse().expect("bad no-progress plies"), fields[4].parse().expect("bad move number"))
        } else {
            (0, 1)
        };
        let setup_count = self.shape.white_knights.len() + self.shape.white_men.len();
        for c in [Color::White, Color::Black] {
            let in_castle =
                self.own_castle(c).iter().filter(|&&sq| self.at(&cells, sq).is_some_and(|p| p.color == c)).count();
            assert!(in_castle <= 1, "CPN {cpn:?}: two pieces of one side in its own castle");
            assert!(self.count(&cells, c) <= setup_count, "CPN {cpn:?}: more pieces than the set-up");
        }
        Pos { cells, side, castle_moves, no_progress, move_number }
    }

    fn write_cpn(&self, pos: &Pos) -> String {
        let mut ranks = Vec::new();
        for rank in (1..=self.shape.height).rev() {
            let (lo, hi) = self.shape.rows[(rank - 1) as usize];
            let mut s = String::new();
            let mut run = 0;
            for f in lo..=hi {
                match self.at(&pos.cells, (f, rank)) {
                    None => run += 1,
                    Some(p) => {
                        if run > 0 {
                            s.push_str(&run.to_string());
                            run = 0;
                        }
                        s.push(p.letter());
                    }
                }
            }
            if run > 0 {
                s.push_str(&run.to_string());
            }
            ranks.push(s);
        }
        let side = match pos.side {
            Color::White => "w",
            Color::Black => "b",
        };
        let castles = if self.castle_size() == 1 {
            "-".to_string()
        } else {
            format!("{}/{}", pos.castle_moves[0], pos.castle_moves[1])
        };
        format!("{} {} {} {} {}", ranks.join("/"), side, castles, pos.no_progress, pos.move_number)
    }
}

// ----- Paths -----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leg {
    Step,
    Canter,
    Jump,
}

/// One way of playing a move: the origin and every leg.
#[derive(Clone, Debug)]
struct Path {
    origin: Sq,
    legs: Vec<(Leg, Sq)>,
    /// Squares of the pieces jumped, in order.
    captured: Vec<Sq>,
}

impl Path {
    fn end(&self) -> Sq {
        self.legs.last().map_or(self.origin, |&(_, sq)| sq)
    }

    fn text(&self) -> String {
        let mut s = sq_name(self.origin);
        for &(leg, sq) in &self.legs {
            s.push(if leg == Leg::Jump { 'x' } else { '-' });
            s.push_str(&sq_name(sq));
        }
        s
    }

    fn canter_landings(&self) -> Vec<Sq> {
        self.legs.iter().filter(|&&(leg, _)| leg == Leg::Canter).map(|&(_, sq)| sq).collect()
    }
}

fn add(sq: Sq, d: (i32, i32), k: i32) -> Sq {
    (sq.0 + k * d.0, sq.1 + k * d.1)
}

/// Jump legs from `s` for side `c` (RULES 3): (jumped square, landing square).
fn jump_legs(r: &RefRules, cells: &[Option<Piece>], c: Color, s: Sq) -> Vec<(Sq, Sq)> {
    if r.in_opp_castle(c, s) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for d in DIRS {
        let m = add(s, d, 1);
        let t = add(s, d, 2);
        if !r.on_board(m) || !r.on_board(t) {
            continue;
        }
        let enemy = r.at(cells, m).is_some_and(|p| p.color != c);
        if enemy && r.empty(cells, t) {
            out.push((m, t));
        }
    }
    out
}

/// `has_jump(s)` on the given board.
fn has_jump(r: &RefRules, cells: &[Option<Piece>], c: Color, s: Sq) -> bool {
    !jump_legs(r, cells, c, s).is_empty()
}

/// Canter legs from `s` for side `c` (RULES 3), before the own-castle test on the landing:
/// (cantered-over square, landing square).
fn canter_legs(r: &RefRules, cells: &[Option<Piece>], c: Color, s: Sq) -> Vec<(Sq, Sq)> {
    if r.in_opp_castle(c, s) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for d in DIRS {
        let m = add(s, d, 1);
        let t = add(s, d, 2);
        if !r.on_board(m) || !r.on_board(t) {
            continue;
        }
        let friend = r.at(cells, m).is_some_and(|p| p.color == c);
        if friend && r.empty(cells, t) {
            out.push((m, t));
        }
    }
    out
}

/// Enumerates the paths of one piece that obey sections 3 and 4 (and 5.D), by depth-first
/// search. Section 5 A-C is applied afterwards by `legal`.
struct Gen<'a> {
    r: &'a RefRules,
    color: Color,
    knight: bool,
    origin: Sq,
    out: Vec<Path>,
}

impl Gen<'_> {
    /// Extends `path` by jump legs (the jump part of a jump or of a charge). Records the path
    /// once it has at least one jump leg and must stop.
    fn jumps(&mut self, cells: &mut [Option<Piece>], path: &mut Path) {
        let r = self.r;
        let cur = path.end();
        let jumped = !path.captured.is_empty();
        let must_stop = jumped
            && (r.single_capture_per_move // 5.D
                || r.in_opp_castle(self.color, cur) // 4.3: entering OppCastle ends it
                || (r.own_castle_jump_ends && r.in_own_castle(self.color, cur)));
        let legs = if must_stop { Vec::new() } else { jump_legs(r, cells, self.color, cur) };
        if legs.is_empty() {
            if jumped {
                self.out.push(path.clone());
            }
            return;
        }
        // 4.3: it must continue while a jump leg is available; any continuation may be chosen.
        for (m, t) in legs {
            let i = r.idx(m);
            let taken = cells[i].take(); // the jumped piece is removed at once
            path.legs.push((Leg::Jump, t));
            path.captured.push(m);
            self.jumps(cells, path);
            path.legs.pop();
            path.captured.pop();
            cells[i] = taken;
        }
    }

    /// Extends `path` by canter legs; records every pure canter that may stop here and, for a
    /// knight, every charge that starts its jump part here.
    fn canters(&mut self, cells: &mut [Option<Piece>], path: &mut Path, landed: &mut Vec<Sq>) {
        let r = self.r;
        let c = self.color;
        for (_, t) in canter_legs(r, cells, c, path.end()) {
            // 4.2: never lands twice on the same square.
            if landed.contains(&t) {
                continue;
            }
            // 3: a canter leg may not land in OwnCastle, except (flag) within a charge, which
            // always captures; such a path is then never recorded as a pure canter below.
            let own = r.in_own_castle(c, t);
            if own && !(self.knight && r.charge_may_enter_own_castle_if_capturing) {
                continue;
            }
            path.legs.push((Leg::Canter, t));
            landed.push(t);
            // 4.2: a canter must not end on its origin (nor may the canter part of a charge).
            // Passing through the origin is not forbidden by the text (see the report); it never
            // changes the set of moves, since the shorter path is then also legal.
            if t != self.origin {
                let entered_own = landed.iter().any(|&l| r.in_own_castle(c, l));
                if !entered_own {
                    self.out.push(path.clone());
                }
                if self.knight {
                    self.jumps(cells, path); // 4.4: knight's charge
                }
            }
            // 4.2: the canter ends on entering OppCastle (canter_legs gives none from there).
            self.canters(cells, path, landed);
            path.legs.pop();
            landed.pop();
        }
    }
}

/// Every path of the piece on `s` obeying sections 3, 4 and 5.D (not yet 5.A-C).
fn piece_paths(r: &RefRules, pos: &Pos, s: Sq) -> Vec<Path> {
    let c = pos.side;
    let piece = r.at(&pos.cells, s).expect("no piece on origin");
    let mut out = Vec::new();
    // Plain steps.
    if r.in_opp_castle(c, s) {
        let allowed = r.max_castle_moves.is_none_or(|max| pos.castle_moves[c.index()] < max);
        if allowed {
            for t in r.opp_castle(c) {
                let adjacent = (t.0 - s.0).abs() <= 1 && (t.1 - s.1).abs() <= 1;
                if t != s && adjacent && r.empty(&pos.cells, t) {
                    out.push(Path { origin: s, legs: vec![(Leg::Step, t)], captured: Vec::new() });
                }
            }
        }
    } else {
        for d in DIRS {
            let t = add(s, d, 1);
            if r.on_board(t) && r.empty(&pos.cells, t) && !r.in_own_castle(c, t) {
                out.push(Path { origin: s, legs: vec![(Leg::Step, t)], captured: Vec::new() });
            }
        }
    }
    // Canters, charges and jumps: the origin counts as empty once the piece starts.
    let mut cells = pos.cells.clone();
    cells[r.idx(s)] = None;
    let mut g = Gen { r, color: c, knight: piece.knight, origin: s, out };
    let mut path = Path { origin: s, legs: Vec::new(), captured: Vec::new() };
    g.canters(&mut cells, &mut path, &mut Vec::new());
    g.jumps(&mut cells, &mut path);
    g.out
}

/// What section 5 needs to know about the turn as a whole.
struct Turn {
    /// 5.A: the piece standing in its own castle at the start of the turn.
    exit_piece: Option<Sq>,
    /// The move must capture (5.A with `has_jump(X)`, or 5.B).
    must_capture: bool,
}

fn turn_of(r: &RefRules, pos: &Pos) -> Turn {
    let c = pos.side;
    let mine: Vec<Sq> =
        r.all_squares().into_iter().filter(|&sq| r.at(&pos.cells, sq).is_some_and(|p| p.color == c)).collect();
    let exit_piece = mine.iter().copied().find(|&sq| r.in_own_castle(c, sq));
    let must_capture = match exit_piece {
        Some(x) => has_jump(r, &pos.cells, c, x),
        None => mine.iter().any(|&sq| has_jump(r, &pos.cells, c, sq)),
    };
    Turn { exit_piece, must_capture }
}

/// Section 5 A-C applied to one path of sections 3-4.
fn legal(r: &RefRules, pos: &Pos, turn: &Turn, path: &Path) -> bool {
    let c = pos.side;
    let captures = !path.captured.is_empty();
    // A. Own-castle exit.
    if let Some(x) = turn.exit_piece {
        if path.origin != x || r.in_own_castle(c, path.end()) {
            return false;
        }
    }
    // A (capture when has_jump(X)) or B (compulsory capture).
    if turn.must_capture && !captures {
        return false;
    }
    // C. Knight's canter next to a capture (men are not subject to it).
    let knight = r.at(&pos.cells, path.origin).is_some_and(|p| p.knight);
    let landings = path.canter_landings();
    if knight && !landings.is_empty() {
        // The board during the canter part: the origin is empty, nothing else has changed.
        let mut cells = pos.cells.clone();
        cells[r.idx(path.origin)] = None;
        let hot: Vec<bool> = landings.iter().map(|&t| has_jump(r, &cells, c, t)).collect();
        let n = hot.len();
        let ok = match r.charge_rule {
            // Any hot landing: the move must capture.
            ChargeRule::Later => captures || !hot.iter().any(|&h| h),
            // At the first hot landing the knight must start jumping from there: every landing
            // before the last is cool, and the last is cool unless the jump part starts there.
            ChargeRule::Immediate => !hot[..n - 1].iter().any(|&h| h) && (captures || !hot[n - 1]),
            // It may not stop on a hot landing without jumping from it.
            ChargeRule::Final => captures || !hot[n - 1],
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The position after playing `path` (RULES section 9, "after a move").
fn apply(r: &RefRules, pos: &Pos, path: &Path) -> Pos {
    let mover = pos.side;
    let mut next = pos.clone();
    let piece = next.cells[r.idx(path.origin)].take();
    for &m in &path.captured {
        next.cells[r.idx(m)] = None;
    }
    let end = path.end();
    next.cells[r.idx(end)] = piece;
    let castle_move = path.legs.len() == 1 && path.legs[0].0 == Leg::Step && r.in_opp_castle(mover, path.origin);
    if castle_move {
        next.castle_moves[mover.index()] += 1;
    }
    // A castle move is progress only while castle moves are limited (else shuttling between
    // the castle squares would never end the game).
    let entered = r.in_opp_castle(mover, end) && !(castle_move && r.max_castle_moves.is_none());
    next.no_progress = if !path.captured.is_empty() || entered { 0 } else { pos.no_progress + 1 };
    if mover == Color::Black {
        next.move_number += 1;
    }
    next.side = mover.other();
    next
}

/// Every legal path with the position it gives, ignoring whether the game is over.
fn legal_paths(r: &RefRules, pos: &Pos) -> Vec<(Path, Pos)> {
    let turn = turn_of(r, pos);
    let mut out = Vec::new();
    for s in r.all_squares() {
        if !r.at(&pos.cells, s).is_some_and(|p| p.color == pos.side) {
            continue;
        }
        for path in piece_paths(r, pos, s) {
            if legal(r, pos, &turn, &path) {
                let next = apply(r, pos, &path);
                out.push((path, next));
            }
        }
    }
    out
}

/// Section 6 conditions 1, 2 and 3, with M = the side not to move.
fn over_before_moves(r: &RefRules, pos: &Pos) -> Option<String> {
    let m = pos.side.other();
    let o = pos.side;
    // 1. M holds enough squares of OppCastle(M).
    let held = r.opp_castle(m).iter().filter(|&&sq| r.at(&pos.cells, sq).is_some_and(|p| p.color == m)).count();
    if held >= r.castle_squares_to_win {
        return Some(m.wins());
    }
    // 2. Material draw.
    if r.material_draw && r.count(&pos.cells, m) <= 1 && r.count(&pos.cells, o) <= 1 {
        return Some("draw".to_string());
    }
    // 3. O has no pieces.
    if r.count(&pos.cells, o) == 0 {
        return Some(m.wins());
    }
    None
}

/// Section 6 condition 7.
fn no_progress_draw(r: &RefRules, pos: &Pos) -> bool {
    r.no_progress_plies.is_some_and(|n| pos.no_progress >= n)
}

/// Moves of a position (empty if the game is over by 1, 2, 3 or 7): canonical path and the
/// position after it, sorted by path string.
fn moves_of(r: &RefRules, pos: &Pos) -> Vec<(String, Pos)> {
    if over_before_moves(r, pos).is_some() || no_progress_draw(r, pos) {
        return Vec::new();
    }
    // Group paths by the resulting position; keep the canonical path of each group.
    let mut best: HashMap<Vec<u8>, (usize, String, Pos)> = HashMap::new();
    for (path, next) in legal_paths(r, pos) {
        let cand = (path.legs.len(), path.text());
        match best.entry(next.key()) {
            Entry::Occupied(mut e) => {
                let entry = e.get_mut();
                if (cand.0, &cand.1) < (entry.0, &entry.1) {
                    (entry.0, entry.1) = cand;
                }
            }
            Entry::Vacant(e) => {
                e.insert((cand.0, cand.1, next));
            }
        }
    }
    let mut out: Vec<(String, Pos)> = best.into_values().map(|(_, s, p)| (s, p)).collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn perft_pos(r: &RefRules, pos: &Pos, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = moves_of(r, pos);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves.iter().map(|(_, p)| perft_pos(r, p, depth - 1)).sum()
}

// ----- Public API -----

/// The set-up as CPN.
pub fn start_cpn(r: &RefRules) -> String {
    r.write_cpn(&r.start_pos())
}

/// Every legal move, keyed by canonical path, with the CPN after it. Empty when the game is
/// over at `cpn` (section 6 conditions 1, 2, 3, 7) or there is no legal move.
pub fn ref_moves(r: &RefRules, cpn: &str) -> BTreeMap<String, String> {
    let pos = r.parse_cpn(cpn);
    moves_of(r, &pos).into_iter().map(|(s, p)| (s, r.write_cpn(&p))).collect()
}

/// Every legal *path* (canonical or not), keyed by its string, with the CPN after it. Empty when
/// the game is over at `cpn` (conditions 1, 2, 3, 7).
pub fn ref_paths(r: &RefRules, cpn: &str) -> BTreeMap<String, String> {
    let pos = r.parse_cpn(cpn);
    if over_before_moves(r, &pos).is_some() || no_progress_draw(r, &pos) {
        return BTreeMap::new();
    }
    legal_paths(r, &pos).into_iter().map(|(path, next)| (path.text(), r.write_cpn(&next))).collect()
}

/// Plays a move named by any legal path (any letter case): the CPN after it, or `None` if no
/// legal path has that name.
pub fn ref_play(r: &RefRules, cpn: &str, path: &str) -> Option<String> {
    ref_paths(r, cpn).remove(&path.trim().to_ascii_uppercase().replace('X', "x"))
}

/// `Some("white wins" | "black wins" | "draw")` if the game is over at `cpn` by section 6
/// conditions 1, 2, 3, 4 or 7 (in that order), else `None`.
pub fn ref_outcome(r: &RefRules, cpn: &str) -> Option<String> {
    let pos = r.parse_cpn(cpn);
    if let Some(o) = over_before_moves(r, &pos) {
        return Some(o);
    }
    // 4. O, to move, has no legal move.
    if legal_paths(r, &pos).is_empty() {
        let m = pos.side.other();
        return Some(if r.count(&pos.cells, m) >= r.min_pieces_to_win { m.wins() } else { "draw".to_string() });
    }
    if no_progress_draw(r, &pos) {
        return Some("draw".to_string());
    }
    None
}

/// Leaf count: a node's children are its `ref_moves` (a finished position has none).
pub fn ref_perft(r: &RefRules, cpn: &str, depth: u32) -> u64 {
    perft_pos(r, &r.parse_cpn(cpn), depth)
}

/// A CPN from a piece list like `"Kd4 Md5 mc7"` (letter then square), side to move and the
/// castle-move field; no-progress plies 0, move number 1.
pub fn ref_cpn(r: &RefRules, pieces: &str, side: char, castles: &str) -> String {
    let mut pos = r.start_pos();
    pos.cells.iter_mut().for_each(|c| *c = None);
    for item in pieces.split_whitespace() {
        let mut chars = item.chars();
        let p = Piece::from_letter(chars.next().expect("empty item")).expect("bad piece letter");
        let sq = parse_sq(chars.as_str()).expect("bad square");
        assert!(r.on_board(sq), "{item}: square not on the board");
        pos.cells[r.idx(sq)] = Some(p);
    }
    pos.side = if side == 'w' { Color::White } else { Color::Black };
    let cpn = r.write_cpn(&pos);
    let fields: Vec<&str> = cpn.split_whitespace().collect();
    let cpn = format!("{} {} {} 0 1", fields[0], fields[1], castles);
    // Round trip through the parser, so malformed set-ups fail here.
    r.write_cpn(&r.parse_cpn(&cpn))
}
