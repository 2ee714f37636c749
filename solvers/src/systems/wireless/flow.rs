//! The traffic algebra of the Wu ch.6–7 models: a flow is either Poisson or a
//! two-state MMPP, and every operation (split, superpose, queue, departure)
//! is exact for Poisson flows (Burke's theorem, superposition and thinning of
//! Poisson processes) and goes through the shared library for MMPPs:
//! splitting (3.18), the Heffes–Lucantoni superposition fit (3.19–3.34, W-5),
//! MMPP/M/1 (6.8–6.11, W-41), MMPP/M/1/K (7.5–7.10, W-56) and the
//! departure-process fit (6.13–6.14, W-42, W-43, M-3). Keeping Poisson exact
//! is what makes the ch.6 model equal the Jackson product form to rounding.

use crate::queueing::mmpp::departure::{departure_factorial_moments, finite_departure_map};
use crate::queueing::mmpp::{mmpp_m1, mmpp_m1k};
use crate::traffic::mmpp::fit::{fit_mmpp2, Characteristics};
use crate::traffic::mmpp::mmpp2::third_central_from_factorial;
use crate::traffic::mmpp::{superpose_fit, Mmpp2};
use crate::SolveError;

/// Most levels of the truncated infinite-queue departure MAP used for the
/// W-57 output of a finite queue; beyond it the exact finite-queue output is
/// fitted instead (see `departure_lossy`).
pub const LEVEL_CAP: usize = 2000;

/// Bound on uniformisation steps × levels of one departure fit (≈ 1 s).
pub const MAX_WORK: f64 = 1e9;

/// How the output of a finite queue was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMethod {
    /// The infinite MMPP^e/M/1 queue (W-57).
    Infinite,
    /// The exact MMPP/M/1/K departure MAP (W-57's cross-check), used where
    /// the infinite queue's tail needs more than [`LEVEL_CAP`] levels.
    Finite,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Flow {
    Poisson(f64),
    Mmpp(Mmpp2),
}

/// Results of a finite queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finite {
    /// Mean time in system of accepted packets.
    pub w: f64,
    /// Probability that an arriving packet is lost (7.9–7.10).
    pub p_block: f64,
}

impl Flow {
    pub fn rate(&self) -> f64 {
        match self {
            Flow::Poisson(l) => *l,
            Flow::Mmpp(m) => m.mean_rate(),
        }
    }

    fn as_mmpp(&self) -> Mmpp2 {
        match self {
            Flow::Poisson(l) => Mmpp2::poisson(*l),
            Flow::Mmpp(m) => *m,
        }
    }

    /// Bernoulli thinning with probability p (3.18).
    pub fn split(&self, p: f64) -> Flow {
        match self {
            Flow::Poisson(l) => Flow::Poisson(l * p),
            Flow::Mmpp(m) => Flow::Mmpp(m.split(p)),
        }
    }

    /// Superposition of independent flows, each with a number of copies,
    /// fitted by a two-state MMPP at the W-5 time (exact when all are Poisson).
    pub fn superpose(parts: &[(Flow, f64)]) -> Result<Flow, SolveError> {
        if parts.iter().all(|(f, _)| matches!(f, Flow::Poisson(_))) {
            return Ok(Flow::Poisson(parts.iter().map(|(f, n)| f.rate() * n).sum()));
        }
        let comps: Vec<(Mmpp2, f64)> = parts.iter().map(|(f, n)| (f.as_mmpp(), *n)).collect();
        Ok(Flow::Mmpp(superpose_fit(&comps, None)?.mmpp))
    }

    /// `factor` copies of this flow: floor(factor) independent copies plus one
    /// copy split by the fractional part, superposed and fitted (Wu §3.3.4);
    /// a plain split when factor <= 1.
    pub fn scaled(&self, factor: f64) -> Result<Flow, SolveError> {
        if factor <= 1.0 {
            return Ok(self.split(factor));
        }
        let whole = factor.floor();
        let frac = factor - whole;
        let mut parts = vec![(*self, whole)];
        if frac > 0.0 {
            parts.push((self.split(frac), 1.0));
        }
        Flow::superpose(&parts)
    }

    /// Mean time in system of the ·/M/1 queue with service rate mu.
    pub fn sojourn(&self, mu: f64) -> Result<f64, SolveError> {
        match self {
            Flow::Poisson(l) if *l < mu => Ok(1.0 / (mu - l)),
            Flow::Poisson(l) => Err(SolveError::Unstable(format!("rho = {} >= 1", l / mu))),
            Flow::Mmpp(m) => Ok(mmpp_m1(m, mu)?.w),
        }
    }

    /// Output of the ·/M/1 queue with service rate mu: the same Poisson flow
    /// (Burke), or the fitted departure MMPP (M-3, fitted at the W-5 time of
    /// the input).
    pub fn departure(&self, mu: f64) -> Result<Flow, SolveError> {
        match self {
            Flow::Poisson(l) if *l < mu => Ok(Flow::Poisson(*l)),
            Flow::Poisson(l) => Err(SolveError::Unstable(format!("rho = {} >= 1", l / mu))),
            Flow::Mmpp(m) => Ok(Flow::Mmpp(departure_fit(m, mu)?)),
        }
    }

    /// The ·/M/1/K queue (K counts the packet in service).
    pub fn finite(&self, mu: f64, k: usize) -> Result<Finite, SolveError> {
        let q = mmpp_m1k(&self.as_mmpp(), mu, k)?;
        Ok(Finite {
            w: q.w,
            p_block: q.p_block,
        })
    }
}

impl Flow {
    /// Output of the ·/M/1/K queue fed by this flow, whose arrivals are lost
    /// with probability `p_block`. As in §7.2.3 (W-57) it is the output of
    /// the infinite queue fed by the effective flow (7.4); Poisson stays
    /// Poisson. Where the effective queue is so close to saturation that its
    /// tail needs more than [`LEVEL_CAP`] levels (a heavily overloaded finite
    /// queue, whose real output is nearly the saturated server's), the exact
    /// finite-queue departure MAP is fitted instead, with the same
    /// Heffes–Lucantoni routine and W-5 time.
    pub fn departure_lossy(
        &self,
        mu: f64,
        k: usize,
        p_block: f64,
    ) -> Result<(Flow, OutputMethod), SolveError> {
        let eff = self.split(1.0 - p_block);
        let Flow::Mmpp(m) = *self else {
            return Ok((eff.departure(mu)?, OutputMethod::Infinite));
        };
        let Flow::Mmpp(e) = eff else {
            unreachable!("split keeps the kind")
        };
        if e.mean_rate() < mu && infinite_levels(&e, mu)? <= LEVEL_CAP {
            return Ok((eff.departure(mu)?, OutputMethod::Infinite));
        }
        Ok((Flow::Mmpp(finite_output(&m, mu, k)?), OutputMethod::Finite))
    }
}

/// The M-3 departure fit of MMPP/M/1, exactly as `departure_mmpp2` (same
/// truncation rule, same W-5 time, same Heffes–Lucantoni fit), with the
/// factorial moments from [`factorial_moments_one_series`]: the MR outputs of
/// ch.6 have q·t ≈ 10⁴ (μ ≈ 418/s, t ≈ 13 s), where restarting the Poisson
/// series every q·dt = 20 (the library's chunking) costs 5x more steps.
///
/// Memoised per process ([`FitMemo`]): the `averaging: traffic` and
/// `printed` series of a ch.6 manifest solve the same network, so the second
/// task finds every fit (a pure function of its inputs) already computed.
pub fn departure_fit(p: &Mmpp2, mu: f64) -> Result<Mmpp2, SolveError> {
    let key = [p.phi1, p.phi2, p.lambda1, p.lambda2, mu].map(f64::to_bits);
    match FitMemo::claim(key) {
        Claim::Done(m) => Ok(m),
        Claim::Compute(guard) => {
            let r = departure_fit_uncached(p, mu);
            if let Ok(m) = &r {
                guard.finish(*m);
            }
            r
        }
    }
}

/// Process-wide memo of [`departure_fit`] keyed by the exact bits of its
/// inputs, so a hit returns what the computation would (bit for bit). A fit
/// being computed by another task's thread is waited for rather than computed
/// twice (the traffic and printed series of one point are solved in
/// parallel). Bounded: cleared of finished fits at [`FitMemo::CAP`] entries.
pub struct FitMemo;

type FitKey = [u64; 5];

enum Slot {
    Pending,
    Done(Mmpp2),
}

enum Claim {
    Done(Mmpp2),
    Compute(PendingFit),
}

/// The right (and duty) to compute one fit; dropping it unfinished (an
/// error or a panic) removes the pending mark and wakes the waiters, which
/// then compute it themselves.
struct PendingFit {
    key: FitKey,
    done: bool,
}

impl PendingFit {
    fn finish(mut self, fit: Mmpp2) {
        let (lock, cv) = FitMemo::state();
        let mut m = lock.lock().unwrap_or_else(|e| e.into_inner());
        m.insert(self.key, Slot::Done(fit));
        self.done = true;
        cv.notify_all();
    }
}

impl Drop for PendingFit {
    fn drop(&mut self) {
        if !self.done {
            let (lock, cv) = FitMemo::state();
            let mut m = lock.lock().unwrap_or_else(|e| e.into_inner());
            m.remove(&self.key);
            cv.notify_all();
        }
    }
}

type MemoState = (
    std::sync::Mutex<std::collections::HashMap<FitKey, Slot>>,
    std::sync::Condvar,
);

impl FitMemo {
    const CAP: usize = 4096;

    fn state() -> &'static MemoState {
        static STATE: std::sync::OnceLock<MemoState> = std::sync::OnceLock::new();
        STATE.get_or_init(Default::default)
    }

    /// Forgets every finished fit (benchmarks time the computation, not the memo).
    pub fn clear() {
        let (lock, _) = Self::state();
        let mut m = lock.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, s| matches!(s, Slot::Pending));
    }

    fn claim(key: FitKey) -> Claim {
        let (lock, cv) = Self::state();
        let mut m = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match m.get(&key) {
                Some(Slot::Done(fit)) => return Claim::Done(*fit),
                Some(Slot::Pending) => m = cv.wait(m).unwrap_or_else(|e| e.into_inner()),
                None => {
                    if m.len() >= Self::CAP {
                        m.retain(|_, s| matches!(s, Slot::Pending));
                    }
                    m.insert(key, Slot::Pending);
                    return Claim::Compute(PendingFit { key, done: false });
                }
            }
        }
    }
}

fn departure_fit_uncached(p: &Mmpp2, mu: f64) -> Result<Mmpp2, SolveError> {
    let q = mmpp_m1(p, mu)?;
    let mut x = q.pi;
    let mut levels = 0;
    // E[N²] = Σ_{v>=1} (2v − 1) P(N >= v), from the same tail walk.
    let mut second = 0.0;
    while x.sum() >= 1e-10 || levels < 8 {
        x *= q.r;
        levels += 1;
        second += (2 * levels - 1) as f64 * x.sum();
        if levels > 200_000 {
            return Err(SolveError::Numerical(format!(
                "departure process: the queue tail needs more than 200000 levels (rho = {})",
                q.rho
            )));
        }
    }
    let t = 0.5 * (1.0 / p.phi1 + 1.0 / p.phi2);
    let qu = p.phi1.max(p.phi2) + p.lambda1.max(p.lambda2) + mu;
    let work = qu * t * levels as f64;
    if work > MAX_WORK {
        // Over a window t much longer than the queue's memory the departures
        // D(t) = A(t) + N(0) − N(t) count like the arrivals: Var(N(0) − N(t))
        // <= 4 E[N²], so the relative change of Var D(t) is at most
        // 4E[N²]/Var A + 4 sqrt(E[N²]/Var A). Below 1e-2 the input itself is
        // the fitted output (the mean is exact; 1% is below the
        // fit's own error). This is what happens when a near-Poisson
        // superposition is fitted with a very slow, very intense phase.
        let var_a = p.var_count(t);
        let r = second / var_a;
        let bound = 4.0 * r + 4.0 * r.sqrt();
        if bound < 1e-2 {
            return Ok(*p);
        }
        return Err(SolveError::Numerical(format!(
            "departure fit: q t L = {work:.3e} exceeds the work bound {MAX_WORK:.0e} (uniformisation rate q = {qu:.4}, fitting time t = {t:.4} s, {levels} levels at rho = {:.4}, long-window bound {bound:.2e}); the point is too close to saturation or the modulation too slow",
            q.rho
        )));
    }
    let [z1, z2, z3] = factorial_moments_one_series(p, mu, levels, t)?;
    let var = z2 + z1 - z1 * z1;
    let idc_inf = p.idc_inf();
    if idc_inf <= 1.0 + 1e-9 {
        return Ok(Mmpp2::poisson(z1 / t));
    }
    // As in `finite_output`: a departure IDC(t) above IDC(inf) (possible for
    // an output, impossible for a two-state MMPP) is clamped just below it.
    let idc_t = (var / z1).min(1.0 + (idc_inf - 1.0) * (1.0 - 1e-6));
    let target = Characteristics {
        t,
        rate: z1 / t,
        idc_t,
        idc_inf,
        third_central_t: third_central_from_factorial(z3, z1, idc_t * z1),
    };
    Ok(fit_mmpp2(&target)?.mmpp)
}

/// Factorial moments of the departures in (0, t] of the stationary
/// MMPP/M/1/L queue: u_k' = u_k D + k u_{k−1} D1 (u_0 = π) by uniformisation
/// in one Poisson series, its weights carried in log space so that nothing
/// underflows for large q·t; the series is cut at q·t + 12√(q·t) + 40 terms
/// (the library's rule) and terms left of q·t − 12√(q·t) − 40 are skipped.
///
/// This is the cost of the ch.6 model (q·t ≈ 10⁴ steps over 2L ≈ 10³
/// states), so one step updates the three moment vectors in a single fused,
/// branch-free pass: vectors carry two zero states of padding at each end
/// and every state has its own coefficients (zero where the chain has no such
/// transition), which adds exact zeros where the per-state version skipped a
/// term. Each element sees the same operations in the same order as in
/// [`factorial_moments_reference`], so the results are identical to the bit
/// (checked by a test).
pub fn factorial_moments_one_series(
    p: &Mmpp2,
    mu: f64,
    l: usize,
    t: f64,
) -> Result<[f64; 3], SolveError> {
    let st = mmpp_m1k(p, mu, l)?;
    let n = st.p.len();
    let lam = [p.lambda1, p.lambda2];
    let phi = [p.phi1, p.phi2];
    let q = (0..2).map(|j| phi[j] + lam[j] + mu).fold(0.0, f64::max);
    let qt = q * t;
    let last = (qt + 12.0 * qt.sqrt() + 40.0) as usize;
    let first = (qt - 12.0 * qt.sqrt() - 40.0).max(0.0) as usize;
    let a_mu = mu / q;
    // Per-state coefficients of y[s] = x[s] diag + x[s^1] c_phi + x[s−2] c_lam
    // + x[s+2] a_mu (the last is an exact zero at the top level, padding).
    let mut diag = vec![0.0; n];
    let mut c_phi = vec![0.0; n];
    let mut c_lam = vec![0.0; n];
    for s in 0..n {
        let (v, j) = (s / 2, s % 2);
        let out = phi[j] + if v < l { lam[j] } else { 0.0 } + if v >= 1 { mu } else { 0.0 };
        diag[s] = 1.0 - out / q;
        c_phi[s] = phi[1 - j] / q;
        c_lam[s] = if v >= 1 { lam[j] / q } else { 0.0 };
    }
    // State s lives at index s + 2 (two zero states of padding at each end),
    // as [π_s, u_1, u_2, u_3]: the three moment vectors interleaved so that a
    // step updates them with the same lane-wise arithmetic, and lane k − 1
    // is the "previous moment" that feeds moment k (π for the first).
    let mut cur = vec![[0.0f64; 4]; n + 4];
    for s in 0..n {
        cur[s + 2][0] = st.p[s];
    }
    let mut nxt = cur.clone();
    let mut z = [0.0; 3];
    let ln_qt = qt.ln();
    let mut ln_w = -qt; // ln of e^{-qt} (qt)^i / i!
    const K: [f64; 3] = [1.0, 2.0, 3.0];
    for i in 0..=last {
        if i > 0 {
            for s in 0..n {
                let (d, f, g) = (diag[s], c_phi[s], c_lam[s]);
                let (x, pr) = (s + 2, (s ^ 1) + 2);
                let (cx, cp, cl, cu) = (cur[x], cur[pr], cur[s], cur[x + 2]);
                let y = &mut nxt[x];
                // Same order as the reference: diag + phase, + arrival,
                // + service, then + k · (previous moment's service) term.
                for k in 0..3 {
                    let mut v = cx[k + 1] * d + cp[k + 1] * f;
                    v += cl[k + 1] * g;
                    v += cu[k + 1] * a_mu;
                    v += K[k] * cu[k] * a_mu;
                    y[k + 1] = v;
                }
            }
            std::mem::swap(&mut cur, &mut nxt);
            ln_w += ln_qt - (i as f64).ln();
        }
        if i >= first {
            let w = ln_w.exp();
            for k in 0..3 {
                z[k] += w * cur[2..n + 2].iter().map(|c| c[k + 1]).sum::<f64>();
            }
        }
    }
    Ok(z)
}

/// The first version of [`factorial_moments_one_series`] (one pass per
/// moment, index arithmetic per state), kept as the reference the fused loop
/// must reproduce bit for bit.
///
/// Factorial moments of the departures in (0, t] of the stationary
/// MMPP/M/1/L queue: u_k' = u_k D + k u_{k−1} D1 (u_0 = π) by uniformisation
/// in one Poisson series, its weights carried in log space so that nothing
/// underflows for large q·t; the series is cut at q·t + 12√(q·t) + 40 terms
/// (the library's rule) and terms left of q·t − 12√(q·t) − 40 are skipped.
#[cfg(test)]
fn factorial_moments_reference(
    p: &Mmpp2,
    mu: f64,
    l: usize,
    t: f64,
) -> Result<[f64; 3], SolveError> {
    let st = mmpp_m1k(p, mu, l)?;
    let pi = &st.p;
    let n = pi.len();
    let lam = [p.lambda1, p.lambda2];
    let phi = [p.phi1, p.phi2];
    let q = (0..2).map(|j| phi[j] + lam[j] + mu).fold(0.0, f64::max);
    let qt = q * t;
    let last = (qt + 12.0 * qt.sqrt() + 40.0) as usize;
    let first = (qt - 12.0 * qt.sqrt() - 40.0).max(0.0) as usize;
    // Diagonal of I + D/q per state, precomputed.
    let diag: Vec<f64> = (0..n)
        .map(|s| {
            let (v, j) = (s / 2, s % 2);
            let out = phi[j] + if v < l { lam[j] } else { 0.0 } + if v >= 1 { mu } else { 0.0 };
            1.0 - out / q
        })
        .collect();
    let (a_phi, a_lam, a_mu) = ([phi[0] / q, phi[1] / q], [lam[0] / q, lam[1] / q], mu / q);
    // One step of cur_k <- cur_k (I + D/q) + k cur_{k-1} D1/q, cur_0 = pi,
    // for k = 3, 2, 1 in place (each reads the old cur_{k-1}).
    let step = |x: &[f64], y: &mut [f64]| {
        for s in 0..n {
            let (v, j) = (s / 2, s % 2);
            let mut acc = x[s] * diag[s] + x[2 * v + 1 - j] * a_phi[1 - j];
            if v >= 1 {
                acc += x[s - 2] * a_lam[j];
            }
            if v < l {
                acc += x[s + 2] * a_mu;
            }
            y[s] = acc;
        }
    };
    let add_d1 = |x: &[f64], k: f64, y: &mut [f64]| {
        for s in 0..n.saturating_sub(2) {
            y[s] += k * x[s + 2] * a_mu;
        }
    };
    let mut cur = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    let mut nxt = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    let mut z = [0.0; 3];
    let ln_qt = qt.ln();
    let mut ln_w = -qt; // ln of e^{-qt} (qt)^i / i!
    for i in 0..=last {
        if i > 0 {
            for k in 0..3 {
                step(&cur[k], &mut nxt[k]);
            }
            add_d1(pi, 1.0, &mut nxt[0]);
            add_d1(&cur[0], 2.0, &mut nxt[1]);
            add_d1(&cur[1], 3.0, &mut nxt[2]);
            std::mem::swap(&mut cur, &mut nxt);
            ln_w += ln_qt - (i as f64).ln();
        }
        if i >= first {
            let w = ln_w.exp();
            for k in 0..3 {
                z[k] += w * cur[k].iter().sum::<f64>();
            }
        }
    }
    Ok(z)
}

/// Truncation level of the infinite queue's departure MAP (tail < 1e-10),
/// capped just above [`LEVEL_CAP`].
fn infinite_levels(p: &Mmpp2, mu: f64) -> Result<usize, SolveError> {
    let q = mmpp_m1(p, mu)?;
    let mut x = q.pi;
    let mut l = 0;
    while x.sum() >= 1e-10 || l < 8 {
        x *= q.r;
        l += 1;
        if l > LEVEL_CAP {
            break;
        }
    }
    Ok(l)
}

/// Two-state fit of the exact departure process of MMPP/M/1/K.
fn finite_output(p: &Mmpp2, mu: f64, k: usize) -> Result<Mmpp2, SolveError> {
    if k > 4 * LEVEL_CAP {
        return Err(SolveError::Numerical(format!(
            "finite-queue output with K = {k} is too large to build"
        )));
    }
    let t = 0.5 * (1.0 / p.phi1 + 1.0 / p.phi2);
    // The same work bound as the infinite queue's fit (the fuzz harness found
    // a finite station taking 46 s without one).
    let qu = p.phi1.max(p.phi2) + p.lambda1.max(p.lambda2) + mu;
    let work = qu * t * k as f64;
    if work.is_nan() || work > MAX_WORK {
        return Err(SolveError::Numerical(format!(
            "departure fit of a finite queue: q t K = {work:.3e} exceeds the work bound {MAX_WORK:.0e} (uniformisation rate q = {qu:.4}, fitting time t = {t:.4} s, K = {k}); the modulation is too slow for these rates"
        )));
    }
    let [z1, z2, z3] = departure_factorial_moments(p, mu, k, t)?;
    let var = z2 + z1 - z1 * z1;
    let idc_inf = finite_departure_map(p, mu, k)?.idc_inf()?;
    if idc_inf <= 1.0 + 1e-9 {
        // A saturated server's output is at most as variable as Poisson:
        // the two-state family cannot do better than Poisson here.
        return Ok(Mmpp2::poisson(z1 / t));
    }
    // The finite queue's output IDC need not increase with t (an almost
    // always busy server smooths short windows), while a two-state MMPP's
    // does: clamp IDC(t) to just below IDC(inf), the nearest target the
    // fit admits (documented in docs/models/wireless.md).
    let idc_t = (var / z1).min(1.0 + (idc_inf - 1.0) * (1.0 - 1e-6));
    let target = Characteristics {
        t,
        rate: z1 / t,
        idc_t,
        idc_inf,
        third_central_t: third_central_from_factorial(z3, z1, idc_t * z1),
    };
    Ok(fit_mmpp2(&target)?.mmpp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queueing::mmpp::departure_mmpp2;

    #[test]
    fn one_series_moments_match_the_library() {
        for (p, mu, l, t) in [
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 30, 3.0),
            (
                Mmpp2::new(0.09, 0.06, 300.0, 250.0).unwrap(),
                418.0,
                200,
                13.9,
            ),
        ] {
            let a = factorial_moments_one_series(&p, mu, l, t).unwrap();
            let b = departure_factorial_moments(&p, mu, l, t).unwrap();
            for k in 0..3 {
                assert!(
                    (a[k] - b[k]).abs() <= 1e-10 * b[k].abs(),
                    "{k}: {} vs {}",
                    a[k],
                    b[k]
                );
            }
        }
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let a = departure_fit(&p, 2.4).unwrap();
        let b = departure_mmpp2(&p, 2.4, None).unwrap().fit.mmpp;
        for (x, y) in [
            (a.phi1, b.phi1),
            (a.phi2, b.phi2),
            (a.lambda1, b.lambda1),
            (a.lambda2, b.lambda2),
        ] {
            assert!((x - y).abs() < 1e-8 * y.abs(), "{x} vs {y}");
        }
    }

    /// The fused loop reproduces the per-state reference to the bit, on
    /// small and ch.6-sized cases (both phases with arrivals, one silent).
    #[test]
    fn fused_moments_equal_the_reference_exactly() {
        for (p, mu, l, t) in [
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 1, 3.0),
            (Mmpp2::new(0.4, 0.3, 1.5, 0.2).unwrap(), 2.0, 30, 3.0),
            (Mmpp2::new(0.09, 0.06, 4.8, 0.0).unwrap(), 12.0, 60, 13.9),
            (
                Mmpp2::new(0.09, 0.06, 300.0, 250.0).unwrap(),
                418.0,
                200,
                13.9,
            ),
        ] {
            let a = factorial_moments_one_series(&p, mu, l, t).unwrap();
            let b = factorial_moments_reference(&p, mu, l, t).unwrap();
            assert_eq!(a, b, "{p:?} mu {mu} L {l} t {t}");
        }
    }

    /// A memo hit returns exactly the fresh computation.
    #[test]
    fn memoised_fit_equals_a_fresh_one() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let fresh = departure_fit_uncached(&p, 2.7).unwrap();
        let first = departure_fit(&p, 2.7).unwrap();
        let second = departure_fit(&p, 2.7).unwrap();
        assert_eq!(fresh, first);
        assert_eq!(fresh, second);
        // Concurrent claims of one new key: one computes, the others wait.
        let q = Mmpp2::new(0.2, 0.1, 3.0, 0.5).unwrap();
        let fresh = departure_fit_uncached(&q, 3.9).unwrap();
        let got: Vec<Mmpp2> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| departure_fit(&q, 3.9).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(got.iter().all(|g| *g == fresh));
        // An error leaves no pending mark behind: the next call errs again.
        assert!(departure_fit(&q, 1.0).is_err());
        assert!(departure_fit(&q, 1.0).is_err());
    }

    #[test]
    fn poisson_algebra_is_exact() {
        let f = Flow::Poisson(2.0);
        assert_eq!(f.scaled(2.5).unwrap(), Flow::Poisson(5.0));
        assert_eq!(f.split(0.25), Flow::Poisson(0.5));
        assert_eq!(f.departure(3.0).unwrap(), Flow::Poisson(2.0));
        assert!((f.sojourn(3.0).unwrap() - 1.0).abs() < 1e-15);
        assert!(f.sojourn(2.0).is_err());
        // M/M/1/K: blocking = rho^K (1 - rho) / (1 - rho^{K+1}).
        let q = Flow::Poisson(1.0).finite(2.0, 3).unwrap();
        let r: f64 = 0.5;
        assert!((q.p_block - r.powi(3) * (1.0 - r) / (1.0 - r.powi(4))).abs() < 1e-12);
    }

    #[test]
    fn mmpp_scaling_keeps_the_rate() {
        let m = Flow::Mmpp(Mmpp2::new(0.09, 0.06, 2.0, 0.0).unwrap());
        for f in [0.3, 1.0, 1.7, 3.0] {
            let s = m.scaled(f).unwrap();
            assert!((s.rate() - f * m.rate()).abs() < 1e-12 * f, "{f}");
        }
    }
}
