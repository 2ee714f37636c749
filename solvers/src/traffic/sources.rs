//! Arrival generators for simulators: Poisson, two-state MMPP (Wu eq 2.1) and a
//! general Markovian arrival process MAP(D0, D1).
//!
//! Each source owns its random [`Stream`] and its clock, and hands out absolute
//! arrival times one at a time. Nothing is allocated per event: the MAP keeps
//! its per-phase jump tables, built once.
//!
//! The sources generate the process from its definition (exponential holding
//! times of the modulating chain, Poisson arrivals within a phase); they do not
//! use any closed-form property of the counting process, so the tests below
//! check them against those closed forms (Wu 2.2, 2.3, 2.12–2.13).

use crate::des::{FastLn, Stream};
use crate::markov::ctmc::Generator;
use crate::SolveError;
use nalgebra::DMatrix;

/// A point process that yields the absolute times of successive arrivals.
pub trait ArrivalSource {
    /// Advances to the next arrival and returns its time (strictly increasing
    /// except with probability zero).
    fn next_arrival(&mut self) -> f64;
    /// Long-run arrival rate (arrivals per unit time).
    fn mean_rate(&self) -> f64;
    /// Internal events so far (phase changes of the modulating chain); arrivals
    /// are not counted. Used to report events per second.
    fn internal_events(&self) -> u64 {
        0
    }
}

/// Poisson process of rate `lambda`.
#[derive(Debug, Clone)]
pub struct PoissonSource {
    lambda: f64,
    t: f64,
    rng: Stream,
}

impl PoissonSource {
    pub fn new(lambda: f64, rng: Stream) -> Result<Self, SolveError> {
        crate::params::positive("lambda", lambda)?;
        Ok(PoissonSource {
            lambda,
            t: 0.0,
            rng,
        })
    }
}

impl ArrivalSource for PoissonSource {
    #[inline]
    fn next_arrival(&mut self) -> f64 {
        self.t += self.rng.exp(self.lambda);
        self.t
    }
    fn mean_rate(&self) -> f64 {
        self.lambda
    }
}

/// Phase changes of [`Mmpp2Source`] between two arrivals after which it
/// reports no further arrival (about a second of work; a run that expects
/// this many per arrival is far over the event budget anyway).
pub const MAX_SWITCHES_PER_ARRIVAL: u64 = 200_000_000;

/// The modulating chain of a two-state MMPP as a source walks it: the
/// current phase, the clock, the end of the current phase, the count of
/// phase changes and the source's stream. Shared by [`Mmpp2Source`] and
/// [`Mmpp2Clock`]; each draws the phase lengths its own way (`len(rng,
/// phase)`), so their draws are their own.
#[derive(Debug, Clone)]
struct PhaseChain {
    phase: usize,
    t: f64,
    /// Absolute time at which the current phase ends.
    t_switch: f64,
    switches: u64,
    rng: Stream,
}

impl PhaseChain {
    /// The phase at time 0 from the stationary distribution
    /// π = (φ2, φ1)/(φ1 + φ2) (one uniform), then its length.
    fn start(
        phi1: f64,
        phi2: f64,
        mut rng: Stream,
        len: impl FnOnce(&mut Stream, usize) -> f64,
    ) -> Self {
        let p1 = phi2 / (phi1 + phi2);
        let phase = if rng.uniform() < p1 { 0 } else { 1 };
        let t_switch = len(&mut rng, phase);
        PhaseChain {
            phase,
            t: 0.0,
            t_switch,
            switches: 0,
            rng,
        }
    }

    /// Ends the current phase (the clock moves to its end) and enters the
    /// other, whose length `len` draws. False once more than
    /// [`MAX_SWITCHES_PER_ARRIVAL`] changes passed since `start` switches.
    #[inline]
    fn switch(&mut self, start: u64, len: impl FnOnce(&mut Stream, usize) -> f64) -> bool {
        self.t = self.t_switch;
        self.phase ^= 1;
        self.switches += 1;
        self.t_switch = self.t + len(&mut self.rng, self.phase);
        self.switches - start <= MAX_SWITCHES_PER_ARRIVAL
    }
}

/// Two-state MMPP with generator Q = [[−φ1, φ1], [φ2, −φ2]] and rates
/// Λ = diag(λ1, λ2) (Wu eq 2.1): φ1 is the rate of leaving phase 1, φ2 the
/// rate of leaving phase 2. The phase at time 0 is drawn from the stationary
/// distribution π = (φ2, φ1)/(φ1 + φ2), so the process is stationary from the start.
#[derive(Debug, Clone)]
pub struct Mmpp2Source {
    phi: [f64; 2],
    lambda: [f64; 2],
    mean: f64,
    chain: PhaseChain,
}

impl Mmpp2Source {
    /// φ1, φ2 > 0 (an irreducible modulating chain), λ1, λ2 >= 0 with a positive mean rate.
    pub fn new(
        phi1: f64,
        phi2: f64,
        lambda1: f64,
        lambda2: f64,
        rng: Stream,
    ) -> Result<Self, SolveError> {
        // One validation (and mean rate) for the analytic and the simulated MMPP.
        let mean = crate::traffic::mmpp::Mmpp2::new(phi1, phi2, lambda1, lambda2)?.mean_rate();
        let phi = [phi1, phi2];
        Ok(Mmpp2Source {
            phi,
            lambda: [lambda1, lambda2],
            mean,
            chain: PhaseChain::start(phi1, phi2, rng, |r, ph| r.exp(phi[ph])),
        })
    }

    /// Current phase, 0 or 1 (Wu's phases 1 and 2).
    pub fn phase(&self) -> usize {
        self.chain.phase
    }
}

impl ArrivalSource for Mmpp2Source {
    /// Returns +inf once [`MAX_SWITCHES_PER_ARRIVAL`] phase changes pass
    /// without an arrival: at a simulated time so large that a phase rounds
    /// to zero length, its arrivals can no longer happen and the loop would
    /// never end. Callers refuse such runs up front
    /// ([`crate::params::sim_time_resolution`]); this is the safety net.
    #[inline]
    fn next_arrival(&mut self) -> f64 {
        let c = &mut self.chain;
        let start = c.switches;
        let phi = self.phi;
        loop {
            // Arrival and phase change compete; by memorylessness the arrival
            // candidate can be redrawn after a phase change.
            let rate = self.lambda[c.phase];
            if rate > 0.0 {
                let cand = c.t + c.rng.exp(rate);
                if cand < c.t_switch {
                    c.t = cand;
                    return cand;
                }
            }
            if !c.switch(start, |r, ph| r.exp(phi[ph])) {
                return f64::INFINITY;
            }
        }
    }

    fn mean_rate(&self) -> f64 {
        self.mean
    }

    fn internal_events(&self) -> u64 {
        self.chain.switches
    }
}

/// An MMPP(2) source on an intensity clock (the MMPP queue simulators' source): the
/// arrivals are the epochs at which Λ(t) = ∫λ(phase(s))ds passes the sums
/// of independent unit exponentials (the time change that makes a Cox
/// process out of a unit Poisson process). An arrival costs one unit
/// exponential and a phase change one exponential of its length; unlike
/// [`Mmpp2Source`], which races a fresh arrival candidate
/// against each phase end, no draw is thrown away at a phase change.
/// Exponentials by [`FastLn::exp`].
#[derive(Debug, Clone)]
pub struct Mmpp2Clock {
    lambda: [f64; 2],
    /// 1/λ per phase (+inf for a silent phase).
    inv_lambda: [f64; 2],
    /// Mean phase lengths 1/φ.
    mean_phase: [f64; 2],
    mean: f64,
    chain: PhaseChain,
    /// Intensity still to accumulate before the next arrival.
    need: f64,
    ln: FastLn,
}

impl Mmpp2Clock {
    /// Starts in the stationary phase distribution (as [`Mmpp2Source`]
    /// does: one uniform, then the phase's length); the same parameter rules.
    pub fn new(
        phi1: f64,
        phi2: f64,
        lambda1: f64,
        lambda2: f64,
        rng: Stream,
    ) -> Result<Self, SolveError> {
        let mean = crate::traffic::mmpp::Mmpp2::new(phi1, phi2, lambda1, lambda2)?.mean_rate();
        let ln = FastLn::new();
        let mean_phase = [1.0 / phi1, 1.0 / phi2];
        let mut chain = PhaseChain::start(phi1, phi2, rng, |r, ph| ln.exp(r, mean_phase[ph]));
        let need = ln.exp(&mut chain.rng, 1.0);
        Ok(Mmpp2Clock {
            lambda: [lambda1, lambda2],
            inv_lambda: [1.0 / lambda1, 1.0 / lambda2],
            mean_phase,
            mean,
            chain,
            need,
            ln,
        })
    }
}

impl ArrivalSource for Mmpp2Clock {
    /// Returns +inf once [`MAX_SWITCHES_PER_ARRIVAL`] phase changes pass
    /// without an arrival (the safety net of [`Mmpp2Source`]).
    #[inline]
    fn next_arrival(&mut self) -> f64 {
        let c = &mut self.chain;
        let start = c.switches;
        let (ln, mean_phase) = (&self.ln, &self.mean_phase);
        loop {
            let p = c.phase;
            if self.lambda[p] > 0.0 {
                let cand = c.t + self.need * self.inv_lambda[p];
                if cand < c.t_switch {
                    c.t = cand;
                    self.need = ln.exp(&mut c.rng, 1.0);
                    return cand;
                }
                self.need = (self.need - (c.t_switch - c.t) * self.lambda[p]).max(0.0);
            }
            if !c.switch(start, |r, ph| ln.exp(r, mean_phase[ph])) {
                return f64::INFINITY;
            }
        }
    }
    fn mean_rate(&self) -> f64 {
        self.mean
    }
    fn internal_events(&self) -> u64 {
        self.chain.switches
    }
}

/// Markovian arrival process MAP(D0, D1) with m phases: D0 holds the hidden
/// transitions (diagonal = −total outflow), D1 the transitions that carry an
/// arrival. The phase at time 0 is drawn from the stationary vector of D0 + D1.
#[derive(Debug, Clone)]
pub struct MapSource {
    m: usize,
    /// Total outflow rate of each phase (−D0[i][i]).
    out: Vec<f64>,
    /// Per phase i, 2m cumulative jump probabilities: targets 0..m are hidden
    /// moves (D0), m..2m arrival moves (D1).
    cum: Vec<f64>,
    phase: usize,
    t: f64,
    rate: f64,
    hidden: u64,
    rng: Stream,
}

impl MapSource {
    pub fn new(d0: &DMatrix<f64>, d1: &DMatrix<f64>, mut rng: Stream) -> Result<Self, SolveError> {
        let m = d0.nrows();
        if m == 0 || d0.ncols() != m || d1.nrows() != m || d1.ncols() != m {
            return Err(SolveError::param(
                "D0",
                "D0 and D1 must be square matrices of the same size >= 1",
            ));
        }
        let mut out = vec![0.0; m];
        let mut cum = vec![0.0; 2 * m * m];
        let mut gen = Generator::new(m);
        for i in 0..m {
            let mut total = 0.0;
            for j in 0..m {
                let h = if i == j { 0.0 } else { d0[(i, j)] };
                let a = d1[(i, j)];
                if !(h.is_finite() && h >= 0.0) {
                    return Err(SolveError::param(
                        "D0",
                        format!("off-diagonal entry ({i}, {j}) must be finite and >= 0"),
                    ));
                }
                if !(a.is_finite() && a >= 0.0) {
                    return Err(SolveError::param(
                        "D1",
                        format!("entry ({i}, {j}) must be finite and >= 0"),
                    ));
                }
                total += h + a;
                gen.add(i, j, h + a);
            }
            let diag = -d0[(i, i)];
            if total <= 0.0 || (diag - total).abs() > 1e-9 * total.max(1.0) {
                return Err(SolveError::param(
                    "D0",
                    format!("row {i}: −D0[{i}][{i}] = {diag} must equal the row's other rates of D0 and D1 ({total}) and be > 0"),
                ));
            }
            out[i] = total;
            let mut acc = 0.0;
            for j in 0..m {
                acc += if i == j { 0.0 } else { d0[(i, j)] } / total;
                cum[2 * m * i + j] = acc;
            }
            for j in 0..m {
                acc += d1[(i, j)] / total;
                cum[2 * m * i + m + j] = acc;
            }
            // Rounding must not leave a gap at the top of the last arrival move.
            cum[2 * m * i + 2 * m - 1] = f64::INFINITY;
        }
        let pi = if m == 1 {
            vec![1.0]
        } else {
            gen.steady_state().map_err(|e| {
                SolveError::param("D0", format!("D0 + D1 must be irreducible ({e})"))
            })?
        };
        let rate: f64 = (0..m)
            .map(|i| pi[i] * (0..m).map(|j| d1[(i, j)]).sum::<f64>())
            .sum();
        if rate.is_nan() || rate <= 0.0 {
            return Err(SolveError::param(
                "D1",
                "the process has no arrivals (π·D1·e = 0)",
            ));
        }
        let u = rng.uniform();
        let mut acc = 0.0;
        let mut phase = m - 1;
        for (i, p) in pi.iter().enumerate() {
            acc += p;
            if u < acc {
                phase = i;
                break;
            }
        }
        Ok(MapSource {
            m,
            out,
            cum,
            phase,
            t: 0.0,
            rate,
            hidden: 0,
            rng,
        })
    }

    pub fn phase(&self) -> usize {
        self.phase
    }
}

impl ArrivalSource for MapSource {
    #[inline]
    fn next_arrival(&mut self) -> f64 {
        let m = self.m;
        loop {
            let i = self.phase;
            self.t += self.rng.exp(self.out[i]);
            let u = self.rng.uniform();
            let row = &self.cum[2 * m * i..2 * m * (i + 1)];
            let k = row.iter().position(|&c| u < c).unwrap_or(2 * m - 1);
            if k < m {
                self.phase = k;
                self.hidden += 1;
            } else {
                self.phase = k - m;
                return self.t;
            }
        }
    }

    fn mean_rate(&self) -> f64 {
        self.rate
    }

    fn internal_events(&self) -> u64 {
        self.hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Var[N(t)] of the stationary MMPP(2), Wu eq 2.3.
    fn mmpp_var(phi1: f64, phi2: f64, l1: f64, l2: f64, t: f64) -> f64 {
        let s = phi1 + phi2;
        let mean_rate = (l1 * phi2 + l2 * phi1) / s;
        let d2 = (l1 - l2).powi(2);
        mean_rate * t + 2.0 * d2 * phi1 * phi2 / s.powi(3) * t
            - 2.0 * phi1 * phi2 * d2 / s.powi(4) * (1.0 - (-s * t).exp())
    }

    /// Sample mean and variance of counts in `windows` consecutive windows of length `t`.
    fn window_counts(src: &mut impl ArrivalSource, t: f64, windows: usize) -> (f64, f64) {
        let mut counts = vec![0u64; windows];
        let end = t * windows as f64;
        loop {
            let a = src.next_arrival();
            if a >= end {
                break;
            }
            counts[(a / t) as usize] += 1;
        }
        let n = windows as f64;
        let mean = counts.iter().sum::<u64>() as f64 / n;
        let var = counts
            .iter()
            .map(|&c| (c as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        (mean, var)
    }

    #[test]
    fn mmpp_rate_variance_and_idc_match_wu_2_2_to_2_13() {
        let (phi1, phi2, l1, l2) = (0.5, 1.0, 5.0, 0.5);
        let s = phi1 + phi2;
        let rate = (l1 * phi2 + l2 * phi1) / s;
        // Short windows: transient part of (2.3) matters.
        let t = 2.0;
        let mut src = Mmpp2Source::new(phi1, phi2, l1, l2, Stream::new(11, 0)).unwrap();
        assert!((src.mean_rate() - rate).abs() < 1e-15);
        let (m, v) = window_counts(&mut src, t, 400_000);
        assert!(
            (m / t - rate).abs() / rate < 0.005,
            "rate {} vs {rate}",
            m / t
        );
        let v_exact = mmpp_var(phi1, phi2, l1, l2, t);
        assert!((v - v_exact).abs() / v_exact < 0.02, "Var {v} vs {v_exact}");
        // The IDC at t (2.12) is distinctly above 1 here, so the check has teeth.
        let idc_exact = v_exact / (rate * t);
        assert!(idc_exact > 2.0);
        assert!(((v / m) - idc_exact).abs() / idc_exact < 0.03);
        // Long windows approach the limiting IDC (2.13): 1 + 2φ1φ2(λ1−λ2)²/(λ̄ s³).
        let t_long = 60.0;
        let idc_limit = 1.0 + 2.0 * phi1 * phi2 * (l1 - l2).powi(2) / (rate * s.powi(3));
        let idc_t = mmpp_var(phi1, phi2, l1, l2, t_long) / (rate * t_long);
        assert!((idc_t - idc_limit).abs() / idc_limit < 0.02);
        let mut src = Mmpp2Source::new(phi1, phi2, l1, l2, Stream::new(12, 0)).unwrap();
        let (m, v) = window_counts(&mut src, t_long, 30_000);
        assert!(
            ((v / m) - idc_t).abs() / idc_t < 0.04,
            "IDC {} vs {idc_t}",
            v / m
        );
    }

    #[test]
    fn mmpp_starts_in_the_stationary_phase() {
        let (phi1, phi2) = (0.3, 0.1);
        let n = 40_000;
        let in_phase1 = (0..n)
            .filter(|&k| {
                Mmpp2Source::new(phi1, phi2, 1.0, 2.0, Stream::new(k, 5))
                    .unwrap()
                    .phase()
                    == 0
            })
            .count() as f64
            / n as f64;
        // π1 = φ2/(φ1+φ2) = 0.25; sd of the estimate ≈ 0.0022.
        assert!((in_phase1 - 0.25).abs() < 0.01, "{in_phase1}");
    }

    #[test]
    fn interrupted_poisson_and_degenerate_mmpp_work() {
        // λ2 = 0 (the IPP of Wu's validation figures).
        let mut src = Mmpp2Source::new(0.2, 0.1, 3.0, 0.0, Stream::new(3, 1)).unwrap();
        let (m, _) = window_counts(&mut src, 10.0, 50_000);
        let rate = 3.0 * 0.1 / 0.3;
        assert!((m / 10.0 - rate).abs() / rate < 0.02);
        // λ1 = λ2: Poisson, IDC = 1.
        let mut src = Mmpp2Source::new(0.2, 0.1, 2.0, 2.0, Stream::new(3, 2)).unwrap();
        let (m, v) = window_counts(&mut src, 5.0, 100_000);
        assert!((v / m - 1.0).abs() < 0.02);
    }

    #[test]
    fn map_source_reproduces_the_mmpp_and_a_renewal_process() {
        let (phi1, phi2, l1, l2) = (0.5, 1.0, 5.0, 0.5);
        let d0 = DMatrix::from_row_slice(2, 2, &[-phi1 - l1, phi1, phi2, -phi2 - l2]);
        let d1 = DMatrix::from_row_slice(2, 2, &[l1, 0.0, 0.0, l2]);
        let mut src = MapSource::new(&d0, &d1, Stream::new(21, 0)).unwrap();
        let rate = (l1 * phi2 + l2 * phi1) / (phi1 + phi2);
        assert!((src.mean_rate() - rate).abs() < 1e-12);
        let t = 2.0;
        let (m, v) = window_counts(&mut src, t, 200_000);
        assert!((m / t - rate).abs() / rate < 0.01);
        let v_exact = mmpp_var(phi1, phi2, l1, l2, t);
        assert!((v - v_exact).abs() / v_exact < 0.04, "{v} vs {v_exact}");

        // Erlang-2 renewal process of rate 1 as a MAP: inter-arrival SCV 1/2.
        let d0 = DMatrix::from_row_slice(2, 2, &[-2.0, 2.0, 0.0, -2.0]);
        let d1 = DMatrix::from_row_slice(2, 2, &[0.0, 0.0, 2.0, 0.0]);
        let mut src = MapSource::new(&d0, &d1, Stream::new(21, 1)).unwrap();
        assert!((src.mean_rate() - 1.0).abs() < 1e-12);
        let n = 200_000;
        let mut prev = src.next_arrival();
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let a = src.next_arrival();
            let x = a - prev;
            prev = a;
            s1 += x;
            s2 += x * x;
        }
        let mean = s1 / n as f64;
        let scv = (s2 / n as f64 - mean * mean) / (mean * mean);
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
        assert!((scv - 0.5).abs() < 0.02, "{scv}");
    }

    #[test]
    fn poisson_source_rate_and_bad_parameters() {
        let mut src = PoissonSource::new(4.0, Stream::new(1, 1)).unwrap();
        let (m, v) = window_counts(&mut src, 1.0, 100_000);
        assert!((m - 4.0).abs() < 0.04 && (v / m - 1.0).abs() < 0.03);
        assert!(PoissonSource::new(0.0, Stream::new(1, 1)).is_err());
        assert!(Mmpp2Source::new(0.0, 1.0, 1.0, 1.0, Stream::new(1, 1)).is_err());
        assert!(Mmpp2Source::new(1.0, 1.0, 0.0, 0.0, Stream::new(1, 1)).is_err());
        assert!(Mmpp2Source::new(1.0, 1.0, -1.0, 1.0, Stream::new(1, 1)).is_err());
        let bad_d0 = DMatrix::from_row_slice(2, 2, &[-1.0, 2.0, 0.0, -2.0]);
        let d1 = DMatrix::from_row_slice(2, 2, &[0.0, 0.0, 2.0, 0.0]);
        assert!(MapSource::new(&bad_d0, &d1, Stream::new(1, 1)).is_err());
        let no_arrivals = DMatrix::zeros(2, 2);
        let d0 = DMatrix::from_row_slice(2, 2, &[-1.0, 1.0, 1.0, -1.0]);
        assert!(MapSource::new(&d0, &no_arrivals, Stream::new(1, 1)).is_err());
    }
}
