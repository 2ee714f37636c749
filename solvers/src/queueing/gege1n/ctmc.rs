//! Exact CTMC of the GE-type queue on {0..K}, built from the transition rules
//! (customer-level reasoning about batches and zero-length services), solved
//! by GTH. It shares nothing with the ME closed form but the queue definition.

use super::model::GeQueue;
use crate::markov::ctmc::Generator;
use crate::SolveError;

/// Largest K for the dense chain (GTH is O(K³), memory O(K²)).
pub const MAX_CTMC_K: usize = 600;

#[derive(Debug, Clone, PartialEq)]
pub struct CtmcSolution {
    pub p: Vec<f64>,
    /// Customers lost per unit time divided by λ.
    pub p_block: f64,
    /// Customer departures per unit time (including zero-work pass-throughs).
    pub throughput: f64,
}

pub fn generator(q: &GeQueue) -> Result<Generator, SolveError> {
    generator_ordered(q, false, "K")
}

/// With `reversed`, state n is stored at index K − n. GTH fixes the state at
/// index 0 to 1 and grows the others from it, so in heavy overload (mass near
/// K, ratios ~1e2 per state) the natural order overflows; the reversed one
/// only underflows states that are negligible anyway.
/// `param` is the name the user wrote for the capacity (`K` for the
/// threshold queue, `N` for GE/GE/1/N): errors name it, rule included.
fn generator_ordered(q: &GeQueue, reversed: bool, param: &str) -> Result<Generator, SolveError> {
    let k = q.k;
    if k > MAX_CTMC_K {
        return Err(SolveError::param(
            param,
            format!("the exact chain is dense; {param} must be <= {MAX_CTMC_K}, got {k}"),
        ));
    }
    let (ta, ts) = (q.tau_a(), q.tau_s());
    let (a, s) = (1.0 - ta, 1.0 - ts);
    let batch_rate = ta * q.lambda;
    // P(B >= b) = a^{b-1} for the geometric batch size B on {1, 2, ...}.
    let tail = |b: usize| a.powi(b as i32 - 1);
    let mut g = Generator::new(k + 1);
    let idx = |n: usize| if reversed { k - n } else { n };
    let mut add = |from: usize, to: usize, rate: f64| g.add(idx(from), idx(to), rate);
    // A batch at an empty system: members reach the idle server one by one;
    // member j is the first with positive work with probability
    // P(B >= j) s^{j-1} τ_s, and then the B - j later members queue behind it.
    // Given B >= j, B - j + 1 is again geometric, so the end state is
    // min(1 + R, K) with P(R >= r) = a^r.
    let p_start: f64 = {
        // Σ_j (a s)^{j-1} τ_s, summed as a geometric series.
        ts / (1.0 - a * s)
    };
    for m in 1..=k {
        let pr = if m < k {
            tail(m) - tail(m + 1)
        } else {
            tail(k)
        };
        add(0, m, batch_rate * p_start * pr);
    }
    for n in 1..=k {
        // Batch at a busy server: min(n + B, K), the excess is lost.
        for m in (n + 1)..=k {
            let b = m - n;
            let pr = if m < k {
                tail(b) - tail(b + 1)
            } else {
                tail(b)
            };
            add(n, m, batch_rate * pr);
        }
        // A positive service completes at rate τ_s μ(n); each following
        // customer has zero work with probability s and leaves too.
        let nu = ts * q.mu(n);
        for d in 1..=n {
            let pr = if d < n {
                s.powi(d as i32 - 1) * ts
            } else {
                s.powi(n as i32 - 1)
            };
            add(n, n - d, nu * pr);
        }
    }
    Ok(g)
}

pub fn solve(q: &GeQueue) -> Result<CtmcSolution, SolveError> {
    solve_for(q, "K")
}

/// [`solve`], naming the capacity `param` as the user wrote it in errors.
pub fn solve_for(q: &GeQueue, param: &str) -> Result<CtmcSolution, SolveError> {
    let p = match generator_ordered(q, false, param)?.steady_state_for(param) {
        Ok(p) => p,
        Err(SolveError::Numerical(_)) => {
            let mut p = generator_ordered(q, true, param)?.steady_state_for(param)?;
            p.reverse();
            p
        }
        Err(e) => return Err(e),
    };
    let k = q.k;
    let (ta, ts) = (q.tau_a(), q.tau_s());
    let (a, s) = (1.0 - ta, 1.0 - ts);
    let batch_rate = ta * q.lambda;
    // Expected customers lost per batch: E[(B - room)^+] = a^room / (1 - a);
    // at 0 the first positive-work member takes one place, the rest of the
    // batch (P(R >= r) = a^r) has K - 1 places.
    let p_start = ts / (1.0 - a * s);
    let mut lost = p[0] * p_start * a.powi(k as i32) / ta;
    for (n, pn) in p.iter().enumerate().skip(1) {
        lost += pn * a.powi((k - n) as i32) / ta;
    }
    let p_block = batch_rate * lost / q.lambda;
    // Departures: a completion in state n takes 1 + (number of following
    // zero-work customers) out, at most n; a batch at an empty system lets
    // its leading zero-work members through: E = Σ_{j>=1} a^{j-1} s^j.
    let mut dep = p[0] * batch_rate * s / (1.0 - a * s);
    for (n, pn) in p.iter().enumerate().skip(1) {
        let mean_d: f64 = (0..n).map(|d| s.powi(d as i32)).sum();
        dep += pn * ts * q.mu(n) * mean_d;
    }
    Ok(CtmcSolution {
        p,
        p_block,
        throughput: dep,
    })
}
