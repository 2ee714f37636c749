//! `ibcc.sim`: the packet-level engine on Gran's test bed, with IBA CC or
//! none, mapped to per-interval metrics and per-flow time series.

use super::{clos_scenario, param_docs, RawParams, Setup};
use crate::engines::ibnet::cc::{CongestionControl, IbaCc, NoCc};
use crate::engines::ibnet::{run, Counters, Scenario};
use crate::params::parse;
use crate::{Kind, Metric, Outcome, SolveError, Solver, SolverDoc, TaskContext};

pub(super) struct IbccSim;

impl Solver for IbccSim {
    fn name(&self) -> &'static str {
        "ibcc.sim"
    }
    fn version(&self) -> u32 {
        2
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Gran & Reinemo 2011: packet-level InfiniBand test bed (credits, VoQs, round robin, VCT) with IBA 1.2.1 congestion control; per-flow throughput against time",
            params: param_docs(),
            metrics: vec![
                "thr_F<k>_<j>",
                "thr_mean_<j>",
                "share_F<k>",
                "marks",
                "becns",
                "series thr_F<k>",
                "series ccti_F<k>",
                "series buf_S<s>",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let raw: RawParams = parse(params)?;
        let setup = raw.validate()?;
        let counters = match &setup.cc {
            Some(cc) => run(&setup.scenario, cc, ctx)?,
            None => run(&setup.scenario, &NoCc, ctx)?,
        };
        outcome(&setup, &counters).checked(self.name())
    }
}

fn outcome(s: &Setup, c: &Counters) -> Outcome {
    let sc = &s.scenario;
    let nw = sc.windows.len();
    let mut o = Outcome::new();
    let mut last = vec![0.0; sc.flows.len()];
    for (f, last_f) in last.iter_mut().enumerate() {
        for (j, w) in sc.windows.iter().enumerate() {
            let g = c.window_bytes[f * nw + j] * 8.0 / (w.1 - w.0) / 1e9;
            o.insert(
                &format!("thr_F{}_{}", f + 1, j),
                Metric {
                    value: g,
                    half_width: None,
                    n: Some(((w.1 - w.0) / sc.bin).round() as u64),
                },
            );
            *last_f = g;
        }
        let series = (0..c.nbins)
            .map(|b| ((b as f64 + 0.5) * sc.bin, c.bin_gbps(f, b, sc.bin)))
            .collect();
        o.series.insert(format!("thr_F{}", f + 1), series);
        if s.cc.is_some() {
            let lv = (0..c.nbins)
                .map(|b| ((b as f64 + 1.0) * sc.bin, c.level[f * c.nbins + b]))
                .collect();
            o.series.insert(format!("ccti_F{}", f + 1), lv);
        }
    }
    for (j, w) in sc.windows.iter().enumerate() {
        let active: Vec<usize> = (0..sc.flows.len())
            .filter(|&f| sc.flows[f].start <= 0.5 * (w.0 + w.1))
            .collect();
        let sum: f64 = active
            .iter()
            .map(|&f| c.window_bytes[f * nw + j] * 8.0 / (w.1 - w.0) / 1e9)
            .sum();
        o.insert(
            &format!("thr_mean_{j}"),
            Metric::exact(sum / active.len().max(1) as f64),
        );
    }
    let total: f64 = s.contributors.iter().map(|&f| last[f]).sum();
    for &f in &s.contributors {
        let share = if total > 0.0 { last[f] / total } else { 0.0 };
        o.insert(&format!("share_F{}", f + 1), Metric::exact(share));
    }
    for sw in 0..sc.fabric.sw_first.len() - 1 {
        let occ = (0..c.nbins)
            .map(|b| {
                (
                    (b as f64 + 1.0) * sc.bin,
                    c.occupancy[sw * c.nbins + b] / 1024.0,
                )
            })
            .collect();
        o.series.insert(format!("buf_S{}", sw + 1), occ);
    }
    o.insert("marks", Metric::exact(c.marks as f64));
    o.insert("becns", Metric::exact(c.becns as f64));
    o.insert(
        "delivered_gbytes",
        Metric::exact(c.delivered_bytes as f64 / 1e9),
    );
    o
}

/// IBA CC at QP level for the Clos benchmark (catalogue §2 initial values).
pub const BENCH_CC: fn() -> IbaCc = || IbaCc {
    threshold: 15,
    mapping: crate::engines::ibnet::cc::ThresholdMapping::PerVoq,
    marking_rate: 0,
    packet_size_blocks: 0,
    ccti_increase: 1,
    ccti_limit: 127,
    ccti_min: 0,
    ccti_timer: 150.0 * 1.024e-6,
    cct: (0..128).map(|i| i as f64 * 52e-9).collect(),
};

/// The benchmark scenario (exposed for `benches/ibcc.rs`).
pub fn bench_scenario(duration: f64) -> Scenario {
    clos_scenario(duration)
}

/// Runs any scenario with any plug-in; a convenience for the benchmark.
pub fn bench_run<C: CongestionControl>(
    sc: &Scenario,
    cc: &C,
    ctx: &TaskContext,
) -> Result<Counters, SolveError> {
    run(sc, cc, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fidelity;
    use serde_json::json;

    fn solve(p: serde_json::Value) -> Result<Outcome, SolveError> {
        IbccSim.solve(&p, &TaskContext::new(1, Fidelity::Quick))
    }

    #[test]
    fn scenario_1_cc_off_quick_has_hol_and_parking_lot() {
        let o = solve(json!({"scenario": 1, "interval": 0.01, "s1s2_gbps": 34.63})).unwrap();
        let g = |k: &str| o.get(k).unwrap();
        // Interval 0: F1 alone at the end-node cap (13.2 Gbit/s of payload).
        assert!((g("thr_F1_0") - 13.2).abs() < 0.15, "{}", g("thr_F1_0"));
        // Interval 2: F1, F2, F3 all at half (HOL on S1-S2).
        for f in 1..=3 {
            let x = g(&format!("thr_F{f}_2"));
            assert!((x - 6.6).abs() < 0.4, "F{f} {x}");
        }
        // Interval 5: shares 1/6, 1/6, 1/3, 1/3.
        for (f, want) in [
            (2, 1.0 / 6.0),
            (3, 1.0 / 6.0),
            (4, 1.0 / 3.0),
            (5, 1.0 / 3.0),
        ] {
            let x = g(&format!("share_F{f}"));
            assert!((x - want).abs() < 0.03, "share F{f} {x}");
        }
        assert_eq!(o.series["thr_F1"].len(), 600);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = |p| match solve(p) {
            Err(SolveError::InvalidParam { param, .. }) => param,
            other => panic!("{other:?}"),
        };
        assert_eq!(e(json!({"scenario": 3})), "scenario");
        assert_eq!(e(json!({"scenario": 1, "topology": "torus"})), "topology");
        assert_eq!(
            e(json!({"scenario": 1, "cc": true, "threshold": 16})),
            "threshold"
        );
        let short: Vec<f64> = (0..128).map(|i| i as f64).collect();
        let p = json!({"scenario": 1, "cc": true, "ccti_limit": 200, "cct": short});
        assert_eq!(e(p), "cct");
        assert_eq!(e(json!({"scenario": 1, "host_gbps": 0})), "host_gbps");
        assert_eq!(
            e(json!({"flows": [{"src": 1, "dst": 9, "start": 0}]})),
            "flows.dst"
        );
        assert_eq!(e(json!({"scenario": 1, "interval": 100})), "interval");
        assert!(matches!(
            solve(json!({"scenario": 1, "bogus": 1})),
            Err(SolveError::BadParams(_))
        ));
    }
}
