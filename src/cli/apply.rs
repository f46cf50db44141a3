//! `camelot apply`: play moves in notation and print the resulting CPN.

use super::{position, RulesArgs};
use anyhow::{bail, Result};
use camelot_rules::{Error, Game};
use clap::Args;
use std::sync::Arc;

/// Arguments of `camelot apply`.
#[derive(Args, Debug)]
pub struct ApplyArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Start position as CPN (default: the variant's start).
    #[arg(long)]
    position: Option<String>,
    /// Moves: `12.H7-H9`, `12....I11-G11`, bare `H7-H9`, with or without `!`/`?` annotations;
    /// a lone move number (`12.`) is also accepted.
    #[arg(allow_hyphen_values = true)]
    moves: Vec<String>,
}

/// Prints the CPN after the last move; an illegal or unreadable move fails with its index.
pub fn run(args: ApplyArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let pos = position(&rules, args.position.as_deref())?;
    let mut game = Game::from_position(rules.clone(), pos);
    for (i, text) in args.moves.iter().enumerate() {
        let lone_number = text.trim_end_matches('.').chars().all(|c| c.is_ascii_digit()) && text.ends_with('.');
        let result = if lone_number {
            rules.parse_move(game.position(), text).map(|_| ())
        } else {
            game.play_text(text).map(|_| ())
        };
        match result {
            Ok(()) => {}
            // A lone number token has no move after it; only its number check matters.
            Err(Error::Move { reason, .. }) if lone_number && !reason.contains("move number") => {}
            Err(Error::Move { reason, .. }) => bail!("move {} `{text}`: {reason}", i + 1),
            Err(other) => bail!("move {} `{text}`: {other}", i + 1),
        }
    }
    println!("{}", rules.to_cpn(game.position()));
    Ok(())
}
