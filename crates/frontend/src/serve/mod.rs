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
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

/// Connections served at once; more are refused with 503 rather than queued without bound
/// (once the slowest of those still sending a request has been cut off to make room).
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
        let connections = Arc::new(Connections::default());
        for stream in self.listener.incoming() {
            match stream {
                Ok(stream) => serve_connection(stream, &self.api, &connections),
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

/// The connections being served, each with what it takes to cut it off.
#[derive(Default)]
struct Connections {
    open: Mutex<Vec<Open>>,
    next_id: AtomicU64,
}

/// One connection being served.
struct Open {
    id: u64,
    /// A second handle on the socket, to shut it down from the accepting thread.
    stream: TcpStream,
    /// Still sending its request (cleared when the answer starts).
    reading: Arc<AtomicBool>,
    /// Cut off to make room; counted only until its thread has ended.
    evicted: bool,
}

impl Connections {
    /// Takes `stream` on if there is room, making room when every slot is taken by cutting off
    /// the connection that has been sending its request longest: a few clients that send a
    /// byte now and then would otherwise hold every slot and lock everyone else out for as long
    /// as they like. `None` when every connection is busy answering (the server is full).
    fn admit(&self, stream: &TcpStream) -> Option<(u64, Arc<AtomicBool>)> {
        let mut open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if open.iter().filter(|o| !o.evicted).count() >= MAX_CONNECTIONS {
            // Slots are pushed in order of acceptance: the first one reading is the oldest.
            let slowest = open.iter_mut().find(|o| !o.evicted && o.reading.load(Ordering::SeqCst))?;
            let _ = slowest.stream.shutdown(Shutdown::Both);
            slowest.evicted = true;
        }
        // Cut-off connections end at once; the bound is there in case their threads lag.
        if open.len() >= 2 * MAX_CONNECTIONS {
            return None;
        }
        let handle = stream.try_clone().ok()?;
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let reading = Arc::new(AtomicBool::new(true));
        open.push(Open { id, stream: handle, reading: Arc::clone(&reading), evicted: false });
        Some((id, reading))
    }

    /// Forgets connection `id`, whose thread is ending.
    fn remove(&self, id: u64) {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).retain(|o| o.id != id);
    }
}

/// Answers one connection on a thread of its own (an engine reply can take seconds).
fn serve_connection(mut stream: TcpStream, api: &Arc<Api>, connections: &Arc<Connections>) {
    let deadline = Instant::now() + http::REQUEST_DEADLINE;
    let _ = stream.set_read_timeout(Some(http::REQUEST_DEADLINE));
    let _ = stream.set_write_timeout(Some(http::IO_TIMEOUT));
    let Some((id, reading)) = connections.admit(&stream) else {
        let busy = Outgoing::error(503, format!("busy: {MAX_CONNECTIONS} connections already"));
        // Written from the accepting thread, so no lingering close: the answer is short.
        let _ = http::send(&mut stream, &busy);
        return;
    };
    let api = Arc::clone(api);
    let here = Arc::clone(connections);
    let spawned = std::thread::Builder::new().name("serve-connection".to_string()).spawn(move || {
        if let Err(err) = http::exchange(&mut http::Deadline::new(&stream, deadline, &reading), &api) {
            // A client that hangs up or stalls has only itself to tell; anything else is ours.
            let theirs = matches!(
                err.kind(),
                ErrorKind::BrokenPipe
                    | ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::NotConnected
                    | ErrorKind::UnexpectedEof
                    | ErrorKind::WouldBlock
                    | ErrorKind::TimedOut
            );
            if !theirs {
                eprintln!("camelot serve: connection: {err}");
            }
        }
        http::close(&stream);
        here.remove(id);
    });
    if let Err(err) = spawned {
        connections.remove(id);
        eprintln!("camelot serve: starting a connection thread: {err}");
    }
}
