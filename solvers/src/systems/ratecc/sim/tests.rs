//! Tests of `ibecn.sim` / `ibecn.claims` and of the Yan-ECN plug-in on the
//! engine: bad input, the marking rule on hand-built cases, conservation of
//! packets and ACKs, determinism per seed, and a snapshot of a tiny run.

use super::*;
use crate::engines::ibnet::ecn::{Response, SlClass, YanEcn};
use crate::engines::ibnet::{Dest, Fabric, Flow, LinkSpec, NodeRef, Topology};
use crate::systems::ratecc::Reading;
use crate::Fidelity;
use serde_json::json;

fn ctx(seed: u64) -> TaskContext {
    TaskContext::new(seed, Fidelity::Quick)
}

fn solve(p: serde_json::Value) -> Result<Outcome, SolveError> {
    IbecnSim.solve(&p, &ctx(3))
}

fn field(r: Result<Outcome, SolveError>) -> (String, String) {
    match r {
        Err(SolveError::InvalidParam { param, rule }) => (param, rule),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_parameters_name_the_field_and_the_rule() {
    let (f, r) = field(solve(json!({"m": 1})));
    assert_eq!(f, "m");
    assert!(r.contains("m > 1") && r.contains("1 < m <= 64"), "{r}");
    let (f, r) = field(solve(json!({"n": 0.5, "function": "fimd_low"})));
    assert_eq!(f, "n");
    assert!(r.contains("n > 1"), "{r}");
    let (f, r) = field(solve(json!({"rmin_low": 1.5})));
    assert_eq!(f, "rmin_low");
    assert!(r.contains("below R_max"), "{r}");
    assert_eq!(field(solve(json!({"rmin_high": 0}))).0, "rmin_high");
    assert_eq!(field(solve(json!({"rmin_high": -0.1}))).0, "rmin_high");
    assert_eq!(field(solve(json!({"m": 100}))).0, "m");
    assert_eq!(field(solve(json!({"function": "aimd"}))).0, "function");
    assert_eq!(
        field(solve(json!({"buffer_packets": 0}))).0,
        "buffer_packets"
    );
    assert_eq!(
        field(solve(json!({"buffer_packets": 2.5}))).0,
        "buffer_packets"
    );
    assert_eq!(field(solve(json!({"link_gbytes": 0}))).0, "link_gbytes");
    assert_eq!(field(solve(json!({"window": 0}))).0, "window");
    assert_eq!(field(solve(json!({"wrr_high": 0}))).0, "wrr_high");
    assert_eq!(field(solve(json!({"replications": 0}))).0, "replications");
    assert_eq!(
        field(solve(json!({"warmup_ms": 5, "duration_ms": 5}))).0,
        "warmup_ms"
    );
    assert_eq!(
        field(solve(json!({"duration_ms": 20000, "bin_us": 1000}))).0,
        "duration_ms"
    );
    assert_eq!(field(solve(json!({"bin_us": 0.001}))).0, "bin_us");
    assert_eq!(
        field(solve(json!({"switch_latency_ns": -1}))).0,
        "switch_latency_ns"
    );
    assert!(matches!(
        solve(json!({"bogus": 1})),
        Err(SolveError::BadParams(m)) if m.contains("bogus")
    ));
    let c = IbecnClaims.solve(&json!({"function": "fimd"}), &ctx(1));
    assert_eq!(field(c).0, "function");
    assert_eq!(field(IbecnClaims.solve(&json!({"m": 0.9}), &ctx(1))).0, "m");
}

/// One switch, hosts H0..H4 on it at 1 GB/s, 2068-byte packets, 4-packet buffers.
fn star(flows: Vec<(u32, u32)>, duration: f64) -> (Scenario, YanEcn) {
    let bps = 1e9;
    let links = (0..5)
        .map(|h| LinkSpec {
            a: NodeRef::Host(h),
            b: NodeRef::Switch(0),
            rate_bps: bps * 8.0,
            latency: 1e-7,
        })
        .collect();
    let t = Topology {
        hosts: 5,
        switches: 1,
        links,
        routes: Vec::new(),
    };
    let flows = flows
        .into_iter()
        .map(|(s, d)| Flow {
            src: s,
            dest: Dest::Host(d),
            sl: 0,
            start: 0.0,
            weight: 1.0,
        })
        .collect();
    let sc = Scenario {
        fabric: Fabric::build(&t).unwrap(),
        flows,
        vls: 1,
        vl_arb: None,
        mtu: 2048,
        header: 20,
        cnp_bytes: 28,
        buffer_blocks: 4 * 33,
        switch_latency: 1e-7,
        cut_through: true,
        inject_rate: bps,
        sink_rate: bps,
        victim_mask_hca: false,
        pace_jitter: 0.0,
        cc_per_sl: false,
        duration,
        bin: duration / 10.0,
        samples: false,
        windows: vec![(0.0, duration)],
        max_events: u64::MAX,
    };
    let r_max = bps / 2068.0;
    // FIMD with R_min = R_max / 2: sources stay near the link rate, so any
    // oversubscribed output fills its inputs' buffers.
    let cc = YanEcn {
        classes: vec![
            SlClass {
                response: Response::Fimd { n: 4.0 },
                r_min: r_max / 2.0,
            };
            16
        ],
        r_max,
        t_pkt: 2068.0 / bps,
        window: None,
    };
    (sc, cc)
}

fn assert_conserved(c: &Counters, sc: &Scenario) {
    assert_eq!(c.generated, c.delivered + c.live_data, "{c:?}");
    assert_eq!(c.acks, c.delivered, "one ACK per delivered packet");
    assert_eq!(c.acks, c.acks_received + c.live_acks, "ACKs conserved");
    assert!(c.min_credits >= 0);
    assert!(c.max_in_used <= sc.buffer_blocks);
    assert!(!c.credit_overflow && c.bookkeeping_ok);
}

#[test]
fn an_uncongested_flow_is_never_marked() {
    let (sc, cc) = star(vec![(0, 2)], 0.002);
    let c = run(&sc, &cc, &ctx(1)).unwrap();
    assert!(c.delivered > 500, "{c:?}");
    assert_eq!(c.marks, 0);
    assert_conserved(&c, &sc);
}

#[test]
fn a_full_input_buffer_marks_the_flows_of_its_outputs_only() {
    // H0 and H1 oversubscribe the output to H2; H3 -> H4 crosses the same
    // switch on an output nobody else uses, so its input never fills.
    let (sc, cc) = star(vec![(0, 2), (1, 2), (3, 4)], 0.002);
    let c = run(&sc, &cc, &ctx(1)).unwrap();
    assert!(c.flow_marks[0] > 0 && c.flow_marks[1] > 0, "{c:?}");
    assert_eq!(c.flow_marks[2], 0, "{:?}", c.flow_marks);
    assert_eq!(c.marks, c.flow_marks.iter().sum::<u64>());
    // Marked ACKs pull the congested sources below the uncongested one.
    let rate = |f: usize| c.window_sent[f] as f64;
    assert!(rate(0) + rate(1) < 1.05 * rate(2), "{:?}", c.window_sent);
    assert_conserved(&c, &sc);
}

#[test]
fn a_window_caps_unacknowledged_packets() {
    let (sc, mut cc) = star(vec![(0, 2)], 0.001);
    let free = run(&sc, &cc, &ctx(1)).unwrap();
    cc.window = Some(1);
    let c = run(&sc, &cc, &ctx(1)).unwrap();
    // One packet per round trip (transmission + latencies + the ACK's way
    // back): fewer packets than the link rate lets through without a window.
    assert!(c.generated > 100, "{}", c.generated);
    assert!(
        (c.generated as f64) < 0.9 * free.generated as f64,
        "{} vs {}",
        c.generated,
        free.generated
    );
    assert!(c.generated - c.acks_received <= 1);
    assert_conserved(&c, &sc);
}

/// Hosts that send and reply on one link: an ACK queued while the host
/// sends a data packet goes out at the end of that transmission (the
/// engine's settled end of transmission goes back in the calendar for it).
#[test]
fn hosts_that_send_and_reply_share_their_link() {
    let (sc, cc) = star(vec![(0, 1)], 0.002);
    let lone = run(&sc, &cc, &ctx(1)).unwrap();
    assert_conserved(&lone, &sc);
    // Each link carries one flow's data and the other flow's ACKs (28 of
    // 2068 bytes per packet): both flows alike, close to the lone flow.
    let (sc, cc) = star(vec![(0, 1), (1, 0)], 0.002);
    let c = run(&sc, &cc, &ctx(1)).unwrap();
    assert_conserved(&c, &sc);
    let (a, b) = (c.window_sent[0] as f64, c.window_sent[1] as f64);
    assert!((a - b).abs() <= 0.01 * a, "{:?}", c.window_sent);
    let one = lone.window_sent[0] as f64;
    assert!(a >= 0.95 * one && a <= one, "{a} vs {one}");
    assert_eq!(c.acks_received + c.live_acks, c.delivered);
    // H2 sends to H0 while H0 and H1 oversubscribe its own link: its ACKs
    // queue behind its data packets, marked ones among them.
    let (sc, cc) = star(vec![(0, 2), (1, 2), (2, 0)], 0.002);
    let c = run(&sc, &cc, &ctx(1)).unwrap();
    assert_conserved(&c, &sc);
    assert!(c.flow_marks[0] > 0 && c.flow_marks[1] > 0, "{c:?}");
    assert!(c.window_sent[2] > 0, "{:?}", c.window_sent);
}

#[test]
fn fig_3_1_conserves_packets_and_acks() {
    let raw: RawParams = parse(&json!({"duration_ms": 3, "replications": 1})).unwrap();
    for f in [
        Function::pipd(Reading::Normalised),
        Function::pipd(Reading::Printed),
        Function::fimd_low(Reading::Normalised),
        Function::pipd(Reading::Headroom),
    ] {
        let s = raw.validate(f).unwrap();
        let r = replicate(&s, 0, &ctx(5)).unwrap();
        assert!(r.counters.marks > 0, "{f:?}");
        assert_conserved(&r.counters, &s.scenario);
        // The time-average rate stays within [R_min, R_max].
        for (k, fl) in s.scenario.flows.iter().enumerate() {
            let lo = s.cc.classes[fl.sl as usize].r_min;
            assert!(
                r.rate[k] >= lo * (1.0 - 1e-9) && r.rate[k] <= s.cc.r_max,
                "{f:?} {k}"
            );
        }
    }
}

#[test]
fn same_seed_same_outcome_other_seed_other_outcome() {
    let p = json!({"duration_ms": 2, "replications": 2});
    let a = IbecnSim.solve(&p, &ctx(9)).unwrap();
    let b = IbecnSim.solve(&p, &ctx(9)).unwrap();
    assert_eq!(a, b);
    let c = IbecnSim.solve(&p, &ctx(10)).unwrap();
    assert_ne!(a.metrics["r1_A"], c.metrics["r1_A"]);
}

#[test]
fn time_average_of_a_trace() {
    let tr = [(0.0, 1.0), (1.0, 3.0), (3.0, 2.0)];
    assert!((integral(&tr, 0.0, 4.0, |r| r) - (1.0 + 6.0 + 2.0)).abs() < 1e-12);
    assert!((integral(&tr, 0.5, 1.5, |r| r) - (0.5 + 1.5)).abs() < 1e-12);
    assert!((integral(&tr, 2.0, 5.0, |r| f64::from(u8::from(r < 2.5)))) - 2.0 < 1e-12);
    assert!((advantage(3.0, 1.0) - 0.5).abs() < 1e-12);
}

/// The bin averages walk the trace once; each must equal, bit for bit, the
/// integral over its bin found by a search (what they replaced), including
/// bins without a change point, several change points at one time and a
/// shorter last bin.
#[test]
fn bin_averages_equal_the_integral_of_each_bin() {
    let mut tr = vec![(0.0, 3.0)];
    let mut rng = crate::des::Stream::new(5, 1);
    let mut t = 0.0;
    for k in 0..400 {
        // Gaps from 0 (repeated times) to several bins long.
        t += if k % 7 == 0 {
            0.0
        } else {
            rng.uniform() * 3e-5
        };
        tr.push((t, rng.uniform() * 1e5));
    }
    let (bin, end) = (1e-5, t + 2.5e-5);
    let nbins = ((end / bin) * (1.0 - 1e-12)).ceil() as usize;
    let got = bin_averages(&tr, nbins, bin, end, 2.068);
    assert_eq!(got.len(), nbins);
    for (k, g) in got.iter().enumerate() {
        let lo = k as f64 * bin;
        let hi = ((k + 1) as f64 * bin).min(end);
        let want = 2.068 * integral(&tr, lo, hi, |r| r) / (hi - lo);
        assert_eq!(g.to_bits(), want.to_bits(), "bin {k}");
    }
    assert!(bin_averages(&[], 3, bin, end, 1.0)
        .iter()
        .all(|&x| x == 0.0));
}

/// The range of bins inside a window is the set the test of every bin gives.
#[test]
fn bins_inside_are_the_bins_each_tested_alone() {
    let by_filter = |nbins: usize, bin: f64, a: f64, b: f64| -> Vec<usize> {
        (0..nbins)
            .filter(|&k| k as f64 * bin >= a - 1e-12 && (k + 1) as f64 * bin <= b + 1e-12)
            .collect()
    };
    let mut rng = crate::des::Stream::new(11, 2);
    for case in 0..2000 {
        let bin = [1e-5, 1e-6, 3e-7, 0.1][case % 4] * (1.0 + rng.uniform());
        let nbins = (rng.uniform() * 300.0) as usize;
        let span = nbins as f64 * bin;
        let (mut a, mut b) = (rng.uniform() * span, rng.uniform() * span * 1.2);
        if case % 5 == 0 {
            // On a bin boundary, as the manifests' windows are.
            a = (a / bin).floor() * bin;
            b = (b / bin).ceil() * bin;
        }
        if case % 17 == 0 {
            std::mem::swap(&mut a, &mut b);
        }
        let got: Vec<usize> = bins_inside(nbins, bin, a, b).collect();
        assert_eq!(got, by_filter(nbins, bin, a, b), "{nbins} {bin} {a} {b}");
    }
    // The quick and full windows: 1 ms of warm-up, 10 us bins.
    for ms in [0.5f64, 50.0, 51.0, 200.0] {
        let (bin, end) = (1e-5, ms * 1e-3);
        let nbins = ((end / bin) * (1.0 - 1e-12)).ceil() as usize;
        let got: Vec<usize> = bins_inside(nbins, bin, 1e-3, end).collect();
        assert_eq!(got, by_filter(nbins, bin, 1e-3, end));
    }
}

/// Snapshot of a tiny deterministic run: Fig. 3.1 with PIPD, 0.5 ms, one
/// replication, seed 7. Any change to the engine's event order, arbitration,
/// credits, marking, ACK handling or the start offsets moves these numbers.
/// After an *intended* change, run `cargo test --release -p solvers
/// ibecn_snapshot`, check that the other tests still pass, paste the `actual`
/// tuple over `expected` and bump `ibecn.sim`'s version.
#[test]
fn ibecn_snapshot_of_a_tiny_run() {
    let raw: RawParams =
        parse(&json!({"duration_ms": 0.5, "warmup_ms": 0.1, "replications": 1})).unwrap();
    let s = raw.validate(Function::pipd(Reading::Normalised)).unwrap();
    let r = replicate(&s, 0, &ctx(7)).unwrap();
    let c = &r.counters;
    let rates: Vec<u64> = r.rate.iter().map(|x| x.round() as u64).collect();
    let actual = (
        c.events,
        c.generated,
        c.delivered,
        c.marks,
        c.acks_received,
        c.flow_marks.clone(),
        rates,
    );
    // Version 2 (issue 30): one round-robin pointer per output and VL.
    // Events 3641 -> 3737 (issue 35, session 9: ends of transmission at
    // hosts and the sink's ACKs settled, counted as the events they were;
    // the ACKs' re-timing now re-computes a sending source's wake-up, and the
    // wake-ups it leaves behind are counted); every other number unchanged.
    let expected = (
        3737,
        249,
        234,
        26,
        234,
        vec![8u64, 4, 9, 3, 2],
        vec![169863u64, 64268, 167776, 49288, 21425],
    );
    assert_eq!(actual, expected, "actual: {actual:?}");
}

#[test]
fn readings_and_units_are_checked() {
    let f = |p| field(solve(p)).0;
    assert_eq!(f(json!({"function": "pipd_bogus"})), "function");
    assert_eq!(f(json!({"low_function": "aimd"})), "low_function");
    assert_eq!(
        f(json!({"function": "fimd_low", "low_function": "fimd"})),
        "low_function"
    );
    assert_eq!(f(json!({"rate_unit": "MB"})), "rate_unit");
    let claims = |p| field(IbecnClaims.solve(&p, &ctx(3))).0;
    assert_eq!(claims(json!({"function": "fimd_low"})), "function");
    assert_eq!(claims(json!({"low_function": "fimd"})), "low_function");
    // function fimd_low is pipd with low_function fimd.
    let raw: RawParams = parse(&json!({"function": "fimd_low"})).unwrap();
    assert_eq!(
        raw.function().unwrap(),
        Function::fimd_low(Reading::Normalised)
    );
    let raw: RawParams =
        parse(&json!({"function": "pipd_headroom", "low_function": "fimd"})).unwrap();
    assert_eq!(
        raw.function().unwrap(),
        Function::fimd_low(Reading::Headroom)
    );
}

/// The metrics of a short run: the unit scales every rate (a unit-free
/// reading, same seed: the same run), peaks lie above averages, fractions in
/// [0, 1]; under S every flow stays at its R_min, so nothing is congested.
#[test]
fn metrics_units_and_the_fixed_point_of_reading_s() {
    let base = json!({"duration_ms": 3, "warmup_ms": 0.5, "replications": 2});
    let mut kb = base.clone();
    kb["rate_unit"] = json!("kB");
    let (p, k) = (solve(base.clone()).unwrap(), solve(kb).unwrap());
    let g = |o: &Outcome, m: &str| o.get(m).unwrap();
    for m in ["r1_A", "r2_B", "delivered_victim", "peak_r2_A", "r_max"] {
        assert!((g(&k, m) / g(&p, m) - 2.068).abs() < 1e-9, "{m}");
    }
    for m in ["near_rmin_r1_A", "cv_r1_A", "fills_A", "marks"] {
        assert!((g(&k, m) - g(&p, m)).abs() <= 1e-12 * g(&p, m).abs(), "{m}");
    }
    for fl in ["r1_A", "r2_A", "r1_B", "r2_B", "victim"] {
        let avg = g(&p, if fl == "victim" { "r_victim" } else { fl });
        assert!(g(&p, &format!("peak_{fl}")) >= avg);
        let band = g(&p, &format!("band_{fl}"));
        assert!((0.0..=1.0).contains(&band));
        assert!(g(&p, &format!("cv_{fl}")) >= 0.0);
    }
    assert!(g(&p, "fills_A") > 0.0 && g(&p, "fills_B") > 0.0);
    let mut s = base;
    s["function"] = json!("pipd_rmin");
    let o = solve(s).unwrap();
    let lo = g(&o, "rmin_low_pps");
    assert!((g(&o, "r1_A") / lo - 1.0).abs() < 1e-12);
    assert!((g(&o, "r2_B") / g(&o, "rmin_high_pps") - 1.0).abs() < 1e-12);
    // A constant trace: the bin averages agree up to rounding.
    assert!(g(&o, "cv_r1_A") < 1e-12);
    assert_eq!(g(&o, "marks"), 0.0);
    assert_eq!(g(&o, "fills_B"), 0.0);
}

/// Only the first replication of a series carries the rate traces; its
/// metrics are those of any other replication with the same seed.
#[test]
fn rate_series_only_in_the_first_replication() {
    let p = json!({"duration_ms": 1, "warmup_ms": 0.2, "replications": 1});
    let first = IbecnSim.solve(&p, &ctx(11)).unwrap();
    let mut c = ctx(11);
    c.replication = 1;
    let later = IbecnSim.solve(&p, &c).unwrap();
    assert_eq!(first.series.len(), 5);
    assert!(first.series.values().all(|s| !s.is_empty()));
    assert!(later.series.is_empty());
    assert_eq!(first.get("r1_A"), later.get("r1_A"));
    assert_eq!(first.get("band_r2_B"), later.get("band_r2_B"));
}
