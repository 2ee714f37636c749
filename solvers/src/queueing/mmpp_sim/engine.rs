//! The event engine behind the MMPP queue simulators: one FIFO server, an
//! optional finite buffer, customers as records (arrival time, service
//! demand, batch) in a queue, and two pending events (next arrival from the
//! source, next departure of the customer in service).
//!
//! Batches are counted in arriving customers: after `warmup` arrivals, batch k
//! holds arrivals warmup + k·batch_len .. warmup + (k+1)·batch_len. Time
//! averages of a batch run from the arrival epoch of its first customer to the
//! epoch of the first customer of the next batch; per-customer measures
//! (sojourn, wait, loss) go to the batch in which the customer arrived. After
//! the last batch no further arrivals are admitted and the queue drains: under
//! FIFO a customer's departure does not depend on later arrivals, so this
//! completes the measured customers without bias.

use crate::des::{ci95, FastLn, Stream, Tally};
use crate::traffic::sources::ArrivalSource;
use crate::{Outcome, SolveError, TaskContext};
use std::collections::VecDeque;

/// One component of a service law: a deterministic shift plus an exponential
/// of rate `rate` (absent = no exponential part).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServiceComponent {
    pub weight: f64,
    pub shift: f64,
    pub rate: Option<f64>,
}

/// Service time law: a mixture of shifted exponentials (weights sum to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceLaw {
    comps: Vec<ServiceComponent>,
    /// 1/rate of each component (0 without an exponential part).
    means: Vec<f64>,
    /// Cumulative weights, the last forced to +inf so rounding never falls through.
    cum: Vec<f64>,
}

impl ServiceLaw {
    pub fn exponential(rate: f64) -> Self {
        Self::mixture(vec![ServiceComponent {
            weight: 1.0,
            shift: 0.0,
            rate: Some(rate),
        }])
    }

    /// `comps` must be validated by the caller (weights > 0 summing to 1,
    /// shift >= 0, rate > 0, not both parts absent).
    pub fn mixture(comps: Vec<ServiceComponent>) -> Self {
        let mut acc = 0.0;
        let mut cum: Vec<f64> = comps
            .iter()
            .map(|c| {
                acc += c.weight;
                acc
            })
            .collect();
        if let Some(last) = cum.last_mut() {
            *last = f64::INFINITY;
        }
        let means = comps
            .iter()
            .map(|c| c.rate.map_or(0.0, |r| 1.0 / r))
            .collect();
        ServiceLaw { comps, means, cum }
    }

    /// One service time: the component by one uniform (if there are
    /// several), then its shift plus an exponential by [`FastLn::exp`].
    #[inline]
    pub fn sample(&self, rng: &mut Stream, ln: &FastLn) -> f64 {
        let k = if self.comps.len() == 1 {
            0
        } else {
            let u = rng.uniform();
            self.cum.iter().position(|&x| u < x).unwrap_or(0)
        };
        let c = &self.comps[k];
        match c.rate {
            Some(_) => c.shift + ln.exp(rng, self.means[k]),
            None => c.shift,
        }
    }

    pub fn mean(&self) -> f64 {
        self.comps
            .iter()
            .map(|c| c.weight * (c.shift + c.rate.map_or(0.0, |r| 1.0 / r)))
            .sum()
    }

    /// E[S²] = Σ w (c² + 2c/α + 2/α²).
    pub fn second_moment(&self) -> f64 {
        self.comps
            .iter()
            .map(|c| {
                let e = c.rate.map_or(0.0, |r| 1.0 / r);
                c.weight * (c.shift * c.shift + 2.0 * c.shift * e + 2.0 * e * e)
            })
            .sum()
    }
}

/// Run length in arriving customers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub warmup: u64,
    pub batches: u32,
    pub batch_len: u64,
    /// Buffer capacity including the customer in service; `None` = infinite.
    pub capacity: Option<usize>,
    /// Most events (arrivals, departures and the source's internal events)
    /// the run may take: [`crate::params::sim_budget`]'s safety net.
    pub budget: u64,
}

/// Raw accumulators of one batch.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchAcc {
    pub duration: f64,
    /// ∫ N(t) dt (customers in system).
    pub area_n: f64,
    /// ∫ V(t) dt (unfinished work).
    pub area_work: f64,
    pub empty_time: f64,
    pub arrived: u64,
    pub lost: u64,
    /// Sojourn times of accepted customers that arrived in this batch.
    pub sojourn: Tally,
    /// Waits in queue (arrival to start of service) of the same customers.
    pub wait: Tally,
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub batches: Vec<BatchAcc>,
    /// Every arrival, including warm-up and the end marker.
    pub arrivals: u64,
    pub departures: u64,
    /// Arrivals + departures + internal events of the source.
    pub events: u64,
}

#[derive(Debug, Clone, Copy)]
struct Customer {
    arrival: f64,
    service: f64,
    batch: u32,
}

const WARMUP: u32 = u32::MAX;

/// The error of a source that reports no further arrival (its time no longer
/// advances: see `Mmpp2Source::next_arrival`).
fn silent_source(now: f64) -> SolveError {
    SolveError::Numerical(format!(
        "the arrival process stopped producing arrivals at simulated time {now:.3e} (its phases no longer advance the clock at this float resolution)"
    ))
}

/// Simulates the FIFO single-server queue fed by `source`.
pub fn run_fifo<S: ArrivalSource>(
    source: &mut S,
    service: &ServiceLaw,
    svc_rng: &mut Stream,
    plan: Plan,
    ctx: &TaskContext,
) -> Result<RunResult, SolveError> {
    let ln = FastLn::new();
    let nb = plan.batches as usize;
    let mut acc = vec![BatchAcc::default(); nb];
    let cap = plan.capacity.unwrap_or(usize::MAX);
    let mut queue: VecDeque<Customer> = VecDeque::with_capacity(cap.min(4096));

    let end_index = plan.warmup + plan.batches as u64 * plan.batch_len;
    let mut next_boundary = plan.warmup;
    let mut cur: u32 = WARMUP;
    let mut batch_start = 0.0;

    let mut now = 0.0f64;
    let mut work = 0.0f64;
    let mut next_check: u64 = 0x10000;
    let mut t_arr = source.next_arrival();
    if !t_arr.is_finite() {
        return Err(silent_source(now));
    }
    let mut t_dep = f64::INFINITY;
    let mut arrivals: u64 = 0;
    let mut departures: u64 = 0;

    // Time integrals up to `t`; V decreases at unit rate while busy and cannot
    // reach 0 before the departure that empties the system.
    macro_rules! advance {
        ($t:expr) => {{
            let t = $t;
            let dt = t - now;
            let n = queue.len();
            if cur != WARMUP {
                let a = &mut acc[cur as usize];
                if n == 0 {
                    a.empty_time += dt;
                } else {
                    a.area_n += n as f64 * dt;
                    a.area_work += dt * (work - 0.5 * dt);
                }
            }
            if n > 0 {
                work = (work - dt).max(0.0);
            }
            now = t;
        }};
    }

    loop {
        if t_arr < t_dep {
            advance!(t_arr);
            if arrivals == next_boundary {
                if cur != WARMUP {
                    acc[cur as usize].duration = now - batch_start;
                }
                if arrivals == end_index {
                    break;
                }
                cur = if cur == WARMUP { 0 } else { cur + 1 };
                batch_start = now;
                next_boundary += plan.batch_len;
            }
            arrivals += 1;
            // Cancel and budget checks every 65,536 events, counting the
            // source's phase changes: a source may change phase thousands of
            // times per arrival.
            let events = arrivals + departures + source.internal_events();
            if events >= next_check {
                ctx.check_cancel()?;
                if events > plan.budget {
                    return Err(crate::params::over_budget(plan.budget));
                }
                next_check = events + 0x10000;
            }
            if cur != WARMUP {
                acc[cur as usize].arrived += 1;
            }
            if queue.len() >= cap {
                if cur != WARMUP {
                    acc[cur as usize].lost += 1;
                }
            } else {
                let s = service.sample(svc_rng, &ln);
                work += s;
                queue.push_back(Customer {
                    arrival: now,
                    service: s,
                    batch: cur,
                });
                if queue.len() == 1 {
                    t_dep = now + s;
                    if cur != WARMUP {
                        acc[cur as usize].wait.add(0.0);
                    }
                }
            }
            t_arr = source.next_arrival();
            if !t_arr.is_finite() {
                return Err(silent_source(now));
            }
        } else {
            advance!(t_dep);
            departures += 1;
            let done = queue.pop_front().expect("a departure needs a customer");
            if done.batch != WARMUP {
                acc[done.batch as usize].sojourn.add(now - done.arrival);
            }
            match queue.front() {
                Some(next) => {
                    t_dep = now + next.service;
                    if next.batch != WARMUP {
                        acc[next.batch as usize].wait.add(now - next.arrival);
                    }
                }
                None => {
                    t_dep = f64::INFINITY;
                    work = 0.0;
                }
            }
        }
    }

    // Drain: complete the measured customers still in the system.
    while let Some(done) = queue.pop_front() {
        now = t_dep;
        departures += 1;
        if done.batch != WARMUP {
            acc[done.batch as usize].sojourn.add(now - done.arrival);
        }
        if let Some(next) = queue.front() {
            t_dep = now + next.service;
            if next.batch != WARMUP {
                acc[next.batch as usize].wait.add(now - next.arrival);
            }
        }
    }

    Ok(RunResult {
        batches: acc,
        arrivals: arrivals + 1,
        departures,
        events: arrivals + 1 + departures + source.internal_events(),
    })
}

/// Lag-1 autocorrelation of a sequence (0 when it is constant or too short).
pub fn lag1(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let den: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    if den.is_nan() || den <= 0.0 {
        return 0.0;
    }
    let num: f64 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    num / den
}

/// Largest lag-1 correlation used to widen a CI. Beyond it the batches are
/// hopeless anyway and the widening factor (√19 ≈ 4.4) says so loudly.
const LAG1_CAP: f64 = 0.9;

/// Mean and widened 95% half-width of batch means: the Student-t half-width
/// times √((1+r)/(1−r)), r = the positive part of the lag-1 correlation of
/// the batch means (the variance factor of the mean of an AR(1) sequence).
pub fn widened_ci(x: &[f64]) -> (f64, f64, f64) {
    let (m, h) = ci95(x);
    let r = lag1(x);
    // The estimator is biased low by about (1 + 3r)/b with b batches
    // (Marriott & Pope 1954), which with b = 10 hides most of the correlation.
    let b = x.len() as f64;
    let rp = (r + (1.0 + 3.0 * r) / b).clamp(0.0, LAG1_CAP);
    (m, h * ((1.0 + rp) / (1.0 - rp)).sqrt(), r)
}

/// Builds the outcome from per-batch values of each metric, adding the
/// diagnostic `batch_lag1` (largest lag-1 correlation of the batch means).
pub fn batch_outcome(metrics: &[(&str, Vec<f64>)]) -> Outcome {
    let mut out = Outcome::new();
    let mut worst = f64::NEG_INFINITY;
    for (name, v) in metrics {
        let (m, h, r) = widened_ci(v);
        worst = worst.max(r);
        out = out.with_estimate(name, m, h, v.len() as u64);
    }
    out.with("batch_lag1", if worst.is_finite() { worst } else { 0.0 })
}
