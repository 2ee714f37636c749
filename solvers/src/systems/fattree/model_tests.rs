//! Tests of `multicluster.model`: zero-load latency against the catalogue's
//! formula, Poisson limits, concentrator-bound saturation, variants.

use super::model::{locality_probs, solve};
use super::params::*;
use super::params_tests::{config_i, config_ii};
use serde_json::{json, Value};

fn run(v: Value) -> Result<super::model::ModelResult, String> {
    solve(&parse_system(&v).unwrap())
        .unwrap()
        .map_err(|s| s.why)
}

#[test]
fn locality_probs_reduce_to_4_6_at_eta_1() {
    let t = Tree { m: 4, n: 3 };
    let p = locality_probs(&t, 1.0);
    let q = t.distance_probs();
    for j in 1..=3 {
        assert!((p[j] - q[j]).abs() < 1e-15);
    }
    assert_eq!(q[1], 1.0 / 15.0);
}

/// Catalogue §3.2 Ref: zero-load latency (1−ξ)(T_in + τ_in) + ξ(T_out + τ_out)
/// with every wait 0, written out from (4.14), (4.26), (4.27), (4.28).
// Indices are the distance classes j, p, q of the equations.
#[allow(clippy::needless_range_loop)]
fn zero_load_ch4(m: u32, n: u32, c_tree: Tree, xi: f64, eta: f64, omega: f64, lf: f64) -> f64 {
    let (a_cn, a_cs) = (0.5 * 0.02 + lf / 800.0, 0.01 + lf / 800.0);
    let (e_cn, e_cs) = (0.5 * 0.1 + lf / 600.0, 0.05 + lf / 600.0);
    let t = Tree { m, n };
    let sizes = t.class_sizes();
    let w: Vec<f64> = (0..=n as usize)
        .map(|j| sizes[j] as f64 * eta.powi(j as i32))
        .collect();
    let alpha: f64 = w.iter().sum();
    let mut lat_in = 0.0;
    for j in 1..=n as usize {
        let t0 = if j == 1 { omega * a_cn } else { omega * a_cs };
        let tau = (2 * j - 2) as f64 * a_cs + a_cn;
        lat_in += w[j] / alpha * (t0 + tau);
    }
    let pe = t.distance_probs();
    let pi = c_tree.distance_probs();
    let mut lat_out = 0.0;
    for p in 1..=n as usize {
        for q in 1..=c_tree.n as usize {
            let k = 2 * (p + q) - 1;
            // E and I timings are equal (Net.2), so t_cs^k = e_cs for every k.
            let tau = (k - 1) as f64 * e_cs + e_cn;
            lat_out += pe[p] * pi[q] * (omega * e_cs + tau);
        }
    }
    (1.0 - xi) * lat_in + xi * lat_out
}

#[test]
fn zero_load_latency_matches_the_catalogue_formula_fig_4_5a() {
    let r = run(json!({"lambda1": 1e-12})).unwrap();
    let want = zero_load_ch4(4, 3, Tree { m: 4, n: 3 }, 0.5, 0.6, 64.0, 512.0);
    assert!(
        (r.latency - want).abs() < 1e-6 * want,
        "{} vs {want}",
        r.latency
    );
    // Catalogue: Lat_in ≈ 41.6 + 2.6, Lat_out ≈ 57.8 + 9.0, total ≈ 55.5.
    assert!((r.latency_in - 44.2).abs() < 0.1, "{}", r.latency_in);
    assert!((r.latency_out - 66.8).abs() < 0.2, "{}", r.latency_out);
    assert!((r.latency - 55.5).abs() < 0.1, "{}", r.latency);
}

#[test]
fn zero_load_latency_fig_4_7_system() {
    // C = 32 clusters of 8-port 3-trees, ICN 8-port 2-tree, ω = 32.
    let v = json!({"m": 8, "n": 3, "C": 32, "omega": 32, "lambda1": 1e-12, "phi1": 0.6, "phi2": 0.3, "xi": 0.8, "eta_in": 0.4});
    let r = run(v).unwrap();
    let want = zero_load_ch4(8, 3, Tree { m: 8, n: 2 }, 0.8, 0.4, 32.0, 512.0);
    assert!(
        (r.latency - want).abs() < 1e-6 * want,
        "{} vs {want}",
        r.latency
    );
}

#[test]
fn poisson_concentrator_is_md1() {
    // source: poisson → the derived C/D input is Poisson of rate N ξ λ̄ and
    // the service ω t_cs^I is deterministic: W = λ s² / (2 (1 − ρ)).
    let lam1 = 0.003;
    let r = run(json!({"lambda1": lam1, "source": "poisson"})).unwrap();
    let lam = 16.0 * 0.5 * lam1 / 2.0;
    let s = 64.0 * (0.05 + 512.0 / 600.0);
    let rho = lam * s;
    let want = lam * s * s / (2.0 * (1.0 - rho));
    assert!((r.w_c - want).abs() < 1e-6 * want, "{} vs {want}", r.w_c);
    assert_eq!(r.w_c, r.w_d);
}

#[test]
fn mmpp_waits_exceed_poisson_waits() {
    let m = run(json!({"lambda1": 0.003})).unwrap();
    let p = run(json!({"lambda1": 0.003, "source": "poisson"})).unwrap();
    assert!(m.w_c > p.w_c && m.latency > p.latency);
}

fn status(v: Value) -> Result<f64, String> {
    run(v).map(|r| r.latency)
}

/// λ_s1 at the catalogue's concentrator bound λ̄ < 1/(N ξ ω t_cs^I), φ1 = φ2.
fn cd_bound(nodes: f64, xi: f64) -> f64 {
    2.0 / (nodes * xi * 64.0 * (0.05 + 512.0 / 600.0))
}

#[test]
fn concentrator_bound_saturation_just_below_and_above() {
    // Systems whose paths are short enough that the concentrator binds
    // (in Fig 4.5's system the chained blocking of the 11-stage inter-cluster
    // paths saturates the ECN/ICN stages first: docs/models/multicluster.md).
    for v in [
        json!({"m": 4, "n": 3, "C": 4, "xi": 0.2, "source": "poisson"}),
        json!({"m": 4, "n": 1, "C": 4}),
    ] {
        let t = Tree {
            m: 4,
            n: v["n"].as_u64().unwrap() as u32,
        };
        let bound = cd_bound(t.nodes() as f64, v["xi"].as_f64().unwrap_or(0.5));
        let mut p = v.clone();
        p["lambda1"] = json!(bound * 0.999);
        assert!(status(p.clone()).is_ok(), "{v} below the bound");
        p["lambda1"] = json!(bound * 1.001);
        let why = status(p).unwrap_err();
        assert!(why.contains("concentrator"), "{v}: {why}");
    }
}

#[test]
fn fig_4_5a_saturates_in_the_network_before_the_concentrator() {
    // The model's own λ* (0.00318) lies below the concentrator bound 0.00432:
    // the blocking compounds along the 2(p+q)−1 stages. Reported, not tuned.
    let bound = cd_bound(16.0, 0.5);
    assert!(status(json!({"lambda1": 0.0031})).is_ok());
    let why = status(json!({"lambda1": 0.0033})).unwrap_err();
    assert!(why.contains("channel utilisation"), "{why}");
    assert!(0.0033 < bound);
}

#[test]
fn printed_cd_moves_the_concentrator_bound_later() {
    // W-29: with MMPP_cI as the C/D input (f_I = N ξ d̄_I/(4 n_c) = N ξ / 2
    // here) the concentrator saturates 2x later than with the derived input.
    let v = json!({"m": 4, "n": 3, "C": 4, "xi": 0.2, "source": "poisson"});
    let bound = cd_bound(16.0, 0.2);
    let mut p = v.clone();
    p["lambda1"] = json!(bound * 1.001);
    p["cd"] = json!("printed");
    let r = run(p).unwrap();
    let mut q = v.clone();
    q["lambda1"] = json!(bound * 0.9);
    let d = run(q).unwrap();
    assert!(r.w_c < d.w_c, "printed {} vs derived {}", r.w_c, d.w_c);
}

#[test]
fn derived_channel_count_doubles_loads_and_raises_latency() {
    let p = run(json!({"lambda1": 0.0012})).unwrap();
    let d = run(json!({"lambda1": 0.0012, "channels": "derived"})).unwrap();
    let get = |r: &super::model::ModelResult, k: &str| r.parts.iter().find(|x| x.0 == k).unwrap().1;
    assert!((get(&d, "f_A") - 2.0 * get(&p, "f_A")).abs() < 1e-12);
    assert!((get(&d, "f_I") - 2.0 * get(&p, "f_I")).abs() < 1e-12);
    assert!(d.latency > p.latency);
    // ecn_num single with 2n channels gives the printed ECN load (W-23 note).
    let s = run(json!({"lambda1": 0.0012, "channels": "derived", "ecn_num": "single"})).unwrap();
    assert!((get(&s, "f_E") - get(&p, "f_E")).abs() < 1e-12);
}

#[test]
fn ch4_f_i_matches_the_catalogue() {
    // W-29: f_I = 0.456 N ξ (4 n_c) for the 4-port 3-tree ICN of 16 clusters.
    let r = run(json!({"lambda1": 0.001})).unwrap();
    let f_i = r.parts.iter().find(|x| x.0 == "f_I").unwrap().1;
    assert!((f_i / (16.0 * 0.5) - 82.0 / 15.0 / 12.0).abs() < 1e-12);
}

#[test]
fn latency_grows_with_load() {
    let mut last = 0.0;
    for x in [1e-6, 0.001, 0.002, 0.003] {
        let l = status(json!({"lambda1": x})).unwrap();
        assert!(l > last, "{x}: {l} <= {last}");
        last = l;
    }
}

#[test]
fn ch5_config_i_zero_load_is_the_node_weighted_sum() {
    let mut v = config_i();
    v["lambda1"] = json!(1e-12);
    let r = run(v.clone()).unwrap();
    assert_eq!(r.per_cluster.len(), 8);
    let w: f64 = [8.0, 8.0, 8.0, 32.0, 32.0, 32.0, 128.0, 128.0]
        .iter()
        .zip(&r.per_cluster)
        .map(|(n, l)| n * l)
        .sum::<f64>()
        / 376.0;
    assert!((r.latency - w).abs() < 1e-9 * w);
    // Cluster 0 (8-port 1-tree, Net.3): every intra message crosses 2 channels
    // with ω t_cn^A at its only stage; τ = t_cn^A.
    let t_cn = 0.5 * 0.04 + 256.0 / 600.0;
    let xi0 = 368.0 / 375.0;
    let lat_in0 = 32.0 * t_cn + t_cn;
    assert!(r.per_cluster[0] > (1.0 - xi0) * lat_in0);
}

#[test]
fn ch5_runs_config_ii_and_saturates_at_the_concentrator_bound() {
    // Catalogue §3.3: config (ii), largest cluster N = 128, ξ = 672/799,
    // ϕ = 0.15: λ̄ < (1 − ϕ)/(N ξ ω t_cs^I), t_cs^I = 0.005 + 256/1000.
    let xi: f64 = 672.0 / 799.0;
    let lam_bar = 0.85 / (128.0 * xi * 32.0 * 0.261);
    assert!((lam_bar - 0.00095).abs() < 1e-5);
    let to_l1 = (0.08 + 0.06) / 0.06;
    let mut v = config_ii();
    v["lambda1"] = json!(lam_bar * to_l1 * 1.01);
    let why = run(v.clone()).unwrap_err();
    assert!(
        why.contains("concentrator") || why.contains("dispatcher") || why.contains("utilisation"),
        "{why}"
    );
    v["lambda1"] = json!(lam_bar * to_l1 * 0.2);
    let r = run(v).unwrap();
    assert_eq!(r.per_cluster.len(), 16);
    assert!(r.latency > 0.0);
}

#[test]
fn ch5_variants_all_solve() {
    for (k, val) in [
        ("inflow", "printed"),
        ("weights", "printed"),
        ("dispatcher", "same"),
        ("dispatcher", "dest"),
        ("ecn_leg2", "own"),
        ("stage_map", "physical"),
        ("cd", "printed"),
        ("channels", "derived"),
        ("ecn_num", "single"),
    ] {
        let mut v = config_i();
        v["lambda1"] = json!(0.0005);
        let base = run(v.clone()).unwrap();
        v[k] = json!(val);
        let r = run(v).unwrap_or_else(|e| panic!("{k}={val}: {e}"));
        assert!(r.latency.is_finite() && r.latency > 0.0, "{k}={val}");
        if k != "dispatcher" || val != "same" {
            // every variant changes something at this load
            assert!(
                r.latency != base.latency || r.w_d != base.w_d,
                "{k}={val} had no effect"
            );
        }
    }
}

#[test]
fn solver_refuses_bad_input_naming_the_field() {
    use crate::{Fidelity, SolveError, Solver, TaskContext};
    let s = super::MulticlusterModel;
    let ctx = TaskContext::new(1, Fidelity::Quick);
    let e = s
        .solve(&json!({"lambda1": 0.001, "C": 10}), &ctx)
        .unwrap_err();
    assert!(
        matches!(e, SolveError::InvalidParam { ref param, .. } if param == "C"),
        "{e:?}"
    );
    let o = s.solve(&json!({"lambda1": 0.001}), &ctx).unwrap();
    assert!(o.get("latency").unwrap() > 55.0);
    let o = s.solve(&json!({"lambda1": 0.01}), &ctx).unwrap();
    assert_eq!(o.status, crate::Status::Saturated);
    assert!(o.note.is_some());
}

#[test]
fn tail_time_is_the_physical_link_count_under_both_stage_maps() {
    // E ≠ I timings (mcref D-1, D-4): τ_out = Σ P_p P_q ((2p − 2) t_cs^E + 2q t_cs^I + t_cn^E).
    let nets =
        json!({"icn": {"bandwidth": 1000, "network_latency": 0.01, "switch_latency": 0.005}});
    let mut v = nets.clone();
    v["lambda1"] = json!(1e-9);
    let get = |r: &super::model::ModelResult| r.parts.iter().find(|x| x.0 == "tau_out").unwrap().1;
    let w = run(v.clone()).unwrap();
    v["stage_map"] = json!("physical");
    let p = run(v).unwrap();
    let (e_cs, e_cn, i_cs) = (
        0.05 + 512.0 / 600.0,
        0.05 + 512.0 / 600.0,
        0.005 + 512.0 / 1000.0,
    );
    let t = Tree { m: 4, n: 3 }.distance_probs();
    let mut want = 0.0;
    for (pp, &a) in t.iter().enumerate().skip(1) {
        for (q, &b) in t.iter().enumerate().skip(1) {
            want += a * b * ((2 * pp - 2) as f64 * e_cs + 2.0 * q as f64 * i_cs + e_cn);
        }
    }
    assert!((get(&w) - want).abs() < 1e-12, "{} vs {want}", get(&w));
    assert!((get(&p) - want).abs() < 1e-12);
    // The stage map still changes the stage services.
    assert!((w.latency - p.latency).abs() > 1e-6);
}

/// Issue 31 item 4: a point whose inter-cluster part saturates is
/// `saturated` but keeps its intra-cluster part, which does not depend on
/// the inter-cluster networks: equal to that of the same system with an
/// ECN and ICN a thousand times faster (whose inter part does not saturate).
#[test]
fn latency_in_survives_the_inter_cluster_saturation() {
    let fast = json!({"bandwidth": 6.0e5, "network_latency": 1e-4, "switch_latency": 5e-5});
    let fig47 = json!({"m": 8, "n": 3, "C": 32, "omega": 32, "phi1": 0.6, "phi2": 0.3,
        "xi": 0.969, "eta_in": 0.6, "lambda1": 0.002});
    let mut ch5 = config_i();
    ch5["lambda1"] = json!(0.02);
    for v in [fig47, ch5] {
        let sat = solve(&parse_system(&v).unwrap()).unwrap().unwrap_err();
        assert!(sat.why.contains(">= 1"), "{}", sat.why);
        let mut f = v.clone();
        f["ecn"] = fast.clone();
        f["icn"] = fast.clone();
        let ok = solve(&parse_system(&f).unwrap()).unwrap().unwrap();
        let get = |k: &str| sat.defined.iter().find(|(n, _)| *n == k).unwrap().1;
        assert!((get("latency_in") - ok.latency_in).abs() < 1e-9 * ok.latency_in);
        let part = |k: &str| ok.parts.iter().find(|(n, _)| *n == k).unwrap().1;
        assert!((get("W_in") - part("W_in")).abs() < 1e-9 * ok.latency_in);
        assert!((get("net_in") - part("net_in")).abs() < 1e-9 * ok.latency_in);
    }
    // Saturated in the ACN itself: nothing stays defined.
    let v = json!({"xi": 0.0, "lambda1": 0.1});
    let sat = solve(&parse_system(&v).unwrap()).unwrap().unwrap_err();
    assert!(sat.defined.is_empty(), "{:?}", sat.defined);
}

/// The parts the simulation measures one by one add up to the model's
/// latencies: latency_in = W_in + net_in, latency_out = W_out + net_out +
/// W_c + W_d (ch.4 and ch.5).
#[test]
fn model_parts_add_up() {
    let mut ch5 = config_i();
    ch5["lambda1"] = json!(0.0008);
    for v in [json!({"lambda1": 0.002}), ch5] {
        let r = run(v).unwrap();
        let part = |k: &str| r.parts.iter().find(|(n, _)| *n == k).unwrap().1;
        let tol = 1e-9 * r.latency;
        assert!((part("W_in") + part("net_in") - r.latency_in).abs() < tol);
        assert!(
            (part("W_out") + part("net_out") + r.w_c + r.w_d - r.latency_out).abs() < tol,
            "{} vs {}",
            part("W_out") + part("net_out") + r.w_c + r.w_d,
            r.latency_out
        );
    }
}

/// Issue 32 item 5: extreme source values failed inside the model ("fit:
/// characteristics are not finite", "G did not converge", "need 1 <
/// IDC(t) < IDC(inf)"); they are refused naming the parameter, its value
/// and the accepted range.
#[test]
fn extreme_source_values_name_the_parameter_and_range() {
    for (key, value, range) in [
        ("lambda1", 1e200, "[0, 1e12]"),
        ("lambda2", 1e308, "[0, 1e12]"),
        ("phi1", 1e-300, "[1e-12, 1e12]"),
        ("phi1", 1e200, "[1e-12, 1e12]"),
        ("phi2", 1e-15, "[1e-12, 1e12]"),
        ("phi2", 1e308, "[1e-12, 1e12]"),
    ] {
        let mut p = json!({"lambda1": 0.0005});
        p[key] = json!(value);
        match parse_system(&p).and_then(|s| check_model_ranges(&s)) {
            Err(crate::SolveError::InvalidParam { param, rule }) => {
                assert_eq!(param, key, "{rule}");
                assert!(rule.contains(range), "{key}: {rule}");
            }
            other => panic!("{key} = {value}: {other:?}"),
        }
    }
    // The ends of the ranges are solved (or saturated), not failed.
    let model = crate::Registry::with_all();
    let model = model.get("multicluster.model").unwrap();
    let ctx = crate::TaskContext::new(1, crate::Fidelity::Full);
    for (key, value) in [
        ("phi1", 1e-12),
        ("phi2", 1e-12),
        ("phi1", 1e12),
        ("phi2", 1e12),
        ("lambda1", 1e12),
    ] {
        let mut p = json!({"lambda1": 0.0005});
        p[key] = json!(value);
        let r = model.solve(&p, &ctx);
        assert!(r.is_ok(), "{key} = {value}: {r:?}");
    }
}

/// The queue memo returns what solving gives: a point solved again, after
/// other points whose queues it shares filled the memo, has the same
/// result to the bit (ch.4 under two channel rules and loads, and a ch.5
/// system).
#[test]
fn a_point_solved_again_after_others_is_the_same() {
    let ch4 = |channels: &str, lambda1: f64| {
        json!({"C":16,"Lf":512,"channels":channels,"eta_in":0.6,"lambda1":lambda1,
               "lambda2":0,"m":4,"n":3,"omega":64,"phi1":0.07,"phi2":0.07,"xi":0.5})
    };
    let points = [
        ch4("derived", 0.0003183),
        ch4("printed", 0.0003183),
        ch4("derived", 0.0006),
        config_i(),
    ];
    let first: Vec<_> = points.iter().map(|p| run(p.clone())).collect();
    for (p, f) in points.iter().zip(&first).rev() {
        let again = run(p.clone());
        assert_eq!(format!("{again:?}"), format!("{f:?}"));
    }
}
