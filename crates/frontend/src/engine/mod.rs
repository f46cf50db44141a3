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
pub use seat::EngineSeat;
pub use session::{EngineSettings, Flow, Session};
use std::io::{BufRead, Write};

/// Runs the protocol on `input` and `output` until `quit` or the end of the input. Fails when
/// the session cannot start (a ruleset or a player that cannot be built, named) or a stream
/// fails; a bad line is answered on `output` and the session goes on.
pub fn run_engine(
    settings: EngineSettings,
    mut input: impl BufRead,
    mut output: impl Write,
) -> Result<(), FrontendError> {
    let mut session = Session::new(settings).map_err(FrontendError::Setup)?;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes).map_err(FrontendError::io("reading standard input"))? == 0 {
            return Ok(());
        }
        // Bytes that are not UTF-8 become replacement characters and then an error line, not
        // the end of the session.
        let line = String::from_utf8_lossy(&bytes);
        let flow = session.handle_line(&line, &mut output).map_err(FrontendError::io("writing standard output"))?;
        output.flush().map_err(FrontendError::io("writing standard output"))?;
        if flow == Flow::Quit {
            return Ok(());
        }
    }
}
