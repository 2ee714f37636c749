//! The loop for unit channels (`unit.rs`) against the general loop
//! (`sim.rs`): every counter of the run equal, bit for bit, on tori with
//! both routings and every VC, buffer, injection and source choice, near
//! and past saturation, with a deadlocking routing, and on a line with a
//! router that has no processing element.

use super::sim::{run_with, Mode};
use super::torus::{Dor, Duato, KaryNcube};
use super::*;
use crate::des::{RunLength, Stream};
use crate::TaskContext;

fn ctx() -> TaskContext {
    TaskContext::new(1, crate::Fidelity::Quick)
}

fn scenario(vcs: usize, buffer: usize, omega: u32, source: Source, run: RunLength) -> Scenario {
    Scenario {
        vcs,
        buffer,
        msg_len: omega,
        injection: Injection::PerVc,
        source,
        run,
        max_cycles: 2_000_000,
        backlog_limit: 5_000,
        stall_cycles: 2_000,
        seed: 11,
    }
}

/// Runs both loops and checks that they agree on everything; returns the
/// counters.
fn same<T: Topology, R: Routing, D: Destinations>(
    sc: &Scenario,
    topo: &T,
    routing: &R,
    dests: &D,
) -> Counters {
    assert!(!dests.relays());
    let general = run_with(
        sc,
        topo,
        routing,
        &UniformLatency(1),
        dests,
        &ctx(),
        Mode {
            general: true,
            ..Mode::DEFAULT
        },
    )
    .unwrap();
    let unit = run_with(
        sc,
        topo,
        routing,
        &UniformLatency(1),
        dests,
        &ctx(),
        Mode::DEFAULT,
    )
    .unwrap();
    assert_eq!(format!("{general:?}"), format!("{unit:?}"), "{sc:?}");
    unit
}

fn torus(k: u32, duato: bool, sc: &Scenario, hot: Option<f64>) -> Counters {
    let topo = KaryNcube::new(k, 2);
    let nodes = topo.nodes() as u32;
    let v = sc.vcs as u32;
    match (duato, hot) {
        (false, None) => same(
            sc,
            &topo,
            &Dor {
                topo: &topo,
                vcs: v,
            },
            &Uniform { nodes },
        ),
        (true, None) => same(
            sc,
            &topo,
            &Duato {
                topo: &topo,
                vcs: v,
            },
            &Uniform { nodes },
        ),
        (d, Some(delta)) => {
            let h = HotSpot {
                nodes,
                node: 0,
                delta,
            };
            if d {
                same(
                    sc,
                    &topo,
                    &Duato {
                        topo: &topo,
                        vcs: v,
                    },
                    &h,
                )
            } else {
                same(
                    sc,
                    &topo,
                    &Dor {
                        topo: &topo,
                        vcs: v,
                    },
                    &h,
                )
            }
        }
    }
}

#[test]
fn dor_on_the_benchmark_torus_at_every_buffer() {
    for buffer in [1, 2, 3, 8] {
        let sc = scenario(
            4,
            buffer,
            32,
            Source::Bernoulli { p: 0.01 },
            RunLength::new(300, 5, 300),
        );
        let c = torus(8, false, &sc, None);
        assert_eq!(c.finish, Finish::Completed);
    }
}

#[test]
fn duato_with_hot_spot_and_mmpp_sources() {
    let mmpp = Source::Mmpp {
        phi1: 0.01,
        phi2: 0.02,
        lambda1: 0.02,
        lambda2: 0.0,
    };
    let mmpp2 = Source::Mmpp {
        phi1: 0.01,
        phi2: 0.02,
        lambda1: 0.015,
        lambda2: 0.002,
    };
    for (k, vcs, buffer, source, hot) in [
        (6, 3, 2, mmpp, Some(0.2)),
        (7, 4, 2, mmpp2, Some(0.1)),
        (8, 5, 1, Source::Poisson { rate: 0.008 }, None),
        (5, 2, 4, Source::Poisson { rate: 0.02 }, Some(0.05)),
    ] {
        let sc = scenario(vcs, buffer, 16, source, RunLength::new(200, 4, 250));
        torus(k, true, &sc, hot);
        torus(k, false, &sc, hot);
    }
}

#[test]
fn shared_and_class_injection() {
    for injection in [
        Injection::Shared,
        Injection::Classes(1),
        Injection::Classes(3),
    ] {
        let mut sc = scenario(
            4,
            2,
            8,
            Source::Bernoulli { p: 0.03 },
            RunLength::new(200, 4, 200),
        );
        sc.injection = injection;
        torus(4, false, &sc, Some(0.1));
        torus(5, true, &sc, None);
    }
}

#[test]
fn saturation_by_backlog_and_by_budget() {
    // Far past saturation: the source backlog ends the run.
    let sc = scenario(
        4,
        2,
        16,
        Source::Bernoulli { p: 0.2 },
        RunLength::new(200, 4, 2_000),
    );
    let c = torus(6, true, &sc, Some(0.3));
    assert!(matches!(c.finish, Finish::Saturated(_)), "{:?}", c.finish);
    // The cycle budget.
    let mut sc = scenario(
        4,
        8,
        32,
        Source::Bernoulli { p: 0.01 },
        RunLength::new(200, 4, 100_000),
    );
    sc.max_cycles = 3_000;
    let c = torus(8, false, &sc, None);
    assert!(matches!(c.finish, Finish::Saturated(_)), "{:?}", c.finish);
    assert!(c.flits_in_network > 0);
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
fn a_deadlock_stalls_both_loops_alike() {
    let topo = KaryNcube::new(4, 2);
    let mut sc = scenario(
        1,
        1,
        16,
        Source::Bernoulli { p: 0.2 },
        RunLength::new(1_000_000, 2, 1_000_000),
    );
    sc.backlog_limit = u64::MAX;
    sc.stall_cycles = 500;
    let c = same(&sc, &topo, &NoDateline(&topo), &Uniform { nodes: 16 });
    assert!(matches!(c.finish, Finish::Stalled { .. }), "{:?}", c.finish);
}

/// Routers on a line, `order` giving the ids by position; port 0 goes
/// right, port 1 left; a header takes a random free VC.
struct Line {
    pos: Vec<u32>,
    at: Vec<u32>,
    vcs: u32,
}

impl Topology for Line {
    fn routers(&self) -> usize {
        self.pos.len()
    }
    fn ports(&self) -> usize {
        2
    }
    fn link(&self, r: u32, p: u32) -> Option<(u32, u32)> {
        let x = self.pos[r as usize] as usize;
        match p {
            0 if x + 1 < self.at.len() => Some((self.at[x + 1], 0)),
            1 if x > 0 => Some((self.at[x - 1], 1)),
            _ => None,
        }
    }
}

impl Routing for Line {
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        _tag: u32,
        rng: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)> {
        let p = u32::from(self.pos[dst as usize] < self.pos[cur as usize]);
        let n = (0..self.vcs).filter(|&v| free(p, v)).count();
        if n == 0 {
            return None;
        }
        let pick = super::torus::below(rng, n);
        (0..self.vcs)
            .filter(|&v| free(p, v))
            .nth(pick)
            .map(|v| (p, v))
    }
}

#[test]
fn a_line_with_switches_and_unlinked_ports() {
    // Nodes 0..3 at the ends and middle, routers 3 and 4 switch only.
    let order = [0, 3, 1, 4, 2];
    let mut pos = vec![0; order.len()];
    for (i, &r) in order.iter().enumerate() {
        pos[r as usize] = i as u32;
    }
    for vcs in [1, 3] {
        let line = Line {
            pos: pos.clone(),
            at: order.to_vec(),
            vcs,
        };
        let sc = scenario(
            vcs as usize,
            2,
            6,
            Source::Bernoulli { p: 0.03 },
            RunLength::new(100, 4, 200),
        );
        let c = same(&sc, &line, &line, &Uniform { nodes: 3 });
        assert_eq!(c.finish, Finish::Completed);
    }
}

#[test]
fn clustered_destinations() {
    let topo = KaryNcube::new(4, 2);
    let dests = Clustered::new(16, &[4], &[1.0], 0.3).unwrap();
    let sc = scenario(
        2,
        2,
        4,
        Source::Bernoulli { p: 0.05 },
        RunLength::new(200, 5, 300),
    );
    same(
        &sc,
        &topo,
        &Dor {
            topo: &topo,
            vcs: 2,
        },
        &dests,
    );
}
