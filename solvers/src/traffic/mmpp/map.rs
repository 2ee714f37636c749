//! Markovian arrival process (D0, D1): the exact form of superpositions
//! (Kronecker sums) and of departure processes, and a second, independent
//! algorithm for every closed form of [`Mmpp2`].

use super::mmpp2::{third_central_from_factorial, CountStats, Mmpp2};
use crate::markov::ctmc::gth;
use crate::SolveError;
use nalgebra::{DMatrix, DVector};

/// A MAP with generator D = D0 + D1; D1 holds the transitions that carry an arrival.
#[derive(Debug, Clone, PartialEq)]
pub struct Map {
    pub d0: DMatrix<f64>,
    pub d1: DMatrix<f64>,
}

impl Map {
    /// Checks shapes and signs (D1 >= 0, off-diagonal D0 >= 0, rows of D0+D1 sum to 0).
    pub fn new(d0: DMatrix<f64>, d1: DMatrix<f64>) -> Result<Self, SolveError> {
        let n = d0.nrows();
        if n == 0 || d0.ncols() != n || d1.nrows() != n || d1.ncols() != n {
            return Err(SolveError::param(
                "D0/D1",
                "must be square matrices of one size",
            ));
        }
        for i in 0..n {
            let mut row = 0.0;
            let mut scale = 0.0f64;
            for j in 0..n {
                let (a, b) = (d0[(i, j)], d1[(i, j)]);
                if !a.is_finite() || !b.is_finite() || b < 0.0 || (i != j && a < 0.0) {
                    return Err(SolveError::param(
                        "D0/D1",
                        format!("entry ({i}, {j}) breaks D1 >= 0, off-diagonal D0 >= 0"),
                    ));
                }
                row += a + b;
                scale = scale.max(a.abs()).max(b);
            }
            if row.abs() > 1e-10 * scale.max(1.0) {
                return Err(SolveError::param(
                    "D0/D1",
                    format!("row {i} of D0 + D1 sums to {row}, not 0"),
                ));
            }
        }
        Ok(Map { d0, d1 })
    }

    pub fn from_mmpp2(p: &Mmpp2) -> Self {
        let d0 = DMatrix::from_row_slice(
            2,
            2,
            &[-p.phi1 - p.lambda1, p.phi1, p.phi2, -p.phi2 - p.lambda2],
        );
        let d1 = DMatrix::from_row_slice(2, 2, &[p.lambda1, 0.0, 0.0, p.lambda2]);
        Map { d0, d1 }
    }

    /// Poisson process as a one-phase MAP.
    pub fn poisson(lambda: f64) -> Self {
        Map {
            d0: DMatrix::from_element(1, 1, -lambda),
            d1: DMatrix::from_element(1, 1, lambda),
        }
    }

    pub fn phases(&self) -> usize {
        self.d0.nrows()
    }

    pub fn generator(&self) -> DMatrix<f64> {
        &self.d0 + &self.d1
    }

    /// Exact superposition of independent MAPs (Kronecker sum of D0s and of D1s).
    pub fn superpose(&self, other: &Map) -> Map {
        let ia = DMatrix::<f64>::identity(self.phases(), self.phases());
        let ib = DMatrix::<f64>::identity(other.phases(), other.phases());
        Map {
            d0: self.d0.kronecker(&ib) + ia.kronecker(&other.d0),
            d1: self.d1.kronecker(&ib) + ia.kronecker(&other.d1),
        }
    }

    /// Exact superposition of `n` independent copies of one two-state MMPP,
    /// lumped to n + 1 phases (phase k = copies in phase 1): the
    /// "(Z_r + 2)-phase" exact process of catalogue §3.0 instead of 2^n phases.
    pub fn lumped_copies(p: &Mmpp2, n: usize) -> Map {
        let m = n + 1;
        let mut d0 = DMatrix::<f64>::zeros(m, m);
        let mut d1 = DMatrix::<f64>::zeros(m, m);
        for k in 0..m {
            let (kf, rest) = (k as f64, (n - k) as f64);
            let rate = kf * p.lambda1 + rest * p.lambda2;
            d1[(k, k)] = rate;
            let mut out = rate;
            if k > 0 {
                d0[(k, k - 1)] = kf * p.phi1;
                out += kf * p.phi1;
            }
            if k < n {
                d0[(k, k + 1)] = rest * p.phi2;
                out += rest * p.phi2;
            }
            d0[(k, k)] = -out;
        }
        Map { d0, d1 }
    }

    /// Bernoulli thinning: each arrival kept with probability p. For an MMPP
    /// this is (3.18): Q kept, Lambda scaled by p.
    pub fn split(&self, p: f64) -> Map {
        Map {
            d0: &self.d0 + &self.d1 * (1.0 - p),
            d1: &self.d1 * p,
        }
    }

    /// Stationary phase vector of D0 + D1 (GTH).
    pub fn stationary(&self) -> Result<Vec<f64>, SolveError> {
        let n = self.phases();
        if n == 1 {
            return Ok(vec![1.0]);
        }
        let g = self.generator();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    a[i * n + j] = g[(i, j)].max(0.0);
                }
            }
        }
        gth(n, a)
    }

    fn pi_row(&self) -> Result<nalgebra::RowDVector<f64>, SolveError> {
        Ok(nalgebra::RowDVector::from_vec(self.stationary()?))
    }

    /// Mean arrival rate pi D1 e.
    pub fn mean_rate(&self) -> Result<f64, SolveError> {
        let pi = self.pi_row()?;
        Ok((pi * &self.d1).sum())
    }

    fn neg_d0_inv(&self) -> Result<DMatrix<f64>, SolveError> {
        (-&self.d0)
            .try_inverse()
            .ok_or_else(|| SolveError::Numerical("D0 is singular".into()))
    }

    /// Phase distribution just after an arrival: pi D1 / lambda.
    fn arrival_phase(&self) -> Result<nalgebra::RowDVector<f64>, SolveError> {
        let pi = self.pi_row()?;
        let v = pi * &self.d1;
        let s = v.sum();
        Ok(v / s)
    }

    /// k-th moment of the stationary inter-arrival time.
    pub fn interarrival_moment(&self, k: u32) -> Result<f64, SolveError> {
        let m = self.neg_d0_inv()?;
        let mut v = self.arrival_phase()?;
        let mut fact = 1.0;
        for i in 1..=k {
            v *= &m;
            fact *= i as f64;
        }
        Ok(fact * v.sum())
    }

    pub fn scv(&self) -> Result<f64, SolveError> {
        let m1 = self.interarrival_moment(1)?;
        let m2 = self.interarrival_moment(2)?;
        Ok(m2 / (m1 * m1) - 1.0)
    }

    /// Lag-k correlation coefficient of consecutive inter-arrival times.
    pub fn lag_corr(&self, k: u32) -> Result<f64, SolveError> {
        let m = self.neg_d0_inv()?;
        let p = &m * &self.d1;
        let phi = self.arrival_phase()?;
        let m1 = (&phi * &m).sum();
        let m2 = 2.0 * (&phi * &m * &m).sum();
        let mut v = &phi * &m;
        for _ in 0..k {
            v *= &p;
        }
        let joint = (v * &m).sum();
        Ok((joint - m1 * m1) / (m2 - m1 * m1))
    }

    /// Limiting IDC: 1 - 2 lambda + 2 pi D1 (e pi - D)^{-1} D1 e / lambda.
    pub fn idc_inf(&self) -> Result<f64, SolveError> {
        let n = self.phases();
        let pi = self.pi_row()?;
        let lam = (&pi * &self.d1).sum();
        let e = DVector::from_element(n, 1.0);
        let z = (&e * &pi - self.generator())
            .try_inverse()
            .ok_or_else(|| SolveError::Numerical("e pi - D is singular".into()))?;
        let x = (&pi * &self.d1 * z * &self.d1 * e)[(0, 0)];
        Ok(1.0 - 2.0 * lam + 2.0 * x / lam)
    }

    /// Factorial moments E[N], E[N(N-1)], E[N(N-1)(N-2)] of the counts in (0, t]
    /// of the stationary MAP, from one block matrix exponential (Van Loan):
    /// u_k' = u_k D + k u_{k-1} D1 with u_0 = pi.
    pub fn factorial_moments(&self, t: f64) -> Result<[f64; 3], SolveError> {
        let n = self.phases();
        let pi = self.pi_row()?;
        let d = self.generator();
        let mut b = DMatrix::<f64>::zeros(4 * n, 4 * n);
        for k in 0..4 {
            b.view_mut((k * n, k * n), (n, n)).copy_from(&(&d * t));
            if k < 3 {
                b.view_mut((k * n, (k + 1) * n), (n, n))
                    .copy_from(&(&self.d1 * (t * (k + 1) as f64)));
            }
        }
        let ex = b.exp();
        let mut z = [0.0; 3];
        for (k, zk) in z.iter_mut().enumerate() {
            let blk = ex.view((0, (k + 1) * n), (n, n));
            *zk = (&pi * blk).sum();
        }
        Ok(z)
    }

    /// IDC(t) = Var N(t) / E N(t).
    pub fn idc(&self, t: f64) -> Result<f64, SolveError> {
        let c = self.count_stats(t)?;
        Ok(c.var / c.mean)
    }

    /// Mean, variance and third central moment of N(t).
    pub fn count_stats(&self, t: f64) -> Result<CountStats, SolveError> {
        let [z1, z2, z3] = self.factorial_moments(t)?;
        let var = z2 + z1 - z1 * z1;
        Ok(CountStats {
            t,
            mean: z1,
            var,
            third_central: third_central_from_factorial(z3, z1, var),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    #[test]
    fn closed_forms_agree_with_matrix_algorithms() {
        for p in [
            Mmpp2::new(0.5, 0.2, 3.0, 0.4).unwrap(),
            Mmpp2::new(0.09, 0.06, 4.0, 0.0).unwrap(),
            Mmpp2::new(2.0, 0.7, 0.1, 5.0).unwrap(),
            Mmpp2::new(0.6, 0.4, 1.0, 1.0).unwrap(),
        ] {
            let m = Map::from_mmpp2(&p);
            assert!(rel(m.mean_rate().unwrap(), p.mean_rate()) < 1e-13);
            assert!(rel(m.scv().unwrap(), p.scv()) < 1e-12);
            assert!(rel(m.idc_inf().unwrap(), p.idc_inf()) < 1e-11);
            for k in 1..4 {
                let a = m.lag_corr(k).unwrap();
                let b = p.lag_corr(k);
                assert!((a - b).abs() < 1e-12, "lag {k}: {a} vs {b}");
            }
            for t in [0.1, 1.0, 7.3, 40.0] {
                let c = m.count_stats(t).unwrap();
                let z3 = m.factorial_moments(t).unwrap()[2];
                assert!(rel(c.mean, p.mean_count(t)) < 1e-11);
                assert!(rel(c.var, p.var_count(t)) < 1e-10, "t={t}");
                assert!(
                    rel(z3, p.third_factorial(t)) < 1e-9,
                    "t={t}: {z3} vs {}",
                    p.third_factorial(t)
                );
                assert!(
                    (c.third_central - p.third_central(t)).abs()
                        < 1e-8 * p.third_factorial(t).abs().max(1.0),
                    "t={t}"
                );
            }
        }
    }

    #[test]
    fn superposition_of_poissons_is_poisson() {
        let s = Map::poisson(1.5).superpose(&Map::poisson(2.0));
        assert!(rel(s.mean_rate().unwrap(), 3.5) < 1e-14);
        assert!((s.idc_inf().unwrap() - 1.0).abs() < 1e-13);
        assert!((s.scv().unwrap() - 1.0).abs() < 1e-13);
    }

    #[test]
    fn lumped_copies_equal_the_kronecker_superposition() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let one = Map::from_mmpp2(&p);
        let k3 = one.superpose(&one).superpose(&one);
        let l3 = Map::lumped_copies(&p, 3);
        assert_eq!(l3.phases(), 4);
        assert!(rel(l3.mean_rate().unwrap(), 3.0 * p.mean_rate()) < 1e-13);
        assert!(rel(l3.idc_inf().unwrap(), k3.idc_inf().unwrap()) < 1e-12);
        assert!(rel(l3.scv().unwrap(), k3.scv().unwrap()) < 1e-12);
        let (a, b) = (l3.count_stats(2.5).unwrap(), k3.count_stats(2.5).unwrap());
        assert!(rel(a.var, b.var) < 1e-11);
        assert!(rel(a.third_central, b.third_central) < 1e-9);
        assert!((l3.lag_corr(1).unwrap() - k3.lag_corr(1).unwrap()).abs() < 1e-12);
    }

    #[test]
    fn refuses_a_non_generator() {
        let d0 = DMatrix::from_row_slice(1, 1, &[-1.0]);
        let d1 = DMatrix::from_row_slice(1, 1, &[2.0]);
        assert!(Map::new(d0, d1).is_err());
    }
}
