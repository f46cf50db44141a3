//! `camelot serve`: a web page on this machine to play against a network or any player spec
//! (camelot_frontend::serve; docs/SERVE.md).

use super::RulesArgs;
use anyhow::{Context, Result};
use camelot_arena::PlayerSpec;
use camelot_frontend::serve::{ServeSettings, Server};
use camelot_frontend::DEFAULT_PLAYER;
use clap::Args;
use std::io::Write;
use std::net::IpAddr;

/// Arguments of `camelot serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// A network checkpoint to play against: shorthand for `--player mcts:model=M` (repeatable;
    /// the page offers every player given, the first by default).
    #[arg(long, value_name = "M")]
    model: Vec<String>,
    /// A player spec to play against: random, greedy, alphabeta:depth=3, alphabeta:ms=200,
    /// uct:sims=1000, mcts:model=PATH,sims=200 (repeatable) [default: alphabeta:ms=1000].
    #[arg(long, value_name = "SPEC")]
    player: Vec<String>,
    /// Address to listen on. Other than a loopback address, anyone who can reach this machine
    /// can play (there is no login).
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Port to listen on; 0 picks a free one (the address is printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Seed of the players' random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Serves the page until the process is stopped.
pub fn run(args: ServeArgs) -> Result<()> {
    let mut texts: Vec<String> = args.model.iter().map(|m| format!("mcts:model={m}")).collect();
    texts.extend(args.player.iter().cloned());
    if texts.is_empty() {
        texts.push(DEFAULT_PLAYER.to_string());
    }
    let players = texts
        .iter()
        .map(|text| PlayerSpec::parse(text).with_context(|| format!("player `{text}`")))
        .collect::<Result<Vec<_>>>()?;
    // The models' own variant is the default: `--model` of a Camette network plays Camette.
    let variant = args.rules.variant_for_models(&args.model.iter().map(String::as_str).collect::<Vec<_>>())?;
    let server = Server::bind(ServeSettings {
        players,
        variant,
        overrides: args.rules.set.clone(),
        seed: args.seed,
        bind: args.bind,
        port: args.port,
    })?;
    // The first line is the address, for people and for tests that start on port 0.
    outln!("camelot serve: listening on http://{}/", server.address())?;
    if !args.bind.is_loopback() {
        outln!("camelot serve: {} is not a loopback address: anyone who can reach it can play", args.bind)?;
    }
    std::io::stdout().flush().context("writing standard output")?;
    Ok(server.run()?)
}
