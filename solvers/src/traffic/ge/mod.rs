//! Generalised exponential (GE) distribution and the GE-type batch arrival
//! process (Yan eqs 2.1–2.2, read as in catalogue erratum Y-1).
//!
//! A GE(λ, C²) variable is 0 with probability 1 − τ and Exp(τλ) otherwise,
//! τ = 2/(C² + 1): mean 1/λ, squared coefficient of variation C². Inter-arrival
//! times drawn from it form a compound Poisson process: batch epochs at rate
//! τλ, batch sizes geometric on {1, 2, ...} with P(B = b) = τ(1 − τ)^(b−1).
//! C² < 1 would need τ > 1, which is not a distribution.

use crate::des::Stream;
use crate::{Registry, SolveError};

/// GE has no solver of its own; it is a building block of GE-type queues.
pub fn register(_r: &mut Registry) {}

/// τ = 2/(C² + 1), the probability of the exponential branch.
pub fn tau(scv: f64) -> f64 {
    2.0 / (scv + 1.0)
}

/// Checks a squared coefficient of variation for use in a GE distribution.
pub fn check_scv(name: &str, scv: f64) -> Result<f64, SolveError> {
    if !scv.is_finite() || scv < 1.0 {
        return Err(SolveError::param(
            name,
            format!(
                "GE needs a squared coefficient of variation >= 1 (τ = 2/(C²+1) <= 1), got {scv}"
            ),
        ));
    }
    if scv > MAX_SCV {
        return Err(SolveError::param(
            name,
            format!(
                "must lie in [1, {MAX_SCV:e}] (a GE's batches average (C²+1)/2 customers), got {}",
                crate::params::show(scv)
            ),
        ));
    }
    Ok(scv)
}

/// Largest squared coefficient of variation a GE accepts: batches of
/// 5·10⁵ customers on average, half the largest buffer a queue may have.
pub const MAX_SCV: f64 = 1e6;

/// GE(rate, C²): mean 1/rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ge {
    rate: f64,
    scv: f64,
    tau: f64,
}

impl Ge {
    pub fn new(rate: f64, scv: f64) -> Result<Self, SolveError> {
        let rate = crate::params::positive("rate", rate)?;
        let scv = check_scv("scv", scv)?;
        Ok(Ge {
            rate,
            scv,
            tau: tau(scv),
        })
    }

    pub fn tau(&self) -> f64 {
        self.tau
    }
    pub fn mean(&self) -> f64 {
        1.0 / self.rate
    }
    pub fn rate(&self) -> f64 {
        self.rate
    }
    pub fn scv(&self) -> f64 {
        self.scv
    }
    pub fn variance(&self) -> f64 {
        self.scv / (self.rate * self.rate)
    }
    /// F(t) = 1 − τ e^(−τ λ t), t >= 0 (eq 2.2; the atom at 0 has mass 1 − τ).
    pub fn cdf(&self, t: f64) -> f64 {
        if t < 0.0 {
            0.0
        } else {
            1.0 - self.tau * (-self.tau * self.rate * t).exp()
        }
    }
    /// Rate of the exponential branch, τλ.
    pub fn branch_rate(&self) -> f64 {
        self.tau * self.rate
    }

    pub fn sample(&self, rng: &mut Stream) -> f64 {
        if rng.bernoulli(self.tau) {
            rng.exp(self.branch_rate())
        } else {
            0.0
        }
    }
}

/// GE-type arrival process: compound Poisson with geometric batches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeBatchArrivals {
    ge: Ge,
}

impl GeBatchArrivals {
    pub fn new(lambda: f64, ca2: f64) -> Result<Self, SolveError> {
        let lambda = crate::params::positive("lambda", lambda)?;
        let ca2 = check_scv("ca2", ca2)?;
        Ok(GeBatchArrivals {
            ge: Ge::new(lambda, ca2)?,
        })
    }
    /// Rate of batch epochs, σ = τλ.
    pub fn batch_rate(&self) -> f64 {
        self.ge.branch_rate()
    }
    /// Mean batch size 1/τ (customers per batch).
    pub fn mean_batch(&self) -> f64 {
        1.0 / self.ge.tau()
    }
    pub fn tau(&self) -> f64 {
        self.ge.tau()
    }
    /// Time to the next batch epoch and the size of that batch.
    pub fn next_batch(&self, rng: &mut Stream) -> (f64, u64) {
        let dt = rng.exp(self.batch_rate());
        (dt, rng.geometric(self.ge.tau()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_mean_scv() {
        let g = Ge::new(4.0, 5.0).unwrap();
        assert!((g.tau() - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(g.mean(), 0.25);
        // E[X] = τ/(τλ) = 1/λ; E[X²] = 2τ/(τλ)² so SCV = 2/τ − 1 = C².
        let (t, l) = (g.tau(), g.rate());
        let m2 = 2.0 * t / (t * l).powi(2);
        assert!((m2 / g.mean().powi(2) - 1.0 - g.scv()).abs() < 1e-12);
        assert!((g.cdf(0.0) - (1.0 - t)).abs() < 1e-15);
        assert_eq!(Ge::new(1.0, 1.0).unwrap().tau(), 1.0);
    }

    #[test]
    fn sampled_moments_match() {
        let g = Ge::new(2.0, 7.0).unwrap();
        let mut s = Stream::new(11, 0);
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| g.sample(&mut s)).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.01, "{m}");
        assert!((v / (m * m) - 7.0).abs() < 0.3, "{}", v / (m * m));
        let zeros = xs.iter().filter(|&&x| x == 0.0).count() as f64 / n as f64;
        assert!((zeros - 0.75).abs() < 0.005);
    }

    #[test]
    fn batch_process_has_rate_lambda() {
        let a = GeBatchArrivals::new(3.0, 5.0).unwrap();
        let mut s = Stream::new(5, 1);
        let (mut t, mut c) = (0.0, 0u64);
        for _ in 0..200_000 {
            let (dt, b) = a.next_batch(&mut s);
            t += dt;
            c += b;
        }
        assert!((c as f64 / t - 3.0).abs() < 0.05, "{}", c as f64 / t);
    }

    #[test]
    fn refuses_scv_below_one() {
        assert!(matches!(
            Ge::new(1.0, 0.5),
            Err(SolveError::InvalidParam { .. })
        ));
        assert!(GeBatchArrivals::new(1.0, f64::NAN).is_err());
        assert!(GeBatchArrivals::new(0.0, 2.0).is_err());
    }
}
