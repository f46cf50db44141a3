//! Self-play game records and the replay shards that hold them: immutable files, each written
//! once under a unique name (temporary name, sync, rename), with a SHA-256 checksum so a torn
//! or damaged shard is refused whole.

use std::path::Path;
use std::sync::Arc;

use camelot_game::CamelotState;
use camelot_rules::Ruleset;
use camelot_search::GameState as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::SelfplayError;

/// The search's policy target at one decision of a game (full searches only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionTarget {
    /// Index of the decision in [`GameRecord::actions`].
    pub decision: u32,
    /// Every legal action at that decision.
    pub legal: Vec<u16>,
    /// The target probability of each legal action (sums to 1).
    pub policy: Vec<f32>,
    /// The search's root value, win/draw/loss from the mover's view.
    pub root_value: [f32; 3],
}

/// How a self-play game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameEnd {
    /// By the rules (castle, capture of all, no legal move, repetition, no progress...).
    Rules,
    /// A side resigned.
    Resigned,
    /// The ply cap was reached: adjudicated on material (`camelot_arena::ply_cap_winner`).
    PlyCap,
}

/// One finished self-play game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Seed of the game's search trees.
    pub seed: u64,
    /// Every decision from the start position, as action indices.
    pub actions: Vec<u16>,
    /// Policy targets of the fully searched decisions.
    pub targets: Vec<DecisionTarget>,
    /// Winner: 1 White, -1 Black, 0 draw.
    pub winner: i8,
    /// How it ended.
    pub end: GameEnd,
    /// Whole moves played.
    pub plies: u32,
    /// Whether resignation was switched off for this game (to measure false resignations).
    pub playthrough: bool,
    /// In a playthrough game: the side (1 White, -1 Black) that would have resigned first, if any.
    pub would_resign: i8,
    /// SHA-256 of the network that played it (the learner, in a game against an earlier one).
    pub network: String,
    /// The earlier network that played one side, if this was such a game
    /// (`selfplay.past_opponents`); its decisions are not targets.
    pub opponent: Option<PastOpponentRecord>,
    /// The position the game began from, in CPN, when it was not the variant's set-up
    /// (`selfplay.scattered_starts`, `selfplay.random_opening_plies`); `None`: the set-up.
    pub start: Option<String>,
}

impl GameRecord {
    /// The state the game began from: the variant's set-up, or the record's own start.
    pub fn start_state(&self, rules: &Arc<Ruleset>) -> Result<CamelotState, String> {
        match &self.start {
            None => Ok(CamelotState::new(rules.clone())),
            Some(cpn) => {
                let position = rules.parse_cpn(cpn).map_err(|e| format!("start position `{cpn}`: {e}"))?;
                Ok(CamelotState::from_position(rules.clone(), position))
            }
        }
    }
}

/// The earlier network of a game against the past.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PastOpponentRecord {
    /// Its generation.
    pub generation: u32,
    /// SHA-256 of its weights.
    pub network: String,
    /// The side it played: 1 White, -1 Black.
    pub side: i8,
}

/// A game record as the first shard format held it (no past opponents, no start).
#[derive(Deserialize)]
struct GameRecordV1 {
    seed: u64,
    actions: Vec<u16>,
    targets: Vec<DecisionTarget>,
    winner: i8,
    end: GameEnd,
    plies: u32,
    playthrough: bool,
    would_resign: i8,
    network: String,
}

/// A game record as the second shard format held it (every game from the set-up). Postcard
/// writes a struct as its fields in order, so the first format's fields nested here read
/// exactly as the flat record of that format.
#[derive(Deserialize)]
struct GameRecordV2 {
    v1: GameRecordV1,
    opponent: Option<PastOpponentRecord>,
}

impl From<GameRecordV2> for GameRecord {
    fn from(GameRecordV2 { v1, opponent }: GameRecordV2) -> GameRecord {
        GameRecord {
            seed: v1.seed,
            actions: v1.actions,
            targets: v1.targets,
            winner: v1.winner,
            end: v1.end,
            plies: v1.plies,
            playthrough: v1.playthrough,
            would_resign: v1.would_resign,
            network: v1.network,
            opponent,
            start: None,
        }
    }
}

const SHARD_MAGIC: &[u8; 8] = b"CZSHARD3";
/// Shards written before games could begin away from the set-up; still read.
const SHARD_MAGIC_V2: &[u8; 8] = b"CZSHARD2";
/// Shards written before games against earlier networks existed; still read.
const SHARD_MAGIC_V1: &[u8; 8] = b"CZSHARD1";

/// Serialises `games` into shard bytes: magic, SHA-256 of the body, body.
pub fn encode_shard(games: &[GameRecord]) -> Result<Vec<u8>, SelfplayError> {
    let body = postcard::to_stdvec(games).map_err(|e| SelfplayError::Search(format!("encoding a shard: {e}")))?;
    let mut out = Vec::with_capacity(body.len() + 40);
    out.extend_from_slice(SHARD_MAGIC);
    out.extend_from_slice(&Sha256::digest(&body));
    out.extend_from_slice(&body);
    Ok(out)
}

/// Reads a shard, refusing it whole if its magic or checksum is wrong.
pub fn read_shard(path: &Path) -> Result<Vec<GameRecord>, SelfplayError> {
    let bytes = std::fs::read(path).map_err(|e| SelfplayError::io(path, e))?;
    decode_shard(&bytes, path)
}

/// Decodes shard bytes (from a file or an object named `path` in errors), refusing them whole
/// if the magic or checksum is wrong.
pub fn decode_shard(bytes: &[u8], path: &Path) -> Result<Vec<GameRecord>, SelfplayError> {
    let corrupt = |reason: &str| SelfplayError::Corrupt { path: path.to_path_buf(), reason: reason.to_string() };
    if bytes.len() < 40 || ![SHARD_MAGIC, SHARD_MAGIC_V2, SHARD_MAGIC_V1].iter().any(|magic| bytes[..8] == magic[..]) {
        return Err(corrupt("not a camelot-zero replay shard (or truncated)"));
    }
    let (sum, body) = bytes[8..].split_at(32);
    if Sha256::digest(body).as_slice() != sum {
        return Err(corrupt("checksum mismatch (truncated or damaged)"));
    }
    let decode_error = |e: postcard::Error| corrupt(&format!("does not decode: {e}"));
    if &bytes[..8] == SHARD_MAGIC_V1 {
        let games: Vec<GameRecordV1> = postcard::from_bytes(body).map_err(decode_error)?;
        return Ok(games.into_iter().map(|v1| GameRecord::from(GameRecordV2 { v1, opponent: None })).collect());
    }
    if &bytes[..8] == SHARD_MAGIC_V2 {
        let games: Vec<GameRecordV2> = postcard::from_bytes(body).map_err(decode_error)?;
        return Ok(games.into_iter().map(GameRecord::from).collect());
    }
    postcard::from_bytes(body).map_err(decode_error)
}

/// A whole move of a replayed game: its canonical notation and the state before it.
pub struct ReplayedMove {
    /// The move in notation (canonical path).
    pub text: String,
    /// Index of its first decision in [`GameRecord::actions`].
    pub first_decision: usize,
}

/// Replays a record's decisions from the start and names each whole move; refuses a record
/// whose actions are not legal.
pub fn replay_moves(rules: &Arc<Ruleset>, record: &GameRecord) -> Result<Vec<ReplayedMove>, String> {
    let mut state = record.start_state(rules)?;
    let mut moves = Vec::new();
    let mut i = 0;
    let mut legal = Vec::new();
    while i < record.actions.len() {
        let start = state.clone();
        let candidates: Vec<Vec<u32>> = (0..start.legal_moves().len()).map(|m| start.actions_for_move(m)).collect();
        let first = i;
        loop {
            let action =
                *record.actions.get(i).ok_or_else(|| format!("the record stops inside move {}", moves.len() + 1))?
                    as u32;
            legal.clear();
            state.legal_actions(&mut legal);
            if !legal.contains(&action) {
                return Err(format!("decision {i}: action {action} is not legal"));
            }
            state.apply(action);
            i += 1;
            let played: Vec<u32> = record.actions[first..i].iter().map(|&a| a as u32).collect();
            if let Some(m) = candidates.iter().position(|c| *c == played) {
                moves.push(ReplayedMove { text: start.path_of(m).to_string(), first_decision: first });
                break;
            }
        }
    }
    Ok(moves)
}
