//! Next-arrival sampler of an on-off MMPP (λ2 = 0, every MMPP of Wu's
//! figures) whose cost does not grow with the phase changes between two
//! arrivals. Stepping the phase chain (`traffic::sources::Mmpp2Source`)
//! costs two draws per phase change; at φ1 = 1000, φ2 = 0.5 a node passes
//! ~250,000 phase changes per arrival, which made an 8×8 torus at a low
//! load spend 54 s of CPU in its sources.
//!
//! Exact in distribution: in phase 1 the next event comes after Exp(λ1 +
//! φ1) and is an arrival with probability p = λ1/(λ1 + φ1), else a switch to
//! phase 2, whose sojourn is Exp(φ2). So the number F of phase-1 visits
//! ending in a switch before the arrival is geometric (failures before the
//! first success of p), and the time to the arrival is the sum of Gamma(F +
//! 1, λ1 + φ1) and Gamma(F + [starting in phase 2], φ2). After an arrival
//! the source is in phase 1 (memoryless: no residual to keep).

use crate::des::Stream;

#[derive(Debug, Clone)]
pub struct OnOff {
    /// λ1 + φ1 and λ1/(λ1 + φ1).
    rate_on: f64,
    p_arrival: f64,
    phi2: f64,
    on: bool,
    t: f64,
    rng: Stream,
}

impl OnOff {
    /// Rates > 0 (the caller validated the MMPP); phase from the stationary law.
    pub fn new(phi1: f64, phi2: f64, lambda1: f64, mut rng: Stream) -> Self {
        let on = rng.uniform() < phi2 / (phi1 + phi2);
        OnOff {
            rate_on: lambda1 + phi1,
            p_arrival: lambda1 / (lambda1 + phi1),
            phi2,
            on,
            t: 0.0,
            rng,
        }
    }

    #[inline]
    pub fn next_arrival(&mut self) -> f64 {
        let f = self.rng.geometric(self.p_arrival) - 1;
        let off = f + u64::from(!self.on);
        let d = gamma(&mut self.rng, f + 1, self.rate_on) + gamma(&mut self.rng, off, self.phi2);
        self.on = true;
        self.t += d;
        self.t
    }
}

/// Gamma(k, rate) for a whole shape k: a sum of exponentials up to 16,
/// else Marsaglia & Tsang's method (normal by Box–Muller).
fn gamma(rng: &mut Stream, k: u64, rate: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    if k <= 16 {
        let mut prod = 1.0f64;
        for _ in 0..k {
            prod *= rng.uniform();
        }
        return -prod.ln() / rate;
    }
    let d = k as f64 - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let (u1, u2) = (rng.uniform(), rng.uniform());
        let x = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = rng.uniform();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v / rate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::sources::{ArrivalSource, Mmpp2Source};

    /// Mean and variance of the counts in windows of length w.
    fn counts(mut next: impl FnMut() -> f64, w: f64, windows: usize) -> (f64, f64) {
        let mut c = vec![0u64; windows];
        loop {
            let t = next();
            let i = (t / w) as usize;
            if i >= windows {
                break;
            }
            c[i] += 1;
        }
        let m = c.iter().sum::<u64>() as f64 / windows as f64;
        let v = c.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (windows - 1) as f64;
        (m, v)
    }

    #[test]
    fn same_counting_law_as_stepping_the_phases() {
        for (phi1, phi2, l1) in [(0.5, 0.5, 0.8), (0.07, 0.03, 2.0), (50.0, 0.5, 100.0)] {
            let mut a = OnOff::new(phi1, phi2, l1, Stream::new(1, 1));
            let mut b = Mmpp2Source::new(phi1, phi2, l1, 0.0, Stream::new(2, 1)).unwrap();
            let w = 40.0;
            let (ma, va) = counts(|| a.next_arrival(), w, 20_000);
            let (mb, vb) = counts(|| b.next_arrival(), w, 20_000);
            let mean = l1 * phi2 / (phi1 + phi2) * w;
            assert!((ma / mean - 1.0).abs() < 0.03, "{phi1}: {ma} vs {mean}");
            assert!((mb / mean - 1.0).abs() < 0.03);
            // Burstiness (index of dispersion) agrees between the samplers.
            assert!(
                (va / ma) / (vb / mb) - 1.0 < 0.1 && (vb / mb) / (va / ma) - 1.0 < 0.1,
                "{phi1}: IDC {} vs {}",
                va / ma,
                vb / mb
            );
        }
        // Gamma: mean k/rate, variance k/rate^2 above the direct-sum range.
        let mut r = Stream::new(3, 3);
        let xs: Vec<f64> = (0..100_000).map(|_| gamma(&mut r, 40, 2.0)).collect();
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((m - 20.0).abs() < 0.1 && (v - 10.0).abs() < 0.3, "{m} {v}");
    }
}
