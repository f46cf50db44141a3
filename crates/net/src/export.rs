//! `camelot export`: a checkpoint written as an ONNX graph or as plain safetensors weights, each
//! with a JSON card beside it (`FILE.json`, e.g. `camelot.onnx.json`) that tells another program
//! everything it needs to use the model without our code: input planes, layout, action
//! indexing, outputs (docs/MODEL_FORMAT.md says the same at length).
//!
//! Optionally, check data: sample positions with their input planes, legal actions and this
//! program's outputs, so that any runtime can be checked against burn (`scripts/check-onnx.py`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn::store::ModuleSnapshot;
use camelot_game::{planes_len, random_game_states, CamelotState, ENCODING_VERSION, PLANES, PLANE_NAMES};
use camelot_rules::{Ruleset, DIRECTION_DELTAS};
use camelot_search::GameState as _;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{load_checkpoint, sha256_hex, write_atomic, CheckpointPaths, ModelCard};
use crate::config::{GridShape, NetConfig};
use crate::error::NetError;
use crate::model::AUX_OUTPUTS;
use crate::network::Network;
use crate::onnx::{
    aux_names, onnx_bytes, INPUT_BOARD, ONNX_IR_VERSION, ONNX_OPSET, OUTPUT_AUX, OUTPUT_POLICY, OUTPUT_VALUE,
};

/// What the export card's `format` field says.
pub const EXPORT_CARD_FORMAT: &str = "camelot-zero exported model";
/// Version of the export card.
pub const EXPORT_CARD_VERSION: u32 = 1;
/// What a check-data file's `format` field says.
pub const CHECK_DATA_FORMAT: &str = "camelot-zero check data";

/// The file formats `camelot export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// An ONNX graph (opset [`ONNX_OPSET`]) with the weights inside.
    Onnx,
    /// The checkpoint's weights as they are (safetensors, tensor names as in the model).
    Safetensors,
}

impl ExportFormat {
    /// The name used on the command line and in the card.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Onnx => "onnx",
            ExportFormat::Safetensors => "safetensors",
        }
    }
}

/// The network input, as the card describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// Name of the graph input (`board`).
    pub name: String,
    /// `["batch", planes, ranks, files]`.
    pub shape: Vec<serde_json::Value>,
    /// Always `float32`.
    pub dtype: String,
    /// How a position's floats are laid out.
    pub layout: String,
    /// Whose view the planes are drawn from.
    pub view: String,
}

/// One input plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneSpec {
    /// Index in the plane axis.
    pub index: usize,
    /// What it holds.
    pub name: String,
    /// `binary` (0 or 1 per cell) or `constant` (one value in [0, 1] on every cell).
    pub kind: String,
}

/// One network output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Name of the graph output.
    pub name: String,
    /// `["batch", size]`.
    pub shape: Vec<serde_json::Value>,
    /// What the numbers are.
    pub meaning: String,
}

/// One leg direction of the action encoding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// `direction` in the action formula.
    pub index: usize,
    /// Compass name in the mover's view (north: towards the opponent's side).
    pub name: String,
    /// Change of file (column) per step.
    pub file_delta: i8,
    /// Change of rank (row) per step, in the mover's view.
    pub rank_delta: i8,
}

/// The action space: what each policy logit stands for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    /// Size of the policy output.
    pub count: usize,
    /// Index of the `stop` action (the last one).
    pub stop: usize,
    /// Grid of cells.
    pub grid: GridShape,
    /// The formula.
    pub index: String,
    /// Directions in formula order.
    pub directions: Vec<DirectionSpec>,
    /// What a decision is: legs, `stop`, whole moves.
    pub decisions: String,
    /// How to turn logits into move probabilities.
    pub masking: String,
}

/// The checkpoint an export came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// SHA-256 of the checkpoint's safetensors file.
    pub weights_sha256: String,
    /// Training steps behind the weights.
    pub step: u64,
    /// Generation of the training run, if any.
    pub generation: Option<u64>,
    /// The checkpoint it was trained from, if any.
    pub parent: Option<String>,
}

/// A tensor of a safetensors export (name and shape), so a consumer can map them to its layers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorSpec {
    /// Name in the safetensors file.
    pub name: String,
    /// Shape.
    pub shape: Vec<usize>,
}

/// The JSON card written beside an exported file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportCard {
    /// Always [`EXPORT_CARD_FORMAT`].
    pub format: String,
    /// Always [`EXPORT_CARD_VERSION`].
    pub format_version: u32,
    /// Name of the exported file (beside this card).
    pub file: String,
    /// `onnx` or `safetensors`.
    pub file_format: String,
    /// SHA-256 of the exported file, in hex.
    pub file_sha256: String,
    /// Where the format is documented.
    pub documentation: String,
    /// The ruleset the model plays.
    pub variant: String,
    /// Version of the input planes and action indexing.
    pub encoding_version: u32,
    /// The input.
    pub input: InputSpec,
    /// The input planes, in order.
    pub planes: Vec<PlaneSpec>,
    /// The outputs (of the ONNX graph; of the network, for safetensors weights).
    pub outputs: Vec<OutputSpec>,
    /// The action space.
    pub actions: ActionSpec,
    /// ONNX opset and IR version (ONNX exports only).
    pub onnx: Option<OnnxSpec>,
    /// Tensors of the weights file (safetensors exports only).
    pub tensors: Option<Vec<TensorSpec>>,
    /// The architecture.
    pub architecture: NetConfig,
    /// Number of weights.
    pub parameters: usize,
    /// The checkpoint exported.
    pub source: SourceSpec,
}

/// ONNX versions of an export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxSpec {
    /// Default-domain operator set.
    pub opset: i64,
    /// IR version.
    pub ir_version: i64,
}

/// What [`export_checkpoint`] wrote.
#[derive(Clone, Debug)]
pub struct Exported {
    /// The exported file.
    pub file: PathBuf,
    /// Its card.
    pub card_path: PathBuf,
    /// Size of the exported file in bytes.
    pub bytes: usize,
    /// The card's content.
    pub card: ExportCard,
    /// The network exported (to make check data from without loading it again).
    pub network: Network,
}

/// Where the card of an export to `out` goes: `out` with `.json` appended (`camelot.onnx.json`),
/// so it never takes the name of a checkpoint's own card (`NAME.json` beside
/// `NAME.safetensors`) and exports of both formats from one stem do not collide.
pub fn export_card_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".json");
    PathBuf::from(name)
}

const VIEW: &str = "the side to move's: for White, rank 0 is White's edge (rank 1) and file 0 is file A; \
for Black, ranks are counted from Black's edge (row r is board rank `ranks - r`), files are not mirrored, \
so every mover plays up the grid. \"my\" and \"their\" planes are the side to move's and its opponent's";

fn describe_actions(grid: GridShape) -> ActionSpec {
    const NAMES: [&str; 8] = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];
    ActionSpec {
        count: grid.actions(),
        stop: grid.actions() - 1,
        grid,
        index: "cell * 16 + direction * 2 + (distance - 1) for a leg from cell `cell = rank * files + file` \
                (rank and file in the mover's view, as the input planes), `direction` below, `distance` 1 (a step \
                to a neighbour) or 2 (a leap over a neighbour: canter or jump); the last index is `stop`"
            .into(),
        directions: DIRECTION_DELTAS
            .iter()
            .enumerate()
            .map(|(index, &(file_delta, rank_delta))| DirectionSpec {
                index,
                name: NAMES[index].into(),
                file_delta,
                rank_delta,
            })
            .collect(),
        decisions: "one network call chooses one decision, not a whole move: a whole move is a path of legs; \
                    after each leg the position is mid-move (planes 7, 8 and 10 are set) and the same side \
                    decides again, until the move ends by itself or the mover picks `stop`, legal where the path \
                    so far is a complete move that could also continue (an optional canter)"
            .into(),
        masking: "the policy logits are not masked: keep only the legal decisions of the position (the next legs \
                  of the legal moves' paths, and `stop` where allowed), then softmax over them"
            .into(),
    }
}

fn describe_outputs(config: &NetConfig, grid: GridShape) -> Vec<OutputSpec> {
    let batch = serde_json::Value::from("batch");
    let mut outputs = vec![
        OutputSpec {
            name: OUTPUT_POLICY.into(),
            shape: vec![batch.clone(), grid.actions().into()],
            meaning: "policy logits over the action space (see actions), no mask applied".into(),
        },
        OutputSpec {
            name: OUTPUT_VALUE.into(),
            shape: vec![batch.clone(), 3.into()],
            meaning: "probabilities of win, draw, loss for the side to move (a softmax: they sum to 1)".into(),
        },
    ];
    if config.aux_heads {
        outputs.push(OutputSpec {
            name: OUTPUT_AUX.into(),
            shape: vec![batch, AUX_OUTPUTS.len().into()],
            meaning: format!("auxiliary predictions: {}", AUX_OUTPUTS.join("; ")),
        });
    }
    outputs
}

/// The card of an export of `network` (from the checkpoint `source`) to a file named `file`
/// whose bytes hash to `file_sha256`.
fn export_card(
    network: &Network,
    source: &ModelCard,
    format: ExportFormat,
    file: &str,
    file_sha256: String,
) -> ExportCard {
    let grid = network.grid();
    let tensors = (format == ExportFormat::Safetensors).then(|| {
        let mut tensors: Vec<TensorSpec> = network
            .model()
            .collect(None, None, false)
            .into_iter()
            .filter(|t| t.dtype == burn::tensor::DType::F32)
            .map(|t| TensorSpec { name: t.name.clone(), shape: t.shape.to_vec() })
            .collect();
        tensors.sort_by(|a, b| a.name.cmp(&b.name));
        tensors
    });
    ExportCard {
        format: EXPORT_CARD_FORMAT.into(),
        format_version: EXPORT_CARD_VERSION,
        file: file.into(),
        file_format: format.name().into(),
        file_sha256,
        documentation: "docs/MODEL_FORMAT.md in camelot-zero".into(),
        variant: source.variant.clone(),
        encoding_version: ENCODING_VERSION,
        input: InputSpec {
            name: INPUT_BOARD.into(),
            shape: vec!["batch".into(), PLANES.into(), grid.ranks.into(), grid.files.into()],
            dtype: "float32".into(),
            layout: "row-major [batch, plane, rank, file]: position n, plane p, cell (rank r, file f) is at \
                     ((n * planes + p) * ranks + r) * files + f; cells off the board are 0 in every \
                     non-constant plane"
                .into(),
            view: VIEW.into(),
        },
        planes: PLANE_NAMES
            .iter()
            .enumerate()
            .map(|(index, name)| PlaneSpec {
                index,
                name: name.to_string(),
                kind: if name.starts_with("constant") { "constant" } else { "binary" }.into(),
            })
            .collect(),
        outputs: describe_outputs(network.config(), grid),
        actions: describe_actions(grid),
        onnx: (format == ExportFormat::Onnx).then_some(OnnxSpec { opset: ONNX_OPSET, ir_version: ONNX_IR_VERSION }),
        tensors,
        architecture: network.config().clone(),
        parameters: network.num_params(),
        source: SourceSpec {
            weights_sha256: source.weights_sha256.clone(),
            step: source.step,
            generation: source.generation,
            parent: source.parent.clone(),
        },
    }
}

/// Exports the checkpoint `model` (with or without extension; checked as on every load) to
/// `out` in `format`, with its card at [`export_card_path`]. Refuses to overwrite either file;
/// both are written atomically (the file first, then the card that vouches for it).
pub fn export_checkpoint(model: &Path, format: ExportFormat, out: &Path) -> Result<Exported, NetError> {
    let card_path = export_card_path(out);
    for path in [out, card_path.as_path()] {
        if path.exists() {
            return Err(NetError::checkpoint(path, "already exists; refusing to overwrite it"));
        }
    }
    let (network, source) = load_checkpoint(model, &crate::device::parse_device("cpu")?)?;
    let bytes = match format {
        ExportFormat::Onnx => onnx_bytes(&network, &source)?,
        ExportFormat::Safetensors => {
            // The checkpoint's own file, checked again against its card: it is the weights the
            // network above was loaded from, byte for byte.
            let weights_path = CheckpointPaths::of(model).weights;
            let bytes = fs::read(&weights_path).map_err(|e| NetError::io(&weights_path, e))?;
            if sha256_hex(&bytes) != source.weights_sha256 {
                return Err(NetError::checkpoint(&weights_path, "changed while it was being exported"));
            }
            bytes
        }
    };
    let file_name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let card = export_card(&network, &source, format, &file_name, sha256_hex(&bytes));
    let json = serde_json::to_vec_pretty(&card).map_err(|e| NetError::checkpoint(&card_path, e.to_string()))?;
    write_atomic(out, &bytes, false)?;
    write_atomic(&card_path, &json, false)?;
    Ok(Exported { file: out.to_path_buf(), card_path, bytes: bytes.len(), card, network })
}

/// Reads and checks an export card.
pub fn read_export_card(path: &Path) -> Result<ExportCard, NetError> {
    let bytes = fs::read(path).map_err(|e| NetError::io(path, e))?;
    let card: ExportCard = serde_json::from_slice(&bytes)
        .map_err(|e| NetError::checkpoint(path, format!("line {}, column {}: {e}", e.line(), e.column())))?;
    if card.format != EXPORT_CARD_FORMAT || card.format_version != EXPORT_CARD_VERSION {
        return Err(NetError::checkpoint(
            path,
            format!(
                "format `{}` version {} (this program reads `{EXPORT_CARD_FORMAT}` version {EXPORT_CARD_VERSION})",
                card.format, card.format_version
            ),
        ));
    }
    Ok(card)
}

/// One sample position of a check-data file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckPosition {
    /// `White` or `Black`: the side to move.
    pub to_move: String,
    /// Whether the position is inside a move (after some of its legs).
    pub mid_move: bool,
    /// Legal actions, ascending.
    pub legal_actions: Vec<u32>,
}

/// Sample inputs and this program's outputs for them: what another runtime must reproduce.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckData {
    /// Always [`CHECK_DATA_FORMAT`].
    pub format: String,
    /// The variant of the positions.
    pub variant: String,
    /// `[batch, planes, ranks, files]` of `board`.
    pub board_shape: Vec<usize>,
    /// The input planes of every position, concatenated (layout as the card's `input`).
    pub board: Vec<f32>,
    /// The positions, in batch order.
    pub positions: Vec<CheckPosition>,
    /// `[batch, actions]` policy logits, row-major.
    pub policy_logits: Vec<f32>,
    /// `[batch, 3]` win/draw/loss probabilities, row-major.
    pub value: Vec<f32>,
    /// `[batch, 2]` auxiliary outputs (empty without auxiliary heads).
    pub aux: Vec<f32>,
    /// Names of the auxiliary outputs.
    pub aux_outputs: Vec<String>,
}

/// `count` positions of `variant` spread along random games (seeded by `seed`): the start, later
/// middle-game positions of both colours, and positions inside multi-leg moves.
pub fn sample_positions(variant: &str, count: usize, seed: u64) -> Result<Vec<CamelotState>, NetError> {
    let rules = Ruleset::variant(variant)
        .map_err(|e| NetError::Config(format!("export: variant `{variant}` of the model card: {e}")))?;
    let rules = Arc::new(rules);
    let mut rng = StdRng::seed_from_u64(seed);
    // Many states along games of random decisions, then an even spread of them: consecutive
    // states would all be from one opening.
    let pool = random_game_states(&rules, 40 * count.max(1), 200, |n| rng.random_range(0..n));
    let step = (pool.len() / count.max(1)).max(1);
    Ok(pool.into_iter().step_by(step).take(count).collect())
}

/// Runs `network` on `count` sample positions of `variant` (see [`sample_positions`]) and
/// returns the inputs and outputs.
pub fn check_data(network: &Network, variant: &str, count: usize, seed: u64) -> Result<CheckData, NetError> {
    let states = sample_positions(variant, count, seed)?;
    let batch = states.len();
    let grid = network.grid();
    let mut board = Vec::with_capacity(batch * network.planes_len());
    let mut positions = Vec::with_capacity(batch);
    for state in &states {
        let mut planes = vec![0.0; planes_len(&state.codec())];
        state.encode_planes(&mut planes);
        if planes.len() != network.planes_len() {
            return Err(NetError::Config(format!(
                "export: variant `{variant}` has a {}x{} grid, the model a {}x{} one",
                state.codec().files(),
                state.codec().ranks(),
                grid.files,
                grid.ranks
            )));
        }
        board.extend_from_slice(&planes);
        let mut legal_actions = Vec::new();
        state.legal_actions(&mut legal_actions);
        legal_actions.sort_unstable();
        let to_move = state.mid_move().map_or(state.position().turn(), |m| m.position.turn());
        positions.push(CheckPosition { to_move: format!("{to_move:?}"), mid_move: state.is_mid_move(), legal_actions });
    }
    let outputs = network.forward(&board, batch)?;
    Ok(CheckData {
        format: CHECK_DATA_FORMAT.into(),
        variant: variant.into(),
        board_shape: vec![batch, PLANES, grid.ranks, grid.files],
        board,
        positions,
        policy_logits: outputs.policy_logits,
        value: outputs.wdl,
        aux: outputs.aux,
        aux_outputs: aux_names(network.config()),
    })
}

/// Writes `data` as JSON to `path` (atomically; never over an existing file).
pub fn write_check_data(path: &Path, data: &CheckData) -> Result<(), NetError> {
    let json = serde_json::to_vec(data).map_err(|e| NetError::checkpoint(path, e.to_string()))?;
    write_atomic(path, &json, false)
}
