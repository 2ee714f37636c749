//! The 648-node Clos benchmark of issue 9: 3-stage folded Clos of 36-port
//! switches, QDR links (32 Gbit/s data), IBA CC at QP level, every host
//! greedy, each packet to one of four hot spots with probability 0.2 and
//! otherwise to a uniformly chosen other host. One run, no harness: it prints
//! simulated time, events, events/s and bytes delivered; measure CPU time and
//! peak memory around it with `/usr/bin/time -v`.
//!
//! Run: `IBCC_BENCH_SECONDS=0.5 /usr/bin/time -v cargo bench -p solvers --bench ibcc`
//! (default 0.01 s simulated, so a plain `cargo bench` stays short).

use solvers::systems::ibcc::{bench_run, bench_scenario, BENCH_CC};
use solvers::{Fidelity, TaskContext};
use std::time::Instant;

fn main() {
    let secs: f64 = std::env::var("IBCC_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.01);
    let sc = bench_scenario(secs);
    let ctx = TaskContext::new(1, Fidelity::Full);
    let t0 = Instant::now();
    let c = bench_run(&sc, &BENCH_CC(), &ctx).expect("benchmark run");
    let wall = t0.elapsed().as_secs_f64();
    println!(
        "ibcc clos648: {secs} s simulated, {} events in {wall:.2} s wall ({:.2e} events/s), {:.3} GB payload delivered ({:.1} Gbit/s per host), {} marks, {} BECNs, {} packets in flight at the end",
        c.events,
        c.events as f64 / wall,
        c.delivered_bytes as f64 / 1e9,
        c.delivered_bytes as f64 * 8.0 / secs / 1e9 / 648.0,
        c.marks,
        c.becns,
        c.live_data
    );
}
