//! Random variates the search needs, written out to keep the dependency list at `rand`:
//! Gamma (for Dirichlet noise), Gumbel, and a uniform on the open interval.

use rand::Rng;

/// A uniform sample in the open interval `(0, 1)`.
#[inline]
pub(crate) fn open_unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal sample (Box-Muller; one of the pair is discarded for simplicity).
fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = open_unit(rng);
    let u2 = open_unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(`shape`, 1) sample by Marsaglia and Tsang's method, with the `U^(1/shape)` boost
/// for shapes below one. `shape` must be positive.
pub(crate) fn gamma<R: Rng + ?Sized>(rng: &mut R, shape: f64) -> f64 {
    if shape < 1.0 {
        let boost = open_unit(rng).powf(1.0 / shape);
        return gamma(rng, shape + 1.0) * boost;
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = open_unit(rng);
        if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// Mixes symmetric Dirichlet(`alpha`) noise into `priors` in place:
/// `p <- (1 - fraction) p + fraction * noise`. Leaves `priors` alone if the noise sum
/// underflows (possible only for tiny `alpha`).
pub(crate) fn mix_dirichlet<R: Rng + ?Sized>(
    rng: &mut R,
    priors: &mut [f32],
    alpha: f32,
    fraction: f32,
    scratch: &mut Vec<f64>,
) {
    scratch.clear();
    scratch.extend(priors.iter().map(|_| gamma(rng, alpha as f64)));
    let sum: f64 = scratch.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return;
    }
    let f = fraction as f64;
    for (p, g) in priors.iter_mut().zip(scratch.iter()) {
        *p = ((1.0 - f) * *p as f64 + f * g / sum) as f32;
    }
}

/// A standard Gumbel sample, `-ln(-ln U)`.
#[inline]
pub(crate) fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    (-(-open_unit(rng).ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn gamma_mean_and_variance() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for &shape in &[0.03, 0.3, 1.0, 2.5, 10.0] {
            let n = 40_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(&mut rng, shape)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            assert!((mean - shape).abs() < 0.05 * shape.max(0.3), "shape {shape} mean {mean}");
            assert!((var - shape).abs() < 0.15 * shape.max(0.3), "shape {shape} var {var}");
            assert!(xs.iter().all(|x| *x >= 0.0 && x.is_finite()));
        }
    }

    #[test]
    fn dirichlet_keeps_a_distribution() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut p = vec![0.25f32; 4];
        let mut scratch = Vec::new();
        mix_dirichlet(&mut rng, &mut p, 0.3, 0.25, &mut scratch);
        let sum: f32 = p.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5);
        assert!(p.iter().all(|x| *x >= 0.25 * 0.75 - 1e-6));
    }

    #[test]
    fn gumbel_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 100_000;
        let mean = (0..n).map(|_| gumbel(&mut rng) as f64).sum::<f64>() / n as f64;
        // Euler-Mascheroni constant.
        assert!((mean - 0.5772).abs() < 0.02, "{mean}");
    }
}
