use super::*;
use crate::queueing::mm1k::mm1k_distribution;
use crate::Fidelity;
use serde_json::json;

fn queue(lambda: f64, ca2: f64, cs2: f64, mus: &[f64], ts: &[f64], k: f64) -> GeQueue {
    GeQueue::new(lambda, ca2, cs2, mus, ts, k).unwrap()
}

/// Parameter sets: 1, 2 and 3 regions, paper and non-paper values, λ beyond
/// μ1 and beyond every μ, Poisson/exponential edges, tiny K, a threshold at K−1.
fn cases() -> Vec<GeQueue> {
    let mut v = Vec::new();
    for &lambda in &[0.3, 1.0, 3.0, 7.5, 8.0, 12.0, 40.0] {
        v.push(queue(lambda, 5.0, 7.0, &[8.0], &[], 8.0));
        v.push(queue(lambda, 5.0, 7.0, &[8.0, 16.0], &[8.0], 16.0));
        v.push(queue(
            lambda,
            5.0,
            7.0,
            &[8.0, 16.0, 12.0],
            &[8.0, 16.0],
            24.0,
        ));
    }
    v.push(queue(2.0, 1.0, 1.0, &[3.0], &[], 5.0));
    v.push(queue(2.0, 1.0, 4.0, &[3.0, 1.0], &[2.0], 6.0));
    v.push(queue(2.0, 9.0, 1.0, &[1.0, 5.0], &[3.0], 4.0));
    v.push(queue(0.7, 2.5, 3.5, &[1.0], &[], 1.0));
    v.push(queue(0.7, 2.5, 3.5, &[1.0, 2.0], &[1.0], 2.0));
    v.push(queue(
        5.0,
        20.0,
        1.5,
        &[2.0, 4.0, 6.0, 3.0],
        &[2.0, 5.0, 9.0],
        13.0,
    ));
    v.push(queue(1.1, 3.0, 2.0, &[1.0, 1.0], &[4.0], 9.0));
    v.push(queue(
        0.05,
        5.0,
        7.0,
        &[8.0, 16.0, 12.0],
        &[8.0, 16.0],
        24.0,
    ));
    v
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

#[test]
fn me_equals_exact_chain() {
    for q in cases() {
        let me = me::solve(&q);
        let ex = ctmc::solve(&q).unwrap();
        for (n, (a, b)) in me.p.iter().zip(&ex.p).enumerate() {
            assert!(rel(*a, *b) < 1e-12, "{q:?} P({n}): ME {a} vs CTMC {b}");
        }
        assert!(
            rel(me.p_block, ex.p_block) < 1e-12,
            "{q:?}: π {} vs {}",
            me.p_block,
            ex.p_block
        );
    }
}

#[test]
fn y_and_flow_balance_identities() {
    for q in cases() {
        let me = me::solve(&q);
        let s = 1.0 - q.tau_s();
        let x_last = *me.x.last().unwrap();
        assert!(rel(me.y, 1.0 / (1.0 - s * x_last)) < 1e-12, "{q:?}: y");
        // The catalogue's global flow balance λ(1 − π) = Σ_{n>=1} μ(n) P(n).
        let served: f64 = (1..=q.k).map(|n| q.mu(n) * me.p[n]).sum();
        assert!(
            rel(q.lambda * (1.0 - me.p_block), served) < 1e-12,
            "{q:?}: flow balance"
        );
    }
}

#[test]
fn chain_conserves_customers() {
    for q in cases() {
        let ex = ctmc::solve(&q).unwrap();
        assert!(
            rel(q.lambda * (1.0 - ex.p_block), ex.throughput) < 1e-12,
            "{q:?}: λ(1−π) = {} vs departures {}",
            q.lambda * (1.0 - ex.p_block),
            ex.throughput
        );
    }
}

#[test]
fn poisson_exponential_is_mm1k() {
    for &(lambda, mu, k) in &[(1.0, 2.0, 5usize), (3.0, 2.0, 10), (2.0, 2.0, 1)] {
        let q = queue(lambda, 1.0, 1.0, &[mu], &[], k as f64);
        let exact = mm1k_distribution(lambda, mu, k);
        let me = me::solve(&q);
        let ex = ctmc::solve(&q).unwrap();
        for (n, e) in exact.iter().enumerate() {
            assert!(rel(me.p[n], *e) < 1e-13);
            assert!(rel(ex.p[n], *e) < 1e-13);
        }
        assert!(rel(me.p_block, exact[k]) < 1e-13);
    }
}

#[test]
fn large_capacity_reproduces_gege1_mean() {
    // (5.14): λ = 3, μ = 8, Ca² = 5, Cs² = 7 gives L = 2.475.
    let q = queue(3.0, 5.0, 7.0, &[8.0], &[], 400.0);
    let ex = ctmc::solve(&q).unwrap();
    let l: f64 = ex.p.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
    assert!((l - 2.475).abs() < 1e-9, "{l}");
    assert!((me::gege1_mean(3.0, 8.0, 5.0, 7.0) - 2.475).abs() < 1e-12);
    // x = (L − ρ)/L of eq (5.12) equals the rational form used by the ME.
    let x = (2.475 - 0.375) / 2.475;
    assert!(rel(me::multiplier(3.0, 8.0, 1.0 / 3.0, 0.25), x) < 1e-14);
    // g_1 x_1 = ρ(1 − x)/(1 − ρ) of eq (5.11), as the ME evaluates it.
    let q = queue(3.0, 5.0, 7.0, &[8.0], &[], 8.0);
    let rho = 3.0 / 8.0;
    assert!(rel(me::solve(&q).g1x1, rho * (1.0 - x) / (1.0 - rho)) < 1e-14);
}

#[test]
fn solvers_report_the_same_metrics() {
    let ctx = TaskContext::new(1, Fidelity::Full);
    let p = json!({"lambda": 5.0, "mu": 8.0, "ca2": 5.0, "cs2": 7.0, "N": 8});
    let a = GeGe1nMe.solve(&p, &ctx).unwrap();
    let b = GeGe1nCtmc.solve(&p, &ctx).unwrap();
    for m in METRICS {
        assert!(rel(a.get(m).unwrap(), b.get(m).unwrap()) < 1e-12, "{m}");
    }
    // Catalogue §1.3 reference (no-threshold baseline, λ = 5): L 2.322, U 0.488, π 0.2193.
    assert!((a.get("L").unwrap() - 2.322).abs() < 5e-4);
    assert!((a.get("U").unwrap() - 0.488).abs() < 5e-4);
    assert!((a.get("P_block").unwrap() - 0.2193).abs() < 5e-5);
    assert!(a.get("U1").is_none());
}

#[test]
fn simulation_agrees_with_chain_and_conserves() {
    let ctx = TaskContext::new(12345, Fidelity::Quick);
    for q in [
        queue(5.0, 5.0, 7.0, &[8.0], &[], 8.0),
        queue(6.0, 3.0, 2.0, &[4.0, 9.0, 5.0], &[3.0, 7.0], 11.0),
    ] {
        let run = RunLength::new(20_000, 10, 60_000);
        let out = sim::simulate(&q, run, &ctx).unwrap();
        let ex = ctmc::solve(&q).unwrap();
        let m = QueueMetrics::from_distribution(&q, &ex.p, ex.p_block, ex.throughput);
        let mut checks = vec![
            ("L", m.l),
            ("U", m.u),
            ("P_block", m.p_block),
            ("P_full", m.p_full),
            ("throughput", m.throughput),
        ];
        let names = ["U1", "U2", "U3"];
        for (i, u) in m.u_regions.iter().enumerate() {
            checks.push((names[i], *u));
        }
        for (name, exact) in checks {
            let e = out.outcome.metrics[name];
            let hw = e.half_width.unwrap();
            assert!(
                (e.value - exact).abs() <= 3.0 * hw + 1e-9,
                "{q:?} {name}: sim {} ± {hw} vs exact {exact}",
                e.value
            );
            assert!(
                hw < 0.1 * exact.abs().max(1e-3),
                "{name}: CI too wide ({hw})"
            );
        }
        // Little: W = L / throughput.
        let w = out.outcome.metrics["W"].value;
        assert!(rel(w, m.l / m.throughput) < 0.05);
        let t = out.totals;
        assert_eq!(t.accepted + t.lost, t.arrivals);
        assert_eq!(t.accepted, t.departures + t.in_system_at_end);
        assert!(t.in_system_at_end <= q.k as u64);
    }
}

#[test]
fn simulation_is_deterministic() {
    let p = json!({"lambda": 4.0, "mu": 8.0, "ca2": 5.0, "cs2": 7.0, "N": 8,
                   "warmup": 1000, "batches": 3, "batch_len": 5000});
    let ctx = TaskContext::new(99, Fidelity::Full);
    let a = GeGe1nSim.solve(&p, &ctx).unwrap();
    let b = GeGe1nSim.solve(&p, &ctx).unwrap();
    assert_eq!(a, b);
    let c = GeGe1nSim
        .solve(&p, &TaskContext::new(100, Fidelity::Full))
        .unwrap();
    assert_ne!(a, c);
}

#[test]
fn refuses_bad_parameters() {
    let ctx = TaskContext::new(0, Fidelity::Quick);
    let ok = json!({"lambda": 1.0, "mu": 2.0, "ca2": 2.0, "cs2": 3.0, "N": 4});
    assert!(GeGe1nMe.solve(&ok, &ctx).is_ok());
    for (bad, param) in [
        (
            json!({"lambda": 0.0, "mu": 2.0, "ca2": 2.0, "cs2": 3.0, "N": 4}),
            "lambda",
        ),
        (
            json!({"lambda": 1.0, "mu": -2.0, "ca2": 2.0, "cs2": 3.0, "N": 4}),
            "mu",
        ),
        (
            json!({"lambda": 1.0, "mu": 2.0, "ca2": 0.5, "cs2": 3.0, "N": 4}),
            "ca2",
        ),
        (
            json!({"lambda": 1.0, "mu": 2.0, "ca2": 2.0, "cs2": 0.9, "N": 4}),
            "cs2",
        ),
        (
            json!({"lambda": 1.0, "mu": 2.0, "ca2": 2.0, "cs2": 3.0, "N": 0}),
            "N",
        ),
        (
            json!({"lambda": 1.0, "mu": 2.0, "ca2": 2.0, "cs2": 3.0, "N": 2.5}),
            "N",
        ),
    ] {
        for s in [&GeGe1nMe as &dyn Solver, &GeGe1nCtmc, &GeGe1nSim] {
            match s.solve(&bad, &ctx) {
                Err(SolveError::InvalidParam { param: p, .. }) => assert_eq!(p, param, "{bad}"),
                other => panic!("{}: {bad}: {other:?}", s.name()),
            }
        }
    }
    let extra = json!({"lambda": 1.0, "mu": 2.0, "ca2": 2.0, "cs2": 3.0, "N": 4, "K": 3});
    assert!(matches!(
        GeGe1nMe.solve(&extra, &ctx),
        Err(SolveError::BadParams(_))
    ));
    let big = json!({"lambda": 1.0, "mu": 2.0, "ca2": 2.0, "cs2": 3.0, "N": 5000});
    // The bound names the parameter as the user wrote it, in the key and in
    // the rule (it used to say "K must be <= 600" for N).
    match GeGe1nCtmc.solve(&big, &ctx) {
        Err(SolveError::InvalidParam { param, rule }) => {
            assert_eq!(param, "N");
            assert!(rule.contains("N must be <= 600"), "{rule}");
            assert!(!rule.contains('K'), "{rule}");
        }
        other => panic!("{other:?}"),
    }
    assert!(GeGe1nMe.solve(&big, &ctx).is_ok());
}

#[test]
fn overload_and_large_capacity_stay_exact() {
    // x > 1 over hundreds of states: the ME weights pass 1e200 and are rescaled
    // (x = 34 here); at K = 300 the chain overflows GTH in the natural order and
    // is solved in reversed order.
    for q in [
        queue(100.0, 5.0, 1.0, &[1.0], &[], 200.0),
        queue(100.0, 5.0, 1.0, &[1.0], &[], 300.0),
        queue(30.0, 2.0, 3.0, &[4.0, 40.0, 6.0], &[100.0, 300.0], 500.0),
    ] {
        let me = me::solve(&q);
        let ex = ctmc::solve(&q).unwrap();
        let l_me: f64 = me.p.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
        let l_ex: f64 = ex.p.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
        assert!(rel(l_me, l_ex) < 1e-11, "{l_me} vs {l_ex}");
        assert!(rel(me.p_block, ex.p_block) < 1e-11);
        assert!(rel(me.p[q.k], ex.p[q.k]) < 1e-11);
        assert!(me.p.iter().all(|p| p.is_finite() && *p >= 0.0));
        assert!(me.x[0] > 30.0 || q.regions() > 1);
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn any_queue() -> impl Strategy<Value = GeQueue> {
        (
            0.05f64..30.0,
            1.0f64..20.0,
            1.0f64..20.0,
            prop::collection::vec(0.2f64..20.0, 1..4),
            1usize..6,
            1usize..8,
        )
            .prop_map(|(lambda, ca2, cs2, mus, gap, tail)| {
                let ts: Vec<f64> = (1..mus.len()).map(|i| (i * gap) as f64).collect();
                let k = ts.last().copied().unwrap_or(0.0) + tail as f64;
                GeQueue::new(lambda, ca2, cs2, &mus, &ts, k).unwrap()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn me_is_the_stationary_distribution(q in any_queue()) {
            let me = me::solve(&q);
            let ex = ctmc::solve(&q).unwrap();
            let total: f64 = me.p.iter().sum();
            prop_assert!((total - 1.0).abs() < 1e-13);
            for (a, b) in me.p.iter().zip(&ex.p) {
                prop_assert!(rel(*a, *b) < 1e-10, "{a} vs {b}");
            }
            prop_assert!(rel(me.p_block, ex.p_block) < 1e-10);
            prop_assert!((0.0..=1.0).contains(&me.p_block));
            let served: f64 = (1..=q.k).map(|n| q.mu(n) * me.p[n]).sum();
            prop_assert!(rel(q.lambda * (1.0 - me.p_block), served) < 1e-10);
            prop_assert!(rel(ex.throughput, served) < 1e-10);
            let m = QueueMetrics::from_distribution(&q, &me.p, me.p_block, 0.0);
            prop_assert!(rel(m.u_regions.iter().sum::<f64>(), m.u) < 1e-13);
        }
    }
}
