//! The element-wise passes over `[cell, channel]` rows that run between the matrix products of
//! the CPU network (normalisation, ReLU, residual add, their gradients, the statistics' sums),
//! compiled for AVX-512 and AVX2 as well as the baseline and chosen at run time
//! ([`multiversion`]). The crate is built for plain x86-64, whose 4-wide SSE made these passes
//! a third of a training step (measured: docs/BENCHMARKS.md). Every lane holds one channel and
//! sums over rows in row order, so every version gives the same bits.
//!
//! Each function takes rows of `channels = params.len()` floats; the loops index slices cut to
//! that length, which lets the compiler drop bounds checks and keep them vectorised.

use multiversion::multiversion;

/// `x = act(x + bias [+ residual])` per row (`act` ReLU or identity).
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn bias_residual_relu(x: &mut [f32], bias: &[f32], residual: Option<&[f32]>, relu: bool) {
    let n = bias.len();
    match (residual, relu) {
        (Some(residual), true) => {
            for (row, res) in x.chunks_exact_mut(n).zip(residual.chunks_exact(n)) {
                let (row, res) = (&mut row[..n], &res[..n]);
                for c in 0..n {
                    row[c] = (row[c] + bias[c] + res[c]).max(0.0);
                }
            }
        }
        (Some(residual), false) => {
            for (row, res) in x.chunks_exact_mut(n).zip(residual.chunks_exact(n)) {
                let (row, res) = (&mut row[..n], &res[..n]);
                for c in 0..n {
                    row[c] = row[c] + bias[c] + res[c];
                }
            }
        }
        (None, true) => {
            for row in x.chunks_exact_mut(n) {
                let row = &mut row[..n];
                for c in 0..n {
                    row[c] = (row[c] + bias[c]).max(0.0);
                }
            }
        }
        (None, false) => {
            for row in x.chunks_exact_mut(n) {
                let row = &mut row[..n];
                for c in 0..n {
                    row[c] += bias[c];
                }
            }
        }
    }
}

/// `out = relu(z * scale + shift [+ residual])` per row.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn scale_shift_relu(out: &mut [f32], z: &[f32], residual: Option<&[f32]>, scale: &[f32], shift: &[f32]) {
    let n = scale.len();
    let shift = &shift[..n];
    match residual {
        Some(residual) => {
            for ((o, zr), r) in out.chunks_exact_mut(n).zip(z.chunks_exact(n)).zip(residual.chunks_exact(n)) {
                let (o, zr, r) = (&mut o[..n], &zr[..n], &r[..n]);
                for c in 0..n {
                    o[c] = (zr[c] * scale[c] + shift[c] + r[c]).max(0.0);
                }
            }
        }
        None => {
            for (o, zr) in out.chunks_exact_mut(n).zip(z.chunks_exact(n)) {
                let (o, zr) = (&mut o[..n], &zr[..n]);
                for c in 0..n {
                    o[c] = (zr[c] * scale[c] + shift[c]).max(0.0);
                }
            }
        }
    }
}

/// Per channel, the sum and then the sum of squares of `block`'s rows (`sums`: `2 * channels`,
/// added to).
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn sums_and_squares(block: &[f32], sums: &mut [f32]) {
    let n = sums.len() / 2;
    let (sum, squares) = sums.split_at_mut(n);
    let squares = &mut squares[..n];
    for row in block.chunks_exact(n) {
        let row = &row[..n];
        for c in 0..n {
            sum[c] += row[c];
            squares[c] += row[c] * row[c];
        }
    }
}

/// Per channel, the sum of `grad` masked by `out > 0`, then the sum of that times
/// `(z - mean) * inv_std` (`sums`: `2 * channels`, added to).
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn masked_sums(grad: &[f32], out: &[f32], z: &[f32], mean: &[f32], inv_std: &[f32], sums: &mut [f32]) {
    let n = mean.len();
    let inv_std = &inv_std[..n];
    let (sum, sum_xhat) = sums.split_at_mut(n);
    let sum_xhat = &mut sum_xhat[..n];
    for ((g, o), zr) in grad.chunks_exact(n).zip(out.chunks_exact(n)).zip(z.chunks_exact(n)) {
        let (g, o, zr) = (&g[..n], &o[..n], &zr[..n]);
        for c in 0..n {
            let v = if o[c] > 0.0 { g[c] } else { 0.0 };
            sum[c] += v;
            sum_xhat[c] += v * ((zr[c] - mean[c]) * inv_std[c]);
        }
    }
}

/// The gradient through normalisation and ReLU: with `v = grad` masked by `out > 0`, `grad = a
/// * v + b * z + c` per channel, and `residual = v` where given.
#[allow(clippy::too_many_arguments)]
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn norm_relu_grad(
    grad: &mut [f32],
    residual: Option<&mut [f32]>,
    out: &[f32],
    z: &[f32],
    a: &[f32],
    b: &[f32],
    c: &[f32],
) {
    let n = a.len();
    let (b, c) = (&b[..n], &c[..n]);
    match residual {
        Some(residual) => {
            for (((g, r), o), zr) in grad
                .chunks_exact_mut(n)
                .zip(residual.chunks_exact_mut(n))
                .zip(out.chunks_exact(n))
                .zip(z.chunks_exact(n))
            {
                let (g, r, o, zr) = (&mut g[..n], &mut r[..n], &o[..n], &zr[..n]);
                for k in 0..n {
                    let v = if o[k] > 0.0 { g[k] } else { 0.0 };
                    r[k] = v;
                    g[k] = a[k] * v + b[k] * zr[k] + c[k];
                }
            }
        }
        None => {
            for ((g, o), zr) in grad.chunks_exact_mut(n).zip(out.chunks_exact(n)).zip(z.chunks_exact(n)) {
                let (g, o, zr) = (&mut g[..n], &o[..n], &zr[..n]);
                for k in 0..n {
                    let v = if o[k] > 0.0 { g[k] } else { 0.0 };
                    g[k] = a[k] * v + b[k] * zr[k] + c[k];
                }
            }
        }
    }
}

/// Per channel, the sum and the maximum of `rows` (`sum`, `max`: `channels`, folded into).
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn sum_and_max(rows: &[f32], sum: &mut [f32], max: &mut [f32]) {
    let n = sum.len();
    let max = &mut max[..n];
    for row in rows.chunks_exact(n) {
        let row = &row[..n];
        for c in 0..n {
            sum[c] += row[c];
            max[c] = max[c].max(row[c]);
        }
    }
}

/// For each channel, the lower of `at` and the first of `rows` (numbered from `first_row`)
/// whose value equals `max` (`at`: `channels`, `u32::MAX` for none yet): with the runs of an
/// image visited in order, the first row holding each maximum.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
pub(crate) fn first_max_rows(rows: &[f32], first_row: u32, max: &[f32], at: &mut [u32]) {
    let n = max.len();
    let at = &mut at[..n];
    for (offset, row) in rows.chunks_exact(n).enumerate() {
        let row = &row[..n];
        let index = first_row + offset as u32;
        for c in 0..n {
            let candidate = if row[c] == max[c] { index } else { u32::MAX };
            at[c] = at[c].min(candidate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1), with exact zeros and repeats (ties for the maxima).
    fn values(len: usize, seed: usize) -> Vec<f32> {
        (0..len).map(|i| (((i * 37 + seed * 101) % 23) as f32 - 11.0) / 11.0).collect()
    }

    // Every kernel against the plain loop it stands for, on channel counts that are not a
    // multiple of any vector width, to the bit (lanes never change an order of summation).
    #[test]
    fn each_row_kernel_gives_the_plain_loops_bits() {
        for channels in [1, 5, 16, 37] {
            let rows = 9;
            let len = rows * channels;
            let (x, y, z) = (values(len, 1), values(len, 2), values(len, 3));
            let (p, q, r) = (values(channels, 4), values(channels, 5), values(channels, 6));

            for (residual, relu) in [(None, true), (None, false), (Some(&y[..]), true), (Some(&y[..]), false)] {
                let mut got = x.clone();
                bias_residual_relu(&mut got, &p, residual, relu);
                let want: Vec<f32> = (0..len)
                    .map(|k| {
                        let s = x[k] + p[k % channels] + residual.map_or(0.0, |res| res[k]);
                        if relu {
                            s.max(0.0)
                        } else {
                            s
                        }
                    })
                    .collect();
                assert_eq!(got, want, "bias_residual_relu, {channels} channels");
            }

            for residual in [None, Some(&y[..])] {
                let mut got = vec![0.0; len];
                scale_shift_relu(&mut got, &x, residual, &p, &q);
                let want: Vec<f32> = (0..len)
                    .map(|k| (x[k] * p[k % channels] + q[k % channels] + residual.map_or(0.0, |res| res[k])).max(0.0))
                    .collect();
                assert_eq!(got, want, "scale_shift_relu, {channels} channels");
            }

            let mut sums = vec![0.0; 2 * channels];
            sums_and_squares(&x, &mut sums);
            let mut want = vec![0.0f32; 2 * channels];
            for k in 0..len {
                want[k % channels] += x[k];
                want[channels + k % channels] += x[k] * x[k];
            }
            assert_eq!(sums, want, "sums_and_squares, {channels} channels");

            let mut sums = vec![0.0; 2 * channels];
            masked_sums(&x, &y, &z, &p, &q, &mut sums);
            let mut want = vec![0.0f32; 2 * channels];
            for k in 0..len {
                let c = k % channels;
                let v = if y[k] > 0.0 { x[k] } else { 0.0 };
                want[c] += v;
                want[channels + c] += v * ((z[k] - p[c]) * q[c]);
            }
            assert_eq!(sums, want, "masked_sums, {channels} channels");

            let mut grad = x.clone();
            let mut residual = vec![9.0; len];
            norm_relu_grad(&mut grad, Some(&mut residual), &y, &z, &p, &q, &r);
            let mut plain = x.clone();
            norm_relu_grad(&mut plain, None, &y, &z, &p, &q, &r);
            for k in 0..len {
                let c = k % channels;
                let v = if y[k] > 0.0 { x[k] } else { 0.0 };
                assert_eq!(residual[k], v, "norm_relu_grad residual, {channels} channels");
                assert_eq!(grad[k], p[c] * v + q[c] * z[k] + r[c], "norm_relu_grad, {channels} channels");
                assert_eq!(plain[k], grad[k], "norm_relu_grad without a residual, {channels} channels");
            }

            let (mut sum, mut max) = (vec![0.0; channels], vec![f32::NEG_INFINITY; channels]);
            sum_and_max(&x, &mut sum, &mut max);
            let mut at = vec![u32::MAX; channels];
            // Two runs, numbered as rows 10.. and 40..: the first run's rows come first.
            first_max_rows(&x[..4 * channels], 10, &max, &mut at);
            first_max_rows(&x[4 * channels..], 40, &max, &mut at);
            for c in 0..channels {
                let column: Vec<f32> = (0..rows).map(|row| x[row * channels + c]).collect();
                let want_max = column.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(sum[c], column.iter().sum::<f32>(), "sum_and_max sum, channel {c} of {channels}");
                assert_eq!(max[c], want_max, "sum_and_max max, channel {c} of {channels}");
                let first = column.iter().position(|&v| v == want_max).expect("a maximum") as u32;
                let want_at = if first < 4 { 10 + first } else { 40 + first - 4 };
                assert_eq!(at[c], want_at, "first_max_rows, channel {c} of {channels}");
            }
        }
    }
}
