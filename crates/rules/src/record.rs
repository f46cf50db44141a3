//! Game records in the championship style: `1.D6-F8 H11-F9 2.C6-E8-G8 ... 12....I11-G11`,
//! with optional `[Key "Value"]` tag lines, `!`/`?` annotations, `{comments}` and a result.

use crate::error::{Error, Result};
use crate::game::Game;
use crate::move_input::strip_move_number;
use crate::ruleset::Ruleset;
use crate::square::Color;
use std::sync::Arc;

/// A game record: tags, the game, each move's annotation and the stated result.
#[derive(Clone, Debug)]
pub struct Record {
    /// `[Key "Value"]` pairs in order.
    pub tags: Vec<(String, String)>,
    /// The replayed game.
    pub game: Game,
    /// Each move's annotation (`!`, `?!`, or empty), in move order.
    pub annotations: Vec<String>,
    /// The result token as written (`1-0`, `0-1`, `1/2-1/2`, `*`), if any.
    pub result: Option<String>,
}

const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

impl Record {
    /// Reads a record and replays it under `rules`. A `[CPN "..."]` tag sets the start
    /// position. Errors name the token (one-based, among the move text's tokens) at fault.
    pub fn parse(rules: Arc<Ruleset>, text: &str) -> Result<Record> {
        let mut tags = Vec::new();
        let mut body = String::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                tags.push(parse_tag(trimmed)?);
            } else {
                body.push_str(line);
                body.push('\n');
            }
        }
        let start = match tags.iter().find(|(k, _)| k.eq_ignore_ascii_case("cpn")) {
            Some((_, cpn)) => rules.parse_cpn(cpn)?,
            None => crate::Position::start(&rules),
        };
        let mut game = Game::from_position(rules, start);
        let mut annotations = Vec::new();
        let mut result = None;
        let mut in_comment = false;
        for (i, token) in body.split_whitespace().enumerate() {
            let index = i + 1;
            let err = |reason: String| Error::Record { index, token: token.to_string(), reason };
            if in_comment || token.starts_with('{') {
                in_comment = !token.ends_with('}');
                continue;
            }
            if result.is_some() {
                return Err(err("text after the result".to_string()));
            }
            if RESULTS.contains(&token) {
                result = Some(token.to_string());
                continue;
            }
            let rest = strip_move_number(game.position(), token).map_err(|e| err(reason_of(e)))?;
            if rest.is_empty() {
                continue;
            }
            let body = rest.trim_end_matches(['!', '?']);
            let annotation = &rest[body.len()..];
            if !annotation.is_empty() && !["!", "?", "!!", "??", "!?", "?!"].contains(&annotation) {
                return Err(err(format!("`{annotation}` is not an annotation (!, ?, !!, ??, !?, ?!)")));
            }
            game.play_text(body).map_err(|e| err(reason_of(e)))?;
            annotations.push(annotation.to_string());
        }
        if in_comment {
            return Err(Error::Record { index: 0, token: "{".to_string(), reason: "unclosed comment".to_string() });
        }
        // A decisive result on an unfinished game is a resignation or adjudication; on a
        // finished one it must be the rules' result.
        if let (Some(token), Some(outcome)) = (&result, game.outcome()) {
            if token != "*" && token != outcome.result_token() {
                return Err(Error::Record {
                    index: 0,
                    token: token.clone(),
                    reason: format!("the game ended {} ({outcome})", outcome.result_token()),
                });
            }
        }
        Ok(Record { tags, game, annotations, result })
    }

    /// A record of `game` with `Variant` tag (and a `CPN` tag when it did not start from the
    /// set-up) and no annotations; the result is written if the game is over.
    pub fn of_game(game: Game) -> Record {
        let rules = game.rules().clone();
        let mut tags = vec![("Variant".to_string(), rules.name().to_string())];
        if *game.start() != crate::Position::start(&rules) {
            tags.push(("CPN".to_string(), rules.to_cpn(game.start())));
        }
        let result = game.outcome().map(|o| o.result_token().to_string());
        let annotations = vec![String::new(); game.moves().len()];
        Record { tags, game, annotations, result }
    }

    /// The move text: `1.D6-F8 H11-F9 2.C6-E8-G8 ...`, then the result if known.
    pub fn moves_text(&self) -> String {
        let rules = self.game.rules();
        let mut out = String::new();
        let positions = self.game.positions();
        for (i, mv) in self.game.moves().iter().enumerate() {
            let pos = &positions[i];
            if !out.is_empty() {
                out.push(' ');
            }
            match pos.turn() {
                Color::White => out.push_str(&format!("{}.", pos.fullmove())),
                Color::Black if i == 0 => out.push_str(&format!("{}....", pos.fullmove())),
                Color::Black => {}
            }
            out.push_str(&rules.move_to_string(pos, mv));
            if let Some(a) = self.annotations.get(i) {
                out.push_str(a);
            }
        }
        if let Some(result) = &self.result {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(result);
        }
        out
    }

    /// The whole record: tag lines, a blank line, the move text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.tags {
            out.push_str(&format!("[{k} \"{}\"]\n", v.replace('\\', "\\\\").replace('"', "\\\"")));
        }
        if !self.tags.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.moves_text());
        out.push('\n');
        out
    }
}

fn reason_of(e: Error) -> String {
    match e {
        Error::Move { reason, .. } => reason,
        other => other.to_string(),
    }
}

fn parse_tag(line: &str) -> Result<(String, String)> {
    let bad = |reason: &str| Error::Record { index: 0, token: line.to_string(), reason: reason.to_string() };
    let inner = line
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .ok_or_else(|| bad("a tag line is `[Key \"Value\"]`"))?;
    let (key, value) = inner.split_once(' ').ok_or_else(|| bad("a tag line is `[Key \"Value\"]`"))?;
    let value = value
        .trim()
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or_else(|| bad("the tag's value must be in double quotes"))?;
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad("a tag's key is letters, digits and _"));
    }
    Ok((key.to_string(), value.replace("\\\"", "\"").replace("\\\\", "\\")))
}
