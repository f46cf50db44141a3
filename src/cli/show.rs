//! `camelot show`: a position drawn with coordinates.

use super::{PositionArgs, RulesArgs};
use anyhow::Result;
use camelot_rules::{Color, Position, Ruleset, Square};
use clap::Args;

/// Arguments of `camelot show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    rules: RulesArgs,
    #[command(flatten)]
    position: PositionArgs,
}

/// Prints the board.
pub fn run(args: ShowArgs) -> Result<()> {
    let rules = args.rules.ruleset()?;
    let pos = args.position.position(&rules)?;
    out!("{}", draw(&rules, &pos))?;
    Ok(())
}

/// The board as text: rank numbers on both sides, file letters above and below; pieces as
/// `K M k m`, empty squares `.`, empty castle squares `#`, squares off the board blank.
pub fn draw(rules: &Ruleset, pos: &Position) -> String {
    let board = rules.board();
    let castles = board.own_castle(Color::White) | board.own_castle(Color::Black);
    let letters: String = (0..board.files()).map(|f| format!(" {}", (b'A' + f) as char)).collect();
    let mut out = format!("   {letters}\n");
    for rank in (0..board.ranks()).rev() {
        out.push_str(&format!("{:>2} ", rank + 1));
        for file in 0..board.files() {
            let sq = Square::new(file, rank);
            let c = match pos.piece_at(sq) {
                Some(piece) => piece.letter(),
                None if castles.contains(sq) => '#',
                None if board.contains(sq) => '.',
                None => ' ',
            };
            out.push(' ');
            out.push(c);
        }
        out.push_str(&format!("  {}\n", rank + 1));
    }
    out.push_str(&format!("   {letters}\n"));
    let castle = if rules.has_castle_moves() {
        format!(", castle moves used {}/{}", pos.castle_moves(Color::White), pos.castle_moves(Color::Black))
    } else {
        String::new()
    };
    out.push_str(&format!(
        "{} to move, move {}, {} plies without progress{castle}\n",
        pos.turn().name(),
        pos.fullmove(),
        pos.no_progress_plies()
    ));
    out
}
