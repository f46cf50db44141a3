//! Reading one line of the engine protocol into a command. Only the shape of the line is
//! checked here; whether a position, a move or an option value makes sense is the session's
//! business, since that needs the ruleset and the game.

use std::fmt;

/// Every command word the engine knows, for error messages.
pub const COMMAND_WORDS: &str = "ugi, isready, uginewgame, position, go, stop, setoption, query, quit";

/// Every `query` the engine answers, for error messages.
pub const QUERY_WORDS: &str = "legalmoves, gameover, result, p1turn, position";

/// How many characters of a bad token an error message repeats: enough to recognise it, not
/// enough to flood the front end's log with a pasted megabyte.
const SHOWN_CHARS: usize = 40;

/// One line from the front end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineCommand {
    /// `ugi`: identify, list the options, then `ugiok`.
    Ugi,
    /// `isready`: answer `readyok`.
    IsReady,
    /// `uginewgame`: forget the previous game (search state included).
    NewGame,
    /// `position startpos|cpn CPN [moves M...]`.
    Position {
        /// Where the game starts.
        start: StartPosition,
        /// Moves played since, in notation.
        moves: Vec<String>,
    },
    /// `go [nodes N] [depth D] [movetime MS] [wtime W] [btime B] [winc I] [binc I] [movestogo K]`.
    Go(GoParams),
    /// `stop`: ends the running search (the protocol loop reads it while a `go` runs).
    Stop,
    /// `setoption name NAME [value VALUE]`.
    SetOption {
        /// The option's name as given (matched without regard to case).
        name: String,
        /// The value, spaces inside kept; `None` when the line has no `value` part.
        value: Option<String>,
    },
    /// `query WHAT`.
    Query(Query),
    /// `quit`.
    Quit,
}

/// The start of the game in a `position` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartPosition {
    /// `startpos`: the variant's set-up.
    Start,
    /// `cpn TEXT` (or `fen TEXT`, as UGI front ends write it): a position in CPN.
    Cpn(String),
}

/// What a `query` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// `legalmoves`: the legal moves, sorted.
    LegalMoves,
    /// `gameover`: `true` or `false`.
    GameOver,
    /// `result`: `p1win`, `p2win`, `draw` or `none`.
    Result,
    /// `p1turn`: whether White (the first player) is to move.
    P1Turn,
    /// `position`: the current position in CPN.
    Position,
}

/// The limits of a `go` command, as given (clock times below zero, which some front ends
/// send once a side has overstepped, read as zero).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoParams {
    /// `nodes N`: search nodes (simulations for Monte Carlo players).
    pub nodes: Option<u64>,
    /// `depth D`: plies, for players that search to a depth.
    pub depth: Option<u32>,
    /// `movetime MS`: time for this move.
    pub movetime: Option<u64>,
    /// `wtime`/`btime` (or `p1time`/`p2time`): time left on White's and Black's clocks.
    pub time: [Option<u64>; 2],
    /// `winc`/`binc` (or `p1inc`/`p2inc`): increment per move of White and Black.
    pub increment: [Option<u64>; 2],
    /// `movestogo K`: moves until the next time control.
    pub moves_to_go: Option<u32>,
}

/// A line that is not a well-formed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    /// The command word when it was recognised (`go`), so that the session can still answer
    /// a malformed `go` with the `bestmove` its front end waits for.
    pub command: Option<&'static str>,
    /// What is wrong, naming the token at fault.
    pub message: String,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.command {
            Some(command) => write!(f, "{command}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A token as an error message shows it: control characters replaced, long ones cut.
pub fn shown(token: &str) -> String {
    let mut text: String = token.chars().take(SHOWN_CHARS).map(|c| if c.is_control() { '?' } else { c }).collect();
    if token.chars().count() > SHOWN_CHARS {
        text.push_str("...");
    }
    text
}

/// Reads one line; `Ok(None)` for a blank one. Keywords are matched without regard to case;
/// positions, moves and option values are kept as written.
pub fn parse_command(line: &str) -> Result<Option<EngineCommand>, CommandError> {
    let tokens = tokens_with_offsets(line);
    let Some(&(_, first)) = tokens.first() else { return Ok(None) };
    let word = first.to_ascii_lowercase();
    let rest = &tokens[1..];
    let fail = |command: &'static str, message: String| CommandError { command: Some(command), message };
    let no_arguments = |command: &'static str, value: EngineCommand| match rest.first() {
        None => Ok(Some(value)),
        Some((_, extra)) => Err(fail(command, format!("takes no arguments, got `{}`", shown(extra)))),
    };
    match word.as_str() {
        "ugi" => no_arguments("ugi", EngineCommand::Ugi),
        "isready" => no_arguments("isready", EngineCommand::IsReady),
        "uginewgame" => no_arguments("uginewgame", EngineCommand::NewGame),
        "stop" => no_arguments("stop", EngineCommand::Stop),
        "quit" => no_arguments("quit", EngineCommand::Quit),
        "position" => parse_position(rest).map(Some).map_err(|m| fail("position", m)),
        "go" => parse_go(rest).map(|go| Some(EngineCommand::Go(go))).map_err(|m| fail("go", m)),
        "setoption" => parse_setoption(line, rest).map(Some).map_err(|m| fail("setoption", m)),
        "query" => parse_query(rest).map(|q| Some(EngineCommand::Query(q))).map_err(|m| fail("query", m)),
        _ => Err(CommandError {
            command: None,
            message: format!("unknown command `{}` (known: {COMMAND_WORDS})", shown(first)),
        }),
    }
}

/// The whitespace-separated tokens of `line`, each with its byte offset (so that an option
/// value can be taken with its inner spaces intact).
fn tokens_with_offsets(line: &str) -> Vec<(usize, &str)> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                tokens.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        tokens.push((s, &line[s..]));
    }
    tokens
}

fn parse_position(rest: &[(usize, &str)]) -> Result<EngineCommand, String> {
    let Some(&(_, kind)) = rest.first() else {
        return Err("expected `startpos` or `cpn CPN`, then optionally `moves M1 M2 ...`".to_string());
    };
    let moves_at = rest.iter().position(|(_, t)| t.eq_ignore_ascii_case("moves")).unwrap_or(rest.len());
    let moves: Vec<String> = rest.get(moves_at + 1..).unwrap_or(&[]).iter().map(|(_, t)| t.to_string()).collect();
    let start = match kind.to_ascii_lowercase().as_str() {
        "startpos" => match rest[1..moves_at].first() {
            None => StartPosition::Start,
            Some((_, extra)) => return Err(format!("expected `moves` after `startpos`, got `{}`", shown(extra))),
        },
        "cpn" | "fen" => {
            let fields: Vec<&str> = rest[1..moves_at].iter().map(|(_, t)| *t).collect();
            if fields.is_empty() {
                return Err(format!("`{kind}` needs a position in CPN"));
            }
            StartPosition::Cpn(fields.join(" "))
        }
        "moves" => return Err("expected `startpos` or `cpn CPN` before `moves`".to_string()),
        _ => return Err(format!("expected `startpos` or `cpn`, got `{}`", shown(kind))),
    };
    Ok(EngineCommand::Position { start, moves })
}

fn parse_go(rest: &[(usize, &str)]) -> Result<GoParams, String> {
    let mut go = GoParams::default();
    let mut seen: Vec<String> = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let key = rest[i].1.to_ascii_lowercase();
        if key == "infinite" || key == "ponder" {
            return Err(format!(
                "`{key}` is not supported: every search here ends by itself; use `movetime`, `nodes` or clock times"
            ));
        }
        if !GO_KEYS.contains(&key.as_str()) {
            return Err(format!("unknown limit `{}` (known: {})", shown(rest[i].1), GO_KEYS.join(", ")));
        }
        // `wtime` and `p1time` are one setting under two names.
        let canonical = match key.as_str() {
            "p1time" => "wtime".to_string(),
            "p2time" => "btime".to_string(),
            "p1inc" => "winc".to_string(),
            "p2inc" => "binc".to_string(),
            _ => key.clone(),
        };
        if seen.contains(&canonical) {
            return Err(format!("`{key}` is given twice"));
        }
        let Some(&(_, value)) = rest.get(i + 1) else { return Err(format!("`{key}` needs a number")) };
        match key.as_str() {
            "nodes" => go.nodes = Some(positive(&key, value)?),
            "depth" => go.depth = Some(narrow(&key, positive(&key, value)?)?),
            "movetime" => go.movetime = Some(positive(&key, value)?),
            "movestogo" => go.moves_to_go = Some(narrow(&key, positive(&key, value)?)?),
            "wtime" | "p1time" => go.time[0] = Some(clock(&key, value)?),
            "btime" | "p2time" => go.time[1] = Some(clock(&key, value)?),
            "winc" | "p1inc" => go.increment[0] = Some(clock(&key, value)?),
            _ => go.increment[1] = Some(clock(&key, value)?),
        }
        seen.push(canonical);
        i += 2;
    }
    Ok(go)
}

/// The limits `go` accepts (`p1`/`p2` are UGI's names for White's and Black's clocks).
const GO_KEYS: [&str; 12] =
    ["nodes", "depth", "movetime", "wtime", "btime", "winc", "binc", "movestogo", "p1time", "p2time", "p1inc", "p2inc"];

fn positive(key: &str, value: &str) -> Result<u64, String> {
    match value.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{key} {}`: expected a whole number, at least 1", shown(value))),
    }
}

fn narrow(key: &str, value: u64) -> Result<u32, String> {
    u32::try_from(value).map_err(|_| format!("`{key} {value}`: too large (at most {})", u32::MAX))
}

/// A clock reading in milliseconds; below zero reads as zero.
fn clock(key: &str, value: &str) -> Result<u64, String> {
    match value.parse::<i64>() {
        Ok(n) => Ok(n.max(0) as u64),
        Err(_) => Err(format!("`{key} {}`: expected a whole number of milliseconds", shown(value))),
    }
}

fn parse_setoption(line: &str, rest: &[(usize, &str)]) -> Result<EngineCommand, String> {
    match rest.first() {
        Some((_, word)) if word.eq_ignore_ascii_case("name") => {}
        Some((_, word)) => return Err(format!("expected `name`, got `{}`", shown(word))),
        None => return Err("expected `name NAME [value VALUE]`".to_string()),
    }
    let value_at = rest.iter().skip(1).position(|(_, t)| t.eq_ignore_ascii_case("value")).map(|p| p + 1);
    let name_tokens = &rest[1..value_at.unwrap_or(rest.len())];
    if name_tokens.is_empty() {
        return Err("the option's name is missing".to_string());
    }
    let name = name_tokens.iter().map(|(_, t)| *t).collect::<Vec<_>>().join(" ");
    let value = match value_at {
        None => None,
        Some(at) => match rest.get(at + 1) {
            Some(&(offset, _)) => Some(line[offset..].trim_end().to_string()),
            None => return Err(format!("option `{}`: nothing after `value`", shown(&name))),
        },
    };
    Ok(EngineCommand::SetOption { name, value })
}

fn parse_query(rest: &[(usize, &str)]) -> Result<Query, String> {
    let (what, extra) = match rest {
        [] => return Err(format!("expected one of: {QUERY_WORDS}")),
        [(_, what)] => (*what, None),
        [_, (_, extra), ..] => (rest[0].1, Some(*extra)),
    };
    if let Some(extra) = extra {
        return Err(format!("expected one word after `query`, got also `{}`", shown(extra)));
    }
    Ok(match what.to_ascii_lowercase().as_str() {
        "legalmoves" => Query::LegalMoves,
        "gameover" => Query::GameOver,
        "result" => Query::Result,
        "p1turn" => Query::P1Turn,
        "position" => Query::Position,
        _ => return Err(format!("unknown query `{}` (known: {QUERY_WORDS})", shown(what))),
    })
}

/// Writes `go` limits back as a command line, the inverse of [`parse_command`] (for tests and
/// for logs).
impl fmt::Display for GoParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("go")?;
        let numbers = [
            ("nodes", self.nodes),
            ("depth", self.depth.map(u64::from)),
            ("movetime", self.movetime),
            ("wtime", self.time[0]),
            ("btime", self.time[1]),
            ("winc", self.increment[0]),
            ("binc", self.increment[1]),
            ("movestogo", self.moves_to_go.map(u64::from)),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                write!(f, " {key} {value}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(line: &str) -> EngineCommand {
        match parse_command(line) {
            Ok(Some(command)) => command,
            other => panic!("`{line}` should parse, got {other:?}"),
        }
    }

    fn error(line: &str) -> CommandError {
        match parse_command(line) {
            Err(err) => err,
            Ok(command) => panic!("`{line}` should be refused, got {command:?}"),
        }
    }

    #[test]
    fn bare_commands_and_blank_lines() {
        assert_eq!(parse("ugi"), EngineCommand::Ugi);
        assert_eq!(parse("  IsReady \r"), EngineCommand::IsReady);
        assert_eq!(parse("uginewgame"), EngineCommand::NewGame);
        assert_eq!(parse("stop"), EngineCommand::Stop);
        assert_eq!(parse("quit"), EngineCommand::Quit);
        assert_eq!(parse_command("   \t\r\n"), Ok(None));
        assert_eq!(parse_command(""), Ok(None));
        assert_eq!(error("isready now").message, "takes no arguments, got `now`");
    }

    #[test]
    fn positions_keep_the_cpn_and_the_moves() {
        assert_eq!(parse("position startpos"), EngineCommand::Position { start: StartPosition::Start, moves: vec![] });
        assert_eq!(
            parse("position startpos moves F2-F3 g11-g10"),
            EngineCommand::Position { start: StartPosition::Start, moves: vec!["F2-F3".into(), "g11-g10".into()] }
        );
        let cpn = "2/8/10/12/12/2kmmmmmmk2/3kmmmmk3/12/12/3KMMMMK3/2KMMMMMMK2/12/12/10/8/2 w 0/0 0 1";
        assert_eq!(
            parse(&format!("position cpn  {}   moves I8-J9", cpn.replace(' ', "  "))),
            EngineCommand::Position { start: StartPosition::Cpn(cpn.into()), moves: vec!["I8-J9".into()] }
        );
        assert_eq!(
            parse("position fen 2/3 b"),
            EngineCommand::Position { start: StartPosition::Cpn("2/3 b".into()), moves: vec![] }
        );
        assert!(error("position").message.contains("startpos"));
        assert!(error("position cpn moves A1-A2").message.contains("needs a position"));
        assert!(error("position startpos F2-F3").message.contains("`F2-F3`"));
        assert!(error("position moves F2-F3").message.contains("before `moves`"));
        assert_eq!(error("position startingpos").command, Some("position"));
    }

    #[test]
    fn go_reads_every_limit_and_refuses_bad_ones() {
        assert_eq!(parse("go"), EngineCommand::Go(GoParams::default()));
        let go = GoParams {
            nodes: Some(800),
            depth: Some(4),
            movetime: Some(250),
            time: [Some(60_000), Some(0)],
            increment: [Some(1000), Some(500)],
            moves_to_go: Some(20),
        };
        assert_eq!(
            parse("go nodes 800 depth 4 movetime 250 wtime 60000 btime -30 winc 1000 binc 500 movestogo 20"),
            EngineCommand::Go(go.clone())
        );
        assert_eq!(
            parse("GO p1time 60000 p2time 0 p1inc 1000 p2inc 500 nodes 800 depth 4 movetime 250 movestogo 20"),
            EngineCommand::Go(go)
        );
        let refused = error("go infinite");
        assert_eq!(refused.command, Some("go"));
        assert!(refused.message.contains("not supported"));
        assert!(error("go nodes").message.contains("needs a number"));
        assert!(error("go nodes 0").message.contains("at least 1"));
        assert!(error("go nodes -5").message.contains("at least 1"));
        assert!(error("go depth 99999999999").message.contains("too large"));
        assert!(error("go wtime 10 p1time 20").message.contains("twice"));
        assert!(error("go btime 1 btime 2").message.contains("twice"));
        assert!(error("go sims 100").message.contains("unknown limit `sims`"));
        assert!(error("go wtime soon").message.contains("milliseconds"));
    }

    #[test]
    fn setoption_keeps_spaces_inside_the_value() {
        assert_eq!(
            parse("setoption name Player value mcts:model=my runs/latest,sims=50  \r"),
            EngineCommand::SetOption { name: "Player".into(), value: Some("mcts:model=my runs/latest,sims=50".into()) }
        );
        assert_eq!(
            parse("setoption name Move Overhead value 10"),
            EngineCommand::SetOption { name: "Move Overhead".into(), value: Some("10".into()) }
        );
        assert_eq!(parse("setoption name Clear"), EngineCommand::SetOption { name: "Clear".into(), value: None });
        assert!(error("setoption Player value x").message.contains("expected `name`"));
        assert!(error("setoption name value 3").message.contains("name is missing"));
        assert!(error("setoption name Seed value").message.contains("nothing after `value`"));
        assert!(error("setoption").message.contains("name NAME"));
    }

    #[test]
    fn queries() {
        assert_eq!(parse("query legalmoves"), EngineCommand::Query(Query::LegalMoves));
        assert_eq!(parse("query GameOver"), EngineCommand::Query(Query::GameOver));
        assert_eq!(parse("query result"), EngineCommand::Query(Query::Result));
        assert_eq!(parse("query p1turn"), EngineCommand::Query(Query::P1Turn));
        assert_eq!(parse("query position"), EngineCommand::Query(Query::Position));
        assert!(error("query").message.contains("legalmoves"));
        assert!(error("query moves").message.contains("unknown query `moves`"));
        assert!(error("query result now").message.contains("`now`"));
    }

    #[test]
    fn unknown_commands_are_named_and_long_tokens_cut() {
        let err = error("uci");
        assert_eq!(err.command, None);
        assert_eq!(err.to_string(), format!("unknown command `uci` (known: {COMMAND_WORDS})"));
        let long = "x".repeat(1000);
        let err = error(&long);
        assert!(err.message.len() < 200, "{}", err.message);
        assert!(err.message.contains("xxx..."));
        assert_eq!(shown("a\u{7}b"), "a?b");
    }

    /// A well-formed command line of every kind, to mutate.
    fn valid_line() -> impl Strategy<Value = String> {
        let square = "[A-L](1[0-6]|[1-9])";
        let mv = proptest::string::string_regex(&format!("{square}([-x]{square}){{1,3}}")).expect("a regex");
        prop_oneof![
            Just("ugi".to_string()),
            Just("isready".to_string()),
            Just("uginewgame".to_string()),
            Just("query legalmoves".to_string()),
            Just("setoption name Player value alphabeta:depth=2".to_string()),
            Just("position cpn 2/3kmk3/9/3KMK3/2 w - 0 1 moves D3-D4".to_string()),
            proptest::collection::vec(mv, 0..6).prop_map(|m| format!("position startpos moves {}", m.join(" "))),
            (any::<Option<u32>>(), any::<Option<u16>>(), any::<Option<u32>>(), any::<Option<u8>>()).prop_map(
                |(nodes, movetime, wtime, movestogo)| {
                    GoParams {
                        nodes: nodes.map(|n| u64::from(n) + 1),
                        movetime: movetime.map(|m| u64::from(m) + 1),
                        time: [wtime.map(u64::from), Some(1000)],
                        moves_to_go: movestogo.map(|m| u32::from(m) + 1),
                        ..GoParams::default()
                    }
                    .to_string()
                }
            ),
        ]
    }

    /// One edit of a line: a character inserted, removed or replaced, or a cut.
    fn mutate(line: &str, edits: &[(usize, char, u8)]) -> String {
        let mut chars: Vec<char> = line.chars().collect();
        for &(at, c, kind) in edits {
            let at = if chars.is_empty() { 0 } else { at % (chars.len() + 1) };
            match kind % 4 {
                0 => chars.insert(at, c),
                1 if at < chars.len() => {
                    chars.remove(at);
                }
                2 if at < chars.len() => chars[at] = c,
                _ => chars.truncate(at),
            }
        }
        chars.into_iter().collect()
    }

    proptest! {
        #[test]
        fn random_lines_never_panic_and_errors_say_something(line in "\\PC{0,80}") {
            if let Err(err) = parse_command(&line) {
                prop_assert!(!err.message.is_empty());
                prop_assert!(!err.to_string().contains('\n'));
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let line = String::from_utf8_lossy(&bytes);
            if let Err(err) = parse_command(&line) {
                prop_assert!(!err.message.is_empty());
            }
        }

        #[test]
        fn mutated_commands_never_panic(
            line in valid_line(),
            edits in proptest::collection::vec((any::<usize>(), any::<char>(), any::<u8>()), 1..4),
        ) {
            prop_assert!(matches!(parse_command(&line), Ok(Some(_))), "`{}` should parse", line);
            let mutated = mutate(&line, &edits);
            if let Err(err) = parse_command(&mutated) {
                prop_assert!(!err.message.is_empty());
                prop_assert!(!err.to_string().contains('\n'));
            }
        }

        #[test]
        fn go_limits_round_trip(
            nodes in proptest::option::of(1u64..u64::MAX),
            depth in proptest::option::of(1u32..u32::MAX),
            movetime in proptest::option::of(1u64..u64::MAX),
            time in proptest::array::uniform2(proptest::option::of(0u64..i64::MAX as u64)),
            increment in proptest::array::uniform2(proptest::option::of(0u64..i64::MAX as u64)),
            moves_to_go in proptest::option::of(1u32..u32::MAX),
        ) {
            let go = GoParams { nodes, depth, movetime, time, increment, moves_to_go };
            prop_assert_eq!(parse_command(&go.to_string()), Ok(Some(EngineCommand::Go(go))));
        }
    }
}
