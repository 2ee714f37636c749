//! The two-state MMPP of Wu (2.1) in closed form, in plain `f64`s: these
//! functions run inside fixed-point iterations millions of times, so nothing
//! here allocates.
//!
//! Q = [[-phi1, phi1], [phi2, -phi2]], Lambda = diag(lambda1, lambda2);
//! phi1 is the rate of leaving phase 1.

use crate::params::positive;
use crate::SolveError;

/// A two-state MMPP. Build it with [`Mmpp2::new`] (validated) or directly when
/// the numbers are known to be valid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mmpp2 {
    pub phi1: f64,
    pub phi2: f64,
    pub lambda1: f64,
    pub lambda2: f64,
}

/// Counting characteristics at one time t (what the Heffes–Lucantoni fit matches).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountStats {
    pub t: f64,
    pub mean: f64,
    pub var: f64,
    /// Third central moment gamma^(3)(t).
    pub third_central: f64,
}

/// x - 1 + e^{-x}, accurate also for small x where the direct form cancels.
pub(crate) fn x_m1_pexp(x: f64) -> f64 {
    if x.abs() < 0.25 {
        // x^2/2 - x^3/6 + x^4/24 - ...
        let mut term = x * x / 2.0;
        let mut sum = term;
        for k in 3..30 {
            term *= -x / k as f64;
            sum += term;
            if term.abs() < 1e-18 * sum.abs() {
                break;
            }
        }
        sum
    } else {
        x + (-x).exp_m1()
    }
}

/// x(1 + e^{-x}) - 2(1 - e^{-x}) = sum_{k>=3} (-1)^{k+1} (k-2) x^k / k!,
/// summed as a series for small x where the direct form cancels (~ x^3/6).
pub(crate) fn psi_bracket(x: f64) -> f64 {
    if x < 0.1 {
        let mut s = 0.0;
        let mut term = x * x / 2.0;
        for k in 3..40 {
            term *= x / k as f64;
            let sgn = if k % 2 == 1 { 1.0 } else { -1.0 };
            s += sgn * (k as f64 - 2.0) * term;
            if term < 1e-20 * s.abs() {
                break;
            }
        }
        s
    } else {
        x * (1.0 + (-x).exp()) + 2.0 * (-x).exp_m1()
    }
}

impl Mmpp2 {
    /// Validated constructor: phi1, phi2 > 0 (an MMPP whose phase never
    /// changes is not irreducible), lambda1, lambda2 >= 0 with a positive mean.
    pub fn new(phi1: f64, phi2: f64, lambda1: f64, lambda2: f64) -> Result<Self, SolveError> {
        positive("phi1", phi1)?;
        positive("phi2", phi2)?;
        crate::params::non_negative("lambda1", lambda1)?;
        crate::params::non_negative("lambda2", lambda2)?;
        if lambda1 + lambda2 <= 0.0 {
            return Err(SolveError::param(
                "lambda1",
                "lambda1 and lambda2 must not both be 0 (no arrivals)",
            ));
        }
        Ok(Mmpp2 {
            phi1,
            phi2,
            lambda1,
            lambda2,
        })
    }

    /// A Poisson process of rate `lambda` written as an MMPP (phase rates arbitrary).
    pub fn poisson(lambda: f64) -> Self {
        Mmpp2 {
            phi1: 1.0,
            phi2: 1.0,
            lambda1: lambda,
            lambda2: lambda,
        }
    }

    /// tau = phi1 + phi2.
    #[inline]
    pub fn tau(&self) -> f64 {
        self.phi1 + self.phi2
    }

    /// Stationary phase vector pi = (phi2, phi1) / (phi1 + phi2).
    #[inline]
    pub fn stationary(&self) -> [f64; 2] {
        let s = self.tau();
        [self.phi2 / s, self.phi1 / s]
    }

    /// Mean arrival rate (2.11) = (lambda1 phi2 + lambda2 phi1) / (phi1 + phi2).
    #[inline]
    pub fn mean_rate(&self) -> f64 {
        (self.lambda1 * self.phi2 + self.lambda2 * self.phi1) / self.tau()
    }

    /// Bernoulli splitting with probability p (3.18): Q unchanged, Lambda scaled.
    pub fn split(&self, p: f64) -> Self {
        Mmpp2 {
            lambda1: p * self.lambda1,
            lambda2: p * self.lambda2,
            ..*self
        }
    }

    /// E[N(t)] (2.2).
    #[inline]
    pub fn mean_count(&self, t: f64) -> f64 {
        self.mean_rate() * t
    }

    /// Var[N(t)] (2.3).
    pub fn var_count(&self, t: f64) -> f64 {
        let s = self.tau();
        let d = self.lambda1 - self.lambda2;
        let c = 2.0 * d * d * self.phi1 * self.phi2 / s.powi(4);
        self.mean_rate() * t + c * x_m1_pexp(s * t)
    }

    /// Third factorial moment Z^(3)(1, t) = E[N(N-1)(N-2)], (2.5)–(2.10) with
    /// the errata W-1 (e^{-(phi1+phi2)t} in the A12 term) and W-2
    /// (A41 = -2 phi1 phi2 (l1-l2)^3 (phi1-phi2) / (phi1+phi2)^5).
    pub fn third_factorial(&self, t: f64) -> f64 {
        let (p1, p2, l1, l2) = (self.phi1, self.phi2, self.lambda1, self.lambda2);
        let s = p1 + p2;
        let d = l1 - l2;
        let a = l1 * p2 + l2 * p1;
        let a11 = a.powi(3) / (s * s);
        let a21 = 2.0 * p1 * p2 * d * d * a / s.powi(3);
        let a31 = p1 * p2 * d * d * (l1 * p1 + l2 * p2 - 2.0 * a) / s.powi(4);
        let a41 = -2.0 * p1 * p2 * d.powi(3) * (p1 - p2) / s.powi(5);
        let a12 = p1 * p2 * d * d * (l1 * p1 + l2 * p2) / s.powi(4);
        let e = (-s * t).exp();
        6.0 / s
            * (a11 / 6.0 * t.powi(3)
                + a21 / 2.0 * t * t
                + a31 * t
                + a12 * t * e
                + a41 * (-(-s * t).exp_m1()))
    }

    /// Third central moment gamma^(3)(t) of N(t). (2.4) applied to the
    /// corrected (2.5) simplifies (every t^2 and m^3 term cancels) to
    /// gamma3 = lam t + (3 lam w / tau)(x - 1 + e^{-x}) + psi (3 lam w / tau^3)(x(1+e^{-x}) - 2(1-e^{-x})),
    /// x = tau t, w = IDC(inf) - 1, psi = (l1-l2)(phi1-phi2). Evaluated this
    /// way it keeps full accuracy at large t, where Z3 ~ m^3 would swamp it.
    pub fn third_central(&self, t: f64) -> f64 {
        let s = self.tau();
        let x = s * t;
        let d = self.lambda1 - self.lambda2;
        // lam w = 2 d^2 phi1 phi2 / tau^3.
        let lam_w = 2.0 * d * d * self.phi1 * self.phi2 / s.powi(3);
        let psi = d * (self.phi1 - self.phi2);
        self.mean_count(t)
            + 3.0 * lam_w / s * x_m1_pexp(x)
            + psi * 3.0 * lam_w / s.powi(3) * psi_bracket(x)
    }

    /// gamma^(3)(t) the printed way: Z3 of (2.5) (W-1, W-2) through (2.4).
    pub fn third_central_via_factorial(&self, t: f64) -> f64 {
        let m = self.mean_count(t);
        let v = self.var_count(t);
        third_central_from_factorial(self.third_factorial(t), m, v)
    }

    /// Mean, variance and third central moment of N(t) at once.
    pub fn count_stats(&self, t: f64) -> CountStats {
        CountStats {
            t,
            mean: self.mean_count(t),
            var: self.var_count(t),
            third_central: self.third_central(t),
        }
    }

    /// IDC(t) = Var[N(t)] / E[N(t)] (2.12).
    pub fn idc(&self, t: f64) -> f64 {
        self.var_count(t) / self.mean_count(t)
    }

    /// lim IDC(t) (2.13) = 1 + 2 (l1-l2)^2 phi1 phi2 / ((phi1+phi2)^3 mean_rate).
    pub fn idc_inf(&self) -> f64 {
        let s = self.tau();
        let d = self.lambda1 - self.lambda2;
        1.0 + 2.0 * d * d * self.phi1 * self.phi2 / (s.powi(3) * self.mean_rate())
    }

    /// Squared coefficient of variation of the inter-arrival time (2.14).
    pub fn scv(&self) -> f64 {
        let (p1, p2, l1, l2) = (self.phi1, self.phi2, self.lambda1, self.lambda2);
        let s = p1 + p2;
        let d = l1 - l2;
        1.0 + 2.0 * p1 * p2 * d * d / (s * s * (l1 * l2 + l1 * p2 + l2 * p1))
    }

    /// Lag-1 correlation coefficient of inter-arrival times (2.15).
    pub fn lag1_corr(&self) -> f64 {
        let (p1, p2, l1, l2) = (self.phi1, self.phi2, self.lambda1, self.lambda2);
        let s = p1 + p2;
        let d = l1 - l2;
        let den = l1 * l2 + l1 * p2 + l2 * p1;
        l1 * l2 * d * d * p1 * p2 / (self.scv() * s * s * den * den)
    }

    /// Decay factor of the inter-arrival correlations: r_k = r_1 gamma^{k-1},
    /// gamma = the non-unit eigenvalue of P = (-D0)^{-1} D1 = trace(P) - 1.
    pub fn lag_decay(&self) -> f64 {
        let (p1, p2, l1, l2) = (self.phi1, self.phi2, self.lambda1, self.lambda2);
        // -D0 = [[p1+l1, -p1], [-p2, p2+l2]], det = l1 l2 + l1 p2 + l2 p1.
        let det = l1 * l2 + l1 * p2 + l2 * p1;
        // P = (-D0)^{-1} diag(l1, l2): diagonal entries (p2+l2) l1 / det and (p1+l1) l2 / det.
        ((p2 + l2) * l1 + (p1 + l1) * l2) / det - 1.0
    }

    /// Lag-k correlation coefficient of inter-arrival times (k >= 1).
    pub fn lag_corr(&self, k: u32) -> f64 {
        if k == 0 {
            return 1.0;
        }
        self.lag1_corr() * self.lag_decay().powi(k as i32 - 1)
    }

    /// k-th moment of the stationary inter-arrival time: k! phi (-D0)^{-k} e,
    /// phi = pi Lambda / mean_rate (the phase seen just after an arrival).
    pub fn interarrival_moment(&self, k: u32) -> f64 {
        let (p1, p2, l1, l2) = (self.phi1, self.phi2, self.lambda1, self.lambda2);
        let pi = self.stationary();
        let lam = self.mean_rate();
        let mut v = [pi[0] * l1 / lam, pi[1] * l2 / lam];
        let det = l1 * l2 + l1 * p2 + l2 * p1;
        // (-D0)^{-1} = [[p2+l2, p1], [p2, p1+l1]] / det; row vector times it.
        let mut fact = 1.0;
        for i in 1..=k {
            v = [
                (v[0] * (p2 + l2) + v[1] * p2) / det,
                (v[0] * p1 + v[1] * (p1 + l1)) / det,
            ];
            fact *= i as f64;
        }
        fact * (v[0] + v[1])
    }
}

/// gamma^(3) from the third factorial moment Z3, mean m and variance v (2.4).
#[inline]
pub fn third_central_from_factorial(z3: f64, m: f64, v: f64) -> f64 {
    z3 - 3.0 * (m - 1.0) * v - m * (m - 1.0) * (m - 2.0)
}

/// Z3 from gamma^(3), mean and variance: inverse of (2.4).
#[inline]
pub fn third_factorial_from_central(g3: f64, m: f64, v: f64) -> f64 {
    g3 + 3.0 * (m - 1.0) * v + m * (m - 1.0) * (m - 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_special_case() {
        let p = Mmpp2::new(0.3, 0.7, 2.5, 2.5).unwrap();
        assert!((p.mean_rate() - 2.5).abs() < 1e-15);
        assert!((p.scv() - 1.0).abs() < 1e-15);
        assert!(p.lag1_corr().abs() < 1e-15);
        assert!((p.idc_inf() - 1.0).abs() < 1e-15);
        let t = 3.0;
        assert!((p.var_count(t) - 7.5).abs() < 1e-12);
        // Poisson: third factorial moment m^3, third central moment m.
        assert!((p.third_factorial(t) - 7.5f64.powi(3)).abs() < 1e-10);
        assert!((p.third_central(t) - 7.5).abs() < 1e-12);
        assert!((p.third_central_via_factorial(t) - 7.5).abs() < 1e-10);
        assert!((p.interarrival_moment(2) - 2.0 / 6.25).abs() < 1e-15);
    }

    #[test]
    fn ipp_formulas_of_catalogue_convention() {
        // lambda2 = 0: C^2 = 1 + 2 phi1 lambda1 / (phi1+phi2)^2, r1 = 0.
        let p = Mmpp2::new(0.09, 0.06, 4.0, 0.0).unwrap();
        assert!((p.mean_rate() - 4.0 * 0.06 / 0.15).abs() < 1e-14);
        assert!((p.scv() - (1.0 + 2.0 * 0.09 * 4.0 / 0.0225)).abs() < 1e-12);
        assert_eq!(p.lag1_corr(), 0.0);
    }

    #[test]
    fn scv_matches_interarrival_moments() {
        let p = Mmpp2::new(0.5, 0.2, 3.0, 0.4).unwrap();
        let m1 = p.interarrival_moment(1);
        let m2 = p.interarrival_moment(2);
        assert!((m1 - 1.0 / p.mean_rate()).abs() < 1e-14);
        let scv = m2 / (m1 * m1) - 1.0;
        assert!((scv - p.scv()).abs() < 1e-12, "{scv} vs {}", p.scv());
    }

    #[test]
    fn simplified_third_moment_equals_the_printed_route() {
        for p in [
            Mmpp2::new(0.5, 0.2, 3.0, 0.4).unwrap(),
            Mmpp2::new(0.09, 0.06, 4.0, 0.0).unwrap(),
            Mmpp2::new(2.0, 0.7, 0.1, 5.0).unwrap(),
        ] {
            for t in [0.3, 1.0, 5.0, 20.0] {
                let a = p.third_central(t);
                let b = p.third_central_via_factorial(t);
                assert!(
                    (a - b).abs() < 1e-9 * p.third_factorial(t),
                    "t={t}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn small_t_is_stable() {
        let p = Mmpp2::new(0.5, 0.2, 3.0, 0.4).unwrap();
        let t = 1e-9;
        assert!((p.idc(t) - 1.0).abs() < 1e-8);
    }
}
