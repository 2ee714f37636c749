//! `ibcc.fluid`: per-interval fluid prediction for Gran's test bed
//! (catalogue §2 "Analytical counterpart for the EM").
//!
//! In each interval the active flows are greedy fluids.
//! - CC on: max-min fair shares (progressive filling) over the resources
//!   each flow uses: its injection cap, its host links, the S1-S2 link when
//!   it crosses it, and its destination's sink cap. F1 is then unaffected
//!   by the congestion at H5, as IBA CC intends.
//! - CC off: S2's output to a host serves its busy input ports round robin
//!   (equal shares per input port, the S1 port counting once however many
//!   flows it carries: the parking lot), and the single-VL input buffer at
//!   S2's S1 port couples every flow that crosses S1-S2: once some crossing
//!   flow is held below its share by the downstream bottleneck, the buffer
//!   fills with its packets and S1's round robin over H1..H3 gives each
//!   crossing flow the same rate, the slowest drained one (HOL blocking).

use super::{param_docs, RawParams, Setup};
use crate::params::parse;
use crate::{Kind, Outcome, SolveError, Solver, SolverDoc, TaskContext};

pub(super) struct IbccFluid;

impl Solver for IbccFluid {
    fn name(&self) -> &'static str {
        "ibcc.fluid"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("share_F<k>")]
    }
    fn version(&self) -> u32 {
        // 3: default s1s2_gbps 34.63 (was 32), as ibcc.sim 3.
        // 4: refuses what it does not model: cc off with vls > 1, and
        // `vl_arbitration` (it has no VLs); every result it still gives is
        // version 3's.
        4
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Gran & Reinemo 2011: per-interval fluid prediction (round robin + HOL coupling with CC off, max-min fair shares with CC on)",
            params: param_docs(),
            metrics: vec!["thr_F<k>_<j>", "thr_mean_<j>", "share_F<k>"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let raw: RawParams = parse(params)?;
        let s = raw.validate()?;
        if s.cc.is_none() && !s.gran {
            return Err(SolveError::param(
                "cc",
                "with cc off the fluid model (round robin + HOL coupling) covers the gran test bed only; use cc: true (max-min shares) for another topology",
            ));
        }
        if s.scenario.vl_arb.is_some() {
            return Err(SolveError::param(
                "vl_arbitration",
                "the fluid model has no VLs: it cannot follow VL arbitration tables",
            ));
        }
        if s.cc.is_none() && s.scenario.vls > 1 {
            return Err(SolveError::param(
                "vls",
                "with cc off the fluid model (round robin + HOL coupling over one input buffer per port) covers one VL only",
            ));
        }
        let mut o = Outcome::new();
        let mut last = Vec::new();
        for j in 0..s.intervals {
            let t = (j as f64 + 0.5) * s.interval;
            let active: Vec<usize> = (0..s.pairs.len())
                .filter(|&f| s.scenario.flows[f].start <= t)
                .collect();
            let r = if s.cc.is_some() {
                max_min(&s, &active)
            } else {
                round_robin_hol(&s, &active)
            };
            for (f, x) in r.iter().enumerate() {
                o = o.with(&format!("thr_F{}_{}", f + 1, j), *x);
                // A step over the measured window, for time-series figures.
                let w = s.scenario.windows[j];
                let steps = o.series.entry(format!("thr_F{}", f + 1)).or_default();
                steps.push((w.0, *x));
                steps.push((w.1, *x));
            }
            let mean = active.iter().map(|&f| r[f]).sum::<f64>() / active.len().max(1) as f64;
            o = o.with(&format!("thr_mean_{j}"), mean);
            last = r;
        }
        let total: f64 = s.contributors.iter().map(|&f| last[f]).sum();
        for &f in &s.contributors {
            let share = if total > 0.0 { last[f] / total } else { 0.0 };
            o = o.with(&format!("share_F{}", f + 1), share);
        }
        o.checked(self.name())
    }
}

/// Hosts 0..2 sit on S1, 3..6 on S2 (catalogue §2, G-5; CC off only).
fn on_s1(h: u32) -> bool {
    h < 3
}

/// Resources used by a flow, as (resource id, capacity in Gbit/s of
/// payload): the source's injection cap, every directed link on its route
/// (the source HCA's link first) and the destination's sink cap.
fn resources(s: &Setup, f: usize) -> Vec<(usize, f64)> {
    let fab = &s.scenario.fabric;
    let np = fab.ports.len();
    let (src, dst) = s.pairs[f];
    let mut r = vec![
        (np + src as usize, s.payload_cap),
        (np + fab.hosts as usize + dst as usize, s.payload_cap),
    ];
    for p in fab.path(src, dst) {
        r.push((
            p as usize,
            fab.ports[p as usize].rate * 8.0 / 1e9 * s.payload,
        ));
    }
    r
}

/// Max-min fair rates by progressive filling over any fabric.
fn max_min(s: &Setup, active: &[usize]) -> Vec<f64> {
    let n = s.pairs.len();
    let fab = &s.scenario.fabric;
    let nres = fab.ports.len() + 2 * fab.hosts as usize;
    let res: Vec<Vec<(usize, f64)>> = (0..n).map(|f| resources(s, f)).collect();
    let mut cap = vec![f64::INFINITY; nres];
    for r in res.iter().flatten() {
        cap[r.0] = r.1;
    }
    let mut rate = vec![0.0; n];
    let mut frozen: Vec<bool> = (0..n).map(|f| !active.contains(&f)).collect();
    let mut used = vec![0.0; nres];
    let mut users = vec![0usize; nres];
    while frozen.iter().any(|x| !x) {
        used.iter_mut().for_each(|x| *x = 0.0);
        users.iter_mut().for_each(|x| *x = 0);
        for &f in active {
            for r in &res[f] {
                used[r.0] += rate[f];
                if !frozen[f] {
                    users[r.0] += 1;
                }
            }
        }
        // Largest equal increment before some resource fills.
        let inc = (0..nres)
            .filter(|&i| users[i] > 0)
            .map(|i| (cap[i] - used[i]) / users[i] as f64)
            .fold(f64::INFINITY, f64::min)
            .max(0.0);
        for f in 0..n {
            if !frozen[f] {
                rate[f] += inc;
                for r in &res[f] {
                    used[r.0] += inc;
                }
            }
        }
        // Freeze the users of every full resource.
        for f in 0..n {
            if !frozen[f] && res[f].iter().any(|r| used[r.0] >= cap[r.0] - 1e-9) {
                frozen[f] = true;
            }
        }
    }
    rate
}

/// CC off (test bed only): round robin per input port at each S2 output, HOL on S1-S2.
fn round_robin_hol(s: &Setup, active: &[usize]) -> Vec<f64> {
    let n = s.pairs.len();
    let cap = s.payload_cap.min(s.payload_host);
    let mut rate = vec![0.0; n];
    // Downstream limit of each flow: its input port's share at the
    // destination's output, split equally among the flows of that port.
    let mut limit = vec![cap; n];
    for d in 0..7u32 {
        let into: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&f| s.pairs[f].1 == d)
            .collect();
        if into.is_empty() {
            continue;
        }
        let remote: Vec<usize> = into
            .iter()
            .copied()
            .filter(|&f| on_s1(s.pairs[f].0) != on_s1(d))
            .collect();
        let ports = (into.len() - remote.len()) + usize::from(!remote.is_empty());
        let share = cap / ports as f64;
        for &f in &into {
            limit[f] = if remote.contains(&f) {
                share / remote.len() as f64
            } else {
                share
            };
        }
    }
    // Flows crossing S1-S2 (either way; the test bed's flows go S1 -> S2).
    let crossing: Vec<usize> = active
        .iter()
        .copied()
        .filter(|&f| on_s1(s.pairs[f].0) != on_s1(s.pairs[f].1))
        .collect();
    if !crossing.is_empty() {
        let link_share = s.payload_s12 / crossing.len() as f64;
        let x = crossing
            .iter()
            .map(|&f| limit[f])
            .fold(link_share.min(cap), f64::min);
        for &f in &crossing {
            rate[f] = x;
        }
    }
    for &f in active {
        if !crossing.contains(&f) {
            rate[f] = limit[f];
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fidelity;
    use serde_json::json;

    fn solve(p: serde_json::Value) -> Outcome {
        IbccFluid
            .solve(&p, &TaskContext::new(0, Fidelity::Full))
            .unwrap()
    }

    #[test]
    fn scenario_1_matches_the_catalogue_table() {
        // B = 13.2 Gbit/s of payload: catalogue §2 "Expected per-interval throughput".
        let p = json!({"scenario": 1, "end_node_gbps": 13.2 * 2074.0 / 2048.0, "s1s2_gbps": 34.63});
        let off = solve(p.clone());
        let b = 13.2;
        let close = |o: &Outcome, k: &str, v: f64| {
            let x = o.get(k).unwrap();
            assert!((x - v).abs() < 1e-6, "{k}: {x} vs {v}");
        };
        close(&off, "thr_F1_0", b);
        close(&off, "thr_F1_2", b / 2.0);
        close(&off, "thr_F2_3", b / 4.0);
        close(&off, "thr_F4_3", b / 2.0);
        close(&off, "thr_F1_4", b / 6.0);
        close(&off, "thr_F5_5", b / 3.0);
        close(&off, "share_F2", 1.0 / 6.0);
        let mut on_p = p;
        on_p["cc"] = json!(true);
        let on = solve(on_p);
        close(&on, "thr_F1_2", b);
        close(&on, "thr_F3_2", b / 2.0);
        close(&on, "thr_F1_5", b);
        close(&on, "thr_F4_5", b / 4.0);
        close(&on, "share_F5", 0.25);
    }

    #[test]
    fn scenario_2_shares_the_inter_switch_link() {
        let o = solve(json!({"scenario": 2, "s1s2_gbps": 34.63}));
        let x = o.get("thr_F3_2").unwrap();
        assert!((x - 34.63 * 2048.0 / 2074.0 / 3.0).abs() < 1e-9, "{x}");
        assert_eq!(o.get("thr_F3_0"), Some(0.0));
    }
}
