//! Tests of the multi-cluster parameters: defaults, counts (4.2)/(4.3),
//! Table 5.3 totals, link times (4.15)/(4.17) and refused input.

use super::params::*;
use crate::SolveError;
use serde_json::{json, Value};

fn sys(v: Value) -> System {
    parse_system(&v).unwrap()
}

fn err_field(v: Value) -> String {
    match parse_system(&v) {
        Err(SolveError::InvalidParam { param, .. }) => param,
        Err(SolveError::BadParams(m)) => format!("bad: {m}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn net(b: f64, n: f64, s: f64) -> Value {
    json!({"bandwidth": b, "network_latency": n, "switch_latency": s})
}

/// Table 5.3 (i): 376 nodes in 8 clusters of 8-port trees.
pub(super) fn config_i() -> Value {
    let mut cl = vec![];
    for i in 0..8 {
        let (n, phi, acn) = match i {
            0..=2 => (1, 0.1, net(600.0, 0.04, 0.06)),
            3..=5 => (2, 0.15, net(400.0, 0.1, 0.05)),
            _ => (3, 0.2, net(200.0, 0.2, 0.1)),
        };
        cl.push(json!({"m": 8, "n": n, "user_level": phi, "acn": acn}));
    }
    json!({"clusters": cl, "m_c": 8, "omega": 32, "Lf": 256, "lambda1": 0.001, "phi1": 0.08, "phi2": 0.06})
}

/// Table 5.3 (ii): 800 nodes in 16 clusters of 4-port trees.
pub(super) fn config_ii() -> Value {
    let mut cl = vec![];
    for i in 0..16 {
        let (n, phi, acn) = match i {
            0..=7 => (2, 0.05, net(600.0, 0.04, 0.06)),
            8..=10 => (4, 0.1, net(400.0, 0.1, 0.05)),
            _ => (6, 0.15, net(200.0, 0.2, 0.1)),
        };
        cl.push(json!({"m": 4, "n": n, "user_level": phi, "acn": acn}));
    }
    json!({"clusters": cl, "m_c": 4, "omega": 32, "Lf": 256, "lambda1": 0.001, "phi1": 0.08, "phi2": 0.06})
}

#[test]
fn defaults_are_fig_4_5a_with_lf_512() {
    let s = sys(json!({"lambda1": 0.002}));
    assert_eq!(s.num_clusters(), 16);
    assert_eq!(s.clusters[0].nodes, 16);
    assert_eq!(s.clusters[0].switches, 20);
    assert_eq!(s.total_nodes(), 256);
    assert_eq!(s.icn_tree, Tree { m: 4, n: 3 });
    assert_eq!(s.icn_switches(), 20);
    assert_eq!(s.omega, 64);
    assert_eq!(
        s.locality,
        Locality::Ch4 {
            xi: 0.5,
            eta_in: 0.6
        }
    );
    // Catalogue §3.2 "Derived per-flit times", L_f = 512.
    let a = s.clusters[0].acn.times;
    assert!((a.t_cn - 0.65).abs() < 1e-12 && (a.t_cs - 0.65).abs() < 1e-12);
    assert!((s.ecn.times.t_cn - (0.05 + 512.0 / 600.0)).abs() < 1e-12);
    assert!((s.icn.times.t_cs - (0.05 + 512.0 / 600.0)).abs() < 1e-12);
    assert_eq!(s.variants, Variants::default());
    assert_eq!(s.variants.channels, Channels::Printed);
    assert_eq!(s.variants.cd, Cd::Derived);
}

#[test]
fn lf_1024_link_times() {
    let s = sys(json!({"lambda1": 0.002, "Lf": 1024}));
    assert!((s.clusters[0].acn.times.t_cs - 1.29).abs() < 1e-12);
    assert!((s.ecn.times.t_cs - 1.756_666_666_666_666_7).abs() < 1e-12);
}

#[test]
fn tree_counts_match_4_2_and_4_3() {
    for (m, n, nodes, sw) in [
        (4, 3, 16, 20),
        (8, 3, 128, 80),
        (8, 2, 32, 12),
        (4, 6, 128, 352),
        (8, 1, 8, 1),
    ] {
        let t = Tree { m, n };
        assert_eq!(t.nodes(), nodes, "N of {m}-port {n}-tree");
        assert_eq!(t.switches(), sw, "N_sw of {m}-port {n}-tree");
        // (4.6): the distance classes cover every other leaf.
        assert_eq!(t.class_sizes().iter().sum::<u64>(), nodes - 1);
        assert!((t.distance_probs().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn table_5_3_config_i_has_376_nodes() {
    let s = sys(config_i());
    assert_eq!(s.total_nodes(), 376);
    assert_eq!(s.icn_tree, Tree { m: 8, n: 1 });
    assert_eq!(s.locality, Locality::Ch5);
    // ξ_i (5.6) for the largest cluster: 248/375.
    assert!((s.xi(7) - 248.0 / 375.0).abs() < 1e-12);
    // t_cs^I = 0.005 + 256/1000 (Net.1 default ICN).
    assert!((s.icn.times.t_cs - 0.261).abs() < 1e-12);
    let src = s.node_source(7);
    assert!((src.lambda1 - 0.001 / 0.8).abs() < 1e-15);
}

#[test]
fn table_5_3_config_ii_has_800_nodes() {
    let s = sys(config_ii());
    assert_eq!(s.total_nodes(), 800);
    assert_eq!(s.icn_tree, Tree { m: 4, n: 3 });
    assert_eq!(s.clusters[11].nodes, 128);
    assert_eq!(s.clusters[0].nodes, 8);
}

#[test]
fn refuses_cluster_count_that_is_not_a_tree_size() {
    assert_eq!(err_field(json!({"lambda1": 0.001, "C": 12})), "C");
    let mut v = config_i();
    v["clusters"].as_array_mut().unwrap().pop();
    assert_eq!(err_field(v), "clusters");
}

#[test]
fn refuses_odd_or_small_ports() {
    assert_eq!(err_field(json!({"lambda1": 0.001, "m": 5})), "m");
    let mut v = config_i();
    v["clusters"][3]["m"] = json!(3);
    assert_eq!(err_field(v), "clusters[3].m");
    let mut v = config_i();
    v["clusters"][3]["n"] = json!(1.5);
    assert_eq!(err_field(v), "clusters[3].n");
}

#[test]
fn refuses_user_level_outside_0_1() {
    for bad in [1.0, -0.1, 1.5] {
        let mut v = config_i();
        v["clusters"][2]["user_level"] = json!(bad);
        assert_eq!(err_field(v), "clusters[2].user_level", "ϕ = {bad}");
    }
}

#[test]
fn refuses_xi_and_eta_outside_ranges() {
    assert_eq!(err_field(json!({"lambda1": 0.001, "xi": 1.2})), "xi");
    assert_eq!(err_field(json!({"lambda1": 0.001, "xi": -0.1})), "xi");
    assert_eq!(err_field(json!({"lambda1": 0.001, "eta_in": 0})), "eta_in");
    assert_eq!(
        err_field(json!({"lambda1": 0.001, "eta_in": 1.01})),
        "eta_in"
    );
}

#[test]
fn refuses_missing_timings() {
    let mut v = config_i();
    v["clusters"][5].as_object_mut().unwrap().remove("acn");
    assert_eq!(err_field(v), "clusters[5].acn");
    let mut v = config_i();
    v["clusters"][5]["acn"]["bandwidth"] = json!(0);
    assert_eq!(err_field(v), "clusters[5].acn.bandwidth");
    let mut v = config_i();
    v["clusters"][4]["acn"]
        .as_object_mut()
        .unwrap()
        .remove("network_latency");
    assert_eq!(err_field(v), "clusters[4].acn.network_latency");
    let v = json!({"lambda1": 0.001, "ecn": {"bandwidth": 600, "network_latency": 0.1}});
    assert_eq!(err_field(v), "ecn.switch_latency");
    let v = json!({"lambda1": 0.001, "icn": {"bandwidth": 0, "network_latency": 0.1, "switch_latency": 0.1}});
    assert_eq!(err_field(v), "icn.bandwidth");
}

#[test]
fn refuses_mixed_chapters_and_unknown_keys() {
    let mut v = config_i();
    v["C"] = json!(8);
    assert_eq!(err_field(v), "C");
    let mut v = config_i();
    v["xi"] = json!(0.5);
    assert_eq!(err_field(v), "xi");
    assert_eq!(
        err_field(json!({"lambda1": 0.001, "dispatcher": "same"})),
        "dispatcher"
    );
    assert_eq!(err_field(json!({"lambda1": 0.001, "m_c": 4})), "m_c");
    assert!(err_field(json!({"lambda1": 0.001, "channel": "printed"})).starts_with("bad:"));
    assert!(err_field(json!({"lambda1": 0.001, "channels": "4n"})).starts_with("bad:"));
    assert_eq!(err_field(json!({"phi1": 0.1})), "lambda1");
    assert_eq!(err_field(json!({"lambda1": 0.001, "phi1": 0})), "phi1");
}

#[test]
fn extras_are_split_off_before_the_strict_parse() {
    let v = json!({"lambda1": 0.001, "warmup": 100, "batches": 10});
    let (s, extra) = parse_with_extras(&v, &["warmup", "batches"]).unwrap();
    assert_eq!(s.num_clusters(), 16);
    assert_eq!(extra["warmup"], json!(100));
    assert!(parse_system(&v).is_err());
}

#[test]
fn refuses_too_many_clusters_and_unusable_timings() {
    let cl: Vec<Value> = (0..128)
        .map(|_| json!({"m": 4, "n": 1, "acn": net(600.0, 0.04, 0.06)}))
        .collect();
    assert_eq!(
        err_field(json!({"clusters": cl, "lambda1": 0.001})),
        "clusters"
    );
    assert_eq!(
        err_field(json!({"lambda1": 0.001, "Lf": 1e308, "acn": net(1e-10, 0.0, 0.0)})),
        "acn.bandwidth"
    );
}
