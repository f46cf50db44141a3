//! What `camelot serve` answers: the page's own files (embedded in the binary, so no path on
//! disk is ever served) and the JSON API the page plays through. Everything here works on a
//! request already read and checked for size (see `http.rs`), so it is tested without sockets.

use super::games::{path_notation, shown, GameSlot, Games};
use camelot_arena::{ModelStore, PlayerSpec};
use camelot_rules::{Color, Ruleset, VARIANT_NAMES};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The page's files: path, content type, bytes.
const ASSETS: [(&str, &str, &[u8]); 3] = [
    ("/", "text/html; charset=utf-8", include_bytes!("assets/index.html")),
    ("/app.js", "text/javascript; charset=utf-8", include_bytes!("assets/app.js")),
    ("/style.css", "text/css; charset=utf-8", include_bytes!("assets/style.css")),
];

/// The longest move text read (a move of 64 squares is about 200 characters).
const MAX_MOVE_TEXT: usize = 400;

/// A request as the API sees it.
pub struct Incoming<'a> {
    /// `GET`, `POST`, ...
    pub method: &'a str,
    /// The request target: path and query.
    pub target: &'a str,
    /// The `Host` header.
    pub host: Option<&'a str>,
    /// The `Content-Type` header.
    pub content_type: Option<&'a str>,
    /// The body, already limited in size.
    pub body: &'a [u8],
}

/// A response: status, content type and body.
#[derive(Debug)]
pub struct Outgoing {
    /// HTTP status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
    /// Methods the path takes, for a 405's `Allow` header.
    pub allow: Option<&'static str>,
}

impl Outgoing {
    /// A JSON error `{"error": message}`: every refusal names what is wrong.
    pub fn error(status: u16, message: impl Into<String>) -> Outgoing {
        let body = serde_json::json!({ "error": message.into() });
        Outgoing { status, content_type: JSON, body: body.to_string().into_bytes(), allow: None }
    }

    fn json<T: Serialize>(value: &T) -> Outgoing {
        match serde_json::to_vec(value) {
            Ok(body) => Outgoing { status: 200, content_type: JSON, body, allow: None },
            Err(err) => Outgoing::error(500, format!("writing the answer: {err}")),
        }
    }

    fn method_not_allowed(method: &str, allow: &'static str) -> Outgoing {
        let mut out = Outgoing::error(405, format!("{} is not allowed here (allowed: {allow})", shown(method)));
        out.allow = Some(allow);
        out
    }
}

const JSON: &str = "application/json";

/// What the server plays with, fixed at start.
pub struct Settings {
    /// The players the page may choose from; the first is the default.
    pub players: Vec<PlayerSpec>,
    /// The default variant.
    pub variant: String,
    /// Ruleset flag overrides (`--set`), applied to every variant.
    pub overrides: Vec<String>,
    /// Seed of the players' random choices.
    pub seed: u64,
    /// The `Host` values taken, where the server listens on a loopback address: a page of
    /// another site whose name was made to point at 127.0.0.1 (DNS rebinding) sends its own.
    pub hosts: Option<Vec<String>>,
}

/// The server's state: its settings, the games and the networks loaded so far.
pub struct Api {
    settings: Settings,
    games: Games,
    models: ModelStore,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewRequest {
    variant: Option<String>,
    side: Option<String>,
    player: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    game: String,
    #[serde(rename = "move")]
    notation: Option<String>,
    path: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GameRequest {
    game: String,
}

#[derive(Serialize)]
struct InfoView<'a> {
    server: &'static str,
    players: Vec<String>,
    variants: &'a [&'a str],
    variant: &'a str,
}

impl Api {
    /// A server with no game yet.
    pub fn new(settings: Settings) -> Api {
        Api { settings, games: Games::default(), models: ModelStore::new() }
    }

    /// Checks that every player can be built for the default variant, so that a missing model
    /// is reported when the server starts rather than on the page.
    pub fn check_players(&self) -> Result<(), String> {
        let rules = self.ruleset(&self.settings.variant)?;
        for spec in &self.settings.players {
            GameSlot::new(String::new(), Arc::clone(&rules), spec.clone(), Color::White, &self.models, 0, 0)?;
        }
        Ok(())
    }

    /// The answer to one request.
    pub fn handle(&self, request: &Incoming) -> Outgoing {
        if let Some(hosts) = &self.settings.hosts {
            let host = request.host.unwrap_or("");
            if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
                return Outgoing::error(
                    403,
                    format!("Host `{}` is not this server's address (expected {})", shown(host), hosts.join(" or ")),
                );
            }
        }
        let (path, query) = match request.target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (request.target, None),
        };
        if let Some(&(_, content_type, bytes)) = ASSETS.iter().find(|(p, _, _)| *p == path) {
            if request.method != "GET" {
                return Outgoing::method_not_allowed(request.method, "GET");
            }
            return Outgoing { status: 200, content_type, body: bytes.to_vec(), allow: None };
        }
        let (allow, result) = match path {
            "/api/info" => ("GET", self.get(request, query, |_| Ok(self.info()))),
            "/api/state" => ("GET", self.get(request, query, |query| self.state(query))),
            "/api/new" => ("POST", self.post(request, query, |r: NewRequest| self.new_game(r))),
            "/api/move" => ("POST", self.post(request, query, |r: MoveRequest| self.play_move(r))),
            "/api/reply" => ("POST", self.post(request, query, |r: GameRequest| self.reply(r))),
            // Anything else, `..` and encoded forms included, names nothing: there is no file
            // system behind these paths.
            _ => return Outgoing::error(404, format!("nothing at `{}`", shown(path))),
        };
        match result {
            Some(out) => out,
            None => Outgoing::method_not_allowed(request.method, allow),
        }
    }

    /// A GET route: `None` for another method.
    fn get(
        &self,
        request: &Incoming,
        query: Option<&str>,
        answer: impl FnOnce(Option<&str>) -> Result<Outgoing, Outgoing>,
    ) -> Option<Outgoing> {
        if request.method != "GET" {
            return None;
        }
        Some(answer(query).unwrap_or_else(|refusal| refusal))
    }

    /// A POST route taking a JSON body of type `T`: `None` for another method.
    fn post<T: DeserializeOwned>(
        &self,
        request: &Incoming,
        query: Option<&str>,
        answer: impl FnOnce(T) -> Result<Outgoing, Outgoing>,
    ) -> Option<Outgoing> {
        if request.method != "POST" {
            return None;
        }
        if query.is_some() {
            return Some(Outgoing::error(400, "POST requests take their arguments in the JSON body, not the query"));
        }
        // A JSON content type cannot be sent across origins without the browser asking first
        // (a preflight this server never grants), so another site's page cannot play here.
        let json = request.content_type.is_some_and(|t| {
            t.split(';').next().is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
        });
        if !json {
            return Some(Outgoing::error(415, "the body must be JSON, sent with `Content-Type: application/json`"));
        }
        let body = match serde_json::from_slice::<T>(request.body) {
            Ok(body) => body,
            Err(err) => return Some(Outgoing::error(400, format!("malformed JSON body: {err}"))),
        };
        Some(answer(body).unwrap_or_else(|refusal| refusal))
    }

    fn info(&self) -> Outgoing {
        Outgoing::json(&InfoView {
            server: concat!("camelot-zero ", env!("CARGO_PKG_VERSION")),
            players: self.settings.players.iter().map(ToString::to_string).collect(),
            variants: &VARIANT_NAMES,
            variant: &self.settings.variant,
        })
    }

    fn state(&self, query: Option<&str>) -> Result<Outgoing, Outgoing> {
        let mut game = None;
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("game", id)) => game = Some(id),
                _ => {
                    return Err(Outgoing::error(
                        400,
                        format!("unknown query argument `{}` (expected game=ID)", shown(pair)),
                    ))
                }
            }
        }
        let id = game.ok_or_else(|| Outgoing::error(400, "missing query argument `game` (GET /api/state?game=ID)"))?;
        let slot = self.slot(id)?;
        let slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Outgoing::json(&slot.view()))
    }

    fn new_game(&self, request: NewRequest) -> Result<Outgoing, Outgoing> {
        let variant = request.variant.as_deref().unwrap_or(&self.settings.variant);
        let rules = self.ruleset(variant).map_err(|e| Outgoing::error(400, e))?;
        let human = match request.side.as_deref().unwrap_or("white") {
            "white" => Color::White,
            "black" => Color::Black,
            other => {
                return Err(Outgoing::error(400, format!("side `{}` is neither `white` nor `black`", shown(other))))
            }
        };
        let spec = match &request.player {
            None => self.settings.players[0].clone(),
            Some(text) => self.offered(text).map_err(|e| Outgoing::error(400, e))?,
        };
        let index = self.games.next_index();
        let id = format!("{:016x}", rand::random::<u64>());
        let slot = GameSlot::new(id, rules, spec, human, &self.models, self.settings.seed, index)
            .map_err(|e| Outgoing::error(400, e))?;
        let view = slot.view();
        self.games.insert(slot);
        Ok(Outgoing::json(&view))
    }

    fn play_move(&self, request: MoveRequest) -> Result<Outgoing, Outgoing> {
        let slot = self.slot(&request.game)?;
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        in_turn(&slot, "human")?;
        let text = match (request.notation, request.path) {
            (Some(text), None) => text,
            (None, Some(path)) => path_notation(slot.game.position(), &path).map_err(|e| Outgoing::error(400, e))?,
            _ => return Err(Outgoing::error(400, "give the move either as `move` (notation) or as `path` (squares)")),
        };
        if text.len() > MAX_MOVE_TEXT {
            return Err(Outgoing::error(
                400,
                format!("the move is {} bytes long; at most {MAX_MOVE_TEXT}", text.len()),
            ));
        }
        slot.play_human(&text).map_err(|e| Outgoing::error(400, e))?;
        Ok(Outgoing::json(&slot.view()))
    }

    fn reply(&self, request: GameRequest) -> Result<Outgoing, Outgoing> {
        let slot = self.slot(&request.game)?;
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        in_turn(&slot, "engine")?;
        slot.play_engine(&self.models, self.settings.seed).map_err(|e| Outgoing::error(500, format!("engine: {e}")))?;
        Ok(Outgoing::json(&slot.view()))
    }

    fn slot(&self, id: &str) -> Result<Arc<std::sync::Mutex<GameSlot>>, Outgoing> {
        if id.is_empty() || id.len() > 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Outgoing::error(400, format!("`{}` is not a game id (hex digits)", shown(id))));
        }
        self.games.get(id).ok_or_else(|| {
            Outgoing::error(404, format!("no game `{id}`: it was never started here or was forgotten; start a new one"))
        })
    }

    fn ruleset(&self, variant: &str) -> Result<Arc<Ruleset>, String> {
        Ruleset::with_overrides(variant, &self.settings.overrides)
            .map(Arc::new)
            .map_err(|e| format!("variant `{}`: {e}", shown(variant)))
    }

    /// The offered player that `text` names. Only players given on the command line are
    /// offered: a page must not be able to name a model path on this machine.
    fn offered(&self, text: &str) -> Result<PlayerSpec, String> {
        let spec = PlayerSpec::parse(text).map_err(|e| format!("player `{}`: {e}", shown(text)))?;
        if self.settings.players.contains(&spec) {
            return Ok(spec);
        }
        let offered: Vec<String> = self.settings.players.iter().map(ToString::to_string).collect();
        Err(format!(
            "player `{}` is not offered by this server (offered: {}); start it with `--player {}` to offer it",
            shown(text),
            offered.join(", "),
            shown(text)
        ))
    }
}

/// Refuses a move out of turn: `wanted` is the status ([`GameSlot::status`]) that allows it.
fn in_turn(slot: &GameSlot, wanted: &str) -> Result<(), Outgoing> {
    match slot.status() {
        status if status == wanted => Ok(()),
        "engine" => Err(Outgoing::error(409, "it is the engine's move: ask for it with POST /api/reply")),
        "human" => Err(Outgoing::error(409, "it is your move, not the engine's")),
        _ => {
            let outcome = slot.game.outcome().map(|o| o.to_string()).unwrap_or_default();
            Err(Outgoing::error(409, format!("the game is over: {outcome}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn api(players: &[&str]) -> Api {
        Api::new(Settings {
            players: players.iter().map(|p| PlayerSpec::parse(p).expect("spec")).collect(),
            variant: "camelot".to_string(),
            overrides: Vec::new(),
            seed: 1,
            hosts: None,
        })
    }

    fn call(api: &Api, method: &str, target: &str, body: &str) -> (u16, Value) {
        let out = api.handle(&Incoming {
            method,
            target,
            host: None,
            content_type: Some("application/json"),
            body: body.as_bytes(),
        });
        let value = if out.content_type == JSON {
            serde_json::from_slice(&out.body).expect("JSON answers")
        } else {
            Value::String(String::from_utf8_lossy(&out.body).into_owned())
        };
        (out.status, value)
    }

    fn error(api: &Api, method: &str, target: &str, body: &str) -> (u16, String) {
        let (status, value) = call(api, method, target, body);
        (status, value["error"].as_str().expect("an error message").to_string())
    }

    #[test]
    fn assets_are_served_and_nothing_else() {
        let api = api(&["greedy"]);
        let (status, page) = call(&api, "GET", "/", "");
        assert_eq!(status, 200);
        assert!(page.as_str().expect("text").contains("<svg") || page.as_str().expect("text").contains("app.js"));
        assert_eq!(call(&api, "GET", "/app.js", "").0, 200);
        assert_eq!(call(&api, "GET", "/style.css?v=1", "").0, 200);
        for path in
            ["/../Cargo.toml", "/%2e%2e/Cargo.toml", "/assets/index.html", "/src/main.rs", "//etc/passwd", "/api"]
        {
            assert_eq!(call(&api, "GET", path, "").0, 404, "{path}");
        }
        let (status, message) = error(&api, "POST", "/", "{}");
        assert_eq!((status, message.as_str()), (405, "POST is not allowed here (allowed: GET)"));
    }

    #[test]
    fn a_game_is_played_through_the_api() {
        let api = api(&["greedy", "random"]);
        let (status, info) = call(&api, "GET", "/api/info", "");
        assert_eq!(status, 200);
        assert_eq!(info["players"], serde_json::json!(["greedy", "random"]));
        let (status, state) = call(&api, "POST", "/api/new", r#"{"variant":"cam","side":"black","player":"random"}"#);
        assert_eq!(status, 200, "{state}");
        assert_eq!((state["status"].as_str(), state["human"].as_str()), (Some("engine"), Some("black")));
        assert_eq!(state["player"], "random");
        let id = state["game"].as_str().expect("an id").to_string();
        let (status, message) = error(&api, "POST", "/api/move", &format!(r#"{{"game":"{id}","move":"C10-C11"}}"#));
        assert_eq!((status, message.as_str()), (409, "it is the engine's move: ask for it with POST /api/reply"));
        let (status, state) = call(&api, "POST", "/api/reply", &format!(r#"{{"game":"{id}"}}"#));
        assert_eq!(status, 200);
        assert_eq!(state["reply"]["color"], "white");
        assert_eq!(state["status"], "human");
        let first = state["legal"][0].clone();
        let path = first["squares"].to_string();
        let (status, state) = call(&api, "POST", "/api/move", &format!(r#"{{"game":"{id}","path":{path}}}"#));
        assert_eq!(status, 200, "{state}");
        assert_eq!(state["history"][1]["move"], first["move"]);
        assert_eq!(state["reply"], Value::Null);
        let (status, again) = call(&api, "GET", &format!("/api/state?game={id}"), "");
        assert_eq!((status, &again["history"]), (200, &state["history"]));
    }

    #[test]
    fn bad_requests_are_refused_with_a_reason() {
        let api = api(&["greedy"]);
        let (_, state) = call(&api, "POST", "/api/new", "{}");
        let id = state["game"].as_str().expect("an id").to_string();
        let cases = [
            ("POST", "/api/new", "{", 400, "malformed JSON body: EOF while parsing an object at line 1 column 1"),
            ("POST", "/api/new", r#"{"colour":"white"}"#, 400, "malformed JSON body: unknown field `colour`"),
            ("POST", "/api/new", r#"{"side":"red"}"#, 400, "side `red` is neither `white` nor `black`"),
            ("POST", "/api/new", r#"{"variant":"chess"}"#, 400, "variant `chess`: unknown variant `chess`"),
            ("POST", "/api/new", r#"{"player":"mcts:model=/etc/passwd"}"#, 400, "player `mcts:model=/etc/passwd`"),
            ("POST", "/api/new", r#"{"player":"alphabeta:depth=9"}"#, 400, "player `alphabeta:depth=9` is not offered"),
            ("POST", "/api/move", r#"{"game":"zz"}"#, 400, "`zz` is not a game id (hex digits)"),
            ("POST", "/api/move", r#"{"game":"abc"}"#, 404, "no game `abc`"),
            ("GET", "/api/state", "", 400, "missing query argument `game`"),
            ("GET", "/api/state?id=1", "", 400, "unknown query argument `id=1`"),
            ("PUT", "/api/move", "", 405, "PUT is not allowed here (allowed: POST)"),
            ("POST", "/api/reply?game=1", "{}", 400, "POST requests take their arguments in the JSON body"),
        ];
        for (method, target, body, status, start) in cases {
            let (got, message) = error(&api, method, target, body);
            assert_eq!(got, status, "{method} {target} {body}: {message}");
            assert!(message.starts_with(start), "{method} {target} {body}: {message}");
        }
        let with_game = |body: &str| error(&api, "POST", "/api/move", &body.replace("ID", &id));
        assert_eq!(
            with_game(r#"{"game":"ID","move":"A4-A5"}"#),
            (400, "move `A4-A5`: no white piece on A4".to_string())
        );
        assert_eq!(with_game(r#"{"game":"ID"}"#).0, 400);
        assert_eq!(with_game(r#"{"game":"ID","move":"F6-F5","path":["F6","F5"]}"#).0, 400);
        assert!(with_game(r#"{"game":"ID","path":["F6","Q99"]}"#).1.contains("`Q99` is not a square name"));
        let long = format!(r#"{{"game":"ID","move":"{}"}}"#, "F6-".repeat(200));
        assert!(with_game(&long).1.contains("at most 400"));
        assert_eq!(error(&api, "POST", "/api/reply", &format!(r#"{{"game":"{id}"}}"#)).0, 409);
        let plain =
            Incoming { method: "POST", target: "/api/new", host: None, content_type: Some("text/plain"), body: b"{}" };
        assert_eq!(api.handle(&plain).status, 415);
    }

    #[test]
    fn only_this_server_s_host_names_are_answered() {
        let mut api = api(&["greedy"]);
        api.settings.hosts = Some(vec!["127.0.0.1:8080".to_string(), "localhost:8080".to_string()]);
        let get =
            |host| api.handle(&Incoming { method: "GET", target: "/", host, content_type: None, body: b"" }).status;
        assert_eq!(get(Some("127.0.0.1:8080")), 200);
        assert_eq!(get(Some("LOCALHOST:8080")), 200);
        assert_eq!(get(Some("evil.example:8080")), 403);
        assert_eq!(get(None), 403);
    }
}
