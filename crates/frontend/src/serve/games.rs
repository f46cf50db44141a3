//! The games the page plays, one per game id (each browser tab starts its own), and each game
//! as the JSON the page draws from.

use crate::engine::info::score_field;
use crate::engine::seat::EngineSeat;
use camelot_arena::{principal_line_text, Choice, ModelStore, PlayerSpec};
use camelot_rules::{Color, Game, Path, Position, Role, Ruleset, Square};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Games kept at once; starting one more forgets the one left alone longest, so a page that
/// opens games in a loop cannot grow the server's memory without bound.
pub const MAX_GAMES: usize = 64;

/// The squares of a path at most (a jump can revisit squares, but no legal move comes close).
pub const MAX_PATH_SQUARES: usize = 64;

/// One game: the position, the person's colour and the engine's seat.
pub struct GameSlot {
    /// The id the page names the game by.
    pub id: String,
    /// The engine's player.
    pub spec: PlayerSpec,
    /// The person's colour.
    pub human: Color,
    /// The game so far.
    pub game: Game,
    seat: EngineSeat,
    /// This game's number on the server, one stream of the engine's seeds.
    index: u64,
    /// The engine's last move, shown until the person moves.
    reply: Option<Reply>,
}

/// What the engine said about its last move.
#[derive(Clone, Debug, Serialize)]
pub struct Reply {
    /// The move in notation.
    #[serde(rename = "move")]
    pub notation: String,
    /// Who played it.
    pub color: &'static str,
    /// The player's spec.
    pub player: String,
    /// The player's evaluation from its own side, for people (`+0.35`, `win in 3 plies`).
    pub evaluation: Option<String>,
    /// The same as a UCI-style score (`cp 35`, `mate 2`), from the engine's side.
    pub score: Option<String>,
    /// The line the engine expects, in notation.
    pub line: String,
    /// Search statistics (`depth 5, 31204 nodes`).
    pub info: String,
    /// Milliseconds the search took.
    pub ms: u128,
}

/// A move as the page needs it: the notation and every square of its path.
#[derive(Debug, Serialize)]
pub struct MoveView {
    /// The canonical path in notation.
    #[serde(rename = "move")]
    pub notation: String,
    /// The origin then every landing square.
    pub squares: Vec<String>,
    /// Whether each leg is a jump (a capture); one entry per leg.
    pub jumps: Vec<bool>,
}

#[derive(Serialize)]
struct PieceView {
    square: String,
    color: &'static str,
    role: &'static str,
}

#[derive(Serialize)]
struct BoardView {
    files: u8,
    ranks: u8,
    squares: Vec<String>,
    castles: HashMap<&'static str, Vec<String>>,
}

#[derive(Serialize)]
struct PlayedView {
    #[serde(flatten)]
    path: MoveView,
    color: &'static str,
}

#[derive(Serialize)]
struct OutcomeView {
    winner: Option<&'static str>,
    text: String,
}

/// The whole state of a game as `GET /api/state` returns it.
#[derive(Serialize)]
pub struct StateView {
    game: String,
    variant: String,
    player: String,
    human: &'static str,
    turn: &'static str,
    fullmove: u32,
    /// `human` (the page may move), `engine` (ask `POST /api/reply`) or `over`.
    status: &'static str,
    board: BoardView,
    pieces: Vec<PieceView>,
    history: Vec<PlayedView>,
    /// The person's legal moves; empty unless `status` is `human`.
    legal: Vec<MoveView>,
    outcome: Option<OutcomeView>,
    reply: Option<Reply>,
    cpn: String,
}

impl GameSlot {
    /// A game at the start of `rules` with the engine's player built (so that a model that
    /// cannot be loaded, or plays another variant, is reported when the game starts).
    pub fn new(
        id: String,
        rules: Arc<Ruleset>,
        spec: PlayerSpec,
        human: Color,
        models: &ModelStore,
        seed: u64,
        index: u64,
    ) -> Result<GameSlot, String> {
        let mut seat = EngineSeat::new();
        seat.prepare(&spec, &rules, models, seed, index)?;
        Ok(GameSlot { id, spec, human, game: Game::new(rules), seat, index, reply: None })
    }

    /// Whose turn it is, as the page sees it.
    pub fn status(&self) -> &'static str {
        if self.game.outcome().is_some() {
            "over"
        } else if self.game.position().turn() == self.human {
            "human"
        } else {
            "engine"
        }
    }

    /// Plays the person's move (notation, any legal path). The caller has checked the turn.
    pub fn play_human(&mut self, text: &str) -> Result<(), String> {
        let mv = self.game.parse_move(text).map_err(|e| e.to_string())?;
        self.game.play(mv);
        self.reply = None;
        Ok(())
    }

    /// Lets the engine choose and play its move. The caller has checked the turn.
    pub fn play_engine(&mut self, models: &ModelStore, seed: u64) -> Result<(), String> {
        let started = Instant::now();
        let choice = self.seat.choose(&self.spec, &self.game, models, seed, self.index)?;
        let ms = started.elapsed().as_millis();
        let pos = *self.game.position();
        let reply = reply_of(self.game.rules(), &pos, &self.spec, &choice, ms);
        self.game.play(choice.mv);
        self.reply = Some(reply);
        Ok(())
    }

    /// The state the page draws.
    pub fn view(&self) -> StateView {
        let rules = self.game.rules();
        let pos = self.game.position();
        let status = self.status();
        let legal = if status == "human" {
            rules.legal_moves_with_paths(pos).iter().map(|(_, path)| move_view(path)).collect()
        } else {
            Vec::new()
        };
        let history = self
            .game
            .moves()
            .iter()
            .zip(self.game.positions())
            .map(|(mv, before)| PlayedView {
                path: move_view(&rules.canonical_path(before, mv)),
                color: before.turn().name(),
            })
            .collect();
        StateView {
            game: self.id.clone(),
            variant: rules.name().to_string(),
            player: self.spec.to_string(),
            human: self.human.name(),
            turn: pos.turn().name(),
            fullmove: pos.fullmove(),
            status,
            board: board_view(rules),
            pieces: pieces_view(rules, pos),
            history,
            legal,
            outcome: self
                .game
                .outcome()
                .map(|o| OutcomeView { winner: o.winner.map(Color::name), text: o.to_string() }),
            reply: self.reply.clone(),
            cpn: rules.to_cpn(pos),
        }
    }
}

fn reply_of(rules: &Ruleset, pos: &Position, spec: &PlayerSpec, choice: &Choice, ms: u128) -> Reply {
    let notation = rules.move_to_string(pos, &choice.mv);
    let line = principal_line_text(rules, pos, &choice.principal_line);
    // A line that does not start with the move played is stale (a hash table's): show the move.
    let line = if line.starts_with(&notation) { line } else { notation.clone() };
    Reply {
        notation,
        color: pos.turn().name(),
        player: spec.to_string(),
        evaluation: choice.evaluation.map(|e| e.to_string()),
        score: choice.evaluation.as_ref().map(score_field),
        line,
        info: choice.info.clone(),
        ms,
    }
}

/// A path as square names and leg kinds.
pub fn move_view(path: &Path) -> MoveView {
    MoveView {
        notation: path.to_string(),
        squares: path.squares.iter().map(Square::to_string).collect(),
        jumps: (0..path.legs()).map(|i| path.is_jump_leg(i)).collect(),
    }
}

fn board_view(rules: &Ruleset) -> BoardView {
    let board = rules.board();
    let squares = board.squares().iter().map(|sq| sq.to_string()).collect();
    let castles = Color::BOTH
        .iter()
        .map(|&c| (c.name(), board.own_castle(c).iter().map(|sq| sq.to_string()).collect()))
        .collect();
    BoardView { files: board.files(), ranks: board.ranks(), squares, castles }
}

fn pieces_view(rules: &Ruleset, pos: &Position) -> Vec<PieceView> {
    rules
        .board()
        .squares()
        .iter()
        .filter_map(|sq| {
            pos.piece_at(sq).map(|p| PieceView {
                square: sq.to_string(),
                color: p.color.name(),
                role: match p.role {
                    Role::Knight => "knight",
                    Role::Man => "man",
                },
            })
        })
        .collect()
}

/// A path given as square names, written in notation so that the rules can read it: a leap
/// over a piece of the opponent's (where the move starts) is a jump leg (`x`), every other leg
/// `-`. Whether the whole is legal is the rules' answer, not this function's.
pub fn path_notation(pos: &Position, squares: &[String]) -> Result<String, String> {
    if squares.len() < 2 {
        return Err("`path` needs an origin and at least one landing square, e.g. [\"F6\", \"F7\"]".to_string());
    }
    if squares.len() > MAX_PATH_SQUARES {
        return Err(format!("`path` has {} squares; a move has at most {MAX_PATH_SQUARES}", squares.len()));
    }
    let mut parsed = Vec::with_capacity(squares.len());
    for name in squares {
        let sq = Square::parse(name).ok_or_else(|| format!("`{}` is not a square name", shown(name)))?;
        parsed.push(sq);
    }
    let them = pos.turn().opponent();
    let mut text = parsed[0].to_string();
    for pair in parsed.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (df, dr) = (b.file() as i32 - a.file() as i32, b.rank() as i32 - a.rank() as i32);
        let leap = df.abs() % 2 == 0 && dr.abs() % 2 == 0 && df.abs() <= 2 && dr.abs() <= 2 && (df, dr) != (0, 0);
        let jump = leap && {
            let mid = Square::new((a.file() as i32 + df / 2) as u8, (a.rank() as i32 + dr / 2) as u8);
            pos.piece_at(mid).is_some_and(|p| p.color == them)
        };
        text.push(if jump { 'x' } else { '-' });
        text.push_str(&b.to_string());
    }
    Ok(text)
}

/// User text cut to a length that fits in an error message.
pub fn shown(text: &str) -> String {
    const MAX: usize = 40;
    let mut out: String = text.chars().take(MAX).filter(|c| !c.is_control()).collect();
    if text.chars().count() > MAX {
        out.push_str("...");
    }
    out
}

/// The games, by id, with the order they were last used in.
#[derive(Default)]
pub struct Games {
    inner: Mutex<GameTable>,
}

#[derive(Default)]
struct GameTable {
    slots: HashMap<String, (u64, Arc<Mutex<GameSlot>>)>,
    clock: u64,
    created: u64,
}

impl Games {
    /// The game with this id, marked as used now.
    pub fn get(&self, id: &str) -> Option<Arc<Mutex<GameSlot>>> {
        let mut table = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        table.clock += 1;
        let now = table.clock;
        table.slots.get_mut(id).map(|(used, slot)| {
            *used = now;
            Arc::clone(slot)
        })
    }

    /// The number the next game gets (its seed stream).
    pub fn next_index(&self) -> u64 {
        let mut table = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        table.created += 1;
        table.created
    }

    /// Keeps `slot`, forgetting the game left alone longest when [`MAX_GAMES`] are kept.
    pub fn insert(&self, slot: GameSlot) -> Arc<Mutex<GameSlot>> {
        let mut table = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        while table.slots.len() >= MAX_GAMES {
            let oldest = table.slots.iter().min_by_key(|(_, (used, _))| *used).map(|(id, _)| id.clone());
            match oldest {
                Some(id) => table.slots.remove(&id),
                None => break,
            };
        }
        table.clock += 1;
        let now = table.clock;
        let id = slot.id.clone();
        let slot = Arc::new(Mutex::new(slot));
        table.slots.insert(id, (now, Arc::clone(&slot)));
        slot
    }

    /// Games kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Arc<Ruleset> {
        Arc::new(Ruleset::variant("camelot").expect("camelot"))
    }

    fn slot(id: &str) -> GameSlot {
        let spec = PlayerSpec::parse("greedy").expect("spec");
        GameSlot::new(id.to_string(), rules(), spec, Color::White, &ModelStore::new(), 1, 0).expect("a game")
    }

    #[test]
    fn path_notation_marks_leaps_over_the_opponent_as_jumps() {
        let rules = rules();
        let mut pos = Position::start(&rules);
        assert_eq!(path_notation(&pos, &["f7".into(), "H5".into(), "J7".into()]).as_deref(), Ok("F7-H5-J7"));
        // Put a black man in front of F7 so that F7-F9 leaps over it.
        pos.put(Square::parse("F8").expect("F8"), camelot_rules::Piece { color: Color::Black, role: Role::Man });
        assert_eq!(path_notation(&pos, &["F7".into(), "F9".into()]).as_deref(), Ok("F7xF9"));
        assert!(path_notation(&pos, &["F7".into()]).is_err());
        assert_eq!(path_notation(&pos, &["F7".into(), "Z9".into()]), Err("`Z9` is not a square name".to_string()));
        let long: Vec<String> = std::iter::repeat_n("F7".to_string(), MAX_PATH_SQUARES + 1).collect();
        assert!(path_notation(&pos, &long).is_err_and(|e| e.contains("at most")));
    }

    #[test]
    fn the_view_lists_legal_moves_only_on_the_person_s_turn() {
        let mut s = slot("a");
        let view = s.view();
        assert_eq!(view.status, "human");
        assert_eq!(view.board.squares.len(), 160);
        assert_eq!(view.board.castles["white"], vec!["F1".to_string(), "G1".to_string()]);
        assert_eq!(view.pieces.len(), 28);
        assert!(view.legal.iter().any(|m| m.notation == "F7-H5-J7-J5" && m.jumps == vec![false; 3]));
        s.play_human("F6-F5").expect("a legal move");
        assert_eq!(s.status(), "engine");
        assert!(s.view().legal.is_empty());
        s.play_engine(&ModelStore::new(), 1).expect("greedy moves");
        let view = s.view();
        assert_eq!(view.history.len(), 2);
        assert_eq!(view.history[0].color, "white");
        let reply = view.reply.expect("a reply");
        assert_eq!(reply.color, "black");
        assert_eq!(view.history[1].path.notation, reply.notation);
        assert!(s.play_human("A1-A2").is_err_and(|e| e.contains("A1")));
    }

    #[test]
    fn the_table_forgets_the_game_left_alone_longest() {
        let games = Games::default();
        for i in 0..MAX_GAMES {
            games.insert(slot(&format!("g{i}")));
        }
        assert!(games.get("g0").is_some());
        games.insert(slot("new"));
        assert_eq!(games.len(), MAX_GAMES);
        assert!(games.get("g0").is_some(), "g0 was used last");
        assert!(games.get("g1").is_none(), "g1 was left alone longest");
        assert!(games.get("new").is_some());
    }
}
