//! Steady state of a finite, irreducible CTMC by the GTH algorithm
//! (Grassmann, Taksar & Heyman 1985).
//!
//! GTH performs no subtractions, so it keeps full relative accuracy even for
//! probabilities of 1e-15 and below, where LU with a normalisation row loses
//! them. Zero entries are skipped, so a banded generator (tandem queues, QBDs
//! with few levels) costs O(N·b²) instead of O(N³).

use crate::SolveError;

/// Largest chain the dense GTH solver stores: 8·N² bytes (128 MiB at N = 4096).
pub const MAX_STATES: usize = 4096;
/// Largest elimination work GTH accepts, in multiply-adds counted from the
/// generator's envelope (plus the O(N²) scans): about half a second of CPU
/// on the machines repro was measured on, so no analytic solver built on GTH
/// takes more than a second.
pub const MAX_WORK: f64 = 2.0e8;

/// Refuses a chain of `states` states before its storage is allocated,
/// naming the parameter that sets its size.
pub fn check_states(param: &str, states: usize) -> Result<(), SolveError> {
    if states > MAX_STATES {
        return Err(SolveError::param(
            param,
            format!(
                "the chain would have {states} states; the dense steady-state solver accepts at most {MAX_STATES} (8·N² bytes of memory)"
            ),
        ));
    }
    Ok(())
}

/// A generator under construction: off-diagonal rates only; the diagonal is implied.
#[derive(Debug, Clone)]
pub struct Generator {
    n: usize,
    /// Row-major n×n off-diagonal rates.
    rates: Vec<f64>,
}

impl Generator {
    /// A generator on `n` states. Solvers call [`check_states`] first: the
    /// storage is dense.
    pub fn new(n: usize) -> Self {
        Generator {
            n,
            rates: vec![0.0; n * n],
        }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Adds `rate` to the transition `from -> to`. Self-loops are ignored (they do not change the chain).
    pub fn add(&mut self, from: usize, to: usize, rate: f64) {
        if from != to && rate != 0.0 {
            self.rates[from * self.n + to] += rate;
        }
    }

    pub fn rate(&self, from: usize, to: usize) -> f64 {
        self.rates[from * self.n + to]
    }

    /// Total outflow rate of `state` (= −Q[state][state]).
    pub fn outflow(&self, state: usize) -> f64 {
        self.rates[state * self.n..(state + 1) * self.n]
            .iter()
            .sum()
    }

    /// Dense generator matrix with the diagonal filled in (for cross-checks).
    pub fn to_matrix(&self) -> nalgebra::DMatrix<f64> {
        let n = self.n;
        let mut q = nalgebra::DMatrix::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    q[(i, j)] = self.rates[i * n + j];
                }
            }
            q[(i, i)] = -self.outflow(i);
        }
        q
    }

    /// An upper bound on GTH's work for this generator: the O(N²) scans plus
    /// Σ_k rows_k·cols_k, where rows and columns are bounded by the envelope
    /// of the matrix made monotone (elimination from the last state down
    /// only fills entries inside it).
    pub fn gth_work(&self) -> f64 {
        let n = self.n;
        let mut first_row = vec![0usize; n];
        let mut first_col = vec![0usize; n];
        for k in 0..n {
            first_row[k] = (0..k).find(|&i| self.rates[i * n + k] != 0.0).unwrap_or(k);
            first_col[k] = (0..k).find(|&j| self.rates[k * n + j] != 0.0).unwrap_or(k);
        }
        let (mut fr, mut fc) = (usize::MAX, usize::MAX);
        let mut work = 4.0 * (n as f64) * (n as f64);
        for k in (0..n).rev() {
            fr = fr.min(first_row[k]);
            fc = fc.min(first_col[k]);
            work += (k - fr.min(k)) as f64 * (k - fc.min(k)) as f64;
        }
        work
    }

    /// Stationary distribution π (πQ = 0, Σπ = 1) by GTH; refuses a chain
    /// whose elimination would exceed [`MAX_WORK`].
    pub fn steady_state(&self) -> Result<Vec<f64>, SolveError> {
        self.steady_state_for("state space")
    }

    /// [`Generator::steady_state`], naming `param` (the parameter that sets
    /// the chain's size) when the chain is too large.
    pub fn steady_state_for(&self, param: &str) -> Result<Vec<f64>, SolveError> {
        self.check_work(param)?;
        gth(self.n, self.rates.clone())
    }

    /// [`Generator::steady_state`] consuming the generator: its rates are
    /// eliminated in place instead of copied (for small chains solved many
    /// times, e.g. the multi-cluster model's blocking chain).
    pub fn into_steady_state(self) -> Result<Vec<f64>, SolveError> {
        self.check_work("state space")?;
        gth(self.n, self.rates)
    }

    /// Refuses a chain whose elimination would exceed [`MAX_WORK`]. The
    /// bound [`Generator::gth_work`] is at most 4N² + Σ_k k² < 4N² + N³, so
    /// a chain for which that is under the limit passes without computing
    /// its envelope.
    fn check_work(&self, param: &str) -> Result<(), SolveError> {
        let n = self.n as f64;
        if 4.0 * n * n + n * n * n <= MAX_WORK {
            return Ok(());
        }
        let work = self.gth_work();
        if work > MAX_WORK {
            return Err(SolveError::param(
                param,
                format!(
                    "the chain has {} states and its elimination needs about {work:.1e} operations; the limit is {MAX_WORK:.0e} (about half a second)",
                    self.n
                ),
            ));
        }
        Ok(())
    }
}

/// GTH on a row-major n×n matrix of off-diagonal rates (diagonal ignored).
pub fn gth(n: usize, mut a: Vec<f64>) -> Result<Vec<f64>, SolveError> {
    if n == 0 {
        return Err(SolveError::Numerical("empty state space".into()));
    }
    for (idx, x) in a.iter().enumerate() {
        if !x.is_finite() || (*x < 0.0 && idx / n != idx % n) {
            return Err(SolveError::Numerical(format!(
                "generator entry ({}, {}) = {x} is negative or not finite",
                idx / n,
                idx % n
            )));
        }
    }
    let mut rows = Vec::with_capacity(n);
    let mut cols = Vec::with_capacity(n);
    for k in (1..n).rev() {
        let s: f64 = (0..k).map(|j| a[k * n + j]).sum();
        if s <= 0.0 {
            return Err(SolveError::Numerical(format!(
                "chain is reducible: state {k} cannot reach any lower-numbered state"
            )));
        }
        rows.clear();
        cols.clear();
        for i in 0..k {
            if a[i * n + k] != 0.0 {
                a[i * n + k] /= s;
                rows.push(i);
            }
            if a[k * n + i] != 0.0 {
                cols.push(i);
            }
        }
        for &i in &rows {
            let f = a[i * n + k];
            for &j in &cols {
                if i != j {
                    a[i * n + j] += f * a[k * n + j];
                }
            }
        }
    }
    let mut pi = vec![0.0; n];
    pi[0] = 1.0;
    for j in 1..n {
        let mut acc = 0.0;
        for (i, p) in pi.iter().enumerate().take(j) {
            acc += p * a[i * n + j];
        }
        pi[j] = acc;
        // Unnormalised weights can span more than f64's range (heavy overload,
        // long chains): rescale the prefix before it overflows. Rescaling by a
        // power of two is exact, so tiny probabilities keep their accuracy.
        if acc > 1e200 {
            let scale = 2f64.powi(-(acc.log2().ceil() as i32));
            for p in pi.iter_mut().take(j + 1) {
                *p *= scale;
            }
        }
    }
    let total: f64 = pi.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(SolveError::Numerical(format!(
            "GTH normalisation failed (sum {total})"
        )));
    }
    for p in &mut pi {
        *p /= total;
    }
    Ok(pi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M/M/1/K generator on states 0..=k.
    fn mm1k(lambda: f64, mu: f64, k: usize) -> Generator {
        let mut g = Generator::new(k + 1);
        for i in 0..k {
            g.add(i, i + 1, lambda);
            g.add(i + 1, i, mu);
        }
        g
    }

    #[test]
    fn matches_mm1k_closed_form() {
        for &(lambda, mu, k) in &[(1.0, 2.0, 5), (3.0, 2.0, 10), (2.0, 2.0, 7), (0.1, 9.0, 40)] {
            let pi = mm1k(lambda, mu, k).steady_state().unwrap();
            let rho: f64 = lambda / mu;
            for (i, p) in pi.iter().enumerate() {
                let exact = if (rho - 1.0).abs() < 1e-15 {
                    1.0 / (k as f64 + 1.0)
                } else {
                    (1.0 - rho) * rho.powi(i as i32) / (1.0 - rho.powi(k as i32 + 1))
                };
                assert!((p - exact).abs() <= 1e-13 * exact, "i={i}: {p} vs {exact}");
            }
        }
    }

    #[test]
    fn keeps_tiny_probabilities_to_full_relative_accuracy() {
        // P(K) = (1-ρ)ρ^K/(1-ρ^{K+1}) ≈ 1e-40 for ρ = 0.01, K = 20.
        let (lambda, mu, k) = (0.01, 1.0, 20);
        let pi = mm1k(lambda, mu, k).steady_state().unwrap();
        let rho: f64 = lambda / mu;
        let exact = (1.0 - rho) * rho.powi(k as i32) / (1.0 - rho.powi(k as i32 + 1));
        assert!(
            ((pi[k] - exact) / exact).abs() < 1e-12,
            "{} vs {exact}",
            pi[k]
        );
    }

    #[test]
    fn satisfies_global_balance_on_a_dense_chain() {
        let n = 6;
        let mut g = Generator::new(n);
        for i in 0..n {
            for j in 0..n {
                g.add(i, j, 1.0 + ((i * 7 + j * 3) % 5) as f64);
            }
        }
        let pi = g.steady_state().unwrap();
        let q = g.to_matrix();
        for j in 0..n {
            let r: f64 = (0..n).map(|i| pi[i] * q[(i, j)]).sum();
            assert!(r.abs() < 1e-13, "column {j}: residual {r}");
        }
    }

    #[test]
    fn survives_weights_beyond_the_range_of_f64() {
        // ρ = 100 over 400 states: P(i) ∝ 100^i spans 10^800.
        let (lambda, mu, k) = (100.0, 1.0, 400);
        let pi = mm1k(lambda, mu, k).steady_state().unwrap();
        assert!(pi.iter().all(|p| p.is_finite()));
        assert!((pi[k] - 0.99).abs() < 1e-12, "{}", pi[k]);
        assert!((pi[k - 1] / pi[k] - 0.01).abs() < 1e-14);
    }

    #[test]
    fn reports_a_reducible_chain() {
        let mut g = Generator::new(3);
        g.add(0, 1, 1.0);
        g.add(1, 2, 1.0);
        assert!(matches!(g.steady_state(), Err(SolveError::Numerical(_))));
    }
}
