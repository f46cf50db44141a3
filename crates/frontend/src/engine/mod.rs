//! The engine protocol: any player behind a line protocol on an input and an output stream,
//! in the shape of UGI (the game-neutral form of UCI), so that front ends, match runners and
//! the web board drive it the way chess GUIs drive an engine. The protocol is described in
//! docs/ENGINE.md.
//!
//! * [`command`]: one line into a command (shape only).
//! * [`session`]: the game, the options and the answer to each command.
//! * [`limits`]: `go nodes|movetime|wtime ...` into the player spec's own keys.
//! * [`info`]: the `info` line from what the player reports.
//! * [`seat`]: the player built from the spec and one guarded search (shared with `serve`).

pub mod command;
pub mod info;
pub mod limits;
pub mod seat;
pub mod session;

use crate::FrontendError;
use command::{parse_command, EngineCommand};
pub use seat::EngineSeat;
pub use session::{EngineSettings, Flow, Session};
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long `quit` waits for the search it stopped to give its answer.
const QUIT_GRACE: Duration = Duration::from_secs(1);

/// What the protocol loop waits for: a line read, the end of the input, or a search done.
enum Event {
    /// One line, as bytes (not UTF-8 is an error line, not the end of the session).
    Line(Vec<u8>),
    /// The input ended, or failed to read.
    End(io::Result<()>),
    /// A `go` finished: the session it ran on, and what it wrote.
    Searched(Box<Session>, io::Result<Vec<u8>>),
}

/// Runs the protocol on `input` and `output` until `quit` or the end of the input. Fails when
/// the session cannot start (a ruleset or a player that cannot be built, named) or a stream
/// fails; a bad line is answered on `output` and the session goes on.
///
/// Input is read on a thread of its own and each `go` runs on another, so that while a player
/// searches the engine still answers `isready`, ends the search on `stop` (the best move found
/// so far) and leaves on `quit`; other lines wait until the search is over and are answered in
/// order. At the end of the input a running search is finished and answered first; at `quit`
/// it is stopped and answered if it ends within [`QUIT_GRACE`].
pub fn run_engine(
    settings: EngineSettings,
    input: impl BufRead + Send + 'static,
    mut output: impl Write,
) -> Result<(), FrontendError> {
    let mut session = Some(Box::new(Session::new(settings).map_err(FrontendError::Setup)?));
    let stop = session.as_ref().map(|s| s.stop_flag()).ok_or_else(|| FrontendError::Setup("no session".into()))?;
    let (events, incoming) = mpsc::channel();
    let reader = events.clone();
    std::thread::Builder::new()
        .name("engine-input".to_string())
        .spawn(move || read_lines(input, &reader))
        .map_err(FrontendError::io("starting the input thread"))?;
    let written = || FrontendError::io("writing standard output");
    let mut waiting: VecDeque<String> = VecDeque::new();
    let mut input_ended = false;
    loop {
        // Lines that came during a search, answered in order once the session is back.
        while let Some(current) = session.take() {
            let Some(line) = waiting.pop_front() else {
                session = Some(current);
                break;
            };
            if current.searches(&line) {
                stop.store(false, Ordering::SeqCst);
                let done = events.clone();
                let mut searching = current;
                std::thread::Builder::new()
                    .name("engine-search".to_string())
                    .spawn(move || {
                        let mut answer = Vec::new();
                        let result = searching.handle_line(&line, &mut answer).map(|_| answer);
                        let _ = done.send(Event::Searched(searching, result));
                    })
                    .map_err(FrontendError::io("starting a search thread"))?;
                break;
            }
            let mut current = current;
            let flow = current.handle_line(&line, &mut output).map_err(written())?;
            output.flush().map_err(written())?;
            session = Some(current);
            if flow == Flow::Quit {
                return Ok(());
            }
        }
        if input_ended && session.is_some() && waiting.is_empty() {
            return Ok(());
        }
        let Ok(event) = incoming.recv() else { return Ok(()) };
        match event {
            Event::Line(bytes) => {
                let line = String::from_utf8_lossy(&bytes).into_owned();
                if session.is_some() {
                    waiting.push_back(line);
                    continue;
                }
                // A search runs: only these are answered now, the rest waits for it.
                match parse_command(&line) {
                    Ok(Some(EngineCommand::IsReady)) => {
                        writeln!(output, "readyok").and_then(|()| output.flush()).map_err(written())?
                    }
                    Ok(Some(EngineCommand::Stop)) => stop.store(true, Ordering::SeqCst),
                    Ok(Some(EngineCommand::Quit)) => {
                        stop.store(true, Ordering::SeqCst);
                        // A stopped search ends within moments: its answer is still written if
                        // it comes by then, so that a script's `go ... quit` sees its `bestmove`.
                        let until = Instant::now() + QUIT_GRACE;
                        while let Ok(event) = incoming.recv_timeout(until.saturating_duration_since(Instant::now())) {
                            if let Event::Searched(_, answer) = event {
                                let answer = answer.map_err(written())?;
                                output.write_all(&answer).and_then(|()| output.flush()).map_err(written())?;
                                break;
                            }
                        }
                        return Ok(());
                    }
                    _ => waiting.push_back(line),
                }
            }
            Event::End(result) => {
                result.map_err(FrontendError::io("reading standard input"))?;
                input_ended = true;
            }
            Event::Searched(back, answer) => {
                let answer = answer.map_err(written())?;
                output.write_all(&answer).and_then(|()| output.flush()).map_err(written())?;
                session = Some(back);
            }
        }
    }
}

/// Sends each line of `input` as an event, then the end of the input.
fn read_lines(mut input: impl BufRead, events: &mpsc::Sender<Event>) {
    loop {
        let mut bytes = Vec::new();
        match input.read_until(b'\n', &mut bytes) {
            Ok(0) => {
                let _ = events.send(Event::End(Ok(())));
                return;
            }
            Ok(_) => {
                if events.send(Event::Line(bytes)).is_err() {
                    return;
                }
            }
            Err(err) => {
                let _ = events.send(Event::End(Err(err)));
                return;
            }
        }
    }
}
