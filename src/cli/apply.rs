//! `camelot apply`: play moves in notation and print the resulting CPN.

use super::{PositionArgs, RulesArgs};
use anyhow::{anyhow, Result};
use camelot_rules::{strip_move_number, Error, Game};
use clap::Args;
use std::sync::Arc;

/// Arguments of `camelot apply`.
#[derive(Args, Debug)]
pub struct ApplyArgs {
    #[command(flatten)]
    rules: RulesArgs,
    #[command(flatten)]
    position: PositionArgs,
    /// Moves: `12.H7-H9`, `12....I11-G11`, bare `H7-H9`, with or without `!`/`?` annotations;
    /// a lone move number (`12.`) is also accepted.
    #[arg(allow_hyphen_values = true)]
    moves: Vec<String>,
}

/// Prints the CPN after the last move; an illegal or unreadable move fails with its index.
pub fn run(args: ApplyArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let pos = args.position.position(&rules)?;
    let mut game = Game::from_position(rules.clone(), pos);
    for (i, text) in args.moves.iter().enumerate() {
        let refuse = |err: Error| match err {
            Error::Move { reason, .. } => anyhow!("move {} `{text}`: {reason}", i + 1),
            other => anyhow!("move {} `{text}`: {other}", i + 1),
        };
        // A lone move number (`12.`) has no move after it; only its number is checked.
        if strip_move_number(game.position(), text).map_err(refuse)?.is_empty() {
            continue;
        }
        game.play_text(text).map_err(refuse)?;
    }
    outln!("{}", rules.to_cpn(game.position()))?;
    Ok(())
}
