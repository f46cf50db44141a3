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
use crate::model::{AUX_OUTPUTS, OWNERSHIP_CLASSES};
use crate::rows;
use rayon::prelude::*;

/// A dense row-major `[rows, cols]` matrix as a `gemm` operand.
fn dense(x: &[f32], cols: usize) -> (&[f32], usize, usize) {
    (x, cols, 1)
}

/// The transpose of a dense row-major `[rows, cols]` matrix as a `gemm` operand.
fn transposed(x: &[f32], cols: usize) -> (&[f32], usize, usize) {
    (x, 1, cols)
}

/// Rows of one parallel task in the row-wise passes. The partition depends on the batch alone,
/// never on the number of threads, so a step computes the same sums in the same order (and
/// gives the same result to the bit) on one thread or many.
const BLOCK_ROWS: usize = 512;

/// Cells of one task of a weight gradient (a sum over cells): each task sums its cells into a
/// kernel of its own and the kernels are added in order.
const SUM_CELLS: usize = 4096;

/// Activation buffers kept from one training step to the next. A step of the 3x32 network at
/// batch 128 fills about thirty buffers of 3.6 MB; freed and allocated afresh each step, the
/// allocator hands them back to the kernel and every page faults in again (a sixth of the step
/// measured). Every buffer a step takes from here it gives back when its last reader is done,
/// and nothing else is given, so the pool holds one step's worth (a test counts them).
#[derive(Default)]
pub(crate) struct Scratch {
    free: std::sync::Mutex<Vec<Vec<f32>>>,
}

impl Scratch {
    /// A zeroed buffer of `len` floats: the smallest free one that holds it, else a new one.
    fn zeros(&self, len: usize) -> Vec<f32> {
        let mut buffer = self.take(len);
        buffer.clear();
        buffer.resize(len, 0.0);
        buffer
    }

    /// The smallest free buffer that holds `len` floats, as it was given back, else an empty one.
    fn take(&self, len: usize) -> Vec<f32> {
        let taken = self.free.lock().ok().and_then(|mut free| {
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, v)| v.capacity() >= len)
                .min_by_key(|(_, v)| v.capacity())
                .map(|(at, _)| at)?;
            Some(free.swap_remove(best))
        });
        taken.unwrap_or_default()
    }

    /// A buffer of `len` floats holding whatever an earlier use left there (zero where new):
    /// for outputs that are written whole before they are read.
    fn reused(&self, len: usize) -> Vec<f32> {
        let mut buffer = self.take(len);
        buffer.resize(len, 0.0);
        buffer
    }

    /// A copy of `values` in a pooled buffer.
    fn copy_of(&self, values: &[f32]) -> Vec<f32> {
        let mut buffer = self.take(values.len());
        buffer.clear();
        buffer.extend_from_slice(values);
        buffer
    }

    /// Gives `buffer` back for later steps.
    fn give(&self, buffer: Vec<f32>) {
        if let Ok(mut free) = self.free.lock() {
            free.push(buffer);
        }
    }

    /// Buffers held for the next step.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.free.lock().map(|free| free.len()).unwrap_or(0)
    }
}

/// Batch statistics of one normalisation: mean and biased variance per channel (what burn's
/// training path returns and feeds its running averages), and `1 / sqrt(var + eps)`.
struct NormStats {
    mean: Vec<f32>,
    var: Vec<f32>,
    inv_std: Vec<f32>,
}

/// Adds per-block partial sums in block order, in f64.
fn add_in_order(partials: &[Vec<f32>], width: usize) -> Vec<f64> {
    let mut total = vec![0.0f64; width];
    for part in partials {
        total.iter_mut().zip(part).for_each(|(t, &p)| *t += p as f64);
    }
    total
}

/// Sums, then sums of squares, per channel of the rows of `block` (`channels` floats each), in
/// f32.
fn block_sums(block: &[f32], channels: usize) -> Vec<f32> {
    let mut sums = vec![0.0f32; 2 * channels];
    rows::sums_and_squares(block, &mut sums);
    sums
}

/// Mean and variance per channel of `rows` rows of `z` (`channels` floats each) that hold
/// `count` real values per channel; other rows are zero (the padded grid's margins), so
/// they drop out of both sums. Each block of rows sums in f32, the blocks' sums are added in
/// f64.
fn norm_stats(z: &[f32], channels: usize, count: usize) -> NormStats {
    let partials: Vec<Vec<f32>> =
        z.par_chunks(BLOCK_ROWS * channels).map(|block| block_sums(block, channels)).collect();
    stats_of_sums(&partials, channels, count)
}

/// [`NormStats`] from per-block [`block_sums`] added in block order.
fn stats_of_sums(partials: &[Vec<f32>], channels: usize, count: usize) -> NormStats {
    let sums = add_in_order(partials, 2 * channels);
    let (sum, squares) = sums.split_at(channels);
    let n = count as f64;
    let mut stats = NormStats { mean: Vec::new(), var: Vec::new(), inv_std: Vec::new() };
    for (s, q) in sum.iter().zip(squares) {
        let mean = s / n;
        let var = (q / n - mean * mean).max(0.0);
        stats.mean.push(mean as f32);
        stats.var.push(var as f32);
        stats.inv_std.push((1.0 / (var + BATCH_NORM_EPSILON).sqrt()) as f32);
    }
    stats
}

/// `out = relu(gamma * (z - mean) * inv_std + beta [+ residual])`, row by row; on a padded
/// `layout`, margin cells of `out` are zero.
fn norm_relu(
    z: &[f32],
    stats: &NormStats,
    gamma: &[f32],
    beta: &[f32],
    residual: Option<&[f32]>,
    layout: Option<Padded>,
    out: &mut [f32],
) {
    let channels = gamma.len();
    let scale: Vec<f32> = gamma.iter().zip(&stats.inv_std).map(|(g, s)| g * s).collect();
    let shift: Vec<f32> = beta.iter().zip(&stats.mean).zip(&scale).map(|((b, m), s)| b - m * s).collect();
    let block = BLOCK_ROWS * channels;
    let (scale, shift) = (&scale[..], &shift[..]);
    let clear_margins = |b: usize, out: &mut [f32]| {
        if let Some(layout) = layout {
            layout.clear_margin_rows(b * BLOCK_ROWS, out, channels);
        }
    };
    match residual {
        Some(residual) => {
            out.par_chunks_mut(block).zip(z.par_chunks(block)).zip(residual.par_chunks(block)).enumerate().for_each(
                |(b, ((out, z), residual))| {
                    rows::scale_shift_relu(out, z, Some(residual), scale, shift);
                    clear_margins(b, out);
                },
            )
        }
        None => out.par_chunks_mut(block).zip(z.par_chunks(block)).enumerate().for_each(|(b, (out, z))| {
            rows::scale_shift_relu(out, z, None, scale, shift);
            clear_margins(b, out);
        }),
    }
}

/// Pass one of [`norm_relu_backward`] on a block of rows: per channel, the sum of the gradient
/// `grad` masked by the ReLU (`out > 0`), then the sum of that times the normalised value
/// `(z - mean) * inv_std`.
fn masked_sums(grad: &[f32], out: &[f32], z: &[f32], stats: &NormStats) -> Vec<f32> {
    let mut sums = vec![0.0f32; 2 * stats.mean.len()];
    rows::masked_sums(grad, out, z, &stats.mean, &stats.inv_std, &mut sums);
    sums
}

/// The backward pass of [`norm_relu`] as one affine map per channel: with `v` the output's
/// gradient masked by the ReLU (`out > 0`), the gradient of `z` is `a * v + b * z + c`
/// ([`rows::norm_relu_grad`]), and `v` itself is the gradient that reaches a residual input.
struct NormGrad {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

impl NormGrad {
    /// Applies the map to rows of `grad` (with `out`, `z` the same rows of the forward pass),
    /// writing `v` to `residual` where given.
    fn apply(&self, grad: &mut [f32], residual: Option<&mut [f32]>, out: &[f32], z: &[f32]) {
        rows::norm_relu_grad(grad, residual, out, z, &self.a, &self.b, &self.c);
    }
}

/// Pass one of the backward of [`norm_relu`] given its `forward` pass: the gradients of gamma
/// and beta and the [`NormGrad`] map, from the output's gradient `grad` (`sums`: its
/// [`masked_sums`] per block of `BLOCK_ROWS` rows when the producer of `grad` took them
/// already, else taken here). Rows where `out` is zero (the ReLU's dead side, and every margin
/// of the padded grid) pass nothing back to the normalisation's statistics.
fn norm_relu_backward(
    grad: &[f32],
    forward: &ConvNormCache,
    gamma: &[f32],
    count: usize,
    sums: Option<Vec<Vec<f32>>>,
) -> (Vec<f32>, Vec<f32>, NormGrad) {
    let (out, z, stats) = (&forward.out[..], &forward.z[..], &forward.stats);
    let channels = gamma.len();
    let block = BLOCK_ROWS * channels;
    let (mean, inv_std) = (&stats.mean[..], &stats.inv_std[..]);
    let partials = match sums {
        Some(partials) => partials,
        None => grad
            .par_chunks(block)
            .zip(out.par_chunks(block).zip(z.par_chunks(block)))
            .map(|(grad, (out, z))| masked_sums(grad, out, z, stats))
            .collect(),
    };
    let sums = add_in_order(&partials, 2 * channels);
    let (sum, sum_xhat) = sums.split_at(channels);
    let n = count as f64;
    let mean_grad: Vec<f32> = sum.iter().map(|s| (s / n) as f32).collect();
    let mean_xhat_grad: Vec<f32> = sum_xhat.iter().map(|s| (s / n) as f32).collect();
    let scale: Vec<f32> = gamma.iter().zip(inv_std).map(|(g, s)| g * s).collect();
    // The gradient of z is `scale * (v - mean_grad - xhat * mean_xhat_grad)` with xhat = (z -
    // mean) * inv_std: `a * v + b * z + c`.
    let b: Vec<f32> = (0..channels).map(|c| -scale[c] * inv_std[c] * mean_xhat_grad[c]).collect();
    let c: Vec<f32> =
        (0..channels).map(|c| -scale[c] * (mean_grad[c] - mean[c] * inv_std[c] * mean_xhat_grad[c])).collect();
    let dgamma = sum_xhat.iter().map(|&s| s as f32).collect();
    let dbeta = sum.iter().map(|&s| s as f32).collect();
    (dgamma, dbeta, NormGrad { a: scale, b, c })
}

/// A 3x3 "same" convolution's operands on the padded grid: `src` (`inputs` floats per cell)
/// and `kernel` (`[(ky * 3 + kx) * inputs + i, outputs]`).
#[derive(Clone, Copy)]
struct Conv3x3<'a> {
    layout: Padded,
    src: &'a [f32],
    inputs: usize,
    kernel: &'a [f32],
    outputs: usize,
}

impl Conv3x3<'_> {
    /// `dst[q] (+)= src[q - 1 .. q + 2] (per kernel row's shift) . kernel` (added to `dst`
    /// with `accumulate`) for every padded cell `q` from the first board cell to the last, as
    /// three products (one per kernel row, over windows of three consecutive cells) per block
    /// of `BLOCK_ROWS` rows of `dst` (counted from row 0), the blocks on all threads; `dst`'s
    /// margins hold whatever the windows give (zero them after, or mask them). With
    /// `sums_for`, the [`masked_sums`] of each finished block of `dst` against that layer's
    /// forward pass, taken while the block is in cache (pass one of its
    /// [`norm_relu_backward`]).
    fn rows(self, dst: &mut [f32], accumulate: bool, sums_for: Option<&ConvNormCache>) -> Option<Vec<Vec<f32>>> {
        let block = BLOCK_ROWS * self.outputs;
        let sums = self.blocks(dst, accumulate, |b, dst| {
            sums_for.map(|next| {
                let rows = b * block..b * block + dst.len();
                masked_sums(dst, &next.out[rows.clone()], &next.z[rows], &next.stats)
            })
        });
        sums_for.map(|_| sums.into_iter().flatten().collect())
    }

    /// [`Conv3x3::rows`] into a whole padded `dst` whose margins come out zero, with the
    /// [`block_sums`] of each block of `BLOCK_ROWS` rows of `dst` (counted from row 0) taken
    /// while the block is in cache: the forward convolution, its margins and its
    /// normalisation's sums in one pass.
    fn with_sums(self, dst: &mut [f32]) -> Vec<Vec<f32>> {
        let o = self.outputs;
        self.blocks(dst, false, |b, dst| {
            self.layout.clear_margin_rows(b * BLOCK_ROWS, dst, o);
            block_sums(dst, o)
        })
    }

    /// The convolution of [`Conv3x3::rows`] on each block of `BLOCK_ROWS` rows of `dst`
    /// (counted from row 0, on all threads), then `finish(block index, block)` while the block
    /// is in cache.
    fn blocks<R: Send>(
        self,
        dst: &mut [f32],
        accumulate: bool,
        finish: impl Fn(usize, &mut [f32]) -> R + Sync,
    ) -> Vec<R> {
        let Conv3x3 { layout, src, inputs: i, kernel, outputs: o } = self;
        let (first, end) = (layout.first_cell(), layout.end_cell());
        dst[..layout.len() * o]
            .par_chunks_mut(BLOCK_ROWS * o)
            .enumerate()
            .map(|(b, dst)| {
                let start = b * BLOCK_ROWS;
                let rows = dst.len() / o;
                // The board rows of this block: [from, to) within the block.
                let from = first.clamp(start, start + rows) - start;
                let to = end.clamp(start, start + rows) - start;
                if from < to {
                    let product = &mut dst[from * o..to * o];
                    for ky in 0..3 {
                        let window = start + from + ky * layout.stride - layout.stride - 1;
                        let rhs = &kernel[ky * 3 * i * o..(ky + 1) * 3 * i * o];
                        let lhs = (&src[window * i..], i, 1);
                        gemm(to - from, o, 3 * i, lhs, dense(rhs, o), product, accumulate || ky > 0);
                    }
                }
                finish(b, dst)
            })
            .collect()
    }
}

/// The weight gradient of [`Conv3x3::rows`]: `dW[(ky, kx, i), o] = sum over cells q of
/// src[q + shift(ky, kx)][i] * grad[q][o]`, summed by blocks of cells on all threads. Each
/// kernel row's block is the product `grad^T [o, cells] x windows [cells, 3 * i]` (its
/// transpose: `gemm` runs this orientation about 8% faster, measured), transposed once after
/// the blocks are added.
fn conv_3x3_weight_grad(
    layout: Padded,
    src: &[f32],
    src_channels: usize,
    grad: &[f32],
    dst_channels: usize,
) -> Vec<f32> {
    let (i, o) = (src_channels, dst_channels);
    let (first, end) = (layout.first_cell(), layout.end_cell());
    let partials: Vec<Vec<f32>> = grad[first * o..end * o]
        .par_chunks(SUM_CELLS * o)
        .enumerate()
        .map(|(b, grad)| {
            let start = first + b * SUM_CELLS;
            let cells = grad.len() / o;
            // [ky][o][(kx, i)]
            let mut transposed_rows = vec![0.0; 9 * i * o];
            for (ky, part) in transposed_rows.chunks_exact_mut(3 * i * o).enumerate() {
                let window = start + ky * layout.stride - layout.stride - 1;
                gemm(o, 3 * i, cells, (grad, 1, o), (&src[window * i..], i, 1), part, false);
            }
            transposed_rows
        })
        .collect();
    let sum = sum_in_order(partials);
    let mut dweight = vec![0.0; 9 * i * o];
    for (ky, part) in sum.chunks_exact(3 * i * o).enumerate() {
        let rows = &mut dweight[ky * 3 * i * o..(ky + 1) * 3 * i * o];
        for (d, column) in part.chunks_exact(3 * i).enumerate() {
            for (r, &v) in column.iter().enumerate() {
                rows[r * o + d] = v;
            }
        }
    }
    dweight
}

/// `lhs^T rhs` for dense `[rows, m]` and `[rows, n]`: a sum over rows, by blocks on all threads.
fn transposed_product(rows: usize, m: usize, n: usize, lhs: &[f32], rhs: &[f32]) -> Vec<f32> {
    let partials: Vec<Vec<f32>> = lhs[..rows * m]
        .par_chunks(SUM_CELLS * m)
        .zip(rhs[..rows * n].par_chunks(SUM_CELLS * n))
        .map(|(lhs, rhs)| {
            let mut part = vec![0.0; m * n];
            gemm(m, n, lhs.len() / m, transposed(lhs, m), dense(rhs, n), &mut part, false);
            part
        })
        .collect();
    sum_in_order(partials)
}

/// `x . w` (or `x . w^T` with `transpose`) for dense `[rows, k]` `x`, by blocks of rows on all
/// threads: `w` is `[k, n]` (`[n, k]` transposed).
fn product_rows(rows: usize, n: usize, k: usize, x: &[f32], w: &[f32], transpose: bool, scratch: &Scratch) -> Vec<f32> {
    let mut y = scratch.reused(rows * n);
    product_rows_into(rows, n, k, x, w, transpose, &mut y, false);
    y
}

/// [`product_rows`] into `y` (`[rows, n]`), added to it with `accumulate`.
#[allow(clippy::too_many_arguments)]
fn product_rows_into(
    rows: usize,
    n: usize,
    k: usize,
    x: &[f32],
    w: &[f32],
    transpose: bool,
    y: &mut [f32],
    accumulate: bool,
) {
    y[..rows * n].par_chunks_mut(BLOCK_ROWS * n).zip(x[..rows * k].par_chunks(BLOCK_ROWS * k)).for_each(|(y, x)| {
        let rhs = if transpose { transposed(w, k) } else { dense(w, n) };
        gemm(x.len() / k, n, k, dense(x, k), rhs, y, accumulate);
    });
}

/// The element-wise sum of equally long vectors, added in order.
fn sum_in_order(partials: Vec<Vec<f32>>) -> Vec<f32> {
    let mut parts = partials.into_iter();
    let mut total = parts.next().unwrap_or_default();
    for part in parts {
        total.iter_mut().zip(&part).for_each(|(t, p)| *t += p);
    }
    total
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

    /// Forward on padded `x` (3x3) or dense rows (1x1), `count` real cells in all.
    fn forward(
        &self,
        layout: Option<Padded>,
        x: &[f32],
        rows: usize,
        residual: Option<&[f32]>,
        scratch: &Scratch,
    ) -> ConvNormCache {
        let o = self.outputs;
        let (z, stats) = match layout {
            Some(layout) => {
                // Every cell is written: the board by the convolution, the margins zero.
                let mut z = scratch.reused(layout.len() * o);
                let conv = Conv3x3 { layout, src: x, inputs: self.inputs, kernel: &self.weight, outputs: o };
                let sums = conv.with_sums(&mut z);
                let stats = stats_of_sums(&sums, o, layout.images * layout.ranks * layout.files);
                (z, stats)
            }
            None => {
                let z = product_rows(rows, o, self.inputs, x, &self.weight, false, scratch);
                let stats = norm_stats(&z, o, rows);
                (z, stats)
            }
        };
        let mut out = scratch.reused(z.len());
        norm_relu(&z, &stats, &self.gamma, &self.beta, residual, layout, &mut out);
        ConvNormCache { z, out, stats }
    }

    /// Backward: the [`Upstream`] gradient of the output is consumed; returns the gradient of
    /// the input `x` as [`Upstream::input_grad`] asks (padded like `x` for 3x3, margins
    /// unspecified) with its sums for [`Upstream::sums_for`], and with
    /// [`Upstream::keep_residual`] the gradient that reaches a residual input added before the
    /// ReLU; pushes the parameter gradients and batch statistics.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        layout: Option<Padded>,
        x: &[f32],
        rows: usize,
        cache: ConvNormCache,
        upstream: Upstream,
        out: &mut Gradients,
        scratch: &Scratch,
    ) -> Downstream {
        let Upstream { mut grad, grad_sums, input_grad, sums_for, keep_residual } = upstream;
        let (i, o, k) = (self.inputs, self.outputs, self.kernel);
        let count = match layout {
            Some(layout) => layout.images * layout.ranks * layout.files,
            None => rows,
        };
        let (dgamma, dbeta, norm) = norm_relu_backward(&grad, &cache, &self.gamma, count, grad_sums);
        // Pass two: the gradient of z, and the residual's.
        let mut residual = keep_residual.then(|| scratch.reused(grad.len()));
        let block = BLOCK_ROWS * o;
        let (fwd_out, fwd_z) = (&cache.out[..], &cache.z[..]);
        match residual.as_deref_mut() {
            Some(residual) => grad
                .par_chunks_mut(block)
                .zip(residual.par_chunks_mut(block))
                .zip(fwd_out.par_chunks(block).zip(fwd_z.par_chunks(block)))
                .for_each(|((grad, residual), (out, z))| norm.apply(grad, Some(residual), out, z)),
            None => grad
                .par_chunks_mut(block)
                .zip(fwd_out.par_chunks(block).zip(fwd_z.par_chunks(block)))
                .for_each(|(grad, (out, z))| norm.apply(grad, None, out, z)),
        }
        scratch.give(cache.z);
        scratch.give(cache.out);
        let mut dx_sums = None;
        let (dweight, dx) = match layout {
            Some(layout) => {
                layout.clear_margins(&mut grad, o);
                let dweight = conv_3x3_weight_grad(layout, x, i, &grad, o);
                let dx = match input_grad {
                    InputGrad::Skip => None,
                    input_grad => {
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
                        // Margins unspecified (see above): the board cells are all written.
                        let (mut dx, accumulate) = match input_grad {
                            InputGrad::AddTo(dx) => (dx, true),
                            _ => (scratch.reused(layout.len() * i), false),
                        };
                        let conv = Conv3x3 { layout, src: &grad, inputs: o, kernel: &flipped, outputs: i };
                        dx_sums = conv.rows(&mut dx, accumulate, sums_for);
                        Some(dx)
                    }
                };
                (dweight, dx)
            }
            None => {
                let dweight = transposed_product(rows, i, o, x, &grad);
                let dx = match input_grad {
                    InputGrad::Skip => None,
                    InputGrad::New => Some(product_rows(rows, i, o, &grad, &self.weight, true, scratch)),
                    InputGrad::AddTo(mut dx) => {
                        product_rows_into(rows, i, o, &grad, &self.weight, true, &mut dx, true);
                        Some(dx)
                    }
                };
                (dweight, dx)
            }
        };
        let p = &self.prefix;
        out.push(format!("{p}.conv.weight"), vec![o, i, k, k], kernel_oihw(&dweight, i, o, k));
        out.push(format!("{p}.norm.gamma"), vec![o], dgamma);
        out.push(format!("{p}.norm.beta"), vec![o], dbeta);
        out.norms.push(BatchNormUpdate { prefix: p.clone(), mean: cache.stats.mean, var: cache.stats.var });
        scratch.give(grad);
        Downstream { dx, dx_sums, residual }
    }
}

/// What [`ConvNorm::backward`] receives from the layers after it.
struct Upstream<'a> {
    /// The loss gradient of the layer's output.
    grad: Vec<f32>,
    /// Pass one of the normalisation's backward, when the producer of `grad` took it.
    grad_sums: Option<Vec<Vec<f32>>>,
    input_grad: InputGrad,
    /// The layer whose output is this one's input, when the input gradient goes straight to
    /// its backward pass: [`masked_sums`] against it are taken as the input gradient is made.
    sums_for: Option<&'a ConvNormCache>,
    /// Also return the gradient that reaches a residual input added before the ReLU.
    keep_residual: bool,
}

impl Upstream<'_> {
    fn of(grad: Vec<f32>, input_grad: InputGrad) -> Upstream<'static> {
        Upstream { grad, grad_sums: None, input_grad, sums_for: None, keep_residual: false }
    }
}

/// What [`ConvNorm::backward`] passes on.
struct Downstream {
    /// The gradient of the input (see [`InputGrad`]).
    dx: Option<Vec<f32>>,
    /// `dx`'s [`masked_sums`] against [`Upstream::sums_for`].
    dx_sums: Option<Vec<Vec<f32>>>,
    residual: Option<Vec<f32>>,
}

/// What [`ConvNorm::backward`] does with the gradient of its input.
enum InputGrad {
    /// Not wanted (the stem's input is the planes).
    Skip,
    /// In a new buffer.
    New,
    /// Added to this buffer (a residual's gradient), saving a pass and a buffer.
    AddTo(Vec<f32>),
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
/// `global_pool`), with the row of each maximum for the backward pass. `runs_of(image)` lists
/// an image's rows of `x` as runs of consecutive rows.
fn pool<I: Iterator<Item = std::ops::Range<usize>>>(
    x: &[f32],
    channels: usize,
    images: usize,
    cells: usize,
    runs_of: impl Fn(usize) -> I + Sync,
) -> (Vec<f32>, Vec<usize>) {
    // Rows are numbered in u32 by `rows::first_max_rows` (a batch of 128 is 28,288 rows).
    assert!(x.len() / channels.max(1) < u32::MAX as usize, "pooling over {} rows", x.len() / channels.max(1));
    let mut pooled = vec![0.0; images * 2 * channels];
    let mut argmax = vec![0usize; images * channels];
    pooled.par_chunks_mut(2 * channels).zip(argmax.par_chunks_mut(channels)).enumerate().for_each(
        |(image, (pooled, at))| {
            // Sums and maxima in vector lanes across channels, then the first row that holds
            // each maximum (an image's rows are a few kilobytes, still in cache).
            let (mean, max) = pooled.split_at_mut(channels);
            max.fill(f32::NEG_INFINITY);
            mean.fill(0.0);
            for run in runs_of(image) {
                rows::sum_and_max(&x[run.start * channels..run.end * channels], mean, max);
            }
            let mut first = vec![u32::MAX; channels];
            for run in runs_of(image) {
                let rows = &x[run.start * channels..run.end * channels];
                rows::first_max_rows(rows, run.start as u32, max, &mut first);
            }
            // Only NaN has no row (the step then fails on its loss): any row will do.
            let any = runs_of(image).flatten().next().unwrap_or(0);
            for (at, &first) in at.iter_mut().zip(&first) {
                *at = if first == u32::MAX { any } else { first as usize };
            }
            let scale = 1.0 / cells as f32;
            mean.iter_mut().for_each(|s| *s *= scale);
        },
    );
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
    /// `[batch * cells, 3]`: one-hot ownership targets (empty without the ownership head).
    pub(crate) ownership: &'a [f32],
}

/// The weights of the five loss terms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LossWeights {
    pub(crate) policy: f32,
    pub(crate) value: f32,
    pub(crate) material: f32,
    pub(crate) plies_left: f32,
    pub(crate) ownership: f32,
}

/// Losses of one batch (means over the batch) and the value logits.
pub(crate) struct Losses {
    pub(crate) total: f32,
    pub(crate) policy: f32,
    pub(crate) value: f32,
    pub(crate) material: Option<f32>,
    pub(crate) plies_left: Option<f32>,
    pub(crate) ownership: Option<f32>,
    pub(crate) wdl_logits: Vec<f32>,
}

/// Cross-entropy of `targets` against `log_softmax(logits + mask)` per row, and its gradient
/// with respect to the logits scaled by `scale`: `(softmax * sum(targets) - targets) * scale`.
/// A masked entry (mask -1e9: an illegal action, 3,000 of a Camelot row's 3,073) has
/// probability exactly 0 in f32 and f64 alike, so where its target is 0 too its gradient is 0
/// and its exponential is skipped: the loss and gradient are the same as over the whole row.
fn softmax_cross_entropy(
    logits: &[f32],
    mask: Option<&[f32]>,
    targets: &[f32],
    width: usize,
    scale: f32,
    scratch: &Scratch,
) -> (f64, Vec<f32>) {
    // Far below any logit: exp(masked - max) underflows to zero.
    const MASKED: f32 = -1e8;
    let mut grad = scratch.reused(logits.len());
    let losses: Vec<f64> = grad
        .par_chunks_mut(width)
        .zip(logits.par_chunks(width).zip(targets.par_chunks(width)))
        .enumerate()
        .map(|(row, (g, (l, t)))| {
            // The live entries (legal, or with target mass) with their masked logits; every
            // other entry has probability and target 0, so gradient 0, and adds nothing to the
            // maximum, the sums or the loss (a Camelot row: about 30 live of 3,073).
            let mask = mask.map(|mask| &mask[row * width..(row + 1) * width]);
            let live: Vec<(usize, f32)> = (0..width)
                .filter_map(|k| {
                    let v = l[k] + mask.map_or(0.0, |m| m[k]);
                    (v > MASKED || t[k] != 0.0).then_some((k, v))
                })
                .collect();
            let max = live.iter().fold(f32::NEG_INFINITY, |m, &(_, v)| m.max(v));
            let sum: f64 = live.iter().map(|&(_, v)| ((v - max) as f64).exp()).sum();
            let log_sum = sum.ln() as f32 + max;
            let total: f32 = live.iter().map(|&(k, _)| t[k]).sum();
            g.fill(0.0);
            let mut loss = 0.0f64;
            for &(k, v) in &live {
                let log_p = v - log_sum;
                if t[k] != 0.0 {
                    loss -= (t[k] * log_p) as f64;
                }
                g[k] = (log_p.exp() * total - t[k]) * scale;
            }
            loss
        })
        .collect();
    (losses.iter().sum(), grad)
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
    /// The ownership head's 1x1 convolution as `[value channels, 3]` rows, and its bias.
    value_ownership: Option<(Vec<f32>, Vec<f32>)>,
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
            value_ownership: match config.ownership {
                true => Some((
                    kernel_rows(
                        weights.get("value_ownership.weight", &[OWNERSHIP_CLASSES, vc, 1, 1])?,
                        vc,
                        OWNERSHIP_CLASSES,
                        1,
                    ),
                    weights.get("value_ownership.bias", &[OWNERSHIP_CLASSES])?.to_vec(),
                )),
                false => None,
            },
        })
    }

    /// The losses of `batch` and the gradient of the weighted total with respect to every
    /// parameter, as burn's training step computes them (batch statistics in every
    /// normalisation).
    pub(crate) fn loss_and_gradients(
        &self,
        batch: &Batch,
        weights: LossWeights,
        scratch: &Scratch,
    ) -> (Losses, Gradients) {
        let n = batch.size;
        let grid = self.grid;
        let cells = grid.cells();
        let c = self.channels;
        let layout = Padded::new(grid, n);
        let mut grads = Gradients::default();

        let mut input = scratch.reused(layout.len() * self.planes);
        layout.scatter_planes(batch.planes, self.planes, &mut input);
        let padded_rows = |image: usize| layout.ranks_of(image).flatten();

        // Forward, keeping what the backward pass reads.
        let stem = self.stem.forward(Some(layout), &input, 0, None, scratch);
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
            let first_cache = first.forward(Some(layout), x, 0, None, scratch);
            let pool_cache = pool_layer.as_ref().map(|dense_layer| {
                let (pooled, argmax) = pool(&first_cache.out, c, n, cells, |image| layout.ranks_of(image));
                let bias = dense_layer.forward(n, &pooled);
                let mut y = scratch.copy_of(&first_cache.out);
                for image in 0..n {
                    let b = &bias[image * c..(image + 1) * c];
                    for row in padded_rows(image) {
                        y[row * c..(row + 1) * c].iter_mut().zip(b).for_each(|(v, b)| *v = (*v + b).max(0.0));
                    }
                }
                (pooled, argmax, y)
            });
            let y = pool_cache.as_ref().map(|p| &p.2).unwrap_or(&first_cache.out);
            let second_cache = second.forward(Some(layout), y, 0, Some(x), scratch);
            blocks.push(BlockCache { first: first_cache, pool: pool_cache, second: second_cache });
        }
        let tower_out = blocks.last().map(|b| &b.second.out).unwrap_or(&stem.out);

        // The heads on the board cells only: [batch * cells, channels].
        let rows = n * cells;
        let mut board = scratch.take(rows * c);
        board.clear();
        for image in 0..n {
            for run in layout.ranks_of(image) {
                board.extend_from_slice(&tower_out[run.start * c..run.end * c]);
            }
        }
        let dense_rows = |image: usize| image * cells..(image + 1) * cells;

        let pc = self.policy_conv.outputs;
        let policy = self.policy_conv.forward(None, &board, rows, None, scratch);
        let (policy_pooled, policy_argmax) =
            pool(&policy.out, pc, n, cells, |image| std::iter::once(dense_rows(image)));
        let stop = self.policy_stop.forward(n, &policy_pooled);
        let mut cell_logits = product_rows(rows, 16, pc, &policy.out, &self.policy_cells_weight, false, scratch);
        for row in cell_logits.chunks_exact_mut(16) {
            row.iter_mut().zip(&self.policy_cells_bias).for_each(|(v, b)| *v += b);
        }
        let actions = cells * 16 + 1;
        let mut logits = scratch.take(n * actions);
        logits.clear();
        for (image, s) in cell_logits.chunks_exact(cells * 16).zip(&stop) {
            logits.extend_from_slice(image);
            logits.push(*s);
        }
        scratch.give(cell_logits);

        let vc = self.value_conv.outputs;
        let value = self.value_conv.forward(None, &board, rows, None, scratch);
        let (value_pooled, value_argmax) = pool(&value.out, vc, n, cells, |image| std::iter::once(dense_rows(image)));
        let mut hidden = self.value_hidden.forward(n, &value_pooled);
        hidden.iter_mut().for_each(|h| *h = h.max(0.0));
        let wdl_logits = self.value_wdl.forward(n, &hidden);
        let aux = self.value_aux.as_ref().map(|head| head.forward(n, &hidden));

        // Losses and their gradients with respect to the outputs.
        let scale = 1.0 / n as f32;
        let (policy_loss, dlogits) =
            softmax_cross_entropy(&logits, Some(batch.mask), batch.policy, actions, weights.policy * scale, scratch);
        scratch.give(logits);
        let (value_loss, dwdl) = softmax_cross_entropy(&wdl_logits, None, batch.wdl, 3, weights.value * scale, scratch);
        let policy_loss = (policy_loss / n as f64) as f32;
        let value_loss = (value_loss / n as f64) as f32;
        let mut total = weights.policy * policy_loss + weights.value * value_loss;
        let mut losses = Losses {
            total: 0.0,
            policy: policy_loss,
            value: value_loss,
            material: None,
            plies_left: None,
            ownership: None,
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
        // The ownership head: three logits per cell from the value head's convolution, a
        // cross-entropy per cell averaged over every cell of the batch.
        let ownership =
            self.value_ownership.as_ref().filter(|_| batch.ownership.len() == rows * OWNERSHIP_CLASSES).map(
                |(weight, bias)| {
                    let mut logits = product_rows(rows, OWNERSHIP_CLASSES, vc, &value.out, weight, false, scratch);
                    for row in logits.chunks_exact_mut(OWNERSHIP_CLASSES) {
                        row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
                    }
                    let cell_scale = weights.ownership / rows as f32;
                    let (loss, dlogits) =
                        softmax_cross_entropy(&logits, None, batch.ownership, OWNERSHIP_CLASSES, cell_scale, scratch);
                    scratch.give(logits);
                    let loss = (loss / rows as f64) as f32;
                    total += weights.ownership * loss;
                    losses.ownership = Some(loss);
                    (weight, dlogits)
                },
            );
        losses.total = total;

        // Backward: the value head.
        let mut dhidden = self.value_wdl.backward(n, &hidden, &dwdl, &mut grads);
        scratch.give(dwdl);
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
        let mut dvalue = match &ownership {
            Some((weight, dlogits)) => {
                let dweight = transposed_product(rows, vc, OWNERSHIP_CLASSES, &value.out, dlogits);
                let mut dbias = vec![0.0; OWNERSHIP_CLASSES];
                for row in dlogits.chunks_exact(OWNERSHIP_CLASSES) {
                    dbias.iter_mut().zip(row).for_each(|(b, g)| *b += g);
                }
                grads.push(
                    "value_ownership.weight".into(),
                    vec![OWNERSHIP_CLASSES, vc, 1, 1],
                    kernel_oihw(&dweight, vc, OWNERSHIP_CLASSES, 1),
                );
                grads.push("value_ownership.bias".into(), vec![OWNERSHIP_CLASSES], dbias);
                product_rows(rows, vc, OWNERSHIP_CLASSES, dlogits, weight, true, scratch)
            }
            None => scratch.zeros(rows * vc),
        };
        if let Some((_, dlogits)) = ownership {
            scratch.give(dlogits);
        }
        pool_backward(&dpooled, &value_argmax, vc, cells, &mut dvalue, dense_rows);
        let dboard_value = self
            .value_conv
            .backward(None, &board, rows, value, Upstream::of(dvalue, InputGrad::New), &mut grads, scratch)
            .dx;

        // The policy head.
        let mut dcells = scratch.take(rows * 16);
        dcells.clear();
        let mut dstop = Vec::with_capacity(n);
        for image in dlogits.chunks_exact(actions) {
            dcells.extend_from_slice(&image[..cells * 16]);
            dstop.push(image[cells * 16]);
        }
        scratch.give(dlogits);
        let dcells_weight = transposed_product(rows, pc, 16, &policy.out, &dcells);
        let mut dcells_bias = vec![0.0; 16];
        for row in dcells.chunks_exact(16) {
            dcells_bias.iter_mut().zip(row).for_each(|(b, g)| *b += g);
        }
        grads.push("policy_cells.weight".into(), vec![16, pc, 1, 1], kernel_oihw(&dcells_weight, pc, 16, 1));
        grads.push("policy_cells.bias".into(), vec![16], dcells_bias);
        let mut dpolicy = product_rows(rows, pc, 16, &dcells, &self.policy_cells_weight, true, scratch);
        scratch.give(dcells);
        let dpooled = self.policy_stop.backward(n, &policy_pooled, &dstop, &mut grads);
        pool_backward(&dpooled, &policy_argmax, pc, cells, &mut dpolicy, dense_rows);
        // The board's gradient: the value head's plus the policy head's.
        let input_grad = match dboard_value {
            Some(dboard) => InputGrad::AddTo(dboard),
            None => InputGrad::New,
        };
        let dboard = self
            .policy_conv
            .backward(None, &board, rows, policy, Upstream::of(dpolicy, input_grad), &mut grads, scratch)
            .dx;

        // Back onto the padded grid.
        let mut dx = scratch.zeros(layout.len() * c);
        if let Some(dboard) = dboard {
            let mut at = 0;
            for image in 0..n {
                for run in layout.ranks_of(image) {
                    let len = run.len() * c;
                    dx[run.start * c..run.end * c].copy_from_slice(&dboard[at..at + len]);
                    at += len;
                }
            }
            scratch.give(dboard);
        }
        scratch.give(board);

        // The tower, last block first: each block's input is the output of the block before
        // (still in `blocks`) or of the stem.
        // `dx_sums`: pass one of the next normalisation's backward, taken by the convolution
        // that made `dx` (none for the heads' gradient, which arrives as a sum of two).
        let mut dx_sums = None;
        while let Some(BlockCache { first: first_cache, pool: pool_cache, second: second_cache }) = blocks.pop() {
            let (first, second, pool_layer) = &self.tower[blocks.len()];
            let x_cache = blocks.last().map(|b| &b.second).unwrap_or(&stem);
            let y = pool_cache.as_ref().map(|p| &p.2).unwrap_or(&first_cache.out);
            // Without a pooling bias between them, the second convolution's input gradient is
            // the first one's output gradient as it stands.
            let upstream = Upstream {
                grad: dx,
                grad_sums: dx_sums.take(),
                input_grad: InputGrad::New,
                sums_for: pool_cache.is_none().then_some(&first_cache),
                keep_residual: true,
            };
            let down = second.backward(Some(layout), y, 0, second_cache, upstream, &mut grads, scratch);
            let (mut dy, dresidual) = (down.dx.unwrap_or_default(), down.residual.unwrap_or_default());
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
            // The block's input gradient: the residual's plus the first convolution's.
            let upstream = Upstream {
                grad: dy,
                grad_sums: down.dx_sums,
                input_grad: InputGrad::AddTo(dresidual),
                sums_for: Some(x_cache),
                keep_residual: false,
            };
            let down = first.backward(Some(layout), &x_cache.out, 0, first_cache, upstream, &mut grads, scratch);
            dx = down.dx.unwrap_or_default();
            dx_sums = down.dx_sums;
            if let Some((_, _, y)) = pool_cache {
                scratch.give(y);
            }
        }
        let upstream = Upstream { grad_sums: dx_sums, ..Upstream::of(dx, InputGrad::Skip) };
        self.stem.backward(Some(layout), &input, 0, stem, upstream, &mut grads, scratch);
        scratch.give(input);
        (losses, grads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_pool_holds_one_steps_buffers_and_no_more() {
        // Every buffer a step takes it gives back and it gives back nothing else: after the
        // first step the pool holds the same number of buffers step after step (a buffer
        // given but never taken would grow it by one a step, without bound over a run). The
        // ownership head takes and gives buffers of its own.
        let grid = GridShape { ranks: 6, files: 5 };
        let mut config = NetConfig::new(2, 8);
        config.global_pool_every = 1;
        config.ownership = true;
        let device = crate::parse_device("cpu").expect("cpu");
        let network = crate::Network::new(&config, grid, &device, 1).expect("network");
        let weights = Weights::of(network.model()).expect("weights");
        let planes = camelot_game::PLANES;
        let model = TrainingModel::new(&weights, &config, planes, grid).expect("model");
        let n = 3;
        let actions = grid.cells() * 16 + 1;
        let inputs: Vec<f32> = (0..n * planes * grid.cells()).map(|i| ((i * 7) % 5) as f32 * 0.25).collect();
        let mask = vec![0.0; n * actions];
        let policy = vec![1.0 / actions as f32; n * actions];
        let wdl: Vec<f32> = (0..n).flat_map(|_| [1.0, 0.0, 0.0]).collect();
        let aux: Vec<f32> = (0..n).flat_map(|_| [0.5, 0.1]).collect();
        let ownership: Vec<f32> = (0..n * grid.cells()).flat_map(|cell| [0.0, (cell % 2) as f32, 0.0]).collect();
        let batch = Batch {
            size: n,
            planes: &inputs,
            mask: &mask,
            policy: &policy,
            wdl: &wdl,
            aux: &aux,
            ownership: &ownership,
        };
        let weights = LossWeights { policy: 1.0, value: 1.0, material: 1.0, plies_left: 1.0, ownership: 1.0 };
        let scratch = Scratch::default();
        let mut held = Vec::new();
        for _ in 0..4 {
            let (losses, _) = model.loss_and_gradients(&batch, weights, &scratch);
            assert!(losses.total.is_finite() && losses.ownership.is_some_and(f32::is_finite));
            held.push(scratch.held());
        }
        assert!(held[0] > 0, "{held:?}");
        assert!(held.iter().all(|&h| h == held[0]), "buffers held after each step: {held:?}");
    }
}
