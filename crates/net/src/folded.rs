//! The network's inference on the CPU as a few matrix products: batch normalisation folded into
//! the convolutions (inference normalises with the running statistics, so a convolution and its
//! normalisation are one affine map), activations kept as `[cell, channel]` rows on a padded
//! grid ([`Padded`]) so that a 3x3 convolution over the whole batch is three `gemm` calls over
//! sliding windows (the crate burn's CPU backend itself multiplies with), bias, residual add and
//! ReLU applied in one pass while the product is still in cache, and each thread's buffers kept
//! from one call to the next.
//!
//! Why by hand: burn-flex 0.22.1 runs a convolution image by image with freshly zeroed buffers
//! and a single-threaded layout copy, and batch normalisation, ReLU and the residual add as
//! passes of their own; measured side by side it ran the 3x32 network at 0.31x onnxruntime's
//! pace (docs/BENCHMARKS.md), and the network is 98% of self-play time. burn keeps the model,
//! its training and every other device; this is [`Network::forward`](crate::Network::forward)
//! on burn's CPU device, and its outputs match burn's within 1e-4 (a test).

use std::cell::RefCell;
use std::collections::HashMap;

use crate::config::{GridShape, NetConfig};
use crate::error::NetError;
use crate::model::{Model, AUX_OUTPUTS};
use crate::network::{Precision, RawOutputs};
use crate::quantized::{quantize, QuantizedActivations, QuantizedConv};
use crate::rows::bias_residual_relu;
use burn::store::ModuleSnapshot;

/// Epsilon of the model's batch normalisation: burn's `BatchNormConfig` default, which
/// `Model::new` keeps. It is not stored with the weights, so it is restated here.
pub(crate) const BATCH_NORM_EPSILON: f64 = 1e-5;

/// One of the model's tensors as plain data.
struct Weight {
    shape: Vec<usize>,
    values: Vec<f32>,
}

/// The model's float tensors by their path in the module (`stem.conv.weight`, ...), the same
/// names as in a checkpoint's safetensors file.
pub(crate) struct Weights {
    by_name: HashMap<String, Weight>,
}

impl Weights {
    pub(crate) fn of(model: &Model) -> Result<Weights, NetError> {
        let mut by_name = HashMap::new();
        for tensor in model.collect(None, None, false) {
            if tensor.dtype != burn::tensor::DType::F32 {
                // The batch norm's `training` flag and other non-float state: not weights.
                continue;
            }
            let (name, _, shape, _, bytes) =
                tensor.into_parts().map_err(|e| NetError::Config(format!("reading the weights: {e}")))?;
            let values = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            by_name.insert(name, Weight { shape: shape.to_vec(), values });
        }
        Ok(Weights { by_name })
    }

    /// The tensor `name`, which must have shape `shape`.
    pub(crate) fn get(&self, name: &str, shape: &[usize]) -> Result<&[f32], NetError> {
        let weight =
            self.by_name.get(name).ok_or_else(|| NetError::Config(format!("the model has no tensor {name}")))?;
        if weight.shape != shape {
            return Err(NetError::Config(format!(
                "tensor {name} has shape {:?}, the architecture needs {shape:?}",
                weight.shape
            )));
        }
        Ok(&weight.values)
    }

    /// `ConvBn` `prefix` as one convolution: the kernel `[outputs, inputs, kernel, kernel]` and
    /// a bias. Inference normalisation is `gamma * (x - mean) / sqrt(var + eps) + beta` per
    /// output channel, so scaling the channel's kernel by `gamma / sqrt(var + eps)` and adding
    /// `beta - mean * gamma / sqrt(var + eps)` gives the same map (computed in f64).
    pub(crate) fn folded_conv_bn(
        &self,
        prefix: &str,
        inputs: usize,
        outputs: usize,
        kernel: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), NetError> {
        let weight = self.get(&format!("{prefix}.conv.weight"), &[outputs, inputs, kernel, kernel])?;
        let gamma = self.get(&format!("{prefix}.norm.gamma"), &[outputs])?;
        let beta = self.get(&format!("{prefix}.norm.beta"), &[outputs])?;
        let mean = self.get(&format!("{prefix}.norm.running_mean"), &[outputs])?;
        let var = self.get(&format!("{prefix}.norm.running_var"), &[outputs])?;
        let per_output = inputs * kernel * kernel;
        let mut folded = Vec::with_capacity(weight.len());
        let mut bias = Vec::with_capacity(outputs);
        for o in 0..outputs {
            let scale = gamma[o] as f64 / (var[o] as f64 + BATCH_NORM_EPSILON).sqrt();
            folded.extend(weight[o * per_output..(o + 1) * per_output].iter().map(|&w| (w as f64 * scale) as f32));
            bias.push((beta[o] as f64 - mean[o] as f64 * scale) as f32);
        }
        Ok((folded, bias))
    }
}

/// `dst[m, n] = lhs[m, k] * rhs[k, n]`, all row-major and dense, on the calling thread.
fn matmul(m: usize, n: usize, k: usize, lhs: &[f32], rhs: &[f32], dst: &mut [f32]) {
    matmul_rows(m, n, k, lhs, k, rhs, dst, false);
}

/// `dst[m, n] (+)= lhs[m, k] * rhs[k, n]` where row `i` of `lhs` starts at `i * lhs_stride`
/// (rows may overlap: a convolution's sliding windows), `rhs` and `dst` dense row-major; with
/// `accumulate` the product is added to `dst`.
#[allow(clippy::too_many_arguments)]
fn matmul_rows(
    m: usize,
    n: usize,
    k: usize,
    lhs: &[f32],
    lhs_stride: usize,
    rhs: &[f32],
    dst: &mut [f32],
    accumulate: bool,
) {
    gemm(m, n, k, (lhs, lhs_stride, 1), (rhs, n, 1), dst, accumulate);
}

/// `dst[m, n] (+)= sum_k lhs[m, k] * rhs[k, n]` with element `(r, c)` of a matrix at
/// `r * rows + c * cols` of its slice (any strides, rows of `lhs` may overlap), `dst` dense
/// row-major with `n` columns; with `accumulate` the product is added to `dst`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm(
    m: usize,
    n: usize,
    k: usize,
    lhs: (&[f32], usize, usize),
    rhs: (&[f32], usize, usize),
    dst: &mut [f32],
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(dst.len() >= m * n, "gemm destination");
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(0.0);
        }
        return;
    }
    let (lhs, lhs_rows, lhs_cols) = lhs;
    let (rhs, rhs_rows, rhs_cols) = rhs;
    assert!(lhs.len() > (m - 1) * lhs_rows + (k - 1) * lhs_cols, "gemm left operand");
    assert!(rhs.len() > (k - 1) * rhs_rows + (n - 1) * rhs_cols, "gemm right operand");
    // SAFETY: the assertions keep every element read (lhs[i * lhs_rows + j * lhs_cols],
    // rhs[j * rhs_rows + c * rhs_cols]) or written (dst[i * n + c]) for i < m, j < k, c < n
    // inside its slice; `dst` is borrowed mutably, so it overlaps neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.as_ptr(),
            lhs_cols as isize,
            lhs_rows as isize,
            rhs.as_ptr(),
            rhs_cols as isize,
            rhs_rows as isize,
            if accumulate { 1.0 } else { 0.0 },
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// burn's kernel layout `[outputs, inputs, kernel, kernel]` to `[(ky, kx, i), o]`.
pub(crate) fn kernel_rows(oihw: &[f32], inputs: usize, outputs: usize, kernel: usize) -> Vec<f32> {
    let mut weight = vec![0.0; kernel * kernel * inputs * outputs];
    for o in 0..outputs {
        for i in 0..inputs {
            for k in 0..kernel * kernel {
                weight[(k * inputs + i) * outputs + o] = oihw[(o * inputs + i) * kernel * kernel + k];
            }
        }
    }
    weight
}

/// A convolution with stride 1 and "same" zero padding, its bias folded in.
struct Conv {
    kernel: usize,
    inputs: usize,
    outputs: usize,
    /// `[kernel * kernel * inputs, outputs]`: row `(ky * kernel + kx) * inputs + i`, so that the
    /// rows of kernel row `ky` are one block that multiplies a window of three adjacent cells.
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Conv {
    /// From burn's kernel layout `[outputs, inputs, kernel, kernel]`.
    fn new(oihw: &[f32], bias: Vec<f32>, inputs: usize, outputs: usize, kernel: usize) -> Conv {
        let weight = kernel_rows(oihw, inputs, outputs, kernel);
        Conv { kernel, inputs, outputs, weight, bias }
    }

    fn folded(weights: &Weights, prefix: &str, inputs: usize, outputs: usize, kernel: usize) -> Result<Conv, NetError> {
        let (oihw, bias) = weights.folded_conv_bn(prefix, inputs, outputs, kernel)?;
        Ok(Conv::new(&oihw, bias, inputs, outputs, kernel))
    }

    /// The same 3x3 convolution with `i8` weights.
    fn quantized(&self) -> QuantizedConv {
        QuantizedConv::new(&self.weight, &self.bias, self.inputs, self.outputs)
    }

    /// A 1x1 convolution: `out = act(x W + bias)` on `rows` rows of `x`.
    fn forward_1x1(&self, rows: usize, x: &[f32], relu: bool, out: &mut Vec<f32>) {
        debug_assert_eq!(self.kernel, 1);
        out.resize(rows * self.outputs, 0.0);
        matmul(rows, self.outputs, self.inputs, x, &self.weight, out);
        bias_residual_relu(out, &self.bias, None, relu);
    }

    /// A 3x3 convolution on [`Padded`] activations: `out = relu(conv(x) + bias [+ residual])`,
    /// `out` padded as well (its margins zero). Each kernel row is one matrix product over all
    /// the cells at once: the three neighbours of a cell on one rank are adjacent in the padded
    /// layout, so its window is `3 * inputs` consecutive floats and the windows of consecutive
    /// cells are rows `inputs` floats apart (no im2col copy).
    fn forward_3x3(&self, layout: Padded, x: &[f32], residual: Option<&[f32]>, out: &mut Vec<f32>) {
        debug_assert_eq!(self.kernel, 3);
        let (i, o) = (self.inputs, self.outputs);
        let (first, end) = (layout.first_cell(), layout.end_cell());
        out.resize(layout.len() * o, 0.0);
        // Rows in chunks that keep the product's accumulator in cache over the three kernel rows.
        const CHUNK_CELLS: usize = 1024;
        let mut start = first;
        while start < end {
            let stop = (start + CHUNK_CELLS).min(end);
            let dst = &mut out[start * o..stop * o];
            for ky in 0..3 {
                // The window of cell q on kernel row ky starts at cell q + (ky - 1) * stride - 1.
                let window = start + ky * layout.stride - layout.stride - 1;
                let rhs = &self.weight[ky * 3 * i * o..(ky + 1) * 3 * i * o];
                matmul_rows(stop - start, o, 3 * i, &x[window * i..], i, rhs, dst, ky > 0);
            }
            bias_residual_relu(dst, &self.bias, residual.map(|r| &r[start * o..stop * o]), true);
            start = stop;
        }
        layout.clear_margins(out, o);
    }
}

/// Activations of a batch on a padded grid: every rank is `files + 1` cells (a zero cell to the
/// left of file 0, which is also the zero right of the rank before), every image is `ranks + 1`
/// ranks (a zero rank on top, which is also the zero rank below the image before), and a zero
/// rank and cell close the batch. Cell (image b, rank r, file f) is at
/// `(1 + b * (ranks + 1) + r) * (files + 1) + 1 + f`. A 3x3 window then never leaves the
/// buffer and reads zeros off the board, as "same" padding does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Padded {
    pub(crate) ranks: usize,
    pub(crate) files: usize,
    /// Cells per padded rank: `files + 1`.
    pub(crate) stride: usize,
    pub(crate) images: usize,
}

impl Padded {
    pub(crate) fn new(grid: GridShape, images: usize) -> Padded {
        Padded { ranks: grid.ranks, files: grid.files, stride: grid.files + 1, images }
    }

    /// Cells of the whole buffer.
    pub(crate) fn len(&self) -> usize {
        (self.images * (self.ranks + 1) + 2) * self.stride
    }

    pub(crate) fn cell(&self, image: usize, rank: usize, file: usize) -> usize {
        (1 + image * (self.ranks + 1) + rank) * self.stride + 1 + file
    }

    /// The first board cell; [`Padded::end_cell`] is one past the last.
    pub(crate) fn first_cell(&self) -> usize {
        self.cell(0, 0, 0)
    }

    pub(crate) fn end_cell(&self) -> usize {
        self.cell(self.images - 1, self.ranks - 1, self.files - 1) + 1
    }

    /// Whether padded cell `cell` is off every board: the zero cell left of each rank, the zero
    /// rank between images, and everything before the first board cell or after the last.
    pub(crate) fn is_margin(&self, cell: usize) -> bool {
        if cell < self.first_cell() || cell >= self.end_cell() {
            return true;
        }
        let (rank, file) = (cell / self.stride, cell % self.stride);
        file == 0 || (rank - 1) % (self.ranks + 1) == self.ranks
    }

    /// Zeroes the margin cells among `rows` (`channels` floats each), padded cells `first..`.
    pub(crate) fn clear_margin_rows(&self, first: usize, rows: &mut [f32], channels: usize) {
        for (offset, values) in rows.chunks_exact_mut(channels).enumerate() {
            if self.is_margin(first + offset) {
                values.fill(0.0);
            }
        }
    }

    /// Zeroes every cell of `x` (`channels` floats each) that is not on a board.
    pub(crate) fn clear_margins<T: Copy + Default>(&self, x: &mut [T], channels: usize) {
        let (first, end) = (self.first_cell(), self.end_cell());
        x[..first * channels].fill(T::default());
        x[end * channels..self.len() * channels].fill(T::default());
        for image in 0..self.images {
            for rank in 0..self.ranks {
                let pad = self.cell(image, rank, 0) - 1;
                if pad >= first {
                    x[pad * channels..(pad + 1) * channels].fill(T::default());
                }
            }
            if image + 1 < self.images {
                // The zero rank below this image (and its row's left cell, the next pad).
                let rank = self.cell(image + 1, 0, 0) - 1 - self.stride;
                x[rank * channels..(rank + self.stride) * channels].fill(T::default());
            }
        }
    }

    /// `[images, planes, ranks, files]` input as padded `[cell, planes]` rows in `out`
    /// (margins zero).
    pub(crate) fn scatter_planes(&self, input: &[f32], planes: usize, out: &mut Vec<f32>) {
        // Every board cell is written below: only the margins need clearing.
        out.resize(self.len() * planes, 0.0);
        self.clear_margins(out, planes);
        let cells = self.ranks * self.files;
        for (image, src) in input.chunks_exact(planes * cells).enumerate() {
            for rank in 0..self.ranks {
                let start = self.cell(image, rank, 0);
                let dst = &mut out[start * planes..(start + self.files) * planes];
                for (file, values) in dst.chunks_exact_mut(planes).enumerate() {
                    let at = rank * self.files + file;
                    for (plane, value) in values.iter_mut().enumerate() {
                        *value = src[plane * cells + at];
                    }
                }
            }
        }
    }

    /// The padded cells from `image`'s first board cell to its last: its ranks and the margin
    /// cells between them.
    pub(crate) fn image_span(&self, image: usize) -> std::ops::Range<usize> {
        self.cell(image, 0, 0)..self.cell(image, self.ranks - 1, self.files - 1) + 1
    }

    /// The board cells of `image` as ranges of padded cells, one per rank.
    pub(crate) fn ranks_of(&self, image: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        (0..self.ranks).map(move |rank| {
            let start = self.cell(image, rank, 0);
            start..start + self.files
        })
    }
}

/// burn's `Linear`: weight `[inputs, outputs]`, bias `[outputs]`.
struct Dense {
    inputs: usize,
    outputs: usize,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Dense {
    fn of(weights: &Weights, prefix: &str, inputs: usize, outputs: usize) -> Result<Dense, NetError> {
        Ok(Dense {
            inputs,
            outputs,
            weight: weights.get(&format!("{prefix}.weight"), &[inputs, outputs])?.to_vec(),
            bias: weights.get(&format!("{prefix}.bias"), &[outputs])?.to_vec(),
        })
    }

    /// `out = act(x W + b)` for `rows` rows of `x`.
    fn forward(&self, rows: usize, x: &[f32], relu: bool, out: &mut Vec<f32>) {
        out.resize(rows * self.outputs, 0.0);
        matmul(rows, self.outputs, self.inputs, x, &self.weight, out);
        bias_residual_relu(out, &self.bias, None, relu);
    }
}

/// Mean then max over `cells` cells given as runs of consecutive cells (`channels` floats
/// each) into `pooled` (`2 * channels`): the model's `global_pool` order.
fn pool_runs<'a>(pooled: &mut [f32], channels: usize, cells: usize, runs: impl Iterator<Item = &'a [f32]>) {
    let (mean, max) = pooled.split_at_mut(channels);
    mean.fill(0.0);
    max.fill(f32::NEG_INFINITY);
    for run in runs {
        for cell in run.chunks_exact(channels) {
            for ((s, m), &v) in mean.iter_mut().zip(max.iter_mut()).zip(cell) {
                *s += v;
                *m = m.max(v);
            }
        }
    }
    let scale = 1.0 / cells as f32;
    mean.iter_mut().for_each(|s| *s *= scale);
}

/// Global pooling of each image of padded `x`: `[images, 2 * channels]`.
fn global_pool(layout: Padded, channels: usize, x: &[f32], out: &mut Vec<f32>) {
    out.resize(layout.images * 2 * channels, 0.0);
    for (image, pooled) in out.chunks_exact_mut(2 * channels).enumerate() {
        let runs = layout.ranks_of(image).map(|cells| &x[cells.start * channels..cells.end * channels]);
        pool_runs(pooled, channels, layout.ranks * layout.files, runs);
    }
}

/// Global pooling of each image of unpadded `x` (`[images * cells, channels]`).
fn pool_dense(cells: usize, channels: usize, x: &[f32], out: &mut Vec<f32>) {
    let images = x.len() / (cells * channels);
    out.resize(images * 2 * channels, 0.0);
    for (image, pooled) in x.chunks_exact(cells * channels).zip(out.chunks_exact_mut(2 * channels)) {
        pool_runs(pooled, channels, cells, std::iter::once(image));
    }
}

struct Block {
    first: Conv,
    second: Conv,
    pool: Option<Dense>,
    /// The two convolutions in bytes ([`Precision::Int8`]).
    quantized: Option<(QuantizedConv, QuantizedConv)>,
}

/// Per-thread buffers, grown to the largest batch seen and kept.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    pooled: Vec<f32>,
    dense: Vec<f32>,
    head: Vec<f32>,
    /// [`Precision::Int8`]: a 3x3 convolution's input in bytes, and its `i32` sums.
    bytes: QuantizedActivations,
    sums: Vec<i32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The model with batch normalisation folded in, laid out for [`FoldedModel::forward`].
pub(crate) struct FoldedModel {
    grid: GridShape,
    planes: usize,
    channels: usize,
    stem: Conv,
    /// The stem in bytes ([`Precision::Int8`]): its input planes are indicators and fractions
    /// in `[0, 1]`, never negative.
    stem_quantized: Option<QuantizedConv>,
    tower: Vec<Block>,
    policy_conv: Conv,
    policy_cells: Conv,
    policy_stop: Dense,
    value_conv: Conv,
    value_hidden: Dense,
    value_wdl: Dense,
    value_aux: Option<Dense>,
}

impl std::fmt::Debug for FoldedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FoldedModel({} blocks x {} channels)", self.tower.len(), self.channels)
    }
}

impl FoldedModel {
    /// `model` (in inference mode) folded, for `planes` input planes on `grid`, its 3x3
    /// convolutions (stem and tower) run at `precision`.
    pub(crate) fn new(
        model: &Model,
        config: &NetConfig,
        planes: usize,
        grid: GridShape,
        precision: Precision,
    ) -> Result<FoldedModel, NetError> {
        let weights = Weights::of(model)?;
        let c = config.channels;
        let (pc, vc, vh) = (config.policy_channels, config.value_channels, config.value_hidden);
        let tower = (0..config.blocks)
            .map(|i| {
                let block = format!("tower.{i}");
                let first = Conv::folded(&weights, &format!("{block}.first"), c, c, 3)?;
                let second = Conv::folded(&weights, &format!("{block}.second"), c, c, 3)?;
                let quantized = (precision == Precision::Int8).then(|| (first.quantized(), second.quantized()));
                Ok(Block {
                    first,
                    second,
                    pool: match config.has_global_pool(i) {
                        true => Some(Dense::of(&weights, &format!("{block}.pool"), 2 * c, c)?),
                        false => None,
                    },
                    quantized,
                })
            })
            .collect::<Result<Vec<_>, NetError>>()?;
        let stem = Conv::folded(&weights, "stem", planes, c, 3)?;
        let cells_weight = weights.get("policy_cells.weight", &[16, pc, 1, 1])?;
        let cells_bias = weights.get("policy_cells.bias", &[16])?.to_vec();
        Ok(FoldedModel {
            grid,
            planes,
            channels: c,
            stem_quantized: (precision == Precision::Int8).then(|| stem.quantized()),
            stem,
            tower,
            policy_conv: Conv::folded(&weights, "policy_conv", c, pc, 1)?,
            policy_cells: Conv::new(cells_weight, cells_bias, pc, 16, 1),
            policy_stop: Dense::of(&weights, "policy_stop", 2 * pc, 1)?,
            value_conv: Conv::folded(&weights, "value_conv", c, vc, 1)?,
            value_hidden: Dense::of(&weights, "value_hidden", 2 * vc, vh)?,
            value_wdl: Dense::of(&weights, "value_wdl", vh, 3)?,
            value_aux: match config.aux_heads {
                true => Some(Dense::of(&weights, "value_aux", vh, AUX_OUTPUTS.len())?),
                false => None,
            },
        })
    }

    /// The network on `batch` positions of concatenated planes (`[batch, planes, ranks,
    /// files]`, checked by the caller): what `Model::forward` and a softmax of the value give.
    pub(crate) fn forward(&self, input: &[f32], batch: usize) -> RawOutputs {
        SCRATCH.with(|scratch| self.forward_with(&mut scratch.borrow_mut(), input, batch))
    }

    fn forward_with(&self, s: &mut Scratch, input: &[f32], batch: usize) -> RawOutputs {
        let grid = self.grid;
        let cells = grid.cells();
        let c = self.channels;
        let layout = Padded::new(grid, batch);

        layout.scatter_planes(input, self.planes, &mut s.z);
        match &self.stem_quantized {
            Some(stem) => {
                quantize(layout, self.planes, &s.z, &mut s.bytes);
                stem.forward(layout, &s.bytes, None, &mut s.sums, &mut s.x);
            }
            None => self.stem.forward_3x3(layout, &s.z, None, &mut s.x),
        }

        for block in &self.tower {
            match &block.quantized {
                Some((first, _)) => {
                    quantize(layout, c, &s.x, &mut s.bytes);
                    first.forward(layout, &s.bytes, None, &mut s.sums, &mut s.y);
                }
                None => block.first.forward_3x3(layout, &s.x, None, &mut s.y),
            }
            if let Some(pool) = &block.pool {
                global_pool(layout, c, &s.y, &mut s.pooled);
                pool.forward(batch, &s.pooled, false, &mut s.dense);
                for (image, bias) in s.dense.chunks_exact(c).enumerate() {
                    for cells in layout.ranks_of(image) {
                        bias_residual_relu(&mut s.y[cells.start * c..cells.end * c], bias, None, true);
                    }
                }
            }
            match &block.quantized {
                Some((_, second)) => {
                    quantize(layout, c, &s.y, &mut s.bytes);
                    second.forward(layout, &s.bytes, Some(&s.x), &mut s.sums, &mut s.z);
                }
                None => block.second.forward_3x3(layout, &s.y, Some(&s.x), &mut s.z),
            }
            std::mem::swap(&mut s.x, &mut s.z);
        }

        // The heads on the board cells only: [batch * cells, channels].
        s.y.clear();
        for image in 0..batch {
            for cells in layout.ranks_of(image) {
                s.y.extend_from_slice(&s.x[cells.start * c..cells.end * c]);
            }
        }
        let rows = batch * cells;

        // Policy: 16 logits per cell, already in action order (cell * 16 + k), then `stop`.
        let actions = cells * 16 + 1;
        self.policy_conv.forward_1x1(rows, &s.y, true, &mut s.x);
        pool_dense(cells, self.policy_conv.outputs, &s.x, &mut s.pooled);
        self.policy_stop.forward(batch, &s.pooled, false, &mut s.dense);
        self.policy_cells.forward_1x1(rows, &s.x, false, &mut s.z);
        let mut policy_logits = Vec::with_capacity(batch * actions);
        for (image, stop) in s.z.chunks_exact(cells * 16).zip(&s.dense) {
            policy_logits.extend_from_slice(image);
            policy_logits.push(*stop);
        }

        // Value: win/draw/loss probabilities and the auxiliary outputs from the hidden layer.
        self.value_conv.forward_1x1(rows, &s.y, true, &mut s.x);
        pool_dense(cells, self.value_conv.outputs, &s.x, &mut s.pooled);
        self.value_hidden.forward(batch, &s.pooled, true, &mut s.head);
        self.value_wdl.forward(batch, &s.head, false, &mut s.dense);
        let mut wdl = s.dense.clone();
        for logits in wdl.chunks_exact_mut(3) {
            let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            logits.iter_mut().for_each(|l| *l = (*l - max).exp());
            let sum: f32 = logits.iter().sum();
            logits.iter_mut().for_each(|l| *l /= sum);
        }
        let aux = match &self.value_aux {
            Some(head) => {
                let mut aux = Vec::new();
                head.forward(batch, &s.head, false, &mut aux);
                aux
            }
            None => Vec::new(),
        };
        RawOutputs { policy_logits, wdl, aux }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_3x3_convolution_is_a_same_padded_convolution_with_zero_margins() {
        // A 3x4 board, 2 input and 3 output channels, three images, against the definition.
        let grid = GridShape { ranks: 3, files: 4 };
        let (inputs, outputs, images) = (2, 3, 3);
        let oihw: Vec<f32> = (0..outputs * inputs * 9).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let bias = vec![0.5, -1.0, 2.0];
        let conv = Conv::new(&oihw, bias.clone(), inputs, outputs, 3);
        let value = |image: usize, r: isize, f: isize, i: usize| -> f32 {
            if (0..3).contains(&r) && (0..4).contains(&f) {
                ((image * 31 + (r * 4 + f) as usize * 5 + i * 3) % 13) as f32 - 6.0
            } else {
                0.0
            }
        };
        let layout = Padded::new(grid, images);
        let mut x = vec![0.0; layout.len() * inputs];
        for image in 0..images {
            for r in 0..3 {
                for f in 0..4 {
                    for i in 0..inputs {
                        x[layout.cell(image, r, f) * inputs + i] = value(image, r as isize, f as isize, i);
                    }
                }
            }
        }
        // Garbage where the output will go: every margin must come back zero.
        let mut out = vec![7.0; layout.len() * outputs];
        conv.forward_3x3(layout, &x, None, &mut out);
        let mut board = vec![false; layout.len()];
        for image in 0..images {
            for r in 0..3usize {
                for f in 0..4usize {
                    board[layout.cell(image, r, f)] = true;
                    for o in 0..outputs {
                        let mut want = bias[o];
                        for i in 0..inputs {
                            for ky in 0..3 {
                                for kx in 0..3 {
                                    let v = value(image, r as isize + ky as isize - 1, f as isize + kx as isize - 1, i);
                                    want += oihw[((o * inputs + i) * 3 + ky) * 3 + kx] * v;
                                }
                            }
                        }
                        let got = out[layout.cell(image, r, f) * outputs + o];
                        assert!(
                            (got - want.max(0.0)).abs() < 1e-4,
                            "image {image} cell {r},{f} output {o}: {got} vs {want}"
                        );
                    }
                }
            }
        }
        for (cell, on_board) in board.iter().enumerate() {
            if !on_board {
                assert_eq!(&out[cell * outputs..(cell + 1) * outputs], &[0.0; 3], "margin cell {cell}");
            }
        }
    }

    #[test]
    fn a_margin_cell_is_one_that_clear_margins_zeroes() {
        for (ranks, files, images) in [(3, 4, 3), (1, 1, 1), (16, 12, 2)] {
            let layout = Padded::new(GridShape { ranks, files }, images);
            let mut x = vec![1.0; layout.len()];
            layout.clear_margins(&mut x, 1);
            for (cell, &v) in x.iter().enumerate() {
                assert_eq!(layout.is_margin(cell), v == 0.0, "{ranks}x{files}, {images} images, cell {cell}");
            }
        }
    }

    #[test]
    fn global_pool_gives_mean_then_max_per_image() {
        let x = [1.0, -2.0, 3.0, 4.0, /* image 2 */ -1.0, 0.0, -3.0, 8.0];
        let mut out = Vec::new();
        pool_dense(2, 2, &x, &mut out);
        assert_eq!(out, vec![2.0, 1.0, 3.0, 4.0, -2.0, 4.0, -1.0, 8.0]);
    }
}
