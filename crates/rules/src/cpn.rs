//! Position text, CPN (RULES.md section 9):
//! `<placement> <side> <castle moves> <no-progress plies> <move number>`.

use crate::error::{Error, Result};
use crate::position::Position;
use crate::ruleset::Ruleset;
use crate::square::{Color, Piece, Role};

impl Ruleset {
    /// Writes `pos` as CPN.
    pub fn to_cpn(&self, pos: &Position) -> String {
        let board = self.board();
        let mut out = String::with_capacity(96);
        for rank in (0..board.ranks()).rev() {
            let mut empties = 0;
            for sq in board.rank_squares(rank) {
                match pos.piece_at(sq) {
                    Some(piece) => {
                        if empties > 0 {
                            out.push_str(&empties.to_string());
                            empties = 0;
                        }
                        out.push(piece.letter());
                    }
                    None => empties += 1,
                }
            }
            if empties > 0 {
                out.push_str(&empties.to_string());
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out.push(' ');
        out.push(if pos.turn() == Color::White { 'w' } else { 'b' });
        if self.has_castle_moves() {
            out.push_str(&format!(" {}/{}", pos.castle_moves(Color::White), pos.castle_moves(Color::Black)));
        } else {
            out.push_str(" -");
        }
        out.push_str(&format!(" {} {}", pos.no_progress_plies(), pos.fullmove()));
        out
    }

    /// Reads CPN. The last two fields may be omitted (read as `0 1`). Malformed text is refused
    /// with an error naming the rank or field at fault.
    pub fn parse_cpn(&self, text: &str) -> Result<Position> {
        let board = self.board();
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() < 3 || fields.len() > 5 {
            return Err(Error::cpn(
                "fields",
                format!(
                    "expected `<placement> <side> <castle moves> [<no-progress plies> <move number>]`, found {} \
                     field(s)",
                    fields.len()
                ),
            ));
        }
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != board.ranks() as usize {
            return Err(Error::cpn(
                "placement",
                format!(
                    "the {} board has {} ranks separated by `/`, found {}",
                    board.name(),
                    board.ranks(),
                    ranks.len()
                ),
            ));
        }
        let mut pos = Position::empty();
        for (i, rank_text) in ranks.iter().enumerate() {
            let rank = board.ranks() - 1 - i as u8;
            let field = format!("rank {}", rank + 1);
            let squares: Vec<_> = board.rank_squares(rank).collect();
            let mut at = 0usize;
            let mut chars = rank_text.char_indices().peekable();
            while let Some((start, c)) = chars.next() {
                if c.is_ascii_digit() {
                    let mut end = start + 1;
                    while let Some(&(j, d)) = chars.peek() {
                        if !d.is_ascii_digit() {
                            break;
                        }
                        end = j + 1;
                        chars.next();
                    }
                    let run: usize = rank_text[start..end].parse().map_err(|_| {
                        Error::cpn(&field, format!("empty-square count `{}` is too large", &rank_text[start..end]))
                    })?;
                    if run == 0 {
                        return Err(Error::cpn(&field, "an empty-square count must be at least 1"));
                    }
                    // One spelling per position: the writer never pads a count.
                    if rank_text[start..end].starts_with('0') {
                        return Err(Error::cpn(
                            &field,
                            format!("empty-square count `{}` has a leading zero", &rank_text[start..end]),
                        ));
                    }
                    at = at.saturating_add(run);
                } else {
                    let piece = Piece::from_letter(c).ok_or_else(|| {
                        Error::cpn(&field, format!("unknown piece letter `{c}` (expected K, M, k or m, or a count)"))
                    })?;
                    if let Some(&sq) = squares.get(at) {
                        pos.put(sq, piece);
                    }
                    at += 1;
                }
                if at > squares.len() {
                    break;
                }
            }
            if at != squares.len() {
                return Err(Error::cpn(
                    &field,
                    format!(
                        "describes {} square(s), the rank has {}",
                        if at > squares.len() { "too many".to_string() } else { at.to_string() },
                        squares.len()
                    ),
                ));
            }
        }
        pos.set_turn(match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(Error::cpn("side to move", format!("`{other}` is neither `w` nor `b`"))),
        });
        self.read_castle_moves(fields[2], &mut pos)?;
        let number = |i: usize, name: &str, default: u32| -> Result<u32> {
            match fields.get(i) {
                None => Ok(default),
                Some(t) => parse_counter(t, name),
            }
        };
        let no_progress = number(3, "no-progress plies", 0)?;
        let fullmove = number(4, "move number", 1)?;
        if fullmove == 0 {
            return Err(Error::cpn("move number", "must be at least 1"));
        }
        pos.set_counters(no_progress, fullmove);
        self.validate_material(&pos)?;
        pos.rehash(self);
        Ok(pos)
    }

    fn read_castle_moves(&self, text: &str, pos: &mut Position) -> Result<()> {
        let field = "castle moves";
        if !self.has_castle_moves() {
            return match text {
                "-" | "0/0" => Ok(()),
                _ => Err(Error::cpn(
                    field,
                    format!("`{text}`: the {} board has one-square castles, write `-`", self.board().name()),
                )),
            };
        }
        let (w, b) = text
            .split_once('/')
            .ok_or_else(|| Error::cpn(field, format!("`{text}` is not of the form W/B, e.g. 0/1")))?;
        for (color, count) in [(Color::White, w), (Color::Black, b)] {
            let n = parse_counter(count, field)?;
            if let Some(max) = self.flags().max_castle_moves {
                if n > max {
                    return Err(Error::cpn(field, format!("{} used {n}, the limit is {max}", color.name())));
                }
            }
            pos.set_castle_moves(color, n);
        }
        Ok(())
    }

    fn validate_material(&self, pos: &Position) -> Result<()> {
        let to_move = pos.turn();
        let last_mover = to_move.opponent();
        if pos.pieces(last_mover).is_empty() {
            return Err(Error::cpn(
                "placement",
                format!("{} has no pieces, so it cannot have made the last move", last_mover.name()),
            ));
        }
        let held = pos.pieces(to_move) & self.board().opp_castle(to_move);
        if held.count() >= self.flags().castle_squares_to_win {
            let rank = held.first().map_or(0, |s| s.rank() + 1);
            return Err(Error::cpn(
                format!("rank {rank}"),
                format!(
                    "{} to move already holds the opponent's castle: the game ended on its previous move",
                    to_move.name()
                ),
            ));
        }
        for color in Color::BOTH {
            let in_castle = pos.pieces(color) & self.board().own_castle(color);
            if in_castle.count() > 1 {
                let rank = in_castle.first().map_or(0, |s| s.rank() + 1);
                return Err(Error::cpn(
                    format!("rank {rank}"),
                    format!(
                        "{} pieces of {} in its own castle; at most one can have jumped in",
                        in_castle.count(),
                        color.name()
                    ),
                ));
            }
            for (role, name) in [(Role::Knight, "knights"), (Role::Man, "men")] {
                let have = pos.role(color, role).count();
                let setup = self.setup(color, role).count();
                if have > setup {
                    return Err(Error::cpn(
                        "placement",
                        format!("{} has {have} {name}, more than the {setup} of the set-up", color.name()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Counters above this are refused: no game reaches them, and the next move must be able to
/// count on without overflowing.
pub const MAX_COUNTER: u32 = 999_999_999;

fn parse_counter(text: &str, field: &str) -> Result<u32> {
    match text.parse::<u32>() {
        Ok(n) if n <= MAX_COUNTER && text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        Ok(_) => Err(Error::cpn(field, format!("`{text}` exceeds the largest counter, {MAX_COUNTER}"))),
        Err(_) => Err(Error::cpn(field, format!("`{text}` is not a non-negative integer"))),
    }
}
