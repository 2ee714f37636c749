//! The traffic algebra of the Wu ch.6–7 models: a flow is either Poisson or a
//! two-state MMPP, and every operation (split, superpose, queue, departure)
//! is exact for Poisson flows (Burke's theorem, superposition and thinning of
//! Poisson processes) and goes through the shared library for MMPPs:
//! splitting (3.18), the Heffes–Lucantoni superposition fit (3.19–3.34, W-5),
//! MMPP/M/1 (6.8–6.11, W-41), MMPP/M/1/K (7.5–7.10, W-56) and the
//! departure-process fit (6.13–6.14, W-42, W-43, M-3). Keeping Poisson exact
//! is what makes the ch.6 model equal the Jackson product form to rounding.

use crate::queueing::mmpp::counts::{departure_count_moments, departure_idc_inf, CountMoments};
use crate::queueing::mmpp::departure::truncation;
use crate::queueing::mmpp::{mmpp_m1, mmpp_m1k};
use crate::traffic::mmpp::fit::{fit_mmpp2, Characteristics};
use crate::traffic::mmpp::{superpose_fit, Mmpp2};
use crate::SolveError;

/// Most levels of the truncated infinite-queue departure MAP used for the
/// W-57 output of a finite queue; beyond it the exact finite-queue output is
/// fitted instead (see `departure_lossy`).
pub const LEVEL_CAP: usize = 2000;

/// How the output of a finite queue was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMethod {
    /// The infinite MMPP^e/M/1 queue (W-57).
    Infinite,
    /// The exact MMPP/M/1/K departure MAP (W-57's cross-check), used where
    /// the infinite queue's tail needs more than [`LEVEL_CAP`] levels.
    Finite,
}

/// Which output process a finite queue's departure fit uses (item of the
/// `output` parameter of `wlan_access.model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputRule {
    /// W-57 (the infinite MMPP^e/M/1 fed by the effective flow) wherever
    /// its tail needs at most [`LEVEL_CAP`] levels, else the exact
    /// finite-queue output (the default, `departure_lossy`).
    Auto,
    /// The exact MMPP/M/1/K departure MAP for every MMPP flow, at any load
    /// (the catalogue's W-57 cross-check, as an alternative reading).
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
        self.departure_lossy_with(mu, k, p_block, OutputRule::Auto)
    }

    /// [`Flow::departure_lossy`] under an explicit [`OutputRule`]. A Poisson
    /// flow gives the Poisson flow of the accepted rate under either rule.
    pub fn departure_lossy_with(
        &self,
        mu: f64,
        k: usize,
        p_block: f64,
        rule: OutputRule,
    ) -> Result<(Flow, OutputMethod), SolveError> {
        let eff = self.split(1.0 - p_block);
        let Flow::Mmpp(m) = *self else {
            return Ok((eff.departure(mu)?, OutputMethod::Infinite));
        };
        let Flow::Mmpp(e) = eff else {
            unreachable!("split keeps the kind")
        };
        if rule == OutputRule::Auto && e.mean_rate() < mu && infinite_levels(&e, mu)? <= LEVEL_CAP {
            return Ok((eff.departure(mu)?, OutputMethod::Infinite));
        }
        Ok((Flow::Mmpp(finite_output(&m, mu, k)?), OutputMethod::Finite))
    }
}

/// The M-3 departure fit of MMPP/M/1, as `departure_mmpp2` (same truncation
/// rule, same W-5 time, same counting moments from the Laplace domain, same
/// Heffes–Lucantoni fit), with two differences for the network models: a
/// Poisson-like input (IDC(inf) = 1) gives a Poisson output, and a departure
/// IDC(t) above IDC(inf) is clamped just below it.
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
    let levels = truncation(p, mu)?;
    let t = 0.5 * (1.0 / p.phi1 + 1.0 / p.phi2);
    let m = departure_count_moments(p, mu, levels, t)?;
    fit_output(&m, t, p.idc_inf())
}

/// The two-state MMPP of an output with counting moments `m` at t and the
/// given IDC(inf): Poisson when IDC(inf) <= 1 (a two-state MMPP cannot be
/// smoother than Poisson); otherwise the Heffes–Lucantoni fit, with a
/// departure IDC(t) above IDC(inf) (possible for an output, impossible for
/// a two-state MMPP) clamped just below it. The third central moment is the
/// one of the factorial moments with that clamped variance, as before the
/// moments were computed centred (docs/models/wireless.md).
fn fit_output(m: &CountMoments, t: f64, idc_inf: f64) -> Result<Mmpp2, SolveError> {
    if idc_inf <= 1.0 + 1e-9 {
        return Ok(Mmpp2::poisson(m.mean / t));
    }
    let idc_t = (m.var / m.mean).min(1.0 + (idc_inf - 1.0) * (1.0 - 1e-6));
    let var = idc_t * m.mean;
    let target = Characteristics {
        t,
        rate: m.mean / t,
        idc_t,
        idc_inf,
        third_central_t: m.third_central + 3.0 * (m.mean - 1.0) * (m.var - var),
    };
    Ok(fit_mmpp2(&target)?.mmpp)
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
    let m = departure_count_moments(p, mu, k, t)?;
    // The finite queue's output IDC need not increase with t (an almost
    // always busy server smooths short windows), while a two-state MMPP's
    // does: `fit_output` clamps IDC(t) to just below IDC(inf), the nearest
    // target the fit admits (documented in docs/models/wireless.md). A
    // saturated server's IDC(inf) <= 1 gives a Poisson output.
    fit_output(&m, t, departure_idc_inf(p, mu, k)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queueing::mmpp::departure_mmpp2;

    /// The network's fit is the library's `departure_mmpp2` (same levels,
    /// same moments, same fit) wherever neither the Poisson rule nor the
    /// IDC clamp applies.
    #[test]
    fn network_fit_is_the_library_fit() {
        for (p, mu) in [
            (Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap(), 2.4),
            (Mmpp2::new(0.09, 0.06, 300.0, 250.0).unwrap(), 418.0),
        ] {
            let a = departure_fit(&p, mu).unwrap();
            let b = departure_mmpp2(&p, mu, None).unwrap().fit.mmpp;
            assert_eq!(a, b, "{p:?} mu {mu}");
        }
    }

    /// The lossy output of a finite queue at ρ = 0.9 (the exact
    /// MMPP/M/1/K departure MAP) keeps the accepted rate, and its
    /// characteristics match the dense MAP's (the independent reference).
    #[test]
    fn finite_output_matches_the_dense_map() {
        use crate::queueing::mmpp::departure::finite_departure_map;
        use crate::traffic::mmpp::mmpp2::third_central_from_factorial;
        let p = Mmpp2::new(0.09, 0.06, 30.0, 25.0).unwrap();
        let (mu, k) = (30.0, 40);
        let got = finite_output(&p, mu, k).unwrap();
        let q = mmpp_m1k(&p, mu, k).unwrap();
        assert!((got.mean_rate() - q.throughput).abs() < 1e-9 * q.throughput);
        let t = 0.5 * (1.0 / p.phi1 + 1.0 / p.phi2);
        let map = finite_departure_map(&p, mu, k).unwrap();
        let [z1, z2, z3] = map.factorial_moments(t).unwrap();
        let var = z2 + z1 - z1 * z1;
        let c = Characteristics::of(&got, t);
        let idc_inf = map.idc_inf().unwrap();
        let want_idc = (var / z1).min(1.0 + (idc_inf - 1.0) * (1.0 - 1e-6));
        assert!(
            (c.idc_t - want_idc).abs() < 1e-6 * want_idc,
            "{} vs {want_idc}",
            c.idc_t
        );
        assert!(
            (c.idc_inf - idc_inf).abs() < 1e-6 * idc_inf,
            "{} vs {idc_inf}",
            c.idc_inf
        );
        let g3 = third_central_from_factorial(z3, z1, want_idc * z1);
        assert!(
            (c.third_central_t - g3).abs() < 1e-5 * g3.abs(),
            "{} vs {g3}",
            c.third_central_t
        );
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
