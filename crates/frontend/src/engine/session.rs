//! One engine session: the game the front end has set up, the player spec and its options,
//! and the answers to each command. [`Session::handle_line`] answers a command in full; the
//! protocol loop ([`super::run_engine`]) runs a `go` on a thread of its own and answers
//! `isready`, `stop` and `quit` meanwhile. A bad line gets an `info string error: ...` line
//! and leaves the session as it was.

use super::command::{parse_command, shown, EngineCommand, GoParams, Query, StartPosition};
use super::info::info_line;
use super::limits::{limited_spec, SearchLimits};
use super::seat::EngineSeat;
use camelot_arena::{principal_line_text, ModelStore, PlayerSpec, StopFlag, MAX_DEPTH, MAX_MS, MAX_SIMS};
use camelot_rules::{Color, Game, Ruleset, VARIANT_NAMES};
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

/// What the front end sees as the engine's name.
pub const ENGINE_NAME: &str = concat!("camelot-zero ", env!("CARGO_PKG_VERSION"));

/// The prefix of every error line.
pub const ERROR_PREFIX: &str = "info string error: ";

/// The `bestmove` answer of a `go` that found no move to play (the game is over, the command
/// was malformed, or the player failed), so that a front end waiting for `bestmove` never hangs.
pub const NO_MOVE: &str = "bestmove (none)";

/// The largest `Seed` the option list offers; front ends keep spin values in 32-bit integers.
const MAX_SEED: u64 = i32::MAX as u64;

/// The largest `MoveOverhead` in milliseconds (and `--move-overhead`).
pub const MAX_OVERHEAD_MS: u64 = 10_000;

/// How the engine starts: the values the command line gives the options.
#[derive(Clone, Debug)]
pub struct EngineSettings {
    /// The player's spec.
    pub spec: PlayerSpec,
    /// The variant.
    pub variant: String,
    /// Ruleset flag overrides (`--set`), applied to every variant chosen later too.
    pub overrides: Vec<String>,
    /// Seed of the players' random choices.
    pub seed: u64,
    /// Milliseconds kept back from every timed search.
    pub move_overhead_ms: u64,
}

/// Whether to read another line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next command.
    Continue,
    /// `quit` was read.
    Quit,
}

/// The engine's state between commands.
pub struct Session {
    settings: EngineSettings,
    rules: Arc<Ruleset>,
    game: Game,
    /// Networks loaded once per session, whatever the limits of each `go` make of the spec.
    models: ModelStore,
    /// The player, kept while `go` asks for the same spec, so that it keeps its hash table or
    /// tree between moves of one game.
    seat: EngineSeat,
    /// `uginewgame` count, one stream of the players' seeds (the seat counts the other).
    games: u64,
    /// Set to end the running search early (`stop`); every player of the seat watches it.
    stop: StopFlag,
}

impl Session {
    /// A session at the variant's start. Fails on a ruleset or a player that cannot be built
    /// (a missing model, a model of another variant, `human`), naming what is at fault.
    pub fn new(settings: EngineSettings) -> Result<Session, String> {
        let rules = Arc::new(
            Ruleset::with_overrides(&settings.variant, &settings.overrides)
                .map_err(|e| format!("variant `{}`: {e}", settings.variant))?,
        );
        let stop = StopFlag::default();
        let mut seat = EngineSeat::new();
        seat.set_stop_flag(stop.clone());
        let mut session = Session {
            game: Game::new(Arc::clone(&rules)),
            rules,
            settings,
            models: ModelStore::new(),
            seat,
            games: 0,
            stop,
        };
        let spec = session.settings.spec.clone();
        session.prepare(&spec)?;
        Ok(session)
    }

    /// The flag that ends the running search: set it from another thread while
    /// [`Session::handle_line`] runs a `go`, clear it before the next.
    pub fn stop_flag(&self) -> StopFlag {
        self.stop.clone()
    }

    /// The game as the front end has set it up.
    #[cfg(test)]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Reads one line and writes its answer. Only a failure to write is an error.
    pub fn handle_line(&mut self, line: &str, out: &mut dyn Write) -> io::Result<Flow> {
        let command = match parse_command(line) {
            Ok(Some(command)) => command,
            Ok(None) => return Ok(Flow::Continue),
            Err(err) => {
                error(out, &err.to_string())?;
                if err.command == Some("go") {
                    writeln!(out, "{NO_MOVE}")?;
                }
                return Ok(Flow::Continue);
            }
        };
        match command {
            EngineCommand::Ugi => self.identify(out)?,
            EngineCommand::IsReady => writeln!(out, "readyok")?,
            EngineCommand::NewGame => {
                self.game = Game::new(Arc::clone(&self.rules));
                self.seat.clear();
                self.games += 1;
            }
            EngineCommand::Position { start, moves } => {
                if let Err(message) = self.set_position(&start, &moves) {
                    error(out, &format!("position: {message}"))?;
                }
            }
            EngineCommand::Go(go) => self.go(&go, out)?,
            EngineCommand::Stop => {}
            EngineCommand::SetOption { name, value } => {
                if let Err(message) = self.set_option(&name, value.as_deref()) {
                    error(out, &format!("setoption: {message}"))?;
                }
            }
            EngineCommand::Query(query) => self.query(query, out)?,
            EngineCommand::Quit => return Ok(Flow::Quit),
        }
        Ok(Flow::Continue)
    }

    fn identify(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "id name {ENGINE_NAME} ({})", self.settings.spec)?;
        writeln!(out, "id author the camelot-zero authors")?;
        writeln!(out, "option name Player type string default {}", self.settings.spec)?;
        let variants: String = VARIANT_NAMES.iter().map(|v| format!(" var {v}")).collect();
        writeln!(out, "option name Variant type combo default {}{variants}", self.rules.name())?;
        writeln!(out, "option name Seed type spin default {} min 0 max {MAX_SEED}", self.settings.seed)?;
        writeln!(
            out,
            "option name MoveOverhead type spin default {} min 0 max {MAX_OVERHEAD_MS}",
            self.settings.move_overhead_ms
        )?;
        writeln!(out, "ugiok")
    }

    /// Replaces the game, or leaves it as it was when the start or a move is refused.
    fn set_position(&mut self, start: &StartPosition, moves: &[String]) -> Result<(), String> {
        let mut game = match start {
            StartPosition::Start => Game::new(Arc::clone(&self.rules)),
            StartPosition::Cpn(text) => {
                let pos = self.rules.parse_cpn(text).map_err(|e| e.to_string())?;
                Game::from_position(Arc::clone(&self.rules), pos)
            }
        };
        for (index, text) in moves.iter().enumerate() {
            game.play_text(text).map_err(|e| format!("move {} of {}: {}", index + 1, moves.len(), shown_error(&e)))?;
        }
        self.game = game;
        Ok(())
    }

    /// Builds the player for `spec` unless the one kept was built from it.
    fn prepare(&mut self, spec: &PlayerSpec) -> Result<(), String> {
        self.seat.prepare(spec, &self.rules, &self.models, self.settings.seed, self.games).map(|_| ())
    }

    /// Whether `line` is a `go` that searches, rather than one answered at once (malformed,
    /// past the bounds, or in a finished game): only those are worth a thread of their own.
    pub fn searches(&self, line: &str) -> bool {
        matches!(parse_command(line), Ok(Some(EngineCommand::Go(go))) if self.refusal(&go).is_none())
    }

    /// Why `go` is answered with no search, if it is.
    fn refusal(&self, go: &GoParams) -> Option<String> {
        match self.game.outcome() {
            Some(outcome) => Some(format!("go: the game is over ({outcome})")),
            None => check_bounds(go).err().map(|message| format!("go: {message}")),
        }
    }

    fn go(&mut self, go: &GoParams, out: &mut dyn Write) -> io::Result<()> {
        if let Some(message) = self.refusal(go) {
            error(out, &message)?;
            return writeln!(out, "{NO_MOVE}");
        }
        let pos = *self.game.position();
        let mut limits = SearchLimits::from_go(go, pos.turn(), self.settings.move_overhead_ms);
        let mut notes = Vec::new();
        if let Some(ms) = limits.ms.filter(|&ms| ms > MAX_MS) {
            // A clock is the front end's state, not a request: it is not refused, but no move
            // gets more than a player spec may ask for.
            notes.push(format!("the clock gives {ms} ms for this move: {MAX_MS} ms (a day) used"));
            limits.ms = Some(MAX_MS);
        }
        let (spec, limit_notes) = limited_spec(&self.settings.spec, &limits);
        notes.extend(limit_notes);
        for note in notes {
            writeln!(out, "info string {note}")?;
        }
        let started = Instant::now();
        let chosen = self.seat.choose(&spec, &self.game, &self.models, self.settings.seed, self.games);
        let elapsed = started.elapsed().as_millis();
        let choice = match chosen {
            Ok(choice) => choice,
            Err(message) => {
                error(out, &format!("go: {message}"))?;
                return writeln!(out, "{NO_MOVE}");
            }
        };
        let best = self.rules.move_to_string(&pos, &choice.mv);
        let line = principal_line_text(&self.rules, &pos, &choice.principal_line);
        let line = if line.is_empty() || !line.starts_with(&best) { best.clone() } else { line };
        writeln!(out, "{}", info_line(&choice, elapsed, &line))?;
        if !choice.info.is_empty() {
            writeln!(out, "info string {}", choice.info)?;
        }
        writeln!(out, "bestmove {best}")
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        let option = name.to_ascii_lowercase().replace(' ', "");
        let known = "Player, Variant, Seed, MoveOverhead";
        let Some(value) = value else {
            return Err(format!("option `{}` needs `value VALUE` (options: {known})", shown(name)));
        };
        match option.as_str() {
            "player" => {
                let spec = PlayerSpec::parse(value).map_err(|e| e.to_string())?;
                // Built now so that a bad model is reported here, not at the next `go`; a spec
                // that cannot be built leaves the seat's player as it was.
                self.prepare(&spec)?;
                self.settings.spec = spec;
            }
            "variant" => {
                let rules = Ruleset::with_overrides(value, &self.settings.overrides).map_err(|e| e.to_string())?;
                self.rules = Arc::new(rules);
                self.settings.variant = value.to_string();
                self.game = Game::new(Arc::clone(&self.rules));
                self.seat.forget();
            }
            "seed" => {
                self.settings.seed = spin(value, 0, MAX_SEED)?;
                self.seat.forget();
            }
            "moveoverhead" => self.settings.move_overhead_ms = spin(value, 0, MAX_OVERHEAD_MS)?,
            _ => return Err(format!("unknown option `{}` (options: {known})", shown(name))),
        }
        Ok(())
    }

    fn query(&self, query: Query, out: &mut dyn Write) -> io::Result<()> {
        let outcome = self.game.outcome();
        match query {
            Query::LegalMoves => {
                let moves: Vec<String> = match outcome {
                    Some(_) => Vec::new(),
                    None => {
                        let pos = self.game.position();
                        self.rules.legal_moves_with_paths(pos).into_iter().map(|(_, path)| path.to_string()).collect()
                    }
                };
                if moves.is_empty() {
                    writeln!(out, "response")
                } else {
                    writeln!(out, "response {}", moves.join(" "))
                }
            }
            Query::GameOver => writeln!(out, "response {}", outcome.is_some()),
            Query::Result => {
                let result = match outcome {
                    None => "none",
                    Some(o) => match o.winner {
                        Some(Color::White) => "p1win",
                        Some(Color::Black) => "p2win",
                        None => "draw",
                    },
                };
                writeln!(out, "response {result}")
            }
            Query::P1Turn => writeln!(out, "response {}", self.game.position().turn() == Color::White),
            Query::Position => writeln!(out, "response {}", self.rules.to_cpn(self.game.position())),
        }
    }
}

/// Refuses the `go` limits that a player spec would refuse (`depth=65`, `ms=` over a day,
/// more simulations than `sims=` takes), naming the limit: a search to such a limit would not
/// end in any time a front end waits.
fn check_bounds(go: &GoParams) -> Result<(), String> {
    let too_large = |what: String, max: u64| Err(format!("`{what}`: too large (at most {max}, as in a player spec)"));
    if let Some(depth) = go.depth.filter(|&d| d > MAX_DEPTH) {
        return too_large(format!("depth {depth}"), MAX_DEPTH.into());
    }
    if let Some(nodes) = go.nodes.filter(|&n| n > u64::from(MAX_SIMS)) {
        return too_large(format!("nodes {nodes}"), MAX_SIMS.into());
    }
    if let Some(ms) = go.movetime.filter(|&ms| ms > MAX_MS) {
        return too_large(format!("movetime {ms}"), MAX_MS);
    }
    Ok(())
}

fn error(out: &mut dyn Write, message: &str) -> io::Result<()> {
    // One line whatever the message holds: a front end reads the protocol line by line.
    let message: String = message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    writeln!(out, "{ERROR_PREFIX}{message}")
}

/// A rules error with the text it quotes cut to a readable length.
fn shown_error(err: &camelot_rules::Error) -> String {
    match err {
        camelot_rules::Error::Move { text, reason } => format!("move `{}`: {reason}", shown(text)),
        other => other.to_string(),
    }
}

fn spin(value: &str, min: u64, max: u64) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("`{}` is not a whole number from {min} to {max}", shown(value))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn session(spec: &str, variant: &str) -> Session {
        Session::new(EngineSettings {
            spec: PlayerSpec::parse(spec).expect("a valid spec"),
            variant: variant.to_string(),
            overrides: Vec::new(),
            seed: 1,
            move_overhead_ms: 0,
        })
        .expect("the session starts")
    }

    /// The lines written in answer to `input`.
    fn answer(session: &mut Session, input: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in input.lines() {
            session.handle_line(line, &mut out).expect("writing to memory");
        }
        String::from_utf8(out).expect("UTF-8 output").lines().map(str::to_string).collect()
    }

    fn one(session: &mut Session, input: &str) -> String {
        let lines = answer(session, input);
        assert_eq!(lines.len(), 1, "{input}: {lines:?}");
        lines[0].clone()
    }

    #[test]
    fn handshake_lists_the_options_and_ends_with_ugiok() {
        let mut s = session("alphabeta:depth=2", "cam");
        let lines = answer(&mut s, "ugi\nisready");
        assert!(lines[0].starts_with("id name camelot-zero ") && lines[0].ends_with("(alphabeta:depth=2)"));
        assert!(lines.contains(&"option name Player type string default alphabeta:depth=2".to_string()));
        assert!(lines.iter().any(|l| l.starts_with("option name Variant type combo default cam var camelot")));
        assert_eq!(lines[lines.len() - 2], "ugiok");
        assert_eq!(lines[lines.len() - 1], "readyok");
    }

    #[test]
    fn position_and_queries() {
        let mut s = session("greedy", "cam");
        let start_moves = one(&mut s, "query legalmoves");
        let first = start_moves.split(' ').nth(1).expect("a move at the start").to_string();
        assert_eq!(one(&mut s, "query p1turn"), "response true");
        assert!(answer(&mut s, &format!("position startpos moves {first}")).is_empty());
        assert_eq!(s.game().moves().len(), 1);
        assert_eq!(one(&mut s, "query p1turn"), "response false");
        assert_eq!(one(&mut s, "query gameover"), "response false");
        assert_eq!(one(&mut s, "query result"), "response none");
        let cpn = one(&mut s, "query position");
        let cpn = cpn.strip_prefix("response ").expect("a response");
        assert!(answer(&mut s, "position startpos").is_empty());
        assert!(answer(&mut s, &format!("position cpn {cpn}")).is_empty());
        assert_eq!(s.game().moves().len(), 0);
        assert_eq!(s.game().position().turn(), Color::Black);
    }

    #[test]
    fn a_refused_position_leaves_the_game_as_it_was() {
        let mut s = session("greedy", "cam");
        let first = one(&mut s, "query legalmoves").split(' ').nth(1).expect("a move").to_string();
        answer(&mut s, &format!("position startpos moves {first}"));
        let before = s.game().clone();
        let refused = one(&mut s, &format!("position startpos moves {first} {first}"));
        assert!(refused.starts_with("info string error: position: move 2 of 2: move `"), "{refused}");
        assert_eq!(s.game().positions(), before.positions());
        let refused = one(&mut s, "position cpn 2/3kmk3/banana w");
        assert!(refused.starts_with("info string error: position: CPN"), "{refused}");
        assert_eq!(s.game().positions(), before.positions());
    }

    #[test]
    fn a_finished_game_has_no_moves_and_go_says_why() {
        let mut s = session("random", "cam");
        let mut won = None;
        // Random moves until the game ends, set up as a front end would, through the queries.
        for _ in 0..400 {
            if one(&mut s, "query gameover") == "response true" {
                won = Some(one(&mut s, "query result"));
                break;
            }
            let lines = answer(&mut s, "go");
            let best = lines.last().expect("an answer").strip_prefix("bestmove ").expect("a bestmove").to_string();
            let cpn = one(&mut s, "query position");
            let cpn = cpn.strip_prefix("response ").expect("a response").to_string();
            assert!(answer(&mut s, &format!("position cpn {cpn} moves {best}")).is_empty());
        }
        let result = won.expect("a random game on cam ends within 400 plies");
        assert!(["response p1win", "response p2win", "response draw"].contains(&result.as_str()), "{result}");
        assert_eq!(one(&mut s, "query legalmoves"), "response");
        let lines = answer(&mut s, "go nodes 5");
        assert!(lines[0].starts_with("info string error: go: the game is over ("), "{lines:?}");
        assert_eq!(lines[1], NO_MOVE);
    }

    #[test]
    fn go_answers_with_info_then_a_legal_bestmove() {
        let mut s = session("alphabeta:depth=1", "cam");
        let legal = one(&mut s, "query legalmoves");
        let lines = answer(&mut s, "go depth 2");
        let info = &lines[0];
        assert!(
            info.starts_with("info depth 2 nodes ") && info.contains(" time ") && info.contains(" score cp "),
            "{info}"
        );
        let best = lines.last().expect("lines").strip_prefix("bestmove ").expect("a bestmove");
        assert!(legal.split(' ').skip(1).any(|m| m == best), "{best} not in {legal}");
        assert!(info.contains(&format!(" pv {best}")), "{info}");
        // Nodes mean nothing to alphabeta: a note says so and the spec's depth is used.
        let lines = answer(&mut s, "go nodes 100");
        assert_eq!(lines[0], "info string alphabeta has no nodes limit: `nodes` ignored");
        assert!(lines[1].starts_with("info depth 1 "), "{lines:?}");
    }

    #[test]
    fn the_player_is_kept_while_the_spec_is_the_same() {
        let mut s = session("uct:sims=20", "cam");
        answer(&mut s, "go nodes 30");
        let built = s.seat.builds();
        answer(&mut s, "go nodes 30");
        assert_eq!(s.seat.builds(), built);
        answer(&mut s, "go nodes 31");
        assert_eq!(s.seat.builds(), built + 1);
        answer(&mut s, "uginewgame");
        assert!(s.seat.is_empty());
    }

    #[test]
    fn options_change_the_player_and_the_variant() {
        let mut s = session("greedy", "cam");
        assert!(answer(&mut s, "setoption name Player value uct:sims=10").is_empty());
        assert_eq!(s.settings.spec.to_string(), "uct:sims=10");
        let refused = one(&mut s, "setoption name Player value uct:rollouts=3");
        assert!(
            refused.starts_with("info string error: setoption: player `uct` has no setting `rollouts`"),
            "{refused}"
        );
        let refused = one(&mut s, "setoption name Player value mcts:model=/nowhere/model");
        assert!(refused.contains("model `/nowhere/model`"), "{refused}");
        let refused = one(&mut s, "setoption name Player value human");
        assert!(refused.contains("`human` cannot play"), "{refused}");
        assert_eq!(s.settings.spec.to_string(), "uct:sims=10");
        assert!(answer(&mut s, "setoption name Variant value camette").is_empty());
        assert_eq!(s.rules.name(), "camette");
        assert!(one(&mut s, "setoption name Variant value chess").contains("unknown variant `chess`"));
        assert!(answer(&mut s, "setoption name Seed value 42").is_empty());
        assert!(one(&mut s, "setoption name Seed value -1").contains("from 0 to 2147483647"));
        assert!(answer(&mut s, "setoption name Move Overhead value 5").is_empty());
        assert_eq!(s.settings.move_overhead_ms, 5);
        assert!(one(&mut s, "setoption name Hash value 64").contains("unknown option `Hash`"));
        assert!(one(&mut s, "setoption name Seed").contains("needs `value VALUE`"));
    }

    #[test]
    fn malformed_go_still_ends_with_bestmove() {
        let mut s = session("greedy", "cam");
        assert_eq!(
            answer(&mut s, "go infinite"),
            vec![
                "info string error: go: `infinite` is not supported: every search here ends by itself; use `movetime`, `nodes` or clock times".to_string(),
                NO_MOVE.to_string()
            ]
        );
        let lines = answer(&mut s, "quux\nquery");
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| l.starts_with(ERROR_PREFIX)));
        assert_eq!(s.handle_line("quit", &mut Vec::new()).expect("memory"), Flow::Quit);
    }

    #[test]
    fn same_seed_same_moves() {
        let play = || {
            let mut s = session("random", "camette");
            answer(&mut s, "setoption name Seed value 9\ngo\ngo\nuginewgame\ngo")
        };
        assert_eq!(play(), play());
    }

    /// Lines a front end might send, good and bad, to mutate.
    const SEEDS: [&str; 10] = [
        "go nodes 3",
        "go movetime 1",
        "position startpos moves D2-D3",
        "position cpn 2/3kmk3/9/3KMK3/2 w - 0 1",
        "query legalmoves",
        "setoption name Player value uct:sims=5",
        "setoption name Variant value cam",
        "uginewgame",
        "ugi",
        "stop",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Whatever comes in, the session answers every `go` with exactly one `bestmove`, keeps
        /// answering `isready`, and writes only whole lines.
        #[test]
        fn any_line_is_answered_and_the_session_survives(
            lines in proptest::collection::vec(
                prop_oneof![
                    "\\PC{0,40}",
                    (0..SEEDS.len(), any::<usize>(), any::<char>())
                        .prop_map(|(i, at, c)| {
                            let mut chars: Vec<char> = SEEDS[i].chars().collect();
                            let at = at % (chars.len() + 1);
                            chars.insert(at, c);
                            chars.into_iter().collect::<String>()
                        }),
                    (0..SEEDS.len()).prop_map(|i| SEEDS[i].to_string()),
                ],
                1..8,
            )
        ) {
            let mut s = session("random", "cam");
            for line in &lines {
                let line = line.replace(['\n', '\r'], " ");
                if line.trim().eq_ignore_ascii_case("quit") {
                    continue;
                }
                let mut out = Vec::new();
                prop_assert_eq!(s.handle_line(&line, &mut out).expect("memory"), Flow::Continue);
                let text = String::from_utf8(out).expect("UTF-8 output");
                prop_assert!(text.is_empty() || text.ends_with('\n'));
                let is_go = line.split_whitespace().next().is_some_and(|w| w.eq_ignore_ascii_case("go"));
                let bestmoves = text.lines().filter(|l| l.starts_with("bestmove ")).count();
                prop_assert_eq!(bestmoves, usize::from(is_go), "`{}` -> {}", line, text);
            }
            let mut out = Vec::new();
            s.handle_line("isready", &mut out).expect("memory");
            prop_assert_eq!(String::from_utf8(out).expect("UTF-8"), "readyok\n");
        }
    }
}
