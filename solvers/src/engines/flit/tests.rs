//! Engine tests with plug-ins other than the torus's: real-valued link
//! timing (exact zero-load latencies worked out by hand, the long-run rate of
//! a busy channel = 1/period), a router without a processing element, and
//! clustered destinations driving the run.

use super::torus::KaryNcube;
use super::*;
use crate::des::{RunLength, Stream};
use crate::TaskContext;

/// Routers on a line in the order `order` (router ids by position); port 0
/// goes right, port 1 left; a header takes the lowest free of `vcs` VCs.
struct Line {
    pos: Vec<u32>,
    at: Vec<u32>,
    vcs: u32,
}

impl Line {
    fn new(order: &[u32], vcs: u32) -> Self {
        let mut pos = vec![0; order.len()];
        for (i, &r) in order.iter().enumerate() {
            pos[r as usize] = i as u32;
        }
        Line {
            pos,
            at: order.to_vec(),
            vcs,
        }
    }
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
        _: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)> {
        let p = u32::from(self.pos[dst as usize] < self.pos[cur as usize]);
        (0..self.vcs).find(|&v| free(p, v)).map(|v| (p, v))
    }
}

struct Timing {
    latency: f64,
    period: f64,
}

impl LinkTiming for Timing {
    fn latency(&self, _: u32, _: u32) -> f64 {
        self.latency
    }
    fn period(&self, _: u32, _: u32) -> f64 {
        self.period
    }
}

fn scenario(buffer: usize, omega: u32, p: f64, run: RunLength) -> Scenario {
    Scenario {
        vcs: 1,
        buffer,
        msg_len: omega,
        injection: Injection::PerVc,
        source: Source::Bernoulli { p },
        run,
        max_cycles: 50_000_000,
        backlog_limit: u64::MAX,
        stall_cycles: 10_000,
        seed: 5,
    }
}

fn ctx() -> TaskContext {
    TaskContext::new(1, crate::Fidelity::Quick)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Mean latency of rare messages between the two nodes 0 and 1.
fn zero_load(order: &[u32], latency: f64, period: f64) -> (f64, f64) {
    let line = Line::new(order, 1);
    let sc = scenario(8, 5, 2e-5, RunLength::new(20, 5, 100));
    let c = run(
        &sc,
        &line,
        &line,
        &Timing { latency, period },
        &Uniform { nodes: 2 },
        &ctx(),
    )
    .unwrap();
    assert_eq!(c.finish, Finish::Completed);
    (mean(&c.latency), mean(&c.hops))
}

#[test]
fn zero_load_latency_with_slow_and_fractional_links() {
    // Whole numbers: 1 (injection cycle) + (ω − 1)·period + d·latency.
    let (lat, hops) = zero_load(&[0, 1], 3.0, 2.0);
    assert_eq!(hops, 1.0);
    assert!((12.0..12.05).contains(&lat), "{lat}");
    // Period 1.5, latency 2.5, one hop: flits start at 1, 2.5, 4, 5.5, 7
    // after generation; the tail lands at ⌈7 + 2.5⌉ = 10.
    let (lat, _) = zero_load(&[0, 1], 2.5, 1.5);
    assert!((10.0..10.05).contains(&lat), "{lat}");
    // Two hops through router 2, a switch without a processing element:
    // landings at 4, 5, 7, 8, 10 restart the pacing on the second hop at
    // 4, 5.5, 7, 8.5, 10; the tail lands at ⌈12.5⌉ = 13 (the unrounded
    // value is 1 + 4·1.5 + 2·2.5 = 12; rounding adds < 1 cycle per hop).
    let (lat, hops) = zero_load(&[0, 2, 1], 2.5, 1.5);
    assert_eq!(hops, 2.0);
    assert!((13.0..13.05).contains(&lat), "{lat}");
}

#[test]
fn a_busy_channel_carries_one_flit_per_period() {
    for period in [1.0, 1.5, 2.25, 3.0] {
        // A message every cycle from both ends, four VCs (a VC is
        // reallocated only once its credits are back, so one VC alone idles
        // after each tail): the channels never idle.
        let line = Line::new(&[0, 1], 4);
        let mut sc = scenario(8, 32, 1.0, RunLength::new(50, 10, 100));
        sc.vcs = 4;
        let c = run(
            &sc,
            &line,
            &line,
            &Timing {
                latency: 2.5,
                period,
            },
            &Uniform { nodes: 2 },
            &ctx(),
        )
        .unwrap();
        assert_eq!(c.finish, Finish::Completed);
        let thr = mean(&c.throughput);
        assert!((thr - 1.0 / period).abs() < 0.01, "period {period}: {thr}");
        assert_eq!(c.flits_injected, c.flits_delivered + c.flits_in_network);
    }
}

#[test]
fn clustered_destinations_stay_in_their_cluster() {
    // 4×4 torus, clusters = rows of 4 (ids 4y..4y+3 share y): with ξ = 0
    // every message stays on its x-ring, mean distance (1 + 2 + 1)/3.
    let topo = KaryNcube::new(4, 2);
    let dests = Clustered::new(16, &[4], &[1.0], 0.0).unwrap();
    let mut sc = scenario(2, 4, 0.01, RunLength::new(200, 10, 300));
    sc.vcs = 2;
    let routing = super::torus::Dor {
        topo: &topo,
        vcs: 2,
    };
    let c = run(&sc, &topo, &routing, &UniformLatency(1), &dests, &ctx()).unwrap();
    assert_eq!(c.finish, Finish::Completed);
    assert!(
        (mean(&c.hops) - 4.0 / 3.0).abs() < 0.03,
        "{}",
        mean(&c.hops)
    );
    // Only x channels (ports 0 and 1) carry flits.
    for (ch, &f) in c.channel_flits.iter().enumerate() {
        if ch % 4 >= 2 {
            assert_eq!(f, 0);
        }
    }
}

#[test]
fn plug_ins_out_of_contract_are_refused() {
    let line = Line::new(&[0, 1], 1);
    let sc = scenario(2, 4, 0.01, RunLength::new(10, 2, 10));
    let bad = |latency, period| {
        run(
            &sc,
            &line,
            &line,
            &Timing { latency, period },
            &Uniform { nodes: 2 },
            &ctx(),
        )
        .is_err()
    };
    assert!(bad(0.0, 1.0));
    assert!(bad(1.0, 0.5));
    assert!(bad(f64::NAN, 1.0));
    assert!(run(
        &sc,
        &line,
        &line,
        &UniformLatency(1),
        &Uniform { nodes: 3 },
        &ctx()
    )
    .is_err());
}
