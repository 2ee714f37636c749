//! A table-and-series natural logarithm for random variate generation:
//! about half the cost of libm's `ln`, within ~2e-14 of it on (0, 1).
//! `engines::qnet` uses [`FastLn::floor_ln_times`] for geometric slot counts
//! (the same counts as with libm's `ln`); [`FastLn::exp`] gives exponential
//! variates (which differ from `Stream::exp`'s in the last bits) to the
//! MMPP sources with two active phases (`traffic::sources`). The MMPP queue
//! simulators' service times and IPP gaps use `Stream::exp1` (a ziggurat)
//! since their version 5, the G^E/G^E/1/N simulators (`queueing::gege1n`,
//! `systems::threshold`) every draw since their version 3.

use super::Stream;

/// ⌊ln(U)·k⌋ without libm's `ln` in all but a vanishing fraction of draws.
///
/// ln U = e·ln 2 + ln(m) for U = 2^e·m, m ∈ [1, 2); with c the centre of
/// m's 1/256-wide cell and ĉ = fl(1/c), ln m = −ln ĉ + ln(1 + r) where
/// r = m·ĉ − 1, |r| ≤ 2⁻⁹, and the series to r⁴ leaves < 6e-15. So the
/// approximation is within ~2e-14 of `ln` (checked in the tests), and when
/// ln(U)·k is more than |k|·1e-12 away from an integer its floor is the one
/// `U.ln() * k` gives; otherwise (probability ~2e-12·|k|) that is computed.
/// The slot counts, hence the random streams, are those of the plain formula.
#[derive(Debug, Clone)]
pub struct FastLn {
    /// (ĉ, −ln ĉ) per cell.
    cell: Box<[[f64; 2]; 256]>,
}

impl Default for FastLn {
    fn default() -> Self {
        Self::new()
    }
}

impl FastLn {
    pub fn new() -> Self {
        let mut cell = Box::new([[0.0; 2]; 256]);
        for (i, x) in cell.iter_mut().enumerate() {
            let c = 1.0 + (i as f64 + 0.5) / 256.0;
            let inv = 1.0 / c;
            *x = [inv, -inv.ln()];
        }
        FastLn { cell }
    }

    /// ln(u) for a positive normal u (within ~2e-14 for u in (0, 1)).
    #[inline(always)]
    pub fn ln(&self, u: f64) -> f64 {
        let bits = u.to_bits();
        let e = (bits >> 52) as i64 - 1023;
        let [inv, lnc] = self.cell[((bits >> 44) & 0xff) as usize];
        let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
        let r = m * inv - 1.0;
        // r − r²/2 + r³/3 − r⁴/4 as r·((1 − r/2) + r²·(1/3 − r/4)): two
        // independent halves (Estrin), a shorter dependency chain than
        // Horner's rule.
        let r2 = r * r;
        let series = r * ((1.0 - 0.5 * r) + r2 * (1.0 / 3.0 - 0.25 * r));
        e as f64 * std::f64::consts::LN_2 + (lnc + series)
    }

    /// Exponential variate of mean `mean` (> 0): −ln(U)·mean with this
    /// logarithm, one uniform of `rng` (the same draw `Stream::exp` makes).
    #[inline(always)]
    pub fn exp(&self, rng: &mut Stream, mean: f64) -> f64 {
        -self.ln(rng.uniform()) * mean
    }

    /// `(u.ln() * k).min(1e15)` truncated to an integer, for u in (0, 1) and
    /// k < 0.
    #[inline(always)]
    pub fn floor_ln_times(&self, u: f64, k: f64) -> f64 {
        // 1.5·2^52: y + MAGIC lies in [2^52, 2^53), where the spacing of
        // floats is 1, for every y in [−2^51, 2^51).
        const MAGIC: f64 = 6_755_399_441_055_744.0;
        let x = self.ln(u) * k;
        let tol = k.abs() * 1e-12;
        if x < 1e15 {
            // The integer nearest to x − 1/2 (exact: 0 ≤ x < 2^50) is ⌊x⌋
            // but when x is an integer, which the check below sends to the
            // exact path anyway (it verifies f < x < f + 1).
            let f = ((x - 0.5) + MAGIC) - MAGIC;
            if x - f > tol && f + 1.0 - x > tol {
                return f;
            }
        }
        self.exact(u, k)
    }

    #[cold]
    #[inline(never)]
    fn exact(&self, u: f64, k: f64) -> f64 {
        (u.ln() * k).min(1e15) as u64 as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FastLn::exp` takes one uniform, as `Stream::exp` does, and gives
    /// its value up to rounding (the logarithm's ~2e-14), so a simulator
    /// switched from one to the other follows the same sample path.
    #[test]
    fn exp_matches_stream_exp_draw_for_draw() {
        let f = FastLn::new();
        for rate in [1e-3, 0.25, 1.0, 7.5, 1e4] {
            let (mut a, mut b) = (Stream::new(9, 2), Stream::new(9, 2));
            let mean = 1.0 / rate;
            let mut sum = 0.0;
            let n = 200_000;
            for _ in 0..n {
                let x = f.exp(&mut a, mean);
                let y = b.exp(rate);
                assert!((x - y).abs() <= 1e-13 * (mean + y), "{x} {y}");
                sum += x;
            }
            assert_eq!(a.next_u64(), b.next_u64());
            let m = sum / n as f64;
            assert!((m - mean).abs() < 0.01 * mean, "{m} {mean}");
        }
    }
}
