//! End-to-end tests of `camelot serve`: the built binary is started on a free port and spoken
//! to over raw TCP, as a browser or a script would: games played through the JSON API with the
//! engine replying, and bad requests (illegal moves, malformed JSON, bodies too large, unknown
//! paths, path traversal, another site's Host) refused with a status and a reason while the
//! server carries on.

mod common;

use common::{camelot, temp_dir};

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long any one answer may take before the test fails instead of hanging.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// A running server, stopped when dropped.
struct Server {
    child: Child,
    /// `127.0.0.1:PORT`, as printed.
    address: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_camelot"))
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary runs");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).expect("the server prints its address");
        let address = first
            .trim()
            .strip_prefix("camelot serve: listening on http://")
            .and_then(|rest| rest.strip_suffix('/'))
            .unwrap_or_else(|| panic!("an address line, got `{first}`"))
            .to_string();
        Server { child, address }
    }

    /// Sends `raw` as it is and reads the whole answer (the server closes after each).
    fn raw(&self, raw: &[u8]) -> Answer {
        let mut stream = TcpStream::connect(&self.address).expect("the server accepts");
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).expect("a timeout");
        // A refused body may be cut short by the server: what matters is the answer.
        let _ = stream.write_all(raw);
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("an HTTP answer, got `{text}`"));
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
        Answer { status, head: head.to_string(), body: body.to_string() }
    }

    fn get(&self, target: &str) -> Answer {
        self.raw(format!("GET {target} HTTP/1.1\r\nHost: {}\r\n\r\n", self.address).as_bytes())
    }

    fn post(&self, target: &str, body: &str) -> Answer {
        self.raw(
            format!(
                "POST {target} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                self.address,
                body.len()
            )
            .as_bytes(),
        )
    }

    /// A POST that must succeed, as JSON.
    fn ok(&self, target: &str, body: Value) -> Value {
        let answer = self.post(target, &body.to_string());
        assert_eq!(answer.status, 200, "{target} {body}: {}", answer.body);
        answer.json()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("JSON ({e}): {}", self.body))
    }

    fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or_else(|| panic!("an error message: {}", self.body)).to_string()
    }
}

#[test]
fn a_game_is_played_against_the_engine() {
    let server = Server::start(&["--player", "alphabeta:depth=1"]);
    assert!(server.address.starts_with("127.0.0.1:"), "{}", server.address);
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert!(page.head.contains("Content-Type: text/html"));
    assert!(page.body.contains("<svg id=\"board\""));
    assert_eq!(server.get("/app.js").status, 200);

    let state = server.ok("/api/new", json!({}));
    assert_eq!(
        (state["variant"].as_str(), state["human"].as_str(), state["status"].as_str()),
        (Some("camelot"), Some("white"), Some("human"))
    );
    let id = state["game"].as_str().expect("a game id").to_string();
    let legal = state["legal"].as_array().expect("legal moves");
    assert!(legal.iter().any(|m| m["move"] == "F7-H5-J7-J5" && m["squares"] == json!(["F7", "H5", "J7", "J5"])));
    let state = server.ok("/api/move", json!({"game": id, "move": "F6-F5"}));
    assert_eq!(state["status"], "engine");
    assert_eq!(state["history"][0]["move"], "F6-F5");
    let state = server.ok("/api/reply", json!({"game": id}));
    let reply = &state["reply"];
    assert_eq!(reply["color"], "black");
    assert_eq!(reply["player"], "alphabeta:depth=1");
    assert!(
        reply["evaluation"].is_string() && reply["score"].as_str().is_some_and(|s| s.starts_with("cp ")),
        "{reply}"
    );
    assert_eq!(state["history"][1]["move"], reply["move"]);
    assert_eq!(state["status"], "human");

    // A move given as squares: a canter of two legs, written by the server in notation.
    assert!(state["legal"].as_array().is_some_and(|l| l.iter().any(|m| m["move"] == "I7-I5-K7")), "{state}");
    let state = server.ok("/api/move", json!({"game": id, "path": ["I7", "I5", "K7"]}));
    assert_eq!(state["history"][2]["move"], "I7-I5-K7");
    let again = server.get(&format!("/api/state?game={id}"));
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["history"], state["history"]);
}

#[test]
fn whole_games_end_with_an_outcome() {
    // The person plays Black with the first legal move each turn until the game ends.
    let server = Server::start(&["--player", "random", "--variant", "camette"]);
    let mut state = server.ok("/api/new", json!({"side": "black"}));
    let id = state["game"].as_str().expect("a game id").to_string();
    for _ in 0..400 {
        match state["status"].as_str() {
            Some("engine") => state = server.ok("/api/reply", json!({"game": id})),
            Some("human") => {
                let first = state["legal"][0]["move"].clone();
                state = server.ok("/api/move", json!({"game": id, "move": first}));
            }
            _ => break,
        }
    }
    assert_eq!(state["status"], "over", "{state}");
    assert!(state["outcome"]["text"].as_str().is_some_and(|t| t.contains("wins") || t.starts_with("draw")));
    assert_eq!(state["legal"], json!([]));
    let late = server.post("/api/move", &json!({"game": id, "move": "C3-C4"}).to_string());
    assert_eq!(late.status, 409);
    assert!(late.error().starts_with("the game is over: "), "{}", late.error());
}

#[test]
fn bad_requests_are_refused_and_the_server_carries_on() {
    let server = Server::start(&["--player", "greedy"]);
    let state = server.ok("/api/new", json!({}));
    let id = state["game"].as_str().expect("a game id").to_string();

    let illegal = server.post("/api/move", &json!({"game": id, "move": "A4-A5"}).to_string());
    assert_eq!((illegal.status, illegal.error().as_str()), (400, "move `A4-A5`: no white piece on A4"));
    let illegal = server.post("/api/move", &json!({"game": id, "path": ["F6", "F7"]}).to_string());
    assert_eq!((illegal.status, illegal.error().as_str()), (400, "move `F6-F7`: landing square F7 is occupied"));
    let early = server.post("/api/reply", &json!({"game": id}).to_string());
    assert_eq!((early.status, early.error().as_str()), (409, "it is your move, not the engine's"));

    let malformed = server.post("/api/move", "{\"game\": ");
    assert_eq!(malformed.status, 400);
    assert!(malformed.error().starts_with("malformed JSON body: "), "{}", malformed.error());
    let unknown_field = server.post("/api/new", r#"{"side":"white","sudo":true}"#);
    assert_eq!(unknown_field.status, 400);
    assert!(unknown_field.error().contains("unknown field `sudo`"));
    let plain = server.raw(
        format!(
            "POST /api/new HTTP/1.1\r\nHost: {}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{{}}",
            server.address
        )
        .as_bytes(),
    );
    assert_eq!(plain.status, 415);

    // Bodies over the limit: one sent whole, one only announced.
    let big = format!(r#"{{"game":"{id}","move":"{}"}}"#, "x".repeat(100_000));
    let answer = server.post("/api/move", &big);
    assert_eq!(answer.status, 413);
    assert!(answer.error().contains("at most 65536"), "{}", answer.error());
    let announced = server.raw(
        format!("POST /api/new HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 1000000000000000\r\n\r\n{{}}", server.address)
            .as_bytes(),
    );
    assert_eq!(announced.status, 413);
    let head = format!("GET / HTTP/1.1\r\nHost: {}\r\nX-Filler: {}\r\n\r\n", server.address, "a".repeat(20_000));
    assert_eq!(server.raw(head.as_bytes()).status, 431);

    // Nothing outside the page's own files, however the path is spelled.
    for target in [
        "/favicon.ico",
        "/../Cargo.toml",
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "/app.js/../../Cargo.toml",
        "/assets/app.js",
        "/src/cli/serve/assets/app.js",
        "//etc/passwd",
        "/api/../Cargo.toml",
    ] {
        let answer = server.get(target);
        assert_eq!(answer.status, 404, "{target}: {}", answer.body);
        assert!(!answer.body.contains("[package]") && !answer.body.contains("root:"), "{target}");
    }
    assert_eq!(server.raw(b"GET ../Cargo.toml HTTP/1.1\r\n\r\n").status, 400);
    assert_eq!(server.raw(b"this is not http\r\n\r\n").status, 400);

    // Another site's name pointed at this machine (DNS rebinding) is not served.
    let foreign = server.raw(b"GET /api/info HTTP/1.1\r\nHost: attacker.example\r\n\r\n");
    assert_eq!(foreign.status, 403);
    assert!(foreign.error().contains("attacker.example"));

    // Still serving, the game as it was.
    let state = server.get(&format!("/api/state?game={id}"));
    assert_eq!(state.status, 200);
    assert_eq!(state.json()["history"], json!([]));
    assert_eq!(server.ok("/api/move", json!({"game": id, "move": "F6-F5"}))["status"], "engine");
}

#[test]
fn a_network_replies_with_its_evaluation_and_players_are_offered_not_named() {
    let dir = temp_dir("serve-cli", "model");
    let model = dir.join("000000");
    let model = model.to_str().expect("utf-8 path");
    let out = camelot(&["init-net", "--variant", "cam", "--blocks", "1", "--channels", "8", "--out", model]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let server = Server::start(&["--model", model, "--player", "greedy", "--variant", "cam"]);
    let info = server.get("/api/info").json();
    let spec = format!("mcts:model={model},sims=200");
    assert_eq!(info["players"], json!([spec, "greedy"]));
    let state = server.ok("/api/new", json!({"side": "black"}));
    assert_eq!(state["player"], spec.as_str());
    let id = state["game"].as_str().expect("a game id").to_string();
    let state = server.ok("/api/reply", json!({"game": id}));
    let reply = &state["reply"];
    assert!(reply["evaluation"].as_str().is_some_and(|e| e.starts_with("expected score ")), "{reply}");
    assert!(reply["info"].as_str().is_some_and(|i| i.contains("simulations")), "{reply}");
    assert_eq!(server.ok("/api/new", json!({"player": "greedy"}))["player"], "greedy");
    // A page cannot make the server load a file it names.
    let named = server.post("/api/new", &json!({"player": "mcts:model=/etc/passwd"}).to_string());
    assert_eq!(named.status, 400);
    assert!(named.error().contains("is not offered by this server"), "{}", named.error());
    // The model plays Cam only: another variant is refused with the reason.
    let other = server.post("/api/new", &json!({"variant": "camette"}).to_string());
    assert_eq!(other.status, 400);
    assert!(other.error().contains("the model plays `cam`"), "{}", other.error());
    drop(server);

    let missing = camelot(&["serve", "--port", "0", "--model", &format!("{model}-missing")]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("-missing"));
}

#[test]
fn slow_clients_do_not_lock_the_server_out() {
    let server = Server::start(&["--player", "greedy"]);
    // More clients than the server serves at once, each stalled inside its request head.
    let mut slow: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.address).expect("the server accepts");
            stream.write_all(b"G").expect("a byte of a head");
            stream
        })
        .collect();
    // Real requests are still answered, and at once: the clients stalled longest make room.
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let answer = server.get("/api/info");
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(started.elapsed() < Duration::from_secs(5), "answered after {:?}", started.elapsed());
    }
    // 32 places: the 33rd to 40th stalled clients and the first real request each cut off the
    // client stalled longest; a later real request does too unless the one before it has already
    // left its place. The other stalled clients still wait.
    let cut = slow
        .iter_mut()
        .filter(|stream| {
            stream.set_nonblocking(true).expect("non-blocking");
            let mut byte = [0u8; 1];
            !matches!((&**stream).read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        })
        .count();
    assert!((9..=13).contains(&cut), "{cut} stalled clients cut off");

    // Two lengths that disagree leave the body's end open: refused.
    let smuggled = server.raw(
        format!(
            "POST /api/new HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\
             Content-Length: 20\r\n\r\n{{}}",
            server.address
        )
        .as_bytes(),
    );
    assert_eq!(smuggled.status, 400);
    assert_eq!(smuggled.error(), "two different Content-Length headers");
}
