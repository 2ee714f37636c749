//! Engine checks against known answers: M/M/1, MMPP/M/1 and MMPP/M/1/K
//! closed forms (one-entity networks), a Jackson network with feedback,
//! zero-load delay of a slotted tandem, packet conservation, determinism.

use super::*;
use crate::queueing::mmpp::{mmpp_m1, mmpp_m1k};
use crate::traffic::mmpp::Mmpp2;
use crate::Fidelity;

fn ctx() -> TaskContext {
    TaskContext::new(0, Fidelity::Quick)
}

fn exp_entity(mu: f64, group: u16) -> Entity {
    Entity {
        slot: 0.0,
        p: 1.0,
        mu,
        capacity: u32::MAX,
        group,
    }
}

fn poisson(entity: u32, rate: f64) -> Source {
    Source {
        entity: EntityId(entity),
        lambda: [rate, rate],
        phi: [0.0, 0.0],
        class: 0,
    }
}

fn mmpp(entity: u32, m: &Mmpp2) -> Source {
    Source {
        entity: EntityId(entity),
        lambda: [m.lambda1, m.lambda2],
        phi: [m.phi1, m.phi2],
        class: 0,
    }
}

fn len(warmup: f64, horizon: f64) -> RunLength {
    RunLength {
        warmup,
        horizon,
        max_packets: 1_000_000,
    }
}

/// Mean and 95% half-width of a per-replication statistic.
fn across(reps: u32, seed: u64, f: impl Fn(u32) -> f64) -> (f64, f64) {
    let v: Vec<f64> = (0..reps).map(&f).collect();
    let _ = seed;
    crate::des::ci95(&v)
}

fn sojourn(c: &Counters, g: usize) -> f64 {
    c.groups[g].sojourn_sum / c.groups[g].departures as f64
}

#[test]
fn single_mm1_matches_closed_form() {
    let sc = Scenario {
        entities: vec![exp_entity(1.0, 0)],
        sources: vec![poisson(0, 0.7)],
        groups: 1,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[vec![(Hop::Exit, 1.0)]]);
    let (m, h) = across(8, 1, |rep| {
        let c = run(&sc, &r, &Exponential, len(200.0, 20_000.0), 11, rep, &ctx()).unwrap();
        sojourn(&c, 0)
    });
    let exact = 1.0 / (1.0 - 0.7);
    assert!(
        (m - exact).abs() < h.max(0.02 * exact),
        "{m} ± {h} vs {exact}"
    );
}

#[test]
fn single_mmpp_m1_matches_the_matrix_geometric_solution() {
    let p = Mmpp2::new(0.3, 0.2, 1.5, 0.2).unwrap();
    let mu = 1.2;
    let exact = mmpp_m1(&p, mu).unwrap().w;
    let sc = Scenario {
        entities: vec![exp_entity(mu, 0)],
        sources: vec![mmpp(0, &p)],
        groups: 1,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[vec![(Hop::Exit, 1.0)]]);
    let (m, h) = across(10, 2, |rep| {
        let c = run(&sc, &r, &Exponential, len(0.0, 40_000.0), 12, rep, &ctx()).unwrap();
        c.classes[0].delay_sum / c.classes[0].delivered as f64
    });
    assert!(
        (m - exact).abs() < h && h < 0.1 * exact,
        "{m} ± {h} vs {exact}"
    );
}

#[test]
fn single_mmpp_m1k_matches_the_finite_chain() {
    let p = Mmpp2::new(0.5, 0.5, 2.0, 0.0).unwrap();
    let (mu, k) = (0.8, 6);
    let exact = mmpp_m1k(&p, mu, k).unwrap();
    let mut e = exp_entity(mu, 0);
    e.capacity = k as u32;
    let sc = Scenario {
        entities: vec![e],
        sources: vec![mmpp(0, &p)],
        groups: 1,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[vec![(Hop::Exit, 1.0)]]);
    let runs: Vec<Counters> = (0..10)
        .map(|rep| run(&sc, &r, &Exponential, len(50.0, 20_000.0), 13, rep, &ctx()).unwrap())
        .collect();
    let (pb, hb) = crate::des::ci95(
        &runs
            .iter()
            .map(|c| c.groups[0].drops as f64 / c.groups[0].arrivals as f64)
            .collect::<Vec<_>>(),
    );
    let (w, hw) = crate::des::ci95(&runs.iter().map(|c| sojourn(c, 0)).collect::<Vec<_>>());
    assert!(
        (pb - exact.p_block).abs() < hb.max(0.01),
        "{pb} ± {hb} vs {}",
        exact.p_block
    );
    assert!(
        (w - exact.w).abs() < hw.max(0.01 * exact.w),
        "{w} ± {hw} vs {}",
        exact.w
    );
}

/// Jackson network with feedback: sources into 0 and 1; 0 -> 1 or 2 (1/2
/// each), 1 -> 0 (0.3) or out, 2 -> out. Traffic equations:
/// l0 = 0.4 + 0.3 l1, l1 = 0.3 + 0.5 l0, l2 = 0.5 l0.
#[test]
fn jackson_network_with_feedback() {
    let (g0, g1) = (0.4, 0.3);
    let l0 = (g0 + 0.3 * g1) / (1.0 - 0.15);
    let l1 = g1 + 0.5 * l0;
    let l2 = 0.5 * l0;
    let mu = [1.5, 1.6, 1.0];
    let lam = [l0, l1, l2];
    let n: f64 = (0..3).map(|i| lam[i] / (mu[i] - lam[i])).sum();
    let exact_e2e = n / (g0 + g1); // Little over the whole network
    let sc = Scenario {
        entities: (0..3).map(|i| exp_entity(mu[i], i as u16)).collect(),
        sources: vec![poisson(0, g0), poisson(1, g1)],
        groups: 3,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[
        vec![(Hop::To(EntityId(1)), 0.5), (Hop::To(EntityId(2)), 0.5)],
        vec![(Hop::To(EntityId(0)), 0.3), (Hop::Exit, 0.7)],
        vec![(Hop::Exit, 1.0)],
    ]);
    let runs: Vec<Counters> = (0..10)
        .map(|rep| run(&sc, &r, &Exponential, len(100.0, 20_000.0), 14, rep, &ctx()).unwrap())
        .collect();
    for i in 0..3 {
        let (m, h) = crate::des::ci95(&runs.iter().map(|c| sojourn(c, i)).collect::<Vec<_>>());
        let exact = 1.0 / (mu[i] - lam[i]);
        assert!(
            (m - exact).abs() < 1.5 * h,
            "entity {i}: {m} ± {h} vs {exact}"
        );
    }
    let (m, h) = crate::des::ci95(
        &runs
            .iter()
            .map(|c| c.classes[0].delay_sum / c.classes[0].delivered as f64)
            .collect::<Vec<_>>(),
    );
    assert!((m - exact_e2e).abs() < 1.5 * h, "{m} ± {h} vs {exact_e2e}");
}

/// At (near) zero load a packet never waits: the slotted tandem's delay is
/// the sum of the mean slot counts times the slot lengths, t/P per entity.
#[test]
fn zero_load_delay_of_a_slotted_tandem() {
    let ent = |slot: f64, p: f64, g: u16| Entity {
        slot,
        p,
        mu: 0.0,
        capacity: u32::MAX,
        group: g,
    };
    let sc = Scenario {
        entities: vec![ent(1e-3, 0.1, 0), ent(2e-3, 0.25, 1), ent(5e-4, 0.05, 2)],
        sources: vec![poisson(0, 0.01)],
        groups: 3,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[
        vec![(Hop::To(EntityId(1)), 1.0)],
        vec![(Hop::To(EntityId(2)), 1.0)],
        vec![(Hop::Exit, 1.0)],
    ]);
    let c = run(&sc, &r, &Slotted, len(0.0, 2_000_000.0), 15, 0, &ctx()).unwrap();
    let m = c.classes[0].delay_sum / c.classes[0].delivered as f64;
    let exact = 1e-3 / 0.1 + 2e-3 / 0.25 + 5e-4 / 0.05;
    // ~20000 packets; sd of one delay ~ 0.013: 4 sigma ~ 0.4 ms.
    assert!(
        (m - exact).abs() < 0.0004 + 0.0005 * exact,
        "{m} vs {exact}"
    );
}

#[test]
fn packets_are_conserved_with_losses_and_links() {
    let mut ents: Vec<Entity> = (0..4)
        .map(|i| exp_entity(1.0 + i as f64, i as u16))
        .collect();
    for e in &mut ents {
        e.capacity = 3;
        e.slot = 0.05;
    }
    let p = Mmpp2::new(0.2, 0.1, 3.0, 0.0).unwrap();
    let sc = Scenario {
        entities: ents,
        sources: vec![mmpp(0, &p), mmpp(1, &p), poisson(2, 0.5)],
        groups: 4,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[
        vec![(Hop::To(EntityId(1)), 0.6), (Hop::To(EntityId(3)), 0.4)],
        vec![(Hop::To(EntityId(2)), 0.9), (Hop::To(EntityId(0)), 0.1)],
        vec![(Hop::To(EntityId(3)), 1.0)],
        vec![(Hop::Exit, 0.8), (Hop::To(EntityId(0)), 0.2)],
    ]);
    let c = run(&sc, &r, &Exponential, len(10.0, 500.0), 16, 0, &ctx()).unwrap();
    assert!(c.dropped > 0 && c.delivered > 0 && c.inside > 0);
    assert_eq!(c.generated, c.delivered + c.dropped + c.inside);
    let c = run(&sc, &r, &Slotted, len(10.0, 500.0), 16, 0, &ctx());
    // Slotted with P = 1 and slot 0.05: still conserved.
    let c = c.unwrap();
    assert_eq!(c.generated, c.delivered + c.dropped + c.inside);
}

#[test]
fn pool_limit_stops_an_overloaded_network() {
    let sc = Scenario {
        entities: vec![exp_entity(1.0, 0)],
        sources: vec![poisson(0, 2.0)],
        groups: 1,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[vec![(Hop::Exit, 1.0)]]);
    let l = RunLength {
        warmup: 0.0,
        horizon: 1e6,
        max_packets: 1000,
    };
    let c = run(&sc, &r, &Exponential, l, 1, 0, &ctx()).unwrap();
    assert_eq!(c.stop, Stop::PoolFull);
    assert!(c.window < 2000.0);
}

#[test]
fn same_seed_same_counters_other_seed_differs() {
    let p = Mmpp2::new(0.3, 0.2, 1.5, 0.2).unwrap();
    let sc = Scenario {
        entities: vec![
            Entity {
                slot: 0.1,
                p: 0.2,
                ..exp_entity(1.2, 0)
            },
            Entity {
                slot: 0.05,
                p: 0.3,
                ..exp_entity(2.0, 1)
            },
        ],
        sources: vec![mmpp(0, &p), poisson(1, 0.3)],
        groups: 2,
        classes: 1,
        split: None,
    };
    let r = Markov::new(&[
        vec![(Hop::To(EntityId(1)), 0.5), (Hop::Exit, 0.5)],
        vec![(Hop::Exit, 1.0)],
    ]);
    let a = run(&sc, &r, &Slotted, len(1.0, 300.0), 5, 0, &ctx());
    let a = a.unwrap_or_else(|e| panic!("{e}"));
    let b = run(&sc, &r, &Slotted, len(1.0, 300.0), 5, 0, &ctx()).unwrap();
    let c = run(&sc, &r, &Slotted, len(1.0, 300.0), 5, 1, &ctx()).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// The table-and-series logarithm against libm's over (0, 1), including the
/// extremes of `Stream::uniform` and the edges of the table's cells.
#[test]
fn fast_ln_is_within_1e_13_of_ln() {
    let f = FastLn::new();
    let mut rng = crate::des::Stream::new(3, 4);
    let mut worst: f64 = 0.0;
    let mut check = |u: f64| {
        let d = (f.ln(u) - u.ln()).abs();
        worst = worst.max(d);
    };
    for _ in 0..1_000_000 {
        check(rng.uniform());
    }
    for i in 0..=256 {
        let m = 1.0 + i as f64 / 256.0;
        for e in 1..=54 {
            let u = m * (0.5f64).powi(e);
            if u < 1.0 {
                check(u);
                check(f64::from_bits(u.to_bits() - 1));
            }
        }
    }
    check(0.5 * (1.0 / (1u64 << 53) as f64));
    check(1.0 - 0.5 * (1.0 / (1u64 << 53) as f64));
    assert!(worst < 1e-13, "{worst}");
}

/// The slot counts are those of the plain inversion 1 + ⌊ln U / ln(1 − P)⌋
/// with libm's `ln`, for small and large P, so the fast path changes no
/// draw.
#[test]
fn geometric_slots_equal_the_plain_inversion() {
    let f = FastLn::new();
    for (i, p) in [
        1e-9_f64,
        1e-6,
        2.5e-3,
        9e-3,
        6e-2,
        0.3,
        0.5,
        0.99,
        1.0 - 1e-12,
    ]
    .into_iter()
    .enumerate()
    {
        let k = 1.0 / (1.0 - p).ln();
        let mut rng = crate::des::Stream::new(8, i as u64);
        for _ in 0..200_000 {
            let u = rng.uniform();
            let plain = (u.ln() * k).min(1e15) as u64 as f64;
            assert_eq!(f.floor_ln_times(u, k), plain, "p {p}, u {u}");
        }
    }
}

/// The guide table picks the hop the plain scan of the cumulative
/// probabilities picks, with tiny, zero and uneven weights.
#[test]
fn routing_guide_matches_the_linear_scan() {
    let to = |e: u32| Hop::To(EntityId(e));
    let table = vec![
        vec![(to(1), 1.0)],
        vec![
            (to(0), 0.1 / 3.0),
            (to(2), 0.1 / 3.0),
            (to(3), 0.1 / 3.0),
            (to(4), 0.225),
            (to(5), 0.225),
            (to(6), 0.225),
            (Hop::Exit, 0.225),
        ],
        vec![
            (to(1), 1e-9),
            (to(2), 0.0),
            (to(3), 0.5),
            (Hop::Exit, 0.5 - 1e-9),
        ],
        vec![(to(0), 0.0), (to(1), 3.0), (to(2), 0.0)],
        (0..13).map(|j| (to(j), 1.0 + j as f64)).collect(),
    ];
    let m = Markov::new(&table);
    for e in 0..table.len() {
        let r = m.rows[e];
        let (a, b) = (r.start as usize, (r.start + r.len) as usize);
        let mut rng = crate::des::Stream::new(9, e as u64);
        for _ in 0..100_000 {
            let mut copy = rng.clone();
            let got = m.next(EntityId(e as u32), &mut rng);
            let want = if b - a == 1 {
                m.hops[a]
            } else {
                let u = copy.uniform();
                let mut k = a;
                while k + 1 < b && m.cdf[k] <= u {
                    k += 1;
                }
                m.hops[k]
            };
            assert_eq!(got, want, "row {e}");
        }
        let probs: f64 = m.row(EntityId(e as u32)).iter().map(|(_, p)| p).sum();
        assert!((probs - 1.0).abs() < 1e-12);
    }
}

/// Entities far apart in speed go to separate heaps; similar ones share one.
#[test]
fn speed_classes_split_fast_from_slow_entities() {
    let ent = |slot: f64, p: f64| Entity {
        slot,
        p,
        mu: 1.0,
        capacity: u32::MAX,
        group: 0,
    };
    let sc = |entities: Vec<Entity>| Scenario {
        entities,
        sources: vec![],
        groups: 1,
        classes: 1,
        split: None,
    };
    let mixed = sc(vec![
        ent(1.48e-4, 6e-2),
        ent(7.27e-4, 9e-3),
        ent(7.27e-4, 4e-2),
    ]);
    assert_eq!(speed_classes(&mixed, &Slotted), vec![false, true, true]);
    let alike = sc(vec![ent(1.0, 0.5), ent(1.0, 0.3)]);
    assert_eq!(speed_classes(&alike, &Slotted), vec![false, false]);
}

/// A station (0, slow, fed by an MMPP source) in front of a small mesh:
/// 1 and 2 (fast, 2 with a finite buffer) route between each other and out;
/// 3 is a second upstream entity with a Poisson source that exits at once.
fn split_network(start: Option<f64>) -> (Scenario, Markov) {
    let p = Mmpp2::new(0.05, 0.05, 1.4, 0.2).unwrap();
    let mut ents: Vec<Entity> = vec![
        exp_entity(1.0, 0),
        exp_entity(1.5, 1),
        exp_entity(1.2, 2),
        exp_entity(2.0, 3),
    ];
    ents[2].capacity = 2;
    for e in &mut ents {
        e.slot = 0.01;
        e.p = 0.05;
    }
    let sc = Scenario {
        entities: ents,
        sources: vec![mmpp(0, &p), poisson(3, 0.3)],
        groups: 4,
        classes: 1,
        split: start.map(|start| Split {
            upstream: vec![EntityId(0), EntityId(3)],
            start,
        }),
    };
    let r = Markov::new(&[
        vec![(Hop::To(EntityId(1)), 0.7), (Hop::To(EntityId(2)), 0.3)],
        vec![(Hop::To(EntityId(2)), 0.5), (Hop::Exit, 0.5)],
        vec![(Hop::To(EntityId(1)), 0.4), (Hop::Exit, 0.6)],
        vec![(Hop::Exit, 1.0)],
    ]);
    (sc, r)
}

/// generated = delivered + dropped + discarded + inside, with packets
/// discarded before the split's start, dropped by a finite buffer and in
/// flight on links (exponential service) or not (slotted).
#[test]
fn split_conserves_packets_with_discards() {
    let (sc, r) = split_network(Some(60.0));
    let c = run(&sc, &r, &Exponential, len(80.0, 400.0), 21, 0, &ctx()).unwrap();
    assert!(c.discarded > 0 && c.dropped > 0 && c.delivered > 0 && c.inside > 0);
    assert_eq!(
        c.generated,
        c.delivered + c.dropped + c.discarded + c.inside
    );
    let c = run(&sc, &r, &Slotted, len(80.0, 400.0), 21, 0, &ctx()).unwrap();
    assert!(c.discarded > 0 && c.dropped > 0);
    assert_eq!(
        c.generated,
        c.delivered + c.dropped + c.discarded + c.inside
    );
    // Without a split nothing is discarded.
    let (sc, r) = split_network(None);
    let c = run(&sc, &r, &Exponential, len(80.0, 400.0), 21, 0, &ctx()).unwrap();
    assert_eq!(c.discarded, 0);
    assert_eq!(c.generated, c.delivered + c.dropped + c.inside);
}

/// The engine refuses an upstream set with an edge into it from outside,
/// one that leaves a source downstream, an entity that does not exist and
/// a start outside [0, warm-up].
#[test]
fn split_refuses_a_bad_upstream_set() {
    let (mut sc, r) = split_network(Some(10.0));
    let with = |sc: &mut Scenario, up: &[u32], start: f64| {
        sc.split = Some(Split {
            upstream: up.iter().map(|&e| EntityId(e)).collect(),
            start,
        });
    };
    // 2 -> 1 with 2 outside: not closed under predecessors.
    with(&mut sc, &[0, 1, 3], 10.0);
    assert_eq!(
        check_split(&sc, &r, 20.0),
        Err(SplitError::NotClosed { from: 2, to: 1 })
    );
    let e = run(&sc, &r, &Exponential, len(20.0, 10.0), 1, 0, &ctx()).unwrap_err();
    assert!(
        matches!(&e, SolveError::BadParams(m) if m.contains("not closed")),
        "{e}"
    );
    with(&mut sc, &[0], 10.0);
    assert_eq!(
        check_split(&sc, &r, 20.0),
        Err(SplitError::SourceDownstream {
            source_index: 1,
            entity: 3
        })
    );
    with(&mut sc, &[0, 3, 7], 10.0);
    assert_eq!(
        check_split(&sc, &r, 20.0),
        Err(SplitError::NoSuchEntity {
            entity: 7,
            entities: 4
        })
    );
    for start in [25.0, -1.0, f64::NAN] {
        with(&mut sc, &[0, 3], start);
        assert!(matches!(
            check_split(&sc, &r, 20.0),
            Err(SplitError::Start { .. })
        ));
    }
    // The whole network, and 1 and 2 together with the upstream part, are
    // closed.
    with(&mut sc, &[0, 1, 2, 3], 10.0);
    assert!(check_split(&sc, &r, 20.0).is_ok());
    with(&mut sc, &[0, 3], 20.0);
    assert_eq!(
        check_split(&sc, &r, 20.0),
        Ok(vec![true, false, false, true])
    );
}

/// A split whose upstream set is the whole network, or which starts at 0,
/// discards nothing and runs the very events of a run without a split.
#[test]
fn split_that_cuts_nothing_is_the_run_without_one() {
    let (plain, r) = split_network(None);
    for service in [false, true] {
        let go = |sc: &Scenario| {
            if service {
                run(sc, &r, &Slotted, len(50.0, 200.0), 22, 1, &ctx()).unwrap()
            } else {
                run(sc, &r, &Exponential, len(50.0, 200.0), 22, 1, &ctx()).unwrap()
            }
        };
        let want = go(&plain);
        let mut all = plain.clone();
        all.split = Some(Split {
            upstream: (0..4).map(EntityId).collect(),
            start: 30.0,
        });
        assert_eq!(go(&all), want);
        let (at0, _) = split_network(Some(0.0));
        assert_eq!(go(&at0), want);
    }
}

/// The upstream entities follow the same sample path with and without the
/// split (their streams and events do not depend on the rest), so their
/// statistics are equal to the bit; downstream ones differ.
#[test]
fn split_leaves_the_upstream_path_unchanged() {
    let (plain, r) = split_network(None);
    let (split, _) = split_network(Some(70.0));
    let a = run(&plain, &r, &Exponential, len(80.0, 300.0), 23, 2, &ctx()).unwrap();
    let b = run(&split, &r, &Exponential, len(80.0, 300.0), 23, 2, &ctx()).unwrap();
    assert_eq!(a.groups[0], b.groups[0]);
    assert_eq!(a.groups[3], b.groups[3]);
    assert_eq!(a.generated, b.generated);
    assert_ne!(a.groups[1], b.groups[1]);
}

/// With the downstream part warmed up for X = 150 s (more than ten of its
/// relaxation times, 10 E[S]/(1 − √ρ)² ≈ 100 s at ρ ≈ 0.55) of a 400 s
/// warm-up, the split run's statistics over short horizons (200 s, where a
/// bias left by the split would show) agree with the whole network's within
/// their combined 95% CI (200 replications each).
#[test]
fn split_and_whole_network_agree_within_ci() {
    let (plain, r) = split_network(None);
    let (split, _) = split_network(Some(250.0));
    let reps = |sc: &Scenario| -> Vec<Counters> {
        (0..200)
            .map(|rep| run(sc, &r, &Exponential, len(400.0, 200.0), 24, rep, &ctx()).unwrap())
            .collect()
    };
    let (a, b) = (reps(&plain), reps(&split));
    // The downstream statistics, whose CIs are narrow enough (< 10%) for
    // the check to mean something, and the end-to-end delay, whose CI is
    // wide (the slowly modulated station dominates it).
    type Stat = (&'static str, fn(&Counters) -> f64, bool);
    let stats: [Stat; 4] = [
        (
            "e2e delay",
            |c| c.classes[0].delay_sum / c.classes[0].delivered as f64,
            false,
        ),
        ("sojourn 1", |c| sojourn(c, 1), true),
        ("sojourn 2", |c| sojourn(c, 2), true),
        (
            "loss 2",
            |c| c.groups[2].drops as f64 / c.groups[2].arrivals as f64,
            true,
        ),
    ];
    for (name, f, narrow) in stats {
        let (ma, ha) = crate::des::ci95(&a.iter().map(f).collect::<Vec<_>>());
        let (mb, hb) = crate::des::ci95(&b.iter().map(f).collect::<Vec<_>>());
        let h = (ha * ha + hb * hb).sqrt();
        assert!(
            (ma - mb).abs() <= h,
            "{name}: {ma} ± {ha} against {mb} ± {hb}"
        );
        assert!(!narrow || h < 0.1 * ma, "{name}: CI {h} too wide");
    }
    assert!(b.iter().all(|c| c.discarded > 0));
}
