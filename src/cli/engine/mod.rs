//! `camelot engine`: any player behind a line protocol on standard input and output, in the
//! shape of UGI (the game-neutral form of UCI), so that front ends, match runners and the web
//! board drive it the way chess GUIs drive an engine. The protocol is described in
//! docs/ENGINE.md.
//!
//! * [`command`]: one line into a command (shape only).
//! * [`session`]: the game, the options and the answer to each command.
//! * [`limits`]: `go nodes|movetime|wtime ...` into the player spec's own keys.
//! * [`info`]: the `info` line from what the player reports.
//! * [`seat`]: the player built from the spec and one guarded search (shared with `serve`).

mod command;
pub(crate) mod info;
mod limits;
pub(crate) mod seat;
mod session;

use super::RulesArgs;
use anyhow::{anyhow, Context, Result};
use camelot_arena::PlayerSpec;
use clap::Args;
use session::{EngineSettings, Flow, Session};
use std::io::{BufRead, Write};

/// Arguments of `camelot engine`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// A network checkpoint to play with: shorthand for `--player mcts:model=M`.
    #[arg(long, value_name = "M", conflicts_with = "player")]
    model: Option<String>,
    /// The player's spec: random, greedy, alphabeta:depth=3, alphabeta:ms=200, uct:sims=1000,
    /// mcts:model=PATH,sims=200 [default: alphabeta:ms=1000].
    #[arg(long, value_name = "SPEC")]
    player: Option<String>,
    /// Seed of the player's random choices (also the `Seed` option).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Milliseconds kept back from every timed search for input, output and the front end's
    /// latency (also the `MoveOverhead` option).
    #[arg(long, default_value_t = 30)]
    move_overhead: u64,
}

/// The player when neither `--player` nor `--model` is given.
const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";

/// Runs the protocol until `quit` or the end of standard input.
pub fn run(args: EngineArgs) -> Result<()> {
    let spec = match (&args.model, &args.player) {
        (Some(model), _) => format!("mcts:model={model}"),
        (None, Some(player)) => player.clone(),
        (None, None) => DEFAULT_PLAYER.to_string(),
    };
    let spec = PlayerSpec::parse(&spec).with_context(|| format!("player `{spec}`"))?;
    let settings = EngineSettings {
        spec,
        variant: args.rules.variant.clone(),
        overrides: args.rules.set.clone(),
        seed: args.seed,
        move_overhead_ms: args.move_overhead,
    };
    let mut session = Session::new(settings).map_err(|e| anyhow!(e))?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes).context("reading standard input")? == 0 {
            return Ok(());
        }
        // Bytes that are not UTF-8 become replacement characters and then an error line, not
        // the end of the session.
        let line = String::from_utf8_lossy(&bytes);
        let flow = session.handle_line(&line, &mut out).context("writing standard output")?;
        out.flush().context("writing standard output")?;
        if flow == Flow::Quit {
            return Ok(());
        }
    }
}
