//! `camelot serve`: a web page on this machine to play against a network or any player spec.
//! The page draws the board as SVG and moves by clicks; the server keeps each game (one per
//! id, so several tabs play apart), checks every move and computes the engine's replies with
//! the same seat as `camelot engine`. The API is described in docs/SERVE.md.
//!
//! * [`api`]: the routes, the page's embedded files and the JSON API.
//! * [`games`]: the games by id and the state the page draws.
//! * [`http`]: one HTTP/1.1 request per connection, with limits on everything read.

mod api;
mod games;
mod http;

use super::RulesArgs;
use anyhow::{anyhow, bail, Context, Result};
use api::{Api, Outgoing, Settings};
use camelot_arena::PlayerSpec;
use clap::Args;
use std::io::{ErrorKind, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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

/// The player when neither `--player` nor `--model` is given (as `camelot engine`).
const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";

/// Connections served at once; more are refused with 503 rather than queued without bound.
const MAX_CONNECTIONS: usize = 32;

/// Serves the page until the process is stopped.
pub fn run(args: ServeArgs) -> Result<()> {
    let mut texts: Vec<String> = args.model.iter().map(|m| format!("mcts:model={m}")).collect();
    texts.extend(args.player.iter().cloned());
    if texts.is_empty() {
        texts.push(DEFAULT_PLAYER.to_string());
    }
    let mut players = Vec::new();
    for text in &texts {
        let spec = PlayerSpec::parse(text).with_context(|| format!("player `{text}`"))?;
        if spec.is_human() {
            bail!("player `human`: the person plays on the page; give the engine's player");
        }
        if !players.contains(&spec) {
            players.push(spec);
        }
    }
    let listener = TcpListener::bind((args.bind, args.port))
        .with_context(|| format!("listening on {}", SocketAddr::new(args.bind, args.port)))?;
    let address = listener.local_addr().context("reading the address listened on")?;
    let hosts = args.bind.is_loopback().then(|| loopback_hosts(address));
    let api = Api::new(Settings {
        players,
        variant: args.rules.variant.clone(),
        overrides: args.rules.set.clone(),
        seed: args.seed,
        hosts,
    });
    api.check_players().map_err(|e| anyhow!(e))?;
    // The first line is the address, for people and for tests that start on port 0.
    println!("camelot serve: listening on http://{address}/");
    if !args.bind.is_loopback() {
        println!("camelot serve: {} is not a loopback address: anyone who can reach it can play", args.bind);
    }
    std::io::stdout().flush().context("writing standard output")?;
    let api = Arc::new(api);
    let live = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => serve_connection(stream, &api, &live),
            // A connection that failed before it was accepted concerns only that client.
            Err(err) => eprintln!("camelot serve: accepting a connection: {err}"),
        }
    }
    Ok(())
}

/// The `Host` values a browser sends for this server on a loopback address.
fn loopback_hosts(address: SocketAddr) -> Vec<String> {
    vec![address.to_string(), format!("localhost:{}", address.port())]
}

/// Answers one connection on a thread of its own (an engine reply can take seconds).
fn serve_connection(mut stream: TcpStream, api: &Arc<Api>, live: &Arc<AtomicUsize>) {
    let _ = stream.set_read_timeout(Some(http::IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(http::IO_TIMEOUT));
    if live.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
        live.fetch_sub(1, Ordering::SeqCst);
        let busy = Outgoing::error(503, format!("busy: {MAX_CONNECTIONS} connections already"));
        // Written from the accepting thread, so no lingering close: the answer is short.
        let _ = http::send(&mut stream, &busy);
        return;
    }
    let api = Arc::clone(api);
    let live_here = Arc::clone(live);
    let spawned = std::thread::Builder::new().name("serve-connection".to_string()).spawn(move || {
        if let Err(err) = http::exchange(&mut stream, &api) {
            // A client that hangs up or stalls has only itself to tell; anything else is ours.
            let theirs = matches!(
                err.kind(),
                ErrorKind::BrokenPipe
                    | ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::UnexpectedEof
                    | ErrorKind::WouldBlock
                    | ErrorKind::TimedOut
            );
            if !theirs {
                eprintln!("camelot serve: connection: {err}");
            }
        }
        http::close(&stream);
        live_here.fetch_sub(1, Ordering::SeqCst);
    });
    if let Err(err) = spawned {
        live.fetch_sub(1, Ordering::SeqCst);
        eprintln!("camelot serve: starting a connection thread: {err}");
    }
}
