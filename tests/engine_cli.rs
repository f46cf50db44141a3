//! End-to-end tests of `camelot engine`: the built binary is driven through its line protocol
//! as a front end would drive it: whole games against a scripted opponent that plays from
//! `query legalmoves`, bad input answered with error lines while the process carries on, and a
//! network checkpoint played through `--model`.

mod common;

use common::{camelot, temp_dir};

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// How long any one answer may take before the test fails instead of hanging.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

const ERROR_PREFIX: &str = "info string error: ";

/// A running engine: lines in through its standard input, lines out through a reader thread.
struct Engine {
    child: Child,
    input: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_camelot"))
            .arg("engine")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let input = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Engine { child, input, lines }
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).expect("the engine reads its input");
        self.input.flush().expect("the engine reads its input");
    }

    fn next_line(&mut self) -> String {
        match self.lines.recv_timeout(ANSWER_TIMEOUT) {
            Ok(line) => line,
            Err(err) => panic!("no answer from the engine ({err})"),
        }
    }

    /// Lines up to and including the first for which `last` holds.
    fn read_through(&mut self, last: impl Fn(&str) -> bool) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let line = self.next_line();
            let done = last(&line);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// Sends `line` then `isready`: the lines answering `line` (none for most commands).
    fn answer(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.send("isready");
        let mut lines = self.read_through(|l| l == "readyok");
        lines.pop();
        lines
    }

    fn query(&mut self, what: &str) -> String {
        self.send(&format!("query {what}"));
        let line = self.next_line();
        match line.strip_prefix("response") {
            Some(rest) => rest.trim_start().to_string(),
            None => panic!("`query {what}` answered `{line}`"),
        }
    }

    fn handshake(&mut self) -> Vec<String> {
        self.send("ugi");
        let lines = self.read_through(|l| l == "ugiok");
        assert_eq!(self.answer("uginewgame"), Vec::<String>::new());
        lines
    }

    /// Sends `quit` and waits for the process to end.
    fn quit(mut self) -> Output {
        self.send("quit");
        self.child.wait_with_output().expect("the engine ends")
    }
}

/// A small deterministic stream of choices for the scripted opponent (xorshift64).
struct Script(u64);

impl Script {
    fn pick(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Plays one game from the start: the engine moves for `engine_side` (0 White, 1 Black) with
/// the `go` lines in turn, the script for the other side, until `query gameover` says the game
/// is over or `ply_cap` plies. Returns the moves and the final `query result`.
fn play_game(
    engine: &mut Engine,
    engine_side: usize,
    go_lines: &[&str],
    ply_cap: usize,
    seed: u64,
) -> (Vec<String>, String) {
    let mut script = Script(seed);
    let mut moves: Vec<String> = Vec::new();
    while moves.len() < ply_cap {
        let position = format!("position startpos moves {}", moves.join(" "));
        assert_eq!(engine.answer(position.trim_end()), Vec::<String>::new(), "after {moves:?}");
        if engine.query("gameover") == "true" {
            assert_eq!(engine.query("legalmoves"), "", "a finished game has no legal moves");
            break;
        }
        assert_eq!(engine.query("gameover"), "false");
        assert_eq!(engine.query("p1turn"), moves.len().is_multiple_of(2).to_string());
        let legal: Vec<String> = engine.query("legalmoves").split(' ').map(str::to_string).collect();
        assert!(!legal.is_empty() && !legal[0].is_empty(), "a game in progress has legal moves");
        let mut sorted = legal.clone();
        sorted.sort();
        assert_eq!(sorted, legal, "legal moves come sorted");
        let mv = if moves.len() % 2 == engine_side {
            let go = go_lines[(moves.len() / 2) % go_lines.len()];
            engine.send(go);
            let lines = engine.read_through(|l| l.starts_with("bestmove "));
            assert!(!lines.iter().any(|l| l.starts_with(ERROR_PREFIX)), "`{go}`: {lines:?}");
            let best = lines.last().and_then(|l| l.strip_prefix("bestmove ")).expect("a bestmove").to_string();
            assert!(legal.contains(&best), "`{go}` gave `{best}`, not one of {legal:?}");
            let info = lines
                .iter()
                .find(|l| l.starts_with("info ") && !l.starts_with("info string"))
                .unwrap_or_else(|| panic!("`{go}` gave no info line: {lines:?}"));
            let pv = info.split_once(" pv ").map(|(_, pv)| pv).unwrap_or_else(|| panic!("no pv in `{info}`"));
            assert_eq!(pv.split(' ').next(), Some(best.as_str()), "the line starts with the move: `{info}`");
            assert!(info.contains(" time "), "{info}");
            best
        } else {
            legal[script.pick(legal.len())].clone()
        };
        moves.push(mv);
    }
    let result = engine.query("result");
    (moves, result)
}

#[test]
fn alphabeta_plays_a_whole_game_through_the_protocol() {
    let mut engine = Engine::start(&["--player", "alphabeta:depth=2", "--variant", "cam", "--move-overhead", "5"]);
    let hello = engine.handshake();
    assert_eq!(hello[0], format!("id name camelot-zero {} (alphabeta:depth=2)", env!("CARGO_PKG_VERSION")));
    assert!(hello.iter().any(|l| l == "option name Player type string default alphabeta:depth=2"), "{hello:?}");
    assert!(
        hello.iter().any(|l| l.starts_with("option name Variant type combo default cam var camelot ")),
        "{hello:?}"
    );

    let go_lines = ["go depth 2", "go movetime 15", "go wtime 450 btime 450", "go nodes 50", "go"];
    let (moves, result) = play_game(&mut engine, 0, &go_lines, 300, 0x9E37_79B9_7F4A_7C15);
    assert!(moves.len() >= 5, "a game of {} plies: {moves:?}", moves.len());
    if moves.len() < 300 {
        assert!(["p1win", "p2win", "draw"].contains(&result.as_str()), "over after {} plies: `{result}`", moves.len());
    } else {
        assert_eq!(result, "none");
    }
    let out = engine.quit();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn uct_plays_black_on_camette_after_setoption() {
    let mut engine = Engine::start(&["--player", "greedy"]);
    engine.handshake();
    assert_eq!(engine.answer("setoption name Variant value camette"), Vec::<String>::new());
    assert_eq!(engine.answer("setoption name Player value uct:sims=40,cap=20"), Vec::<String>::new());
    assert_eq!(engine.answer("uginewgame"), Vec::<String>::new());
    let go_lines = ["go nodes 30", "go movetime 10", "go btime 300 wtime 9000 binc 10"];
    let (moves, result) = play_game(&mut engine, 1, &go_lines, 200, 12345);
    assert!(moves.len() >= 2);
    assert!(["p1win", "p2win", "draw", "none"].contains(&result.as_str()), "{result}");
    let out = engine.quit();
    assert!(out.status.success());
}

#[test]
fn bad_input_gets_one_error_line_and_the_engine_carries_on() {
    let mut engine = Engine::start(&["--player", "random", "--variant", "cam"]);
    engine.handshake();
    let bad = [
        ("uci", "unknown command `uci`"),
        ("position", "position: expected `startpos` or `cpn CPN`"),
        ("position startpos moves A1-A2", "position: move 1 of 1: move `A1-A2`"),
        ("position cpn 2/3kmk3/banana w", "position: CPN"),
        ("setoption name Player value alphabeta:depth=0", "setoption: player `alphabeta`: `depth=0` is not valid"),
        (
            "setoption name Player value mcts:model=/nowhere/net",
            "setoption: player `mcts:model=/nowhere/net,sims=200`: model `/nowhere/net`",
        ),
        ("setoption name Threads value 4", "setoption: unknown option `Threads`"),
        ("query everything", "query: unknown query `everything`"),
        ("isready please", "isready: takes no arguments"),
    ];
    for (line, expected) in bad {
        let lines = engine.answer(line);
        assert_eq!(lines.len(), 1, "`{line}`: {lines:?}");
        assert!(lines[0].starts_with(&format!("{ERROR_PREFIX}{expected}")), "`{line}`: {lines:?}");
    }
    // A malformed `go` still ends with the `bestmove` a front end waits for.
    for line in ["go infinite", "go nodes many", "go sims 5"] {
        let lines = engine.answer(line);
        assert_eq!(lines.len(), 2, "`{line}`: {lines:?}");
        assert!(lines[0].starts_with(&format!("{ERROR_PREFIX}go: ")), "`{line}`: {lines:?}");
        assert_eq!(lines[1], "bestmove (none)");
    }
    // Bytes that are not UTF-8, a control character, a long line: errors, not an end.
    engine.send_bytes(b"\xff\xfe go\n");
    engine.send_bytes(b"\x07\n");
    engine.send(&"position startpos moves ".repeat(5000));
    engine.send("isready");
    let lines = engine.read_through(|l| l == "readyok");
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[..3].iter().all(|l| l.starts_with(ERROR_PREFIX) && l.len() < 300), "{lines:?}");
    // After all that the session still plays from the position it last accepted.
    assert_eq!(engine.query("p1turn"), "true");
    engine.send("go nodes 5");
    let best = engine.read_through(|l| l.starts_with("bestmove ")).pop().expect("a bestmove");
    let best = best.strip_prefix("bestmove ").expect("a move");
    assert!(engine.query("legalmoves").split(' ').any(|m| m == best), "{best}");
    let out = engine.quit();
    assert!(out.status.success());
}

#[test]
fn end_of_input_ends_the_engine_cleanly() {
    let mut engine = Engine::start(&["--player", "greedy", "--variant", "camette"]);
    engine.send("isready");
    assert_eq!(engine.next_line(), "readyok");
    drop(engine.input);
    let out = engine.child.wait_with_output().expect("the engine ends");
    assert!(out.status.success());
}

#[test]
fn a_network_plays_through_the_model_shorthand() {
    let dir = temp_dir("engine-cli", "model");
    let model = dir.join("000000");
    let model = model.to_str().expect("utf-8 path");
    let out = camelot(&["init-net", "--variant", "cam", "--blocks", "1", "--channels", "8", "--out", model]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let mut engine = Engine::start(&["--model", model, "--variant", "cam"]);
    let hello = engine.handshake();
    assert_eq!(hello[0], format!("id name camelot-zero {} (mcts:model={model},sims=200)", env!("CARGO_PKG_VERSION")));
    let go_lines = ["go nodes 16", "go movetime 40", "go depth 3"];
    // `go movetime` makes the game depend on the machine's speed, and an untrained network may
    // lose within a few plies: the searches below start from the last position still in play.
    let (mut moves, _) = play_game(&mut engine, 0, &go_lines, 8, 7);
    assert!(!moves.is_empty(), "the engine made no move");
    loop {
        let position = format!("position startpos moves {}", moves.join(" "));
        assert_eq!(engine.answer(position.trim_end()), Vec::<String>::new());
        if engine.query("gameover") == "false" {
            break;
        }
        moves.pop().expect("the start position is in play");
    }
    engine.send("go nodes 24");
    let lines = engine.read_through(|l| l.starts_with("bestmove "));
    let info = lines.iter().find(|l| l.starts_with("info nodes ")).unwrap_or_else(|| panic!("{lines:?}"));
    assert!(info.contains(" score cp "), "{info}");
    assert!(lines.iter().any(|l| l.starts_with("info string ") && l.contains("value W/D/L")), "{lines:?}");
    // The largest count a spec takes: `stop` ends the search within one network call, not
    // after it (its tree is bounded too, by `camelot_arena::MAX_TREE_NODES`).
    engine.send("go nodes 4294967294");
    engine.send("isready");
    assert_eq!(engine.prompt_line("isready during a search"), "readyok");
    std::thread::sleep(Duration::from_millis(300));
    engine.send("stop");
    let info = engine.prompt_line("stop");
    assert!(info.starts_with("info "), "{info}");
    let lines = engine.read_through(|l| l.starts_with("bestmove "));
    assert!(lines.last().is_some_and(|l| l != "bestmove (none)"), "{lines:?}");
    engine.quit();

    // A model of another variant, or none at all, stops the engine before it starts.
    let other = camelot(&["engine", "--model", model, "--variant", "camette"]);
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("the model plays `cam`"));
    let missing = camelot(&["engine", "--model", &format!("{model}-missing")]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("-missing"));
}

#[test]
fn a_model_sets_the_variant_unless_told_otherwise() {
    let dir = temp_dir("engine-cli", "variant");
    let model = dir.join("m");
    let model = model.to_str().expect("utf-8 path");
    let out = camelot(&["init-net", "--variant", "camette", "--blocks", "1", "--channels", "8", "--out", model]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // No --variant: the engine plays the model's variant.
    let mut engine = Engine::start(&["--model", model]);
    engine.handshake();
    let camette_start = camelot(&["apply", "--variant", "camette"]);
    assert!(camette_start.status.success(), "{}", String::from_utf8_lossy(&camette_start.stderr));
    engine.send("position startpos");
    assert_eq!(engine.query("position"), String::from_utf8_lossy(&camette_start.stdout).trim());
    let (moves, _) = play_game(&mut engine, 0, &["go nodes 8"], 2, 3);
    assert_eq!(moves.len(), 2);
    engine.quit();

    // eval-net reads the variant from the card too.
    let eval = camelot(&["eval-net", "--model", model, "--top", "3"]);
    assert!(eval.status.success(), "{}", String::from_utf8_lossy(&eval.stderr));
    assert!(String::from_utf8_lossy(&eval.stdout).contains("camette"));

    // An explicit --variant that contradicts the model is an error naming both.
    let other = camelot(&["engine", "--model", model, "--variant", "camelot"]);
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("the model plays `camette`") && err.contains("`camelot`"), "{err}");
    // The same explicit variant as the model's is fine.
    let same = Engine::start(&["--model", model, "--variant", "camette"]);
    same.quit();
}

/// How long the engine may take to answer `isready` or `stop` while it searches.
const PROMPT: Duration = Duration::from_secs(5);

impl Engine {
    /// The next line, within `PROMPT`.
    fn prompt_line(&mut self, after: &str) -> String {
        match self.lines.recv_timeout(PROMPT) {
            Ok(line) => line,
            Err(err) => panic!("no answer within {PROMPT:?} after `{after}` ({err})"),
        }
    }

    /// Sends `quit`; the process must end within `limit` (it is killed otherwise).
    fn quit_within(mut self, limit: Duration) -> std::process::ExitStatus {
        self.send("quit");
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("waiting for the engine") {
                return status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!("the engine did not end within {limit:?} of `quit`");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn go_limits_past_the_specs_bounds_are_refused() {
    let mut engine = Engine::start(&["--player", "alphabeta:depth=1", "--variant", "camette"]);
    for (go, limit) in [
        ("go depth 65", "`depth 65`: too large (at most 64"),
        ("go depth 4294967295", "`depth 4294967295`: too large (at most 64"),
        ("go movetime 18446744073709551615", "`movetime 18446744073709551615`: too large (at most 86400000"),
        ("go nodes 18446744073709551615", "`nodes 18446744073709551615`: too large (at most 4294967294"),
    ] {
        let lines = engine.answer(go);
        assert_eq!(lines.len(), 2, "{go}: {lines:?}");
        assert!(lines[0].starts_with(&format!("{ERROR_PREFIX}go: {limit}")), "{go}: {lines:?}");
        assert_eq!(lines[1], "bestmove (none)", "{go}");
    }
    // A clock far beyond a day is not refused (it is the front end's state), but capped.
    engine.send("position startpos");
    engine.send("go wtime 9223372036854775807 btime 9223372036854775807 winc 9223372036854775807");
    engine.send("isready");
    assert_eq!(engine.prompt_line("isready during a search"), "readyok");
    engine.send("stop");
    let lines = engine.read_through(|l| l.starts_with("bestmove "));
    assert!(lines[0].starts_with("info string the clock gives "), "{lines:?}");
    assert!(lines.last().is_some_and(|l| l != "bestmove (none)"), "{lines:?}");
    assert!(engine.quit_within(PROMPT).success());

    let overhead = camelot(&["engine", "--move-overhead", "99999999999"]);
    assert!(!overhead.status.success());
    let err = String::from_utf8_lossy(&overhead.stderr);
    assert!(err.contains("99999999999") && err.contains("0..=10000"), "{err}");
}

#[test]
fn a_search_keeps_answering_isready_stop_and_quit() {
    // The largest simulation count a spec takes: the search would run for hours.
    let mut engine = Engine::start(&["--player", "uct", "--variant", "camette"]);
    engine.send("go nodes 4294967294");
    engine.send("isready");
    assert_eq!(engine.prompt_line("isready during a search"), "readyok");
    // Other lines wait for the search and are answered after it, in order.
    engine.send("query p1turn");
    engine.send("stop");
    let info = engine.prompt_line("stop");
    assert!(info.starts_with("info "), "{info}");
    let lines = engine.read_through(|l| l.starts_with("bestmove "));
    assert!(lines.last().is_some_and(|l| l != "bestmove (none)"), "{lines:?}");
    assert_eq!(engine.prompt_line("query after the search"), "response true");

    // `quit` during a search ends the process at once.
    engine.send("go nodes 4294967294");
    engine.send("isready");
    assert_eq!(engine.prompt_line("isready during a search"), "readyok");
    assert!(engine.quit_within(PROMPT).success());
}
