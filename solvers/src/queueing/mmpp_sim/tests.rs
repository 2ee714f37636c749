//! The simulators against closed forms (M/M/1, M/M/1/K, Pollaczek–Khinchine)
//! and against brute-force truncated CTMCs of the (level, phase) chain, built
//! here with the GTH solver, independent of the analytic MMPP solvers.

use super::engine::{run_fifo, Plan, ServiceLaw};
use super::*;
use crate::markov::ctmc::Generator;
use crate::queueing::mm1k::mm1k_metrics;
use crate::traffic::sources::ArrivalSource;
use crate::Fidelity;
use serde_json::{json, Value};

/// The simulators' MMPP(2) source.
fn clock(phi1: f64, phi2: f64, l1: f64, l2: f64, seed: u64) -> Mmpp2Clock {
    Mmpp2Clock::new(phi1, phi2, l1, l2, Stream::new(seed, 1)).unwrap()
}

fn ctx(seed: u64) -> TaskContext {
    TaskContext::new(seed, Fidelity::Full)
}

fn with(base: &Value, extra: Value) -> Value {
    let mut v = base.clone();
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// |sim − exact| <= 3·hw + tiny, and the CI is tight enough to mean something.
fn check(out: &Outcome, name: &str, exact: f64, max_rel_hw: f64) {
    let m = out.metrics[name];
    let hw = m.half_width.unwrap();
    assert!(
        (m.value - exact).abs() <= 3.0 * hw + 1e-9,
        "{name}: sim {} ± {hw} vs exact {exact}",
        m.value
    );
    assert!(
        hw <= max_rel_hw * exact.abs().max(1e-3),
        "{name}: CI ±{hw} too wide for a meaningful check (value {exact})"
    );
}

/// Exact metrics of the bivariate (level, phase) CTMC of MMPP/M/1/K, state 2n + j.
struct Ref {
    l: f64,
    p_empty: f64,
    p_block: f64,
    throughput: f64,
    w: f64,
    p_top: f64,
}

fn mmpp_m1k_ctmc(phi: [f64; 2], lam: [f64; 2], mu: f64, k: usize) -> Ref {
    ref_from_levels(&levels_gth(phi, lam, mu, k), lam)
}

/// Level probabilities (π_n1, π_n2) of the MMPP/M/1/K chain, solved with GTH
/// (dense storage: for small K).
fn levels_gth(phi: [f64; 2], lam: [f64; 2], mu: f64, k: usize) -> Vec<[f64; 2]> {
    let mut g = Generator::new(2 * (k + 1));
    for n in 0..=k {
        for j in 0..2 {
            let s = 2 * n + j;
            g.add(s, 2 * n + (1 - j), phi[j]);
            if n < k {
                g.add(s, s + 2, lam[j]);
            }
            if n > 0 {
                g.add(s, s - 2, mu);
            }
        }
    }
    let pi = g.steady_state().unwrap();
    (0..=k).map(|n| [pi[2 * n], pi[2 * n + 1]]).collect()
}

type M2 = [[f64; 2]; 2];

fn mul(a: M2, b: M2) -> M2 {
    let mut c = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
        }
    }
    c
}

fn inv(a: M2) -> M2 {
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    [
        [a[1][1] / det, -a[0][1] / det],
        [-a[1][0] / det, a[0][0] / det],
    ]
}

/// The same chain by linear level reduction (block elimination from the top
/// level down, π_{n+1} = π_n R_n): O(K) memory, for deep truncations.
fn levels_reduction(phi: [f64; 2], lam: [f64; 2], mu: f64, k: usize) -> Vec<[f64; 2]> {
    let up: M2 = [[lam[0], 0.0], [0.0, lam[1]]];
    // −(local block) of level n: outflow on the diagonal, minus phase changes.
    let neg_local = |n: usize| -> M2 {
        let a = if n < k { 1.0 } else { 0.0 };
        let d = if n > 0 { mu } else { 0.0 };
        [
            [phi[0] + a * lam[0] + d, -phi[0]],
            [-phi[1], phi[1] + a * lam[1] + d],
        ]
    };
    let mut r: Vec<M2> = vec![[[0.0; 2]; 2]; k];
    let mut below = neg_local(k);
    for n in (0..k).rev() {
        r[n] = mul(up, inv(below));
        // −(L_n + R_n·μI)
        let mut m = neg_local(n);
        for i in 0..2 {
            for j in 0..2 {
                m[i][j] -= r[n][i][j] * mu;
            }
        }
        below = m;
    }
    // `below` is now −(censored generator of level 0): π0 ∝ (its (1,0), its (0,1)).
    let mut pi = vec![[-below[1][0], -below[0][1]]];
    for n in 0..k {
        let p = pi[n];
        pi.push([
            p[0] * r[n][0][0] + p[1] * r[n][1][0],
            p[0] * r[n][0][1] + p[1] * r[n][1][1],
        ]);
    }
    let total: f64 = pi.iter().map(|p| p[0] + p[1]).sum();
    pi.iter().map(|p| [p[0] / total, p[1] / total]).collect()
}

fn ref_from_levels(pi: &[[f64; 2]], lam: [f64; 2]) -> Ref {
    let k = pi.len() - 1;
    let level = |n: usize| pi[n][0] + pi[n][1];
    let l: f64 = (0..=k).map(|n| n as f64 * level(n)).sum();
    let offered: f64 = pi.iter().map(|p| p[0] * lam[0] + p[1] * lam[1]).sum();
    let lost = pi[k][0] * lam[0] + pi[k][1] * lam[1];
    let throughput = offered - lost;
    Ref {
        l,
        p_empty: level(0),
        p_block: lost / offered,
        throughput,
        w: l / throughput,
        p_top: level(k),
    }
}

#[test]
fn level_reduction_agrees_with_gth() {
    for &(phi, lam, mu, k) in &[
        ([0.1, 0.3], [3.0, 0.4], 2.0, 10usize),
        ([0.02, 0.02], [1.4, 0.2], 1.0, 200),
        ([1.0, 2.0], [0.5, 0.5], 0.3, 30),
    ] {
        let a = levels_gth(phi, lam, mu, k);
        let b = levels_reduction(phi, lam, mu, k);
        for (x, y) in a.iter().zip(&b) {
            for j in 0..2 {
                // The 2×2 inverses subtract, so allow more than GTH's 1e-13;
                // the simulation checks need far less.
                assert!((x[j] - y[j]).abs() <= 1e-7 * x[j], "{x:?} vs {y:?}");
            }
        }
    }
}

/// MMPP/M/1 by a truncation deep enough that the cut-off mass is negligible.
fn mmpp_m1_ctmc(phi: [f64; 2], lam: [f64; 2], mu: f64, levels: usize) -> Ref {
    let r = ref_from_levels(&levels_reduction(phi, lam, mu, levels), lam);
    assert!(r.p_top < 1e-13, "truncation too shallow: {}", r.p_top);
    r
}

fn mmpp(phi1: f64, phi2: f64, l1: f64, l2: f64) -> Value {
    json!({"phi1": phi1, "phi2": phi2, "lambda1": l1, "lambda2": l2})
}

#[test]
fn m1_poisson_case_matches_mm1() {
    let (lambda, mu) = (0.7, 1.0);
    let p = with(
        &mmpp(0.3, 0.6, lambda, lambda),
        json!({"mu": mu, "batch_len": 200_000, "warmup": 10_000}),
    );
    let out = MmppM1Sim.solve(&p, &ctx(1)).unwrap();
    let rho: f64 = lambda / mu;
    check(&out, "L", rho / (1.0 - rho), 0.05);
    check(&out, "W", 1.0 / (mu - lambda), 0.05);
    check(&out, "P_empty", 1.0 - rho, 0.02);
}

#[test]
fn m1_bursty_case_matches_brute_force_ctmc() {
    let (phi, lam, mu) = ([0.2, 0.4], [2.5, 0.5], 2.5);
    let r = mmpp_m1_ctmc(phi, lam, mu, 1500);
    let p = with(
        &mmpp(phi[0], phi[1], lam[0], lam[1]),
        json!({"mu": mu, "batch_len": 300_000, "warmup": 20_000}),
    );
    let out = MmppM1Sim.solve(&p, &ctx(2)).unwrap();
    check(&out, "L", r.l, 0.08);
    check(
        &out,
        "W",
        r.l / (1.0 - r.p_block) / out_rate(phi, lam),
        0.08,
    );
    check(&out, "P_empty", r.p_empty, 0.03);
}

fn out_rate(phi: [f64; 2], lam: [f64; 2]) -> f64 {
    (lam[0] * phi[1] + lam[1] * phi[0]) / (phi[0] + phi[1])
}

#[test]
fn m1k_poisson_case_matches_mm1k_closed_form() {
    for &(lambda, mu, k) in &[(0.9, 1.0, 5usize), (1.5, 1.0, 8)] {
        let exact = mm1k_metrics(lambda, mu, k);
        let p = with(
            &mmpp(1.0, 1.0, lambda, lambda),
            json!({"mu": mu, "K": k, "batch_len": 100_000, "warmup": 1000}),
        );
        let out = MmppM1kSim.solve(&p, &ctx(3)).unwrap();
        check(&out, "L", exact.l, 0.02);
        check(&out, "P_block", exact.p_block, 0.05);
        check(&out, "throughput", exact.throughput, 0.01);
        check(&out, "W", exact.w, 0.02);
    }
}

#[test]
fn m1k_bursty_case_matches_brute_force_ctmc() {
    let (phi, lam, mu, k) = ([0.1, 0.3], [3.0, 0.4], 2.0, 10usize);
    let r = mmpp_m1k_ctmc(phi, lam, mu, k);
    let p = with(
        &mmpp(phi[0], phi[1], lam[0], lam[1]),
        json!({"mu": mu, "K": k, "batch_len": 200_000, "warmup": 10_000}),
    );
    let out = MmppM1kSim.solve(&p, &ctx(4)).unwrap();
    check(&out, "L", r.l, 0.03);
    check(&out, "P_block", r.p_block, 0.05);
    check(&out, "throughput", r.throughput, 0.02);
    check(&out, "W", r.w, 0.03);
}

#[test]
fn g1_poisson_case_matches_pollaczek_khinchine() {
    let lambda = 1.5;
    // M/D/1, M/(shift + Exp)/1 and a mixture, each with ρ = 0.75.
    for service in [
        json!({"shift": 0.5}),
        json!({"shift": 0.25, "rate": 4.0}),
        json!({"mixture": [{"weight": 0.5, "shift": 0.2}, {"weight": 0.5, "rate": 1.25}]}),
    ] {
        let law = parse_service(&service).unwrap();
        let (es, es2) = (law.mean(), law.second_moment());
        let rho = lambda * es;
        assert!((rho - 0.75).abs() < 1e-12, "{service}");
        let wq = lambda * es2 / (2.0 * (1.0 - rho));
        let p = with(
            &mmpp(0.5, 0.5, lambda, lambda),
            json!({"service": service, "batch_len": 200_000, "warmup": 10_000}),
        );
        let out = MmppG1Sim.solve(&p, &ctx(5)).unwrap();
        check(&out, "W", wq, 0.05);
        // PASTA: the time-average unfinished work equals the mean wait.
        check(&out, "Wv", wq, 0.05);
        check(&out, "rho", rho, 0.01);
    }
}

#[test]
fn g1_bursty_exponential_service_matches_brute_force_ctmc() {
    let (phi, lam, mu) = ([0.2, 0.4], [2.5, 0.5], 2.5);
    let r = mmpp_m1_ctmc(phi, lam, mu, 1500);
    let lbar = out_rate(phi, lam);
    let p = with(
        &mmpp(phi[0], phi[1], lam[0], lam[1]),
        json!({"service": {"rate": mu}, "batch_len": 300_000, "warmup": 20_000}),
    );
    let out = MmppG1Sim.solve(&p, &ctx(6)).unwrap();
    // Sojourn = L/λ̄ (Little) = wait + 1/μ; unfinished work = N/μ in distribution.
    check(&out, "W", r.l / lbar - 1.0 / mu, 0.08);
    check(&out, "Wv", r.l / mu, 0.08);
    check(&out, "rho", 1.0 - r.p_empty, 0.02);
}

/// MMPP/H2/1: (level, arrival phase, service phase) CTMC, truncated.
#[test]
#[allow(clippy::needless_range_loop)] // phases index several parallel arrays
fn g1_bursty_hyperexponential_service_matches_brute_force_ctmc() {
    let (phi, lam) = ([0.3, 0.6], [2.2, 0.6]);
    let (w, rate) = ([0.4, 0.6], [1.25, 5.0]);
    let levels = 400;
    // State index: level 0 -> j; level n >= 1 -> 2 + ((n-1)·2 + j)·2 + s.
    let idx = |n: usize, j: usize, s: usize| {
        if n == 0 {
            j
        } else {
            2 + ((n - 1) * 2 + j) * 2 + s
        }
    };
    let mut g = Generator::new(2 + levels * 4);
    for j in 0..2 {
        g.add(idx(0, j, 0), idx(0, 1 - j, 0), phi[j]);
        for s in 0..2 {
            g.add(idx(0, j, 0), idx(1, j, s), lam[j] * w[s]);
        }
        for n in 1..=levels {
            for s in 0..2 {
                let x = idx(n, j, s);
                g.add(x, idx(n, 1 - j, s), phi[j]);
                if n < levels {
                    g.add(x, idx(n + 1, j, s), lam[j]);
                }
                if n == 1 {
                    g.add(x, idx(0, j, 0), rate[s]);
                } else {
                    for s2 in 0..2 {
                        g.add(x, idx(n - 1, j, s2), rate[s] * w[s2]);
                    }
                }
            }
        }
    }
    let pi = g.steady_state().unwrap();
    let es: f64 = (0..2).map(|s| w[s] / rate[s]).sum();
    let (mut l, mut work, mut top) = (0.0, 0.0, 0.0);
    for n in 1..=levels {
        for j in 0..2 {
            for s in 0..2 {
                let p = pi[idx(n, j, s)];
                l += n as f64 * p;
                work += p * (1.0 / rate[s] + (n - 1) as f64 * es);
                if n == levels {
                    top += p;
                }
            }
        }
    }
    assert!(top < 1e-13, "truncation too shallow: {top}");
    let lbar = out_rate(phi, lam);
    let p0 = pi[0] + pi[1];
    let service = json!({"mixture": [
        {"weight": w[0], "rate": rate[0]}, {"weight": w[1], "rate": rate[1]}
    ]});
    let p = with(
        &mmpp(phi[0], phi[1], lam[0], lam[1]),
        json!({"service": service, "batch_len": 300_000, "warmup": 20_000}),
    );
    let out = MmppG1Sim.solve(&p, &ctx(7)).unwrap();
    check(&out, "W", l / lbar - es, 0.08);
    check(&out, "Wv", work, 0.08);
    check(&out, "rho", 1.0 - p0, 0.02);
}

#[test]
fn same_seed_same_outcome_different_seed_different() {
    let p = with(
        &mmpp(0.1, 0.2, 2.0, 0.5),
        json!({"mu": 2.0, "K": 6, "batch_len": 5000, "warmup": 100}),
    );
    let a = MmppM1kSim.solve(&p, &ctx(9)).unwrap();
    let b = MmppM1kSim.solve(&p, &ctx(9)).unwrap();
    let c = MmppM1kSim.solve(&p, &ctx(10)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.metrics["L"], c.metrics["L"]);
    let g = with(
        &mmpp(0.1, 0.2, 1.0, 0.2),
        json!({"service": {"shift": 0.5, "rate": 2.0}, "batch_len": 5000}),
    );
    assert_eq!(
        MmppG1Sim.solve(&g, &ctx(1)).unwrap(),
        MmppG1Sim.solve(&g, &ctx(1)).unwrap()
    );
    assert_ne!(
        MmppG1Sim.solve(&g, &ctx(1)).unwrap(),
        MmppG1Sim.solve(&g, &ctx(2)).unwrap()
    );
}

#[test]
fn customers_are_conserved() {
    for cap in [Some(1usize), Some(4), None] {
        let plan = Plan {
            warmup: 0,
            batches: 5,
            batch_len: 20_000,
            capacity: cap,
            budget: u64::MAX,
        };
        let mut src = clock(0.1, 0.2, 3.0, 0.3, 1);
        let mut svc = Stream::new(1, 2);
        let law = ServiceLaw::exponential(if cap.is_some() { 1.0 } else { 2.0 });
        let res = run_fifo(&mut src, &law, &mut svc, plan, &ctx(0)).unwrap();
        let mut lost = 0;
        for b in &res.batches {
            assert_eq!(b.arrived, plan.batch_len);
            // Every accepted customer of a batch has departed and entered service.
            assert_eq!(b.arrived - b.lost, b.sojourn.count);
            assert_eq!(b.sojourn.count, b.wait.count);
            assert!(b.duration > 0.0);
            lost += b.lost;
        }
        // accepted + lost = arrived (the last arrival only closes the last batch).
        assert_eq!(res.arrivals - 1, res.departures + lost);
        assert_eq!(cap.is_none(), lost == 0);
    }
}

/// Slow modulation: the CIs must still cover the exact value about 95% of the time.
#[test]
fn confidence_intervals_stay_honest_under_slow_modulation() {
    let (phi, lam, mu) = ([0.02, 0.02], [1.4, 0.2], 1.0);
    let r = mmpp_m1_ctmc(phi, lam, mu, 3000);
    let runs = 30;
    let mut covered = 0;
    for seed in 0..runs {
        let p = with(
            &mmpp(phi[0], phi[1], lam[0], lam[1]),
            json!({"mu": mu, "batch_len": 20_000, "warmup": 4000}),
        );
        let m = MmppM1Sim.solve(&p, &ctx(100 + seed)).unwrap().metrics["L"];
        if (m.value - r.l).abs() <= m.half_width.unwrap() {
            covered += 1;
        }
    }
    assert!(covered >= 24, "only {covered}/{runs} CIs cover L = {}", r.l);
}

#[test]
fn refuses_bad_parameters_and_unstable_loads() {
    let c = ctx(0);
    let base = mmpp(0.1, 0.2, 2.0, 0.5);
    assert!(matches!(
        MmppM1Sim.solve(&with(&base, json!({"mu": 1.0})), &c),
        Err(SolveError::Unstable(_))
    ));
    assert!(matches!(
        MmppG1Sim.solve(&with(&base, json!({"service": {"shift": 1.0}})), &c),
        Err(SolveError::Unstable(_))
    ));
    for bad in [
        with(&base, json!({"mu": 2.0, "K": 2.5})),
        with(&base, json!({"mu": 2.0, "K": 0})),
        with(&base, json!({"mu": 2.0, "K": 3, "extra": 1})),
        with(&base, json!({"mu": -2.0, "K": 3})),
        with(&base, json!({"mu": 2.0, "K": 3, "batches": 1})),
        with(&base, json!({"mu": 2.0, "K": 3, "phi1": 0.0})),
    ] {
        assert!(MmppM1kSim.solve(&bad, &c).is_err(), "{bad}");
    }
    for service in [
        json!({}),
        json!({"shift": 0.0}),
        json!({"rate": 0.0}),
        json!({"shift": 0.1, "mixture": [{"weight": 1.0, "shift": 0.1}]}),
        json!({"mixture": []}),
        json!({"mixture": [{"weight": 0.5, "shift": 0.1}]}),
        json!({"mixture": [{"weight": 1.0}]}),
        json!({"mixture": [{"weight": 1.0, "shift": 0.1, "scale": 2}]}),
    ] {
        let p = with(&base, json!({ "service": service }));
        assert!(MmppG1Sim.solve(&p, &c).is_err(), "{service}");
    }
}

#[test]
fn quick_defaults_are_ten_times_cheaper_and_scale_with_modulation() {
    let m = Mmpp::validated(0.1, 0.2, 2.0, 0.5).unwrap();
    let none = Controls {
        warmup: None,
        batches: None,
        batch_len: None,
    };
    let full = run_plan(&m, ("mu", 0.5), &none, None, &ctx(0)).unwrap();
    let quick = run_plan(
        &m,
        ("mu", 0.5),
        &none,
        None,
        &TaskContext::new(0, Fidelity::Quick),
    )
    .unwrap();
    assert_eq!(full.batch_len, 10 * quick.batch_len);
    // Very slow modulation: a batch spans >= 1000 cycles under Full.
    let slow = Mmpp::validated(1e-4, 1e-4, 1.0, 0.2).unwrap();
    let p = run_plan(&slow, ("mu", 0.5), &none, None, &ctx(0)).unwrap();
    assert!(p.batch_len as f64 >= 1000.0 * slow.arrivals_per_cycle());
}

/// MMPP/G/1 with a shifted service law has no brute-force reference here, but
/// Brumelle's law Wv = λ̄(E[S]·W + E[S²]/2) (Wu 3.38 rearranged) must hold.
/// Checked on the per-batch residual, whose CI is much tighter than those of
/// Wv and W (they move together).
#[test]
fn g1_shifted_service_satisfies_brumelle() {
    let (phi, lam) = ([0.1, 0.3], [1.6, 0.2]);
    let law = parse_service(&json!({"shift": 0.3, "rate": 3.0})).unwrap();
    let lbar = out_rate(phi, lam);
    let plan = Plan {
        warmup: 10_000,
        batches: 10,
        batch_len: 200_000,
        capacity: None,
        budget: u64::MAX,
    };
    let mut src = clock(phi[0], phi[1], lam[0], lam[1], 8);
    let mut svc = Stream::new(8, 2);
    let res = run_fifo(&mut src, &law, &mut svc, plan, &ctx(8)).unwrap();
    let wv: Vec<f64> = res
        .batches
        .iter()
        .map(|b| b.area_work / b.duration)
        .collect();
    let resid: Vec<f64> = res
        .batches
        .iter()
        .zip(&wv)
        .map(|(b, v)| v - lbar * (law.mean() * b.wait.mean() + law.second_moment() / 2.0))
        .collect();
    let (m, h) = crate::des::ci95(&resid);
    let (v, _) = crate::des::ci95(&wv);
    assert!(m.abs() <= 3.0 * h, "residual {m} ± {h} (Wv = {v})");
    assert!(h < 0.02 * v, "residual CI ±{h} too wide against Wv = {v}");
    let busy: Vec<f64> = res
        .batches
        .iter()
        .map(|b| 1.0 - b.empty_time / b.duration)
        .collect();
    let (rho, hr) = crate::des::ci95(&busy);
    assert!((rho - lbar * law.mean()).abs() <= 3.0 * hr + 1e-9);
}

#[test]
fn documented_metrics_are_the_reported_ones() {
    let m1 = with(
        &mmpp(0.1, 0.2, 2.0, 0.5),
        json!({"mu": 2.0, "batch_len": 1000}),
    );
    let m1k = with(&m1, json!({"K": 4}));
    let g1 = with(
        &mmpp(0.1, 0.2, 2.0, 0.5),
        json!({"service": {"rate": 2.0}, "batch_len": 1000}),
    );
    let cases: [(&dyn Solver, Value); 3] = [(&MmppM1Sim, m1), (&MmppM1kSim, m1k), (&MmppG1Sim, g1)];
    for (s, p) in cases {
        let out = s.solve(&p, &ctx(1)).unwrap();
        let reported: Vec<&str> = out.metrics.keys().map(String::as_str).collect();
        let mut documented = s.doc().metrics;
        documented.sort();
        assert_eq!(reported, documented, "{}", s.name());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

    /// Bookkeeping invariants for any parameters, load and capacity.
    #[test]
    fn engine_invariants(
        phi1 in 0.01f64..5.0, phi2 in 0.01f64..5.0,
        l1 in 0.0f64..5.0, l2 in 0.01f64..5.0,
        rate in 0.2f64..5.0, shift in 0.0f64..0.5,
        k in proptest::option::of(1usize..20), seed in 0u64..1000,
    ) {
        let plan = Plan { warmup: 0, batches: 3, batch_len: 3000, capacity: k, budget: u64::MAX };
        let mut src = clock(phi1, phi2, l1, l2, seed);
        let mut svc = Stream::new(seed, 2);
        let law = ServiceLaw::mixture(vec![super::engine::ServiceComponent {
            weight: 1.0, shift, rate: Some(rate),
        }]);
        // An unstable infinite queue is fine here: the run is finite.
        let res = run_fifo(&mut src, &law, &mut svc, plan, &ctx(seed)).unwrap();
        let mut lost = 0;
        for b in &res.batches {
            proptest::prop_assert_eq!(b.arrived, plan.batch_len);
            proptest::prop_assert_eq!(b.arrived - b.lost, b.sojourn.count);
            proptest::prop_assert!(b.wait.sum >= 0.0 && b.wait.sum <= b.sojourn.sum);
            let l = b.area_n / b.duration;
            proptest::prop_assert!(l >= 0.0 && l <= k.unwrap_or(usize::MAX) as f64 + 1e-9);
            proptest::prop_assert!(b.empty_time >= 0.0 && b.empty_time <= b.duration * (1.0 + 1e-12));
            proptest::prop_assert!(b.area_work >= -1e-9);
            lost += b.lost;
        }
        proptest::prop_assert_eq!(res.arrivals - 1, res.departures + lost);
    }
}

/// A test source: arrivals at t = 1, 2, …; `internal` hidden events per
/// arrival; no arrival (+inf) after `silent_after` arrivals.
struct Scripted {
    n: u64,
    internal: u64,
    silent_after: u64,
}

impl Scripted {
    fn new(internal: u64, silent_after: u64) -> Self {
        Scripted {
            n: 0,
            internal,
            silent_after,
        }
    }
}

impl crate::traffic::sources::ArrivalSource for Scripted {
    fn next_arrival(&mut self) -> f64 {
        self.n += 1;
        if self.n > self.silent_after {
            f64::INFINITY
        } else {
            self.n as f64
        }
    }
    fn mean_rate(&self) -> f64 {
        1.0
    }
    fn internal_events(&self) -> u64 {
        self.n * self.internal
    }
}

fn small_plan(budget: u64) -> Plan {
    Plan {
        warmup: 0,
        batches: 2,
        batch_len: 500,
        capacity: None,
        budget,
    }
}

/// Issue 11 (long fuzz run, session 8): a source changing phase millions of
/// times per arrival made the cancel check, once per 65,536 arrivals, come
/// minutes apart. The checks now count the source's internal events.
#[test]
fn cancel_and_budget_count_the_sources_internal_events() {
    let law = ServiceLaw::exponential(2.0);
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let cancelled = ctx(0).with_cancel_flag(flag);
    let mut src = Scripted::new(1_000_000, u64::MAX);
    let r = run_fifo(
        &mut src,
        &law,
        &mut Stream::new(0, 2),
        small_plan(u64::MAX),
        &cancelled,
    );
    assert!(matches!(r, Err(SolveError::Cancelled)), "{r:?}");
    assert!(src.n < 10, "checked after {} arrivals", src.n);
    let mut src = Scripted::new(1_000_000, u64::MAX);
    let r = run_fifo(
        &mut src,
        &law,
        &mut Stream::new(0, 2),
        small_plan(5_000_000),
        &ctx(0),
    );
    assert!(r.unwrap_err().to_string().contains("budget"));
    // The same run without hidden events completes.
    let mut src = Scripted::new(0, u64::MAX);
    run_fifo(
        &mut src,
        &law,
        &mut Stream::new(0, 2),
        small_plan(5_000_000),
        &ctx(0),
    )
    .unwrap();
}

/// A source that stops producing arrivals ends the run with an error, not a
/// panic or a loop.
#[test]
fn a_silent_source_is_an_error() {
    let law = ServiceLaw::exponential(2.0);
    for after in [0, 3, 600] {
        let mut src = Scripted::new(0, after);
        let r = run_fifo(
            &mut src,
            &law,
            &mut Stream::new(0, 2),
            small_plan(u64::MAX),
            &ctx(0),
        );
        assert!(
            r.unwrap_err()
                .to_string()
                .contains("stopped producing arrivals"),
            "after {after}"
        );
    }
}

/// The input of the long fuzz run that never ended: an on-phase of 1/64
/// between off-phases of 10⁹ s rounds to zero length after ~10¹⁷ simulated
/// seconds. Refused up front, naming the slow phase.
#[test]
fn unresolvable_simulated_time_is_refused() {
    let p = json!({"K":10,"batch_len":400000,"batches":10,"lambda1":1,"lambda2":0,"mu":1,"phi1":64.0,"phi2":1e-9,"warmup":40000});
    let e = MmppM1kSim.solve(&p, &ctx(0)).unwrap_err().to_string();
    assert!(e.contains("phi2") && e.contains("float resolution"), "{e}");
    // The same source over a resolvable horizon runs.
    let p = json!({"K":10,"batch_len":2000,"batches":10,"lambda1":1,"lambda2":0,"mu":1,"phi1":64.0,"phi2":1e-2,"warmup":100});
    MmppM1kSim.solve(&p, &ctx(0)).unwrap();
}

/// The long fuzz run of session 8: `batches: 1e9` passed the event estimate
/// (batch_len 1) and asked for 80 GB of batch accumulators.
#[test]
fn batches_are_bounded_before_allocation() {
    let p = json!({"K":10,"batch_len":1.0,"batches":1000000000.0,"lambda1":0.6,"lambda2":2.1665848504195946,"mu":1,"phi1":1,"phi2":1,"warmup":20000});
    let e = MmppM1kSim.solve(&p, &ctx(0)).unwrap_err().to_string();
    assert!(e.contains("batches") && e.contains("100000"), "{e}");
}

/// Counts of the intensity-clock source in windows of length t against the
/// MMPP(2) closed forms: mean λ̄t and variance `Mmpp2::var_count(t)` (the
/// count variance is what a wrong time change would get wrong first).
#[test]
fn clock_source_counts_match_the_mmpp2_closed_forms() {
    for (phi1, phi2, l1, l2) in [
        (0.1, 0.2, 3.0, 0.3),
        (0.25, 0.25, 0.2, 0.0),
        (2.0, 0.5, 0.0, 4.0),
    ] {
        counts_match_the_mmpp2(&mut clock(phi1, phi2, l1, l2, 3), [phi1, phi2, l1, l2]);
    }
}

/// Counts of `src` in 40,000 windows of length 20 against the MMPP(2)
/// `[φ1, φ2, λ1, λ2]`: mean λ̄t within 2%, variance `Mmpp2::var_count(t)`
/// within 6%.
fn counts_match_the_mmpp2(src: &mut impl ArrivalSource, [phi1, phi2, l1, l2]: [f64; 4]) {
    let m = crate::traffic::mmpp::Mmpp2::new(phi1, phi2, l1, l2).unwrap();
    let t = 20.0;
    let windows = 40_000usize;
    let mut counts = vec![0u64; windows];
    loop {
        let a = src.next_arrival();
        let w = (a / t) as usize;
        if w >= windows {
            break;
        }
        counts[w] += 1;
    }
    // Integer sums: exact, so the one-pass variance loses nothing.
    let (s1, s2) = counts
        .iter()
        .fold((0u64, 0u64), |(a, b), &c| (a + c, b + c * c));
    let n = windows as f64;
    let mean = s1 as f64 / n;
    let var = (s2 as f64 - s1 as f64 * mean) / (n - 1.0);
    let (em, ev) = (m.mean_rate() * t, m.var_count(t));
    assert!(
        (mean - em).abs() < 0.02 * em,
        "{phi1} {phi2} {l1} {l2}: mean {mean} vs {em}"
    );
    assert!(
        (var - ev).abs() < 0.06 * ev,
        "{phi1} {phi2} {l1} {l2}: var {var} vs {ev}"
    );
}

/// Arrival times replayed from a list (then silent).
struct Replay {
    times: Vec<f64>,
    next: usize,
}

impl crate::traffic::sources::ArrivalSource for Replay {
    fn next_arrival(&mut self) -> f64 {
        self.next += 1;
        self.times
            .get(self.next - 1)
            .copied()
            .unwrap_or(f64::INFINITY)
    }
    fn mean_rate(&self) -> f64 {
        1.0
    }
}

/// The per-batch accumulators of a plain event-calendar FIFO queue (customer
/// records in a queue, the next arrival racing the next departure, the
/// integrals of N and of the unfinished work advanced event by event): the
/// engine before its Lindley form, kept as the oracle of `run_fifo`.
fn calendar_fifo(
    times: &[f64],
    law: &ServiceLaw,
    svc: &mut Stream,
    plan: Plan,
) -> Vec<super::engine::BatchAcc> {
    use std::collections::VecDeque;
    let mut acc = vec![super::engine::BatchAcc::default(); plan.batches as usize];
    let cap = plan.capacity.unwrap_or(usize::MAX);
    // (arrival, service, batch); batch None = warm-up.
    let mut queue: VecDeque<(f64, f64, Option<usize>)> = VecDeque::new();
    let end = plan.warmup + plan.batches as u64 * plan.batch_len;
    let (mut now, mut work, mut t_dep) = (0.0f64, 0.0f64, f64::INFINITY);
    let mut cur: Option<usize> = None;
    let mut batch_start = 0.0;
    let mut i = 0usize;
    fn advance(
        t: f64,
        now: &mut f64,
        work: &mut f64,
        n: usize,
        cur: Option<usize>,
        acc: &mut [super::engine::BatchAcc],
    ) {
        let dt = t - *now;
        if let Some(c) = cur {
            if n == 0 {
                acc[c].empty_time += dt;
            } else {
                acc[c].area_n += n as f64 * dt;
                acc[c].area_work += dt * (*work - 0.5 * dt);
            }
        }
        if n > 0 {
            *work = (*work - dt).max(0.0);
        }
        *now = t;
    }
    loop {
        let t_arr = times[i];
        if t_arr < t_dep {
            advance(t_arr, &mut now, &mut work, queue.len(), cur, &mut acc);
            let idx = i as u64;
            if idx >= plan.warmup && (idx - plan.warmup).is_multiple_of(plan.batch_len) {
                if let Some(c) = cur {
                    acc[c].duration = now - batch_start;
                }
                if idx == end {
                    break;
                }
                cur = Some(((idx - plan.warmup) / plan.batch_len) as usize);
                batch_start = now;
            }
            i += 1;
            if let Some(c) = cur {
                acc[c].arrived += 1;
            }
            if queue.len() >= cap {
                if let Some(c) = cur {
                    acc[c].lost += 1;
                }
            } else {
                let s = law.sample(svc);
                work += s;
                queue.push_back((now, s, cur));
                if queue.len() == 1 {
                    t_dep = now + s;
                    if let Some(c) = cur {
                        acc[c].wait.add(0.0);
                    }
                }
            }
        } else {
            advance(t_dep, &mut now, &mut work, queue.len(), cur, &mut acc);
            let (a, _, b) = queue.pop_front().unwrap();
            if let Some(b) = b {
                acc[b].sojourn.add(now - a);
            }
            match queue.front() {
                Some(&(a, s, b)) => {
                    t_dep = now + s;
                    if let Some(b) = b {
                        acc[b].wait.add(now - a);
                    }
                }
                None => {
                    t_dep = f64::INFINITY;
                    work = 0.0;
                }
            }
        }
    }
    while let Some((a, _, b)) = queue.pop_front() {
        now = t_dep;
        if let Some(b) = b {
            acc[b].sojourn.add(now - a);
        }
        if let Some(&(a, s, b)) = queue.front() {
            t_dep = now + s;
            if let Some(b) = b {
                acc[b].wait.add(now - a);
            }
        }
    }
    acc
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

    /// `run_fifo` (Lindley form) gives the event calendar's batches: counts,
    /// waits and sojourns to the bit, the integrals of N, of the unfinished
    /// work and of the empty time to rounding, at any load (including
    /// overloaded infinite queues, whose ring of departures must grow) and
    /// capacity.
    #[test]
    fn lindley_engine_matches_an_event_calendar(
        phi1 in 0.01f64..5.0, phi2 in 0.01f64..5.0,
        l1 in 0.0f64..5.0, l2 in 0.01f64..5.0,
        rate in 0.2f64..5.0, shift in 0.0f64..0.5,
        k in proptest::option::of(1usize..2000), seed in 0u64..1000,
        warmup in 0u64..500,
    ) {
        let plan = Plan { warmup, batches: 4, batch_len: 2500, capacity: k, budget: u64::MAX };
        let mut src = clock(phi1, phi2, l1, l2, seed);
        let n = (plan.warmup + 4 * plan.batch_len + 1) as usize;
        let times: Vec<f64> = (0..n).map(|_| src.next_arrival()).collect();
        let law = ServiceLaw::mixture(vec![super::engine::ServiceComponent {
            weight: 1.0, shift, rate: Some(rate),
        }]);
        let want = calendar_fifo(&times, &law, &mut Stream::new(seed, 2), plan);
        let mut replay = Replay { times, next: 0 };
        let got = run_fifo(&mut replay, &law, &mut Stream::new(seed, 2), plan, &ctx(seed)).unwrap();
        for (g, w) in got.batches.iter().zip(&want) {
            proptest::prop_assert_eq!(g.arrived, w.arrived);
            proptest::prop_assert_eq!(g.lost, w.lost);
            proptest::prop_assert_eq!(g.duration, w.duration);
            proptest::prop_assert_eq!(g.sojourn.count, w.sojourn.count);
            proptest::prop_assert_eq!(g.sojourn.sum, w.sojourn.sum);
            proptest::prop_assert_eq!(g.wait.count, w.wait.count);
            proptest::prop_assert_eq!(g.wait.sum, w.wait.sum);
            let close = |a: f64, b: f64, scale: f64| (a - b).abs() <= 1e-9 * scale;
            proptest::prop_assert!(close(g.area_n, w.area_n, w.sojourn.sum + w.duration), "area_n {} {}", g.area_n, w.area_n);
            proptest::prop_assert!(close(g.empty_time, w.empty_time, w.duration), "empty {} {}", g.empty_time, w.empty_time);
            proptest::prop_assert!(close(g.area_work, w.area_work, w.area_work.abs() + w.duration), "work {} {}", g.area_work, w.area_work);
        }
    }
}

/// The IPP source as the simulators build it (`Mmpp::ipp`).
fn ipp(phi1: f64, phi2: f64, l1: f64, l2: f64, seed: u64) -> ipp::IppRenewal {
    let m = Mmpp::validated(phi1, phi2, l1, l2).unwrap();
    let (lambda, alpha, beta) = m.ipp().expect("one phase silent");
    ipp::IppRenewal::new(lambda, alpha, beta, Stream::new(seed, 1))
}

/// The hyperexponential gap law against the transform of the time to the
/// next arrival from the active phase, λ(β + s)/(s² + (λ + α + β)s + λβ),
/// including rates far apart (the cancellation-free branches).
#[test]
fn ipp_gap_law_has_the_ipps_transform() {
    for (lambda, alpha, beta) in [
        (0.2, 1.0, 1.0),
        (1.6, 0.25, 0.25),
        (4.0, 0.5, 2.0),
        (1e4, 1e-3, 2e-3),
        (1e-3, 1e3, 5e2),
        (1e-2, 1e-4, 1e3),
    ] {
        let src = ipp::IppRenewal::new(lambda, alpha, beta, Stream::new(1, 1));
        let (r1, r2, p, q) = src.law();
        assert!(r1 > r2 && r2 > 0.0 && p > 0.0 && q > 0.0);
        assert!((p + q - 1.0).abs() < 1e-15, "p {p} q {q}");
        assert!((r1 * r2 / (lambda * beta) - 1.0).abs() < 1e-14);
        for s in [1e-3 * r2, r2, (r1 * r2).sqrt(), r1, 10.0 * r1] {
            let h2 = p * r1 / (s + r1) + q * r2 / (s + r2);
            let exact = lambda * (beta + s) / (s * s + (lambda + alpha + beta) * s + lambda * beta);
            assert!(
                (h2 / exact - 1.0).abs() < 1e-12,
                "λ {lambda} α {alpha} β {beta} s {s}: {h2} vs {exact}"
            );
        }
        // The mean gap is 1/λ̄ = (α + β)/(λβ).
        let mean = p / r1 + q / r2;
        assert!((mean * lambda * beta / (alpha + beta) - 1.0).abs() < 1e-12);
    }
}

/// Counts of the IPP renewal source in windows of length t against the
/// MMPP(2) closed forms (mean and `Mmpp2::var_count(t)`): the stationary
/// start and the gap law together give the IPP's counting process.
#[test]
fn ipp_source_counts_match_the_mmpp2_closed_forms() {
    for (phi1, phi2, l1, l2) in [
        (0.25, 0.25, 0.2, 0.0),
        (1.0, 1.0, 0.2, 0.0),
        (0.05, 0.05, 1.6, 0.0),
        (2.0, 0.5, 0.0, 4.0),
    ] {
        let mut src = ipp(phi1, phi2, l1, l2, 3);
        let m = crate::traffic::mmpp::Mmpp2::new(phi1, phi2, l1, l2).unwrap();
        assert!((src.mean_rate() / m.mean_rate() - 1.0).abs() < 1e-14);
        counts_match_the_mmpp2(&mut src, [phi1, phi2, l1, l2]);
    }
}

/// The time to the first arrival from the stationary phase: with
/// probability φ1/(φ1 + φ2) the source starts silent and waits out the rest
/// of a silent period first, so E[first] = (p/r1 + q/r2) + π_silent/β.
#[test]
fn ipp_first_arrival_starts_from_the_stationary_phase() {
    let (phi1, phi2, l1) = (0.3, 0.1, 2.0);
    let n = 200_000;
    let mut sum = 0.0;
    for k in 0..n {
        sum += ipp(phi1, phi2, l1, 0.0, k).next_arrival();
    }
    let (r1, r2, p, q) = ipp(phi1, phi2, l1, 0.0, 0).law();
    let exact = p / r1 + q / r2 + phi1 / (phi1 + phi2) / phi2;
    // The first arrival's sd is below 3 here; sd of the mean < 0.007.
    assert!(
        (sum / n as f64 - exact).abs() < 0.03,
        "{} vs {exact}",
        sum / n as f64
    );
}

/// The simulators with an IPP source (the shipped manifests' case) against
/// the brute-force (level, phase) chains.
#[test]
fn ipp_cases_match_brute_force_ctmcs() {
    let (phi, lam, mu) = ([0.25, 0.25], [1.6, 0.0], 1.0);
    let r = mmpp_m1_ctmc(phi, lam, mu, 1500);
    let base = mmpp(phi[0], phi[1], lam[0], lam[1]);
    let p = with(
        &base,
        json!({"mu": mu, "batch_len": 300_000, "warmup": 20_000}),
    );
    let out = MmppM1Sim.solve(&p, &ctx(12)).unwrap();
    check(&out, "L", r.l, 0.1);
    check(&out, "P_empty", r.p_empty, 0.03);
    let k = 10usize;
    let r = mmpp_m1k_ctmc(phi, [1.9, 0.0], mu, k);
    let p = with(
        &mmpp(phi[0], phi[1], 1.9, 0.0),
        json!({"mu": mu, "K": k, "batch_len": 200_000, "warmup": 10_000}),
    );
    let out = MmppM1kSim.solve(&p, &ctx(13)).unwrap();
    check(&out, "L", r.l, 0.03);
    check(&out, "P_block", r.p_block, 0.05);
    check(&out, "throughput", r.throughput, 0.02);
    check(&out, "W", r.w, 0.03);
    // Silent phase 1 (λ1 = 0): the other branch of `Mmpp::ipp`.
    let r = mmpp_m1k_ctmc([0.5, 2.0], [0.0, 4.0], 2.0, 6);
    let p = with(
        &mmpp(0.5, 2.0, 0.0, 4.0),
        json!({"mu": 2.0, "K": 6, "batch_len": 200_000, "warmup": 10_000}),
    );
    let out = MmppM1kSim.solve(&p, &ctx(14)).unwrap();
    check(&out, "L", r.l, 0.03);
    check(&out, "P_block", r.p_block, 0.05);
}
