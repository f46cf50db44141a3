//! Checkpoints: weights as safetensors, a JSON model card beside them, and the optimizer state
//! for exact resume. Every file is written to a temporary name, synced and renamed; a file that
//! is truncated, corrupt or made for another variant or encoding is refused whole.

use std::fs;
use std::path::{Path, PathBuf};

use burn::store::{ModuleSnapshot, SafetensorsStore};
use camelot_game::{ENCODING_VERSION, PLANES, PLANE_NAMES};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{GridShape, NetConfig};
use crate::error::NetError;
use crate::model::{Model, AUX_OUTPUTS};
use crate::network::{number_params, Network};
use crate::train::Trainer;
use burn::tensor::Device;

/// What the card's `format` field must say.
pub const CARD_FORMAT: &str = "camelot-zero model";
/// Version of the card and weight layout.
pub const CARD_VERSION: u32 = 1;

/// The JSON card saved beside a model's weights: enough to rebuild and check the model, and to
/// use it without reading this code (docs/FORMATS.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCard {
    /// Always [`CARD_FORMAT`].
    pub format: String,
    /// Always [`CARD_VERSION`] for files this version writes.
    pub format_version: u32,
    /// The ruleset the model plays (`camelot`, `cam`, ...).
    pub variant: String,
    /// Version of the input planes and action indexing ([`ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// The input planes, in order.
    pub planes: Vec<String>,
    /// The board grid.
    pub grid: GridShape,
    /// Size of the policy output (16 per cell, then `stop`).
    pub actions: usize,
    /// Auxiliary outputs, in order (empty without auxiliary heads).
    pub aux_outputs: Vec<String>,
    /// The architecture.
    pub architecture: NetConfig,
    /// Number of weights.
    pub parameters: usize,
    /// Name of the checkpoint this one was trained from, if any.
    pub parent: Option<String>,
    /// Training steps behind these weights.
    pub step: u64,
    /// Generation of a training run, if it came from one.
    pub generation: Option<u64>,
    /// SHA-256 of the safetensors file, in hex.
    pub weights_sha256: String,
    /// The search settings the model was trained to be played with (`None`: not recorded,
    /// as in cards written before this field; players then use their own defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub play: Option<PlaySettings>,
}

/// Search settings a model was trained with, which players use unless told otherwise, so
/// that `mcts:model=M,sims=200` plays it as it learned to play.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaySettings {
    /// Weight of the predicted final material in the searched value
    /// ([`crate::NetEvaluator::with_material_utility`]).
    pub material_utility: f32,
    /// Lead in points at which the material utility weighs tanh(1)
    /// ([`crate::NetEvaluator::with_material_scale`]); 0, and cards written before it: linear.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub material_scale: f32,
    /// What a draw cost both sides in the search (`SearchConfig::draw_penalty`).
    pub draw_penalty: f32,
    /// Weight of the predicted plies left in the searched value
    /// ([`crate::NetEvaluator::with_moves_left_utility`]); cards written before it have 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub moves_left_utility: f32,
    /// Whether players search it by Gumbel sequential halving at the root (their own `m`)
    /// rather than PUCT: the root rule measured to play it best (a run's `play.gumbel`).
    /// Cards written before it: false (PUCT).
    #[serde(default, skip_serializing_if = "is_false")]
    pub gumbel: bool,
    /// Whether players average each evaluation with the mirrored position's
    /// ([`crate::NetEvaluator::with_mirror_average`]), at twice the network's work (a run's
    /// `play.mirror`). Cards written before it: false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mirror: bool,
    /// Whether players pass decisions with a single legal action through the tree without an
    /// evaluation (`SearchConfig::forced_pass`; a run's `play.forced`). Cards written before
    /// it: false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub forced: bool,
    /// Plies ahead whose material the material head was trained to predict (`None` or 0:
    /// the game's end), for readers of the card; players need not know it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub material_horizon: Option<u32>,
    /// Policy softmax temperature players search it with (`SearchConfig::policy_temperature`;
    /// a run's `play.policy_temperature`). Cards written before it: 1 (the priors as given).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub policy_temperature: f32,
}

fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

fn one() -> f32 {
    1.0
}

fn is_one(x: &f32) -> bool {
    *x == 1.0
}

fn is_false(x: &bool) -> bool {
    !*x
}

/// Where a checkpoint's files live: `stem.safetensors` and `stem.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointPaths {
    /// The weights.
    pub weights: PathBuf,
    /// The card.
    pub card: PathBuf,
}

impl CheckpointPaths {
    /// The files of the checkpoint named `path`, with or without `.safetensors` or `.json`.
    pub fn of(path: &Path) -> CheckpointPaths {
        let stem = match path.extension().and_then(|e| e.to_str()) {
            Some("safetensors") | Some("json") => path.with_extension(""),
            _ => path.to_path_buf(),
        };
        let with = |ext: &str| {
            let mut name = stem.as_os_str().to_owned();
            name.push(ext);
            PathBuf::from(name)
        };
        CheckpointPaths { weights: with(".safetensors"), card: with(".json") }
    }
}

/// What the caller knows about a checkpoint beyond the network itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointInfo {
    /// Ruleset name.
    pub variant: String,
    /// Parent checkpoint's name.
    pub parent: Option<String>,
    /// Training steps.
    pub step: u64,
    /// Generation.
    pub generation: Option<u64>,
    /// The search settings it was trained with.
    pub play: Option<PlaySettings>,
}

/// SHA-256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to `path` through [`camelot_rules::fsio::write_atomic`] (a synced temporary
/// file in the same directory, renamed), so that readers see the old file or the whole new one,
/// never a torn one. Refuses to replace an existing file unless `replace`; errors name the file.
pub fn write_atomic(path: &Path, bytes: &[u8], replace: bool) -> Result<(), NetError> {
    camelot_rules::fsio::write_atomic(path, bytes, replace).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => NetError::checkpoint(path, "already exists; refusing to overwrite it"),
        _ => NetError::io(path, e),
    })
}

fn read(path: &Path) -> Result<Vec<u8>, NetError> {
    fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => NetError::checkpoint(path, "not found"),
        _ => NetError::io(path, e),
    })
}

/// A checkpoint serialised: the weights and the card that vouches for them, ready to be
/// written to files or objects (the card last: it is what makes a checkpoint exist).
#[derive(Clone, Debug)]
pub struct CheckpointBytes {
    /// The safetensors file.
    pub weights: Vec<u8>,
    /// The card as pretty JSON.
    pub card_json: Vec<u8>,
    /// The card.
    pub card: ModelCard,
}

/// Serialises `network` with its card; `name` only names the checkpoint in errors.
pub fn checkpoint_bytes(network: &Network, info: &CheckpointInfo, name: &Path) -> Result<CheckpointBytes, NetError> {
    // No metadata in the weights file: burn keeps it in a hash map, whose order would change
    // the bytes (and the hash) of identical weights from run to run. The card holds it all.
    let mut store = SafetensorsStore::from_bytes(None).clear_metadata();
    network.model().save_into(&mut store).map_err(|e| NetError::checkpoint(name, format!("serialising: {e}")))?;
    let weights = store.get_bytes().map_err(|e| NetError::checkpoint(name, format!("serialising: {e}")))?;
    if let Some(tensor) = non_finite_tensor(&weights).map_err(|why| NetError::checkpoint(name, why))? {
        return Err(NetError::checkpoint(name, format!("not saved: tensor {tensor} holds a NaN or an infinity")));
    }
    let card = ModelCard {
        format: CARD_FORMAT.into(),
        format_version: CARD_VERSION,
        variant: info.variant.clone(),
        encoding_version: ENCODING_VERSION,
        planes: PLANE_NAMES.iter().map(|s| s.to_string()).collect(),
        grid: network.grid(),
        actions: network.grid().actions(),
        aux_outputs: if network.config().aux_heads {
            AUX_OUTPUTS.iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        },
        architecture: network.config().clone(),
        parameters: network.num_params(),
        parent: info.parent.clone(),
        step: info.step,
        generation: info.generation,
        weights_sha256: sha256_hex(&weights),
        play: info.play,
    };
    let card_json = serde_json::to_vec_pretty(&card).map_err(|e| NetError::checkpoint(name, e.to_string()))?;
    Ok(CheckpointBytes { weights, card_json, card })
}

/// Saves `network` as the checkpoint `path` (weights first, then the card that vouches for
/// them); refuses to overwrite an existing checkpoint. Returns the card written.
pub fn save_checkpoint(path: &Path, network: &Network, info: &CheckpointInfo) -> Result<ModelCard, NetError> {
    let paths = CheckpointPaths::of(path);
    for p in [&paths.weights, &paths.card] {
        if p.exists() {
            return Err(NetError::checkpoint(p, "already exists; refusing to overwrite it"));
        }
    }
    let bytes = checkpoint_bytes(network, info, &paths.weights)?;
    write_atomic(&paths.weights, &bytes.weights, false)?;
    write_atomic(&paths.card, &bytes.card_json, false)?;
    Ok(bytes.card)
}

/// Reads and checks a model card.
pub fn read_card(path: &Path) -> Result<ModelCard, NetError> {
    let paths = CheckpointPaths::of(path);
    parse_card(&read(&paths.card)?, &paths.card)
}

/// Parses and checks a model card's bytes; `name` (its file or object) is named in errors.
pub fn parse_card(bytes: &[u8], name: &Path) -> Result<ModelCard, NetError> {
    let card: ModelCard = serde_json::from_slice(bytes)
        .map_err(|e| NetError::checkpoint(name, format!("line {}, column {}: {e}", e.line(), e.column())))?;
    let bad = |why: String| Err(NetError::checkpoint(name, why));
    if card.format != CARD_FORMAT || card.format_version != CARD_VERSION {
        return bad(format!(
            "format `{}` version {} (this program reads `{CARD_FORMAT}` version {CARD_VERSION})",
            card.format, card.format_version
        ));
    }
    if card.encoding_version != ENCODING_VERSION || card.planes.len() != PLANES {
        return bad(format!(
            "input encoding version {} with {} planes (this program uses version {ENCODING_VERSION} with {PLANES})",
            card.encoding_version,
            card.planes.len()
        ));
    }
    if card.actions != card.grid.actions() {
        return bad(format!("{} actions do not fit a {}x{} grid", card.actions, card.grid.files, card.grid.ranks));
    }
    card.architecture.validate().map_err(|e| NetError::checkpoint(name, e.to_string()))?;
    Ok(card)
}

/// Loads the checkpoint `path` (with or without extension) onto `device`: the card is checked,
/// the weights' hash compared with the card's, and every tensor must match the architecture;
/// anything else is refused before a model is returned.
pub fn load_checkpoint(path: &Path, device: &Device) -> Result<(Network, ModelCard), NetError> {
    let card = read_card(path)?;
    let paths = CheckpointPaths::of(path);
    let weights = read(&paths.weights)?;
    let network = network_from_bytes(&card, weights, &paths.weights, device)?;
    Ok((network, card))
}

/// Builds the network that `card` describes from its safetensors bytes, checking their hash
/// against the card's and every tensor against the architecture; `name` (the weights' file or
/// object) is named in errors.
pub fn network_from_bytes(
    card: &ModelCard,
    weights: Vec<u8>,
    name: &Path,
    device: &Device,
) -> Result<Network, NetError> {
    check_weights(card, &weights, name)?;
    let mut model = number_params(Model::new(&card.architecture, PLANES, device));
    let mut store = SafetensorsStore::from_bytes(Some(weights));
    let applied =
        model.load_from(&mut store).map_err(|e| NetError::checkpoint(name, format!("does not parse: {e}")))?;
    let mut problems: Vec<String> = Vec::new();
    problems.extend(applied.missing.iter().map(|(name, _)| format!("missing tensor {name}")));
    problems.extend(applied.unused.iter().map(|name| format!("unexpected tensor {name}")));
    problems.extend(applied.errors.iter().map(|e| format!("{e:?}")));
    if !problems.is_empty() {
        return Err(NetError::checkpoint(name, problems.join("; ")));
    }
    Ok(Network::from_model(model, card.architecture.clone(), card.grid, device.clone()))
}

/// Checks a checkpoint's safetensors bytes against `card`: the card's hash, and every weight a
/// finite number (a diverged network plays nothing but NaNs). `name` is named in errors.
pub fn check_weights(card: &ModelCard, weights: &[u8], name: &Path) -> Result<(), NetError> {
    let hash = sha256_hex(weights);
    if hash != card.weights_sha256 {
        return Err(NetError::checkpoint(
            name,
            format!("SHA-256 {hash} differs from the card's {} (truncated or replaced?)", card.weights_sha256),
        ));
    }
    match non_finite_tensor(weights).map_err(|why| NetError::checkpoint(name, why))? {
        Some(tensor) => Err(NetError::checkpoint(name, format!("tensor {tensor} holds a NaN or an infinity"))),
        None => Ok(()),
    }
}

/// The first tensor of safetensors `bytes` (sorted by name) with a value that is not finite.
/// Only float tensors can hold one; a header that does not parse is an error.
fn non_finite_tensor(bytes: &[u8]) -> Result<Option<String>, String> {
    let bad = |why: &str| format!("does not parse: {why}");
    let len_bytes: [u8; 8] = bytes.get(..8).and_then(|b| b.try_into().ok()).ok_or_else(|| bad("no header"))?;
    let header_end = usize::try_from(u64::from_le_bytes(len_bytes))
        .ok()
        .and_then(|len| len.checked_add(8))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| bad("the header overruns the file"))?;
    let header: std::collections::BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..header_end]).map_err(|e| bad(&e.to_string()))?;
    let data = &bytes[header_end..];
    for (tensor, info) in &header {
        let Some(dtype) = info.get("dtype").and_then(|d| d.as_str()) else { continue };
        let range = info.get("data_offsets").and_then(|o| Some((o.get(0)?.as_u64()?, o.get(1)?.as_u64()?)));
        let values = range
            .and_then(|(start, end)| data.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?))
            .ok_or_else(|| bad(&format!("tensor {tensor} lies outside the file")))?;
        let finite = match dtype {
            "F32" => values.chunks_exact(4).all(|v| f32::from_le_bytes([v[0], v[1], v[2], v[3]]).is_finite()),
            "F64" => values
                .chunks_exact(8)
                .all(|v| f64::from_le_bytes([v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]).is_finite()),
            // Half floats: all exponent bits set is an infinity or a NaN.
            "F16" => values.chunks_exact(2).all(|v| u16::from_le_bytes([v[0], v[1]]) & 0x7c00 != 0x7c00),
            "BF16" => values.chunks_exact(2).all(|v| u16::from_le_bytes([v[0], v[1]]) & 0x7f80 != 0x7f80),
            _ => true,
        };
        if !finite {
            return Ok(Some(tensor.clone()));
        }
    }
    Ok(None)
}

const OPTIMIZER_MAGIC: &[u8; 8] = b"CZOPTIM1";

/// Saves a trainer's optimizer state and step to `path` (written atomically, replacing an older
/// state file of the same run), with a checksum so a torn file is refused.
pub fn save_training_state(path: &Path, trainer: &Trainer) -> Result<(), NetError> {
    write_atomic(path, &training_state_bytes(trainer)?, true)
}

/// A trainer's optimizer state and step as bytes: magic, SHA-256 of the state, state.
pub fn training_state_bytes(trainer: &Trainer) -> Result<Vec<u8>, NetError> {
    let state = trainer.optimizer_state()?;
    let mut bytes = Vec::with_capacity(state.len() + 40);
    bytes.extend_from_slice(OPTIMIZER_MAGIC);
    bytes.extend_from_slice(&Sha256::digest(&state));
    bytes.extend_from_slice(&state);
    Ok(bytes)
}

/// Restores what [`save_training_state`] wrote into `trainer` (built from the same checkpoint
/// and config).
pub fn load_training_state(path: &Path, trainer: &mut Trainer) -> Result<(), NetError> {
    restore_training_state(&read(path)?, path, trainer)
}

/// Restores what [`training_state_bytes`] made into `trainer`; `name` is named in errors.
pub fn restore_training_state(bytes: &[u8], name: &Path, trainer: &mut Trainer) -> Result<(), NetError> {
    if bytes.len() < 40 || &bytes[..8] != OPTIMIZER_MAGIC {
        return Err(NetError::checkpoint(name, "not a camelot-zero optimizer state (or truncated)"));
    }
    let (sum, state) = bytes[8..].split_at(32);
    if Sha256::digest(state).as_slice() != sum {
        return Err(NetError::checkpoint(name, "checksum mismatch (truncated or corrupt)"));
    }
    trainer.restore_optimizer_state(state).map_err(|why| NetError::checkpoint(name, why))
}
