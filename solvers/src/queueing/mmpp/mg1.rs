//! MMPP/G/1 mean waiting times (Wu 3.37–3.38 with erratum W-11): the virtual
//! waiting time Wv and the waiting time in queue seen by arrivals W, for
//! services that are a deterministic shift plus an exponential, or finite
//! mixtures of those (catalogue §3.0, W-12).
//!
//! G (Lucantoni 1991) is the unique stochastic solution of
//! G = sum_i w_i e^{M c_i} alpha_i (alpha_i I - M)^{-1}, M = D0 + D1 G,
//! found by a few functional-iteration steps from a stochastic start and then
//! Newton on its two free entries; everything is 2x2 on the stack.

use crate::traffic::mmpp::Mmpp2;
use crate::SolveError;
use nalgebra::{Matrix2, RowVector2};

/// One service component: deterministic `shift` (>= 0) plus Exp(`rate`)
/// (`rate` = None means no exponential part).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftExp {
    pub weight: f64,
    pub shift: f64,
    pub rate: Option<f64>,
}

impl ShiftExp {
    fn mean(&self) -> f64 {
        self.shift + self.rate.map_or(0.0, |a| 1.0 / a)
    }
    fn second_moment(&self) -> f64 {
        let c = self.shift;
        match self.rate {
            Some(a) => c * c + 2.0 * c / a + 2.0 / (a * a),
            None => c * c,
        }
    }
    /// Matrix LST integral: e^{M c} alpha (alpha I - M)^{-1}.
    #[inline]
    fn kernel(&self, m: &Matrix2<f64>) -> Matrix2<f64> {
        let mut k = if self.shift > 0.0 {
            expm2(m, self.shift)
        } else {
            Matrix2::identity()
        };
        if let Some(a) = self.rate {
            let x = Matrix2::identity() * a - m;
            // alpha I - M is a nonsingular M-matrix here (M is a sub-/generator).
            let det = x[(0, 0)] * x[(1, 1)] - x[(0, 1)] * x[(1, 0)];
            let inv = Matrix2::new(x[(1, 1)], -x[(0, 1)], -x[(1, 0)], x[(0, 0)]) * (a / det);
            k *= inv;
        }
        k
    }
}

/// A service-time law: a finite mixture of shift + exponential components.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    pub parts: Vec<ShiftExp>,
}

impl Service {
    /// Validates weights (> 0, summing to 1 within 1e-9), shifts (>= 0),
    /// rates (> 0) and that every component has a positive mean.
    pub fn new(parts: Vec<ShiftExp>) -> Result<Self, SolveError> {
        if parts.is_empty() {
            return Err(SolveError::param("service.mixture", "must not be empty"));
        }
        let mut total = 0.0;
        for (i, p) in parts.iter().enumerate() {
            if !(p.weight.is_finite() && p.weight > 0.0) {
                return Err(SolveError::param(
                    "service.mixture.weight",
                    format!("component {i}: must be > 0, got {}", p.weight),
                ));
            }
            if !(p.shift.is_finite() && p.shift >= 0.0) {
                return Err(SolveError::param(
                    "service.shift",
                    format!("component {i}: must be >= 0, got {}", p.shift),
                ));
            }
            if let Some(a) = p.rate {
                if !(a.is_finite() && a > 0.0) {
                    return Err(SolveError::param(
                        "service.rate",
                        format!("component {i}: must be > 0, got {a}"),
                    ));
                }
            }
            if p.mean() <= 0.0 {
                return Err(SolveError::param(
                    "service",
                    format!("component {i}: needs a shift > 0 or a rate (zero service time)"),
                ));
            }
            total += p.weight;
        }
        if (total - 1.0).abs() > 1e-9 {
            return Err(SolveError::param(
                "service.mixture.weight",
                format!("weights must sum to 1, got {total}"),
            ));
        }
        Ok(Service { parts })
    }

    pub fn exponential(rate: f64) -> Self {
        Service {
            parts: vec![ShiftExp {
                weight: 1.0,
                shift: 0.0,
                rate: Some(rate),
            }],
        }
    }

    pub fn deterministic(c: f64) -> Self {
        Service {
            parts: vec![ShiftExp {
                weight: 1.0,
                shift: c,
                rate: None,
            }],
        }
    }

    pub fn mean(&self) -> f64 {
        self.parts.iter().map(|p| p.weight * p.mean()).sum()
    }

    pub fn second_moment(&self) -> f64 {
        self.parts
            .iter()
            .map(|p| p.weight * p.second_moment())
            .sum()
    }

    #[inline]
    fn kernel(&self, m: &Matrix2<f64>) -> Matrix2<f64> {
        let mut k = Matrix2::zeros();
        for p in &self.parts {
            k += p.kernel(m) * p.weight;
        }
        k
    }
}

/// e^{M c} for a 2x2 M with nonnegative off-diagonal entries (real eigenvalues).
#[inline]
pub(crate) fn expm2(m: &Matrix2<f64>, c: f64) -> Matrix2<f64> {
    let s = 0.5 * (m[(0, 0)] + m[(1, 1)]);
    let h = 0.5 * (m[(0, 0)] - m[(1, 1)]);
    let q2 = h * h + m[(0, 1)] * m[(1, 0)];
    let q = q2.max(0.0).sqrt();
    let n = m - Matrix2::identity() * s;
    let qc = q * c;
    if qc < 1e-3 {
        // cosh(qc) and sinh(qc)/q by series: no cancellation.
        let x2 = qc * qc;
        let ch = 1.0 + x2 / 2.0 + x2 * x2 / 24.0;
        let shq = c * (1.0 + x2 / 6.0 + x2 * x2 / 120.0);
        (Matrix2::identity() * ch + n * shq) * (s * c).exp()
    } else {
        // e^{(s±q)c} directly: e^{sc} and e^{qc} separately would overflow
        // (inf * 0) for long shifts, where s + q ~ 0 for a generator.
        let ep = ((s + q) * c).exp();
        let em = ((s - q) * c).exp();
        Matrix2::identity() * (0.5 * (ep + em)) + n * (0.5 * (ep - em) / q)
    }
}

/// Results of the MMPP/G/1 mean-value analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmppG1 {
    /// Mean waiting time in queue seen by arrivals (3.38).
    pub w: f64,
    /// Mean virtual waiting time (3.37; printed W_j, see W-11).
    pub wv: f64,
    pub rho: f64,
    pub g: Matrix2<f64>,
    /// Stationary vector of G.
    pub g_vec: RowVector2<f64>,
}

/// G for an MMPP(2)/G/1 queue (stable case).
pub fn g_matrix(p: &Mmpp2, service: &Service) -> Result<Matrix2<f64>, SolveError> {
    // G = [[1-a, a], [b, 1-b]]. M = D0 + Lambda G is built from (a, b) directly
    // so that its diagonal -(phi_j + lambda_j a_j) is not the difference of two
    // large numbers (lambda >> phi loses digits in -phi - lambda + lambda (1-a)).
    let phi = |a: f64, b: f64| -> (f64, f64) {
        let x = p.phi1 + p.lambda1 * a;
        let y = p.phi2 + p.lambda2 * b;
        let k = service.kernel(&Matrix2::new(-x, x, y, -y));
        (k[(0, 1)], k[(1, 0)])
    };
    // Componentwise relative residual: a and b can be tiny (slow modulation).
    let resid = |a: f64, b: f64, fa: f64, fb: f64| -> f64 {
        ((fa - a).abs() / a.max(f64::MIN_POSITIVE)).max((fb - b).abs() / b.max(f64::MIN_POSITIVE))
    };
    // Functional iteration from the stochastic start G = e pi.
    let pi = p.stationary();
    let (mut a, mut b) = (pi[1], pi[0]);
    for _ in 0..8 {
        (a, b) = phi(a, b);
    }
    let (mut fa, mut fb) = phi(a, b);
    let mut res = resid(a, b, fa, fb);
    for _ in 0..200 {
        if res < 1e-15 {
            break;
        }
        let (ra, rb) = (fa - a, fb - b);
        // Newton with a forward-difference Jacobian of F(x) = phi(x) - x,
        // steps relative to each entry.
        let ha = if a * (1.0 + 1e-7) <= 1.0 {
            1e-7 * a
        } else {
            -1e-7 * a
        };
        let hb = if b * (1.0 + 1e-7) <= 1.0 {
            1e-7 * b
        } else {
            -1e-7 * b
        };
        let mut accepted = false;
        if ha != 0.0 && hb != 0.0 {
            let (fa1, fb1) = phi(a + ha, b);
            let (fa2, fb2) = phi(a, b + hb);
            let j11 = (fa1 - fa) / ha - 1.0;
            let j21 = (fb1 - fb) / ha;
            let j12 = (fa2 - fa) / hb;
            let j22 = (fb2 - fb) / hb - 1.0;
            let det = j11 * j22 - j12 * j21;
            if det.is_finite() && det != 0.0 {
                let na = a - (j22 * ra - j12 * rb) / det;
                let nb = b - (-j21 * ra + j11 * rb) / det;
                if na > 0.0 && nb > 0.0 && na <= 1.0 && nb <= 1.0 {
                    let (pa, pb) = phi(na, nb);
                    let nres = resid(na, nb, pa, pb);
                    if nres < res {
                        (a, b, fa, fb, res) = (na, nb, pa, pb, nres);
                        accepted = true;
                    }
                }
            }
        }
        if !accepted {
            let (na, nb) = (fa, fb);
            let (pa, pb) = phi(na, nb);
            let nres = resid(na, nb, pa, pb);
            (a, b, fa, fb) = (na, nb, pa, pb);
            if nres >= res {
                // No further progress possible at this precision.
                break;
            }
            res = nres;
        }
    }
    if !(a.is_finite() && b.is_finite()) || a + b <= 0.0 || res > 1e-6 {
        return Err(SolveError::Numerical(format!(
            "MMPP/G/1: G did not converge (relative residual {res:e})"
        )));
    }
    Ok(Matrix2::new(1.0 - a, a, b, 1.0 - b))
}

/// (3.37) for two phases without its cancellation. With (Q + e pi)^{-1} =
/// e pi - Z, Z = (I - e pi) / tau the deviation matrix of Q, the term 2 rho
/// cancels exactly and (I - e pi) Lambda e = (l1 - l2) (pi2, -pi1)^T, so
/// Wv = [lam t2 + X] / (2(1-rho)) with
/// X = (2t/tau)(l1-l2)((1-rho)(g1-pi1) + t pi1 pi2 (l1-l2)).
/// g is also the stationary vector of M = D0 + Lambda G (G is a function of
/// the generator M), which gives g1 - pi1 = (phi1 l2 b - phi2 l1 a) /
/// ((x + y) tau), x = phi1 + l1 a, y = phi2 + l2 b, a = G12, b = G21, free of
/// the cancellation of b/(a+b) - phi2/tau when G is close to I (light load).
/// This keeps full accuracy as rho -> 1, where the printed form loses digits.
#[inline]
pub(crate) fn virtual_wait(p: &Mmpp2, rho: f64, t1: f64, t2: f64, a: f64, b: f64) -> f64 {
    virtual_wait_parts(p, rho, t1, t2, a, b).0
}

/// Wv and its burstiness term X.
#[inline]
fn virtual_wait_parts(p: &Mmpp2, rho: f64, t1: f64, t2: f64, a: f64, b: f64) -> (f64, f64) {
    let tau = p.tau();
    let pi = p.stationary();
    let d = p.lambda1 - p.lambda2;
    let x = p.phi1 + p.lambda1 * a;
    let y = p.phi2 + p.lambda2 * b;
    let g1_m_pi1 = (p.phi1 * p.lambda2 * b - p.phi2 * p.lambda1 * a) / ((x + y) * tau);
    let one_m_rho = 1.0 - rho;
    let big_x = 2.0 * t1 / tau * d * (one_m_rho * g1_m_pi1 + t1 * pi[0] * pi[1] * d);
    ((p.mean_rate() * t2 + big_x) / (2.0 * one_m_rho), big_x)
}

/// (3.37) as printed, kept as an independent check of [`virtual_wait`].
#[cfg(test)]
pub(crate) fn virtual_wait_printed(
    p: &Mmpp2,
    rho: f64,
    t1: f64,
    t2: f64,
    g_vec: RowVector2<f64>,
) -> f64 {
    let lam = p.mean_rate();
    let pi = p.stationary();
    let pi = RowVector2::new(pi[0], pi[1]);
    let q = Matrix2::new(-p.phi1, p.phi1, p.phi2, -p.phi2);
    let lmat = Matrix2::new(p.lambda1, 0.0, 0.0, p.lambda2);
    let lhat = nalgebra::Vector2::new(p.lambda1, p.lambda2);
    let z = (q + nalgebra::Vector2::new(1.0, 1.0) * pi)
        .try_inverse()
        .unwrap();
    let row = g_vec * (1.0 - rho) + pi * lmat * t1;
    (2.0 * rho + lam * t2 - 2.0 * t1 * (row * (z * lhat))[0]) / (2.0 * (1.0 - rho))
}

/// Mean waiting times of the two-state MMPP/G/1 queue.
pub fn mmpp_g1(p: &Mmpp2, service: &Service) -> Result<MmppG1, SolveError> {
    let lam = p.mean_rate();
    let t1 = service.mean();
    let t2 = service.second_moment();
    let rho = lam * t1;
    if rho >= 1.0 {
        return Err(SolveError::Unstable(format!(
            "rho = mean arrival rate x mean service time = {rho} >= 1"
        )));
    }
    let g = g_matrix(p, service)?;
    let (a, b) = (g[(0, 1)], g[(1, 0)]);
    let g_vec = RowVector2::new(b, a) / (a + b);
    let (wv, x) = virtual_wait_parts(p, rho, t1, t2, a, b);
    // (3.38) without subtracting: Wv - lam t2 / 2 = (rho lam t2 + X) / (2(1-rho)).
    let w = (lam * t2 + x / rho) / (2.0 * (1.0 - rho));
    Ok(MmppG1 {
        w,
        wv,
        rho,
        g,
        g_vec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queueing::mmpp::mm1::mmpp_m1;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn expm2_matches_nalgebra() {
        let m = Matrix2::new(-1.3, 0.4, 2.0, -2.5);
        for c in [1e-6, 0.01, 0.7, 3.0, 20.0] {
            let a = expm2(&m, c);
            let b = (m * c).exp();
            assert!(
                (a - b).abs().max() < 1e-13 * b.abs().max().max(1e-300),
                "c={c}"
            );
        }
    }

    #[test]
    fn expm2_of_a_generator_over_a_long_shift() {
        // e^{Mc} -> e m (m the stationary vector) without inf * 0.
        let m = Matrix2::new(-0.4, 0.4, 2.0, -2.0);
        let e = expm2(&m, 500.0);
        let st = [2.0 / 2.4, 0.4 / 2.4];
        for i in 0..2 {
            for j in 0..2 {
                assert!((e[(i, j)] - st[j]).abs() < 1e-13, "{e}");
            }
        }
    }

    #[test]
    fn exponential_service_matches_mmpp_m1() {
        for (p, mu) in [
            (Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap(), 2.5),
            (Mmpp2::new(0.09, 0.06, 4.0, 0.0).unwrap(), 1.8),
            (Mmpp2::new(0.05, 0.02, 5.0, 0.1).unwrap(), 1.65),
        ] {
            let q = mmpp_m1(&p, mu).unwrap();
            let r = mmpp_g1(&p, &Service::exponential(mu)).unwrap();
            assert!(rel(r.rho, q.rho) < 1e-14);
            // Arrival waiting time in queue = sojourn - service.
            assert!(
                rel(r.w, q.w - 1.0 / mu) < 1e-9,
                "{} vs {}",
                r.w,
                q.w - 1.0 / mu
            );
            // Virtual wait = mean work = L / mu for exponential service.
            assert!(rel(r.wv, q.l / mu) < 1e-9, "{} vs {}", r.wv, q.l / mu);
        }
    }

    #[test]
    fn closed_form_equals_printed_337() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        for s in [Service::deterministic(0.5), Service::exponential(1.6)] {
            let r = mmpp_g1(&p, &s).unwrap();
            let printed = virtual_wait_printed(&p, r.rho, s.mean(), s.second_moment(), r.g_vec);
            assert!(rel(r.wv, printed) < 1e-12, "{} vs {printed}", r.wv);
        }
    }

    #[test]
    fn poisson_deterministic_is_md1() {
        let p = Mmpp2::new(0.3, 0.5, 0.8, 0.8).unwrap();
        let c = 1.0;
        let r = mmpp_g1(&p, &Service::deterministic(c)).unwrap();
        let md1 = 0.8 * c * c / (2.0 * (1.0 - 0.8));
        assert!(rel(r.w, md1) < 1e-12);
        assert!(rel(r.wv, md1) < 1e-12);
    }

    #[test]
    fn g_is_stochastic_and_a_fixed_point() {
        let p = Mmpp2::new(0.05, 0.02, 5.0, 0.1).unwrap();
        let s = Service::new(vec![
            ShiftExp {
                weight: 0.7,
                shift: 0.3,
                rate: Some(4.0),
            },
            ShiftExp {
                weight: 0.3,
                shift: 0.1,
                rate: None,
            },
        ])
        .unwrap();
        let g = g_matrix(&p, &s).unwrap();
        let d0 = Matrix2::new(-p.phi1 - p.lambda1, p.phi1, p.phi2, -p.phi2 - p.lambda2);
        let lam = Matrix2::new(p.lambda1, 0.0, 0.0, p.lambda2);
        let k = s.kernel(&(d0 + lam * g));
        assert!((k - g).abs().max() < 1e-13);
        // Same G from plain functional iteration from 0 (Lucantoni's scheme).
        let mut h = Matrix2::zeros();
        for _ in 0..200_000 {
            h = s.kernel(&(d0 + lam * h));
        }
        assert!((h - g).abs().max() < 1e-10, "{h} vs {g}");
    }

    /// MMPP/H2/1 as a QBD (phases: arrival phase x service phase): an exact,
    /// independent check of mixtures of exponentials.
    #[test]
    fn exponential_mixture_matches_a_phase_type_qbd() {
        use crate::queueing::mmpp::qbd::Qbd;
        use nalgebra::DMatrix;
        let p = Mmpp2::new(0.3, 0.2, 2.0, 0.4).unwrap();
        let (w, mu) = ([0.3, 0.7], [1.0, 6.0]);
        let s = Service::new(vec![
            ShiftExp {
                weight: w[0],
                shift: 0.0,
                rate: Some(mu[0]),
            },
            ShiftExp {
                weight: w[1],
                shift: 0.0,
                rate: Some(mu[1]),
            },
        ])
        .unwrap();
        let r = mmpp_g1(&p, &s).unwrap();
        let q = DMatrix::from_row_slice(2, 2, &[-p.phi1, p.phi1, p.phi2, -p.phi2]);
        let lam = DMatrix::from_row_slice(2, 2, &[p.lambda1, 0.0, 0.0, p.lambda2]);
        let i2 = DMatrix::<f64>::identity(2, 2);
        let dmu = DMatrix::from_row_slice(2, 2, &[mu[0], 0.0, 0.0, mu[1]]);
        let wrow = DMatrix::from_row_slice(1, 2, &w);
        let mucol = DMatrix::from_row_slice(2, 1, &mu);
        let qbd = Qbd {
            a0: lam.kronecker(&i2),
            a1: (&q - &lam).kronecker(&i2) - i2.kronecker(&dmu),
            a2: i2.kronecker(&(&mucol * &wrow)),
            b0: &q - &lam,
            b1: lam.kronecker(&wrow),
            b2: i2.kronecker(&mucol),
        };
        let sol = qbd.solve().unwrap();
        let t = s.mean();
        let busy = &sol.x1 * &sol.i_minus_r_inv;
        let extra = &sol.x1 * &sol.r * &sol.i_minus_r_inv * &sol.i_minus_r_inv;
        let lam_of = |k: usize| [p.lambda1, p.lambda2][k / 2];
        let resid = |k: usize| 1.0 / mu[k % 2];
        let (mut w_arr, mut wv) = (0.0, 0.0);
        for k in 0..4 {
            let work = busy[k] * resid(k) + extra[k] * t;
            wv += work;
            w_arr += lam_of(k) * work;
        }
        w_arr /= p.mean_rate();
        assert!((sol.x0.sum() + busy.sum() - 1.0).abs() < 1e-12);
        assert!(rel(r.wv, wv) < 1e-9, "Wv {} vs {wv}", r.wv);
        assert!(rel(r.w, w_arr) < 1e-9, "W {} vs {w_arr}", r.w);
    }

    /// Lindley recursion over simulated MMPP arrivals: an independent check
    /// of the deterministic and shift + exponential mixture cases.
    fn lindley(p: &Mmpp2, s: &Service, seed: u64) -> ((f64, f64), (f64, f64)) {
        use crate::des::{ci95, Stream};
        let mut rng = Stream::new(seed, 1);
        let lam = [p.lambda1, p.lambda2];
        let phi = [p.phi1, p.phi2];
        let pi = p.stationary();
        let mut phase = if rng.uniform() < pi[0] { 0 } else { 1 };
        let mut next_switch = rng.exp(phi[phase]);
        let mut now = 0.0;
        // Time to the next arrival, walking through phase changes.
        let next_arrival =
            |now: &mut f64, phase: &mut usize, next_switch: &mut f64, rng: &mut Stream| {
                let start = *now;
                loop {
                    let a = *now + rng.exp(lam[*phase].max(1e-300));
                    if lam[*phase] > 0.0 && a < *next_switch {
                        *now = a;
                        return a - start;
                    }
                    *now = *next_switch;
                    *phase = 1 - *phase;
                    *next_switch = *now + rng.exp(phi[*phase]);
                }
            };
        let weights: Vec<f64> = s.parts.iter().map(|c| c.weight).collect();
        let draw = |rng: &mut Stream| {
            let c = s.parts[rng.choose(&weights)];
            c.shift + c.rate.map_or(0.0, |a| rng.exp(a))
        };
        let (batches, per, warm) = (20, 150_000, 20_000);
        let mut wq = 0.0;
        let mut ws = Vec::new();
        let mut vs = Vec::new();
        for b in 0..=batches {
            let n = if b == 0 { warm } else { per };
            let (mut sw, mut area, mut span) = (0.0, 0.0, 0.0);
            for _ in 0..n {
                let v0 = wq + draw(&mut rng);
                let a = next_arrival(&mut now, &mut phase, &mut next_switch, &mut rng);
                area += if a <= v0 {
                    v0 * a - a * a / 2.0
                } else {
                    v0 * v0 / 2.0
                };
                span += a;
                wq = (v0 - a).max(0.0);
                sw += wq;
            }
            if b > 0 {
                ws.push(sw / n as f64);
                vs.push(area / span);
            }
        }
        (ci95(&ws), ci95(&vs))
    }

    #[test]
    fn deterministic_and_mixed_service_match_simulation() {
        let p = Mmpp2::new(1.0, 0.5, 2.0, 0.5).unwrap();
        for (s, seed) in [
            (Service::deterministic(0.6), 11),
            (
                Service::new(vec![
                    ShiftExp {
                        weight: 0.5,
                        shift: 0.2,
                        rate: Some(5.0),
                    },
                    ShiftExp {
                        weight: 0.5,
                        shift: 0.5,
                        rate: None,
                    },
                ])
                .unwrap(),
                12,
            ),
        ] {
            let r = mmpp_g1(&p, &s).unwrap();
            let ((w, hw), (v, hv)) = lindley(&p, &s, seed);
            assert!(
                (w - r.w).abs() <= 3.0 * hw + 1e-9,
                "W sim {w} ± {hw} vs {}",
                r.w
            );
            assert!(
                (v - r.wv).abs() <= 3.0 * hv + 1e-9,
                "Wv sim {v} ± {hv} vs {}",
                r.wv
            );
            assert!(hw < 0.05 * r.w, "simulation too short: ±{hw}");
        }
    }
}
