//! The engine behind the MMPP queue simulators: one FIFO server, an optional
//! finite buffer, and arrivals from a source as the only events: each
//! accepted customer's departure follows from the previous one's (Lindley),
//! and a ring of departure times tells how many are in the system.
//!
//! Batches are counted in arriving customers: after `warmup` arrivals, batch k
//! holds arrivals warmup + k·batch_len .. warmup + (k+1)·batch_len. Time
//! averages of a batch run from the arrival epoch of its first customer to the
//! epoch of the first customer of the next batch; per-customer measures
//! (sojourn, wait, loss) go to the batch in which the customer arrived. After
//! the last batch no further arrivals are admitted and the queue drains: under
//! FIFO a customer's departure does not depend on later arrivals, so this
//! completes the measured customers without bias.

use crate::des::{ci95, Stream, Tally};
use crate::traffic::sources::ArrivalSource;
use crate::{Outcome, SolveError, TaskContext};

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
    /// (shift, 1/rate) of a law of one component with an exponential part:
    /// the common case, drawn without looking at the vectors.
    single: Option<(f64, f64)>,
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
        let means: Vec<f64> = comps
            .iter()
            .map(|c| c.rate.map_or(0.0, |r| 1.0 / r))
            .collect();
        let single = match comps[..] {
            [ServiceComponent {
                shift,
                rate: Some(_),
                ..
            }] => Some((shift, means[0])),
            _ => None,
        };
        ServiceLaw {
            comps,
            means,
            cum,
            single,
        }
    }

    /// One service time: the component by one uniform (if there are
    /// several), then its shift plus a unit exponential ([`Stream::exp1`],
    /// a ziggurat) times the component's mean.
    #[inline(always)]
    pub fn sample(&self, rng: &mut Stream) -> f64 {
        match self.single {
            Some((shift, mean)) => shift + rng.exp1() * mean,
            None => self.sample_mixture(rng),
        }
    }

    /// [`ServiceLaw::sample`] of a law with several components or without
    /// an exponential part.
    #[inline(never)]
    fn sample_mixture(&self, rng: &mut Stream) -> f64 {
        let k = if self.comps.len() == 1 {
            0
        } else {
            let u = rng.uniform();
            self.cum.iter().position(|&x| u < x).unwrap_or(0)
        };
        let c = &self.comps[k];
        match c.rate {
            Some(_) => c.shift + rng.exp1() * self.means[k],
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

/// The error of a source that reports no further arrival (its time no longer
/// advances: see `Mmpp2Clock::next_arrival` in `traffic/sources.rs`).
fn silent_source(now: f64) -> SolveError {
    SolveError::Numerical(format!(
        "the arrival process stopped producing arrivals at simulated time {now:.3e} (its phases no longer advance the clock at this float resolution)"
    ))
}

/// Departure times of the accepted customers, indexed by their order of
/// acceptance, in a ring that holds at least every customer still in the
/// system. FIFO departure times never decrease, so the customers in the
/// system at time t are the most recent entries with a departure after t.
/// The count of customers accepted so far (`len`, the index of the next
/// one) is kept by the caller ([`Hot::len`]) and passed in.
struct Departures {
    ring: Vec<f64>,
    mask: u64,
}

impl Departures {
    fn new(capacity: usize) -> Self {
        let n = capacity.next_power_of_two();
        Departures {
            ring: vec![f64::NEG_INFINITY; n],
            mask: n as u64 - 1,
        }
    }

    /// The departure time of customer `i` if the ring still holds it
    /// (otherwise it left before the entry was overwritten: -inf).
    #[inline(always)]
    fn get(&self, len: u64, i: u64) -> f64 {
        if i + self.ring.len() as u64 >= len && i < len {
            self.ring[(i & self.mask) as usize]
        } else {
            f64::NEG_INFINITY
        }
    }

    /// Whether the `k`-th last accepted customer is still in the system at
    /// `now` (`get` without its range test when the ring holds k entries).
    #[inline(always)]
    fn kth_last_after(&self, len: u64, k: u64, now: f64) -> bool {
        if len < k {
            return false;
        }
        let i = len - k;
        if k <= self.ring.len() as u64 {
            self.ring[(i & self.mask) as usize] > now
        } else {
            self.get(len, i) > now
        }
    }

    /// Appends the departure time `d` of a customer accepted at `now` as
    /// customer `len` (the caller then counts it); doubles the ring if the
    /// entry it would overwrite is still in the system.
    #[inline(always)]
    fn push(&mut self, len: u64, d: f64, now: f64) {
        let slot = (len & self.mask) as usize;
        if self.ring[slot] > now {
            self.grow(len);
            return self.push(len, d, now);
        }
        self.ring[slot] = d;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, len: u64) {
        let old = self.ring.len() as u64;
        let mut ring = vec![f64::NEG_INFINITY; 2 * old as usize];
        let mask = 2 * old - 1;
        for i in len.saturating_sub(old)..len {
            ring[(i & mask) as usize] = self.ring[(i & self.mask) as usize];
        }
        self.ring = ring;
        self.mask = mask;
    }

    /// Σ (D − t) over the customers in the system at `t` (D > t).
    fn excess(&self, len: u64, t: f64) -> f64 {
        let mut e = 0.0;
        let lo = len.saturating_sub(self.ring.len() as u64);
        let mut i = len;
        while i > lo {
            i -= 1;
            let d = self.ring[(i & self.mask) as usize];
            if d <= t {
                break;
            }
            e += d - t;
        }
        e
    }
}

/// What changes at every arrival: the clock and the counters. A value of
/// its own, apart from [`Fifo`] and [`Departures`], whose addresses reach
/// functions that are not inlined (the ring's growth, the cancel check):
/// this one's never does, so it stays in registers through the loops.
#[derive(Debug, Clone, Copy)]
struct Hot {
    /// The epoch of the last arrival handled.
    now: f64,
    /// Departure time of the last accepted customer (the system is empty
    /// from then until the next arrival).
    d_last: f64,
    /// The epoch of the next arrival (not yet handled).
    t_arr: f64,
    /// Arrivals handled so far.
    arrivals: u64,
    /// Customers accepted so far (the ring's next index).
    len: u64,
    next_check: u64,
}

/// What a run reads at every arrival and does not change (but for the
/// streams' states and the ring).
struct Fifo<'a, S> {
    source: &'a mut S,
    service: &'a ServiceLaw,
    svc_rng: &'a mut Stream,
    ctx: &'a TaskContext,
    budget: u64,
    cap: Option<u64>,
    deps: Departures,
}

impl<S: ArrivalSource> Fifo<'_, S> {
    /// Moves the clock to the next arrival; with `COUNT`, the interval
    /// since the previous one goes to `a`: unfinished work v − (t − now)
    /// while positive, the system empty after.
    #[inline(always)]
    fn advance<const COUNT: bool>(h: &mut Hot, a: &mut BatchAcc) {
        let t = h.t_arr;
        if COUNT {
            let dt = t - h.now;
            let v = (h.d_last - h.now).max(0.0);
            let x = v.min(dt);
            a.area_work += x * (v - 0.5 * x);
            a.empty_time += dt - x;
        }
        h.now = t;
    }

    /// Handles the arrival at `now` (admitted or lost; with `COUNT`, counted
    /// in `a`) and draws the next one.
    #[inline(always)]
    fn arrive<const COUNT: bool>(
        &mut self,
        h: &mut Hot,
        a: &mut BatchAcc,
    ) -> Result<(), SolveError> {
        let now = h.now;
        h.arrivals += 1;
        // Cancel and budget checks every 65,536 events, counting the
        // source's phase changes (a source may change phase thousands of
        // times per arrival) and each accepted customer's departure.
        let events = h.arrivals + h.len + self.source.internal_events();
        if events >= h.next_check {
            h.next_check = check(self.ctx, self.budget, events)?;
        }
        // Full when the K-th last accepted customer is still in the system.
        let full = match self.cap {
            Some(k) => self.deps.kth_last_after(h.len, k, now),
            None => false,
        };
        if COUNT {
            a.arrived += 1;
            if full {
                a.lost += 1;
            }
        }
        if !full {
            let s = self.service.sample(self.svc_rng);
            let (start, wait) = if h.d_last > now {
                (h.d_last, h.d_last - now)
            } else {
                (now, 0.0)
            };
            let d = start + s;
            self.deps.push(h.len, d, now);
            h.len += 1;
            h.d_last = d;
            if COUNT {
                let sojourn = d - now;
                a.sojourn.add(sojourn);
                a.wait.add(wait);
                a.area_n += sojourn;
            }
        }
        h.t_arr = self.source.next_arrival();
        if !h.t_arr.is_finite() {
            return Err(silent_source(now));
        }
        Ok(())
    }
}

/// The cancel and budget checks after `events` events; the event count of
/// the next check.
#[cold]
#[inline(never)]
fn check(ctx: &TaskContext, budget: u64, events: u64) -> Result<u64, SolveError> {
    ctx.check_cancel()?;
    if events > budget {
        return Err(crate::params::over_budget(budget));
    }
    Ok(events + 0x10000)
}

/// Simulates the FIFO single-server queue fed by `source`.
///
/// Departures in Lindley form: a customer accepted at time A starts service
/// at max(A, D') (D' the departure of the customer before it) and leaves at
/// that plus its service time, so its wait and sojourn are known on arrival
/// and the only events are arrivals. Under FIFO these are the times an event
/// calendar gives, operation for operation. Between two arrivals the
/// unfinished work falls at unit rate from D' − A to 0, so the work and
/// empty-time integrals of each interval are closed forms; ∫N(t)dt of a
/// batch is the sojourn sum of its customers, minus what the customers in
/// the system at its end spend after it, plus what those in the system at
/// its start spend in it (the ring of departure times holds them).
///
/// The warm-up and each batch are loops of their own (the warm-up's without
/// any accounting), each batch summing into its own accumulator.
pub fn run_fifo<S: ArrivalSource>(
    source: &mut S,
    service: &ServiceLaw,
    svc_rng: &mut Stream,
    plan: Plan,
    ctx: &TaskContext,
) -> Result<RunResult, SolveError> {
    let t_arr = source.next_arrival();
    if !t_arr.is_finite() {
        return Err(silent_source(0.0));
    }
    let mut q = Fifo {
        source,
        service,
        svc_rng,
        ctx,
        budget: plan.budget,
        cap: plan.capacity.map(|k| k as u64),
        deps: Departures::new(plan.capacity.unwrap_or(1024).clamp(1, 1024)),
    };
    let mut h = Hot {
        now: 0.0,
        d_last: 0.0,
        t_arr,
        arrivals: 0,
        len: 0,
        next_check: 0x10000,
    };
    // The warm-up's arrivals are handled and not counted.
    let mut scratch = BatchAcc::default();
    for _ in 0..plan.warmup {
        Fifo::<S>::advance::<false>(&mut h, &mut scratch);
        q.arrive::<false>(&mut h, &mut scratch)?;
    }
    Fifo::<S>::advance::<false>(&mut h, &mut scratch);
    let mut acc = Vec::with_capacity(plan.batches as usize);
    // What the customers in the system at a batch's first arrival spend
    // after it moves from the batch that ends to the one that starts.
    let mut e = q.deps.excess(h.len, h.now);
    for _ in 0..plan.batches {
        let mut a = BatchAcc {
            area_n: e,
            ..BatchAcc::default()
        };
        let batch_start = h.now;
        q.arrive::<true>(&mut h, &mut a)?;
        for _ in 1..plan.batch_len {
            Fifo::<S>::advance::<true>(&mut h, &mut a);
            q.arrive::<true>(&mut h, &mut a)?;
        }
        // The interval up to the first arrival of the next batch (after
        // the last batch: the end marker, which is not admitted).
        Fifo::<S>::advance::<true>(&mut h, &mut a);
        e = q.deps.excess(h.len, h.now);
        a.duration = h.now - batch_start;
        a.area_n -= e;
        acc.push(a);
    }

    // Every accepted customer departs (the queue drains after the end).
    let departures = h.len;
    Ok(RunResult {
        batches: acc,
        arrivals: h.arrivals + 1,
        departures,
        events: h.arrivals + 1 + departures + q.source.internal_events(),
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
