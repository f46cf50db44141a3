//! 8-bit 3x3 convolutions (stem and residual tower) for the folded CPU model
//! ([`crate::Precision::Int8`]).
//!
//! Why: the 3x3 convolutions are most of the network's time, and the network is most of
//! self-play's; their `f32` products already run near the core's multiply-add peak (gemm's
//! microkernel is 82% of a forward pass, docs/BENCHMARKS.md). AVX-512 VNNI multiplies 64
//! unsigned-by-signed byte pairs into 16 `i32` sums per instruction, four times the `f32`
//! multiply-adds of one FMA, so the same convolution in bytes is up to four times faster.
//!
//! How: a 3x3 convolution's input is a ReLU's output or the input planes (indicators and
//! fractions in `[0, 1]`), never negative, so each image's activations are stored as `u8` on a
//! scale of their own (`max / 255`: a position's rounding does not depend on the rest of its
//! batch, which the evaluator's cache needs), and each output channel's folded kernel as `i8`
//! on its own scale (`max |w| / 127`). The products are summed exactly in `i32`, so the VNNI
//! kernel and the portable one give the same integers; scaling back, the bias, the residual and
//! the ReLU are one `f32` pass shared by both, so a network's outputs are the same bits on every
//! machine. The heads and the residual stream stay `f32`.

use crate::folded::Padded;

/// Output channels one pass of the VNNI kernel accumulates: two 16-lane registers.
const OUTPUT_BLOCK: usize = 32;
/// Cells one pass of the VNNI kernel accumulates: 8 cells x 2 registers = 16 accumulators.
const CELL_BLOCK: usize = 8;

/// A 3x3 convolution, stride 1, "same" padding, bias folded in, with `i8` weights.
pub(crate) struct QuantizedConv {
    inputs: usize,
    outputs: usize,
    /// Output channels rounded up to [`OUTPUT_BLOCK`] (the extra columns' weights are zero).
    padded_outputs: usize,
    /// Groups of four bytes in one kernel row's window (`3 * inputs`, rounded up; the weights
    /// past the window are zero, so the bytes of the next cell they meet add nothing).
    groups: usize,
    /// `[ky][group][padded_outputs][4]`: the four window bytes of a group against output `o`.
    weight: Vec<i8>,
    /// Per output channel: the `f32` weight of one `i8` step.
    weight_scale: Vec<f32>,
    bias: Vec<f32>,
    vnni: bool,
}

/// Whether this CPU runs the VNNI kernel (else the portable one, which gives the same result).
pub(crate) fn has_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl QuantizedConv {
    /// From the folded kernel in rows `[(ky, kx, i), o]` ([`crate::folded::kernel_rows`]).
    pub(crate) fn new(rows: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> QuantizedConv {
        assert_eq!(rows.len(), 9 * inputs * outputs, "3x3 kernel rows");
        let padded_outputs = outputs.div_ceil(OUTPUT_BLOCK) * OUTPUT_BLOCK;
        let window = 3 * inputs;
        let groups = window.div_ceil(4);
        let weight_scale: Vec<f32> = (0..outputs)
            .map(|o| {
                let max = (0..9 * inputs).map(|r| rows[r * outputs + o].abs()).fold(0.0f32, f32::max);
                if max > 0.0 {
                    max / 127.0
                } else {
                    1.0
                }
            })
            .collect();
        let mut weight = vec![0i8; 3 * groups * padded_outputs * 4];
        for ky in 0..3 {
            for k in 0..window {
                let (group, byte) = (k / 4, k % 4);
                for o in 0..outputs {
                    let w = rows[(ky * window + k) * outputs + o] / weight_scale[o];
                    weight[((ky * groups + group) * padded_outputs + o) * 4 + byte] =
                        w.round().clamp(-127.0, 127.0) as i8;
                }
            }
        }
        QuantizedConv {
            inputs,
            outputs,
            padded_outputs,
            groups,
            weight,
            weight_scale,
            bias: bias.to_vec(),
            vnni: has_vnni(),
        }
    }

    /// The portable kernel even where VNNI runs (to check one against the other).
    #[cfg(test)]
    fn portable(mut self) -> QuantizedConv {
        self.vnni = false;
        self
    }

    /// `out = relu(conv(x) + bias [+ residual])` on padded activations: `x` quantized by
    /// [`quantize`] (its scales one per image), `out` and `residual` padded `f32` rows, `out`'s
    /// margins zero. `sums` is scratch.
    pub(crate) fn forward(
        &self,
        layout: Padded,
        x: &QuantizedActivations,
        residual: Option<&[f32]>,
        sums: &mut Vec<i32>,
        out: &mut Vec<f32>,
    ) {
        let (first, end) = (layout.first_cell(), layout.end_cell());
        let cells = end - first;
        sums.resize(cells * self.padded_outputs, 0);
        assert!(x.bytes.len() >= layout.len() * self.inputs + 4, "quantized input with its slack");
        if self.vnni {
            // SAFETY: `has_vnni` checked the features (it is false off x86-64); the bounds are
            // those `products_portable` indexes (asserted above: every window lies inside the
            // padded buffer, whose slack covers a group's bytes past a window's end).
            #[cfg(target_arch = "x86_64")]
            unsafe {
                self.products_vnni(layout, &x.bytes, sums)
            };
        } else {
            self.products_portable(layout, &x.bytes, sums);
        }
        self.finish(layout, x, residual, sums, out)
    }

    /// The offset, in cells, of the window of kernel row `ky` from the cell it belongs to.
    fn window_offset(layout: Padded, ky: usize) -> isize {
        ky as isize * layout.stride as isize - layout.stride as isize - 1
    }

    fn products_portable(&self, layout: Padded, x: &[u8], sums: &mut [i32]) {
        let (first, end) = (layout.first_cell(), layout.end_cell());
        let (po, groups) = (self.padded_outputs, self.groups);
        for (q, row) in (first..end).zip(sums.chunks_exact_mut(po)) {
            row.fill(0);
            for ky in 0..3 {
                let start = (q as isize + Self::window_offset(layout, ky)) as usize * self.inputs;
                let weights = &self.weight[ky * groups * po * 4..(ky + 1) * groups * po * 4];
                for (group, w) in weights.chunks_exact(po * 4).enumerate() {
                    let a = &x[start + 4 * group..start + 4 * group + 4];
                    for (sum, w) in row.iter_mut().zip(w.chunks_exact(4)) {
                        *sum += a.iter().zip(w).map(|(&a, &w)| a as i32 * w as i32).sum::<i32>();
                    }
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn products_vnni(&self, layout: Padded, x: &[u8], sums: &mut [i32]) {
        use std::arch::x86_64::*;
        let (first, end) = (layout.first_cell(), layout.end_cell());
        let (po, groups, inputs) = (self.padded_outputs, self.groups, self.inputs);
        let offsets = [0, 1, 2].map(|ky| Self::window_offset(layout, ky));
        let xp = x.as_ptr();
        let wp = self.weight.as_ptr();
        let sp = sums.as_mut_ptr();
        let mut q = first;
        while q < end {
            let block = CELL_BLOCK.min(end - q);
            for ob in (0..po).step_by(OUTPUT_BLOCK) {
                let mut acc = [[_mm512_setzero_si512(); 2]; CELL_BLOCK];
                for (ky, &offset) in offsets.iter().enumerate() {
                    let base = xp.offset((q as isize + offset) * inputs as isize);
                    let mut w = wp.add((ky * groups * po + ob) * 4);
                    for group in 0..groups {
                        let w0 = _mm512_loadu_si512(w as *const __m512i);
                        let w1 = _mm512_loadu_si512(w.add(64) as *const __m512i);
                        let a = base.add(4 * group);
                        // A full block's loop has a constant trip count, so its sixteen
                        // accumulators stay in registers; the last, partial block of the batch
                        // takes the counted loop.
                        if block == CELL_BLOCK {
                            for (c, acc) in acc.iter_mut().enumerate() {
                                let bytes = _mm512_set1_epi32((a.add(c * inputs) as *const i32).read_unaligned());
                                acc[0] = _mm512_dpbusd_epi32(acc[0], bytes, w0);
                                acc[1] = _mm512_dpbusd_epi32(acc[1], bytes, w1);
                            }
                        } else {
                            for (c, acc) in acc.iter_mut().enumerate().take(block) {
                                let bytes = _mm512_set1_epi32((a.add(c * inputs) as *const i32).read_unaligned());
                                acc[0] = _mm512_dpbusd_epi32(acc[0], bytes, w0);
                                acc[1] = _mm512_dpbusd_epi32(acc[1], bytes, w1);
                            }
                        }
                        w = w.add(po * 4);
                    }
                }
                for (c, acc) in acc.iter().enumerate().take(block) {
                    let dst = sp.add((q - first + c) * po + ob);
                    _mm512_storeu_si512(dst as *mut __m512i, acc[0]);
                    _mm512_storeu_si512(dst.add(16) as *mut __m512i, acc[1]);
                }
            }
            q += block;
        }
    }

    /// Sums back to `f32` with each image's and channel's scales, then bias, residual, ReLU.
    fn finish(
        &self,
        layout: Padded,
        x: &QuantizedActivations,
        residual: Option<&[f32]>,
        sums: &[i32],
        out: &mut Vec<f32>,
    ) {
        let (o, po) = (self.outputs, self.padded_outputs);
        out.resize(layout.len() * o, 0.0);
        let first = layout.first_cell();
        let mut scale = vec![0.0f32; o];
        for image in 0..layout.images {
            for (s, &w) in scale.iter_mut().zip(&self.weight_scale) {
                *s = x.scales[image] * w;
            }
            // The image's cells in one pass, the margin cells between its ranks included
            // (their sums are a window's over zeros and margins; they are zeroed below).
            let std::ops::Range { start, end } = layout.image_span(image);
            let dst = &mut out[start * o..end * o];
            let src = &sums[(start - first) * po..(end - first) * po];
            let res = residual.map(|r| &r[start * o..end * o]);
            dequantize_rows(dst, src, po, &scale, &self.bias, res);
        }
        layout.clear_margins(out, o);
    }
}

/// `dst = relu(sum * scale + bias [+ residual])` per row (`sums` rows `padded` wide).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
fn dequantize_rows(
    dst: &mut [f32],
    sums: &[i32],
    padded: usize,
    scale: &[f32],
    bias: &[f32],
    residual: Option<&[f32]>,
) {
    let n = scale.len();
    let bias = &bias[..n];
    match residual {
        Some(residual) => {
            for ((d, s), r) in dst.chunks_exact_mut(n).zip(sums.chunks_exact(padded)).zip(residual.chunks_exact(n)) {
                let (d, s, r) = (&mut d[..n], &s[..n], &r[..n]);
                for c in 0..n {
                    d[c] = (s[c] as f32 * scale[c] + bias[c] + r[c]).max(0.0);
                }
            }
        }
        None => {
            for (d, s) in dst.chunks_exact_mut(n).zip(sums.chunks_exact(padded)) {
                let (d, s) = (&mut d[..n], &s[..n]);
                for c in 0..n {
                    d[c] = (s[c] as f32 * scale[c] + bias[c]).max(0.0);
                }
            }
        }
    }
}

/// Padded activations as bytes, one scale per image (`value = byte * scale`).
#[derive(Default)]
pub(crate) struct QuantizedActivations {
    /// `[cell, channel]` like the `f32` rows, plus four zero bytes of slack at the end.
    bytes: Vec<u8>,
    scales: Vec<f32>,
}

/// Quantizes padded, non-negative `x` (`channels` floats a cell, margins zero) into `out`.
pub(crate) fn quantize(layout: Padded, channels: usize, x: &[f32], out: &mut QuantizedActivations) {
    // Every cell of every image's span is written below: only the margins between images,
    // before the first and after the last, and the slack need zeroing.
    out.bytes.resize(layout.len() * channels + 4, 0);
    layout.clear_margins(&mut out.bytes, channels);
    out.bytes[layout.len() * channels..].fill(0);
    out.scales.clear();
    for image in 0..layout.images {
        // The image's span in one pass: the margin cells between its ranks are zeros in `x`,
        // which change neither the maximum nor their bytes.
        let cells = layout.image_span(image);
        let range = cells.start * channels..cells.end * channels;
        let max = max_of(&x[range.clone()]);
        let (scale, inverse) = if max > 0.0 { (max / 255.0, 255.0 / max) } else { (1.0, 0.0) };
        out.scales.push(scale);
        to_bytes(&mut out.bytes[range.clone()], &x[range], inverse);
    }
}

/// The largest of `x` and 0, NaN ignored.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
fn max_of(x: &[f32]) -> f32 {
    // Sixteen running maxima, as a compare and select each: `f32::max`'s NaN rule kept the
    // fold from vectorising (a twentieth of an 8-bit forward pass).
    const LANES: usize = 16;
    let mut lanes = [0.0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (m, &v) in lanes.iter_mut().zip(chunk) {
            *m = if v > *m { v } else { *m };
        }
    }
    rest.iter().chain(&lanes).fold(0.0f32, |m, &v| if v > m { v } else { m })
}

/// Rounds `x * inverse` to the nearest byte, clamped to `0..=255`.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma+avx", "x86_64+avx2+fma+avx"))]
fn to_bytes(dst: &mut [u8], x: &[f32], inverse: f32) {
    for (d, &v) in dst.iter_mut().zip(x) {
        // `max` first turns a NaN into 0, so the value is a finite float in [0.5, 255.5) and
        // the unchecked conversion (which vectorises, where `as`'s saturating one does not and
        // took a fifth of a forward pass) is defined.
        #[allow(clippy::manual_clamp)] // `clamp` would keep a NaN
        let rounded = (v * inverse).max(0.0).min(255.0) + 0.5;
        // SAFETY: `rounded` is finite and in [0.5, 255.5], inside `i32`'s range.
        *d = unsafe { rounded.to_int_unchecked::<i32>() } as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GridShape;
    use crate::folded::kernel_rows;

    /// Padded non-negative activations with a few zeros, on a grid of `ranks x files`.
    fn activations(layout: Padded, channels: usize, seed: u64) -> Vec<f32> {
        let mut x = vec![0.0; layout.len() * channels];
        let mut state = seed;
        for image in 0..layout.images {
            for cells in layout.ranks_of(image) {
                for v in &mut x[cells.start * channels..cells.end * channels] {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let u = (state >> 40) as f32 / (1u64 << 24) as f32;
                    *v = if u < 0.3 { 0.0 } else { u * (1.0 + image as f32) };
                }
            }
        }
        x
    }

    fn conv(inputs: usize, outputs: usize) -> (Vec<f32>, Vec<f32>) {
        let oihw: Vec<f32> = (0..outputs * inputs * 9).map(|i| (((i * 37) % 23) as f32 - 11.0) / 40.0).collect();
        let bias = (0..outputs).map(|o| (o as f32 - 3.0) / 10.0).collect();
        (kernel_rows(&oihw, inputs, outputs, 3), bias)
    }

    #[test]
    fn the_vnni_and_portable_kernels_give_the_same_bits() {
        // Shapes that exercise the padding of windows (inputs 5: 15 bytes) and outputs (20, 40),
        // and cell counts that leave a partial block.
        for (inputs, outputs, images) in [(32, 32, 3), (5, 20, 2), (8, 40, 1)] {
            let layout = Padded::new(GridShape { ranks: 5, files: 7 }, images);
            let x = activations(layout, inputs, 7);
            let residual = activations(layout, outputs, 9);
            let (rows, bias) = conv(inputs, outputs);
            let mut q = QuantizedActivations::default();
            quantize(layout, inputs, &x, &mut q);
            let fast = QuantizedConv::new(&rows, &bias, inputs, outputs);
            let slow = QuantizedConv::new(&rows, &bias, inputs, outputs).portable();
            let (mut sums, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
            fast.forward(layout, &q, Some(&residual), &mut sums, &mut a);
            slow.forward(layout, &q, Some(&residual), &mut sums, &mut b);
            assert_eq!(a, b, "{inputs} -> {outputs}, {images} images (VNNI here: {})", has_vnni());
        }
    }

    #[test]
    fn an_int8_convolution_is_the_f32_one_within_its_rounding() {
        // Against the definition in f32: the error of 8-bit activations and weights over a
        // 288-term sum stays within about 1% of the output's range.
        let grid = GridShape { ranks: 6, files: 5 };
        let (inputs, outputs, images) = (32, 32, 2);
        let layout = Padded::new(grid, images);
        let x = activations(layout, inputs, 3);
        let oihw: Vec<f32> = (0..outputs * inputs * 9).map(|i| (((i * 37) % 23) as f32 - 11.0) / 40.0).collect();
        let bias: Vec<f32> = (0..outputs).map(|o| (o as f32 - 3.0) / 10.0).collect();
        let quantized = QuantizedConv::new(&kernel_rows(&oihw, inputs, outputs, 3), &bias, inputs, outputs);
        let mut q = QuantizedActivations::default();
        quantize(layout, inputs, &x, &mut q);
        let (mut sums, mut out) = (Vec::new(), Vec::new());
        quantized.forward(layout, &q, None, &mut sums, &mut out);
        let at = |image: usize, r: isize, f: isize, i: usize| -> f32 {
            if (0..6).contains(&r) && (0..5).contains(&f) {
                x[layout.cell(image, r as usize, f as usize) * inputs + i]
            } else {
                0.0
            }
        };
        let (mut worst, mut range) = (0.0f32, 0.0f32);
        for image in 0..images {
            for r in 0..6 {
                for f in 0..5 {
                    for o in 0..outputs {
                        let mut want = bias[o];
                        for i in 0..inputs {
                            for ky in 0..3 {
                                for kx in 0..3 {
                                    let v = at(image, r + ky - 1, f + kx - 1, i);
                                    want += oihw[((o * inputs + i) * 3 + ky as usize) * 3 + kx as usize] * v;
                                }
                            }
                        }
                        let got = out[layout.cell(image, r as usize, f as usize) * outputs + o];
                        worst = worst.max((got - want.max(0.0)).abs());
                        range = range.max(want.abs());
                    }
                }
            }
        }
        assert!(range > 1.0, "a test whose outputs are all near zero checks nothing");
        assert!(worst < 0.01 * range, "largest error {worst} against outputs up to {range}");
        for cell in 0..layout.len() {
            if layout.is_margin(cell) {
                assert!(out[cell * outputs..(cell + 1) * outputs].iter().all(|&v| v == 0.0), "margin cell {cell}");
            }
        }
    }
}
