//! Customer-level discrete-event simulation of the GE-type queue (SIM-2).
//!
//! Customers are objects in a FIFO buffer; a batch of arrivals is processed
//! member by member, a service is drawn when a customer reaches the server
//! (zero with probability 1 − τ_s, which makes it leave at once and produces
//! bulk departures), and the service rate follows the number in system: when
//! the region changes under a customer in service, its residual work is
//! re-drawn at the new rate. Nothing here refers to the chain's generator.
//!
//! Run length is counted in arriving customers: `warmup` customers are
//! discarded, then `batches` batches of about `batch_len` customers each (a
//! batch closes at the first arrival epoch after `batch_len` customers).

use super::model::GeQueue;
use crate::des::{BatchStats, RunLength, Stream};
use crate::traffic::ge::GeBatchArrivals;
use crate::{Outcome, SolveError, TaskContext};
use std::collections::VecDeque;

pub const FULL: RunLength = RunLength::new(100_000, 10, 1_000_000);
pub const QUICK: RunLength = RunLength::new(10_000, 10, 100_000);

/// The law of [`GeBatchArrivals::next_batch`] (an exponential gap, then a
/// geometric batch size) from unit exponentials by a ziggurat,
/// [`Stream::exp1`] (simulator version 3): the gap is E·(1/(τλ)) and the
/// size 1 + ⌊E'·(−1/ln(1 − τ))⌋, geometric on {1, 2, ..} with
/// P(size > k) = P(E' ≥ k·(−ln(1 − τ))) = (1 − τ)^k. Version 2 drew both by
/// inversion of a uniform with the table logarithm `des::FastLn`.
struct Batches {
    /// Mean time between batch epochs, 1/(τλ).
    mean_gap: f64,
    /// −1 / ln(1 − τ), or 0 when τ = 1 (every batch has one customer).
    size_scale: f64,
}

impl Batches {
    fn new(source: &GeBatchArrivals) -> Self {
        let tau = source.tau();
        Batches {
            mean_gap: 1.0 / source.batch_rate(),
            size_scale: if tau >= 1.0 {
                0.0
            } else {
                -1.0 / (-tau).ln_1p()
            },
        }
    }

    /// Time to the next batch epoch and the size of that batch.
    #[inline(always)]
    fn next(&self, rng: &mut Stream) -> (f64, u64) {
        let dt = rng.exp1() * self.mean_gap;
        let size = if self.size_scale == 0.0 {
            1
        } else {
            1 + (rng.exp1() * self.size_scale).min(u64::MAX as f64 / 2.0) as u64
        };
        (dt, size)
    }
}

#[derive(Debug, Clone, Copy)]
struct Customer {
    arrived: f64,
}

/// Counters over the whole run (warm-up included), for conservation checks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub arrivals: u64,
    pub accepted: u64,
    pub lost: u64,
    pub departures: u64,
    pub in_system_at_end: u64,
    pub events: u64,
}

pub struct SimOutput {
    pub outcome: Outcome,
    pub totals: Totals,
}

struct Queue<'a> {
    q: &'a GeQueue,
    tau_s: f64,
    now: f64,
    waiting: VecDeque<Customer>,
    in_service: Option<Customer>,
    completion: f64,
    service_region: usize,
    svc: Stream,
    /// Mean service time per region, 1/(τ_s·μ_r) (the exponential branch).
    svc_mean: Vec<f64>,
    // per-batch accumulators
    last_change: f64,
    time_in_state: Vec<f64>,
    b_arrivals: u64,
    b_lost: u64,
    b_departures: u64,
    b_sojourn: f64,
    totals: Totals,
}

impl Queue<'_> {
    #[inline(always)]
    fn n(&self) -> usize {
        self.waiting.len() + usize::from(self.in_service.is_some())
    }

    #[inline(always)]
    fn advance(&mut self, t: f64) {
        let n = self.n();
        self.time_in_state[n] += t - self.last_change;
        self.last_change = t;
        self.now = t;
    }

    #[inline(always)]
    fn depart(&mut self, c: Customer) {
        self.b_departures += 1;
        self.totals.departures += 1;
        self.b_sojourn += self.now - c.arrived;
    }

    /// Draws the GE service of a customer reaching the idle server; returns
    /// it back if the work is zero (it leaves at once).
    #[inline(always)]
    fn enter_service(&mut self, c: Customer) -> Option<Customer> {
        if self.svc.bernoulli(self.tau_s) {
            self.in_service = Some(c);
            self.reschedule();
            None
        } else {
            Some(c)
        }
    }

    #[inline(always)]
    fn reschedule(&mut self) {
        let n = self.n();
        self.service_region = self.q.region(n);
        self.completion = self.now + self.svc.exp1() * self.svc_mean[self.service_region];
    }

    /// Memoryless residual: a new region means a new exponential draw.
    #[inline(always)]
    fn check_region(&mut self) {
        if self.in_service.is_some() && self.q.region(self.n()) != self.service_region {
            self.reschedule();
        }
    }

    #[inline(always)]
    fn arrive_batch(&mut self, size: u64) {
        for _ in 0..size {
            self.b_arrivals += 1;
            self.totals.arrivals += 1;
            let c = Customer { arrived: self.now };
            if self.n() == 0 {
                self.totals.accepted += 1;
                if let Some(c) = self.enter_service(c) {
                    self.depart(c);
                }
            } else if self.n() < self.q.k {
                self.totals.accepted += 1;
                self.waiting.push_back(c);
            } else {
                self.b_lost += 1;
                self.totals.lost += 1;
            }
        }
        self.check_region();
    }

    #[inline(always)]
    fn complete(&mut self) {
        if let Some(c) = self.in_service.take() {
            self.depart(c);
        }
        while let Some(c) = self.waiting.pop_front() {
            match self.enter_service(c) {
                None => break,
                Some(c) => self.depart(c),
            }
        }
        if self.in_service.is_none() {
            self.completion = f64::INFINITY;
        }
    }

    fn reset_batch(&mut self) {
        self.time_in_state.iter_mut().for_each(|x| *x = 0.0);
        self.last_change = self.now;
        self.b_arrivals = 0;
        self.b_lost = 0;
        self.b_departures = 0;
        self.b_sojourn = 0.0;
    }
}

/// Work bound (issue 11): a few events per arriving customer (a batch arrival,
/// a completion, a rate switch), over the counted customers plus the last
/// batch, whose mean size is 1/τ_a = (ca2 + 1)/2; batches and services
/// happen at the effective rates λ·τ_a and μ·τ_s, which must keep simulated
/// times finite.
fn work_budget(q: &GeQueue, run: RunLength) -> Result<u64, SolveError> {
    let (ta, ts) = (q.tau_a(), q.tau_s());
    let units = run.warmup as f64 + run.batches as f64 * run.batch_len as f64 + 50.0 / ta;
    let mut rates = vec![("lambda", q.lambda), ("ca2", q.lambda * ta)];
    for &mu in &q.mus {
        rates.push(("mu", mu));
        rates.push(("cs2", mu * ts));
    }
    let dominant = if 1.0 / ta > 1e6 { "ca2" } else { "batch_len" };
    crate::params::sim_budget(units, 3.0, &rates, dominant)
}

/// Metric names in the order the batch vectors use; region utilisations follow.
const BASE: [&str; 6] = ["L", "U", "P_block", "P_full", "throughput", "W"];

pub fn simulate(q: &GeQueue, run: RunLength, ctx: &TaskContext) -> Result<SimOutput, SolveError> {
    let budget = work_budget(q, run)?;
    let source = Batches::new(&GeBatchArrivals::new(q.lambda, q.ca2)?);
    let mut arr = Stream::new(ctx.seed, 1);
    let region_names: Vec<&'static str> = (1..=q.regions()).map(region_name).collect();
    let mut names: Vec<&'static str> = BASE.to_vec();
    names.extend(region_names.iter().copied());
    let mut stats = BatchStats::new(&names);
    let mut s = Queue {
        q,
        tau_s: q.tau_s(),
        now: 0.0,
        waiting: VecDeque::new(),
        in_service: None,
        completion: f64::INFINITY,
        service_region: 0,
        svc: Stream::new(ctx.seed, 2),
        svc_mean: q.mus.iter().map(|&mu| 1.0 / (q.tau_s() * mu)).collect(),
        last_change: 0.0,
        time_in_state: vec![0.0; q.k + 1],
        b_arrivals: 0,
        b_lost: 0,
        b_departures: 0,
        b_sojourn: 0.0,
        totals: Totals::default(),
    };
    let (dt, mut next_size) = source.next(&mut arr);
    let mut next_arrival = dt;
    let mut phase_target = run.warmup;
    let mut measuring = false;
    let mut batches_done = 0u32;
    if run.warmup == 0 {
        measuring = true;
        phase_target = run.batch_len;
    }
    let mut row = vec![0.0; names.len()];
    loop {
        s.totals.events += 1;
        if s.totals.events & 0xFFFF == 0 {
            ctx.check_cancel()?;
            if s.totals.events > budget {
                return Err(crate::params::over_budget(budget));
            }
        }
        if s.completion <= next_arrival {
            let t = s.completion;
            s.advance(t);
            s.complete();
            s.check_region();
            continue;
        }
        s.advance(next_arrival);
        if s.b_arrivals >= phase_target {
            if measuring {
                let span: f64 = s.time_in_state.iter().sum::<f64>().max(f64::MIN_POSITIVE);
                let l: f64 = s
                    .time_in_state
                    .iter()
                    .enumerate()
                    .map(|(n, t)| n as f64 * t)
                    .sum::<f64>()
                    / span;
                row[0] = l;
                row[1] = 1.0 - s.time_in_state[0] / span;
                row[2] = s.b_lost as f64 / s.b_arrivals as f64;
                row[3] = s.time_in_state[q.k] / span;
                row[4] = s.b_departures as f64 / span;
                row[5] = if s.b_departures > 0 {
                    s.b_sojourn / s.b_departures as f64
                } else {
                    0.0
                };
                for v in row.iter_mut().skip(BASE.len()) {
                    *v = 0.0;
                }
                for (n, t) in s.time_in_state.iter().enumerate().skip(1) {
                    row[BASE.len() + q.region(n)] += t / span;
                }
                stats.push(&row);
                batches_done += 1;
                if batches_done >= run.batches {
                    break;
                }
            }
            measuring = true;
            phase_target = run.batch_len;
            s.reset_batch();
        }
        s.arrive_batch(next_size);
        let (dt, size) = source.next(&mut arr);
        next_arrival = s.now + dt;
        next_size = size;
    }
    s.totals.in_system_at_end = s.n() as u64;
    let outcome = stats.into_outcome(Outcome::new());
    Ok(SimOutput {
        outcome,
        totals: s.totals,
    })
}

fn region_name(k: usize) -> &'static str {
    const NAMES: [&str; 16] = [
        "U1", "U2", "U3", "U4", "U5", "U6", "U7", "U8", "U9", "U10", "U11", "U12", "U13", "U14",
        "U15", "U16",
    ];
    NAMES.get(k - 1).copied().unwrap_or("U_more")
}
