use super::*;
use crate::Fidelity;
use serde_json::{json, Value};

fn ctx() -> TaskContext {
    TaskContext::new(7, Fidelity::Quick)
}

fn et(lambda: f64) -> Value {
    json!({"lambda": lambda, "ca2": 5.0, "cs2": 7.0, "mus": [8.0, 16.0], "thresholds": [8], "K": 16})
}
fn baseline(lambda: f64) -> Value {
    json!({"lambda": lambda, "ca2": 5.0, "cs2": 7.0, "mus": [8.0], "thresholds": [], "K": 8})
}
fn ajt(lambda: f64) -> Value {
    json!({"lambda": lambda, "ca2": 5.0, "cs2": 7.0, "mus": [8.0, 16.0, 12.0], "thresholds": [8, 16], "K": 24})
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

/// λ, then (L, U, π) for ET, the baseline and AJT.
type Row = (f64, [f64; 3], [f64; 3], [f64; 3]);

/// Catalogue §1.3 reference table (3 decimals; π to 4 significant places).
/// A regression check of the catalogue against our exact chain.
#[test]
fn chain_matches_catalogue_table() {
    #[rustfmt::skip]
    let table: [Row; 7] = [
        (1.0, [0.407, 0.120, 0.0026], [0.390, 0.119, 0.0449], [0.412, 0.120, 0.0002]),
        (2.0, [0.920, 0.231, 0.0066], [0.853, 0.230, 0.0808], [0.949, 0.232, 0.0008]),
        (3.0, [1.515, 0.332, 0.0134], [1.350, 0.328, 0.1240], [1.606, 0.335, 0.0024]),
        (4.0, [2.164, 0.421, 0.0237], [1.847, 0.414, 0.1712], [2.381, 0.427, 0.0058]),
        (5.0, [2.843, 0.498, 0.0374], [2.322, 0.488, 0.2193], [3.270, 0.510, 0.0121]),
        (6.0, [3.531, 0.565, 0.0543], [2.764, 0.550, 0.2664], [4.263, 0.582, 0.0222]),
        (7.0, [4.212, 0.622, 0.0741], [3.167, 0.603, 0.3111], [5.343, 0.646, 0.0367]),
    ];
    for (lambda, e, b, a) in table {
        for (p, r) in [(et(lambda), e), (baseline(lambda), b), (ajt(lambda), a)] {
            let o = ThresholdCtmc.solve(&p, &ctx()).unwrap();
            let (l, u, pi) = (
                o.get("L").unwrap(),
                o.get("U").unwrap(),
                o.get("P_block").unwrap(),
            );
            assert!((l - r[0]).abs() <= 5e-4 + 1e-12, "{p}: L {l} vs {}", r[0]);
            assert!((u - r[1]).abs() <= 5e-4 + 1e-12, "{p}: U {u} vs {}", r[1]);
            assert!((pi - r[2]).abs() <= 5e-5 + 1e-12, "{p}: π {pi} vs {}", r[2]);
        }
    }
}

#[test]
fn me_equals_chain_through_the_solvers() {
    let mut sets = Vec::new();
    for l in [0.5, 1.0, 4.0, 7.5, 9.0, 15.0, 30.0] {
        sets.extend([et(l), baseline(l), ajt(l)]);
    }
    sets.push(json!({"lambda": 2.2, "ca2": 1.7, "cs2": 11.0, "mus": [1.5, 3.0, 0.5, 4.0], "thresholds": [2, 3, 10], "K": 12}));
    sets.push(json!({"lambda": 0.9, "ca2": 3.0, "cs2": 1.0, "mus": [2.0, 1.0], "thresholds": [5], "K": 6}));
    for p in sets {
        let a = ThresholdMe.solve(&p, &ctx()).unwrap();
        let b = ThresholdCtmc.solve(&p, &ctx()).unwrap();
        assert_eq!(
            a.metrics.keys().collect::<Vec<_>>(),
            b.metrics.keys().collect::<Vec<_>>()
        );
        for (name, m) in &a.metrics {
            assert!(
                rel(m.value, b.metrics[name].value) < 1e-12,
                "{p} {name}: {} vs {}",
                m.value,
                b.metrics[name].value
            );
        }
        let u: f64 = (1..=4).filter_map(|k| a.get(&format!("U{k}"))).sum();
        assert!(rel(u, a.get("U").unwrap()) < 1e-13);
    }
}

#[test]
fn thresholds_reduce_blocking_as_the_thesis_says() {
    for l in [1.0, 4.0, 7.0] {
        let b = ThresholdMe
            .solve(&baseline(l), &ctx())
            .unwrap()
            .get("P_block")
            .unwrap();
        let e = ThresholdMe
            .solve(&et(l), &ctx())
            .unwrap()
            .get("P_block")
            .unwrap();
        let a = ThresholdMe
            .solve(&ajt(l), &ctx())
            .unwrap()
            .get("P_block")
            .unwrap();
        assert!(a < e && e < b, "λ={l}: {a} {e} {b}");
    }
}

#[test]
fn simulation_agrees_with_chain() {
    let ctx = TaskContext::new(2024, Fidelity::Quick);
    for (mut p, lambda) in [(et(5.0), 5.0), (ajt(6.0), 6.0)] {
        let exact = ThresholdCtmc.solve(&p, &ctx).unwrap();
        p["warmup"] = json!(20_000);
        p["batches"] = json!(10);
        p["batch_len"] = json!(100_000);
        let s = ThresholdSim.solve(&p, &ctx).unwrap();
        for (name, m) in &exact.metrics {
            let e = s.metrics[name];
            let hw = e.half_width.unwrap();
            assert!(
                (e.value - m.value).abs() <= 3.0 * hw + 1e-9,
                "λ={lambda} {name}: sim {} ± {hw} vs exact {}",
                e.value,
                m.value
            );
        }
    }
}

#[test]
fn printed_formulas_fail_at_the_paper_parameters() {
    // ET at λ = 1..7 with t = 8 (and t = 4): the printed multipliers leave
    // their domain (catalogue Y-9i).
    for l in 1..=7 {
        for t in [4, 8] {
            let mut p = et(l as f64);
            p["thresholds"] = json!([t]);
            p["variant"] = json!("as-printed");
            let r = ThresholdMe.solve(&p, &ctx()).unwrap();
            assert_eq!(r.status, crate::Status::Undefined, "λ={l} t={t}: {r:?}");
            assert!(r.metrics.is_empty());
            assert!(r.note.unwrap().contains("break here"));
        }
    }
    // Beyond ρ1 = 1 the printed forms are outside their stated domain.
    let mut p = et(9.0);
    p["variant"] = json!("as-printed");
    let r = ThresholdMe.solve(&p, &ctx()).unwrap();
    assert_eq!(r.status, crate::Status::Undefined);
    assert!(r.note.unwrap().contains("ρ1"));
    // AJT: not computable at all.
    let mut p = ajt(3.0);
    p["variant"] = json!("as-printed");
    assert!(matches!(
        ThresholdMe.solve(&p, &ctx()),
        Err(SolveError::InvalidParam { .. })
    ));
}

#[test]
fn printed_one_region_is_exact_only_for_poisson_arrivals() {
    // (2.8)-(2.11) as printed are the exact M/GE/1/N solution: (2.11) lacks
    // Ca² and y = (1 − ρ)/(1 − x) equals the derived 1/(1 − (1 − τ_s) x) only
    // when τ_a = 1. With bursty arrivals they are off.
    for (ca2, exact_expected) in [(1.0, true), (5.0, false)] {
        let mut p =
            json!({"lambda": 2.0, "ca2": ca2, "cs2": 3.0, "mus": [4.0], "thresholds": [], "K": 6});
        let exact = ThresholdMe.solve(&p, &ctx()).unwrap();
        p["variant"] = json!("as-printed");
        let pr = ThresholdMe.solve(&p, &ctx()).unwrap();
        for m in ["L", "U", "P_block", "P_full"] {
            let r = rel(pr.get(m).unwrap(), exact.get(m).unwrap());
            assert_eq!(r < 1e-12, exact_expected, "Ca²={ca2} {m}: rel diff {r}");
        }
    }
}

#[test]
fn refuses_bad_parameters() {
    let ok = et(3.0);
    for s in [&ThresholdMe as &dyn Solver, &ThresholdCtmc, &ThresholdSim] {
        let _ = s.solve(&json!({"lambda": 3.0, "ca2": 5.0, "cs2": 7.0, "mus": [8.0, 16.0], "thresholds": [8], "K": 16, "batches": 2, "batch_len": 10}), &ctx());
        assert!(s.solve(&ok, &ctx()).is_ok() || s.kind() == Kind::Simulation);
        for (field, value, param) in [
            ("thresholds", json!([8, 4]), "thresholds"),
            ("thresholds", json!([8, 8]), "thresholds"),
            ("thresholds", json!([]), "thresholds"),
            ("thresholds", json!([0]), "thresholds"),
            ("thresholds", json!([2.5]), "thresholds"),
            ("K", json!(8), "K"),
            ("K", json!(5), "K"),
            ("K", json!(16.5), "K"),
            ("ca2", json!(0.5), "ca2"),
            ("cs2", json!(0.99), "cs2"),
            ("mus", json!([8.0, 0.0]), "mus"),
            ("mus", json!([8.0, -1.0]), "mus"),
            ("mus", json!([]), "mus"),
            ("lambda", json!(0.0), "lambda"),
        ] {
            let mut p = ok.clone();
            p[field] = value;
            match s.solve(&p, &ctx()) {
                Err(SolveError::InvalidParam { param: got, .. }) => {
                    assert_eq!(got, param, "{}: {p}", s.name())
                }
                other => panic!("{}: {p}: {other:?}", s.name()),
            }
        }
        let mut p = ok.clone();
        p["extra"] = json!(1);
        assert!(matches!(s.solve(&p, &ctx()), Err(SolveError::BadParams(_))));
    }
    let mut p = ok.clone();
    p["variant"] = json!("repaired");
    assert!(matches!(
        ThresholdMe.solve(&p, &ctx()),
        Err(SolveError::BadParams(_))
    ));
    p["variant"] = json!("derived");
    assert!(ThresholdCtmc.solve(&p, &ctx()).is_err());
}

#[test]
fn simulation_is_deterministic_and_conserves() {
    let mut p = ajt(4.0);
    p["warmup"] = json!(1000);
    p["batches"] = json!(3);
    p["batch_len"] = json!(20_000);
    let a = ThresholdSim
        .solve(&p, &TaskContext::new(5, Fidelity::Full))
        .unwrap();
    let b = ThresholdSim
        .solve(&p, &TaskContext::new(5, Fidelity::Full))
        .unwrap();
    assert_eq!(a, b);
    let q = GeQueue::new(4.0, 5.0, 7.0, &[8.0, 16.0, 12.0], &[8.0, 16.0], 24.0).unwrap();
    let out = sim::simulate(
        &q,
        RunLength::new(1000, 3, 20_000),
        &TaskContext::new(5, Fidelity::Full),
    )
    .unwrap();
    assert_eq!(out.outcome, a);
    let t = out.totals;
    assert_eq!(t.accepted + t.lost, t.arrivals);
    assert_eq!(t.accepted, t.departures + t.in_system_at_end);
    assert!(t.arrivals >= 61_000);
}

#[test]
fn blocking_needs_the_empty_system_term() {
    // Catalogue Y-2 and the §1.3 "Choose" bullet write π = Σ_n (1−τ_a)^(K−n) P(n)
    // without δ_0 at n = 0. Under the canonical empty-system semantics that
    // overstates blocking (baseline, λ = 1: 0.062 instead of 0.045); the
    // customer-level simulation tells the two apart.
    let ctx = TaskContext::new(31, Fidelity::Quick);
    let p = baseline(1.0);
    let q = GeQueue::new(1.0, 5.0, 7.0, &[8.0], &[], 8.0).unwrap();
    let exact = me::solve(&q);
    let a = 1.0 - q.tau_a();
    let without_delta0: f64 = (0..=q.k)
        .map(|n| a.powi((q.k - n) as i32) * exact.p[n])
        .sum();
    let mut ps = p.clone();
    ps["warmup"] = json!(10_000);
    ps["batch_len"] = json!(100_000);
    let s = ThresholdSim.solve(&ps, &ctx).unwrap().metrics["P_block"];
    let hw = s.half_width.unwrap();
    assert!(
        (s.value - exact.p_block).abs() <= 3.0 * hw,
        "{s:?} vs {}",
        exact.p_block
    );
    assert!(
        (s.value - without_delta0).abs() > 3.0 * hw,
        "{s:?} vs {without_delta0}"
    );
    assert!((without_delta0 - 0.0621).abs() < 5e-4, "{without_delta0}");
}
