//! Checks of the m-port n-tree and the multi-cluster plug-in (issue 22,
//! "Checks you must build in"): counts against Wu (4.2)/(4.3), every pair's
//! Up*/Down* path of length 2·(class), inter-cluster paths of p + 2q + u
//! channels, destination classes against (4.6)/(4.7) by a chi-square test.

use super::*;
use crate::des::Stream;

fn spec(m: u32, n: u32, clusters: u32, m_c: u32, n_c: u32, loc: Locality) -> Spec {
    let t = Tree::new(m, n).unwrap();
    let net = NetTiming {
        t_cn: 4.0,
        t_cs: 4.0,
    };
    Spec {
        clusters: (0..clusters)
            .map(|_| ClusterSpec {
                tree: t.clone(),
                acn: net,
                rate_scale: 1.0,
            })
            .collect(),
        icn: Tree::new(m_c, n_c).unwrap(),
        ecn: net,
        icn_cs: 4.0,
        locality: loc,
        cut_through: true,
        cd_queue: CdQueue::Fifo,
    }
}

/// Channels a message's route takes (router, port), legs followed through
/// the relays.
fn walk(mc: &MultiCluster, src: u32, mut leg: Leg) -> Vec<(u32, u32)> {
    let mut rng = Stream::new(1, 1);
    let mut cur = src;
    let mut path = Vec::new();
    loop {
        if cur == leg.dst && !mc.next_leg(cur, &mut leg) {
            return path;
        }
        let (p, v) = Routing::route(mc, cur, leg.dst, leg.tag, &mut rng, |_, _| true).unwrap();
        assert_eq!(v, 0);
        assert!((p as usize) < mc.ports_of(cur), "port {p} at {cur}");
        let (r2, _) = mc.link(cur, p).expect("routed onto an unused port");
        path.push((cur, p));
        cur = r2;
        assert!(path.len() < 200, "no end");
    }
}

#[test]
fn tree_counts_match_4_2_and_4_3_and_links_pair_up() {
    for (m, n) in [
        (4, 1),
        (4, 2),
        (4, 3),
        (4, 6),
        (8, 1),
        (8, 2),
        (8, 3),
        (6, 2),
        (16, 2),
    ] {
        let t = Tree::new(m, n).unwrap();
        let k = (m / 2) as u64;
        assert_eq!(t.nodes() as u64, 2 * k.pow(n), "(4.2) m={m} n={n}");
        assert_eq!(
            t.switches() as u64,
            (2 * n as u64 - 1) * k.pow(n - 1),
            "(4.3)"
        );
        // Every used port leads to a port that leads back; every node has
        // one leaf port; no port is used twice.
        let mut node_seen = vec![0u32; t.nodes() as usize];
        for s in 0..t.switches() {
            assert_eq!(t.index(t.switch(s).0, t.switch(s).1), s);
            for p in 0..m {
                match t.neighbour(s, p) {
                    None => assert!(t.switch(s).0 > 0 || p >= m, "root ports all down"),
                    Some(Ok(x)) => {
                        node_seen[x as usize] += 1;
                        assert_eq!(t.leaf_of(x), (s, p));
                    }
                    Some(Err((s2, q))) => {
                        assert_eq!(t.neighbour(s2, q), Some(Err((s, p))), "m={m} n={n}");
                    }
                }
            }
        }
        assert!(node_seen.iter().all(|&c| c == 1));
        // Class sizes sum to N − 1.
        let cs = t.class_sizes();
        assert_eq!(cs.iter().sum::<u32>(), t.nodes() - 1);
    }
}

#[test]
fn every_pair_has_an_up_down_path_of_twice_its_class() {
    for (m, n, c, mc_, nc) in [
        (4, 3, 16, 4, 3),
        (8, 2, 8, 8, 1),
        (4, 1, 4, 4, 1),
        (6, 2, 6, 6, 1),
    ] {
        let mc = MultiCluster::new(spec(m, n, c, mc_, nc, Locality::Uniform)).unwrap();
        let t = Tree::new(m, n).unwrap();
        let nn = t.nodes();
        let mut hist = vec![0u32; n as usize + 1];
        for s in 0..nn {
            for d in 0..nn {
                if s == d {
                    continue;
                }
                let leg = Leg {
                    dst: d,
                    class: 0,
                    tag: 0,
                    group: 0,
                    aux: 0,
                };
                let path = walk(&mc, s, leg);
                let h = t.height(s, d);
                assert_eq!(path.len() as u32, 2 * h, "m={m} n={n} {s}->{d}");
                // Up*/Down*: once down, never up again; the ascent is h.
                hist[h as usize] += 1;
            }
        }
        // The height distribution over all pairs is N·|class j| (4.6).
        let cs = t.class_sizes();
        for j in 1..=n as usize {
            assert_eq!(hist[j], nn * cs[j]);
        }
    }
}

#[test]
fn inter_cluster_paths_have_p_plus_2q_plus_u_channels() {
    for (loc, c, m_c, n_c, cd) in [
        (
            Locality::Ch4 {
                xi: 1.0,
                eta_in: 1.0,
            },
            16,
            4,
            3,
            CdQueue::Fifo,
        ),
        (Locality::Uniform, 8, 8, 1, CdQueue::Fifo),
        (
            Locality::Ch4 {
                xi: 1.0,
                eta_in: 1.0,
            },
            16,
            4,
            3,
            CdQueue::Output,
        ),
        (Locality::Uniform, 8, 8, 1, CdQueue::Output),
    ] {
        let mut sp = spec(4, 3, c, m_c, n_c, loc);
        sp.cd_queue = cd;
        let mc = MultiCluster::new(sp).unwrap();
        let icn = Tree::new(m_c, n_c).unwrap();
        let mut rng = Stream::new(9, 0);
        let mut seen = 0;
        for _ in 0..5000 {
            let src = below(&mut rng, mc.nodes() as usize) as u32;
            let leg = Destinations::route(&mc, src, &mut rng);
            if leg.dst < mc.nodes() {
                continue;
            }
            seen += 1;
            let fin = leg.aux & 0xFF_FFFF;
            let u = leg.aux >> 24;
            let path = walk(&mc, src, leg);
            // The last hop lands on the destination.
            let (r, p) = *path.last().unwrap();
            assert_eq!(mc.link(r, p).unwrap().0, fin);
            let (i, v) = (mc.cluster_of(src), mc.cluster_of(fin));
            let q = icn.height(i, v);
            // Channels: ascent up to C (p + 1 attach), 2q ICN, 1 attach, u.
            let into_c = path.iter().position(|&(r, _)| r == mc.conc(i)).unwrap();
            let p_up = into_c as u32 - 1;
            assert!((1..=3).contains(&p_up));
            if matches!(loc, Locality::Ch4 { .. }) {
                assert_eq!(u, p_up);
            }
            assert_eq!(path.len() as u32, p_up + 1 + 2 * q + 1 + u);
            let at_d = path.iter().position(|&(r, _)| r == mc.disp(v)).unwrap();
            assert_eq!(at_d - into_c, 2 * q as usize);
            // Every ICN channel takes the ICN's flit time, in both variants.
            for &(r, p) in &path[into_c..at_d] {
                assert_eq!((mc.latency(r, p), mc.period(r, p)), (4.0, 4.0), "{cd:?}");
            }
        }
        assert!(seen > 1000);
    }
}

/// `cd_queue: output`: every ordered pair (i, v) has its own lane of 2q
/// channels from C_i to D_v, entering D_v on input port i; no channel
/// carries two pairs and no input port is fed twice.
#[test]
fn output_lanes_are_private_per_cluster_pair() {
    for (m_c, n_c, c) in [(4, 3, 16), (8, 1, 8), (4, 2, 8)] {
        let mut sp = spec(4, 2, c, m_c, n_c, Locality::Uniform);
        sp.cd_queue = CdQueue::Output;
        let mc = MultiCluster::new(sp).unwrap();
        let icn = Tree::new(m_c, n_c).unwrap();
        let mut fed = std::collections::HashSet::new();
        for r in 0..mc.routers() as u32 {
            for p in 0..mc.ports_of(r) as u32 {
                if let Some(to) = mc.link(r, p) {
                    assert!((to.1 as usize) < mc.ports_of(to.0));
                    assert!(fed.insert(to), "input {to:?} fed twice");
                }
            }
        }
        let mut rng = Stream::new(1, 1);
        for i in 0..c {
            for v in (0..c).filter(|&v| v != i) {
                let mut cur = mc.conc(i);
                let mut hops = 0;
                while cur != mc.disp(v) {
                    let (p, _) =
                        Routing::route(&mc, cur, mc.disp(v), 0, &mut rng, |_, _| true).unwrap();
                    let (r2, q) = mc.link(cur, p).unwrap();
                    if r2 == mc.disp(v) {
                        assert_eq!(q, i);
                    }
                    cur = r2;
                    hops += 1;
                }
                assert_eq!(hops, 2 * icn.height(i, v));
            }
        }
    }
}

/// Chi-square statistic of observed counts against probabilities.
fn chi2(obs: &[u64], p: &[f64]) -> f64 {
    let n: u64 = obs.iter().sum();
    obs.iter()
        .zip(p)
        .map(|(&o, &q)| {
            let e = q * n as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum()
}

#[test]
fn destination_classes_follow_4_6_and_4_7() {
    // 99.9% quantiles of chi-square with 2 (3 classes − 1) and 3 dof.
    let (q2, q3) = (13.82, 16.27);
    let (xi, eta) = (0.3, 0.6);
    let mc = MultiCluster::new(spec(4, 3, 16, 4, 3, Locality::Ch4 { xi, eta_in: eta })).unwrap();
    let t = Tree::new(4, 3).unwrap();
    let cs = t.class_sizes();
    // (4.7): P_{j,η} ∝ |class j| η^j.
    let w: Vec<f64> = (1..=3).map(|j| cs[j] as f64 * eta.powi(j as i32)).collect();
    let tot: f64 = w.iter().sum();
    let p47: Vec<f64> = w.iter().map(|x| x / tot).collect();
    let p46: Vec<f64> = (1..=3).map(|j| cs[j] as f64 / 15.0).collect();
    let mut rng = Stream::new(4, 2);
    let (mut intra, mut inter) = (vec![0u64; 3], 0u64);
    let mut ps = vec![0u64; 3];
    let n = 200_000;
    for _ in 0..n {
        let src = below(&mut rng, 256) as u32;
        let leg = Destinations::route(&mc, src, &mut rng);
        if leg.dst < mc.nodes() {
            intra[t.height(src % 16, leg.dst % 16) as usize - 1] += 1;
            assert_eq!(src / 16, leg.dst / 16);
        } else {
            inter += 1;
            ps[(leg.aux >> 24) as usize - 1] += 1;
            assert_ne!(mc.cluster_of(leg.aux & 0xFF_FFFF), src / 16);
        }
    }
    let x = chi2(&intra, &p47);
    assert!(x < q2, "intra classes vs (4.7): chi2 {x}");
    let x = chi2(&ps, &p46);
    assert!(x < q2, "p vs (4.6): chi2 {x}");
    let x = chi2(&[inter, n - inter], &[xi, 1.0 - xi]);
    assert!(x < 10.83, "xi: chi2 {x}");
    // Ch.5 uniform: destination clusters ∝ their sizes (heterogeneous trees).
    let mut s = spec(4, 2, 4, 4, 1, Locality::Uniform);
    s.clusters[0].tree = Tree::new(4, 3).unwrap();
    s.clusters[1].tree = Tree::new(4, 1).unwrap();
    let mc = MultiCluster::new(s).unwrap();
    let sizes = [16.0, 4.0, 8.0, 8.0];
    let mut cnt = vec![0u64; 4];
    for _ in 0..n {
        let leg = Destinations::route(&mc, 0, &mut rng);
        let d = if leg.dst < mc.nodes() {
            leg.dst
        } else {
            leg.aux & 0xFF_FFFF
        };
        assert_ne!(d, 0);
        cnt[mc.cluster_of(d) as usize] += 1;
    }
    let p: Vec<f64> = sizes
        .iter()
        .enumerate()
        .map(|(i, &x)| if i == 0 { (x - 1.0) / 35.0 } else { x / 35.0 })
        .collect();
    let x = chi2(&cnt, &p);
    assert!(x < q3, "uniform over all other nodes: chi2 {x}");
}

#[test]
fn refuses_inconsistent_shapes() {
    assert!(Tree::new(5, 2).is_err());
    assert!(Tree::new(4, 0).is_err());
    // 16 clusters but an ICN with 8 leaves.
    assert!(MultiCluster::new(spec(4, 2, 16, 8, 1, Locality::Uniform)).is_err());
    let mut s = spec(
        4,
        2,
        4,
        4,
        1,
        Locality::Ch4 {
            xi: 0.5,
            eta_in: 1.0,
        },
    );
    s.clusters[1].tree = Tree::new(4, 1).unwrap();
    assert!(MultiCluster::new(s).is_err());
    let mut s = spec(4, 2, 4, 4, 1, Locality::Uniform);
    s.icn_cs = 0.5;
    assert!(MultiCluster::new(s).is_err());
}

/// `LinkTiming::timing` (one look-up, used by the engine's walks over every
/// channel) gives the same pair as `latency` and `period` asked apart, on
/// every channel, with distinct times per network so a mix-up would show.
#[test]
fn timing_together_equals_latency_and_period_apart() {
    for cd in [CdQueue::Fifo, CdQueue::Output] {
        let mut sp = spec(4, 3, 8, 4, 2, Locality::Uniform);
        sp.cd_queue = cd;
        sp.ecn = NetTiming {
            t_cn: 3.5,
            t_cs: 2.25,
        };
        sp.clusters[1].acn = NetTiming {
            t_cn: 8.0,
            t_cs: 5.125,
        };
        sp.icn_cs = 6.75;
        let mc = MultiCluster::new(sp).unwrap();
        let mut seen = std::collections::HashSet::new();
        for r in 0..mc.routers() as u32 {
            for p in 0..mc.ports_of(r) as u32 {
                let (l, t) = LinkTiming::timing(&mc, r, p);
                assert_eq!(l.to_bits(), mc.latency(r, p).to_bits(), "({r}, {p})");
                assert_eq!(t.to_bits(), mc.period(r, p).to_bits(), "({r}, {p})");
                seen.insert((l.to_bits(), t.to_bits()));
            }
        }
        assert!(seen.len() >= 6, "{} distinct timings", seen.len());
    }
}

#[test]
fn is_ancestor_by_shifts_equals_by_digits() {
    for (m, n) in [
        (4, 1),
        (4, 2),
        (4, 3),
        (4, 6),
        (8, 2),
        (8, 3),
        (16, 2),
        (6, 3),
    ] {
        let t = Tree::new(m, n).unwrap();
        let mut anc = 0;
        for s in 0..t.switches() {
            let (l, lab) = t.switch(s);
            for x in 0..t.nodes() {
                let a = t.is_ancestor(s, x);
                assert_eq!(
                    a,
                    t.is_ancestor_by_digits(l, lab, x),
                    "m {m} n {n} s {s} x {x}"
                );
                anc += a as u32;
            }
        }
        // Each node has one ancestor per level below the roots' level and
        // every root.
        assert!(anc >= t.nodes() * n, "m {m} n {n}: {anc}");
    }
}
