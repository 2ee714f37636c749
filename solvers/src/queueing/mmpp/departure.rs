//! Departure process of an MMPP/M/1 queue approximated by a two-state MMPP
//! (Wu §6.2.2, 6.13–6.14 with W-42, W-43; catalogue §5 M-3).
//!
//! Method (documented in docs/models/queueing.md): the departure process of
//! the queue is exactly a MAP on the phases (level n, MMPP phase j) whose D1
//! holds the service completions. We truncate it at a level L whose
//! stationary tail mass is below 1e-10 and compute its counting
//! characteristics exactly — rate, IDC(t) and the third central moment at the
//! fitting time t, from the moment ODE of the centred count solved in the
//! Laplace domain (banded solves) and inverted numerically at t (see
//! [`super::counts`]; [`departure_factorial_moments`] integrates the
//! factorial-moment ODE by uniformisation instead, and is kept as the
//! independent reference of the tests) — plus IDC(inf), which for a
//! stable queue equals that of the arrivals. The two-state MMPP is then the
//! Heffes–Lucantoni fit of these four characteristics, i.e. the same routine
//! that fits superpositions (Wu 3.24–3.34). The inter-departure moments of
//! (6.13) are provided as a cross-check.

use super::counts::departure_count_moments;
use super::mm1::mmpp_m1;
use super::mm1k::mmpp_m1k;
use crate::traffic::mmpp::fit::{fit_mmpp2, Characteristics, Fit};
use crate::traffic::mmpp::{Map, Mmpp2};
use crate::SolveError;
use nalgebra::{DMatrix, Matrix2, RowVector2, Vector2};

/// Result of the departure-process approximation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepartureFit {
    /// The fitted two-state MMPP and how the fit was obtained.
    pub fit: Fit,
    /// The exact characteristics of the (truncated) departure process that were matched.
    pub target: Characteristics,
    /// Truncation level of the departure MAP.
    pub levels: usize,
}

/// Largest truncation accepted (the work grows linearly with it).
const MAX_LEVELS: usize = 200_000;

/// The first three moments of the stationary inter-departure time of an
/// MMPP/M/1 queue, (6.13) with H(s) = mu / (mu + s) (W-42) and the
/// departure-epoch empty-phase vector x0 = mu x_1 / mean_rate (W-43).
pub fn interdeparture_moments(p: &Mmpp2, mu: f64) -> Result<[f64; 3], SolveError> {
    let q = mmpp_m1(p, mu)?;
    let x1 = q.level_vector(1);
    let x0: RowVector2<f64> = x1 * (mu / q.mean_rate);
    let b0 = Matrix2::new(-p.phi1 - p.lambda1, p.phi1, p.phi2, -p.phi2 - p.lambda2);
    let binv = b0
        .try_inverse()
        .ok_or_else(|| SolveError::Numerical("Q - Lambda is singular".into()))?;
    let e = Vector2::new(1.0, 1.0);
    // H^{(v)}(0) = (-1)^v v! / mu^v.
    let h = |v: u32| -> f64 {
        let f: f64 = (1..=v).map(|i| i as f64).product();
        (-1.0f64).powi(v as i32) * f / mu.powi(v as i32)
    };
    let mut out = [0.0; 3];
    for n in 1..=3u32 {
        let nf: f64 = (1..=n).map(|i| i as f64).product();
        let mut s = 0.0;
        for v in 0..n {
            let vf: f64 = (1..=v).map(|i| i as f64).product();
            let mut bp = Matrix2::identity();
            for _ in 0..(n - v) {
                bp *= binv;
            }
            s += nf / vf * h(v) * (x0 * bp * e)[0];
        }
        let sign = (-1.0f64).powi(n as i32);
        out[n as usize - 1] = sign * s + sign * h(n);
    }
    Ok(out)
}

/// Factorial moments E[D(t)], E[D(D-1)], E[D(D-1)(D-2)] of the departures
/// in (0, t] of the stationary MMPP/M/1/L queue (arrivals at L are lost).
pub fn departure_factorial_moments(
    p: &Mmpp2,
    mu: f64,
    levels: usize,
    t: f64,
) -> Result<[f64; 3], SolveError> {
    let st = mmpp_m1k(p, mu, levels)?;
    let pi = &st.p;
    let n = pi.len();
    let lam = [p.lambda1, p.lambda2];
    let phi = [p.phi1, p.phi2];
    let l = levels;
    let q = (0..2).map(|j| phi[j] + lam[j] + mu).fold(0.0, f64::max);
    // x (I + D/q) and x D1 / q for the bivariate chain, written out: no matrices.
    let step_d = |x: &[f64], y: &mut [f64]| {
        for v in 0..=l {
            for j in 0..2 {
                let s = 2 * v + j;
                let out = phi[j] + if v < l { lam[j] } else { 0.0 } + if v >= 1 { mu } else { 0.0 };
                let mut acc = x[s] * (1.0 - out / q);
                acc += x[2 * v + 1 - j] * phi[1 - j] / q;
                if v >= 1 {
                    acc += x[s - 2] * lam[j] / q;
                }
                if v < l {
                    acc += x[s + 2] * mu / q;
                }
                y[s] = acc;
            }
        }
    };
    let add_d1 = |x: &[f64], k: f64, y: &mut [f64]| {
        for v in 0..l {
            for j in 0..2 {
                y[2 * v + j] += k * x[2 * v + 2 + j] * mu / q;
            }
        }
    };
    // u0 = pi stays constant (pi D = 0); u1..u3 start at 0.
    let mut u = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    let mut tmp = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    // Chunks with q dt <= 20 keep e^{-q dt} representable and the series short.
    let chunks = ((q * t / 20.0).ceil() as usize).max(1);
    let dt = t / chunks as f64;
    let qdt = q * dt;
    let terms = (qdt + 12.0 * qdt.sqrt() + 40.0) as usize;
    let mut acc = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    // Powers w P^i are carried in `cur`; the u0 block is pi throughout.
    let mut cur = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for _ in 0..chunks {
        for k in 0..3 {
            cur[k].copy_from_slice(&u[k]);
        }
        let mut weight = (-qdt).exp();
        for k in 0..3 {
            for (a, c) in acc[k].iter_mut().zip(&cur[k]) {
                *a = weight * c;
            }
        }
        for i in 1..=terms {
            // next_k = cur_k (I + D/q) + k cur_{k-1} D1 / q, cur_0 = pi.
            for k in 0..3 {
                step_d(&cur[k], &mut tmp[k]);
            }
            add_d1(pi, 1.0, &mut tmp[0]);
            add_d1(&cur[0], 2.0, &mut tmp[1]);
            add_d1(&cur[1], 3.0, &mut tmp[2]);
            std::mem::swap(&mut cur, &mut tmp);
            weight *= qdt / i as f64;
            for k in 0..3 {
                for (a, c) in acc[k].iter_mut().zip(&cur[k]) {
                    *a += weight * c;
                }
            }
        }
        for k in 0..3 {
            u[k].copy_from_slice(&acc[k]);
        }
    }
    Ok([u[0].iter().sum(), u[1].iter().sum(), u[2].iter().sum()])
}

/// Truncation level: the smallest L with P(level >= L) < 1e-10 in the
/// infinite queue, at least 8.
pub(crate) fn truncation(p: &Mmpp2, mu: f64) -> Result<usize, SolveError> {
    let q = mmpp_m1(p, mu)?;
    let mut x = q.pi;
    let mut l = 0;
    while x.sum() >= 1e-10 || l < 8 {
        x *= q.r;
        l += 1;
        if l > MAX_LEVELS {
            return Err(SolveError::Numerical(format!(
                "departure process: the queue tail needs more than {MAX_LEVELS} levels (rho = {})",
                q.rho
            )));
        }
    }
    Ok(l)
}

/// Two-state MMPP approximating the departures of the MMPP/M/1 queue
/// (arrivals `p`, service rate `mu`), matched at time `t` (default: the W-5
/// time of the arrivals, (1/phi1 + 1/phi2) / 2).
pub fn departure_mmpp2(p: &Mmpp2, mu: f64, t: Option<f64>) -> Result<DepartureFit, SolveError> {
    departure_fit(p, mu, t)
}

fn departure_fit(p: &Mmpp2, mu: f64, t: Option<f64>) -> Result<DepartureFit, SolveError> {
    let levels = truncation(p, mu)?;
    let given = t.is_some();
    let t = t.unwrap_or(0.5 * (1.0 / p.phi1 + 1.0 / p.phi2));
    crate::params::positive("t", t)?;
    let m = departure_count_moments(p, mu, levels, t).map_err(|e| match e {
        // The default t follows the slower phase: that is what to change.
        SolveError::InvalidParam { .. } if !given => SolveError::param(
            if p.phi1 < p.phi2 { "phi1" } else { "phi2" },
            format!("the fitting time (1/phi1 + 1/phi2)/2 = {t:e} is out of range: {e}"),
        ),
        e => e,
    })?;
    let target = Characteristics {
        t,
        rate: m.mean / t,
        idc_t: m.var / m.mean,
        idc_inf: p.idc_inf(),
        third_central_t: m.third_central,
    };
    let fit = fit_mmpp2(&target)?;
    Ok(DepartureFit {
        fit,
        target,
        levels,
    })
}

/// The departure MAP of MMPP/M/1/K on phases (level v, MMPP phase j), v = 0..=K:
/// D1 holds the service completions, D0 everything else. Its size is 2(K+1),
/// so callers bound K before asking for it.
pub fn finite_departure_map(p: &Mmpp2, mu: f64, k: usize) -> Result<Map, SolveError> {
    let n = 2 * (k + 1);
    let mut d0 = DMatrix::zeros(n, n);
    let mut d1 = DMatrix::zeros(n, n);
    let lam = [p.lambda1, p.lambda2];
    let phi = [p.phi1, p.phi2];
    for v in 0..=k {
        for j in 0..2 {
            let s = 2 * v + j;
            d0[(s, 2 * v + 1 - j)] += phi[j];
            if v < k {
                d0[(s, s + 2)] += lam[j];
            }
            if v >= 1 {
                d1[(s, s - 2)] += mu;
            }
        }
    }
    for s in 0..n {
        let out: f64 = d0.row(s).sum() + d1.row(s).sum();
        d0[(s, s)] = -out;
    }
    Map::new(d0, d1)
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    fn departure_map(p: &Mmpp2, mu: f64, l: usize) -> Map {
        finite_departure_map(p, mu, l).unwrap()
    }

    #[test]
    fn uniformisation_matches_block_exponential() {
        let p = Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap();
        let (mu, l) = (2.0, 12);
        let m = departure_map(&p, mu, l);
        for t in [0.3, 2.0, 9.0] {
            let a = departure_factorial_moments(&p, mu, l, t).unwrap();
            let b = m.factorial_moments(t).unwrap();
            for k in 0..3 {
                assert!(rel(a[k], b[k]) < 1e-10, "t={t} k={k}: {} vs {}", a[k], b[k]);
            }
        }
    }

    #[test]
    fn interdeparture_moments_match_the_departure_map() {
        let p = Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap();
        let mu = 2.5;
        let m = departure_map(&p, mu, 90);
        let a = interdeparture_moments(&p, mu).unwrap();
        for k in 0..3 {
            let b = m.interarrival_moment(k as u32 + 1).unwrap();
            assert!(rel(a[k], b) < 1e-9, "k={k}: {} vs {b}", a[k]);
        }
        assert!(rel(a[0], 1.0 / p.mean_rate()) < 1e-12);
    }

    #[test]
    fn poisson_input_gives_poisson_output() {
        // Burke: M/M/1 departures are Poisson.
        let p = Mmpp2::new(0.5, 0.5, 1.2, 1.2).unwrap();
        let d = departure_mmpp2(&p, 2.0, Some(3.0)).unwrap();
        assert!(rel(d.target.rate, 1.2) < 1e-9);
        assert!((d.target.idc_t - 1.0).abs() < 1e-9);
        assert!(rel(d.fit.mmpp.mean_rate(), 1.2) < 1e-9);
    }

    #[test]
    fn fit_reproduces_the_departure_characteristics() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let mu = 2.4;
        let d = departure_mmpp2(&p, mu, None).unwrap();
        let back = Characteristics::of(&d.fit.mmpp, d.target.t);
        assert!(rel(back.rate, p.mean_rate()) < 1e-9);
        assert!(rel(back.idc_t, d.target.idc_t) < 1e-8);
        assert!(rel(back.idc_inf, d.target.idc_inf) < 1e-9);
        // The queue smooths the arrivals: IDC(t) of departures below arrivals'.
        assert!(d.target.idc_t < p.idc(d.target.t));
    }

    /// Independent check: simulate the queue customer by customer (MMPP
    /// arrivals, Exp(mu) services, FIFO departures D_n = max(A_n, D_{n-1}) + S_n),
    /// count departures in windows of length t and compare the rate and IDC(t)
    /// with the exact characteristics that the fitted MMPP reproduces.
    #[test]
    fn departure_stream_simulation_matches() {
        use crate::des::{ci95, Stream};
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let mu = 2.4;
        let d = departure_mmpp2(&p, mu, Some(4.0)).unwrap();
        let t = d.target.t;
        let mut rng = Stream::new(7, 3);
        let (lam, phi) = ([p.lambda1, p.lambda2], [p.phi1, p.phi2]);
        let mut phase = if rng.uniform() < p.stationary()[0] {
            0
        } else {
            1
        };
        let mut next_switch = rng.exp(phi[phase]);
        let (mut now, mut last_dep) = (0.0f64, 0.0f64);
        let (warm, batches, windows) = (200.0, 20, 4000usize);
        let mut counts = vec![0u32; batches * windows];
        let end = warm + t * (batches * windows) as f64;
        while last_dep < end {
            // Next arrival of the MMPP.
            loop {
                let a = now + rng.exp(lam[phase]);
                if a < next_switch {
                    now = a;
                    break;
                }
                now = next_switch;
                phase = 1 - phase;
                next_switch = now + rng.exp(phi[phase]);
            }
            last_dep = last_dep.max(now) + rng.exp(mu);
            if last_dep >= warm && last_dep < end {
                counts[((last_dep - warm) / t) as usize] += 1;
            }
        }
        let (mut rates, mut idcs) = (Vec::new(), Vec::new());
        for b in counts.chunks(windows) {
            let n = b.len() as f64;
            let m = b.iter().map(|&c| c as f64).sum::<f64>() / n;
            let v = b.iter().map(|&c| (c as f64 - m).powi(2)).sum::<f64>() / (n - 1.0);
            rates.push(m / t);
            idcs.push(v / m);
        }
        let (r, rh) = ci95(&rates);
        let (i, ih) = ci95(&idcs);
        assert!(
            (r - d.target.rate).abs() <= 3.0 * rh + 1e-9,
            "rate {r} ± {rh} vs {}",
            d.target.rate
        );
        // Windows within a batch are correlated: allow a 2% bias of the variance estimator.
        assert!(
            (i - d.target.idc_t).abs() <= 3.0 * ih + 0.02 * d.target.idc_t,
            "IDC(t) {i} ± {ih} vs {}",
            d.target.idc_t
        );
        assert!(ih < 0.1 * d.target.idc_t);
        // And the fitted MMPP carries the same IDC(t).
        assert!(rel(d.fit.mmpp.idc(t), d.target.idc_t) < 1e-8);
        // The departures are smoother than the arrivals at this t: the check can tell.
        assert!(
            (p.idc(t) - d.target.idc_t) > 6.0 * ih,
            "{} vs {}",
            p.idc(t),
            d.target.idc_t
        );
    }
}
