//! Reading moves: a move written as any well-formed path that makes a legal move, with an
//! optional move number and annotations; a refused move says why.

use crate::bitboard::Bitboard;
use crate::error::{Error, Result};
use crate::movegen::{Context, Move, MoveKind};
use crate::notation::Path;
use crate::position::Position;
use crate::ruleset::{ChargeRule, Ruleset};
use crate::square::{Role, Square, DIRECTION_DELTAS};

impl Ruleset {
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
pub(crate) fn parse_path(rules: &Ruleset, text: &str) -> std::result::Result<Path, String> {
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
