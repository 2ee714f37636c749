//! Tests of the flit engine on the torus against known answers: zero-load
//! latency, conservation, offered = accepted below saturation, the bisection
//! bound, deadlock freedom of DOR/Duato (and the detector catching a routing
//! that does deadlock), determinism, bad input.

use super::*;
use crate::des::Stream;
use crate::engines::flit::Routing;
use serde_json::json;

fn scenario(vcs: usize, buffer: usize, omega: u32, source: Source, run: RunLength) -> Scenario {
    Scenario {
        vcs,
        buffer,
        msg_len: omega,
        injection: Injection::PerVc,
        source,
        run,
        max_cycles: 5_000_000,
        backlog_limit: 100_000,
        stall_cycles: 5_000,
        seed: 7,
    }
}

fn task(k: u32, duato: bool, sc: Scenario) -> SimTask {
    SimTask {
        k,
        duato,
        sc,
        hotspot: None,
        reps: 1,
        replicate_above: 0.0,
    }
}

fn ctx() -> TaskContext {
    TaskContext::new(1, crate::Fidelity::Quick)
}

fn go(k: u32, duato: bool, sc: Scenario) -> Counters {
    simulate(&task(k, duato, sc), &ctx()).unwrap()
}

/// Mean distance from a node to the N − 1 others, enumerated.
fn mean_distance(k: u32) -> f64 {
    let t = KaryNcube::new(k, 2);
    let n = t.nodes() as u32;
    (1..n).map(|v| t.distance(0, v) as f64).sum::<f64>() / (n - 1) as f64
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn check_conservation(c: &Counters, omega: u64) {
    let started = c.msgs_generated - c.msgs_waiting;
    assert_eq!(omega * started, c.flits_injected + c.flits_at_sources);
    assert_eq!(c.flits_injected, c.flits_delivered + c.flits_in_network);
    assert!(c.msgs_delivered * omega <= c.flits_delivered);
    assert!(c.flits_delivered < (c.msgs_delivered + started - c.msgs_delivered + 1) * omega);
}

#[test]
fn zero_load_latency_is_omega_plus_distance() {
    for duato in [false, true] {
        let sc = scenario(
            4,
            2,
            8,
            Source::Bernoulli { p: 0.0001 },
            RunLength::new(200, 10, 400),
        );
        let c = go(6, duato, sc);
        assert_eq!(c.finish, Finish::Completed);
        let (lat, hops) = (mean(&c.latency), mean(&c.hops));
        let d = mean_distance(6);
        assert!((hops - d).abs() < 0.12, "hops {hops} vs {d}");
        // Every message takes at least omega + its hops; contention is rare.
        assert!(lat >= 8.0 + hops - 1e-9, "{lat}");
        assert!(lat - (8.0 + hops) < 0.03, "latency {lat}, hops {hops}");
        assert!((mean(&c.network_latency) - (8.0 + hops)).abs() < 0.03);
        check_conservation(&c, 8);
    }
}

#[test]
fn accepted_equals_offered_and_dor_agrees_with_duato_at_low_load() {
    let mut lat = [0.0; 2];
    for (i, duato) in [false, true].into_iter().enumerate() {
        // 0.0125 x 16 = 0.2 flits/node/cycle on 8x8 (bisection bound 1).
        let sc = scenario(
            4,
            2,
            16,
            Source::Bernoulli { p: 0.0125 },
            RunLength::new(500, 10, 800),
        );
        let c = go(8, duato, sc);
        assert_eq!(c.finish, Finish::Completed);
        let thr = mean(&c.throughput);
        assert!((thr - 0.2).abs() < 0.2 * 0.04, "accepted {thr} vs 0.2");
        check_conservation(&c, 16);
        // At 0.04 flits/node/cycle the two routings see almost no blocking.
        let sc = scenario(
            4,
            2,
            16,
            Source::Bernoulli { p: 0.0025 },
            RunLength::new(500, 10, 800),
        );
        lat[i] = mean(&go(8, duato, sc).latency);
    }
    assert!((lat[0] - lat[1]).abs() < 0.02 * lat[0], "{lat:?}");
}

#[test]
fn saturation_lies_below_the_bisection_bound_and_nothing_deadlocks() {
    // Offered 1.5 flits/node/cycle, past the 8/k = 1 bound of the 8x8 torus.
    for duato in [false, true] {
        let mut sc = scenario(
            4,
            2,
            16,
            Source::Bernoulli { p: 1.5 / 16.0 },
            RunLength::new(1_000_000, 2, 1_000_000),
        );
        sc.max_cycles = 6_000;
        sc.backlog_limit = u64::MAX;
        let c = go(8, duato, sc);
        assert!(matches!(c.finish, Finish::Saturated(_)), "{:?}", c.finish);
        let acc = c.flits_delivered as f64 / (64.0 * c.cycles as f64);
        assert!(acc < 1.0 && acc > 0.2, "accepted {acc}");
        check_conservation(&c, 16);
    }
    // Hot spot, 1-flit buffers, odd k, minimal V: still no deadlock.
    for (k, duato, v) in [(5, true, 3), (4, false, 2), (5, false, 2), (4, true, 3)] {
        let mut sc = scenario(
            v,
            1,
            8,
            Source::Bernoulli { p: 0.2 },
            RunLength::new(1_000_000, 2, 1_000_000),
        );
        sc.max_cycles = 20_000;
        sc.backlog_limit = u64::MAX;
        sc.stall_cycles = 2_000;
        let mut t = task(k, duato, sc);
        t.hotspot = Some(HotSpot {
            nodes: k * k,
            node: 3,
            delta: 0.3,
        });
        let c = simulate(&t, &ctx()).unwrap();
        assert!(matches!(c.finish, Finish::Saturated(_)), "{:?}", c.finish);
        check_conservation(&c, 8);
    }
}

/// Dimension order without the dateline: one VC class around each ring.
struct NoDateline<'a>(&'a KaryNcube);

impl Routing for NoDateline<'_> {
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        _tag: u32,
        _: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)> {
        let (p, _) = self.0.dor_hop(cur, dst);
        free(p, 0).then_some((p, 0))
    }
}

#[test]
fn the_detector_catches_a_routing_that_deadlocks() {
    let topo = KaryNcube::new(4, 2);
    let mut sc = scenario(
        1,
        1,
        16,
        Source::Bernoulli { p: 0.2 },
        RunLength::new(1_000_000, 2, 1_000_000),
    );
    sc.max_cycles = 200_000;
    sc.backlog_limit = u64::MAX;
    sc.stall_cycles = 1_000;
    let c = crate::engines::flit::run(
        &sc,
        &topo,
        &NoDateline(&topo),
        &crate::engines::flit::UniformLatency(1),
        &Uniform { nodes: 16 },
        &ctx(),
    )
    .unwrap();
    assert!(matches!(c.finish, Finish::Stalled { .. }), "{:?}", c.finish);
}

#[test]
fn solver_is_deterministic_and_reports_rings() {
    let p = json!({"k": 6, "omega": 8, "V": 4, "phi1": 0.5, "phi2": 0.5, "lambda1": 0.01,
                   "delta": 0.1, "warmup": 200, "batches": 4, "batch_len": 300});
    let a = TorusSim.solve(&p, &ctx()).unwrap();
    let b = TorusSim.solve(&p, &ctx()).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.series["util_ring"].len(), 6);
    let other = TorusSim
        .solve(&p, &TaskContext::new(2, crate::Fidelity::Quick))
        .unwrap();
    assert_ne!(a.get("latency"), other.get("latency"));
}

#[test]
fn replications_near_saturation_give_a_ci_across_independent_runs() {
    let p = json!({"k": 6, "omega": 8, "V": 4, "source": "poisson", "rate": 0.01,
                   "warmup": 200, "batches": 4, "batch_len": 300});
    let single = TorusSim.solve(&p, &ctx()).unwrap();
    assert_eq!(single.get("replications"), Some(1.0));
    // Below the threshold (latency far from 100 × zero load) nothing changes.
    let mut q = p.clone();
    q["replications"] = json!(3);
    q["replicate_above"] = json!(100.0);
    assert_eq!(TorusSim.solve(&q, &ctx()).unwrap(), single);
    // Above it: three runs; the first is the single run, the others differ,
    // and the estimate is their mean with a Student-t CI over n = 3.
    q["replicate_above"] = json!(1.0);
    let rep = TorusSim.solve(&q, &ctx()).unwrap();
    assert_eq!(rep.get("replications"), Some(3.0));
    let t = validate(&parse::<Params>(&q).unwrap(), &ctx()).unwrap();
    let runs = simulate_reps(&t, &ctx()).unwrap();
    assert_eq!(runs.len(), 3);
    let means: Vec<f64> = runs.iter().map(|c| mean(&c.latency)).collect();
    assert_eq!(means[0], single.get("latency").unwrap());
    assert!(means[1] != means[0] && means[2] != means[1]);
    let (m, h) = ci95(&means);
    let est = &rep.metrics["latency"];
    assert_eq!((est.value, est.half_width, est.n), (m, Some(h), Some(3)));
    assert!(h > 0.0);
    let cycles: f64 = runs.iter().map(|c| c.cycles as f64).sum();
    assert_eq!(rep.get("cycles"), Some(cycles));
}

#[test]
fn bad_input_names_the_parameter() {
    let base = json!({"k": 8, "omega": 32, "V": 4, "phi1": 0.5, "phi2": 0.5, "lambda1": 0.01});
    let cases: [(&str, serde_json::Value, &str); 14] = [
        ("replications", json!(0), "replications"),
        ("replications", json!(11), "replications"),
        ("replicate_above", json!(-1.0), "replicate_above"),
        ("k", json!(1), "k"),
        ("V", json!(2), "V"),
        ("buffer", json!(0), "buffer"),
        ("omega", json!(0), "omega"),
        ("delta", json!(1.0), "delta"),
        ("delta", json!(-0.1), "delta"),
        ("hotspot", json!(64), "hotspot"),
        ("lambda1", json!(0.0), "lambda1"),
        ("phi1", json!(-1.0), "phi1"),
        // Found by the fuzz harness: 1e6 messages/cycle filled 13 GB of source queue.
        ("lambda2", json!(1e6), "lambda2"),
        ("lambda1", json!(1e308), "lambda1"),
    ];
    for (key, val, name) in cases {
        let mut p = base.clone();
        p[key] = val;
        match TorusSim.solve(&p, &ctx()) {
            Err(SolveError::InvalidParam { param, .. }) => assert_eq!(param, name, "{key}"),
            other => panic!("{key}: {other:?}"),
        }
    }
    let mut p = base.clone();
    p["bogus"] = json!(1);
    assert!(matches!(
        TorusSim.solve(&p, &ctx()),
        Err(SolveError::BadParams(_))
    ));
    let p = json!({"k": 8, "omega": 32, "V": 4, "source": "bernoulli", "rate": 1.5});
    assert!(matches!(
        TorusSim.solve(&p, &ctx()),
        Err(SolveError::InvalidParam { .. })
    ));
    let p = json!({"k": 8, "omega": 32, "V": 4, "source": "poisson", "rate": 2.0});
    match TorusSim.solve(&p, &ctx()) {
        Err(SolveError::InvalidParam { param, .. }) => assert_eq!(param, "rate"),
        other => panic!("{other:?}"),
    }
    // A rate far too low for the run length is refused, not run for days.
    let p = json!({"k": 16, "omega": 32, "V": 4, "source": "poisson", "rate": 1e-9});
    match TorusSim.solve(&p, &ctx()) {
        Err(SolveError::InvalidParam { param, .. }) => assert_eq!(param, "rate"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ring_loads_match_f_r_and_f_hj() {
    // Known answer: every channel carries the same regular load d̄(1−δ)λ̄ω/4
    // (d̄ = exact mean distance over N − 1 destinations, by symmetry), and
    // every hot-spot message from distance >= j crosses exactly one inward
    // channel of ring j, so those C_j channels share N_{>=j}δλ̄ω.
    let (k, omega, delta, rate) = (6u32, 8u32, 0.2, 0.0158);
    let sc = scenario(
        4,
        2,
        omega,
        Source::Poisson { rate },
        RunLength::new(500, 10, 1000),
    );
    let mut task = task(k, true, sc);
    task.hotspot = Some(HotSpot {
        nodes: k * k,
        node: 0,
        delta,
    });
    let c = simulate(&task, &ctx()).unwrap();
    assert_eq!(c.finish, Finish::Completed);
    let util = util_ring(&task, &c);
    let rings = Rings::of(k);
    let d = mean_distance(k);
    for (j, u) in util {
        let j = j as usize;
        let expect = (d * (1.0 - delta) / 4.0
            + rings.n_ge(j) as f64 * delta / rings.c_in[j] as f64)
            * rate
            * omega as f64;
        let tol = if j == 1 { 0.05 } else { 0.12 };
        assert!(
            (u - expect).abs() < tol * expect,
            "ring {j}: {u} vs {expect}"
        );
    }
}

#[test]
fn shared_injection_fifo_conserves_and_has_the_same_zero_load() {
    let mut sc = scenario(
        4,
        2,
        8,
        Source::Bernoulli { p: 0.0001 },
        RunLength::new(100, 10, 200),
    );
    sc.injection = Injection::Shared;
    let c = go(6, true, sc);
    assert_eq!(c.finish, Finish::Completed);
    let (lat, hops) = (mean(&c.latency), mean(&c.hops));
    assert!(
        lat >= 8.0 + hops - 1e-9 && lat - (8.0 + hops) < 0.03,
        "{lat} {hops}"
    );
    check_conservation(&c, 8);
    // Under load the shared FIFO lets a message take any idle injection VC:
    // its source wait is no longer than with a random fixed VC.
    let lat_of = |inj| {
        let mut sc = scenario(
            4,
            2,
            16,
            Source::Bernoulli { p: 0.02 },
            RunLength::new(500, 10, 800),
        );
        sc.injection = inj;
        let c = go(6, true, sc);
        check_conservation(&c, 16);
        mean(&c.latency) - mean(&c.network_latency)
    };
    assert!(lat_of(Injection::Shared) < lat_of(Injection::PerVc));
}
