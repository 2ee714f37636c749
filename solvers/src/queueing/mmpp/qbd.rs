//! Level-independent quasi-birth-death processes by the matrix-geometric
//! method: G and R by logarithmic reduction (Latouche & Ramaswami 1993),
//! functional iteration only as a fallback, then the boundary equations.
//!
//! Levels n >= 1 have phases of size m with blocks A0 (up), A1 (local),
//! A2 (down); level 0 may have its own size m0 with B0 (local), B1 (0 -> 1)
//! and B2 (1 -> 0). Then x_n = x_1 R^{n-1} for n >= 1.

use crate::SolveError;
use nalgebra::{DMatrix, DVector, RowDVector};

#[derive(Debug, Clone)]
pub struct Qbd {
    pub a0: DMatrix<f64>,
    pub a1: DMatrix<f64>,
    pub a2: DMatrix<f64>,
    pub b0: DMatrix<f64>,
    pub b1: DMatrix<f64>,
    pub b2: DMatrix<f64>,
}

/// Stationary solution: level-0 and level-1 vectors and the rate matrix R.
#[derive(Debug, Clone)]
pub struct QbdSolution {
    pub x0: RowDVector<f64>,
    pub x1: RowDVector<f64>,
    pub r: DMatrix<f64>,
    /// (I - R)^{-1}
    pub i_minus_r_inv: DMatrix<f64>,
}

fn inv(m: DMatrix<f64>, what: &str) -> Result<DMatrix<f64>, SolveError> {
    m.try_inverse()
        .ok_or_else(|| SolveError::Numerical(format!("{what} is singular")))
}

fn inf_norm(m: &DMatrix<f64>) -> f64 {
    m.row_iter()
        .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// G (minimal solution of A2 + A1 G + A0 G^2 = 0) by logarithmic reduction.
pub fn g_logarithmic_reduction(
    a0: &DMatrix<f64>,
    a1: &DMatrix<f64>,
    a2: &DMatrix<f64>,
) -> Result<DMatrix<f64>, SolveError> {
    let m = a1.nrows();
    let id = DMatrix::<f64>::identity(m, m);
    let neg_a1_inv = inv(-a1, "A1")?;
    let mut h = &neg_a1_inv * a0; // up
    let mut l = &neg_a1_inv * a2; // down
    let mut g = l.clone();
    let mut t = h.clone();
    for _ in 0..64 {
        let u = &h * &l + &l * &h;
        let w = inv(&id - u, "I - U (logarithmic reduction)")?;
        h = &w * (&h * &h);
        l = &w * (&l * &l);
        g += &t * &l;
        t = &t * &h;
        // Stop when G is stochastic (recurrent case) or T has vanished.
        let defect = g
            .row_iter()
            .map(|r| (1.0 - r.sum()).abs())
            .fold(0.0, f64::max);
        if defect < 1e-15 || inf_norm(&t) < 1e-15 {
            return Ok(g);
        }
    }
    Err(SolveError::Numerical(
        "logarithmic reduction did not converge in 64 steps".into(),
    ))
}

/// R from G: R = A0 (-(A1 + A0 G))^{-1}.
pub fn r_from_g(
    a0: &DMatrix<f64>,
    a1: &DMatrix<f64>,
    g: &DMatrix<f64>,
) -> Result<DMatrix<f64>, SolveError> {
    let u = a1 + a0 * g;
    Ok(a0 * inv(-u, "A1 + A0 G")?)
}

/// R by the functional iteration R <- -(A0 + R^2 A2) A1^{-1} (Wu 3.47, 6.10),
/// kept as a fallback and as an independent check.
pub fn r_functional_iteration(
    a0: &DMatrix<f64>,
    a1: &DMatrix<f64>,
    a2: &DMatrix<f64>,
    tol: f64,
    max_iter: usize,
) -> Result<DMatrix<f64>, SolveError> {
    let a1_inv = inv(a1.clone(), "A1")?;
    let mut r = -(a0 * &a1_inv);
    for _ in 0..max_iter {
        let next = -((a0 + &r * &r * a2) * &a1_inv);
        let res = a0 + &next * a1 + &next * &next * a2;
        r = next;
        if inf_norm(&res) <= tol {
            return Ok(r);
        }
    }
    Err(SolveError::Numerical(format!(
        "functional iteration for R did not reach residual {tol} in {max_iter} steps"
    )))
}

/// R by logarithmic reduction, falling back to functional iteration.
pub fn solve_r(
    a0: &DMatrix<f64>,
    a1: &DMatrix<f64>,
    a2: &DMatrix<f64>,
) -> Result<DMatrix<f64>, SolveError> {
    match g_logarithmic_reduction(a0, a1, a2).and_then(|g| r_from_g(a0, a1, &g)) {
        Ok(r) if r.iter().all(|x| x.is_finite()) => Ok(r),
        _ => r_functional_iteration(a0, a1, a2, 1e-14, 1_000_000),
    }
}

impl Qbd {
    /// Stationary distribution; the caller checks stability (mean drift) first.
    pub fn solve(&self) -> Result<QbdSolution, SolveError> {
        let m0 = self.b0.nrows();
        let m = self.a1.nrows();
        let r = solve_r(&self.a0, &self.a1, &self.a2)?;
        let id = DMatrix::<f64>::identity(m, m);
        let i_minus_r_inv = inv(&id - &r, "I - R")?;
        // [x0 x1] [[B0, B1], [B2, A1 + R A2]] = 0 with x0 e + x1 (I-R)^{-1} e = 1:
        // replace the first column by the normalisation.
        let n = m0 + m;
        let mut sys = DMatrix::<f64>::zeros(n, n);
        sys.view_mut((0, 0), (m0, m0)).copy_from(&self.b0);
        sys.view_mut((0, m0), (m0, m)).copy_from(&self.b1);
        sys.view_mut((m0, 0), (m, m0)).copy_from(&self.b2);
        sys.view_mut((m0, m0), (m, m))
            .copy_from(&(&self.a1 + &r * &self.a2));
        let norm1 = &i_minus_r_inv * DVector::from_element(m, 1.0);
        for i in 0..m0 {
            sys[(i, 0)] = 1.0;
        }
        for i in 0..m {
            sys[(m0 + i, 0)] = norm1[i];
        }
        let mut rhs = RowDVector::<f64>::zeros(n);
        rhs[0] = 1.0;
        // x sys = rhs  <=>  sys^T x^T = rhs^T
        let lu = sys.transpose().lu();
        let x = lu
            .solve(&rhs.transpose())
            .ok_or_else(|| SolveError::Numerical("QBD boundary system is singular".into()))?;
        let x0 = RowDVector::from_iterator(m0, x.iter().take(m0).copied());
        let x1 = RowDVector::from_iterator(m, x.iter().skip(m0).copied());
        Ok(QbdSolution {
            x0,
            x1,
            r,
            i_minus_r_inv,
        })
    }
}

impl QbdSolution {
    /// P(level = n).
    pub fn level_prob(&self, n: usize) -> f64 {
        if n == 0 {
            return self.x0.sum();
        }
        let mut v = self.x1.clone();
        for _ in 1..n {
            v *= &self.r;
        }
        v.sum()
    }

    /// E[level] = x1 (I - R)^{-2} e.
    pub fn mean_level(&self) -> f64 {
        (&self.x1 * &self.i_minus_r_inv * &self.i_minus_r_inv).sum()
    }

    /// E[level^2] = sum_n n^2 x1 R^{n-1} e = x1 (I + R)(I - R)^{-3} e.
    pub fn second_moment_level(&self) -> f64 {
        let m = self.r.nrows();
        let id = DMatrix::<f64>::identity(m, m);
        let inv = &self.i_minus_r_inv;
        (&self.x1 * (&id + &self.r) * inv * inv * inv).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M/M/1 written as a one-phase QBD.
    #[test]
    fn mm1_moments() {
        let (lam, mu) = (0.7, 1.0);
        let one = |x: f64| DMatrix::from_element(1, 1, x);
        let q = Qbd {
            a0: one(lam),
            a1: one(-lam - mu),
            a2: one(mu),
            b0: one(-lam),
            b1: one(lam),
            b2: one(mu),
        };
        let s = q.solve().unwrap();
        let rho: f64 = lam / mu;
        assert!((s.level_prob(0) - (1.0 - rho)).abs() < 1e-14);
        assert!((s.level_prob(3) - (1.0 - rho) * rho.powi(3)).abs() < 1e-14);
        assert!((s.mean_level() - rho / (1.0 - rho)).abs() < 1e-12);
        let m2 = rho * (1.0 + rho) / (1.0 - rho).powi(2);
        assert!((s.second_moment_level() - m2).abs() < 1e-11);
        // Functional iteration and logarithmic reduction give the same R.
        let r = r_functional_iteration(&q.a0, &q.a1, &q.a2, 1e-15, 100_000).unwrap();
        assert!((r[(0, 0)] - rho).abs() < 1e-12);
    }
}
