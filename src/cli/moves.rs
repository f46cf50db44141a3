//! `camelot moves`: the legal moves of a position.

use super::{PositionArgs, RulesArgs};
use anyhow::Result;
use camelot_rules::Game;
use clap::Args;
use std::sync::Arc;

/// Arguments of `camelot moves`.
#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    rules: RulesArgs,
    #[command(flatten)]
    position: PositionArgs,
}

/// One `MOVE<TAB>CPN` line per legal move, sorted by the move string. On a finished game it
/// prints no move and says on standard error who won and why.
pub fn run(args: MovesArgs) -> Result<()> {
    let rules = Arc::new(args.rules.ruleset()?);
    let pos = args.position.position(&rules)?;
    let game = Game::from_position(rules.clone(), pos);
    if let Some(outcome) = game.outcome() {
        errln!("game over: {outcome}");
        return Ok(());
    }
    let mut out = String::new();
    for (mv, path) in rules.legal_moves_with_paths(&pos) {
        let mut after = pos;
        rules.play(&mut after, &mv);
        out.push_str(&format!("{path}\t{}\n", rules.to_cpn(&after)));
    }
    out!("{out}")?;
    Ok(())
}
