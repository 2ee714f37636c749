//! Seeded random streams. One stream per task, replication and entity; each is
//! a PCG-64 (MCG variant) whose state comes from SplitMix64 of (seed, stream id),
//! so streams are reproducible on every platform and independent of `--jobs`.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser: a bijective 64-bit mixer, used to derive seeds.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Debug, Clone)]
pub struct Stream {
    rng: Pcg64Mcg,
}

impl Stream {
    /// Stream number `stream` of the task seeded with `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let a = splitmix64(seed ^ splitmix64(stream.wrapping_add(0x5151)));
        let b = splitmix64(a ^ 0xA5A5_A5A5_A5A5_A5A5);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
        Stream {
            rng: Pcg64Mcg::from_seed(bytes),
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform on the open interval (0, 1): never 0, so `ln` is always finite.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// [`Stream::uniform`] together with the 53 random bits it is made of
    /// (`u = (bits + 0.5) / 2^53`), for samplers that also want an integer.
    #[inline]
    pub fn uniform_and_bits(&mut self) -> (f64, u64) {
        let bits = self.next_u64() >> 11;
        ((bits as f64 + 0.5) * (1.0 / (1u64 << 53) as f64), bits)
    }

    /// A unit exponential variate (mean 1) by `rand_distr`'s `Exp1`: a
    /// ziggurat, one 64-bit word and no logarithm in about 99 % of draws.
    #[inline]
    pub fn exp1(&mut self) -> f64 {
        rand_distr::Distribution::<f64>::sample(&rand_distr::Exp1, &mut self.rng)
    }

    /// Exponential with the given rate (> 0).
    #[inline]
    pub fn exp(&mut self, rate: f64) -> f64 {
        -self.uniform().ln() / rate
    }

    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Geometric on {1, 2, ...} with success probability `p` in (0, 1]: P(k) = p(1−p)^{k−1}.
    #[inline]
    pub fn geometric(&mut self, p: f64) -> u64 {
        if p >= 1.0 {
            return 1;
        }
        let k = (self.uniform().ln() / (1.0 - p).ln()).floor();
        1 + k.min(u64::MAX as f64 / 2.0) as u64
    }

    /// Index drawn from the (unnormalised, non-negative) weights.
    pub fn choose(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut u = self.uniform() * total;
        for (i, w) in weights.iter().enumerate() {
            if u < *w {
                return i;
            }
            u -= w;
        }
        weights.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_numbers_different_streams_differ() {
        let mut a = Stream::new(42, 0);
        let mut b = Stream::new(42, 0);
        let mut c = Stream::new(42, 1);
        let xa: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..5).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn uniform_and_bits_is_uniform_plus_its_bits() {
        let (mut a, mut b) = (Stream::new(3, 4), Stream::new(3, 4));
        for _ in 0..1000 {
            let (u, bits) = a.uniform_and_bits();
            assert_eq!(u.to_bits(), b.uniform().to_bits());
            assert!(bits < 1 << 53);
            assert_eq!(u, (bits as f64 + 0.5) / (1u64 << 53) as f64);
        }
    }

    #[test]
    fn moments_of_samplers() {
        let mut s = Stream::new(7, 3);
        let n = 200_000;
        let m_exp: f64 = (0..n).map(|_| s.exp(2.0)).sum::<f64>() / n as f64;
        assert!((m_exp - 0.5).abs() < 0.01, "{m_exp}");
        let m_exp1: f64 = (0..n).map(|_| s.exp1()).sum::<f64>() / n as f64;
        assert!((m_exp1 - 1.0).abs() < 0.02, "{m_exp1}");
        let m_geo: f64 = (0..n).map(|_| s.geometric(0.25) as f64).sum::<f64>() / n as f64;
        assert!((m_geo - 4.0).abs() < 0.05, "{m_geo}");
        let u_min = (0..n).map(|_| s.uniform()).fold(1.0, f64::min);
        assert!(u_min > 0.0);
    }
}
