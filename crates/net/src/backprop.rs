//! The training step's forward and backward passes on the CPU, by hand: the loss of
//! [`crate::Trainer::train_step`] and its gradient with respect to every parameter, plus each
//! batch normalisation's batch statistics (for its running averages). burn's optimizer then
//! applies the gradients (clipping, momentum or Adam state, weight decay: unchanged), so only
//! the differentiation moves here.
//!
//! Why by hand: burn-flex 0.22.1's autodiff runs each convolution image by image, computes a
//! convolution's weight gradient as a convolution with the batch as the channel axis after two
//! single-threaded transposes, and runs normalisation, ReLU and the residual add as passes of
//! their own; measured side by side its training step ran at 0.05x (3x32) and 0.10x (6x96)
//! onnxruntime's inference rate (docs/BENCHMARKS.md). Here activations are `[cell, channel]`
//! rows on the padded grid of [`crate::folded`], so that a 3x3 convolution over the whole
//! batch is three matrix products over sliding windows, and so are its input gradient (the
//! flipped kernel over the output gradient) and its weight gradient (the windows transposed
//! against the output gradient); normalisation statistics, normalisation and ReLU are one pass
//! each way. The result is checked against burn's autodiff (a test: same losses, gradients and
//! statistics within tolerance).

use crate::config::{GridShape, NetConfig};
use crate::error::NetError;
use crate::folded::{gemm, kernel_rows, Padded, Weights, BATCH_NORM_EPSILON};
use crate::model::AUX_OUTPUTS;

/// A dense row-major `[rows, cols]` matrix as a `gemm` operand.
fn dense(x: &[f32], cols: usize) -> (&[f32], usize, usize) {
    (x, cols, 1)
}

/// The transpose of a dense row-major `[rows, cols]` matrix as a `gemm` operand.
fn transposed(x: &[f32], cols: usize) -> (&[f32], usize, usize) {
    (x, 1, cols)
}

/// Batch statistics of one normalisation: mean and biased variance per channel (what burn's
/// training path returns and feeds its running averages), and `1 / sqrt(var + eps)`.
struct NormStats {
    mean: Vec<f32>,
    var: Vec<f32>,
    inv_std: Vec<f32>,
}

/// Mean and variance per channel of `rows` rows of `z` (`channels` floats each) that hold
/// `count` real values per channel; other rows are zero (the padded grid's margins), so
/// they drop out of both sums. Accumulated in f64.
fn norm_stats(z: &[f32], channels: usize, count: usize) -> NormStats {
    let mut sum = vec![0.0f64; channels];
    let mut squares = vec![0.0f64; channels];
    for row in z.chunks_exact(channels) {
        for ((s, q), &v) in sum.iter_mut().zip(squares.iter_mut()).zip(row) {
            let v = v as f64;
            *s += v;
            *q += v * v;
        }
    }
    let n = count as f64;
    let mut stats = NormStats { mean: Vec::new(), var: Vec::new(), inv_std: Vec::new() };
    for (s, q) in sum.iter().zip(&squares) {
        let mean = s / n;
        let var = (q / n - mean * mean).max(0.0);
        stats.mean.push(mean as f32);
        stats.var.push(var as f32);
        stats.inv_std.push((1.0 / (var + BATCH_NORM_EPSILON).sqrt()) as f32);
    }
    stats
}

/// `out = relu(gamma * (z - mean) * inv_std + beta [+ residual])`, row by row.
fn norm_relu(z: &[f32], stats: &NormStats, gamma: &[f32], beta: &[f32], residual: Option<&[f32]>, out: &mut [f32]) {
    let channels = gamma.len();
    let scale: Vec<f32> = gamma.iter().zip(&stats.inv_std).map(|(g, s)| g * s).collect();
    let shift: Vec<f32> = beta.iter().zip(&stats.mean).zip(&scale).map(|((b, m), s)| b - m * s).collect();
    match residual {
        Some(residual) => {
            for ((o, zr), r) in
                out.chunks_exact_mut(channels).zip(z.chunks_exact(channels)).zip(residual.chunks_exact(channels))
            {
                for c in 0..channels {
                    o[c] = (zr[c] * scale[c] + shift[c] + r[c]).max(0.0);
                }
            }
        }
        None => {
            for (o, zr) in out.chunks_exact_mut(channels).zip(z.chunks_exact(channels)) {
                for c in 0..channels {
                    o[c] = (zr[c] * scale[c] + shift[c]).max(0.0);
                }
            }
        }
    }
}

/// Backward of [`norm_relu`]: `grad` holds the loss gradient of `out` and becomes that of `z`;
/// with `residual_grad`, the gradient reaching the residual input (the gradient before the
/// normalisation) is written there. Rows where `out` is zero (the ReLU's dead side, and every
/// margin of the padded grid) pass nothing back to the normalisation's statistics; the caller
/// clears the margins of the result. Returns the gradients of gamma and beta.
fn norm_relu_backward(
    grad: &mut [f32],
    out: &[f32],
    z: &[f32],
    stats: &NormStats,
    gamma: &[f32],
    count: usize,
    mut residual_grad: Option<&mut [f32]>,
) -> (Vec<f32>, Vec<f32>) {
    let channels = gamma.len();
    let mut sum = vec![0.0f64; channels];
    let mut sum_xhat = vec![0.0f64; channels];
    for (row, (g, (o, zr))) in
        grad.chunks_exact_mut(channels).zip(out.chunks_exact(channels).zip(z.chunks_exact(channels))).enumerate()
    {
        for c in 0..channels {
            let v = if o[c] > 0.0 { g[c] } else { 0.0 };
            g[c] = v;
            sum[c] += v as f64;
            sum_xhat[c] += (v * (zr[c] - stats.mean[c]) * stats.inv_std[c]) as f64;
        }
        if let Some(residual) = residual_grad.as_deref_mut() {
            residual[row * channels..(row + 1) * channels].copy_from_slice(g);
        }
    }
    let n = count as f64;
    let mean_grad: Vec<f32> = sum.iter().map(|s| (s / n) as f32).collect();
    let mean_xhat_grad: Vec<f32> = sum_xhat.iter().map(|s| (s / n) as f32).collect();
    let scale: Vec<f32> = gamma.iter().zip(&stats.inv_std).map(|(g, s)| g * s).collect();
    for (g, zr) in grad.chunks_exact_mut(channels).zip(z.chunks_exact(channels)) {
        for c in 0..channels {
            let xhat = (zr[c] - stats.mean[c]) * stats.inv_std[c];
            g[c] = scale[c] * (g[c] - mean_grad[c] - xhat * mean_xhat_grad[c]);
        }
    }
    (sum_xhat.iter().map(|&s| s as f32).collect(), sum.iter().map(|&s| s as f32).collect())
}

/// A convolution without bias followed by batch normalisation and ReLU (the model's `ConvBn`
/// and the ReLU after it): kernel `[(ky * kernel + kx) * inputs + i, o]` as in the folded
/// model.
struct ConvNorm {
    prefix: String,
    kernel: usize,
    inputs: usize,
    outputs: usize,
    weight: Vec<f32>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// What the backward pass needs of one [`ConvNorm`]'s forward pass.
struct ConvNormCache {
    z: Vec<f32>,
    out: Vec<f32>,
    stats: NormStats,
}

/// The inverse of [`kernel_rows`].
fn kernel_oihw(rows: &[f32], inputs: usize, outputs: usize, kernel: usize) -> Vec<f32> {
    let mut oihw = vec![0.0; rows.len()];
    for o in 0..outputs {
        for i in 0..inputs {
            for k in 0..kernel * kernel {
                oihw[(o * inputs + i) * kernel * kernel + k] = rows[(k * inputs + i) * outputs + o];
            }
        }
    }
    oihw
}

/// One parameter's gradient, named and shaped as in the model (`stem.conv.weight`, ...).
pub(crate) struct ParamGrad {
    pub(crate) name: String,
    pub(crate) shape: Vec<usize>,
    pub(crate) values: Vec<f32>,
}

/// One batch normalisation's statistics over the batch, for its running averages.
pub(crate) struct BatchNormUpdate {
    /// The `ConvBn` path (`stem`, `tower.0.first`, ...).
    pub(crate) prefix: String,
    pub(crate) mean: Vec<f32>,
    pub(crate) var: Vec<f32>,
}

impl ConvNorm {
    fn of(weights: &Weights, prefix: &str, inputs: usize, outputs: usize, kernel: usize) -> Result<ConvNorm, NetError> {
        let oihw = weights.get(&format!("{prefix}.conv.weight"), &[outputs, inputs, kernel, kernel])?;
        Ok(ConvNorm {
            prefix: prefix.to_string(),
            kernel,
            inputs,
            outputs,
            weight: kernel_rows(oihw, inputs, outputs, kernel),
            gamma: weights.get(&format!("{prefix}.norm.gamma"), &[outputs])?.to_vec(),
            beta: weights.get(&format!("{prefix}.norm.beta"), &[outputs])?.to_vec(),
        })
    }

    /// The 3x3 convolution of padded `x` into padded `z` (margins zero): for each kernel row,
    /// one product over the windows of all cells (see the folded model's `forward_3x3`).
    fn conv_3x3(&self, layout: Padded, x: &[f32], z: &mut Vec<f32>) {
        let (i, o) = (self.inputs, self.outputs);
        z.clear();
        z.resize(layout.len() * o, 0.0);
        let (first, end) = (layout.first_cell(), layout.end_cell());
        for ky in 0..3 {
            let window = first + ky * layout.stride - layout.stride - 1;
            let rhs = &self.weight[ky * 3 * i * o..(ky + 1) * 3 * i * o];
            gemm(end - first, o, 3 * i, (&x[window * i..], i, 1), dense(rhs, o), &mut z[first * o..end * o], ky > 0);
        }
        layout.clear_margins(z, o);
    }

    /// Forward on padded `x` (3x3) or dense rows (1x1), `count` real cells in all.
    fn forward(&self, layout: Option<Padded>, x: &[f32], rows: usize, residual: Option<&[f32]>) -> ConvNormCache {
        let o = self.outputs;
        let mut z = Vec::new();
        match layout {
            Some(layout) => self.conv_3x3(layout, x, &mut z),
            None => {
                z.resize(rows * o, 0.0);
                gemm(rows, o, self.inputs, dense(x, self.inputs), dense(&self.weight, o), &mut z, false);
            }
        }
        let count = match layout {
            Some(layout) => layout.images * layout.ranks * layout.files,
            None => rows,
        };
        let stats = norm_stats(&z, o, count);
        let mut out = vec![0.0; z.len()];
        norm_relu(&z, &stats, &self.gamma, &self.beta, residual, &mut out);
        if let Some(layout) = layout {
            layout.clear_margins(&mut out, o);
        }
        ConvNormCache { z, out, stats }
    }

    /// Backward: `grad` (the loss gradient of the output) is consumed; returns the gradient of
    /// the input `x` when `want_input` (padded like `x` for 3x3, margins unspecified), pushing
    /// the parameter gradients and batch statistics. With `residual_grad`, the gradient that
    /// reaches a residual input added before the ReLU is written there.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        layout: Option<Padded>,
        x: &[f32],
        rows: usize,
        cache: ConvNormCache,
        mut grad: Vec<f32>,
        want_input: bool,
        residual_grad: Option<&mut [f32]>,
        out: &mut Gradients,
    ) -> Option<Vec<f32>> {
        let (i, o, k) = (self.inputs, self.outputs, self.kernel);
        let count = match layout {
            Some(layout) => layout.images * layout.ranks * layout.files,
            None => rows,
        };
        let (dgamma, dbeta) =
            norm_relu_backward(&mut grad, &cache.out, &cache.z, &cache.stats, &self.gamma, count, residual_grad);
        let mut dweight = vec![0.0; k * k * i * o];
        let dx = match layout {
            Some(layout) => {
                layout.clear_margins(&mut grad, o);
                let (first, end) = (layout.first_cell(), layout.end_cell());
                let cells = end - first;
                for ky in 0..3 {
                    // dW[(ky, kx, i), o] = sum over cells q of x[window(q) + kx][i] * dz[q][o].
                    let window = first + ky * layout.stride - layout.stride - 1;
                    gemm(
                        3 * i,
                        o,
                        cells,
                        (&x[window * i..], 1, i),
                        dense(&grad[first * o..end * o], o),
                        &mut dweight[ky * 3 * i * o..(ky + 1) * 3 * i * o],
                        false,
                    );
                }
                want_input.then(|| {
                    // dx[q] = sum over (ky, kx) of dz[q - offset(ky, kx)] W[ky, kx]^T: the
                    // flipped kernel with inputs and outputs swapped, over windows of dz.
                    let mut flipped = vec![0.0; 9 * o * i];
                    for ky in 0..3 {
                        for kx in 0..3 {
                            for c in 0..i {
                                for d in 0..o {
                                    flipped[(((2 - ky) * 3 + (2 - kx)) * o + d) * i + c] =
                                        self.weight[((ky * 3 + kx) * i + c) * o + d];
                                }
                            }
                        }
                    }
                    let mut dx = vec![0.0; layout.len() * i];
                    for ky in 0..3 {
                        let window = first + ky * layout.stride - layout.stride - 1;
                        gemm(
                            cells,
                            i,
                            3 * o,
                            (&grad[window * o..], o, 1),
                            dense(&flipped[ky * 3 * o * i..(ky + 1) * 3 * o * i], i),
                            &mut dx[first * i..end * i],
                            ky > 0,
                        );
                    }
                    dx
                })
            }
            None => {
                gemm(i, o, rows, transposed(x, i), dense(&grad, o), &mut dweight, false);
                want_input.then(|| {
                    let mut dx = vec![0.0; rows * i];
                    gemm(rows, i, o, dense(&grad, o), transposed(&self.weight, o), &mut dx, false);
                    dx
                })
            }
        };
        let p = &self.prefix;
        out.push(format!("{p}.conv.weight"), vec![o, i, k, k], kernel_oihw(&dweight, i, o, k));
        out.push(format!("{p}.norm.gamma"), vec![o], dgamma);
        out.push(format!("{p}.norm.beta"), vec![o], dbeta);
        out.norms.push(BatchNormUpdate { prefix: p.clone(), mean: cache.stats.mean, var: cache.stats.var });
        dx
    }
}

/// A dense layer (burn's `Linear`: weight `[inputs, outputs]`, bias `[outputs]`).
struct Linear {
    prefix: String,
    inputs: usize,
    outputs: usize,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Linear {
    fn of(weights: &Weights, prefix: &str, inputs: usize, outputs: usize) -> Result<Linear, NetError> {
        Ok(Linear {
            prefix: prefix.to_string(),
            inputs,
            outputs,
            weight: weights.get(&format!("{prefix}.weight"), &[inputs, outputs])?.to_vec(),
            bias: weights.get(&format!("{prefix}.bias"), &[outputs])?.to_vec(),
        })
    }

    fn forward(&self, rows: usize, x: &[f32]) -> Vec<f32> {
        let mut y = vec![0.0; rows * self.outputs];
        gemm(rows, self.outputs, self.inputs, dense(x, self.inputs), dense(&self.weight, self.outputs), &mut y, false);
        for row in y.chunks_exact_mut(self.outputs) {
            row.iter_mut().zip(&self.bias).for_each(|(v, b)| *v += b);
        }
        y
    }

    /// Pushes the weight and bias gradients for output gradient `dy`; returns the input's.
    fn backward(&self, rows: usize, x: &[f32], dy: &[f32], out: &mut Gradients) -> Vec<f32> {
        let (i, o) = (self.inputs, self.outputs);
        let mut dweight = vec![0.0; i * o];
        gemm(i, o, rows, transposed(x, i), dense(dy, o), &mut dweight, false);
        let mut dbias = vec![0.0; o];
        for row in dy.chunks_exact(o) {
            dbias.iter_mut().zip(row).for_each(|(b, g)| *b += g);
        }
        let mut dx = vec![0.0; rows * i];
        gemm(rows, i, o, dense(dy, o), transposed(&self.weight, o), &mut dx, false);
        out.push(format!("{}.weight", self.prefix), vec![i, o], dweight);
        out.push(format!("{}.bias", self.prefix), vec![o], dbias);
        dx
    }
}

/// Mean then max over each image's cells (`[images, 2 * channels]`, the model's
/// `global_pool`), with the row of each maximum for the backward pass. `rows_of(image)` lists
/// an image's rows of `x`.
fn pool<I: Iterator<Item = usize>>(
    x: &[f32],
    channels: usize,
    images: usize,
    cells: usize,
    rows_of: impl Fn(usize) -> I,
) -> (Vec<f32>, Vec<usize>) {
    let mut pooled = vec![0.0; images * 2 * channels];
    let mut argmax = vec![0usize; images * channels];
    for image in 0..images {
        let (mean, max) = pooled[image * 2 * channels..(image + 1) * 2 * channels].split_at_mut(channels);
        let at = &mut argmax[image * channels..(image + 1) * channels];
        max.fill(f32::NEG_INFINITY);
        let mut sum = vec![0.0f64; channels];
        for row in rows_of(image) {
            let values = &x[row * channels..(row + 1) * channels];
            for c in 0..channels {
                sum[c] += values[c] as f64;
                if values[c] > max[c] {
                    max[c] = values[c];
                    at[c] = row;
                }
            }
        }
        for c in 0..channels {
            mean[c] = (sum[c] / cells as f64) as f32;
        }
    }
    (pooled, argmax)
}

/// Backward of [`pool`]: adds the gradient of the pooled values to `dx`'s rows.
fn pool_backward<I: Iterator<Item = usize>>(
    dpooled: &[f32],
    argmax: &[usize],
    channels: usize,
    cells: usize,
    dx: &mut [f32],
    rows_of: impl Fn(usize) -> I,
) {
    let images = argmax.len() / channels;
    for image in 0..images {
        let (dmean, dmax) = dpooled[image * 2 * channels..(image + 1) * 2 * channels].split_at(channels);
        let share: Vec<f32> = dmean.iter().map(|g| g / cells as f32).collect();
        for row in rows_of(image) {
            dx[row * channels..(row + 1) * channels].iter_mut().zip(&share).for_each(|(d, s)| *d += s);
        }
        for c in 0..channels {
            dx[argmax[image * channels + c] * channels + c] += dmax[c];
        }
    }
}

/// The gradients and statistics one step produces.
#[derive(Default)]
pub(crate) struct Gradients {
    pub(crate) params: Vec<ParamGrad>,
    pub(crate) norms: Vec<BatchNormUpdate>,
}

impl Gradients {
    fn push(&mut self, name: String, shape: Vec<usize>, values: Vec<f32>) {
        self.params.push(ParamGrad { name, shape, values });
    }
}

/// A batch and its targets as dense arrays (`[batch, ...]` row-major).
pub(crate) struct Batch<'a> {
    pub(crate) size: usize,
    /// `[batch, planes, ranks, files]`.
    pub(crate) planes: &'a [f32],
    /// `[batch, actions]`: 0 for a legal action, -1e9 otherwise.
    pub(crate) mask: &'a [f32],
    pub(crate) policy: &'a [f32],
    pub(crate) wdl: &'a [f32],
    /// `[batch, 2]`: final material, plies left.
    pub(crate) aux: &'a [f32],
}

/// The weights of the four loss terms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LossWeights {
    pub(crate) policy: f32,
    pub(crate) value: f32,
    pub(crate) material: f32,
    pub(crate) plies_left: f32,
}

/// Losses of one batch (means over the batch) and the value logits.
pub(crate) struct Losses {
    pub(crate) total: f32,
    pub(crate) policy: f32,
    pub(crate) value: f32,
    pub(crate) material: Option<f32>,
    pub(crate) plies_left: Option<f32>,
    pub(crate) wdl_logits: Vec<f32>,
}

/// Cross-entropy of `targets` against `log_softmax(logits + mask)` per row, and its gradient
/// with respect to the logits scaled by `scale`: `(softmax * sum(targets) - targets) * scale`.
fn softmax_cross_entropy(
    logits: &[f32],
    mask: Option<&[f32]>,
    targets: &[f32],
    width: usize,
    scale: f32,
) -> (f64, Vec<f32>) {
    let mut loss = 0.0f64;
    let mut grad = vec![0.0; logits.len()];
    for (row, (l, t)) in logits.chunks_exact(width).zip(targets.chunks_exact(width)).enumerate() {
        let shifted: Vec<f32> = match mask {
            Some(mask) => l.iter().zip(&mask[row * width..(row + 1) * width]).map(|(a, b)| a + b).collect(),
            None => l.to_vec(),
        };
        let max = shifted.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f64 = shifted.iter().map(|&v| ((v - max) as f64).exp()).sum();
        let log_sum = sum.ln() as f32 + max;
        let total: f32 = t.iter().sum();
        let g = &mut grad[row * width..(row + 1) * width];
        for ((gi, &v), &ti) in g.iter_mut().zip(&shifted).zip(t) {
            let log_p = v - log_sum;
            if ti != 0.0 {
                loss -= (ti * log_p) as f64;
            }
            *gi = (log_p.exp() * total - ti) * scale;
        }
    }
    (loss, grad)
}

/// The model's layers as plain arrays, for one training step.
pub(crate) struct TrainingModel {
    grid: GridShape,
    planes: usize,
    channels: usize,
    stem: ConvNorm,
    tower: Vec<(ConvNorm, ConvNorm, Option<Linear>)>,
    policy_conv: ConvNorm,
    policy_cells_weight: Vec<f32>,
    policy_cells_bias: Vec<f32>,
    policy_stop: Linear,
    value_conv: ConvNorm,
    value_hidden: Linear,
    value_wdl: Linear,
    value_aux: Option<Linear>,
}

impl TrainingModel {
    pub(crate) fn new(
        weights: &Weights,
        config: &NetConfig,
        planes: usize,
        grid: GridShape,
    ) -> Result<TrainingModel, NetError> {
        let c = config.channels;
        let (pc, vc, vh) = (config.policy_channels, config.value_channels, config.value_hidden);
        let tower = (0..config.blocks)
            .map(|b| {
                let p = format!("tower.{b}");
                Ok((
                    ConvNorm::of(weights, &format!("{p}.first"), c, c, 3)?,
                    ConvNorm::of(weights, &format!("{p}.second"), c, c, 3)?,
                    match config.has_global_pool(b) {
                        true => Some(Linear::of(weights, &format!("{p}.pool"), 2 * c, c)?),
                        false => None,
                    },
                ))
            })
            .collect::<Result<Vec<_>, NetError>>()?;
        // The policy's 1x1 convolution keeps burn's [16, pc, 1, 1] kernel as [pc, 16] rows.
        let cells = weights.get("policy_cells.weight", &[16, pc, 1, 1])?;
        Ok(TrainingModel {
            grid,
            planes,
            channels: c,
            stem: ConvNorm::of(weights, "stem", planes, c, 3)?,
            tower,
            policy_conv: ConvNorm::of(weights, "policy_conv", c, pc, 1)?,
            policy_cells_weight: kernel_rows(cells, pc, 16, 1),
            policy_cells_bias: weights.get("policy_cells.bias", &[16])?.to_vec(),
            policy_stop: Linear::of(weights, "policy_stop", 2 * pc, 1)?,
            value_conv: ConvNorm::of(weights, "value_conv", c, vc, 1)?,
            value_hidden: Linear::of(weights, "value_hidden", 2 * vc, vh)?,
            value_wdl: Linear::of(weights, "value_wdl", vh, 3)?,
            value_aux: match config.aux_heads {
                true => Some(Linear::of(weights, "value_aux", vh, AUX_OUTPUTS.len())?),
                false => None,
            },
        })
    }

    /// The losses of `batch` and the gradient of the weighted total with respect to every
    /// parameter, as burn's training step computes them (batch statistics in every
    /// normalisation).
    pub(crate) fn loss_and_gradients(&self, batch: &Batch, weights: LossWeights) -> (Losses, Gradients) {
        let n = batch.size;
        let grid = self.grid;
        let cells = grid.cells();
        let c = self.channels;
        let layout = Padded::new(grid, n);
        let mut grads = Gradients::default();

        let mut input = Vec::new();
        layout.scatter_planes(batch.planes, self.planes, &mut input);
        let padded_rows = |image: usize| layout.ranks_of(image).flatten();

        // Forward, keeping what the backward pass reads.
        let stem = self.stem.forward(Some(layout), &input, 0, None);
        struct BlockCache {
            first: ConvNormCache,
            /// With global pooling: the pooled values, their argmax rows, and the block's
            /// activation after the pooled bias (the second convolution's input).
            pool: Option<(Vec<f32>, Vec<usize>, Vec<f32>)>,
            second: ConvNormCache,
        }
        let mut blocks: Vec<BlockCache> = Vec::with_capacity(self.tower.len());
        for (first, second, pool_layer) in &self.tower {
            let x = blocks.last().map(|b| &b.second.out).unwrap_or(&stem.out);
            let first_cache = first.forward(Some(layout), x, 0, None);
            let pool_cache = pool_layer.as_ref().map(|dense_layer| {
                let (pooled, argmax) = pool(&first_cache.out, c, n, cells, padded_rows);
                let bias = dense_layer.forward(n, &pooled);
                let mut y = first_cache.out.clone();
                for image in 0..n {
                    let b = &bias[image * c..(image + 1) * c];
                    for row in padded_rows(image) {
                        y[row * c..(row + 1) * c].iter_mut().zip(b).for_each(|(v, b)| *v = (*v + b).max(0.0));
                    }
                }
                (pooled, argmax, y)
            });
            let y = pool_cache.as_ref().map(|p| &p.2).unwrap_or(&first_cache.out);
            let second_cache = second.forward(Some(layout), y, 0, Some(x));
            blocks.push(BlockCache { first: first_cache, pool: pool_cache, second: second_cache });
        }
        let tower_out = blocks.last().map(|b| &b.second.out).unwrap_or(&stem.out);

        // The heads on the board cells only: [batch * cells, channels].
        let rows = n * cells;
        let mut board = Vec::with_capacity(rows * c);
        for image in 0..n {
            for run in layout.ranks_of(image) {
                board.extend_from_slice(&tower_out[run.start * c..run.end * c]);
            }
        }
        let dense_rows = |image: usize| image * cells..(image + 1) * cells;

        let pc = self.policy_conv.outputs;
        let policy = self.policy_conv.forward(None, &board, rows, None);
        let (policy_pooled, policy_argmax) = pool(&policy.out, pc, n, cells, dense_rows);
        let stop = self.policy_stop.forward(n, &policy_pooled);
        let mut cell_logits = vec![0.0; rows * 16];
        gemm(rows, 16, pc, dense(&policy.out, pc), dense(&self.policy_cells_weight, 16), &mut cell_logits, false);
        for row in cell_logits.chunks_exact_mut(16) {
            row.iter_mut().zip(&self.policy_cells_bias).for_each(|(v, b)| *v += b);
        }
        let actions = cells * 16 + 1;
        let mut logits = Vec::with_capacity(n * actions);
        for (image, s) in cell_logits.chunks_exact(cells * 16).zip(&stop) {
            logits.extend_from_slice(image);
            logits.push(*s);
        }

        let vc = self.value_conv.outputs;
        let value = self.value_conv.forward(None, &board, rows, None);
        let (value_pooled, value_argmax) = pool(&value.out, vc, n, cells, dense_rows);
        let mut hidden = self.value_hidden.forward(n, &value_pooled);
        hidden.iter_mut().for_each(|h| *h = h.max(0.0));
        let wdl_logits = self.value_wdl.forward(n, &hidden);
        let aux = self.value_aux.as_ref().map(|head| head.forward(n, &hidden));

        // Losses and their gradients with respect to the outputs.
        let scale = 1.0 / n as f32;
        let (policy_loss, dlogits) =
            softmax_cross_entropy(&logits, Some(batch.mask), batch.policy, actions, weights.policy * scale);
        let (value_loss, dwdl) = softmax_cross_entropy(&wdl_logits, None, batch.wdl, 3, weights.value * scale);
        let policy_loss = (policy_loss / n as f64) as f32;
        let value_loss = (value_loss / n as f64) as f32;
        let mut total = weights.policy * policy_loss + weights.value * value_loss;
        let mut losses = Losses {
            total: 0.0,
            policy: policy_loss,
            value: value_loss,
            material: None,
            plies_left: None,
            wdl_logits: wdl_logits.clone(),
        };
        let width = AUX_OUTPUTS.len();
        let daux = aux.as_ref().map(|aux| {
            let mut sums = [0.0f64; 2];
            let mut daux = vec![0.0; aux.len()];
            let term_weights = [weights.material, weights.plies_left];
            for ((a, t), d) in
                aux.chunks_exact(width).zip(batch.aux.chunks_exact(width)).zip(daux.chunks_exact_mut(width))
            {
                for j in 0..width {
                    let e = a[j] - t[j];
                    sums[j] += (e * e) as f64;
                    d[j] = 2.0 * e * scale * term_weights[j];
                }
            }
            let material = (sums[0] / n as f64) as f32;
            let plies = (sums[1] / n as f64) as f32;
            total += weights.material * material + weights.plies_left * plies;
            losses.material = Some(material);
            losses.plies_left = Some(plies);
            daux
        });
        losses.total = total;

        // Backward: the value head.
        let mut dhidden = self.value_wdl.backward(n, &hidden, &dwdl, &mut grads);
        if let (Some(head), Some(daux)) = (&self.value_aux, &daux) {
            let d = head.backward(n, &hidden, daux, &mut grads);
            dhidden.iter_mut().zip(&d).for_each(|(a, b)| *a += b);
        }
        dhidden.iter_mut().zip(&hidden).for_each(|(g, &h)| {
            if h <= 0.0 {
                *g = 0.0
            }
        });
        let dpooled = self.value_hidden.backward(n, &value_pooled, &dhidden, &mut grads);
        let mut dvalue = vec![0.0; rows * vc];
        pool_backward(&dpooled, &value_argmax, vc, cells, &mut dvalue, dense_rows);
        let dboard_value = self.value_conv.backward(None, &board, rows, value, dvalue, true, None, &mut grads);

        // The policy head.
        let mut dcells = Vec::with_capacity(rows * 16);
        let mut dstop = Vec::with_capacity(n);
        for image in dlogits.chunks_exact(actions) {
            dcells.extend_from_slice(&image[..cells * 16]);
            dstop.push(image[cells * 16]);
        }
        let mut dcells_weight = vec![0.0; pc * 16];
        gemm(pc, 16, rows, transposed(&policy.out, pc), dense(&dcells, 16), &mut dcells_weight, false);
        let mut dcells_bias = vec![0.0; 16];
        for row in dcells.chunks_exact(16) {
            dcells_bias.iter_mut().zip(row).for_each(|(b, g)| *b += g);
        }
        grads.push("policy_cells.weight".into(), vec![16, pc, 1, 1], kernel_oihw(&dcells_weight, pc, 16, 1));
        grads.push("policy_cells.bias".into(), vec![16], dcells_bias);
        let mut dpolicy = vec![0.0; rows * pc];
        gemm(rows, pc, 16, dense(&dcells, 16), transposed(&self.policy_cells_weight, 16), &mut dpolicy, false);
        let dpooled = self.policy_stop.backward(n, &policy_pooled, &dstop, &mut grads);
        pool_backward(&dpooled, &policy_argmax, pc, cells, &mut dpolicy, dense_rows);
        let dboard_policy = self.policy_conv.backward(None, &board, rows, policy, dpolicy, true, None, &mut grads);

        // Back onto the padded grid.
        let mut dx = vec![0.0; layout.len() * c];
        if let (Some(a), Some(b)) = (dboard_value, dboard_policy) {
            let mut row = 0;
            for image in 0..n {
                for run in layout.ranks_of(image) {
                    for cell in run {
                        let d = &mut dx[cell * c..(cell + 1) * c];
                        for ch in 0..c {
                            d[ch] = a[row * c + ch] + b[row * c + ch];
                        }
                        row += 1;
                    }
                }
            }
        }

        // The tower, last block first: each block's input is the output of the block before
        // (still in `blocks`) or of the stem.
        while let Some(BlockCache { first: first_cache, pool: pool_cache, second: second_cache }) = blocks.pop() {
            let (first, second, pool_layer) = &self.tower[blocks.len()];
            let x = blocks.last().map(|b| &b.second.out).unwrap_or(&stem.out);
            let mut dresidual = vec![0.0; layout.len() * c];
            let y = pool_cache.as_ref().map(|p| &p.2).unwrap_or(&first_cache.out);
            let mut dy = second
                .backward(Some(layout), y, 0, second_cache, dx, true, Some(&mut dresidual), &mut grads)
                .unwrap_or_default();
            if let (Some(layer), Some((pooled, argmax, y))) = (pool_layer, &pool_cache) {
                // y = relu(first's output + pooled bias): the ReLU's mask, then the bias's
                // gradient (a sum over each image's cells) and the pooling's.
                dy.iter_mut().zip(y).for_each(|(g, &v)| {
                    if v <= 0.0 {
                        *g = 0.0
                    }
                });
                let mut dbias = vec![0.0; n * c];
                for image in 0..n {
                    let d = &mut dbias[image * c..(image + 1) * c];
                    for row in padded_rows(image) {
                        d.iter_mut().zip(&dy[row * c..(row + 1) * c]).for_each(|(a, b)| *a += b);
                    }
                }
                let dpooled = layer.backward(n, pooled, &dbias, &mut grads);
                pool_backward(&dpooled, argmax, c, cells, &mut dy, padded_rows);
            }
            let dinput =
                first.backward(Some(layout), x, 0, first_cache, dy, true, None, &mut grads).unwrap_or_default();
            dx = dresidual;
            dx.iter_mut().zip(&dinput).for_each(|(a, b)| *a += b);
        }
        self.stem.backward(Some(layout), &input, 0, stem, dx, false, None, &mut grads);
        (losses, grads)
    }
}
