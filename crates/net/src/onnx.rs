//! ONNX export: the [`Model`](crate::Model) written as an ONNX graph (opset 17) that any ONNX
//! runtime runs without our code (docs/MODEL_FORMAT.md).
//!
//! burn 0.22 reads ONNX but writes none, so the graph is emitted here from the architecture, one
//! ONNX operator per step of `Model::forward`: convolutions with their batch normalisation folded
//! into the weights (inference uses the running statistics, so the two are one affine map per
//! channel), `Relu`, `Add`, `GlobalAveragePool`/`GlobalMaxPool` for the global pooling,
//! `Gemm` for dense layers, `Transpose`/`Reshape`/`Concat` to lay the policy out in action order,
//! and `Softmax` so that `value` holds the same win/draw/loss probabilities as
//! [`Network::forward`]. The batch axis is symbolic (`batch`).

pub mod proto;

use camelot_game::{ENCODING_VERSION, PLANES, PLANE_NAMES};
use prost::Message as _;

use crate::checkpoint::ModelCard;
use crate::config::NetConfig;
use crate::error::NetError;
use crate::folded::Weights;
use crate::model::AUX_OUTPUTS;
use crate::network::Network;
use proto::{
    attribute_type, data_type, AttributeProto, Dimension, DimensionValue, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, StringStringEntryProto, TensorProto, TensorShapeProto, TensorTypeProto, TypeProto,
    ValueInfoProto,
};

/// ONNX operator set the graph is written for: 17 is read by every maintained runtime
/// (onnxruntime since 1.11, tract, onnxruntime-web) and has every operator used here.
pub const ONNX_OPSET: i64 = 17;

/// ONNX IR version that goes with [`ONNX_OPSET`].
pub const ONNX_IR_VERSION: i64 = 8;

/// Name of the graph input.
pub const INPUT_BOARD: &str = "board";
/// Name of the policy output.
pub const OUTPUT_POLICY: &str = "policy_logits";
/// Name of the win/draw/loss output.
pub const OUTPUT_VALUE: &str = "value";
/// Name of the auxiliary output (only in models with auxiliary heads).
pub const OUTPUT_AUX: &str = "aux";

/// Name of the symbolic batch dimension.
const BATCH_DIM: &str = "batch";

fn int_attribute(name: &str, value: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i: value, r#type: attribute_type::INT, ..Default::default() }
}

fn ints_attribute(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto { name: name.into(), ints: values.to_vec(), r#type: attribute_type::INTS, ..Default::default() }
}

fn float_tensor(name: &str, dims: &[usize], values: &[f32]) -> TensorProto {
    debug_assert_eq!(dims.iter().product::<usize>(), values.len());
    TensorProto {
        dims: dims.iter().map(|&d| d as i64).collect(),
        data_type: data_type::FLOAT,
        name: name.into(),
        raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn value_info(name: &str, dims: &[Option<usize>], doc: &str) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Some(size) => DimensionValue::DimValue(*size as i64),
                None => DimensionValue::DimParam(BATCH_DIM.into()),
            }),
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto { elem_type: data_type::FLOAT, shape: Some(TensorShapeProto { dim }) }),
        }),
        doc_string: doc.into(),
    }
}

/// Builds the graph node by node; every value is named after the node that makes it.
struct GraphBuilder<'a> {
    weights: &'a Weights,
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
}

impl GraphBuilder<'_> {
    /// Adds a node whose single output is named `output`; returns that name.
    fn node(&mut self, op: &str, output: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            name: output.into(),
            op_type: op.into(),
            attribute,
            domain: String::new(),
        });
        output.into()
    }

    fn constant(&mut self, name: &str, dims: &[usize], values: &[f32]) -> String {
        self.initializers.push(float_tensor(name, dims, values));
        name.into()
    }

    fn relu(&mut self, input: &str) -> String {
        self.node("Relu", &format!("{input}.relu"), &[input], Vec::new())
    }

    /// A convolution with stride 1 and "same" padding, from already prepared weights and bias.
    fn conv(&mut self, name: &str, input: &str, weight: (&[usize], &[f32]), bias: &[f32]) -> String {
        let (dims, values) = weight;
        let kernel = dims[2] as i64;
        let pad = kernel / 2;
        let w = self.constant(&format!("{name}.weight"), dims, values);
        let b = self.constant(&format!("{name}.bias"), &[dims[0]], bias);
        self.node(
            "Conv",
            name,
            &[input, &w, &b],
            vec![
                ints_attribute("kernel_shape", &[kernel, kernel]),
                ints_attribute("pads", &[pad, pad, pad, pad]),
                ints_attribute("strides", &[1, 1]),
                ints_attribute("dilations", &[1, 1]),
                int_attribute("group", 1),
            ],
        )
    }

    /// `ConvBn` `prefix`: the convolution with its batch normalisation folded in
    /// ([`Weights::folded_conv_bn`]).
    fn conv_bn(
        &mut self,
        prefix: &str,
        input: &str,
        inputs: usize,
        outputs: usize,
        kernel: usize,
    ) -> Result<String, NetError> {
        let (folded, bias) = self.weights.folded_conv_bn(prefix, inputs, outputs, kernel)?;
        Ok(self.conv(prefix, input, (&[outputs, inputs, kernel, kernel], &folded), &bias))
    }

    /// Mean and max of `input` `[N, C, H, W]` over the board: `[N, 2C, 1, 1]` (mean channels
    /// first, as the model's `global_pool`).
    fn global_pool(&mut self, input: &str) -> String {
        let mean = self.node("GlobalAveragePool", &format!("{input}.mean"), &[input], Vec::new());
        let max = self.node("GlobalMaxPool", &format!("{input}.max"), &[input], Vec::new());
        self.node("Concat", &format!("{input}.pool"), &[&mean, &max], vec![int_attribute("axis", 1)])
    }

    /// burn `Linear` `prefix` (weight `[inputs, outputs]`, bias `[outputs]`) on `[N, inputs]`.
    fn dense(
        &mut self,
        prefix: &str,
        output: &str,
        input: &str,
        inputs: usize,
        outputs: usize,
    ) -> Result<String, NetError> {
        let weight = self.weights.get(&format!("{prefix}.weight"), &[inputs, outputs])?.to_vec();
        let bias = self.weights.get(&format!("{prefix}.bias"), &[outputs])?.to_vec();
        let w = self.constant(&format!("{prefix}.weight"), &[inputs, outputs], &weight);
        let b = self.constant(&format!("{prefix}.bias"), &[outputs], &bias);
        Ok(self.node("Gemm", output, &[input, &w, &b], Vec::new()))
    }

    /// A dense layer applied to `[N, inputs, 1, 1]` as a 1x1 convolution, giving `[N, outputs,
    /// 1, 1]`: the pooled bias of a residual block broadcasts over the board from there with no
    /// reshape of the batch axis.
    fn dense_as_conv(&mut self, prefix: &str, input: &str, inputs: usize, outputs: usize) -> Result<String, NetError> {
        let weight = self.weights.get(&format!("{prefix}.weight"), &[inputs, outputs])?;
        let bias = self.weights.get(&format!("{prefix}.bias"), &[outputs])?.to_vec();
        // Linear weight [inputs, outputs] -> conv kernel [outputs, inputs, 1, 1].
        let mut kernel = vec![0.0; inputs * outputs];
        for i in 0..inputs {
            for o in 0..outputs {
                kernel[o * inputs + i] = weight[i * outputs + o];
            }
        }
        Ok(self.conv(prefix, input, (&[outputs, inputs, 1, 1], &kernel), &bias))
    }

    fn flatten(&mut self, input: &str) -> String {
        self.node("Flatten", &format!("{input}.flat"), &[input], vec![int_attribute("axis", 1)])
    }
}

/// The metadata every exported ONNX file carries (also in the JSON card beside it).
fn metadata(network: &Network, card: &ModelCard) -> Result<Vec<StringStringEntryProto>, NetError> {
    let grid = network.grid();
    let entries = [
        ("format", "camelot-zero exported model".to_string()),
        ("variant", card.variant.clone()),
        ("encoding_version", ENCODING_VERSION.to_string()),
        ("planes", to_json(&PLANE_NAMES.to_vec())?),
        ("grid", to_json(&grid)?),
        ("actions", grid.actions().to_string()),
        (
            "action_index",
            "cell * 16 + direction * 2 + (distance - 1), cell = rank * files + file in the mover's view; last: stop"
                .to_string(),
        ),
        ("value", "win, draw, loss probabilities of the side to move".to_string()),
        ("aux_outputs", to_json(&aux_names(network.config()))?),
        ("architecture", to_json(network.config())?),
        ("weights_sha256", card.weights_sha256.clone()),
        ("step", card.step.to_string()),
        ("documentation", "docs/MODEL_FORMAT.md in camelot-zero; the JSON card beside this file".to_string()),
    ];
    Ok(entries.into_iter().map(|(key, value)| StringStringEntryProto { key: key.into(), value }).collect())
}

/// `value` as compact JSON, for a metadata entry.
fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, NetError> {
    serde_json::to_string(value).map_err(|e| NetError::Config(format!("export: metadata: {e}")))
}

/// Names of the auxiliary outputs of a model with `config` (empty without auxiliary heads).
pub(crate) fn aux_names(config: &NetConfig) -> Vec<String> {
    if config.aux_heads {
        AUX_OUTPUTS.iter().map(|s| s.to_string()).collect()
    } else {
        Vec::new()
    }
}

/// The ONNX graph of `network` as a protobuf message; `card` is the checkpoint it came from
/// (variant, training step and weight hash go into the metadata).
pub fn onnx_model(network: &Network, card: &ModelCard) -> Result<ModelProto, NetError> {
    let config = network.config();
    let grid = network.grid();
    let weights = Weights::of(network.model())?;
    let mut g = GraphBuilder { weights: &weights, nodes: Vec::new(), initializers: Vec::new() };
    let c = config.channels;

    let stem = g.conv_bn("stem", INPUT_BOARD, PLANES, c, 3)?;
    let mut x = g.relu(&stem);
    for i in 0..config.blocks {
        let block = format!("tower.{i}");
        let first = g.conv_bn(&format!("{block}.first"), &x, c, c, 3)?;
        let mut y = g.relu(&first);
        if config.has_global_pool(i) {
            let pooled = g.global_pool(&y);
            let bias = g.dense_as_conv(&format!("{block}.pool"), &pooled, 2 * c, c)?;
            let biased = g.node("Add", &format!("{block}.biased"), &[&y, &bias], Vec::new());
            y = g.relu(&biased);
        }
        let second = g.conv_bn(&format!("{block}.second"), &y, c, c, 3)?;
        let sum = g.node("Add", &format!("{block}.sum"), &[&second, &x], Vec::new());
        x = g.relu(&sum);
    }

    // Policy: 16 logits per cell in action order (cell * 16 + k), then the pooled `stop`.
    let pc = config.policy_channels;
    let policy_conv = g.conv_bn("policy_conv", &x, c, pc, 1)?;
    let p = g.relu(&policy_conv);
    let policy_pool = g.global_pool(&p);
    let policy_pool = g.flatten(&policy_pool);
    let stop = g.dense("policy_stop", "policy_stop", &policy_pool, 2 * pc, 1)?;
    let cell_weight = weights.get("policy_cells.weight", &[16, pc, 1, 1])?;
    let cell_bias = weights.get("policy_cells.bias", &[16])?;
    let cells = g.conv("policy_cells", &p, (&[16, pc, 1, 1], cell_weight), cell_bias);
    let cells = g.node("Transpose", "policy_cells.nhwc", &[&cells], vec![ints_attribute("perm", &[0, 2, 3, 1])]);
    let shape = "policy_cells.shape";
    g.initializers.push(TensorProto {
        dims: vec![2],
        data_type: data_type::INT64,
        name: shape.into(),
        raw_data: [-1i64, (grid.cells() * 16) as i64].iter().flat_map(|v| v.to_le_bytes()).collect(),
    });
    let cells = g.node("Reshape", "policy_cells.flat", &[&cells, shape], Vec::new());
    g.node("Concat", OUTPUT_POLICY, &[&cells, &stop], vec![int_attribute("axis", 1)]);

    // Value: win/draw/loss probabilities, and the auxiliary outputs from the same hidden layer.
    let vc = config.value_channels;
    let value_conv = g.conv_bn("value_conv", &x, c, vc, 1)?;
    let v = g.relu(&value_conv);
    let value_pool = g.global_pool(&v);
    let value_pool = g.flatten(&value_pool);
    let hidden = g.dense("value_hidden", "value_hidden", &value_pool, 2 * vc, config.value_hidden)?;
    let hidden = g.relu(&hidden);
    let wdl = g.dense("value_wdl", "value_wdl", &hidden, config.value_hidden, 3)?;
    g.node("Softmax", OUTPUT_VALUE, &[&wdl], vec![int_attribute("axis", 1)]);
    if config.aux_heads {
        g.dense("value_aux", OUTPUT_AUX, &hidden, config.value_hidden, AUX_OUTPUTS.len())?;
    }

    let mut outputs = vec![
        value_info(
            OUTPUT_POLICY,
            &[None, Some(grid.actions())],
            "policy logits, no mask applied: action cell * 16 + direction * 2 + (distance - 1), then stop",
        ),
        value_info(OUTPUT_VALUE, &[None, Some(3)], "win, draw, loss probabilities of the side to move"),
    ];
    if config.aux_heads {
        outputs.push(value_info(OUTPUT_AUX, &[None, Some(AUX_OUTPUTS.len())], &AUX_OUTPUTS.join("; ")));
    }
    let graph = GraphProto {
        node: g.nodes,
        name: format!("camelot-zero {} {}", card.variant, config.label()),
        initializer: g.initializers,
        doc_string: "camelot-zero policy/value network (docs/MODEL_FORMAT.md)".into(),
        input: vec![value_info(
            INPUT_BOARD,
            &[None, Some(PLANES), Some(grid.ranks), Some(grid.files)],
            "input planes from the mover's view: [batch, planes, ranks, files]",
        )],
        output: outputs,
    };
    Ok(ModelProto {
        ir_version: ONNX_IR_VERSION,
        producer_name: "camelot-zero".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        domain: String::new(),
        model_version: ENCODING_VERSION as i64,
        doc_string: format!(
            "camelot-zero {} network for {}, encoding version {ENCODING_VERSION}",
            config.label(),
            card.variant
        ),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: ONNX_OPSET }],
        metadata_props: metadata(network, card)?,
    })
}

/// [`onnx_model`] serialised: the bytes of a `.onnx` file.
pub fn onnx_bytes(network: &Network, card: &ModelCard) -> Result<Vec<u8>, NetError> {
    Ok(onnx_model(network, card)?.encode_to_vec())
}
