//! Reading a person's input in the terminal game: commands, and moves typed in notation where
//! an unambiguous part of the path is enough.

use camelot_rules::{Move, Path, Position, Ruleset, Square};

/// One line typed by a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputCommand {
    /// `moves`: list the legal moves.
    Moves,
    /// `undo`: take back to the person's previous turn.
    Undo,
    /// `resign`: give up the game.
    Resign,
    /// `help` or `?`: list the commands.
    Help,
    /// `quit`, `exit` or end of input: leave without a result.
    Quit,
    /// `board`: draw the board again.
    Board,
    /// Anything else: a move in notation.
    Move(String),
}

/// The help text of the terminal game.
pub const HELP: &str = "\
commands:
  MOVE     a move in notation; an unambiguous part is enough: origin and destination
           (C6-G8 or C6G8 for C6-E8-G8), or the start of the path (F6xD8 for F6xD8xD10xF12)
  moves    list the legal moves
  board    draw the board again
  undo     take back to your previous turn
  resign   give up the game
  help     this text
  quit     leave without a result";

/// Reads a line; `None` for a blank one. Commands are case-insensitive.
pub fn parse_command(line: &str) -> Option<InputCommand> {
    let text = line.trim();
    if text.is_empty() {
        return None;
    }
    Some(match text.to_ascii_lowercase().as_str() {
        "moves" | "m" => InputCommand::Moves,
        "undo" | "u" => InputCommand::Undo,
        "resign" => InputCommand::Resign,
        "help" | "?" | "h" => InputCommand::Help,
        "quit" | "exit" | "q" => InputCommand::Quit,
        "board" | "b" => InputCommand::Board,
        _ => InputCommand::Move(text.to_string()),
    })
}

/// Why typed text names no single legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveInputError {
    /// No legal move fits the text.
    #[error("`{text}` is not a legal move: {reason}")]
    NoMatch {
        /// The text as typed.
        text: String,
        /// Why (the rules' own explanation where the text is a whole path).
        reason: String,
    },
    /// Several legal moves fit the text.
    #[error("`{text}` could be any of: {}", candidates.join(", "))]
    Ambiguous {
        /// The text as typed.
        text: String,
        /// The canonical paths of the moves that fit.
        candidates: Vec<String>,
    },
}

/// The squares named in `text`, in order: `C6-E8xG8`, `c6g8` and `C6 G8` all give
/// `[C6, E8, G8]` or `[C6, G8]`. `None` if anything but squares and separators appears.
fn squares_in(text: &str) -> Option<Vec<Square>> {
    let body = text.trim_end_matches(['!', '?']);
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if matches!(b, b'-' | b'x' | b'X' | b' ' | b':') {
            i += 1;
            continue;
        }
        if !b.is_ascii_alphabetic() {
            return None;
        }
        let mut j = i + 1;
        while j < bytes.len() && bytes[j].is_ascii_digit() && j - i <= 2 {
            j += 1;
        }
        out.push(Square::parse(&body[i..j])?);
        i = j;
    }
    (!out.is_empty()).then_some(out)
}

/// The legal move that `text` names. A whole legal path (canonical or not, as
/// [`Ruleset::parse_move`] reads it) is taken at once; otherwise the squares typed are matched
/// against the canonical paths of the legal moves: first by origin and destination (the first
/// and last squares typed), then as the start of a path. Exactly one match is played; several
/// are listed.
pub fn resolve_move(rules: &Ruleset, pos: &Position, text: &str) -> Result<Move, MoveInputError> {
    let whole = rules.parse_move(pos, text);
    if let Ok(mv) = whole {
        return Ok(mv);
    }
    let no_match = |reason: String| MoveInputError::NoMatch { text: text.to_string(), reason };
    let squares = squares_in(text).ok_or_else(|| no_match("type squares such as C6-G8, or `help`".to_string()))?;
    let legal: Vec<(Move, Path)> = rules.legal_moves_with_paths(pos);
    let pick = |found: Vec<&(Move, Path)>| -> Option<Result<Move, MoveInputError>> {
        match found.len() {
            0 => None,
            1 => Some(Ok(found[0].0)),
            _ => Some(Err(MoveInputError::Ambiguous {
                text: text.to_string(),
                candidates: found.iter().map(|(_, p)| p.to_string()).collect(),
            })),
        }
    };
    let is_prefix = |path: &Path| path.squares.len() >= squares.len() && path.squares[..squares.len()] == squares[..];
    if squares.len() >= 2 {
        let (first, last) = (squares[0], squares[squares.len() - 1]);
        let ends: Vec<&(Move, Path)> =
            legal.iter().filter(|(_, p)| p.squares[0] == first && p.squares.last() == Some(&last)).collect();
        if ends.len() > 1 {
            // Several moves share the ends (jumps taking different pieces): the squares in
            // between may settle it.
            let narrowed: Vec<&(Move, Path)> = ends.iter().copied().filter(|(_, p)| is_prefix(p)).collect();
            if narrowed.len() == 1 {
                return Ok(narrowed[0].0);
            }
        }
        if let Some(result) = pick(ends) {
            return result;
        }
    }
    if let Some(result) = pick(legal.iter().filter(|(_, p)| is_prefix(p)).collect()) {
        return result;
    }
    Err(no_match(match whole {
        Err(camelot_rules::Error::Move { reason, .. }) if squares.len() >= 2 => reason,
        _ => "no legal move starts or ends like that (type `moves` to list them)".to_string(),
    }))
}
