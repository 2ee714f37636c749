//! The interrupted Poisson process (an MMPP(2) with one silent phase, every
//! MMPP of Wu's figures) as the renewal process it is.
//!
//! After an arrival the source is in its active phase, and the chain has no
//! memory, so the gaps between arrivals are independent and identically
//! distributed. From the active phase (arrival rate λ, left at rate α; the
//! silent phase left at rate β) the time T to the next arrival has the
//! transform E[e^{−sT}] = λ(β + s) / (s² + (λ + α + β)s + λβ), whose
//! denominator has two negative roots −r1 < −r2: T is hyperexponential,
//! Exp(r1) with probability p and Exp(r2) with probability q = 1 − p, where
//! r1 r2 = λβ, r1 − r2 = √((λ + α + β)² − 4λβ) =: δ, p = (λ − r2)/δ and
//! q = (r1 − λ)/δ. The first arrival comes from the stationary phase: the
//! active one with probability β/(α + β), else after the rest of a silent
//! period, Exp(β), and then a gap.
//!
//! A gap costs one uniform u, which picks the branch (u below the smaller of
//! p and q picks that one, so a tiny branch probability keeps its
//! digits), and one unit exponential ([`Stream::exp1`], a ziggurat) times
//! the branch's mean. Stepping the chain instead costs a draw per phase
//! change, of which there are 2/(arrivals per cycle) per arrival (10 at
//! λ = 0.2, α = β = 1).

use crate::des::Stream;
use crate::traffic::sources::ArrivalSource;

/// Hyperexponential renewal process of an IPP (see the module doc).
#[derive(Debug, Clone)]
pub struct IppRenewal {
    p: f64,
    q: f64,
    /// Means 1/r1, 1/r2.
    mean: [f64; 2],
    /// The smaller of p and q, and the means of a uniform below it and
    /// above it.
    below: f64,
    mean_below: f64,
    mean_above: f64,
    rate: f64,
    t: f64,
    rng: Stream,
}

/// x + √(x² + 4c) for c > 0, without cancellation when x < 0.
fn plus_root(x: f64, c: f64, root: f64) -> f64 {
    if x >= 0.0 {
        x + root
    } else {
        4.0 * c / (root - x)
    }
}

impl IppRenewal {
    /// Active phase with arrival rate `lambda` > 0, left at rate `alpha` > 0;
    /// silent phase left at rate `beta` > 0 (the caller validated them).
    pub fn new(lambda: f64, alpha: f64, beta: f64, mut rng: Stream) -> Self {
        // δ² = (λ + α + β)² − 4λβ = (λ + α − β)² + 4αβ = (α + β − λ)² + 4αλ.
        let x = lambda + alpha - beta;
        let delta = (x * x + 4.0 * alpha * beta).sqrt();
        let y = alpha + beta - lambda;
        // r1 − β = (x + δ)/2 and r1 − λ = (y + δ)/2.
        let r1 = beta + 0.5 * plus_root(x, alpha * beta, delta);
        let r2 = lambda * beta / r1;
        // p = (λ − r2)/δ = λ(r1 − β)/(r1 δ); q = (r1 − λ)/δ.
        let p = lambda * 0.5 * plus_root(x, alpha * beta, delta) / (r1 * delta);
        let q = 0.5 * plus_root(y, alpha * lambda, delta) / delta;
        let active = rng.uniform() < beta / (alpha + beta);
        let t = if active { 0.0 } else { rng.exp1() / beta };
        let mean = [1.0 / r1, 1.0 / r2];
        let (below, mean_below, mean_above) = if p <= q {
            (p, mean[0], mean[1])
        } else {
            (q, mean[1], mean[0])
        };
        IppRenewal {
            p,
            q,
            mean,
            below,
            mean_below,
            mean_above,
            rate: lambda * beta / (alpha + beta),
            t,
            rng,
        }
    }

    /// The two rates r1 > r2 and their probabilities p, q.
    pub fn law(&self) -> (f64, f64, f64, f64) {
        (1.0 / self.mean[0], 1.0 / self.mean[1], self.p, self.q)
    }
}

impl ArrivalSource for IppRenewal {
    #[inline]
    fn next_arrival(&mut self) -> f64 {
        let mean = if self.rng.uniform() < self.below {
            self.mean_below
        } else {
            self.mean_above
        };
        self.t += self.rng.exp1() * mean;
        self.t
    }

    fn mean_rate(&self) -> f64 {
        self.rate
    }
}
