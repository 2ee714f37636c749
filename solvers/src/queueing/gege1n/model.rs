//! The queue shared by GE/GE/1/N and the Yan ch.5 threshold queues: GE-type
//! batch arrivals, GE service with bulk departures, a service rate that depends
//! on the number in system through regions separated by thresholds, capacity K
//! (including the customer in service), partial batch acceptance.
//!
//! Only the definition and the validation live here; the ME closed form
//! (`me`), the exact chain (`ctmc`) and the simulator (`sim`) are written
//! independently of each other so that each can check the others.

use crate::params::count;
use crate::traffic::ge::{check_scv, tau};
use crate::SolveError;

#[derive(Debug, Clone, PartialEq)]
pub struct GeQueue {
    pub lambda: f64,
    pub ca2: f64,
    pub cs2: f64,
    /// One service rate per region; region k (0-based) holds T_{k-1} < n <= T_k.
    pub mus: Vec<f64>,
    /// Ascending thresholds, one fewer than `mus`.
    pub thresholds: Vec<usize>,
    /// Capacity including the customer in service.
    pub k: usize,
}

/// Largest capacity accepted (the ME form and the simulator are O(K); the
/// dense CTMC has its own, smaller limit).
pub const MAX_K: usize = 1_000_000;
/// Largest number of service-rate regions (metric names U1..U16).
pub const MAX_REGIONS: usize = 16;

impl GeQueue {
    /// Validates everything; `thresholds` and `k` arrive as JSON numbers.
    /// Rule chosen for K: K must exceed the last threshold, so that every
    /// region holds at least one state (K == T_last would make the last rate
    /// unreachable, which is almost certainly a mistake in the manifest).
    pub fn new(
        lambda: f64,
        ca2: f64,
        cs2: f64,
        mus: &[f64],
        thresholds: &[f64],
        k: f64,
    ) -> Result<Self, SolveError> {
        let lambda = crate::params::model_value("lambda", lambda)?;
        let ca2 = check_scv("ca2", ca2)?;
        let cs2 = check_scv("cs2", cs2)?;
        if mus.is_empty() {
            return Err(SolveError::param(
                "mus",
                "needs at least one service rate (one per region)",
            ));
        }
        if mus.len() > MAX_REGIONS {
            return Err(SolveError::param(
                "mus",
                format!(
                    "at most {MAX_REGIONS} regions are supported, got {}",
                    mus.len()
                ),
            ));
        }
        for (i, &m) in mus.iter().enumerate() {
            if !(m.is_finite() && m > 0.0) {
                return Err(SolveError::param(
                    "mus",
                    format!("every rate must be finite and > 0; mus[{i}] = {m}"),
                ));
            }
            crate::params::model_value(&format!("mus[{i}]"), m)?;
        }
        if thresholds.len() + 1 != mus.len() {
            return Err(SolveError::param(
                "thresholds",
                format!(
                    "needs one fewer entry than mus ({} rates need {} thresholds), got {}",
                    mus.len(),
                    mus.len() - 1,
                    thresholds.len()
                ),
            ));
        }
        let mut ts = Vec::with_capacity(thresholds.len());
        for &t in thresholds {
            let t = count("thresholds", t, 1)?;
            if let Some(&prev) = ts.last() {
                if t <= prev {
                    return Err(SolveError::param(
                        "thresholds",
                        format!("must be strictly ascending, got {t} after {prev}"),
                    ));
                }
            }
            ts.push(t);
        }
        let k = count("K", k, 1)?;
        if k > MAX_K {
            return Err(SolveError::param("K", format!("must be <= {MAX_K}")));
        }
        if let Some(&last) = ts.last() {
            if k <= last {
                return Err(SolveError::param(
                    "K",
                    format!("must exceed the last threshold ({last}) so that every region is reachable, got {k}"),
                ));
            }
        }
        Ok(GeQueue {
            lambda,
            ca2,
            cs2,
            mus: mus.to_vec(),
            thresholds: ts,
            k,
        })
    }

    /// GE/GE/1/N: one region, capacity N.
    pub fn single(lambda: f64, mu: f64, ca2: f64, cs2: f64, n: f64) -> Result<Self, SolveError> {
        crate::params::model_value("mu", mu)?;
        Self::new(lambda, ca2, cs2, &[mu], &[], n)
            .map_err(|e| rename_param(e, "mus", "mu"))
            .map_err(|e| rename_param(e, "K", "N"))
    }

    pub fn tau_a(&self) -> f64 {
        tau(self.ca2)
    }
    pub fn tau_s(&self) -> f64 {
        tau(self.cs2)
    }
    pub fn regions(&self) -> usize {
        self.mus.len()
    }
    /// Region (0-based) of a state n >= 1; state 0 is reported as region 0.
    pub fn region(&self, n: usize) -> usize {
        self.thresholds.iter().take_while(|&&t| n > t).count()
    }
    /// Service rate in state n (meaningful for n >= 1).
    pub fn mu(&self, n: usize) -> f64 {
        self.mus[self.region(n)]
    }
}

fn rename_param(e: SolveError, from: &str, to: &str) -> SolveError {
    match e {
        SolveError::InvalidParam { param, rule } if param == from => SolveError::InvalidParam {
            param: to.to_string(),
            rule,
        },
        other => other,
    }
}

/// Metrics derived from a stationary distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueMetrics {
    pub l: f64,
    pub u: f64,
    /// P(n in region k), k = 1..regions; they sum to U.
    pub u_regions: Vec<f64>,
    pub p_block: f64,
    pub p_full: f64,
    pub throughput: f64,
}

impl QueueMetrics {
    /// L, U, U_k and P(K) from `p`; blocking and throughput are supplied by the
    /// caller because each method derives them its own way.
    pub fn from_distribution(q: &GeQueue, p: &[f64], p_block: f64, throughput: f64) -> Self {
        let mut u_regions = vec![0.0; q.regions()];
        for (n, pn) in p.iter().enumerate().skip(1) {
            u_regions[q.region(n)] += pn;
        }
        QueueMetrics {
            l: p.iter().enumerate().map(|(n, x)| n as f64 * x).sum(),
            u: u_regions.iter().sum(),
            u_regions,
            p_block,
            p_full: p[q.k],
            throughput,
        }
    }

    pub fn into_outcome(self) -> crate::Outcome {
        let mut o = crate::Outcome::new()
            .with("L", self.l)
            .with("U", self.u)
            .with("P_block", self.p_block)
            .with("P_full", self.p_full)
            .with("throughput", self.throughput);
        for (i, u) in self.u_regions.iter().enumerate() {
            o = o.with(&format!("U{}", i + 1), *u);
        }
        o
    }
}
