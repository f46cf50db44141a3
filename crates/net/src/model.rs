//! The policy/value network: a residual tower with global-pooling blocks, a convolutional policy
//! head and a win/draw/loss value head (DESIGN.md).

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

use crate::config::{GridShape, NetConfig};

/// The material head's target is the material lead in points (a man one, a knight two) divided
/// by this: the trainer writes it so, the evaluator reads it back so.
pub const MATERIAL_TARGET_POINTS: f32 = 14.0;

/// Auxiliary outputs, in this order in [`ModelOutput::aux`].
pub const AUX_OUTPUTS: [&str; 2] = ["material at game end (mover minus opponent, / 14)", "plies left / 100"];

/// Classes of the ownership head, in this order: the cell is empty at the game's end, holds
/// a piece of the mover's, or one of the opponent's.
pub const OWNERSHIP_CLASSES: usize = 3;

/// What one forward pass returns.
#[derive(Debug, Clone)]
pub struct ModelOutput {
    /// `[batch, actions]`: 16 logits per cell in action order (`cell * 16 + k`), then `stop`.
    pub policy_logits: Tensor<2>,
    /// `[batch, 3]`: win, draw, loss logits from the mover's view.
    pub wdl_logits: Tensor<2>,
    /// `[batch, 2]` auxiliary predictions ([`AUX_OUTPUTS`]), if the model has them.
    pub aux: Option<Tensor<2>>,
    /// `[batch * cells, 3]` ownership logits (cell-major within each position, classes as
    /// [`OWNERSHIP_CLASSES`]), from [`Model::forward_with_ownership`] of a model with the head.
    pub ownership: Option<Tensor<2>>,
}

/// A 3x3 or 1x1 convolution followed by batch normalisation (the convolution needs no bias).
#[derive(Module, Debug)]
pub struct ConvBn {
    conv: Conv2d,
    norm: BatchNorm,
}

impl ConvBn {
    fn new(input: usize, output: usize, kernel: usize, device: &Device) -> ConvBn {
        let padding = if kernel == 1 { PaddingConfig2d::Valid } else { PaddingConfig2d::Same };
        ConvBn {
            conv: Conv2dConfig::new([input, output], [kernel, kernel])
                .with_padding(padding)
                .with_bias(false)
                .init(device),
            norm: BatchNormConfig::new(output).init(device),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.norm.forward(self.conv.forward(x))
    }
}

/// Mean and max over the board of `[batch, channels, ranks, files]`: `[batch, 2 * channels]`.
fn global_pool(x: Tensor<4>) -> Tensor<2> {
    let [batch, channels, ranks, files] = x.dims();
    let flat: Tensor<3> = x.reshape([batch, channels, ranks * files]);
    let mean: Tensor<2> = flat.clone().mean_dim(2).reshape([batch, channels]);
    let max: Tensor<2> = flat.max_dim(2).reshape([batch, channels]);
    Tensor::cat(vec![mean, max], 1)
}

/// One residual block; with `pool`, the first convolution's output also feeds a dense layer
/// whose result is added to every cell as a per-channel bias.
#[derive(Module, Debug)]
pub struct ResidualBlock {
    first: ConvBn,
    second: ConvBn,
    pool: Option<Linear>,
}

impl ResidualBlock {
    fn new(channels: usize, pool: bool, device: &Device) -> ResidualBlock {
        ResidualBlock {
            first: ConvBn::new(channels, channels, 3, device),
            second: ConvBn::new(channels, channels, 3, device),
            pool: pool.then(|| LinearConfig::new(2 * channels, channels).init(device)),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let mut y = relu(self.first.forward(x.clone()));
        if let Some(pool) = &self.pool {
            let [batch, channels, _, _] = y.dims();
            let bias: Tensor<4> = pool.forward(global_pool(y.clone())).reshape([batch, channels, 1, 1]);
            y = relu(y + bias);
        }
        relu(self.second.forward(y) + x)
    }
}

/// The whole network.
#[derive(Module, Debug)]
pub struct Model {
    stem: ConvBn,
    tower: Vec<ResidualBlock>,
    policy_conv: ConvBn,
    policy_cells: Conv2d,
    policy_stop: Linear,
    value_conv: ConvBn,
    value_hidden: Linear,
    value_wdl: Linear,
    value_aux: Option<Linear>,
    value_ownership: Option<Conv2d>,
}

impl Model {
    /// A freshly initialised network for `planes` input planes (weights from the device's RNG:
    /// seed it first with [`Device::seed`] for a reproducible start).
    pub fn new(config: &NetConfig, planes: usize, device: &Device) -> Model {
        let c = config.channels;
        Model {
            stem: ConvBn::new(planes, c, 3, device),
            tower: (0..config.blocks).map(|i| ResidualBlock::new(c, config.has_global_pool(i), device)).collect(),
            policy_conv: ConvBn::new(c, config.policy_channels, 1, device),
            policy_cells: Conv2dConfig::new([config.policy_channels, 16], [1, 1]).init(device),
            policy_stop: LinearConfig::new(2 * config.policy_channels, 1).init(device),
            value_conv: ConvBn::new(c, config.value_channels, 1, device),
            value_hidden: LinearConfig::new(2 * config.value_channels, config.value_hidden).init(device),
            value_wdl: LinearConfig::new(config.value_hidden, 3).init(device),
            value_aux: config.aux_heads.then(|| LinearConfig::new(config.value_hidden, AUX_OUTPUTS.len()).init(device)),
            value_ownership: config
                .ownership
                .then(|| Conv2dConfig::new([config.value_channels, OWNERSHIP_CLASSES], [1, 1]).init(device)),
        }
    }

    /// The batch normalisation of the `ConvBn` at `prefix` (`stem`, `tower.0.first`,
    /// `policy_conv`, ...), as named in the weights.
    pub(crate) fn batch_norm(&self, prefix: &str) -> Option<&BatchNorm> {
        let conv_bn = match prefix {
            "stem" => &self.stem,
            "policy_conv" => &self.policy_conv,
            "value_conv" => &self.value_conv,
            _ => {
                let rest = prefix.strip_prefix("tower.")?;
                let (index, which) = rest.split_once('.')?;
                let block = self.tower.get(index.parse::<usize>().ok()?)?;
                match which {
                    "first" => &block.first,
                    "second" => &block.second,
                    _ => return None,
                }
            }
        };
        Some(&conv_bn.norm)
    }

    /// Runs the network on `input`, `[batch, planes, ranks, files]`: the outputs inference
    /// reads (no ownership logits).
    pub fn forward(&self, input: Tensor<4>) -> ModelOutput {
        self.forward_heads(input, false)
    }

    /// [`Model::forward`] with the ownership logits too, if the model has the head: the
    /// training step's pass.
    pub fn forward_with_ownership(&self, input: Tensor<4>) -> ModelOutput {
        self.forward_heads(input, true)
    }

    fn forward_heads(&self, input: Tensor<4>, with_ownership: bool) -> ModelOutput {
        let [batch, _, ranks, files] = input.dims();
        let mut x = relu(self.stem.forward(input));
        for block in &self.tower {
            x = block.forward(x);
        }

        let p = relu(self.policy_conv.forward(x.clone()));
        let stop = self.policy_stop.forward(global_pool(p.clone()));
        // [batch, 16, ranks, files] -> [batch, ranks, files, 16]: action = cell * 16 + k.
        let cells: Tensor<2> = self.policy_cells.forward(p).permute([0, 2, 3, 1]).reshape([batch, ranks * files * 16]);
        let policy_logits = Tensor::cat(vec![cells, stop], 1);

        let v = relu(self.value_conv.forward(x));
        let ownership = self.value_ownership.as_ref().filter(|_| with_ownership).map(|head| {
            head.forward(v.clone()).permute([0, 2, 3, 1]).reshape([batch * ranks * files, OWNERSHIP_CLASSES])
        });
        let hidden = relu(self.value_hidden.forward(global_pool(v)));
        let aux = self.value_aux.as_ref().map(|head| head.forward(hidden.clone()));
        let wdl_logits = self.value_wdl.forward(hidden);
        ModelOutput { policy_logits, wdl_logits, aux, ownership }
    }
}

/// Floating-point operations of one position's forward pass (a multiply-add counts two),
/// counted from the architecture: convolutions and dense layers (normalisation, activations and
/// pooling add well under 1% and are left out). The ownership head is left out too: it is a
/// training target, and inference does not run it.
pub fn forward_flops(config: &NetConfig, planes: usize, grid: GridShape) -> u64 {
    let cells = grid.cells() as u64;
    let c = config.channels as u64;
    let conv = |input: u64, output: u64, kernel: u64| 2 * cells * input * output * kernel * kernel;
    let dense = |input: u64, output: u64| 2 * input * output;
    let mut flops = conv(planes as u64, c, 3);
    for i in 0..config.blocks {
        flops += 2 * conv(c, c, 3);
        if config.has_global_pool(i) {
            flops += dense(2 * c, c);
        }
    }
    let pc = config.policy_channels as u64;
    let vc = config.value_channels as u64;
    let vh = config.value_hidden as u64;
    flops += conv(c, pc, 1) + conv(pc, 16, 1) + dense(2 * pc, 1);
    flops += conv(c, vc, 1) + dense(2 * vc, vh) + dense(vh, 3);
    if config.aux_heads {
        flops += dense(vh, AUX_OUTPUTS.len() as u64);
    }
    flops
}
