//! The results file `results.csv`: one row per finished arena game, appended crash-safely.
//!
//! Arenas, SPRT runs and the trainer's per-generation evaluations all write this one format
//! (docs/FORMATS.md), so that `camelot ratings DIR` can rate everything a run has played.
//!
//! * Each row is serialised in full and written with one `write` call, then the file is synced
//!   ([`File::sync_data`]); a crash can leave at most the last line torn (no final newline).
//! * [`read_results`] ignores a torn last line; [`ResultsFile::open`] cuts it off before
//!   appending, so that the next row starts on a line of its own.
//! * A game is identified by [`GameKey`] (variant, players, seed, opening); [`ResultsFile::append`]
//!   refuses a key already in the file, so a resumed arena never records a game twice.
//!
//! One process writes a results file at a time (the arena or the trainer, not both at once).

use crate::error::TournamentError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashSet;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The header line of a results file (without its newline): the field names of [`ResultRow`],
/// in order.
pub const RESULTS_HEADER: &str = "variant,white,black,result,plies,reason,seed,opening,moves";

/// The columns, in order (the header split at its commas).
const COLUMN_NAMES: [&str; 9] = ["variant", "white", "black", "result", "plies", "reason", "seed", "opening", "moves"];

/// A game's result from White's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// White won: `1-0`.
    WhiteWins,
    /// Drawn: `1/2-1/2`.
    Draw,
    /// Black won: `0-1`.
    BlackWins,
}

impl GameResult {
    /// White's score: 1, 1/2 or 0.
    pub fn white_score(self) -> f64 {
        match self {
            GameResult::WhiteWins => 1.0,
            GameResult::Draw => 0.5,
            GameResult::BlackWins => 0.0,
        }
    }

    /// The result as written in the file: `1-0`, `1/2-1/2`, `0-1`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::Draw => "1/2-1/2",
            GameResult::BlackWins => "0-1",
        }
    }

    /// Reads `1-0`, `1/2-1/2` (or `0.5-0.5`, `½-½`), `0-1`.
    pub fn parse(text: &str) -> Option<GameResult> {
        match text.trim() {
            "1-0" => Some(GameResult::WhiteWins),
            "1/2-1/2" | "0.5-0.5" | "½-½" => Some(GameResult::Draw),
            "0-1" => Some(GameResult::BlackWins),
            _ => None,
        }
    }
}

impl Serialize for GameResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GameResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<GameResult, D::Error> {
        let text = String::deserialize(deserializer)?;
        GameResult::parse(&text).ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not 1-0, 1/2-1/2 or 0-1")))
    }
}

/// Reads a whole number (spaces around it allowed) of column `column`, saying which text is
/// not one. (csv's errors from inside a field's deserializer do not carry the column, so the
/// message names it.)
fn whole_number<'de, D: Deserializer<'de>, T: TryFrom<u64>>(deserializer: D, column: &str) -> Result<T, D::Error> {
    let text = String::deserialize(deserializer)?;
    let n: u64 = text
        .trim()
        .parse()
        .map_err(|_| serde::de::Error::custom(format!("column `{column}`: `{text}` is not a whole number")))?;
    T::try_from(n).map_err(|_| serde::de::Error::custom(format!("column `{column}`: `{text}` is too large")))
}

fn plies_column<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    whole_number(deserializer, "plies")
}

fn seed_column<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    whole_number(deserializer, "seed")
}

fn opening_column<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    whole_number(deserializer, "opening")
}

fn result_column<'de, D: Deserializer<'de>>(deserializer: D) -> Result<GameResult, D::Error> {
    GameResult::deserialize(deserializer).map_err(|e| serde::de::Error::custom(format!("column `result`: {e}")))
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finished game: a row of `results.csv`, its fields the columns in order (serde reads
/// and writes the row through the `csv` crate).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The ruleset's name (`camelot`, `cam`, ...).
    pub variant: String,
    /// White's canonical spec string (`alphabeta:depth=2`, `mcts:model=runs/x/models/000017,sims=200`).
    pub white: String,
    /// Black's canonical spec string.
    pub black: String,
    /// The result.
    #[serde(deserialize_with = "result_column")]
    pub result: GameResult,
    /// Plies played, the random opening included.
    #[serde(deserialize_with = "plies_column")]
    pub plies: u32,
    /// How the game ended, in words (may be empty).
    pub reason: String,
    /// The match's master seed; with `opening` it fixes the opening and the players' random
    /// streams.
    #[serde(deserialize_with = "seed_column")]
    pub seed: u64,
    /// Index of the opening in the seeded book: opening `k` of seed `s` is the same position
    /// in every pairing, and each pairing plays it once with each colour assignment.
    #[serde(deserialize_with = "opening_column")]
    pub opening: u32,
    /// The game in notation (`1.I8-J9 H11-H10 2.... 1-0`), opening included.
    pub moves: String,
}

/// What identifies a game in a results file: no two rows may share it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GameKey {
    /// The variant.
    pub variant: String,
    /// White's spec.
    pub white: String,
    /// Black's spec.
    pub black: String,
    /// The master seed.
    pub seed: u64,
    /// The opening index.
    pub opening: u32,
}

impl ResultRow {
    /// The row's identity.
    pub fn key(&self) -> GameKey {
        GameKey {
            variant: self.variant.clone(),
            white: self.white.clone(),
            black: self.black.clone(),
            seed: self.seed,
            opening: self.opening,
        }
    }

    /// The row as one CSV line, newline included (fields quoted where needed: specs contain
    /// commas).
    pub fn to_line(&self) -> String {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        // Serialising plain strings and numbers into a Vec cannot fail.
        let _ = writer.serialize(self);
        let bytes = writer.into_inner().unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Parses the complete lines of `text` (a torn last line is left out). Returns the rows and
/// the byte length of the complete part.
fn parse_rows(path: &Path, text: &str) -> Result<(Vec<ResultRow>, usize), TournamentError> {
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    let mut rows = Vec::new();
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(&text.as_bytes()[..complete]);
    let mut record = csv::StringRecord::new();
    let mut header: Option<csv::StringRecord> = None;
    loop {
        let line = reader.position().line() as usize;
        let bad = |reason: String| TournamentError::BadRow { path: path.to_path_buf(), line, reason };
        let more = reader.read_record(&mut record).map_err(|e| bad(format!("not CSV: {e}")))?;
        if !more {
            break;
        }
        let Some(header) = &header else {
            let found: Vec<&str> = record.iter().collect();
            if found.join(",") != RESULTS_HEADER {
                return Err(bad(format!("the header must be `{RESULTS_HEADER}`, found `{}`", found.join(","))));
            }
            header = Some(record.clone());
            continue;
        };
        if record.len() == 1 && record.get(0).is_some_and(|f| f.trim().is_empty()) {
            continue;
        }
        if record.len() != COLUMN_NAMES.len() {
            return Err(bad(format!("{} columns, expected {} ({RESULTS_HEADER})", record.len(), COLUMN_NAMES.len())));
        }
        let row: ResultRow = record.deserialize(Some(header)).map_err(|e| match e.kind() {
            csv::ErrorKind::Deserialize { err, .. } => match err.field().and_then(|i| COLUMN_NAMES.get(i as usize)) {
                Some(column) => bad(format!("column `{column}`: {}", err.kind())),
                None => bad(err.kind().to_string()),
            },
            _ => bad(format!("not a row: {e}")),
        })?;
        for (name, value) in [("variant", &row.variant), ("white", &row.white), ("black", &row.black)] {
            if value.trim().is_empty() {
                return Err(bad(format!("column `{name}` is empty")));
            }
        }
        rows.push(row);
    }
    Ok((rows, complete))
}

/// Reads every complete row of the results file at `path`; a torn last line (a crash during
/// an append) is ignored. A missing file reads as no rows.
pub fn read_results(path: &Path) -> Result<Vec<ResultRow>, TournamentError> {
    let mut text = String::new();
    match File::open(path) {
        Ok(mut file) => {
            file.read_to_string(&mut text).map_err(TournamentError::io(path))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TournamentError::io(path)(e)),
    }
    Ok(parse_rows(path, &text)?.0)
}

/// The results file of an arena directory (`DIR/results.csv`), or `path` itself when it names
/// a `.csv` file.
pub fn results_path(dir_or_file: &Path) -> PathBuf {
    if dir_or_file.extension().is_some_and(|e| e == "csv") {
        dir_or_file.to_path_buf()
    } else {
        dir_or_file.join("results.csv")
    }
}

/// A results file open for appending, with the rows already in it.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    file: File,
    rows: Vec<ResultRow>,
    keys: HashSet<GameKey>,
}

impl ResultsFile {
    /// Opens (or creates, with its header, and its directory) the results file at `path`,
    /// reading the rows already there. A torn last line is cut off so that appends start on a
    /// fresh line.
    pub fn open(path: &Path) -> Result<ResultsFile, TournamentError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(TournamentError::io(dir))?;
        }
        let existed = path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(TournamentError::io(path))?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(TournamentError::io(path))?;
        let (rows, complete) = parse_rows(path, &text)?;
        if complete < text.len() {
            file.set_len(complete as u64).map_err(TournamentError::io(path))?;
        }
        file.seek(SeekFrom::End(0)).map_err(TournamentError::io(path))?;
        if complete == 0 {
            file.write_all(format!("{RESULTS_HEADER}\n").as_bytes()).map_err(TournamentError::io(path))?;
            file.sync_all().map_err(TournamentError::io(path))?;
            if !existed {
                camelot_rules::fsio::sync_parent_dir(path);
            }
        }
        let keys = rows.iter().map(ResultRow::key).collect();
        Ok(ResultsFile { path: path.to_path_buf(), file, rows, keys })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every row in the file, those appended through this handle included.
    pub fn rows(&self) -> &[ResultRow] {
        &self.rows
    }

    /// Whether a game with this key is already recorded.
    pub fn contains(&self, key: &GameKey) -> bool {
        self.keys.contains(key)
    }

    /// Appends `row` as one complete line and syncs the file. Returns `false` (and writes
    /// nothing) if a row with the same [`GameKey`] is already in the file.
    pub fn append(&mut self, row: &ResultRow) -> Result<bool, TournamentError> {
        let key = row.key();
        if self.keys.contains(&key) {
            return Ok(false);
        }
        let line = row.to_line();
        self.file.write_all(line.as_bytes()).map_err(TournamentError::io(&self.path))?;
        self.file.sync_data().map_err(TournamentError::io(&self.path))?;
        self.keys.insert(key);
        self.rows.push(row.clone());
        Ok(true)
    }
}
