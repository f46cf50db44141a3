//! The web board: a page on this machine to play against a network or any player spec. The
//! page draws the board as SVG and moves by clicks; the server keeps each game (one per id, so
//! several tabs play apart), checks every move and computes the engine's replies with the same
//! seat as the engine protocol. The API is described in docs/SERVE.md.
//!
//! * [`api`]: the routes, the page's embedded files and the JSON API.
//! * [`games`]: the games by id and the state the page draws.
//! * [`http`]: one HTTP/1.1 request per connection, with limits on everything read.

pub mod api;
pub mod games;
pub mod http;

use crate::FrontendError;
use api::{Api, Outgoing, Settings};
use camelot_arena::PlayerSpec;
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What `camelot serve` plays with and where it listens.
#[derive(Clone, Debug)]
pub struct ServeSettings {
    /// The players the page offers, the first by default (at least one; no `human`).
    pub players: Vec<PlayerSpec>,
    /// The default variant.
    pub variant: String,
    /// Ruleset flag overrides (`--set`), applied to every variant.
    pub overrides: Vec<String>,
    /// Seed of the players' random choices.
    pub seed: u64,
    /// Address to listen on. Other than a loopback address, anyone who can reach this machine
    /// can play (there is no login).
    pub bind: IpAddr,
    /// Port to listen on; 0 picks a free one.
    pub port: u16,
}

/// Connections served at once; more are refused with 503 rather than queued without bound.
const MAX_CONNECTIONS: usize = 32;

/// A web board listening on its address, its players checked.
pub struct Server {
    listener: TcpListener,
    address: SocketAddr,
    api: Arc<Api>,
}

impl Server {
    /// Listens on the settings' address and checks that every player can be built (a missing
    /// model, a model of another variant and `human` are refused, named).
    pub fn bind(settings: ServeSettings) -> Result<Server, FrontendError> {
        if settings.players.is_empty() {
            return Err(FrontendError::Setup("no player to play against".to_string()));
        }
        if settings.players.iter().any(PlayerSpec::is_human) {
            return Err(FrontendError::Setup(
                "player `human`: the person plays on the page; give the engine's player".to_string(),
            ));
        }
        let wanted = SocketAddr::new(settings.bind, settings.port);
        let listener = TcpListener::bind(wanted).map_err(FrontendError::io(format!("listening on {wanted}")))?;
        let address = listener.local_addr().map_err(FrontendError::io("reading the address listened on"))?;
        let hosts = settings.bind.is_loopback().then(|| loopback_hosts(address));
        let mut players: Vec<PlayerSpec> = Vec::new();
        for spec in settings.players {
            if !players.contains(&spec) {
                players.push(spec);
            }
        }
        let api = Api::new(Settings {
            players,
            variant: settings.variant,
            overrides: settings.overrides,
            seed: settings.seed,
            hosts,
        });
        api.check_players().map_err(FrontendError::Setup)?;
        Ok(Server { listener, address, api: Arc::new(api) })
    }

    /// The address listened on (the port chosen, where the settings said 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves connections until the process is stopped, each on a thread of its own.
    pub fn run(self) -> Result<(), FrontendError> {
        let live = Arc::new(AtomicUsize::new(0));
        for stream in self.listener.incoming() {
            match stream {
                Ok(stream) => serve_connection(stream, &self.api, &live),
                // A connection that failed before it was accepted concerns only that client.
                Err(err) => eprintln!("camelot serve: accepting a connection: {err}"),
            }
        }
        Ok(())
    }
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
