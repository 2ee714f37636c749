//! Counting moments of the departures of MMPP/M/1/L in the Laplace domain.
//!
//! The departure process of the queue is a MAP on the phases (level v,
//! MMPP phase j), v = 0..=L, with D the queue's generator and D1 its
//! service completions. With λ* = π D1 e the departure rate and
//! Y(t) = N(t) − λ* t the centred count, the moment functions
//! w_k(t) = ∂^k/∂θ^k π exp(t (D + (e^θ − 1) D1 − θ λ* I)) at θ = 0 satisfy
//!
//!   w_0 = π,  w_k' = w_k D + Σ_{j=1..k} C(k, j) w_{k−j} B_j,
//!   B_1 = D1 − λ* I,  B_j = D1 (j ≥ 2),
//!
//! and E[Y^k] = w_k(t) e: the variance and the third central moment come out
//! directly, without the cancellation of converting factorial moments of
//! size (λ* t)^3. In the Laplace domain, with R(s) = (sI − D)^{−1},
//!
//!   ŵ_1 = π B_1 R / s,  ŵ_2 = (2 ŵ_1 B_1 + π D1 / s) R,
//!   E[Y²]^(s) = (2 ŵ_1 B_1 e + λ*/s) / s,
//!   E[Y³]^(s) = (3 ŵ_2 B_1 e + 3 ŵ_1 D1 e + λ*/s) / s,
//!
//! using R e = e / s. ŵ_1 is one row-vector solve with the banded sI − D;
//! ŵ_2 enters only through ŵ_2 c with c = D1 e / μ (the levels v ≥ 1), which
//! is (2 ŵ_1 B_1 + π D1/s) · y with y = R c, one column solve with the same
//! factors. Two banded solves per abscissa, O(L) each.
//!
//! The transforms are inverted at t by the Abate–Whitt EULER algorithm on
//! the Bromwich line Re s = A / (2t) (A = 18.4, 15 + 11 terms, binomial
//! averaging): discretisation error about e^{−A} ≈ 1e−8 relative for these
//! slowly growing functions. The cost is independent of the rates and of t,
//! unlike uniformisation, whose q·t steps made the ch.6 MR outputs (q·t ≈ 10⁴)
//! the cost of the whole model. sI − D is strictly diagonally dominant by
//! rows for Re s > 0, so its LU factors without pivoting are stable.

use super::mm1k::mmpp_m1k;
use crate::traffic::mmpp::Mmpp2;
use crate::SolveError;
use nalgebra::Complex;

type C = Complex<f64>;

/// Mean, variance and third central moment of the number of departures in
/// (0, t] of the stationary MMPP/M/1/L queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountMoments {
    pub mean: f64,
    pub var: f64,
    pub third_central: f64,
}

/// EULER parameters (Abate & Whitt 1995): A sets the aliasing error e^{−A},
/// N terms are summed and the last M partial sums are binomially averaged.
const EULER_A: f64 = 24.0;
const EULER_N: usize = 20;
const EULER_M: usize = 12;

/// See the module docs. `levels` is L (arrivals at L are lost).
pub fn departure_count_moments(
    p: &Mmpp2,
    mu: f64,
    levels: usize,
    t: f64,
) -> Result<CountMoments, SolveError> {
    if !(t > 0.0 && t.is_finite()) {
        return Err(SolveError::param(
            "t",
            format!("fitting time must be > 0 and finite, got {t}"),
        ));
    }
    let st = mmpp_m1k(p, mu, levels)?;
    let pi = &st.p;
    let lam_star = mu * pi[2..].iter().sum::<f64>();
    let mut work = Work::new(p, mu, levels);
    // Partial sums of the Euler series of E[Y²] and E[Y³].
    let scale = (EULER_A / 2.0).exp() / t;
    let (mut acc2, mut acc3) = (0.0, 0.0);
    let mut partial = [[0.0; 2]; EULER_M + 1];
    for k in 0..=EULER_N + EULER_M {
        let s = C::new(EULER_A / (2.0 * t), k as f64 * std::f64::consts::PI / t);
        let [f2, f3] = work.transforms(s, pi, lam_star);
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        let w = if k == 0 { 0.5 } else { 1.0 } * sign;
        acc2 += w * f2.re;
        acc3 += w * f3.re;
        if k >= EULER_N {
            partial[k - EULER_N] = [scale * acc2, scale * acc3];
        }
    }
    let mut var = 0.0;
    let mut third = 0.0;
    let mut binom = 1.0; // C(M, j)
    let norm = 0.5f64.powi(EULER_M as i32);
    for (j, ps) in partial.iter().enumerate() {
        var += binom * norm * ps[0];
        third += binom * norm * ps[1];
        binom = binom * (EULER_M - j) as f64 / (j + 1) as f64;
    }
    if !(var.is_finite() && third.is_finite()) {
        return Err(SolveError::param(
            "t",
            format!(
                "the departure moments in a window of t = {t:e} are not representable (variance {var}, third central moment {third}); use a t within a few orders of magnitude of the queue's time scales"
            ),
        ));
    }
    Ok(CountMoments {
        mean: lam_star * t,
        var,
        third_central: third,
    })
}

/// IDC(inf) of the departures of the stationary MMPP/M/1/L queue:
/// lim Var N(t) / (λ* t) = 1 + 2 π B1 (−D)^# B1 e / λ*, with B1 = D1 − λ* I
/// (the asymptotic slope of the variance transform, s² E[Y²]^(s) at s → 0).
/// y = (−D)^# B1 e solves the singular system −D y = B1 e (consistent, as
/// π B1 e = 0); any solution serves, since π B1 e = 0 makes π B1 y blind to
/// the null direction e. Block elimination of −D by levels: the Schur
/// complements of the first L levels are nonsingular M-matrices, the last
/// one is singular of rank 1 and its first row alone fixes a solution.
/// O(L), unlike the dense MAP of the same queue.
pub fn departure_idc_inf(p: &Mmpp2, mu: f64, levels: usize) -> Result<f64, SolveError> {
    let st = mmpp_m1k(p, mu, levels)?;
    let pi = &st.p;
    let l = levels;
    let lam_star = mu * pi[2..].iter().sum::<f64>();
    let lam = [p.lambda1, p.lambda2];
    let up = |v: usize| if v < l { lam } else { [0.0; 2] };
    // Forward: S_v and z_v (column elimination, as `Work::transforms` with s = 0).
    let mut s_inv: Vec<[f64; 4]> = Vec::with_capacity(l + 1);
    let mut zs: Vec<[f64; 2]> = Vec::with_capacity(l + 1);
    let mut last_s = [0.0; 4];
    for v in 0..=l {
        let u = up(v);
        let out_mu = if v > 0 { mu } else { 0.0 };
        let mut a = [
            p.phi1 + u[0] + out_mu,
            -p.phi1,
            -p.phi2,
            p.phi2 + u[1] + out_mu,
        ];
        // (B1 e)_s = μ [v >= 1] − λ*.
        let mut z = [out_mu - lam_star; 2];
        if v > 0 {
            let q = &s_inv[v - 1];
            let lp = up(v - 1);
            a[0] -= q[0] * (mu * lp[0]);
            a[1] -= q[1] * (mu * lp[1]);
            a[2] -= q[2] * (mu * lp[0]);
            a[3] -= q[3] * (mu * lp[1]);
            let prev = zs[v - 1];
            z[0] += mu * (q[0] * prev[0] + q[1] * prev[1]);
            z[1] += mu * (q[2] * prev[0] + q[3] * prev[1]);
        }
        zs.push(z);
        if v < l {
            let det = a[0] * a[3] - a[1] * a[2];
            if !(det.is_finite() && det != 0.0) {
                return Err(SolveError::Numerical(format!(
                    "departure IDC(inf): singular block at level {v} of {l}"
                )));
            }
            s_inv.push([a[3] / det, -a[1] / det, -a[2] / det, a[0] / det]);
        } else {
            last_s = a;
        }
    }
    // The singular last block: its first row with y_L[1] = 0.
    if last_s[0] == 0.0 {
        return Err(SolveError::Numerical(
            "departure IDC(inf): degenerate top level".into(),
        ));
    }
    let mut y = vec![[0.0; 2]; l + 1];
    y[l] = [zs[l][0] / last_s[0], 0.0];
    for v in (0..l).rev() {
        let u = up(v);
        let q = &s_inv[v];
        let z = [zs[v][0] + u[0] * y[v + 1][0], zs[v][1] + u[1] * y[v + 1][1]];
        y[v] = [q[0] * z[0] + q[1] * z[1], q[2] * z[0] + q[3] * z[1]];
    }
    // π B1 y = Σ_v Σ_j (μ π_{v+1,j} − λ* π_{v,j}) y_{v,j}.
    let mut acc = 0.0;
    for v in 0..=l {
        for j in 0..2 {
            let d1 = if v < l { mu * pi[2 * (v + 1) + j] } else { 0.0 };
            acc += (d1 - lam_star * pi[2 * v + j]) * y[v][j];
        }
    }
    let idc = 1.0 + 2.0 * acc / lam_star;
    if !idc.is_finite() {
        return Err(SolveError::Numerical(format!(
            "departure IDC(inf) is not finite ({idc})"
        )));
    }
    Ok(idc)
}

/// 2×2 complex matrix, row-major.
type M2 = [C; 4];

#[inline(always)]
fn inv2(a: &M2) -> M2 {
    let det_inv = (a[0] * a[3] - a[1] * a[2]).inv();
    [
        a[3] * det_inv,
        -a[1] * det_inv,
        -a[2] * det_inv,
        a[0] * det_inv,
    ]
}

/// Row vector times matrix: [x0 x1] A.
#[inline(always)]
fn row_mul(x: [C; 2], a: &M2) -> [C; 2] {
    [x[0] * a[0] + x[1] * a[2], x[0] * a[1] + x[1] * a[3]]
}

/// Matrix times column vector: A [y0 y1]^T.
#[inline(always)]
fn col_mul(a: &M2, y: [C; 2]) -> [C; 2] {
    [a[0] * y[0] + a[1] * y[1], a[2] * y[0] + a[3] * y[1]]
}

/// The chain's rates and the buffers of one abscissa's factorisation.
///
/// sI − D is block tridiagonal in the levels, with 2×2 blocks: −μI below
/// the diagonal, −diag(λ) above it (zero at the top level) and
/// sI + diag(out) − [phase changes] on it. Its block LU factors are
/// U_vv = S_v, U_{v,v+1} = −diag(λ), L_{v+1,v} = −μ S_v^{−1}, with the
/// Schur complements S_0 = A_00, S_v = A_vv − μ S_{v−1}^{−1} diag(λ_{v−1}).
struct Work {
    levels: usize,
    lam: [f64; 2],
    phi: [f64; 2],
    mu: f64,
    /// S_v^{−1} per level.
    s_inv: Vec<M2>,
    /// ŵ1 (row vector) and y = R c (column vector), per level.
    w1: Vec<[C; 2]>,
    y: Vec<[C; 2]>,
}

impl Work {
    fn new(p: &Mmpp2, mu: f64, levels: usize) -> Work {
        let zero = C::new(0.0, 0.0);
        Work {
            levels,
            lam: [p.lambda1, p.lambda2],
            phi: [p.phi1, p.phi2],
            mu,
            s_inv: vec![[zero; 4]; levels + 1],
            w1: vec![[zero; 2]; levels + 1],
            y: vec![[zero; 2]; levels + 1],
        }
    }

    /// Arrival rates out of level v (none at the top).
    #[inline(always)]
    fn up(&self, v: usize) -> [f64; 2] {
        if v < self.levels {
            self.lam
        } else {
            [0.0; 2]
        }
    }

    /// The Laplace transforms of E[Y²] and E[Y³] at s.
    fn transforms(&mut self, s: C, pi: &[f64], lam_star: f64) -> [C; 2] {
        let l = self.levels;
        let mu = self.mu;
        let inv_s = s.inv();
        let zero = C::new(0.0, 0.0);
        // Factor and run the forward halves of both solves in one sweep:
        // the row solve x (sI − D) = r1 (w U = r1, then x L = w) and the
        // column solve (sI − D) y = c (L z = c, then U y = z).
        // r1 = π (D1 − λ* I) / s, with (π D1)_v = μ π_{v+1}.
        let pi_at = |v: usize, j: usize| pi[2 * v + j];
        let mut prev_w = [zero; 2];
        let mut prev_z = [zero; 2];
        for v in 0..=l {
            let up = self.up(v);
            let mut a: M2 = [
                s + (self.phi[0] + up[0] + if v > 0 { mu } else { 0.0 }),
                C::new(-self.phi[0], 0.0),
                C::new(-self.phi[1], 0.0),
                s + (self.phi[1] + up[1] + if v > 0 { mu } else { 0.0 }),
            ];
            let mut b = [zero; 2];
            let mut c = [zero; 2];
            for j in 0..2 {
                let d1 = if v < l { mu * pi_at(v + 1, j) } else { 0.0 };
                b[j] = C::new(d1 - lam_star * pi_at(v, j), 0.0) * inv_s;
                c[j] = C::new(if v > 0 { 1.0 } else { 0.0 }, 0.0);
            }
            if v > 0 {
                let lam_prev = self.up(v - 1);
                let p = &self.s_inv[v - 1];
                // S_v = A_vv − μ S_{v−1}^{−1} diag(λ).
                a[0] -= p[0] * (mu * lam_prev[0]);
                a[1] -= p[1] * (mu * lam_prev[1]);
                a[2] -= p[2] * (mu * lam_prev[0]);
                a[3] -= p[3] * (mu * lam_prev[1]);
                // w_v U_vv = b_v − w_{v−1} U_{v−1,v} = b_v + w_{v−1} diag(λ).
                b[0] += prev_w[0] * lam_prev[0];
                b[1] += prev_w[1] * lam_prev[1];
                // z_v = c_v − L_{v,v−1} z_{v−1} = c_v + μ S_{v−1}^{−1} z_{v−1}.
                let t = col_mul(p, prev_z);
                c[0] += t[0] * mu;
                c[1] += t[1] * mu;
            }
            let si = inv2(&a);
            self.s_inv[v] = si;
            prev_w = row_mul(b, &si);
            prev_z = c;
            self.w1[v] = prev_w;
            self.y[v] = prev_z;
        }
        // Backward halves: x_v = w_v − x_{v+1} L_{v+1,v} = w_v + μ x_{v+1} S_v^{−1};
        // y_v = S_v^{−1} (z_v − U_{v,v+1} y_{v+1}) = S_v^{−1} (z_v + diag(λ) y_{v+1}).
        let last = &self.s_inv[l];
        self.y[l] = col_mul(last, self.y[l]);
        for v in (0..l).rev() {
            let si = self.s_inv[v];
            let t = row_mul(self.w1[v + 1], &si);
            self.w1[v][0] += t[0] * mu;
            self.w1[v][1] += t[1] * mu;
            let up = self.up(v);
            let z = [
                self.y[v][0] + self.y[v + 1][0] * up[0],
                self.y[v][1] + self.y[v + 1][1] * up[1],
            ];
            self.y[v] = col_mul(&si, z);
        }
        let mut w1_e = zero;
        let mut w1_c = zero;
        for (v, w) in self.w1.iter().enumerate() {
            w1_e += w[0] + w[1];
            if v > 0 {
                w1_c += w[0] + w[1];
            }
        }
        // ŵ1 B1 e = μ ŵ1 c − λ* ŵ1 e.
        let w1_b1_e = w1_c * mu - w1_e * lam_star;
        let m2 = (w1_b1_e * 2.0 + inv_s * lam_star) * inv_s;
        // ŵ2 = r2 R with r2 = 2 ŵ1 B1 + π D1 / s; ŵ2 e = r2 e / s, ŵ2 c = r2 · y.
        let mut r2_y = zero;
        for v in 0..=l {
            for j in 0..2 {
                let (up, pd1) = if v < l {
                    (self.w1[v + 1][j], mu * pi_at(v + 1, j))
                } else {
                    (zero, 0.0)
                };
                let r2 = (up * mu - self.w1[v][j] * lam_star) * 2.0 + inv_s * pd1;
                r2_y += r2 * self.y[v][j];
            }
        }
        let w2_e = m2; // r2 e / s is the transform of E[Y²] itself.
        let w2_b1_e = r2_y * mu - w2_e * lam_star;
        let m3 = (w2_b1_e * 3.0 + w1_c * (3.0 * mu) + inv_s * lam_star) * inv_s;
        [m2, m3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queueing::mmpp::departure::departure_factorial_moments;
    use crate::traffic::mmpp::mmpp2::third_central_from_factorial;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    /// Against uniformisation of the factorial-moment ODE (the library's
    /// reference), over short and long windows, light and heavy loads, one
    /// silent phase, and a finite buffer that loses packets.
    #[test]
    fn laplace_moments_match_uniformisation() {
        for (p, mu, l, t) in [
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 12, 0.3),
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 12, 2.0),
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 40, 9.0),
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 1.0, 3, 50.0),
            (Mmpp2::new(0.09, 0.06, 4.8, 0.0).unwrap(), 12.0, 60, 13.9),
            (
                Mmpp2::new(0.09, 0.06, 300.0, 250.0).unwrap(),
                418.0,
                200,
                13.9,
            ),
            (Mmpp2::new(0.5, 0.5, 1.2, 1.2).unwrap(), 2.0, 40, 3.0),
        ] {
            let got = departure_count_moments(&p, mu, l, t).unwrap();
            let [z1, z2, z3] = departure_factorial_moments(&p, mu, l, t).unwrap();
            let var = z2 + z1 - z1 * z1;
            let third = third_central_from_factorial(z3, z1, var);
            let case = format!("{p:?} mu {mu} L {l} t {t}");
            assert!(
                rel(got.mean, z1) < 1e-10,
                "{case}: mean {} vs {z1}",
                got.mean
            );
            assert!(rel(got.var, var) < 1e-7, "{case}: var {} vs {var}", got.var);
            // The reference loses digits converting factorial moments of size
            // z1^3; compare on the scale of that cancellation.
            let tol = 1e-7 * third.abs() + 1e-13 * z1.powi(3);
            assert!(
                (got.third_central - third).abs() < tol,
                "{case}: third {} vs {third}",
                got.third_central
            );
        }
    }

    /// Poisson arrivals: the departures of M/M/1/L are not Poisson, but with
    /// a buffer so large that nothing is lost they are (Burke): variance and
    /// third central moment both equal the mean.
    #[test]
    fn burke_for_a_large_buffer() {
        let p = Mmpp2::new(0.5, 0.5, 1.2, 1.2).unwrap();
        for t in [0.1, 3.0, 1e3] {
            let m = departure_count_moments(&p, 2.0, 120, t).unwrap();
            assert!(rel(m.mean, 1.2 * t) < 1e-12);
            assert!(rel(m.var, m.mean) < 1e-7, "t {t}: {} vs {}", m.var, m.mean);
            assert!(
                rel(m.third_central, m.mean) < 1e-6,
                "t {t}: {}",
                m.third_central
            );
        }
    }

    /// The O(L) IDC(inf) against the dense MAP's, and against the arrivals'
    /// for a large buffer (a stable queue passes IDC(inf) through).
    #[test]
    fn idc_inf_matches_the_dense_map() {
        use crate::queueing::mmpp::departure::finite_departure_map;
        for (p, mu, l) in [
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 12),
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 1.0, 3),
            (Mmpp2::new(0.09, 0.06, 4.8, 0.0).unwrap(), 4.0, 30),
            (Mmpp2::new(0.09, 0.06, 30.0, 25.0).unwrap(), 20.0, 60),
        ] {
            let got = departure_idc_inf(&p, mu, l).unwrap();
            let want = finite_departure_map(&p, mu, l).unwrap().idc_inf().unwrap();
            assert!(
                rel(got, want) < 1e-9,
                "{p:?} mu {mu} L {l}: {got} vs {want}"
            );
        }
        let p = Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap();
        let got = departure_idc_inf(&p, 2.0, 200).unwrap();
        assert!(rel(got, p.idc_inf()) < 1e-9, "{got} vs {}", p.idc_inf());
    }

    /// Over a window much longer than every time scale, IDC(t) of the
    /// departures of a stable queue tends to IDC(inf) of its arrivals.
    #[test]
    fn long_windows_reach_the_arrivals_idc_inf() {
        let p = Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap();
        let idc_inf = p.idc_inf();
        let m = departure_count_moments(&p, 2.0, 150, 1e6).unwrap();
        let idc = m.var / m.mean;
        assert!((idc - idc_inf).abs() < 1e-4 * idc_inf, "{idc} vs {idc_inf}");
    }
}
