//! `multicluster.sim` checks (issue 22): zero-load latency against the
//! pipeline's exact value and the catalogue's formula, the concentrator-
//! limited saturation bound, conservation, no deadlock, determinism, the
//! store-and-forward variant, ch.5 per-cluster metrics, bad input and a
//! snapshot of a tiny run.

use super::*;
use crate::{Fidelity, Registry};
use serde_json::json;

fn ctx(seed: u64) -> TaskContext {
    TaskContext::new(seed, Fidelity::Quick)
}

fn solve(p: serde_json::Value) -> Outcome {
    MulticlusterSim.solve(&p, &ctx(3)).unwrap()
}

fn get(o: &Outcome, k: &str) -> f64 {
    o.metrics.get(k).unwrap_or_else(|| panic!("no {k}")).value
}

/// Fig 4.5(a), L_f = 512 (the parameter defaults): t_A = 0.65, t_E = t_I =
/// 0.05 + 512/600.
fn fig45a(extra: serde_json::Value) -> serde_json::Value {
    let mut p = json!({
        "m": 4, "n": 3, "C": 16, "omega": 64, "Lf": 512, "phi1": 0.07, "phi2": 0.07,
        "xi": 0.5, "eta_in": 0.6, "source": "poisson",
        "warmup": 100, "batches": 5, "batch_len": 300,
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

#[test]
fn zero_load_latency_is_the_pipeline_and_matches_the_catalogue_formula() {
    let (t_a, t_e) = (0.65, 0.05 + 512.0 / 600.0);
    let cpf = 8.0;
    let dt = t_a / cpf;
    // Intra only (ξ = 0): (ω − 1 + h)·t_A, plus < 1 cycle of rounding per
    // hop and the injection cycle.
    let o = solve(fig45a(json!({"xi": 0.0, "lambda1": 2e-5})));
    let (lat, h) = (get(&o, "latency"), get(&o, "hops"));
    let exact = (63.0 + h) * t_a;
    assert!(
        lat >= exact - 1e-9 && lat <= exact + (h + 1.0) * dt + 0.005 * lat,
        "intra {lat} vs {exact}"
    );
    // Inter only (ξ = 1): h counts the two one-cycle C/D attach channels.
    let o = solve(fig45a(json!({"xi": 1.0, "lambda1": 2e-5})));
    let (lat, h) = (get(&o, "latency"), get(&o, "hops"));
    let exact = (63.0 + h - 2.0) * t_e + 2.0 * dt;
    assert!(
        lat >= exact - 1e-9 && lat <= exact + (h + 1.0) * dt + 0.005 * lat,
        "inter {lat} vs {exact}"
    );
    assert!(get(&o, "W_c") < 0.05 * lat && get(&o, "W_d") < 0.05 * lat);
    // Catalogue §3.2 "Ref": (1−ξ)(ω t_A + τ_in) + ξ(ω t_E + τ_out) ≈ 55.5 at
    // ξ = 0.5, η_in = 0.6, with τ = mean channels × t from (4.6)/(4.7). The
    // simulated message's tail trails its header by (ω − 1) flit times, so
    // the pipeline is one flit time shorter than the formula's ω·t.
    let o = solve(fig45a(json!({"lambda1": 2e-5})));
    let lat = get(&o, "latency");
    let w: Vec<f64> = [1.0, 6.0, 8.0]
        .iter()
        .zip(1..)
        .map(|(s, j)| s * 0.6f64.powi(j))
        .collect();
    let d_in =
        2.0 * w.iter().zip(1..).map(|(x, j)| x * j as f64).sum::<f64>() / w.iter().sum::<f64>();
    let pq = (1.0 + 12.0 + 24.0) / 15.0; // E[p] = E[q] by (4.6)
    let formula = 0.5 * (64.0 * t_a + d_in * t_a) + 0.5 * (64.0 * t_e + 4.0 * pq * t_e);
    assert!((formula - 55.5).abs() < 0.3, "{formula}");
    assert!(
        ((lat - formula) / formula).abs() < 0.03,
        "{lat} vs {formula}"
    );
    let (li, lo) = (get(&o, "latency_in"), get(&o, "latency_out"));
    assert!(li < lat && lat < lo);
}

#[test]
fn saturation_beyond_the_concentrator_bound() {
    // λ̄* = 1/(N ξ ω t_I) = 0.002162, λ_s1* = 2 λ̄* = 0.00432 (catalogue).
    let star: f64 = 2.0 / (16.0 * 0.5 * 64.0 * (0.05 + 512.0 / 600.0));
    assert!((star - 0.00432).abs() < 1e-5);
    // Below the bound the run is steady; the simulated system saturates
    // earlier than the bound (wormhole contention in the ICN stalls the
    // concentrators: docs/models/multicluster.md, "Simulation"), so the
    // steady point is taken well below it.
    let o = solve(fig45a(json!({"lambda1": 0.25 * star})));
    assert_eq!(o.status, crate::Status::Ok, "{:?}", o.note);
    assert!(get(&o, "W_c") > 0.0);
    let o = solve(fig45a(json!({"lambda1": 1.4 * star})));
    assert_eq!(o.status, crate::Status::Saturated, "{:?}", o.note);
}

/// Fig 4.5(a) at λ = 0.02 (far past saturation) with `extra`, run for
/// `cycles` cycles with no backlog limit: the run ends saturated, flits are
/// conserved (injected = delivered + relayed + in the network), it moved
/// traffic and built a backlog (no deadlock), and a second run with the same
/// seed is identical.
fn overloaded(extra: serde_json::Value, cycles: u64) -> Counters {
    let mut p = fig45a(json!({"lambda1": 0.02, "warmup": 0, "batches": 2, "batch_len": 1000000}));
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    let mut task = validate(&p, &ctx(5)).unwrap();
    task.sc.max_cycles = cycles;
    task.sc.backlog_limit = u64::MAX;
    let (a, _) = simulate(&task, &ctx(5)).unwrap();
    assert!(matches!(a.finish, Finish::Saturated(_)), "{:?}", a.finish);
    assert_eq!(
        a.flits_injected,
        a.flits_delivered + a.flits_relayed + a.flits_in_network
    );
    assert!(a.flits_delivered > 10_000 && a.msgs_waiting > 100);
    let (b, _) = simulate(&task, &ctx(5)).unwrap();
    assert_eq!(
        (a.flits_delivered, a.msgs_generated, &a.relay_max_queue),
        (b.flits_delivered, b.msgs_generated, &b.relay_max_queue)
    );
    a
}

#[test]
fn conservation_no_deadlock_and_determinism_under_overload() {
    let a = overloaded(json!({}), 300_000);
    assert!(a.msgs_delivered <= a.msgs_generated && a.msgs_delivered * 64 <= a.flits_delivered);
    // The solver: same seed, same outcome.
    let q = fig45a(json!({"lambda1": 0.002}));
    let r = Registry::with_all();
    let s = r.get("multicluster.sim").unwrap();
    let o1 = s.solve(&q, &ctx(9)).unwrap();
    let o2 = s.solve(&q, &ctx(9)).unwrap();
    assert_eq!(
        serde_json::to_string(&o1).unwrap(),
        serde_json::to_string(&o2).unwrap()
    );
}

#[test]
fn store_and_forward_relays_add_a_message_time_each() {
    let t_e = 0.05 + 512.0 / 600.0;
    let ct = get(
        &solve(fig45a(json!({"xi": 1.0, "lambda1": 2e-5}))),
        "latency",
    );
    let sf = get(
        &solve(fig45a(
            json!({"xi": 1.0, "lambda1": 2e-5, "relay": "store_forward"}),
        )),
        "latency",
    );
    let extra = 2.0 * 63.0 * t_e;
    assert!(
        ((sf - ct) - extra).abs() < 0.03 * extra,
        "{} vs {extra}",
        sf - ct
    );
}

#[test]
fn ch5_heterogeneous_clusters_report_per_cluster_metrics() {
    let net =
        |b: f64, n: f64, s: f64| json!({"bandwidth": b, "network_latency": n, "switch_latency": s});
    let mut clusters = Vec::new();
    for (n, phi, acn) in [
        (1, 0.1, net(600.0, 0.04, 0.06)),
        (2, 0.15, net(400.0, 0.1, 0.05)),
    ] {
        for _ in 0..4 {
            clusters.push(json!({"m": 8, "n": n, "user_level": phi, "acn": acn}));
        }
    }
    let o = solve(json!({
        "clusters": clusters, "m_c": 8, "omega": 32, "Lf": 256,
        "phi1": 0.08, "phi2": 0.06, "lambda1": 0.0005,
        "warmup": 100, "batches": 4, "batch_len": 300,
    }));
    assert_eq!(o.status, crate::Status::Ok);
    for i in 0..8 {
        assert!(get(&o, &format!("latency_{i}")) > 0.0);
    }
    // Bigger clusters (slower ACN, longer intra paths) have longer latency.
    assert!(get(&o, "latency_7") > get(&o, "latency_0"));
}

#[test]
fn bad_input_names_the_field() {
    let err = |p: serde_json::Value, field: &str| {
        let e = MulticlusterSim.solve(&p, &ctx(1)).unwrap_err().to_string();
        assert!(e.contains(field), "{e} should name {field}");
    };
    err(
        fig45a(json!({"lambda1": 0.001, "channels": "derived"})),
        "channels",
    );
    err(
        fig45a(json!({"lambda1": 0.001, "relay": "wormhole"})),
        "relay",
    );
    err(
        fig45a(json!({"lambda1": 0.001, "cycles_per_flit": 0})),
        "cycles_per_flit",
    );
    err(fig45a(json!({"lambda1": 0.001, "C": 12})), "C");
    err(fig45a(json!({"lambda1": 0.001, "xi": 1.5})), "xi");
    err(fig45a(json!({"lambda1": 0.0})), "lambda1");
    err(fig45a(json!({"lambda1": 0.001, "buffer": 0})), "buffer");
    err(fig45a(json!({"lambda1": 0.001, "loads": []})), "loads");
    err(
        fig45a(json!({"lambda1": 0.001, "loads": [0.001, "x"]})),
        "loads",
    );
}

#[test]
fn loads_select_the_simulated_points() {
    let o = solve(fig45a(json!({"lambda1": 0.001, "loads": [0.0005, 0.002]})));
    assert_eq!(o.status, crate::Status::Undefined);
    assert!(o.metrics.is_empty());
    let a = solve(fig45a(json!({"lambda1": 0.001, "loads": [0.0005, 0.001]})));
    let b = solve(fig45a(json!({"lambda1": 0.001})));
    assert_eq!(a.status, crate::Status::Ok);
    assert_eq!(get(&a, "latency").to_bits(), get(&b, "latency").to_bits());
}

#[test]
fn icn_utilisations_conserve_the_concentrator_load() {
    // U_c = U_d = λ_C ω t_I with λ_C = N ξ λ̄ (λ̄ = λ_s1/2 at φ_s1 = φ_s2): every
    // inter-cluster message crosses its C's link and its D's link once.
    let (lam, t_i) = (0.001, 0.05 + 512.0 / 600.0);
    let o = solve(fig45a(json!({"lambda1": lam, "batch_len": 1000})));
    let expect = 16.0 * 0.5 * lam / 2.0 * 64.0 * t_i;
    for k in ["U_c", "U_d"] {
        let u = get(&o, k);
        assert!((u - expect).abs() < 0.1 * expect, "{k} {u} vs {expect}");
    }
    assert!(get(&o, "U_icn_max") >= 0.9 * expect && get(&o, "U_max") < 1.0);
}

#[test]
fn whole_message_buffers_shorten_the_concentrator_wait() {
    // Diagnostic `buffer`: with ω-flit buffers a message blocked in the ICN
    // no longer holds C's server all the way back (docs "Simulation").
    let p = |b: u32| fig45a(json!({"lambda1": 0.0015, "buffer": b, "batch_len": 800}));
    let (w2, w64) = (get(&solve(p(2)), "W_c"), get(&solve(p(64)), "W_c"));
    assert!(w64 < 0.8 * w2, "{w64} vs {w2}");
}

/// A tiny run, every metric to the bit: any change of behaviour (routing,
/// draws, timing) fails it. To update after an intended change, run this
/// test with --nocapture, paste the printed table, bump `version()`.
#[test]
fn snapshot_tiny_run() {
    let o = MulticlusterSim
        .solve(
            &json!({
                "m": 4, "n": 2, "C": 4, "omega": 8, "Lf": 512, "lambda1": 0.01,
                "xi": 0.5, "eta_in": 0.8, "warmup": 50, "batches": 2, "batch_len": 60,
                "cycles_per_flit": 2,
            }),
            &ctx(11),
        )
        .unwrap();
    let got: Vec<(String, f64)> = o
        .metrics
        .iter()
        .map(|(k, m)| (k.clone(), m.value))
        .collect();
    let table: String = got
        .iter()
        .map(|(k, v)| format!("        (\"{k}\", {v:?}),\n"))
        .collect();
    let expected: &[(&str, f64)] = &[
        ("Q_c_max", 1.0),
        ("Q_d_max", 1.0),
        ("U_c", 0.15316002961387265),
        ("U_d", 0.15287744653340424),
        ("U_icn_max", 0.0),
        ("U_max", 0.19554749168413263),
        ("W_c", 0.3732575757575758),
        ("W_d", 0.0),
        ("W_in", 0.0),
        ("W_out", 0.24099330357142856),
        ("cycle_length", 0.325),
        ("cycles", 3670.0),
        ("flits", 1362.0),
        ("hops", 5.966666666666667),
        ("latency", 11.326250000000002),
        ("latency_in", 7.231714285714286),
        ("latency_out", 14.572767857142857),
        ("net_in", 7.231714285714286),
        ("net_out", 13.958516977813854),
        ("network_latency", 11.193541666666668),
        ("stepped_cycles", 3020.0),
        ("throughput", 0.03742112607909365),
    ];
    let same = got.len() == expected.len()
        && got
            .iter()
            .zip(expected)
            .all(|((k, v), (ek, ev))| k == ek && v.to_bits() == ev.to_bits());
    assert!(same, "snapshot changed; new table:\n{table}");
}

/// Issue 32: inputs that aborted on a failed allocation end at once:
/// sources far past saturation are `saturated` without a run, a system or
/// buffer too large to fit is refused naming the parameter.
#[test]
fn far_past_saturation_and_oversized_inputs_end_at_once() {
    for p in [
        json!({"lambda1": 0.0005, "lambda2": 1e308}),
        json!({"lambda1": 0.0005, "lambda2": 1e9}),
        json!({"lambda1": 1e308}),
        json!({"lambda1": 1e9, "source": "poisson"}),
        // 1.01 × the concentrator bound of Fig 4.5(a) (λ_s1 = 0.00432).
        fig45a(json!({"lambda1": 0.00437})),
    ] {
        let o = MulticlusterSim.solve(&p, &ctx(1)).unwrap();
        assert_eq!(o.status, crate::Status::Saturated, "{p}");
        assert!(o.note.as_deref().unwrap().contains(">= 1"), "{:?}", o.note);
    }
    // Just below the bound the point is simulated (and saturates by its
    // backlog: head-of-line blocking, docs "Simulation").
    let task = validate(&fig45a(json!({"lambda1": 0.00427})), &ctx(1)).unwrap();
    assert!(task.overload.is_none());
    for (p, field) in [
        (
            json!({"m": 16, "n": 5, "C": 16, "lambda1": 1e-7, "buffer": 4096}),
            "buffer",
        ),
        (json!({"m": 16, "n": 5, "C": 16, "lambda1": 1e-7}), "`m`"),
    ] {
        let e = MulticlusterSim.solve(&p, &ctx(1)).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("GiB"), "{e}");
    }
}

/// The estimate of a parameter set (`state_bytes` of its validated task).
fn estimate(p: &serde_json::Value) -> u64 {
    let task = validate(p, &ctx(1)).unwrap();
    let mc = topology(&task).unwrap();
    crate::engines::flit::state_bytes(&task.sc, &mc, &mc, &mc).total()
}

/// VmHWM (peak resident set) of this process, bytes.
fn peak_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|x| x.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// Issue 32: the largest accepted inputs (by the estimate, over ch.4 trees
/// and buffer sizes) run in a child process whose peak resident set stays
/// under the stated bound `MAX_STATE_BYTES` plus the process's own 64 MiB.
/// The child runs a short, light run (the largest systems' cost is their
/// arrays: the message pool's share of the estimate is a worst case that a
/// short run does not reach).
#[test]
fn largest_accepted_inputs_stay_under_the_memory_bound() {
    const CHILD: &str = "REPRO_MC_MEMORY_CHILD";
    let run_len = json!({"warmup": 0, "batches": 2, "batch_len": 20, "source": "poisson"});
    if let Ok(p) = std::env::var(CHILD) {
        let mut p: serde_json::Value = serde_json::from_str(&p).unwrap();
        for (k, v) in run_len.as_object().unwrap() {
            p[k] = v.clone();
        }
        let o = MulticlusterSim
            .solve(&p, &TaskContext::new(1, Fidelity::Full))
            .unwrap();
        println!("CHILD-RESULT {:?} {}", o.status, peak_rss());
        return;
    }
    if !cfg!(target_os = "linux") {
        return;
    }
    // Candidates: ch.4 systems (m, n, C) at buffer 2, and the default system
    // with its largest accepted buffer (bisection on the estimate).
    let mut best: Vec<(u64, serde_json::Value)> = Vec::new();
    let mut largest = (0u64, json!(null));
    for (m, n, c) in [
        (4, 12, 16),
        (4, 13, 16),
        (8, 6, 8),
        (8, 7, 8),
        (16, 4, 16),
        (4, 10, 64),
        (4, 11, 64),
    ] {
        let p = json!({"m": m, "n": n, "C": c, "lambda1": 1e-6});
        let e = estimate(&p);
        if e <= MAX_STATE_BYTES && e > largest.0 {
            largest = (e, p);
        }
    }
    assert!(largest.0 > MAX_STATE_BYTES / 2, "{largest:?}");
    best.push(largest);
    let with_buffer = |b: u64| fig45a(json!({"lambda1": 0.0005, "buffer": b}));
    let (mut lo, mut hi) = (2u64, 4096u64);
    assert!(estimate(&with_buffer(hi)) <= MAX_STATE_BYTES || hi > lo);
    if estimate(&with_buffer(hi)) <= MAX_STATE_BYTES {
        lo = hi;
    } else {
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if estimate(&with_buffer(mid)) <= MAX_STATE_BYTES {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    best.push((estimate(&with_buffer(lo)), with_buffer(lo)));
    for (est, p) in best {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "systems::fattree::sim::tests::largest_accepted_inputs_stay_under_the_memory_bound",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, p.to_string())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.split_once("CHILD-RESULT").map(|x| x.1))
            .unwrap_or_else(|| {
                panic!(
                    "child failed: {text} {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        let rss: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        println!("{p}: estimate {est} B, peak RSS {rss} B ({line})");
        assert!(line.contains("Ok") || line.contains("Saturated"), "{line}");
        assert!(rss <= MAX_STATE_BYTES + (64 << 20), "{p}: peak RSS {rss} B");
        assert!(
            rss <= est + (64 << 20),
            "{p}: peak RSS {rss} B over its estimate {est}"
        );
    }
}

/// `cd_queue: output` at zero load is the same pipeline as `fifo`: the lanes
/// have the ICN path's channel count and flit time.
#[test]
fn output_variant_has_the_fifo_zero_load_latency() {
    for xi in [1.0, 0.5] {
        let f = solve(fig45a(json!({"xi": xi, "lambda1": 2e-5})));
        let o = solve(fig45a(
            json!({"xi": xi, "lambda1": 2e-5, "cd_queue": "output"}),
        ));
        let (lf, lo) = (get(&f, "latency"), get(&o, "latency"));
        assert!(
            (lf - lo).abs() < 0.01 * lf,
            "xi {xi}: fifo {lf} output {lo}"
        );
        let (hf, ho) = (get(&f, "hops"), get(&o, "hops"));
        assert!((hf - ho).abs() < 0.05 * hf, "hops {hf} vs {ho}");
        // The parts add up: latency_out = W_out + W_c + W_d + net_out.
        let parts = ["W_out", "W_c", "W_d", "net_out"].map(|k| get(&o, k));
        let sum: f64 = parts.iter().sum();
        assert!(
            (sum - get(&o, "latency_out")).abs() < 1e-6 * sum,
            "{parts:?}"
        );
    }
}

/// With Poisson sources at ξ = 1 the concentrator of `output` is an M/D/1
/// queue fed by the cluster's N·λ̄ messages and serving ω·t_cs^I each, and
/// the dispatcher receives the same rate from 15 such concentrators: both
/// waits against ρS/(2(1 − ρ)). The arrivals at C are Poisson delayed by
/// the ECN ascent and those at D a superposition of 15 thinned departure
/// streams, so the check allows 10 % besides twice the CI. `fifo` at the
/// same load: a dispatcher that never waits and a concentrator that waits
/// longer (head-of-line blocking in the ICN).
#[test]
fn output_concentrator_and_dispatcher_are_md1_queues() {
    let t_i = 0.05 + 512.0 / 600.0;
    let s = 64.0 * t_i;
    let rho: f64 = 0.45;
    // ρ = N ξ λ̄ S with N = 16, ξ = 1, Poisson at the mean λ̄.
    let lam = rho / (16.0 * s);
    let p = |cd: &str| {
        fig45a(json!({"xi": 1.0, "lambda1": 2.0 * lam, "cd_queue": cd,
            "warmup": 1000, "batches": 10, "batch_len": 3000}))
    };
    let o = solve(p("output"));
    let md1 = rho * s / (2.0 * (1.0 - rho));
    for k in ["W_c", "W_d"] {
        let m = &o.metrics[k];
        let (w, hw) = (m.value, m.half_width.unwrap());
        assert!(
            (w - md1).abs() <= 2.0 * hw + 0.1 * md1,
            "{k} {w} ± {hw} vs M/D/1 {md1}"
        );
    }
    let f = solve(p("fifo"));
    assert!(get(&f, "W_d") < 0.05 * md1, "fifo W_d {}", get(&f, "W_d"));
    assert!(
        get(&f, "W_c") > get(&o, "W_c"),
        "fifo W_c {}",
        get(&f, "W_c")
    );
}

/// Ch.5's link speeds (Table 5.2: ECN Net.2, t_cs^E = 0.01 + L_f/800, slower
/// than the ICN Net.1, t_cs^I = 0.005 + L_f/1000, by 1.257 at L_f = 512) on
/// Fig 4.5(a)'s clusters, Poisson sources, ξ = 1, ρ_D = 0.45: the
/// dispatcher of `output` is the model's W_d server, an M/D/1 queue serving
/// ω·t_cs^I per message, however slow the ECN after it (its channels into
/// the ECN feed buffers of a whole message; docs/models/multicluster.md,
/// "The `output` variant"). Arrivals at D are a superposition of 15
/// concentrators' departures, so 10 % besides twice the CI, as above.
#[test]
fn output_dispatcher_is_an_md1_queue_before_a_slower_ecn() {
    let t_i = 0.005 + 512.0 / 1000.0;
    let s = 64.0 * t_i;
    let rho: f64 = 0.45;
    let lam = rho / (16.0 * s);
    let o = solve(fig45a(json!({
        "xi": 1.0, "lambda1": 2.0 * lam, "cd_queue": "output",
        "icn": {"bandwidth": 1000, "network_latency": 0.01, "switch_latency": 0.005},
        "ecn": {"bandwidth": 800, "network_latency": 0.01, "switch_latency": 0.01},
        "warmup": 1000, "batches": 10, "batch_len": 3000,
    })));
    assert_eq!(o.status, crate::Status::Ok, "{:?}", o.note);
    let md1 = rho * s / (2.0 * (1.0 - rho));
    let m = &o.metrics["W_d"];
    let (w, hw) = (m.value, m.half_width.unwrap());
    assert!(
        (w - md1).abs() <= 2.0 * hw + 0.1 * md1,
        "W_d {w} ± {hw} vs M/D/1 {md1}"
    );
    // The ICN links into D carry λ_D·ω·t_cs^I.
    let u = get(&o, "U_d");
    assert!((u - rho).abs() < 0.1 * rho, "U_d {u} vs {rho}");
}

/// `output` under overload: flits conserved, no deadlock, deterministic;
/// below the concentrator bound where `fifo` saturates (0.8 of it), the
/// output-queued system is steady and its C/D links carry λ_C·ω·t_cs^I.
#[test]
fn output_variant_conserves_and_reaches_past_the_fifo_saturation() {
    overloaded(json!({"cd_queue": "output"}), 200_000);
    let star: f64 = 2.0 / (16.0 * 0.5 * 64.0 * (0.05 + 512.0 / 600.0));
    let q = |cd: &str| fig45a(json!({"lambda1": 0.8 * star, "cd_queue": cd, "batch_len": 600}));
    let f = solve(q("fifo"));
    assert_eq!(f.status, crate::Status::Saturated, "{:?}", f.note);
    let o = solve(q("output"));
    assert_eq!(o.status, crate::Status::Ok, "{:?}", o.note);
    let expect = 16.0 * 0.5 * 0.8 * star / 2.0 * 64.0 * (0.05 + 512.0 / 600.0);
    for k in ["U_c", "U_d"] {
        let u = get(&o, k);
        assert!((u - expect).abs() < 0.1 * expect, "{k} {u} vs {expect}");
    }
    assert!(get(&o, "W_d") > 0.1 * get(&o, "W_c"));
}

/// The stop rule: a completed run whose latency half-width exceeds
/// `max_rel_half_width` of its mean is `undefined` with the numbers in its
/// note; below the bound the outcome is the run's own, unchanged.
#[test]
fn stop_rule_marks_an_imprecise_point_undefined() {
    let plain = solve(fig45a(json!({"lambda1": 0.0005})));
    assert_eq!(plain.status, crate::Status::Ok);
    let (l, hw) = (
        get(&plain, "latency"),
        plain.metrics["latency"].half_width.unwrap(),
    );
    assert!(hw > 0.0);
    let loose = solve(fig45a(
        json!({"lambda1": 0.0005, "max_rel_half_width": 2.0 * hw / l}),
    ));
    assert_eq!(loose, plain);
    let tight = solve(fig45a(
        json!({"lambda1": 0.0005, "max_rel_half_width": 0.5 * hw / l}),
    ));
    assert_eq!(tight.status, crate::Status::Undefined);
    assert!(tight.metrics.is_empty());
    let note = tight.note.unwrap();
    assert!(
        note.contains("not a steady point") && note.contains(&format!("{l:.4}")),
        "{note}"
    );
    for bad in [json!(0.0), json!(-1.0), json!("x")] {
        let p = fig45a(json!({"lambda1": 0.0005, "max_rel_half_width": bad}));
        assert!(MulticlusterSim.solve(&p, &ctx(3)).is_err());
    }
}

/// Legs advanced per message (engines/flit/worm.rs) and the cycles in which
/// nothing is due jumped over, against every flit moved one by one in every
/// cycle, and against the legs without the jumps: every counter of the run
/// (the stepped cycles too) equal, bit for bit, over both C/D
/// variants, cut-through and store-and-forward relays, MMPP and Poisson
/// sources, low load to past saturation, short messages (ω below and at
/// the buffer), one-flit and whole-message buffers, a clock of one cycle
/// per flit, and a ch.5 system of heterogeneous clusters in both variants
/// (`output`: the dispatcher's deeper buffers into a slower ECN).
#[test]
fn worms_advanced_per_message_change_no_counter() {
    use crate::engines::flit::Mode;
    let net =
        |b: f64, n: f64, s: f64| json!({"bandwidth": b, "network_latency": n, "switch_latency": s});
    let mut ch5 = Vec::new();
    for (n, phi, acn) in [
        (1, 0.1, net(600.0, 0.04, 0.06)),
        (2, 0.15, net(400.0, 0.1, 0.05)),
    ] {
        for _ in 0..4 {
            ch5.push(json!({"m": 8, "n": n, "user_level": phi, "acn": acn}));
        }
    }
    let cases = [
        fig45a(json!({"lambda1": 0.0005})),
        fig45a(json!({"lambda1": 0.0015, "source": "mmpp", "lambda2": 0.0})),
        fig45a(json!({"lambda1": 0.0018, "cd_queue": "output"})),
        fig45a(json!({"lambda1": 0.0025, "cd_queue": "output", "source": "mmpp", "lambda2": 0.0})),
        fig45a(json!({"lambda1": 0.0022})),
        fig45a(json!({"lambda1": 0.0012, "relay": "store_forward"})),
        fig45a(json!({"lambda1": 0.0012, "relay": "store_forward", "cd_queue": "output"})),
        fig45a(json!({"lambda1": 0.001, "omega": 2, "buffer": 2})),
        fig45a(json!({"lambda1": 0.002, "omega": 3, "buffer": 1})),
        fig45a(json!({"lambda1": 0.0015, "buffer": 64})),
        fig45a(json!({"lambda1": 0.0008, "Lf": 1024, "cycles_per_flit": 1})),
        fig45a(json!({"lambda1": 0.0012, "xi": 0.2, "cycles_per_flit": 3, "warmup": 0})),
        json!({
            "clusters": ch5, "m_c": 8, "omega": 32, "Lf": 256,
            "phi1": 0.08, "phi2": 0.06, "lambda1": 0.0005,
            "warmup": 100, "batches": 4, "batch_len": 300,
        }),
        json!({
            "clusters": ch5, "m_c": 8, "omega": 32, "Lf": 256, "cd_queue": "output",
            "phi1": 0.08, "phi2": 0.06, "lambda1": 0.0009,
            "warmup": 100, "batches": 4, "batch_len": 300,
        }),
    ];
    for p in cases {
        let task = validate(&p, &ctx(7)).unwrap();
        let mc = topology(&task).unwrap();
        let a = crate::engines::flit::run(&task.sc, &mc, &mc, &mc, &mc, &ctx(7)).unwrap();
        let flitwise = |mode| {
            crate::engines::flit::run_flitwise(&task.sc, &mc, &mc, &mc, &mc, &ctx(7), mode).unwrap()
        };
        let b = flitwise(None);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{p}");
        // Legs advanced per message, every cycle stepped.
        let b = flitwise(Some(Mode {
            jumps: false,
            ..Mode::DEFAULT
        }));
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{p} (cycle jumps)");
        // Legs advanced per message once their header lands, none as a
        // train (worm::Train).
        let b = flitwise(Some(Mode {
            trains: false,
            ..Mode::DEFAULT
        }));
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{p} (no trains)");
    }
}

/// Issue 32 item 5: `phi1: 1e308` blamed `lambda1` ("mean rate too low"):
/// phase 1, the one with lambda1, is then almost never visited, so the
/// mean rate vanishes whatever lambda1 is. It names `phi1` and the four
/// source values.
#[test]
fn a_vanishing_mean_rate_names_the_phase_that_causes_it() {
    let run = |extra: serde_json::Value| match MulticlusterSim.solve(&fig45a(extra), &ctx(1)) {
        Err(SolveError::InvalidParam { param, rule }) => (param, rule),
        other => panic!("{other:?}"),
    };
    for phi1 in [1e308, 1e12] {
        let (param, rule) = run(json!({"lambda1": 0.0005, "phi1": phi1, "source": "mmpp"}));
        assert_eq!(param, "phi1", "{rule}");
        let want = format!("phi1 = {}", crate::params::show(phi1));
        assert!(
            rule.contains(&want) && rule.contains("lambda1 = 0.0005") && rule.contains("1e13"),
            "{rule}"
        );
    }
    // A plainly low rate still names lambda1.
    let (param, _) = run(json!({"lambda1": 1e-300}));
    assert_eq!(param, "lambda1");
}
