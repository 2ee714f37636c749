//! `ibecn.sim` and `ibecn.claims`: replications of the Fig. 3.1 scenario on
//! the packet-level engine with the Yan-ECN plug-in, mapped to average
//! injection rates (time averages of each source's rate r), rate series and
//! the quantities behind the thesis's qualitative claims.

use super::{param_docs, Function, RawParams, Setup, FLOWS};
use crate::des::{ci95, Stream};
use crate::engines::ibnet::{run, Counters, Scenario};
use crate::params::parse;
use crate::{Kind, Metric, Outcome, SolveError, Solver, SolverDoc, TaskContext};

/// "Near R_min": below this multiple of the flow's R_min (below the first
/// FIMD step, which multiplies R_min by n = 4).
pub const NEAR_RMIN: f64 = 2.0;

/// The band of §3.4's "rate r_1 for PIPD function is most likely within the
/// range [1x10^5, 2x10^5]", in the reported rate unit.
pub const BAND: (f64, f64) = (1e5, 2e5);

/// Stream ids (des::Stream) of the replication seeds and the start offsets.
const STREAM_REPLICATION: u64 = 70_000;
const STREAM_START: u64 = 71_000;

/// What one replication measured, per flow (order of `FLOWS`).
#[derive(Debug, Clone, PartialEq)]
pub struct Replication {
    /// Time average of r over the measured window (packets/s).
    pub rate: Vec<f64>,
    /// Data packets injected per second in the window.
    pub sent: Vec<f64>,
    /// Data packets delivered per second in the window.
    pub delivered: Vec<f64>,
    /// Fraction of the window with r < NEAR_RMIN x R_min of the flow's SL.
    pub near_rmin: Vec<f64>,
    /// Fraction of the window with r in `BAND` (reported unit).
    pub band: Vec<f64>,
    /// Largest bin average of r among the bins inside the window.
    pub peak: Vec<f64>,
    /// Standard deviation / mean of those bin averages.
    pub cv: Vec<f64>,
    /// Time average of r per bin over the whole run.
    pub series: Vec<Vec<f64>>,
    pub marks: Vec<u64>,
    pub counters: Counters,
}

/// Runs replication `k` of the set-up.
pub fn replicate(s: &Setup, k: usize, ctx: &TaskContext) -> Result<Replication, SolveError> {
    let seed = Stream::new(ctx.seed, STREAM_REPLICATION + k as u64).next_u64();
    let mut sc = s.scenario.clone();
    for (f, fl) in sc.flows.iter_mut().enumerate() {
        fl.start = Stream::new(seed, STREAM_START + f as u64).uniform() * s.start_jitter;
    }
    let mut c = ctx.clone();
    c.seed = seed;
    let counters = run(&sc, &s.cc, &c)?;
    Ok(measure(s, &sc, counters))
}

fn measure(s: &Setup, sc: &Scenario, c: Counters) -> Replication {
    let (a, b) = sc.windows[0];
    let nbins = ((sc.duration / s.bin) * (1.0 - 1e-12)).ceil() as usize;
    let mut out = Replication {
        rate: Vec::new(),
        sent: Vec::new(),
        delivered: Vec::new(),
        near_rmin: Vec::new(),
        band: Vec::new(),
        peak: Vec::new(),
        cv: Vec::new(),
        series: Vec::new(),
        marks: c.flow_marks.clone(),
        // Moved, not copied (its traces and bins are most of a run's data).
        counters: c,
    };
    let c = &out.counters;
    // Rates are kept in packets/s and reported in the rate unit.
    let u = s.unit;
    let in_band = |r: f64| f64::from(u8::from((BAND.0..=BAND.1).contains(&(r * u))));
    for (f, fl) in sc.flows.iter().enumerate() {
        let tr = &c.level_trace[f];
        let r_min = s.cc.classes[fl.sl as usize].r_min;
        // The three time averages over the window in one pass (each sum
        // adds the same terms in the same order as a pass of its own).
        let [rate, near, band] = integrals(tr, start(tr, a), a, b, |r| {
            [r, f64::from(u8::from(r < NEAR_RMIN * r_min)), in_band(r)]
        });
        out.rate.push(u * rate / (b - a));
        out.near_rmin.push(near / (b - a));
        out.band.push(band / (b - a));
        out.sent.push(u * c.window_sent[f] as f64 / (b - a));
        out.delivered
            .push(u * c.window_bytes[f] / sc.mtu as f64 / (b - a));
        let series = bin_averages(tr, nbins, s.bin, sc.duration, u);
        let (peak, cv) = peak_and_cv(&series[bins_inside(nbins, s.bin, a, b)]);
        out.peak.push(peak);
        out.cv.push(cv);
        out.series.push(series);
    }
    out
}

/// The bins wholly inside the window [a, b] (to 1e-12 s), as a range:
/// `k * bin` and `(k + 1) * bin` do not decrease with k (rounding keeps the
/// order), so the bins whose start is at or after `a` and whose end is at or
/// before `b` are consecutive, and only the bins at the two ends are tested.
fn bins_inside(nbins: usize, bin: f64, a: f64, b: f64) -> std::ops::Range<usize> {
    let starts_in = |k: usize| k as f64 * bin >= a - 1e-12;
    let ends_in = |k: usize| (k + 1) as f64 * bin <= b + 1e-12;
    let first = (0..nbins).find(|&k| starts_in(k)).unwrap_or(nbins);
    let end = (first..nbins)
        .rev()
        .find(|&k| ends_in(k))
        .map_or(first, |k| k + 1);
    first..end
}

/// Time average of `u` x level in each of `nbins` bins of width `bin` up to
/// `end` (the last bin may be shorter). The bins are taken in order and the
/// first segment of each is found by moving on from the previous bin's, so
/// the trace is walked once instead of searched per bin; each bin's sum is
/// the one `integral` gives.
fn bin_averages(tr: &[(f64, f64)], nbins: usize, bin: f64, end: f64, u: f64) -> Vec<f64> {
    let mut i = 0;
    (0..nbins)
        .map(|k| {
            let lo = k as f64 * bin;
            let hi = ((k + 1) as f64 * bin).min(end);
            while i + 1 < tr.len() && tr[i + 1].0 <= lo {
                i += 1;
            }
            let [sum] = integrals(tr, i, lo, hi, |r| [r]);
            u * sum / (hi - lo)
        })
        .collect()
}

/// The largest value and the coefficient of variation (population standard
/// deviation / mean; 0 for a zero mean) of some bin averages.
fn peak_and_cv(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    let peak = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (peak, if mean > 0.0 { var.sqrt() / mean } else { 0.0 })
}

/// Integral of g(level) over [a, b] for a piecewise-constant trace of
/// (time, level) change points starting at time 0.
#[cfg(test)]
fn integral(tr: &[(f64, f64)], a: f64, b: f64, g: impl Fn(f64) -> f64) -> f64 {
    let [sum] = integrals(tr, start(tr, a), a, b, |r| [g(r)]);
    sum
}

/// The segment of the trace in force at `a`: the last change point at or
/// before `a` (the first one if none is).
fn start(tr: &[(f64, f64)], a: f64) -> usize {
    tr.partition_point(|p| p.0 <= a).saturating_sub(1)
}

/// Integrals of each component of g(level) over [a, b], the trace's
/// segments taken in order from segment `i` (`start(tr, a)`, or any
/// earlier segment: those ending by `a` add nothing).
fn integrals<const N: usize>(
    tr: &[(f64, f64)],
    mut i: usize,
    a: f64,
    b: f64,
    g: impl Fn(f64) -> [f64; N],
) -> [f64; N] {
    let mut sum = [0.0; N];
    if tr.is_empty() || b <= a {
        return sum;
    }
    while i < tr.len() && tr[i].0 < b {
        let t0 = tr[i].0.max(a);
        let t1 = tr.get(i + 1).map_or(b, |p| p.0.min(b));
        if t1 > t0 {
            let v = g(tr[i].1);
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x * (t1 - t0);
            }
        }
        i += 1;
    }
    sum
}

/// Mean and 95% CI across replications (no CI from a single one).
fn metric(xs: &[f64]) -> Metric {
    if xs.len() == 1 {
        return Metric {
            value: xs[0],
            half_width: None,
            n: Some(1),
        };
    }
    let (m, h) = ci95(xs);
    Metric::estimate(m, h, xs.len() as u64)
}

/// (B - A) / (B + A): positive exactly when B > A, at most 1.
pub fn advantage(b: f64, a: f64) -> f64 {
    if a + b > 0.0 {
        (b - a) / (a + b)
    } else {
        0.0
    }
}

fn run_all(s: &Setup, ctx: &TaskContext) -> Result<Vec<Replication>, SolveError> {
    (0..s.replications).map(|k| replicate(s, k, ctx)).collect()
}

pub(super) struct IbecnSim;

impl Solver for IbecnSim {
    fn name(&self) -> &'static str {
        "ibecn.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::Range("adv_<pair>", -1.0, 1.0),
            MetricFact::fraction("near_rmin_<flow>"),
            MetricFact::fraction("band_<flow>"),
            MetricFact::FromParams("link_gbytes_per_s"),
            MetricFact::FromParams("header_bytes"),
            MetricFact::FromParams("packet_bytes"),
            MetricFact::FromParams("tx_time_us"),
            MetricFact::FromParams("buffer_packets"),
            MetricFact::FromParams("r_max_pps"),
            MetricFact::FromParams("r_max"),
            MetricFact::FromParams("rmin_low_pps"),
            MetricFact::FromParams("rmin_high_pps"),
        ]
    }
    fn version(&self) -> u32 {
        // 2: the engine's round robin over inputs keeps one pointer per
        // output and VL (issue 30); A1's VL 1 packets no longer move the VL 0
        // turn at switch A's output, which Av shares.
        // 3: the PIPD readings (function pipd_headroom, pipd_rmin,
        // pipd_normalised_printed; low_function; rate_unit) and the metrics
        // band_, peak_, cv_, fills_A/B, r_max; version 2's metrics unchanged.
        // 4: the rate series only in the first replication's outcome
        // (TaskContext::replication 0); metrics unchanged.
        // 5: the engine settles a replying host's ends of transmission and
        // a flowless sink's ACKs (issue 35, session 9): simultaneous events
        // may change order, so a run that meets such a tie takes another
        // sample path (3 of the 898 quick tasks); statistics agree with
        // version 4 (docs/models/ratecc.md "Fewer events per packet").
        5
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Yan 2012 ch.3: packet-level InfiniBand (Fig. 3.1: switches A, B; A1, B1 -> Bc in two SLs, victim Av -> Bv) with ECN marking on input-buffer-full, an ACK per packet and PIPD/FIMD rate response per ACK, WRR 2:1 admission control; average injection rates (Tables 3.2/3.3) and rate traces (Figs 3.4-3.7)",
            params: param_docs(),
            metrics: vec![
                "r1_A, r2_A, r1_B, r2_B, r_victim (time-average rate r in the rate unit, CI across replications)",
                "sent_<flow>, delivered_<flow> (injected, delivered, rate unit)",
                "near_rmin_<flow> (fraction of time with r < 2 R_min)",
                "band_<flow> (fraction of time with 1e5 <= r <= 2e5 in the rate unit: §3.4's band)",
                "peak_<flow>, cv_<flow> (largest 10 us average of r in the window; std/mean of those averages)",
                "fills_A, fills_B (switch input buffers becoming full, per ms)",
                "r_max (R_max in the rate unit)",
                "adv_BA_r1, adv_BA_r2 ((B - A)/(B + A)), adv_21_A, adv_21_B ((r2 - r1)/(r2 + r1))",
                "marks, acks, marks_<flow>",
                "link_gbytes_per_s, header_bytes, packet_bytes, tx_time_us, buffer_packets, r_max_pps, rmin_low_pps, rmin_high_pps (Table 3.1)",
                "series rate_r1_A, rate_r2_A, rate_r1_B, rate_r2_B, rate_victim (x: ms, first replication)",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let raw: RawParams = parse(params)?;
        let setup = raw.validate(raw.function()?)?;
        let reps = run_all(&setup, ctx)?;
        outcome(&setup, &reps, ctx.replication == 0).checked(self.name())
    }
}

fn rate_name(f: usize) -> String {
    match FLOWS[f] {
        "victim" => "r_victim".to_string(),
        x => x.to_string(),
    }
}

/// The rate series (a few thousand points per flow) go only into the first
/// replication's outcome (`with_series`): the figures plot that one, and a
/// series of hundreds of replications would otherwise store every trace.
fn outcome(s: &Setup, reps: &[Replication], with_series: bool) -> Outcome {
    let mut o = Outcome::new();
    let per = |g: &dyn Fn(&Replication) -> f64| -> Metric {
        metric(&reps.iter().map(g).collect::<Vec<_>>())
    };
    for (f, name) in FLOWS.iter().enumerate() {
        o.insert(&rate_name(f), per(&|r| r.rate[f]));
        o.insert(&format!("sent_{name}"), per(&|r| r.sent[f]));
        o.insert(&format!("delivered_{name}"), per(&|r| r.delivered[f]));
        o.insert(&format!("near_rmin_{name}"), per(&|r| r.near_rmin[f]));
        o.insert(&format!("band_{name}"), per(&|r| r.band[f]));
        o.insert(&format!("peak_{name}"), per(&|r| r.peak[f]));
        o.insert(&format!("cv_{name}"), per(&|r| r.cv[f]));
        o.insert(&format!("marks_{name}"), per(&|r| r.marks[f] as f64));
        if !with_series {
            continue;
        }
        let series = reps[0].series[f]
            .iter()
            .enumerate()
            .map(|(k, y)| ((k as f64 + 0.5) * s.bin * 1e3, *y))
            .collect();
        o.series.insert(format!("rate_{name}"), series);
    }
    o.insert("adv_BA_r1", per(&|r| advantage(r.rate[2], r.rate[0])));
    o.insert("adv_BA_r2", per(&|r| advantage(r.rate[3], r.rate[1])));
    o.insert("adv_21_A", per(&|r| advantage(r.rate[1], r.rate[0])));
    o.insert("adv_21_B", per(&|r| advantage(r.rate[3], r.rate[2])));
    o.insert("marks", per(&|r| r.counters.marks as f64));
    // Input buffers of switch A (0) and B (1) becoming full, per ms of the run.
    let ms = s.scenario.duration * 1e3;
    o.insert("fills_A", per(&|r| r.counters.input_full[0] as f64 / ms));
    o.insert("fills_B", per(&|r| r.counters.input_full[1] as f64 / ms));
    o.insert("acks", per(&|r| r.counters.acks as f64));
    // Table 3.1, from the parameters: the transmission time is derived.
    let t = Metric::exact;
    o.insert("link_gbytes_per_s", t(s.link_gbytes));
    o.insert("header_bytes", t(s.header as f64));
    o.insert("packet_bytes", t(s.packet_bytes as f64));
    o.insert(
        "tx_time_us",
        t(s.packet_bytes as f64 / (s.link_gbytes * 1e9) * 1e6),
    );
    o.insert("buffer_packets", t(s.buffer_packets as f64));
    o.insert("r_max_pps", t(s.cc.r_max));
    o.insert("r_max", t(s.cc.r_max * s.unit));
    o.insert("rmin_low_pps", t(s.cc.classes[0].r_min));
    o.insert("rmin_high_pps", t(s.cc.classes[1].r_min));
    o
}

pub(super) struct IbecnClaims;

impl Solver for IbecnClaims {
    fn name(&self) -> &'static str {
        "ibecn.claims"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::Range("adv_r2_<sw>", -1.0, 1.0)]
    }
    fn version(&self) -> u32 {
        // 2: as ibecn.sim's version 2 (issue 30). 3: takes a PIPD reading.
        // 4: as ibecn.sim's version 5 (the engine's order at ties; none of
        // the 85 quick tasks changed).
        4
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Yan 2012 ch.3: the Fig. 3.1 scenario under PIPD (Table 3.2) and under PIPD + FIMD for r1 (Table 3.3) with the same seeds, reporting the comparisons the thesis draws between the two runs",
            params: param_docs(),
            metrics: vec![
                "ratio_r1_A, ratio_r1_B (r1 under PIPD / r1 under FIMD, per replication pair)",
                "adv_r2_A, adv_r2_B ((r2 PIPD - r2 PIPD+FIMD)/(sum): > 0 when Table 3.2's r2 exceeds Table 3.3's)",
                "pipd_<rate>, fimd_<rate> (<rate>: r1_A, r2_A, r1_B, r2_B; the two runs' averages)",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let raw: RawParams = parse(params)?;
        let Some(reading) = raw.reading()? else {
            return Err(SolveError::param(
                "function",
                "ibecn.claims runs a PIPD reading alone and with r1 on FIMD itself: give a PIPD reading or leave `function` out",
            ));
        };
        if raw.low_function.is_some() {
            return Err(SolveError::param(
                "low_function",
                "ibecn.claims runs both (pipd and fimd) itself; leave `low_function` out",
            ));
        }
        let pipd = run_all(&raw.validate(Function::pipd(reading))?, ctx)?;
        let fimd = run_all(&raw.validate(Function::fimd_low(reading))?, ctx)?;
        let mut o = Outcome::new();
        let pair = |g: &dyn Fn(&Replication, &Replication) -> f64| -> Metric {
            metric(
                &pipd
                    .iter()
                    .zip(&fimd)
                    .map(|(p, f)| g(p, f))
                    .collect::<Vec<_>>(),
            )
        };
        o.insert("ratio_r1_A", pair(&|p, f| p.rate[0] / f.rate[0]));
        o.insert("ratio_r1_B", pair(&|p, f| p.rate[2] / f.rate[2]));
        o.insert("adv_r2_A", pair(&|p, f| advantage(p.rate[1], f.rate[1])));
        o.insert("adv_r2_B", pair(&|p, f| advantage(p.rate[3], f.rate[3])));
        for (i, name) in FLOWS.iter().enumerate().take(4) {
            o.insert(&format!("pipd_{name}"), pair(&|p, _| p.rate[i]));
            o.insert(&format!("fimd_{name}"), pair(&|_, f| f.rate[i]));
        }
        o.checked(self.name())
    }
}

/// The Fig. 3.1 scenario and plug-in with every default and `function`
/// (for `examples/ratecc_speed.rs`).
pub fn bench_scenario(
    function: &str,
    duration_ms: f64,
) -> Result<(Scenario, crate::engines::ibnet::ecn::YanEcn), SolveError> {
    let raw = RawParams {
        function: Some(function.to_string()),
        duration_ms: Some(duration_ms),
        replications: Some(1.0),
        ..Default::default()
    };
    let s = raw.validate(raw.function()?)?;
    Ok((s.scenario, s.cc))
}

#[cfg(test)]
mod tests;
